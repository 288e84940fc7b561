"""The persons the user mentions as ``/v1/persons``: list, get, PATCH, DELETE, ``:merge``
and ``:split``.

A PATCH names the version it read by etag (412 ``stale_etag`` if stale) and writes with a
compare-and-set on the person's ``updated_at``, so a change that lands between the check
and the write (another device, an extraction learning an alias) is never overwritten: a
conditional PATCH then answers 412, an unconditional one merges its fields into the new
version. A split creates the new person under an id derived from (user, person, fact
ids), and accepts facts already moved to it, so a retry after a partial failure finishes
the same split instead of creating a second person.
"""

from __future__ import annotations

import uuid

from shared.app.settings.needs import SettingsPorts
from shared.app.settings.paged import PERSONS, Paging, instant, keyset_page
from shared.app.settings.queries import masked
from shared.errors import BadRequest, Conflict, NotFound, PreconditionFailed
from shared.models.memory import Person
from shared.models.memory_api import (
    DeletedResponse,
    PersonView,
    SplitResponse,
    UpdatePersonRequest,
    person_etag,
)
from shared.models.memory_v1 import MergeRequest, PersonList, PersonPatch, SplitRequest
from shared.rest import etags
from shared.rest.paging import PageQuery, scope_of
from shared.rest.routes import validated
from shared.services.context_cache import invalidate_context

_SPLIT_NAMESPACE = uuid.UUID("5b0c7c9e-2f1e-4a57-9a51-6f1d3c0e8a42")
EDITABLE = frozenset({"display_name", "role_to_user", "aliases", "descriptors"})
UNCONDITIONAL_TRIES = 3  # an unconditional PATCH re-reads when a write slipped in between


def split_person_id(user_id: str, person_id: str, fact_ids: list[str]) -> str:
    name = "\x1f".join([user_id, person_id, *sorted(fact_ids)])
    return str(uuid.uuid5(_SPLIT_NAMESPACE, name))


class PersonAdmin:
    def __init__(self, deps: SettingsPorts) -> None:
        self._deps = deps

    def list(self, user_id: str, query: PageQuery) -> PersonList:
        paging = Paging.of(
            self._deps.page_tokens, user_id, scope_of("persons"), query, PERSONS,
            self._deps.clock.now(),
        )  # fmt: skip
        persons = self._deps.contacts.list_persons(user_id)
        page = keyset_page(persons, lambda p: (instant(p.created_at), p.id), paging)
        return PersonList(
            persons=[PersonView.of(p) for p in page.items], next_page_token=page.next_page_token
        )

    def get(self, user_id: str, person_id: str) -> PersonView:
        return PersonView.of(self.person(user_id, person_id))

    def patch(
        self,
        user_id: str,
        person_id: str,
        body: PersonPatch,
        mask: str | None,
        if_match: str | None,
    ) -> PersonView:
        changes = masked(body, mask, EDITABLE)
        validated(UpdatePersonRequest, {"person_id": person_id, **changes}, "body")  # no nulls
        expected = etags.wanted(if_match, body.etag)
        for _ in range(UNCONDITIONAL_TRIES):
            person = self.person(user_id, person_id)
            etags.check(expected, person_etag(person))
            updated = Person.model_validate({**person.model_dump(), **changes})
            if self._deps.contacts.update_person(updated, unchanged_since=person.updated_at):
                invalidate_context(self._deps.cache, user_id)
                return PersonView.of(self.person(user_id, person_id))
            if expected is not None:
                self.person(user_id, person_id)  # 404 if it was deleted meanwhile
                raise PreconditionFailed("the person changed since it was read; read it again")
        raise Conflict("the person keeps changing; try again")

    def merge(self, user_id: str, keep_id: str, request: MergeRequest) -> PersonView:
        """Move the absorbed person's facts and names to the kept one; delete the absorbed."""
        absorb_id = str(request.absorb_id)
        keep_id = self.person(user_id, keep_id).id
        if keep_id == absorb_id:
            raise Conflict("a person cannot be merged into itself")
        self.person(user_id, absorb_id)
        if not self._deps.contacts.merge_persons(user_id, keep_id, absorb_id):
            raise NotFound("person not found")
        invalidate_context(self._deps.cache, user_id)
        return PersonView.of(self.person(user_id, keep_id))

    def split(self, user_id: str, person_id: str, request: SplitRequest) -> SplitResponse:
        """Create a new person from ``new_person`` and move the chosen facts to it."""
        source = self.person(user_id, person_id)
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

    def delete(self, user_id: str, person_id: str, if_match: str | None) -> DeletedResponse:
        """Delete the person and every fact about them (after the etag check: a rename in
        between is deleted with the rest, as a delete a moment later would have)."""
        person = self.person(user_id, person_id)
        etags.check(etags.wanted(if_match), person_etag(person))
        if not self._deps.contacts.delete_person(user_id, person.id):
            raise NotFound("person not found")
        invalidate_context(self._deps.cache, user_id)
        return DeletedResponse()

    def person(self, user_id: str, person_id: str) -> Person:
        person = self._deps.contacts.get_person(user_id, person_id)
        if person is None:
            raise NotFound("person not found")
        return person
