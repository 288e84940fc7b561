"""Facts held back for the user's answer: which person is meant, or which fact holds.

Answering stores the held facts through ``FactStore.apply_extraction`` under the task key
``pending:<item id>`` (so however often the answer is retried or raced, the facts are
written at most once, in one transaction) and then marks the item resolved, which happens
exactly once. A retry after the write but before the resolution completes the resolution.
"""

from __future__ import annotations

import uuid
from contextlib import suppress

from shared.conversation.text import fold
from shared.errors import BadRequest, NotFound
from shared.models.domain import ResolvedEntity
from shared.models.memory import ExtractionChanges, FactDraft, PendingItem, Person, Supersession
from shared.models.memory_api import (
    CONFLICT_CHOICES,
    DISAMBIGUATION_CHOICES,
    FactView,
    HeldFact,
    PendingView,
    PersonView,
    ResolvePendingRequest,
    ResolveResponse,
)
from shared.services.context_cache import invalidate_context
from shared.services.memory.needs import MemoryPorts, PendingNotOpen

_PROPOSED_NAMESPACE = uuid.UUID("0f6f7a3c-8d0e-4c1b-b0a4-2c9d5e7f1a63")


def pending_task_key(item_id: str) -> str:
    return f"pending:{item_id}"


class PendingItems:
    def __init__(self, deps: MemoryPorts) -> None:
        self._deps = deps

    def views(self, user_id: str, items: list[PendingItem]) -> list[PendingView]:
        if not items:
            return []
        persons = {person.id: person for person in self._deps.contacts.list_persons(user_id)}
        return [self._view(user_id, item, persons) for item in items]

    def resolve(self, user_id: str, request: ResolvePendingRequest) -> ResolveResponse:
        item = self._deps.pending.get_pending(user_id, str(request.pending_id))
        if item is None:
            raise NotFound("pending item not found")
        if item.resolved_at is not None:
            raise PendingNotOpen("this item was answered already")
        allowed = CONFLICT_CHOICES if item.kind == "fact_conflict" else DISAMBIGUATION_CHOICES
        if request.choice not in allowed:
            raise BadRequest(f"choice: a {item.kind} item takes one of {list(allowed)}")
        changes = self._changes(user_id, item, request)
        now = self._deps.clock.now()
        wrote = self._deps.facts.apply_extraction(pending_task_key(item.id), user_id, changes, now)
        resolved = self._deps.pending.resolve_pending(user_id, item.id, now)
        invalidate_context(self._deps.cache, user_id)
        if resolved is None and not wrote:
            raise PendingNotOpen("this item was answered already")
        stored = len(changes.new_facts) + len(changes.supersessions) if wrote else 0
        [view] = self.views(user_id, [resolved or item])
        return ResolveResponse(item=view, stored=stored)

    def settle_mention(self, user_id: str, chat_id: str, chosen: ResolvedEntity) -> int:
        """Answer the open "which X?" items held in this chat for the chosen entity's
        mention, as the user did in the chat; returns how many it settled."""
        settled = 0
        for item in self._deps.pending.list_pending(user_id, chat_id):
            if item.kind != "disambiguation" or item.resolved_at is not None:
                continue
            if fold(item.mention or "") != fold(chosen.mention):
                continue
            request = ResolvePendingRequest(
                pending_id=uuid.UUID(item.id),
                choice="someone_else" if chosen.new_person else "person",
                person_id=uuid.UUID(chosen.person_id) if chosen.person_id else None,
            )
            with suppress(PendingNotOpen):  # answered meanwhile (another device, the settings)
                self.resolve(user_id, request)
                settled += 1
        return settled

    # -- what each answer stores --------------------------------------------------------------
    def _changes(
        self, user_id: str, item: PendingItem, request: ResolvePendingRequest
    ) -> ExtractionChanges:
        if request.choice == "keep_old":
            return ExtractionChanges()
        if request.choice == "keep_both":
            return ExtractionChanges(new_facts=item.facts)
        if request.choice == "take_new":
            return self._take_new(user_id, item)
        if request.choice == "person":
            person = self._deps.contacts.get_person(user_id, str(request.person_id))
            if person is None:
                raise NotFound("person not found")
            return ExtractionChanges(new_facts=_about(item.facts, person))
        person = _proposed(user_id, item)
        return ExtractionChanges(new_persons=[person], new_facts=_about(item.facts, person))

    def _take_new(self, user_id: str, item: PendingItem) -> ExtractionChanges:
        old_id = item.conflicting_fact_id
        old = self._deps.facts.get_fact(user_id, old_id) if old_id else None
        if old is None or old.valid_to is not None or not item.facts:
            # The old fact was edited or erased meanwhile: nothing left to supersede.
            return ExtractionChanges(new_facts=item.facts)
        first, *rest = item.facts
        return ExtractionChanges(
            supersessions=[Supersession(old_fact_id=old.id, replacement=first)], new_facts=rest
        )

    def _view(self, user_id: str, item: PendingItem, persons: dict[str, Person]) -> PendingView:
        conflicting = None
        if item.conflicting_fact_id:
            conflicting = self._deps.facts.get_fact(user_id, item.conflicting_fact_id)
        proposed = item.proposed_person
        return PendingView(
            id=item.id,
            kind=item.kind,
            chat_id=item.chat_id,
            mention=item.mention,
            choices=list(
                CONFLICT_CHOICES if item.kind == "fact_conflict" else DISAMBIGUATION_CHOICES
            ),
            candidates=[PersonView.of(persons[c]) for c in item.candidate_ids if c in persons],
            proposed_person=PersonView.of(proposed) if proposed else None,
            conflicting_fact=FactView.of(conflicting) if conflicting else None,
            facts=[
                HeldFact(
                    text=fact.text,
                    type=fact.type,
                    sensitivity=fact.sensitivity,
                    temporal_marker=fact.temporal_marker,
                )
                for fact in item.facts
            ],
            created_at=item.created_at,
            resolved_at=item.resolved_at,
        )


def _about(facts: list[FactDraft], person: Person) -> list[FactDraft]:
    """The held facts, attributed to the person the user chose."""
    return [
        fact.model_copy(
            update={"subject_entity_id": person.id, "relation_to_user": person.role_to_user}
        )
        for fact in facts
    ]


def _proposed(user_id: str, item: PendingItem) -> Person:
    """For "someone else": the person extraction proposed, or one named by the mention,
    under an id derived from the item so a retried answer creates the same person."""
    proposed = item.proposed_person
    if proposed is not None and proposed.user_id == user_id:
        return proposed
    return Person(
        id=str(uuid.uuid5(_PROPOSED_NAMESPACE, item.id)),
        user_id=user_id,
        display_name=(item.mention or "Someone")[:120],
    )
