"""The settings API on the in-memory stores: every operation, refusals, retries."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from shared.adapters.clock import FixedClock
from shared.adapters.fake_cache import FakeCache
from shared.adapters.fake_executions import FakeExecutionStore
from shared.adapters.fake_facts import FakeContactStore, FakeFactStore, FakePendingStore
from shared.adapters.fake_profiles import FakeProfileStore
from shared.adapters.fake_sessions import FakeSessionMemory
from shared.adapters.firestore_account import json_safe
from shared.adapters.redis_account import owns
from shared.adapters.rerankers import IdentityReranker
from shared.adapters.scripted_llm import HashEmbedder
from shared.app.settings.api import OPERATIONS, SettingsApi, operation_for
from shared.errors import (
    AppError,
    BadRequest,
    DependencyUnavailable,
    FactNotCurrent,
    NotFound,
    PendingNotOpen,
)
from shared.models.memory import (
    ExtractionChanges,
    FactDraft,
    FactFilter,
    PendingItem,
    PendingKind,
    Person,
)
from shared.models.memory_api import (
    ChatExport,
    ConversationExport,
    DeleteAccountRequest,
    EditFactRequest,
    FactRef,
    ListFactsRequest,
    ListPendingRequest,
    MergePersonsRequest,
    PersonFields,
    PersonRef,
    ResolvePendingRequest,
    SearchFactsRequest,
    SplitPersonRequest,
    UpdatePersonRequest,
)
from shared.ports import ConversationArchive, PendingStore, UserKeyspace
from shared.services.context_cache import context_key
from shared.services.memory.pending import pending_task_key

ALICE, BOB = "alice", "bob"
EMBEDDER = HashEmbedder(dimension=64)


# -- fakes of the two account ports ------------------------------------------------------------
class FakeArchive:
    """Firestore's ``users/{uid}`` trees; ``fail_deletes`` makes the next deletions fail."""

    def __init__(self) -> None:
        self.trees: dict[str, ConversationExport] = {}
        self.fail_deletes = 0
        self.erasures: list[tuple[str, str]] = []  # marks set: ("begin" | "end", user)

    def export_user(self, user_id: str) -> ConversationExport:
        return self.trees.get(user_id, ConversationExport())

    def delete_user(self, user_id: str) -> int:
        if self.fail_deletes:
            self.fail_deletes -= 1
            raise DependencyUnavailable("firestore unavailable")
        tree = self.trees.pop(user_id, None)
        return 0 if tree is None else 1 + len(tree.chats)

    def begin_erasure(self, user_id: str, now: datetime) -> None:
        self.erasures.append(("begin", user_id))

    def running_turns(self, user_id: str, now: datetime) -> int:
        return 0

    def end_erasure(self, user_id: str, now: datetime) -> None:
        self.erasures.append(("end", user_id))


class FakeKeyspace:
    def __init__(self, prefix: str = "pa") -> None:
        self.keys: set[str] = set()
        self._prefix = prefix

    def delete_user(self, user_id: str) -> int:
        mine = {key for key in self.keys if owns(self._prefix, key, user_id)}
        self.keys -= mine
        return len(mine)


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


@pytest.fixture
def admin(deps: SettingsDeps) -> SettingsApi:
    return SettingsApi(deps)


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


def texts(admin: SettingsApi, user: str, **where: object) -> list[str]:
    request = ListFactsRequest.model_validate(where)
    return sorted(f.text for f in admin.list_facts(user, request).facts)


def fact_id(deps: SettingsDeps, user: str, text: str) -> uuid.UUID:
    [fact] = [f for f in deps.facts.list_facts(user, FactFilter()) if f.text == text]
    return uuid.UUID(fact.id)


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
def test_list_facts_by_person_self_and_type(admin: SettingsApi, world: dict[str, Person]) -> None:
    son = world["son"].id
    assert texts(admin, ALICE, subject_id=son) == [
        "Martin is eight years old",
        "Martin plays football on Saturdays",
    ]
    assert texts(admin, ALICE, subject_id="self") == ["I am allergic to peanuts", "I live in Basel"]
    assert texts(admin, ALICE, type="Work") == ["Martin works in accounting"]
    assert texts(admin, ALICE, subject_id=son, type="Hobby") == [
        "Martin plays football on Saturdays"
    ]
    assert len(texts(admin, ALICE)) == 5
    assert texts(admin, BOB) == ["Eva lives in Rome"]


