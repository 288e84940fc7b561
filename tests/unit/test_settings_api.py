"""The memory function's /v1 API on the in-memory stores: every resource and method,
refusals (which change nothing), retries, and the cached turn context."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pytest

from shared.adapters.firestore_account import json_safe
from shared.adapters.redis_account import owns
from shared.adapters.rerankers import IdentityReranker
from shared.errors import DependencyUnavailable
from shared.fakes.account import FakeArchive, FakeKeyspace
from shared.fakes.cache import FakeCache
from shared.fakes.calendar_feeds import FakeCalendarFeedStore
from shared.fakes.clock import FixedClock
from shared.fakes.executions import FakeExecutionStore
from shared.fakes.facts import FakeContactStore, FakeFactStore, FakePendingStore
from shared.fakes.profiles import FakeProfileStore
from shared.fakes.reminders import FakeNotificationStore
from shared.fakes.scripted_llm import HashEmbedder
from shared.fakes.sessions import FakeSessionMemory
from shared.models.calendar_feed import FeedGrant
from shared.models.memory import (
    ExtractionChanges,
    FactDraft,
    FactFilter,
    PendingItem,
    PendingKind,
    Person,
)
from shared.models.memory_api import ChatExport, ConversationExport
from shared.ports import ConversationArchive, PendingStore, UserKeyspace
from shared.rest.paging import PageTokens
from shared.services.context_cache import context_key
from shared.services.memory.pending import pending_task_key
from tests.unit.memory_calls import call, ok, refused

ALICE, BOB = "alice", "bob"
EMBEDDER = HashEmbedder(dimension=64)


# -- fakes of the two account ports ------------------------------------------------------------
class FlakyPending:
    """The real pending store, whose next ``resolve_pending`` calls fail transiently."""

    def __init__(self, inner: PendingStore) -> None:
        self._inner = inner
        self.fail_resolves = 0

    def list_pending(self, user_id: str, chat_id: str | None = None) -> list[PendingItem]:
        return self._inner.list_pending(user_id, chat_id)

    def get_pending(self, user_id: str, item_id: str) -> PendingItem | None:
        return self._inner.get_pending(user_id, item_id)

    def resolve_pending(self, user_id: str, item_id: str, now: datetime) -> PendingItem | None:
        if self.fail_resolves:
            self.fail_resolves -= 1
            raise DependencyUnavailable("postgres unavailable")
        return self._inner.resolve_pending(user_id, item_id, now)


@dataclass
class SettingsDeps:
    clock: FixedClock
    contacts: FakeContactStore
    facts: FakeFactStore
    pending: FlakyPending
    cache: FakeCache
    embedder: HashEmbedder = EMBEDDER
    profiles: FakeProfileStore = field(default_factory=FakeProfileStore)
    account_conversations: FakeArchive = field(default_factory=FakeArchive)
    account_cache: FakeKeyspace = field(default_factory=FakeKeyspace)
    reranker: IdentityReranker = field(default_factory=IdentityReranker)
    sessions: FakeSessionMemory | None = None
    executions: FakeExecutionStore = field(default_factory=FakeExecutionStore)
    page_tokens: PageTokens = field(default_factory=lambda: PageTokens(b"unit-test-page-key"))
    calendar_feeds: FakeCalendarFeedStore = field(default_factory=FakeCalendarFeedStore)
    notifications: FakeNotificationStore = field(default_factory=FakeNotificationStore)


def _protocols(deps: SettingsDeps) -> tuple[ConversationArchive, UserKeyspace]:
    return deps.account_conversations, deps.account_cache  # the fakes satisfy the ports


@pytest.fixture
def deps() -> SettingsDeps:
    clock = FixedClock(datetime(2026, 11, 21, 12, 0, tzinfo=UTC))
    contacts = FakeContactStore(clock)
    facts = FakeFactStore(contacts, clock)
    pending = FlakyPending(FakePendingStore(facts))
    return SettingsDeps(
        clock=clock,
        contacts=contacts,
        facts=facts,
        pending=pending,
        cache=FakeCache(clock),
        sessions=FakeSessionMemory(contacts.data),
    )


# -- seeding through the ports -----------------------------------------------------------------
def person(user: str, name: str, role: str = "other") -> Person:
    return Person.model_validate(
        {"id": str(uuid.uuid4()), "user_id": user, "display_name": name, "role_to_user": role}
    )


def draft(text: str, subject: Person | None = None, **extra: object) -> FactDraft:
    return FactDraft.model_validate(
        {
            "text": text,
            "subject_entity_id": subject.id if subject else None,
            "relation_to_user": subject.role_to_user if subject else "self",
            "confidence": 0.95,
            "embedding": EMBEDDER.embed([text])[0],
            "embedding_model": EMBEDDER.model_name,
            "idempotency_key": f"k-{uuid.uuid4().hex}",
            **extra,
        }
    )


def seed(deps: SettingsDeps, user: str, changes: ExtractionChanges) -> None:
    assert deps.facts.apply_extraction(f"task-{uuid.uuid4()}", user, changes, deps.clock.now())
    deps.clock.advance(60)


def pending_item(
    user: str, kind: PendingKind, facts: list[FactDraft], **extra: object
) -> PendingItem:
    return PendingItem.model_validate(
        {
            "id": str(uuid.uuid4()),
            "user_id": user,
            "chat_id": "c1",
            "kind": kind,
            "facts": facts,
            "created_at": datetime(2026, 11, 21, 11, 0, tzinfo=UTC),
            **extra,
        }
    )


@pytest.fixture
def world(deps: SettingsDeps) -> dict[str, Person]:
    """Alice: herself, her son Martin, her colleague Martin; Bob: his sister Eva."""
    son, colleague, eva = (
        person(ALICE, "Martin", "child"),
        person(ALICE, "Martin", "colleague"),
        person(BOB, "Eva", "sibling"),
    )
    seed(
        deps,
        ALICE,
        ExtractionChanges(
            new_persons=[son, colleague],
            new_facts=[
                draft("I live in Basel", type="Other"),
                draft("I am allergic to peanuts", type="Allergy", sensitivity="high"),
                draft("Martin is eight years old", son, type="Relationship"),
                draft("Martin plays football on Saturdays", son, type="Hobby"),
                draft("Martin works in accounting", colleague, type="Work"),
            ],
        ),
    )
    seed(
        deps, BOB, ExtractionChanges(new_persons=[eva], new_facts=[draft("Eva lives in Rome", eva)])
    )
    return {"son": son, "colleague": colleague, "eva": eva}


def texts(deps: SettingsDeps, user: str, history: bool = False, **terms: str) -> list[str]:
    """Every fact the list answers for this filter, through all its pages."""
    where = " AND ".join(f'{name} = "{value}"' for name, value in terms.items())
    params: dict[str, Any] = {"filter": where, "page_size": 2}
    if history:
        params["show_history"] = "true"
    found: list[str] = []
    while True:
        page = ok(deps, user, "GET", "/v1/facts", **params)
        found += [fact["text"] for fact in page["facts"]]
        if not page["next_page_token"]:
            return sorted(found)
        params["page_token"] = page["next_page_token"]


def fact_id(deps: SettingsDeps, user: str, text: str) -> str:
    [fact] = [f for f in deps.facts.list_facts(user, FactFilter()) if f.text == text]
    return fact.id


def snapshot(deps: SettingsDeps) -> object:
    every = FactFilter(include_history=True, limit=1000)
    return [
        (
            sorted(f.model_dump_json() for f in deps.facts.list_facts(user, every)),
            sorted(p.model_dump_json() for p in deps.contacts.list_persons(user)),
            sorted(i.model_dump_json() for i in deps.pending.list_pending(user)),
        )
        for user in (ALICE, BOB)
    ]


# -- facts -------------------------------------------------------------------------------------
def test_list_facts_by_person_self_and_type(deps: SettingsDeps, world: dict[str, Person]) -> None:
    son = world["son"].id
    assert texts(deps, ALICE, subject_id=son) == [
        "Martin is eight years old",
        "Martin plays football on Saturdays",
    ]
    assert texts(deps, ALICE, subject_id="self") == ["I am allergic to peanuts", "I live in Basel"]
    assert texts(deps, ALICE, type="Work") == ["Martin works in accounting"]
    assert texts(deps, ALICE, subject_id=son, type="Hobby") == [
        "Martin plays football on Saturdays"
    ]
    assert len(texts(deps, ALICE)) == 5
    assert texts(deps, BOB) == ["Eva lives in Rome"]


@pytest.mark.parametrize(
    ("where", "status"),
    [
        ('type = "Nonsense"', 400),
        ('colour = "red"', 400),
        ('type = "Work" OR type = "Hobby"', 400),
        ("type = Work", 400),
        ('type = "Work" AND type = "Hobby"', 400),
    ],
)
def test_a_filter_outside_the_grammar_is_refused(
    deps: SettingsDeps, world: dict[str, Person], where: str, status: int
) -> None:
    assert refused(deps, ALICE, "GET", "/v1/facts", filter=where) == (status, "invalid_request")


@pytest.mark.parametrize("who", ["stranger", "bob's person"])
def test_list_facts_of_someone_elses_person_is_not_found(
    deps: SettingsDeps, world: dict[str, Person], who: str
) -> None:
    subject = world["eva"].id if who == "bob's person" else str(uuid.uuid4())
    where = f'subject_id = "{subject}"'
    assert refused(deps, ALICE, "GET", "/v1/facts", filter=where) == (404, "not_found")


def search(deps: SettingsDeps, **body: object) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = ok(deps, ALICE, "POST", "/v1/facts:search", body)["results"]
    return results


def test_search_ranks_the_matching_fact_first_and_filters(
    deps: SettingsDeps, world: dict[str, Person]
) -> None:
    found = search(deps, query="Martin plays football")
    assert found[0]["fact"]["text"] == "Martin plays football on Saturdays"
    assert found[0]["similarity"] > 0.5
    assert all(r["fact"]["text"] != "Eva lives in Rome" for r in found)  # Bob's, never Alice's

    hidden = search(deps, query="allergic to peanuts", privacy_mode=True)
    assert "I am allergic to peanuts" not in [r["fact"]["text"] for r in hidden]
    only_self = search(deps, query="Martin", subject_id="self")
    assert all(r["fact"]["subject_id"] is None for r in only_self)
    by_type = search(deps, query="Martin", type="Work")
    assert [r["fact"]["text"] for r in by_type] == ["Martin works in accounting"]


def test_get_fact_only_for_its_owner(deps: SettingsDeps, world: dict[str, Person]) -> None:
    mine = fact_id(deps, ALICE, "I live in Basel")
    answer = call(deps, ALICE, "GET", f"/v1/facts/{mine}")
    assert answer.body["text"] == "I live in Basel"
    assert answer.headers["ETag"] == f'"{answer.body["etag"]}"'
    assert refused(deps, BOB, "GET", f"/v1/facts/{mine}") == (404, "not_found")
    assert refused(deps, ALICE, "GET", f"/v1/facts/{uuid.uuid4()}") == (404, "not_found")
    assert refused(deps, ALICE, "GET", "/v1/facts/not-a-uuid") == (400, "invalid_request")


def test_patch_supersedes_keeps_history_and_reembeds(
    deps: SettingsDeps, world: dict[str, Person]
) -> None:
    old = fact_id(deps, ALICE, "I live in Basel")
    edited = ok(deps, ALICE, "PATCH", f"/v1/facts/{old}", {"text": "I live in Zurich"})
    assert edited["text"] == "I live in Zurich" and edited["current"]
    assert edited["id"] != old and edited["confidence"] == 1.0  # a new version, a new id
    previous = ok(deps, ALICE, "GET", f"/v1/facts/{old}")
    assert not previous["current"] and previous["valid_to"] is not None

    assert "I live in Zurich" in texts(deps, ALICE, subject_id="self")
    assert "I live in Basel" not in texts(deps, ALICE, subject_id="self")
    assert "I live in Basel" in texts(deps, ALICE, history=True, subject_id="self")
    [top, *_] = search(deps, query="I live in Zurich")
    assert (top["fact"]["id"], top["similarity"] > 0.99) == (edited["id"], True)

    # history is read-only; so is a retried edit
    again = {"text": "I live in Bern"}
    assert refused(deps, ALICE, "PATCH", f"/v1/facts/{old}", again) == (409, "fact_not_current")


def test_patch_changes_only_the_masked_fields(deps: SettingsDeps, world: dict[str, Person]) -> None:
    old = fact_id(deps, ALICE, "Martin is eight years old")
    body = {"text": "ignored: not in the mask", "type": "Other"}
    edited = ok(deps, ALICE, "PATCH", f"/v1/facts/{old}", body, update_mask="type")
    assert (edited["text"], edited["type"]) == ("Martin is eight years old", "Other")
    assert edited["subject_id"] == world["son"].id
    current = edited["id"]
    for mask, status in [("colour", 400), ("text", 400)]:  # unknown; masked but null
        answer = call(deps, ALICE, "PATCH", f"/v1/facts/{current}", {}, update_mask=mask)
        assert (answer.status, answer.code) == (status, "invalid_request")
    assert refused(deps, ALICE, "PATCH", f"/v1/facts/{current}", {}) == (400, "invalid_request")


def test_patch_without_change_stores_nothing(deps: SettingsDeps, world: dict[str, Person]) -> None:
    before = snapshot(deps)
    same = fact_id(deps, ALICE, "I live in Basel")
    result = ok(deps, ALICE, "PATCH", f"/v1/facts/{same}", {"text": "  I live in Basel "})
    assert result["id"] == same
    assert snapshot(deps) == before


def test_another_users_fact_cannot_be_edited_or_deleted(
    deps: SettingsDeps, world: dict[str, Person]
) -> None:
    bobs = fact_id(deps, BOB, "Eva lives in Rome")
    before = snapshot(deps)
    edit = {"text": "Eva lives in Paris"}
    assert refused(deps, ALICE, "PATCH", f"/v1/facts/{bobs}", edit) == (404, "not_found")
    assert refused(deps, ALICE, "DELETE", f"/v1/facts/{bobs}") == (404, "not_found")
    assert snapshot(deps) == before


def test_delete_erases_the_fact_once(deps: SettingsDeps, world: dict[str, Person]) -> None:
    gone = fact_id(deps, ALICE, "I am allergic to peanuts")
    assert ok(deps, ALICE, "DELETE", f"/v1/facts/{gone}")["deleted"]
    assert "I am allergic to peanuts" not in texts(deps, ALICE, history=True)
    assert refused(deps, ALICE, "DELETE", f"/v1/facts/{gone}") == (404, "not_found")


# -- persons -----------------------------------------------------------------------------------
def persons(deps: SettingsDeps, user: str) -> list[dict[str, Any]]:
    listed: list[dict[str, Any]] = ok(deps, user, "GET", "/v1/persons")["persons"]
    return listed


def test_list_get_and_patch_persons(deps: SettingsDeps, world: dict[str, Person]) -> None:
    assert sorted(p["display_name"] for p in persons(deps, ALICE)) == ["Martin", "Martin"]
    colleague = world["colleague"].id
    change = {"display_name": "Martin Keller", "aliases": ["Keller"]}
    change["descriptors"] = {"employer": "ACME"}  # type: ignore[assignment]
    updated = ok(deps, ALICE, "PATCH", f"/v1/persons/{colleague}", change)
    assert (updated["display_name"], updated["aliases"], updated["descriptors"]) == (
        "Martin Keller",
        ["Keller"],
        {"employer": "ACME"},
    )
    assert updated["role_to_user"] == "colleague"
    assert ok(deps, ALICE, "GET", f"/v1/persons/{colleague}") == updated
    answer = refused(deps, BOB, "PATCH", f"/v1/persons/{colleague}", {"aliases": ["X"]})
    assert answer == (404, "not_found")
    nulled = {"display_name": None}
    assert refused(deps, ALICE, "PATCH", f"/v1/persons/{colleague}", nulled)[0] == 400


def test_merge_moves_the_facts_and_deletes_the_absorbed(
    deps: SettingsDeps, world: dict[str, Person]
) -> None:
    son, colleague = world["son"].id, world["colleague"].id
    merge = f"/v1/persons/{son}:merge"
    assert ok(deps, ALICE, "POST", merge, {"absorb_id": colleague})["id"] == son
    assert len(texts(deps, ALICE, subject_id=son)) == 3
    assert [p["id"] for p in persons(deps, ALICE)] == [son]
    # a retry: the absorbed person is gone
    assert refused(deps, ALICE, "POST", merge, {"absorb_id": colleague}) == (404, "not_found")
    assert refused(deps, ALICE, "POST", merge, {"absorb_id": son}) == (409, "conflict")


def test_merge_with_another_users_person_changes_nothing(
    deps: SettingsDeps, world: dict[str, Person]
) -> None:
    before = snapshot(deps)
    merge = f"/v1/persons/{world['son'].id}:merge"
    assert refused(deps, ALICE, "POST", merge, {"absorb_id": world["eva"].id})[0] == 404
    assert snapshot(deps) == before


def test_split_creates_a_person_and_moves_the_chosen_facts_once(
    deps: SettingsDeps, world: dict[str, Person]
) -> None:
    son = world["son"].id
    football = fact_id(deps, ALICE, "Martin plays football on Saturdays")
    body = {
        "new_person": {"display_name": "Martin (nephew)", "role_to_user": "other"},
        "fact_ids": [football],
    }
    split = ok(deps, ALICE, "POST", f"/v1/persons/{son}:split", body)
    assert (split["person"]["display_name"], split["moved"]) == ("Martin (nephew)", 1)
    new = split["person"]["id"]
    assert texts(deps, ALICE, subject_id=new) == ["Martin plays football on Saturdays"]
    assert texts(deps, ALICE, subject_id=son) == ["Martin is eight years old"]

    again = ok(deps, ALICE, "POST", f"/v1/persons/{son}:split", body)  # a retry: nothing twice
    assert again["person"]["id"] == new
    assert len(persons(deps, ALICE)) == 3


def test_split_refuses_facts_of_others(deps: SettingsDeps, world: dict[str, Person]) -> None:
    before = snapshot(deps)
    for fact, status in [
        (fact_id(deps, ALICE, "Martin works in accounting"), 400),  # the colleague's
        (fact_id(deps, BOB, "Eva lives in Rome"), 404),  # Bob's
    ]:
        body = {"new_person": {"display_name": "Other Martin"}, "fact_ids": [fact]}
        split = f"/v1/persons/{world['son'].id}:split"
        assert refused(deps, ALICE, "POST", split, body)[0] == status
    assert snapshot(deps) == before


def test_delete_person_deletes_their_facts(deps: SettingsDeps, world: dict[str, Person]) -> None:
    son = f"/v1/persons/{world['son'].id}"
    assert ok(deps, ALICE, "DELETE", son)["deleted"]
    assert not [t for t in texts(deps, ALICE, history=True) if "eight" in t]
    assert refused(deps, ALICE, "DELETE", son) == (404, "not_found")
    assert refused(deps, ALICE, "DELETE", f"/v1/persons/{world['eva'].id}") == (404, "not_found")


# -- pending items -----------------------------------------------------------------------------
def conflict(deps: SettingsDeps, user: str = ALICE) -> PendingItem:
    old = fact_id(deps, user, "I live in Basel")
    item = pending_item(
        user, "fact_conflict", [draft("I live in Zurich")], conflicting_fact_id=str(old)
    )
    seed(deps, user, ExtractionChanges(pending=[item]))
    return item


def ambiguity(deps: SettingsDeps, world: dict[str, Person]) -> PendingItem:
    held = draft("Martin got a new bike").model_copy(update={"relation_to_user": "other"})
    item = pending_item(
        ALICE,
        "disambiguation",
        [held],
        mention="Martin",
        candidate_ids=[world["son"].id, world["colleague"].id],
        proposed_person=person(ALICE, "Martin", "friend"),
    )
    seed(deps, ALICE, ExtractionChanges(pending=[item]))
    return item


def resolve(
    deps: SettingsDeps,
    item: PendingItem,
    choice: str,
    person_id: str | None = None,
    user: str = ALICE,
) -> Any:
    path = f"/v1/pendingItems/{item.id}:resolve"
    return call(deps, user, "POST", path, {"choice": choice, "person_id": person_id})


def pending(deps: SettingsDeps, user: str, **params: Any) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = ok(deps, user, "GET", "/v1/pendingItems", **params)[
        "pending_items"
    ]
    return items


def test_list_pending_shows_open_items_with_their_context(
    deps: SettingsDeps, world: dict[str, Person]
) -> None:
    conflict_item, ambiguous = conflict(deps), ambiguity(deps, world)
    items = {i["id"]: i for i in pending(deps, ALICE)}
    assert set(items) == {conflict_item.id, ambiguous.id}
    shown = items[conflict_item.id]
    assert shown["conflicting_fact"]["text"] == "I live in Basel"
    assert [f["text"] for f in shown["facts"]] == ["I live in Zurich"]
    assert shown["choices"] == ["keep_old", "take_new", "keep_both"]
    assert [c["role_to_user"] for c in items[ambiguous.id]["candidates"]] == ["child", "colleague"]
    assert items[ambiguous.id]["choices"] == ["person", "someone_else"]
    assert ok(deps, ALICE, "GET", f"/v1/pendingItems/{ambiguous.id}") == items[ambiguous.id]
    assert pending(deps, BOB) == []
    assert refused(deps, BOB, "GET", f"/v1/pendingItems/{ambiguous.id}") == (404, "not_found")
    assert pending(deps, ALICE, filter='chat_id = "other"') == []
    assert len(pending(deps, ALICE, filter='chat_id = "c1"')) == 2


@pytest.mark.parametrize(
    ("choice", "current", "history"),
    [
        ("keep_old", ["I live in Basel"], []),
        ("take_new", ["I live in Zurich"], ["I live in Basel"]),
        ("keep_both", ["I live in Basel", "I live in Zurich"], []),
    ],
)
def test_resolving_a_conflict(
    deps: SettingsDeps,
    world: dict[str, Person],
    choice: str,
    current: list[str],
    history: list[str],
) -> None:
    item = conflict(deps)
    result = resolve(deps, item, choice).body
    assert result["item"]["resolved_at"] is not None
    assert result["stored"] == (0 if choice == "keep_old" else 1)
    lives = [t for t in texts(deps, ALICE, subject_id="self") if t.startswith("I live")]
    assert lives == current
    everything = texts(deps, ALICE, history=True, subject_id="self")
    assert [t for t in everything if t.startswith("I live") and t not in lives] == history
    again = resolve(deps, item, choice)
    assert (again.status, again.code) == (409, "pending_not_open")
    assert pending(deps, ALICE) == []


def test_choosing_a_candidate_stores_the_held_facts_about_them(
    deps: SettingsDeps, world: dict[str, Person]
) -> None:
    son = world["son"]
    item = ambiguity(deps, world)
    assert resolve(deps, item, "person", son.id).body["stored"] == 1
    assert "Martin got a new bike" in texts(deps, ALICE, subject_id=son.id)
    [stored] = [f for f in deps.facts.list_facts(ALICE, FactFilter()) if "bike" in f.text]
    assert (stored.subject_entity_id, stored.relation_to_user) == (son.id, "child")


def test_someone_else_creates_the_proposed_person(
    deps: SettingsDeps, world: dict[str, Person]
) -> None:
    item = ambiguity(deps, world)
    assert resolve(deps, item, "someone_else").status == 200
    assert item.proposed_person is not None
    new = deps.contacts.get_person(ALICE, item.proposed_person.id)
    assert new is not None and new.role_to_user == "friend"
    assert texts(deps, ALICE, subject_id=new.id) == ["Martin got a new bike"]


def test_an_answer_retried_after_a_failure_stores_the_facts_once(
    deps: SettingsDeps, world: dict[str, Person]
) -> None:
    item = ambiguity(deps, world)
    deps.pending.fail_resolves = 1
    assert resolve(deps, item, "person", world["son"].id).status == 503
    retried = resolve(deps, item, "person", world["son"].id).body
    assert (retried["stored"], retried["item"]["resolved_at"] is not None) == (0, True)
    assert texts(deps, ALICE, subject_id=world["son"].id).count("Martin got a new bike") == 1
    # the facts went in with the item's own task key: a redelivery cannot write them again
    again = ExtractionChanges(new_facts=item.facts)
    assert not deps.facts.apply_extraction(
        pending_task_key(item.id), ALICE, again, deps.clock.now()
    )


def test_refused_answers_change_nothing(deps: SettingsDeps, world: dict[str, Person]) -> None:
    conflict_item, ambiguous = conflict(deps), ambiguity(deps, world)
    before = snapshot(deps)
    refusals = [
        (BOB, conflict_item, "keep_both", None, 404),  # not Bob's item
        (ALICE, conflict_item, "someone_else", None, 400),  # wrong kind of answer
        (ALICE, ambiguous, "take_new", None, 400),
        (ALICE, ambiguous, "person", world["eva"].id, 404),  # Bob's person
        (ALICE, ambiguous, "person", str(uuid.uuid4()), 404),
        (ALICE, ambiguous, "person", None, 400),
    ]
    for user, item, choice, person_id, status in refusals:
        assert resolve(deps, item, choice, person_id, user).status == status
    assert snapshot(deps) == before


# -- export and account deletion ---------------------------------------------------------------
def test_export_holds_everything(deps: SettingsDeps, world: dict[str, Person]) -> None:
    deps.account_conversations.trees[ALICE] = ConversationExport(
        settings={"timezone": "Europe/Zurich"},
        chats=[ChatExport(id="c1", created_at=None, updated_at=None, summary="", messages=[])],
    )
    basel = fact_id(deps, ALICE, "I live in Basel")
    ok(deps, ALICE, "PATCH", f"/v1/facts/{basel}", {"text": "I live in Bern"})
    exported = ok(deps, ALICE, "GET", "/v1/account:export")
    assert exported["user_id"] == ALICE and not exported["facts_truncated"]
    assert sorted(f["text"] for f in exported["facts"]) == sorted(
        [
            "I live in Basel",
            "I live in Bern",
            "I am allergic to peanuts",
            "Martin is eight years old",
            "Martin plays football on Saturdays",
            "Martin works in accounting",
        ]
    )
    assert [f["current"] for f in exported["facts"] if "Basel" in f["text"]] == [False]
    assert {p["id"] for p in exported["persons"]} == {world["son"].id, world["colleague"].id}
    assert exported["conversations"]["settings"] == {"timezone": "Europe/Zurich"}
    assert [c["id"] for c in exported["conversations"]["chats"]] == ["c1"]
    assert "Eva lives in Rome" not in str(exported)


def test_export_includes_pending_items(deps: SettingsDeps, world: dict[str, Person]) -> None:
    item = ambiguity(deps, world)
    assert [p["id"] for p in ok(deps, ALICE, "GET", "/v1/account:export")["pending"]] == [item.id]


def test_delete_account_erases_everything_of_the_user_only(
    deps: SettingsDeps, world: dict[str, Person]
) -> None:
    conflict(deps)
    deps.account_conversations.trees[ALICE] = ConversationExport(settings={"a": 1})
    deps.account_conversations.trees[BOB] = ConversationExport(settings={"b": 1})
    deps.account_cache.keys |= {"pa:rate:alice:1", "pa:rate:alice_2:1", "pa:rate:bob:1"}
    feeds = {
        u: deps.calendar_feeds.put_feed(u, FeedGrant.issue(deps.clock.now())) for u in (ALICE, BOB)
    }
    before = snapshot(deps)
    for params in ({}, {"confirm": "false"}, {"confirm": "yes please"}):
        assert refused(deps, ALICE, "DELETE", "/v1/account", **params)[0] == 400
    assert snapshot(deps) == before
    deps.account_conversations.fail_deletes = 1

    # a partial failure: the client retries
    assert refused(deps, ALICE, "DELETE", "/v1/account", confirm="true")[0] == 503
    assert ok(deps, ALICE, "DELETE", "/v1/account", confirm="true")["deleted"]
    assert ok(deps, ALICE, "DELETE", "/v1/account", confirm="true")["deleted"]  # nothing left

    every = FactFilter(include_history=True, limit=1000)
    assert deps.facts.list_facts(ALICE, every) == []
    assert deps.contacts.list_persons(ALICE) == []
    assert deps.pending.list_pending(ALICE) == []
    assert ALICE not in deps.account_conversations.trees
    assert deps.account_cache.keys == {"pa:rate:alice_2:1", "pa:rate:bob:1"}
    assert [f.text for f in deps.facts.list_facts(BOB, every)] == ["Eva lives in Rome"]
    assert BOB in deps.account_conversations.trees
    assert deps.calendar_feeds.feed_owner(feeds[ALICE].digest) is None  # the URL is dead
    assert deps.calendar_feeds.feed_owner(feeds[BOB].digest) == BOB


# -- the cached turn context -------------------------------------------------------------------
Request = tuple[str, str, dict[str, object] | None]
Change = Callable[[SettingsDeps, dict[str, Person]], Request]
CHANGES: dict[str, Change] = {
    "patch fact": lambda deps, _: (
        "PATCH",
        f"/v1/facts/{fact_id(deps, ALICE, 'I live in Basel')}",
        {"text": "I live in Bern"},
    ),
    "delete fact": lambda deps, _: (
        "DELETE",
        f"/v1/facts/{fact_id(deps, ALICE, 'I am allergic to peanuts')}",
        None,
    ),
    "merge": lambda _, world: (
        "POST",
        f"/v1/persons/{world['son'].id}:merge",
        {"absorb_id": world["colleague"].id},
    ),
    "split": lambda deps, world: (
        "POST",
        f"/v1/persons/{world['son'].id}:split",
        {
            "new_person": {"display_name": "Martin (nephew)"},
            "fact_ids": [fact_id(deps, ALICE, "Martin plays football on Saturdays")],
        },
    ),
    "delete person": lambda _, world: ("DELETE", f"/v1/persons/{world['son'].id}", None),
    "resolve": lambda deps, _: (
        "POST",
        f"/v1/pendingItems/{conflict(deps).id}:resolve",
        {"choice": "take_new"},
    ),
    "assistant": lambda _, __: ("PATCH", "/v1/settings/assistant", {"timezone": "Europe/Zurich"}),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_change_drops_the_cached_turn_context_of_its_user(
    deps: SettingsDeps, world: dict[str, Person], change: str
) -> None:
    method, path, body = CHANGES[change](deps, world)
    deps.cache.set(context_key(ALICE), b"context", 3600)
    deps.cache.set(context_key(BOB), b"context", 3600)
    ok(deps, ALICE, method, path, body)
    assert deps.cache.get(context_key(ALICE)) is None
    assert deps.cache.get(context_key(BOB)) == b"context"


def test_reads_and_refusals_keep_the_cached_turn_context(
    deps: SettingsDeps, world: dict[str, Person]
) -> None:
    deps.cache.set(context_key(ALICE), b"context", 3600)
    basel = fact_id(deps, ALICE, "I live in Basel")
    for method, path, body in [
        ("GET", "/v1/facts", None),
        ("POST", "/v1/facts:search", {"query": "Basel"}),
        ("GET", f"/v1/facts/{basel}", None),
        ("GET", f"/v1/facts/{basel}/versions", None),
        ("GET", "/v1/persons", None),
        ("GET", "/v1/pendingItems", None),
        ("GET", "/v1/settings/assistant", None),
        ("GET", "/v1/account:export", None),
    ]:
        ok(deps, ALICE, method, path, body)
    for method, path, body in [
        ("DELETE", f"/v1/facts/{uuid.uuid4()}", None),
        ("DELETE", f"/v1/persons/{world['eva'].id}", None),  # Bob's
        ("POST", f"/v1/persons/{world['son'].id}:merge", {"absorb_id": world["eva"].id}),
        ("POST", f"/v1/pendingItems/{uuid.uuid4()}:resolve", {"choice": "keep_old"}),
        ("PATCH", "/v1/settings/assistant", {"timezone": "Mars/Olympus"}),
    ]:
        assert call(deps, ALICE, method, path, body).status >= 400
    assert deps.cache.get(context_key(ALICE)) == b"context"


# -- the adapters' pure parts ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "user", "mine"),
    [
        ("pa:rate:u1:123", "u1", True),
        ("pa:rate:u1", "u1", True),
        ("pa:cache:u1:a:b", "u1", True),
        ("pa:ctx:u1", "u1", True),  # the cached turn context (shared.services.context_cache)
        ("pa:ctx:u1_2", "u1", False),
        ("pa:rate:u1_2:123", "u1", False),
        ("pa:rate:xu1:123", "u1", False),
        ("pa:rate:u2:u1", "u1", False),
        ("pa:u1", "u1", False),
        ("other:rate:u1:1", "u1", False),
        ("pax:rate:u1:1", "u1", False),
    ],
)
def test_redis_keys_belong_to_exactly_one_user(key: str, user: str, mine: bool) -> None:
    assert owns("pa", key, user) is mine


def test_firestore_values_become_json() -> None:
    when = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)
    assert json_safe({"at": when, "blob": b"\x00\xff", "n": [1, 2.5, None, True]}) == {
        "at": "2026-01-02T03:04:00+00:00",
        "blob": "AP8=",
        "n": [1, 2.5, None, True],
    }


def test_the_fakes_satisfy_the_ports(deps: SettingsDeps) -> None:
    archive, keyspace = _protocols(deps)
    assert archive.delete_user("nobody") == 0 and keyspace.delete_user("nobody") == 0
