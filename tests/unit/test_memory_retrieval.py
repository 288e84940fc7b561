"""The hybrid retrieval and its query understanding, on the in-memory stores."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from shared.adapters.rerankers import IdentityReranker
from shared.errors import DependencyUnavailable
from shared.fakes.clock import FixedClock
from shared.fakes.facts import FakeContactStore, FakeFactStore
from shared.fakes.scripted_llm import HashEmbedder
from shared.fakes.sessions import FakeSessionMemory
from shared.models.memory import ExtractionChanges, FactDraft, SessionNote
from shared.services.memory.retrieval import Channels, RecallRequest, Retriever
from shared.services.memory.understanding import understand

NOW = datetime(2026, 5, 20, 12, 0, tzinfo=UTC)
USER = "ada"
EMBEDDER = HashEmbedder(dimension=64)


class ReversingReranker:
    name = "reversing"
    reads_texts = True

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.calls: list[tuple[str, int]] = []

    def rerank(self, query: str, texts: Sequence[str]) -> list[int]:
        self.calls.append((query, len(texts)))
        if self.fail:
            raise DependencyUnavailable("ranking API down")
        return list(range(len(texts)))[::-1]


def store(*texts: str, **extra: object) -> FakeFactStore:
    clock = FixedClock(NOW)
    facts = FakeFactStore(FakeContactStore(clock), clock)
    drafts = [
        FactDraft.model_validate(
            {
                "text": text,
                "confidence": 0.9,
                "embedding": EMBEDDER.embed([text])[0],
                "embedding_model": EMBEDDER.model_name,
                "idempotency_key": uuid.uuid4().hex,
                **extra,
            }
        )
        for text in texts
    ]
    facts.apply_extraction("t", USER, ExtractionChanges(new_facts=drafts), NOW - timedelta(days=3))
    return facts


def texts(retriever: Retriever, question: str, **request: object) -> list[str]:
    found = retriever.recall(USER, RecallRequest(question=question, **request), NOW)  # type: ignore[arg-type]
    return [item.text for item in found.items]


def test_a_name_finds_its_fact_through_the_keyword_channel() -> None:
    facts = store(
        *[f"my colleague likes hiking in the mountains, trip {i}" for i in range(30)],
        "Oskar Brandt fixes bicycles on Tuesdays",
    )
    dense_only = Retriever(facts, EMBEDDER, IdentityReranker(), channels=Channels(
        keyword=False, temporal=False, sessions=False, understanding=False, mmr=False))  # fmt: skip
    hybrid = Retriever(facts, EMBEDDER, IdentityReranker())
    question = "Who is Oskar?"
    assert "Oskar Brandt fixes bicycles on Tuesdays" not in texts(dense_only, question, limit=3)
    assert texts(hybrid, question, limit=3)[0] == "Oskar Brandt fixes bicycles on Tuesdays"


def test_diversity_keeps_paraphrases_from_crowding_out_a_second_fact() -> None:
    paraphrases = [f"Ada loves green tea {word}" for word in ("a lot", "daily", "always", "so")]
    facts = store(*paraphrases, "Ada drinks green tea from Kyoto, her sister Mia sends it")
    plain = Retriever(facts, EMBEDDER, IdentityReranker(), channels=Channels(mmr=False))
    diverse = Retriever(facts, EMBEDDER, IdentityReranker())
    question = "Ada loves green tea"
    kyoto = "Ada drinks green tea from Kyoto, her sister Mia sends it"
    assert kyoto not in texts(plain, question, limit=4)
    assert kyoto in texts(diverse, question, limit=4)


def test_the_reranker_orders_the_fused_head_and_an_outage_keeps_the_fused_order() -> None:
    facts = store("Ada plays chess", "Ada plays cello", "Ada plays go")
    fused = texts(Retriever(facts, EMBEDDER, IdentityReranker(), channels=Channels(mmr=False)),
                  "Ada plays chess")  # fmt: skip
    reversing = ReversingReranker()
    ranked = Retriever(facts, EMBEDDER, reversing, channels=Channels(mmr=False))
    assert texts(ranked, "Ada plays chess") == fused[::-1]
    assert reversing.calls == [("Ada plays chess", len(fused))]
    down = Retriever(facts, EMBEDDER, ReversingReranker(fail=True), channels=Channels(mmr=False))
    assert texts(down, "Ada plays chess") == fused


def test_a_pronoun_is_read_as_the_person_the_conversation_last_named() -> None:
    plan = understand(
        "When is her birthday?", ["Tell me about Ben.", "Anna starts at ACME on Monday."], NOW
    )
    assert plan.text == "When is Anna birthday?"
    assert (plan.referent, plan.temporal, plan.window) == ("Anna", True, None)
    # a question naming its person, or nothing to refer to, stays as it is
    assert understand("When is Ben's birthday?", ["Anna is here"], NOW).referent is None
    assert understand("Where does she work?", ["hello there"], NOW).text == "Where does she work?"


def test_that_trip_is_read_as_the_message_that_spoke_of_a_trip() -> None:
    recent = ["We booked a trip to Lisbon with Ben.", "Nice weather today."]
    plan = understand("When was that trip?", recent, NOW)
    assert plan.referent == "We booked a trip to Lisbon with Ben."
    assert "Lisbon" in plan.text and plan.temporal


def test_a_question_about_last_week_gets_that_window() -> None:
    plan = understand("What did I eat last week?", [], NOW, "Europe/Zurich")
    monday = datetime(2026, 5, 11, tzinfo=UTC) - timedelta(hours=2)  # Zurich midnight, CEST
    assert plan.temporal and plan.window == (monday, monday + timedelta(weeks=1))


def test_the_temporal_channel_brings_facts_of_the_window() -> None:
    facts = store("I had ramen with Ben", time_anchor=NOW - timedelta(days=8))
    for i in range(40):
        facts.apply_extraction(
            f"x{i}",
            USER,
            ExtractionChanges(
                new_facts=[
                    FactDraft(
                        text=f"I ate something else {i}",
                        confidence=0.9,
                        embedding=EMBEDDER.embed([f"I ate food {i}"])[0],
                        embedding_model=EMBEDDER.model_name,
                        idempotency_key=f"x{i}",
                    )
                ]
            ),
            NOW - timedelta(days=30),
        )
    timed = Retriever(facts, EMBEDDER, IdentityReranker())
    untimed = Retriever(facts, EMBEDDER, IdentityReranker(), channels=Channels(temporal=False,
                        understanding=False, keyword=False))  # fmt: skip
    question = "What did I eat last week?"
    assert "I had ramen with Ben" in texts(timed, question, limit=3)
    assert "I had ramen with Ben" not in texts(untimed, question, limit=3)


def test_session_summaries_are_a_channel_of_their_own() -> None:
    facts = store("Ada likes tea")
    sessions = FakeSessionMemory(facts.data)
    summary = "We compared three apartments in Zurich and chose the one in Wipkingen."
    note = SessionNote(chat_id="c1", summary=summary, started_at=NOW - timedelta(days=40),
                       covers_until=NOW - timedelta(days=39))  # fmt: skip
    sessions.put_summary(USER, note, EMBEDDER.embed([summary])[0], EMBEDDER.model_name)
    retriever = Retriever(facts, EMBEDDER, IdentityReranker(), sessions)
    question = "Which apartment in Zurich did we choose?"
    found = retriever.recall(USER, RecallRequest(question=question), NOW)
    assert [item.key for item in found.sessions] == ["session:c1"]
    off = Retriever(facts, EMBEDDER, IdentityReranker(), sessions, Channels(sessions=False))
    assert off.recall(USER, RecallRequest(question="Which apartment?"), NOW).sessions == []


@pytest.mark.parametrize("question", ["", "the", "?!"])
def test_a_question_without_terms_still_gets_the_dense_channel(question: str) -> None:
    facts = store("Ada likes tea")
    found = Retriever(facts, EMBEDDER, IdentityReranker()).recall(
        USER, RecallRequest(question=question or " "), NOW
    )
    assert [item.text for item in found.items] in ([], ["Ada likes tea"])