@pytest.mark.parametrize("who", ["stranger", "bob's person"])
def test_list_facts_of_someone_elses_person_is_not_found(
    admin: SettingsApi, world: dict[str, Person], who: str
) -> None:
    subject = world["eva"].id if who == "bob's person" else str(uuid.uuid4())
    with pytest.raises(NotFound):
        admin.list_facts(ALICE, ListFactsRequest.model_validate({"subject_id": subject}))


def test_search_ranks_the_matching_fact_first_and_filters(
    admin: SettingsApi, world: dict[str, Person]
) -> None:
    found = admin.search_facts(ALICE, SearchFactsRequest(query="Martin plays football"))
    assert found.results[0].fact.text == "Martin plays football on Saturdays"
    assert found.results[0].similarity > 0.5
    assert all(r.fact.text != "Eva lives in Rome" for r in found.results)  # Bob's, never Alice's

    hidden = admin.search_facts(
        ALICE, SearchFactsRequest(query="allergic to peanuts", privacy_mode=True)
    )
    assert "I am allergic to peanuts" not in [r.fact.text for r in hidden.results]

    only_self = admin.search_facts(
        ALICE, SearchFactsRequest.model_validate({"query": "Martin", "subject_id": "self"})
    )
    assert all(r.fact.subject_id is None for r in only_self.results)
    by_type = admin.search_facts(ALICE, SearchFactsRequest(query="Martin", type="Work"))
    assert [r.fact.text for r in by_type.results] == ["Martin works in accounting"]


def test_get_fact_only_for_its_owner(
    admin: SettingsApi, deps: SettingsDeps, world: dict[str, Person]
) -> None:
    mine = fact_id(deps, ALICE, "I live in Basel")
    assert admin.get_fact(ALICE, FactRef(fact_id=mine)).fact.text == "I live in Basel"
    with pytest.raises(NotFound):
        admin.get_fact(BOB, FactRef(fact_id=mine))
    with pytest.raises(NotFound):
        admin.get_fact(ALICE, FactRef(fact_id=uuid.uuid4()))


def test_edit_supersedes_keeps_history_and_reembeds(
    admin: SettingsApi, deps: SettingsDeps, world: dict[str, Person]
) -> None:
    old = fact_id(deps, ALICE, "I live in Basel")
    edited = admin.edit_fact(ALICE, EditFactRequest(fact_id=old, text="I live in Zurich"))
    assert edited.fact.text == "I live in Zurich" and edited.fact.current
    assert edited.fact.id != str(old) and edited.fact.confidence == 1.0
    assert edited.previous.id == str(old) and not edited.previous.current
    assert edited.previous.valid_to is not None

    assert "I live in Zurich" in texts(admin, ALICE, subject_id="self")
    assert "I live in Basel" not in texts(admin, ALICE, subject_id="self")
    assert "I live in Basel" in texts(admin, ALICE, subject_id="self", include_history=True)
    top = admin.search_facts(ALICE, SearchFactsRequest(query="I live in Zurich")).results[0]
    assert (top.fact.id, top.similarity > 0.99) == (edited.fact.id, True)

    with pytest.raises(FactNotCurrent):  # history is read-only; so is a retried edit
        admin.edit_fact(ALICE, EditFactRequest(fact_id=old, text="I live in Bern"))


def test_edit_of_the_person_facts_keeps_the_subject(
    admin: SettingsApi, deps: SettingsDeps, world: dict[str, Person]
) -> None:
    old = fact_id(deps, ALICE, "Martin is eight years old")
    edited = admin.edit_fact(
        ALICE, EditFactRequest(fact_id=old, text="Martin is nine years old", type="Other")
    )
    assert (edited.fact.subject_id, edited.fact.type) == (world["son"].id, "Other")


def test_edit_without_change_stores_nothing(
    admin: SettingsApi, deps: SettingsDeps, world: dict[str, Person]
) -> None:
    before = snapshot(deps)
    same = fact_id(deps, ALICE, "I live in Basel")
    result = admin.edit_fact(ALICE, EditFactRequest(fact_id=same, text="  I live in Basel "))
    assert result.fact.id == result.previous.id == str(same)
    assert snapshot(deps) == before


def test_another_users_fact_cannot_be_edited_or_deleted(
    admin: SettingsApi, deps: SettingsDeps, world: dict[str, Person]
) -> None:
    bobs = fact_id(deps, BOB, "Eva lives in Rome")
    before = snapshot(deps)
    with pytest.raises(NotFound):
        admin.edit_fact(ALICE, EditFactRequest(fact_id=bobs, text="Eva lives in Paris"))
    with pytest.raises(NotFound):
        admin.delete_fact(ALICE, FactRef(fact_id=bobs))
    assert snapshot(deps) == before


