"""Memory that ages and can be rolled back, through what the functions call: the settings
API's versions, restore and "as of" search, the expiry job, and session summaries kept by
the extraction task. In-memory stores, the scripted model."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

import pytest

from shared.app.expiry import expire_facts
from shared.app.extraction import ExtractionService
from shared.deps import Deps
from shared.fakes.clock import FixedClock
from shared.models.domain import ExtractionTask
from shared.models.memory import ExtractionChanges, FactDraft, FactFilter, RecallQuery, SessionNote
from shared.models.memory_api import SearchFactsRequest
from shared.services.context_cache import context_key
from tests.unit.memory_calls import call, ok

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


def edit(deps: Deps, fact_id: str, text: str) -> Any:
    return ok(deps, USER, "PATCH", f"/v1/facts/{fact_id}", {"text": text})


def versions(deps: Deps, fact_id: str) -> Any:
    return ok(deps, USER, "GET", f"/v1/facts/{fact_id}/versions")["versions"]


def restore(deps: Deps, version_id: str) -> Any:
    return call(deps, USER, "POST", f"/v1/facts/{version_id}:restore", {})


def test_an_edit_can_be_rolled_back_and_searched_as_it_was(deps: Deps, clock: FixedClock) -> None:
    first = remember(deps, "I live in Bern")
    then = clock.now()
    clock.advance(3600)
    edit(deps, first, "I live in Basel")
    clock.advance(3600)
    listed = versions(deps, first)
    assert [v["text"] for v in listed] == ["I live in Basel", "I live in Bern"]
    assert [v["ended_by"] for v in listed] == [None, "superseded"]

    def search(**extra: object) -> list[str]:
        body = {"query": "where do I live", **extra}
        found = ok(deps, USER, "POST", "/v1/facts:search", body)["results"]
        return [r["fact"]["text"] for r in found]

    assert search() == ["I live in Basel"]
    assert search(as_of=then.isoformat()) == ["I live in Bern"]
    deps.cache.set(context_key(USER), b"cached", 60)
    restored = restore(deps, first).body
    assert (restored["text"], restored["current"]) == ("I live in Bern", True)
    assert restored["id"] not in (first, listed[0]["id"])  # a new version
    assert deps.cache.get(context_key(USER)) is None  # the next turn sees the restored fact
    assert search() == ["I live in Bern"]
    again = restore(deps, first).body
    assert again["id"] == restored["id"]
    assert len(versions(deps, first)) == 3
    first_page = ok(deps, USER, "GET", f"/v1/facts/{first}/versions", page_size=2)
    token = first_page["next_page_token"]
    rest = ok(deps, USER, "GET", f"/v1/facts/{first}/versions", page_size=2, page_token=token)
    paged = [v["id"] for v in first_page["versions"] + rest["versions"]]
    assert paged == [v["id"] for v in versions(deps, first)]  # the latest first, once each


def test_versions_and_restore_of_nobodys_fact_are_not_found(deps: Deps) -> None:
    theirs = remember(deps, "a fact")
    assert call(deps, "mallory", "GET", f"/v1/facts/{theirs}/versions").status == 404
    assert restore(deps, "6f1d2f7e-61a1-4a0e-9f6e-3b8d2f6f0c11").status == 404
    with pytest.raises(ValueError):  # a naive time is refused at the door (400)
        SearchFactsRequest.model_validate({"query": "x", "as_of": "2026-01-01T00:00:00"})


def test_a_restore_that_would_duplicate_a_current_fact_is_refused(deps: Deps) -> None:
    first = remember(deps, "I work at Acme")
    edit(deps, first, "I work at Beta")
    remember(deps, "I work at Acme")
    before = deps.facts.list_facts(USER, FactFilter(include_history=True))
    assert (restore(deps, first).status, restore(deps, first).code) == (422, "data_rejected")
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
