"""The persons the user mentions: list, rename/update, merge, split, delete.

A split creates the new person under an id derived from (user, person, fact ids), and
accepts facts already moved to it, so a retry after a partial failure finishes the same
split instead of creating a second person.
"""

from __future__ import annotations

import uuid

from shared.errors import BadRequest, Conflict, NotFound
from shared.models.memory import Person
from shared.models.memory_api import (
    DeletedResponse,
    MergePersonsRequest,
    PersonRef,
    PersonResponse,
    PersonsResponse,
    PersonView,
    SplitPersonRequest,
    SplitResponse,
    UpdatePersonRequest,
)
from shared.services.context_cache import invalidate_context
from shared.services.memory.ports import MemoryPorts

_SPLIT_NAMESPACE = uuid.UUID("5b0c7c9e-2f1e-4a57-9a51-6f1d3c0e8a42")


def split_person_id(user_id: str, person_id: str, fact_ids: list[str]) -> str:
    name = "\x1f".join([user_id, person_id, *sorted(fact_ids)])
    return str(uuid.uuid5(_SPLIT_NAMESPACE, name))


class PersonAdmin:
    def __init__(self, deps: MemoryPorts) -> None:
        self._deps = deps

    def list_persons(self, user_id: str) -> PersonsResponse:
        persons = self._deps.contacts.list_persons(user_id)
        return PersonsResponse(persons=[PersonView.of(person) for person in persons])

    def update(self, user_id: str, request: UpdatePersonRequest) -> PersonResponse:
        person = self._person(user_id, str(request.person_id))
        changes = request.model_dump(include=request.model_fields_set - {"person_id"})
        updated = Person.model_validate({**person.model_dump(), **changes})
        if not self._deps.contacts.update_person(updated):
            raise NotFound("person not found")
        stored = self._deps.contacts.get_person(user_id, person.id) or updated
        return PersonResponse(person=PersonView.of(stored))

    def merge(self, user_id: str, request: MergePersonsRequest) -> PersonResponse:
        """Move the absorbed person's facts and names to the kept one; delete the absorbed."""
        keep_id, absorb_id = str(request.keep_id), str(request.absorb_id)
        self._person(user_id, keep_id)
        if keep_id == absorb_id:
            raise Conflict("a person cannot be merged into itself")
        self._person(user_id, absorb_id)
        if not self._deps.contacts.merge_persons(user_id, keep_id, absorb_id):
            raise NotFound("person not found")
        invalidate_context(self._deps.cache, user_id)
        return PersonResponse(person=PersonView.of(self._person(user_id, keep_id)))

    def split(self, user_id: str, request: SplitPersonRequest) -> SplitResponse:
        """Create a new person from ``new_person`` and move the chosen facts to it."""
        source = self._person(user_id, str(request.person_id))
        fact_ids = [str(fact_id) for fact_id in request.fact_ids]
        new_id = split_person_id(user_id, source.id, fact_ids)
        to_move: list[str] = []
        for fact_id in fact_ids:
            fact = self._deps.facts.get_fact(user_id, fact_id)
            if fact is None:
                raise NotFound(f"fact {fact_id} not found")
            if fact.subject_entity_id == source.id:
                to_move.append(fact_id)
            elif fact.subject_entity_id != new_id:  # on new_id already: a retried split
                raise BadRequest(f"fact {fact_id} is not about person {source.id}")
        person = Person(
            id=new_id,
            user_id=user_id,
            avatar_id=source.avatar_id,
            **request.new_person.model_dump(),
        )
        self._deps.contacts.add_person(person)  # idempotent on the id
        if to_move:
            self._deps.facts.reassign_facts(user_id, to_move, new_id)
        invalidate_context(self._deps.cache, user_id)
        stored = self._deps.contacts.get_person(user_id, new_id) or person
        return SplitResponse(person=PersonView.of(stored), moved=len(fact_ids))

    def delete(self, user_id: str, request: PersonRef) -> DeletedResponse:
        """Delete the person and every fact about them."""
        if not self._deps.contacts.delete_person(user_id, str(request.person_id)):
            raise NotFound("person not found")
        invalidate_context(self._deps.cache, user_id)
        return DeletedResponse()

    def _person(self, user_id: str, person_id: str) -> Person:
        person = self._deps.contacts.get_person(user_id, person_id)
        if person is None:
            raise NotFound("person not found")
        return person