def test_delete_erases_the_fact_once(
    admin: SettingsApi, deps: SettingsDeps, world: dict[str, Person]
) -> None:
    gone = fact_id(deps, ALICE, "I am allergic to peanuts")
    assert admin.delete_fact(ALICE, FactRef(fact_id=gone)).deleted
    assert "I am allergic to peanuts" not in texts(admin, ALICE, include_history=True)
    with pytest.raises(NotFound):
        admin.delete_fact(ALICE, FactRef(fact_id=gone))


# -- persons -----------------------------------------------------------------------------------
def test_list_and_update_persons(admin: SettingsApi, world: dict[str, Person]) -> None:
    assert sorted(p.display_name for p in admin.persons.list_persons(ALICE).persons) == [
        "Martin",
        "Martin",
    ]
    request = UpdatePersonRequest.model_validate(
        {
            "person_id": world["colleague"].id,
            "display_name": "Martin Keller",
            "aliases": ["Keller"],
            "descriptors": {"employer": "ACME"},
        }
    )
    updated = admin.persons.update(ALICE, request).person
    assert (updated.display_name, updated.aliases, updated.descriptors, updated.role_to_user) == (
        "Martin Keller",
        ["Keller"],
        {"employer": "ACME"},
        "colleague",
    )
    with pytest.raises(NotFound):
        admin.persons.update(
            BOB, UpdatePersonRequest.model_validate({**request.model_dump(), "aliases": ["X"]})
        )


def test_merge_moves_the_facts_and_deletes_the_absorbed(
    admin: SettingsApi, deps: SettingsDeps, world: dict[str, Person]
) -> None:
    son, colleague = world["son"].id, world["colleague"].id
    request = MergePersonsRequest.model_validate({"keep_id": son, "absorb_id": colleague})
    assert admin.persons.merge(ALICE, request).person.id == son
    assert len(texts(admin, ALICE, subject_id=son)) == 3
    assert [p.id for p in admin.persons.list_persons(ALICE).persons] == [son]
    with pytest.raises(NotFound):  # a retry: the absorbed person is gone
        admin.persons.merge(ALICE, request)


def test_merge_with_another_users_person_changes_nothing(
    admin: SettingsApi, deps: SettingsDeps, world: dict[str, Person]
) -> None:
    before = snapshot(deps)
    with pytest.raises(NotFound):
        admin.persons.merge(
            ALICE,
            MergePersonsRequest.model_validate(
                {"keep_id": world["son"].id, "absorb_id": world["eva"].id}
            ),
        )
    assert snapshot(deps) == before


def test_split_creates_a_person_and_moves_the_chosen_facts_once(
    admin: SettingsApi, deps: SettingsDeps, world: dict[str, Person]
) -> None:
    son = world["son"].id
    football = fact_id(deps, ALICE, "Martin plays football on Saturdays")
    request = SplitPersonRequest(
        person_id=uuid.UUID(son),
        new_person=PersonFields(display_name="Martin (nephew)", role_to_user="other"),
        fact_ids=[football],
    )
    split = admin.persons.split(ALICE, request)
    assert (split.person.display_name, split.moved) == ("Martin (nephew)", 1)
    assert texts(admin, ALICE, subject_id=split.person.id) == ["Martin plays football on Saturdays"]
    assert texts(admin, ALICE, subject_id=son) == ["Martin is eight years old"]

    again = admin.persons.split(ALICE, request)  # a retry: same person, nothing twice
    assert again.person.id == split.person.id
    assert len(admin.persons.list_persons(ALICE).persons) == 3


def test_split_refuses_facts_of_others(
    admin: SettingsApi, deps: SettingsDeps, world: dict[str, Person]
) -> None:
    before = snapshot(deps)
    for fact, error in [
        (fact_id(deps, ALICE, "Martin works in accounting"), BadRequest),  # the colleague's
        (fact_id(deps, BOB, "Eva lives in Rome"), NotFound),  # Bob's
    ]:
        with pytest.raises(error):
            admin.persons.split(
                ALICE,
                SplitPersonRequest(
                    person_id=uuid.UUID(world["son"].id),
                    new_person=PersonFields(display_name="Other Martin"),
                    fact_ids=[fact],
                ),
            )
    assert snapshot(deps) == before


