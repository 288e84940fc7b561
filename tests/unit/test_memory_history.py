"""Memory that ages and can be rolled back, through what the functions call: the settings
API's versions, restore and "as of" search, the expiry job, and session summaries kept by
the extraction task. In-memory stores, the scripted model."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

import pytest

from shared.adapters.clock import FixedClock
from shared.app.expiry import expire_facts
from shared.app.extraction import ExtractionService
from shared.app.settings.api import SettingsApi, operation_for
from shared.deps import Deps
from shared.errors import DataRejected, NotFound
from shared.models.domain import ExtractionTask
from shared.models.memory import ExtractionChanges, FactDraft, FactFilter, RecallQuery, SessionNote
from shared.models.memory_api import EditFactRequest, FactRef, SearchFactsRequest
from shared.services.context_cache import context_key

USER = "alice"


def remember(deps: Deps, text: str, durability: str = "durable") -> str:
    [vector] = deps.embedder.embed([text])
    draft = FactDraft.model_validate(
        {
            "text": text,
            "confidence": 0.9,
            "durability": durability,
            "embedding": vector,
            "embedding_model": deps.embedder.model_name,
            "idempotency_key": text,
        }
    )
    changes = ExtractionChanges(new_facts=[draft])
    deps.facts.apply_extraction(uuid.uuid4().hex, USER, changes, deps.clock.now())
    [fact] = [f for f in deps.facts.list_facts(USER, FactFilter()) if f.text == text]
    return fact.id


def call(deps: Deps, path: str, body: dict[str, object]) -> dict[str, object]:
    operation = operation_for(path)
    result = operation.run(SettingsApi(deps), USER, operation.request.model_validate(body))
    return result.model_dump(mode="json")


def test_an_edit_can_be_rolled_back_and_searched_as_it_was(deps: Deps, clock: FixedClock) -> None:
    first = remember(deps, "I live in Bern")
    then = clock.now()
    clock.advance(3600)
    SettingsApi(deps).edit_fact(USER, EditFactRequest(fact_id=first, text="I live in Basel"))  # type: ignore[arg-type]
    clock.advance(3600)
    versions = call(deps, "/facts/versions", {"fact_id": first})["versions"]
    assert [v["text"] for v in versions] == ["I live in Basel", "I live in Bern"]  # type: ignore[index]
    assert [v["ended_by"] for v in versions] == [None, "superseded"]  # type: ignore[index]

    def search(**extra: object) -> list[str]:
        found = call(deps, "/facts/search", {"query": "where do I live", **extra})["results"]
        return [r["fact"]["text"] for r in found]  # type: ignore[index, union-attr]

    assert search() == ["I live in Basel"]
    assert search(as_of=then.isoformat()) == ["I live in Bern"]
    deps.cache.set(context_key(USER), b"cached", 60)
    restored = call(deps, "/facts/restore", {"version_id": first})
    assert restored["fact"]["text"] == "I live in Bern"  # type: ignore[index]
    assert restored["previous"]["text"] == "I live in Basel"  # type: ignore[index]
    assert deps.cache.get(context_key(USER)) is None  # the next turn sees the restored fact
    assert search() == ["I live in Bern"]
    again = call(deps, "/facts/restore", {"version_id": first})
    assert again["fact"]["id"] == restored["fact"]["id"]  # type: ignore[index]
    assert len(call(deps, "/facts/versions", {"fact_id": first})["versions"]) == 3  # type: ignore[arg-type]


def test_versions_and_restore_of_nobodys_fact_are_not_found(deps: Deps) -> None:
    theirs = remember(deps, "a fact")
    api = SettingsApi(deps)
    with pytest.raises(NotFound):
        api.fact_versions("mallory", FactRef(fact_id=theirs))  # type: ignore[arg-type]
    with pytest.raises(NotFound):
        call(deps, "/facts/restore", {"version_id": "6f1d2f7e-61a1-4a0e-9f6e-3b8d2f6f0c11"})
    with pytest.raises(ValueError):  # a naive time is refused at the door (400)
        SearchFactsRequest.model_validate({"query": "x", "as_of": "2026-01-01T00:00:00"})


def test_a_restore_that_would_duplicate_a_current_fact_is_refused(deps: Deps) -> None:
    first = remember(deps, "I work at Acme")
    SettingsApi(deps).edit_fact(USER, EditFactRequest(fact_id=first, text="I work at Beta"))  # type: ignore[arg-type]
    remember(deps, "I work at Acme")
    before = deps.facts.list_facts(USER, FactFilter(include_history=True))
    with pytest.raises(DataRejected):
        call(deps, "/facts/restore", {"version_id": first})
    assert deps.facts.list_facts(USER, FactFilter(include_history=True)) == before


def test_the_expiry_job_closes_due_facts_and_drops_the_users_context(
    deps: Deps, clock: FixedClock
) -> None:
    remember(deps, "I have a cold", durability="short")
    remember(deps, "my name is Alice")
    deps.cache.set(context_key(USER), b"cached", 3600)
    early = expire_facts(deps, clock.now() + timedelta(days=6))
    assert (early.closed, deps.cache.get(context_key(USER))) == (0, b"cached")
    outcome = expire_facts(deps, clock.now() + timedelta(days=8), batch=1)
    assert (outcome.closed, outcome.users, outcome.batches) == (1, 1, 2)
    assert deps.cache.get(context_key(USER)) is None
    assert [f.text for f in deps.facts.list_facts(USER, FactFilter())] == ["my name is Alice"]
    assert expire_facts(deps, clock.now() + timedelta(days=9)).closed == 0


def summary_task(
    until: datetime, facts: bool, summary: str = "We planned Lisbon"
) -> ExtractionTask:
    note = SessionNote(chat_id="c1", summary=summary, started_at=until - timedelta(hours=1),
                       covers_until=until)  # fmt: skip
    return ExtractionTask(
        user_id=USER, chat_id="c1", turn_id="t9", message_id="m9", text="",
        enqueued_at=until, facts=facts, summary=note,
    )  # fmt: skip


def test_a_summary_task_keeps_the_session_without_a_model_call(
    deps: Deps, clock: FixedClock
) -> None:
    service = ExtractionService(deps)
    outcome = service.run(summary_task(clock.now(), facts=False))
    assert (outcome.status, outcome.session, outcome.task_key) == ("stored", True, "summarize-t9")
    assert not deps.llm.calls  # type: ignore[attr-defined]
    assert not service.run(summary_task(clock.now(), facts=False)).session  # repeated: no change
    [vector] = deps.embedder.embed(["Lisbon"])
    query = RecallQuery(embedding=vector, embedding_model=deps.embedder.model_name)
    [found] = deps.sessions.recall_sessions(USER, query, None)
    assert found.note.summary == "We planned Lisbon"
    deps.facts.delete_user(USER, clock.now())
    assert service.run(summary_task(clock.now() - timedelta(seconds=1), facts=False)).status == (
        "erased"
    )
    assert deps.sessions.recall_sessions(USER, query, None) == []