def test_delete_person_deletes_their_facts(
    admin: SettingsApi, deps: SettingsDeps, world: dict[str, Person]
) -> None:
    ref = PersonRef(person_id=uuid.UUID(world["son"].id))
    assert admin.persons.delete(ALICE, ref).deleted
    assert not [t for t in texts(admin, ALICE, include_history=True) if "eight" in t]
    with pytest.raises(NotFound):
        admin.persons.delete(ALICE, ref)
    with pytest.raises(NotFound):
        admin.persons.delete(ALICE, PersonRef(person_id=uuid.UUID(world["eva"].id)))


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


def answer(item: PendingItem, choice: str, person_id: str | None = None) -> ResolvePendingRequest:
    return ResolvePendingRequest.model_validate(
        {"pending_id": item.id, "choice": choice, "person_id": person_id}
    )


def test_list_pending_shows_open_items_with_their_context(
    admin: SettingsApi, deps: SettingsDeps, world: dict[str, Person]
) -> None:
    conflict_item, ambiguous = conflict(deps), ambiguity(deps, world)
    items = {i.id: i for i in admin.pending.list_items(ALICE, ListPendingRequest()).items}
    assert set(items) == {conflict_item.id, ambiguous.id}
    shown = items[conflict_item.id]
    assert shown.conflicting_fact is not None
    assert shown.conflicting_fact.text == "I live in Basel"
    assert [f.text for f in shown.facts] == ["I live in Zurich"]
    assert shown.choices == ["keep_old", "take_new", "keep_both"]
    assert [c.role_to_user for c in items[ambiguous.id].candidates] == ["child", "colleague"]
    assert items[ambiguous.id].choices == ["person", "someone_else"]
    assert admin.pending.list_items(BOB, ListPendingRequest()).items == []
    assert admin.pending.list_items(ALICE, ListPendingRequest(chat_id="other")).items == []


@pytest.mark.parametrize(
    ("choice", "current", "history"),
    [
        ("keep_old", ["I live in Basel"], []),
        ("take_new", ["I live in Zurich"], ["I live in Basel"]),
        ("keep_both", ["I live in Basel", "I live in Zurich"], []),
    ],
)
def test_resolving_a_conflict(
    admin: SettingsApi,
    deps: SettingsDeps,
    world: dict[str, Person],
    choice: str,
    current: list[str],
    history: list[str],
) -> None:
    item = conflict(deps)
    result = admin.pending.resolve(ALICE, answer(item, choice))
    assert result.item.resolved_at is not None
    assert result.stored == (0 if choice == "keep_old" else 1)
    lives = [t for t in texts(admin, ALICE, subject_id="self") if t.startswith("I live")]
    assert lives == current
    everything = texts(admin, ALICE, subject_id="self", include_history=True)
    assert [t for t in everything if t.startswith("I live") and t not in lives] == history
    with pytest.raises(PendingNotOpen):
        admin.pending.resolve(ALICE, answer(item, choice))
    assert admin.pending.list_items(ALICE, ListPendingRequest()).items == []


def test_choosing_a_candidate_stores_the_held_facts_about_them(
    admin: SettingsApi, deps: SettingsDeps, world: dict[str, Person]
) -> None:
    son = world["son"]
    item = ambiguity(deps, world)
    result = admin.pending.resolve(ALICE, answer(item, "person", son.id))
    assert result.stored == 1
    assert "Martin got a new bike" in texts(admin, ALICE, subject_id=son.id)
    [stored] = [f for f in deps.facts.list_facts(ALICE, FactFilter()) if "bike" in f.text]
    assert (stored.subject_entity_id, stored.relation_to_user) == (son.id, "child")


def test_someone_else_creates_the_proposed_person(
    admin: SettingsApi, deps: SettingsDeps, world: dict[str, Person]
) -> None:
    item = ambiguity(deps, world)
    admin.pending.resolve(ALICE, answer(item, "someone_else"))
    assert item.proposed_person is not None
    new = deps.contacts.get_person(ALICE, item.proposed_person.id)
    assert new is not None and new.role_to_user == "friend"
    assert texts(admin, ALICE, subject_id=new.id) == ["Martin got a new bike"]


def test_an_answer_retried_after_a_failure_stores_the_facts_once(
    admin: SettingsApi, deps: SettingsDeps, world: dict[str, Person]
) -> None:
    item = ambiguity(deps, world)
    deps.pending.fail_resolves = 1
    with pytest.raises(DependencyUnavailable):
        admin.pending.resolve(ALICE, answer(item, "person", world["son"].id))
    retried = admin.pending.resolve(ALICE, answer(item, "person", world["son"].id))
    assert (retried.stored, retried.item.resolved_at is not None) == (0, True)
    assert texts(admin, ALICE, subject_id=world["son"].id).count("Martin got a new bike") == 1
    # the facts went in with the item's own task key: a redelivery cannot write them again
    again = ExtractionChanges(new_facts=item.facts)
    assert not deps.facts.apply_extraction(
        pending_task_key(item.id), ALICE, again, deps.clock.now()
    )


def test_refused_answers_change_nothing(
    admin: SettingsApi, deps: SettingsDeps, world: dict[str, Person]
) -> None:
    conflict_item, ambiguous = conflict(deps), ambiguity(deps, world)
    before = snapshot(deps)
    refusals = [
        (BOB, answer(conflict_item, "keep_both"), NotFound),  # not Bob's item
        (ALICE, answer(conflict_item, "someone_else"), BadRequest),  # wrong kind of answer
        (ALICE, answer(ambiguous, "take_new"), BadRequest),
        (ALICE, answer(ambiguous, "person", world["eva"].id), NotFound),  # Bob's person
        (ALICE, answer(ambiguous, "person", str(uuid.uuid4())), NotFound),
    ]
    for user, request, error in refusals:
        with pytest.raises(error):
            admin.pending.resolve(user, request)
    assert snapshot(deps) == before


# -- export and account deletion ---------------------------------------------------------------
def test_export_holds_everything(
    admin: SettingsApi, deps: SettingsDeps, world: dict[str, Person]
) -> None:
    deps.account_conversations.trees[ALICE] = ConversationExport(
        settings={"timezone": "Europe/Zurich"},
        chats=[ChatExport(id="c1", created_at=None, updated_at=None, summary="", messages=[])],
    )
    admin.edit_fact(
        ALICE,
        EditFactRequest(fact_id=fact_id(deps, ALICE, "I live in Basel"), text="I live in Bern"),
    )
    exported = admin.account.export(ALICE)
    assert exported.user_id == ALICE and not exported.facts_truncated
    assert sorted(f.text for f in exported.facts) == sorted(
        [
            "I live in Basel",
            "I live in Bern",
            "I am allergic to peanuts",
            "Martin is eight years old",
            "Martin plays football on Saturdays",
            "Martin works in accounting",
        ]
    )
    assert [f.current for f in exported.facts if "Basel" in f.text] == [False]
    assert {p.id for p in exported.persons} == {world["son"].id, world["colleague"].id}
    assert exported.conversations.settings == {"timezone": "Europe/Zurich"}
    assert [c.id for c in exported.conversations.chats] == ["c1"]
    assert "Eva lives in Rome" not in exported.model_dump_json()


def test_export_includes_pending_items(
    admin: SettingsApi, deps: SettingsDeps, world: dict[str, Person]
) -> None:
    item = ambiguity(deps, world)
    assert [p.id for p in admin.account.export(ALICE).pending] == [item.id]


def test_delete_account_erases_everything_of_the_user_only(
    admin: SettingsApi, deps: SettingsDeps, world: dict[str, Person]
) -> None:
    conflict(deps)
    deps.account_conversations.trees[ALICE] = ConversationExport(settings={"a": 1})
    deps.account_conversations.trees[BOB] = ConversationExport(settings={"b": 1})
    deps.account_cache.keys |= {"pa:rate:alice:1", "pa:rate:alice_2:1", "pa:rate:bob:1"}
    deps.account_conversations.fail_deletes = 1

    with pytest.raises(DependencyUnavailable):  # partial failure: the client retries
        admin.account.delete(ALICE)
    assert admin.account.delete(ALICE).deleted
    assert admin.account.delete(ALICE).deleted  # and again: nothing left, nothing to do

    every = FactFilter(include_history=True, limit=1000)
    assert deps.facts.list_facts(ALICE, every) == []
    assert deps.contacts.list_persons(ALICE) == []
    assert deps.pending.list_pending(ALICE) == []
    assert ALICE not in deps.account_conversations.trees
    assert deps.account_cache.keys == {"pa:rate:alice_2:1", "pa:rate:bob:1"}
    assert [f.text for f in deps.facts.list_facts(BOB, every)] == ["Eva lives in Rome"]
    assert BOB in deps.account_conversations.trees


# -- the cached turn context -------------------------------------------------------------------
Body = Callable[[SettingsDeps, dict[str, Person]], dict[str, object]]
CHANGES: dict[str, Body] = {
    "/facts/edit": lambda deps, _: {
        "fact_id": str(fact_id(deps, ALICE, "I live in Basel")),
        "text": "I live in Bern",
    },
    "/facts/delete": lambda deps, _: {
        "fact_id": str(fact_id(deps, ALICE, "I am allergic to peanuts"))
    },
    "/persons/merge": lambda _, world: {
        "keep_id": world["son"].id,
        "absorb_id": world["colleague"].id,
    },
    "/persons/split": lambda deps, world: {
        "person_id": world["son"].id,
        "new_person": {"display_name": "Martin (nephew)"},
        "fact_ids": [str(fact_id(deps, ALICE, "Martin plays football on Saturdays"))],
    },
    "/persons/delete": lambda _, world: {"person_id": world["son"].id},
    "/pending/resolve": lambda deps, _: {"pending_id": conflict(deps).id, "choice": "take_new"},
    "/settings/assistant/update": lambda _, __: {"timezone": "Europe/Zurich"},
}


def run_path(admin: SettingsApi, path: str, body: dict[str, object]) -> None:
    operation = operation_for(path)
    operation.run(admin, ALICE, operation.request.model_validate(body))


@pytest.mark.parametrize("path", sorted(CHANGES))
def test_a_change_drops_the_cached_turn_context_of_its_user(
    admin: SettingsApi, deps: SettingsDeps, world: dict[str, Person], path: str
) -> None:
    body = CHANGES[path](deps, world)
    deps.cache.set(context_key(ALICE), b"context", 3600)
    deps.cache.set(context_key(BOB), b"context", 3600)
    run_path(admin, path, body)
    assert deps.cache.get(context_key(ALICE)) is None
    assert deps.cache.get(context_key(BOB)) == b"context"


def test_reads_and_refusals_keep_the_cached_turn_context(
    admin: SettingsApi, deps: SettingsDeps, world: dict[str, Person]
) -> None:
    deps.cache.set(context_key(ALICE), b"context", 3600)
    for path, body in [
        ("/facts/list", {}),
        ("/facts/search", {"query": "Basel"}),
        ("/facts/get", {"fact_id": str(fact_id(deps, ALICE, "I live in Basel"))}),
        ("/persons/list", {}),
        ("/pending/list", {}),
        ("/settings/assistant/get", {}),
        ("/export", {}),
    ]:
        run_path(admin, path, body)
    for path, body in [
        ("/facts/delete", {"fact_id": str(uuid.uuid4())}),
        ("/persons/delete", {"person_id": world["eva"].id}),  # Bob's
        ("/persons/merge", {"keep_id": world["son"].id, "absorb_id": world["eva"].id}),
        ("/pending/resolve", {"pending_id": str(uuid.uuid4()), "choice": "keep_old"}),
        ("/settings/assistant/update", {"timezone": "Mars/Olympus"}),
    ]:
        with pytest.raises(AppError):
            run_path(admin, path, body)
    assert deps.cache.get(context_key(ALICE)) == b"context"


# -- the API table and the adapters' pure parts ------------------------------------------------
def test_every_path_has_an_operation() -> None:
    assert sorted(OPERATIONS) == [
        "/account/delete",
        "/export",
        "/facts/delete",
        "/facts/edit",
        "/facts/get",
        "/facts/list",
        "/facts/restore",
        "/facts/search",
        "/facts/versions",
        "/pending/list",
        "/pending/resolve",
        "/persons/delete",
        "/persons/list",
        "/persons/merge",
        "/persons/split",
        "/persons/update",
        "/settings/assistant/get",
        "/settings/assistant/update",
        "/settings/hitl/get",
        "/settings/hitl/update",
        "/settings/strategies/forget",
        "/settings/strategies/forget_all",
        "/settings/strategies/list",
    ]
    assert operation_for("/facts/list/").request is ListFactsRequest
    assert operation_for("/account/delete").request is DeleteAccountRequest
    for path in ("/", "", "/facts", "/memory/facts/list", "/facts/list/x"):
        with pytest.raises(NotFound):
            operation_for(path)


def test_operations_run_through_the_table(admin: SettingsApi, world: dict[str, Person]) -> None:
    listing = operation_for("/persons/list")
    result = listing.run(admin, ALICE, listing.request.model_validate({}))
    assert len(result.model_dump()["persons"]) == 2


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
