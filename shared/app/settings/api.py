"""The user's control over their memory: what the ``memory`` function calls.

``SettingsApi`` serves the fact operations itself and hands persons, pending items, the
account, the assistant profile, the human-in-the-loop settings and the learned strategies
to its parts;
``operation_for(path)`` maps each POST path of the function to its request model and handler
(the table below is the API; docs/openapi.yaml mirrors it). Whatever changes facts, persons
or the profile drops the user's cached turn context (``invalidate_context``), so the next
turn reloads it.

Every call is scoped to the authenticated ``user_id``: another user's fact or person id is
answered exactly like a missing one (404 ``not_found``), and nothing is changed.
Retries: edits, merges and deletions either repeat harmlessly or answer 404/409 once done;
splits and pending answers derive their ids and task keys from the request, so a retry
after a partial failure completes the first attempt instead of doing it twice.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar
from uuid import UUID

from pydantic import BaseModel

from shared.app.settings.account import AccountAdmin
from shared.app.settings.hitl import HitlAdmin
from shared.app.settings.persons import PersonAdmin
from shared.app.settings.ports import SettingsPorts
from shared.app.settings.profile import ProfileAdmin
from shared.app.settings.strategies import StrategyAdmin
from shared.errors import NotFound
from shared.models.history_api import ForgetAllRequest, StrategyRef
from shared.models.memory import SELF, Fact, FactDraft, FactFilter, Source
from shared.models.memory_api import (
    DeleteAccountRequest,
    DeletedResponse,
    EditFactRequest,
    EditFactResponse,
    Empty,
    FactRef,
    FactResponse,
    FactsResponse,
    FactView,
    ListFactsRequest,
    ListPendingRequest,
    MergePersonsRequest,
    PersonRef,
    ResolvePendingRequest,
    RestoreFactRequest,
    ScoredFactView,
    SearchFactsRequest,
    SearchResponse,
    SplitPersonRequest,
    UpdateAssistantRequest,
    UpdatePersonRequest,
    VersionsResponse,
)
from shared.models.trust import UpdateHitlRequest
from shared.services.context_cache import invalidate_context
from shared.services.memory.pending import PendingItems
from shared.services.memory.ports import FactNotCurrent
from shared.services.memory.retrieval import Channels, RecallRequest, Retriever

USER_CORRECTION_CONFIDENCE = 1.0  # the user said so
SEARCH_POOL = 100  # semantic matches fetched when results are filtered by subject or type


class SettingsApi:
    def __init__(self, deps: SettingsPorts) -> None:
        self._deps = deps
        self.persons = PersonAdmin(deps)
        self.pending = PendingItems(deps)
        self.account = AccountAdmin(deps)
        self.profile = ProfileAdmin(deps)
        self.hitl = HitlAdmin(deps)
        self.strategies = StrategyAdmin(deps)

    # -- facts --------------------------------------------------------------------------------
    def list_facts(self, user_id: str, request: ListFactsRequest) -> FactsResponse:
        where = FactFilter(
            subject_id=self._subject(user_id, request.subject_id),
            fact_type=request.type,
            include_history=request.include_history,
            limit=request.limit,
        )
        facts = self._deps.facts.list_facts(user_id, where)
        return FactsResponse(facts=[FactView.of(fact) for fact in facts])

    def search_facts(self, user_id: str, request: SearchFactsRequest) -> SearchResponse:
        """The turn's hybrid retrieval over facts (no session summaries), optionally "as of"
        a past moment; filtered by subject and type after ranking."""
        subject = self._subject(user_id, request.subject_id)
        filtered = subject is not None or request.type is not None
        recall = Retriever.of(self._deps, Channels(sessions=False)).recall(
            user_id,
            RecallRequest(
                question=request.query,
                limit=SEARCH_POOL if filtered else request.limit,
                privacy_mode=request.privacy_mode,
                boost_subject_ids=[subject] if subject not in (None, SELF) else [],
                as_of=request.as_of,
            ),
            self._deps.clock.now(),
        )
        matching = [
            item
            for item in recall.items
            if (fact := item.fact) is not None
            and _about(fact, subject)
            and request.type in (None, fact.type)
        ]
        return SearchResponse(
            results=[
                ScoredFactView(
                    fact=FactView.of(item.fact), similarity=item.similarity, score=item.score
                )
                for item in matching[: request.limit]
                if item.fact is not None
            ]
        )

    def fact_versions(self, user_id: str, request: FactRef) -> VersionsResponse:
        versions = self._deps.facts.versions(user_id, str(request.fact_id))
        if not versions:
            raise NotFound("fact not found")
        return VersionsResponse(versions=[FactView.of(v) for v in versions])

    def restore_fact(self, user_id: str, request: RestoreFactRequest) -> EditFactResponse:
        """Make an earlier version current again, as a new version (history is kept)."""
        version = self._fact(user_id, request.version_id)
        latest = self._deps.facts.versions(user_id, version.id)[0]
        restored = self._deps.facts.restore_version(user_id, version.id, self._deps.clock.now())
        if restored is None:  # erased meanwhile
            raise NotFound("fact not found")
        invalidate_context(self._deps.cache, user_id)
        previous = self._deps.facts.get_fact(user_id, latest.id) or latest
        return EditFactResponse(fact=FactView.of(restored), previous=FactView.of(previous))

    def get_fact(self, user_id: str, request: FactRef) -> FactResponse:
        return FactResponse(fact=FactView.of(self._fact(user_id, request.fact_id)))

    def edit_fact(self, user_id: str, request: EditFactRequest) -> EditFactResponse:
        """Supersede the fact with the corrected text, re-embedded; the old one is history."""
        fact = self._fact(user_id, request.fact_id)
        if fact.valid_to is not None:
            raise FactNotCurrent("this version was superseded; edit the current one")
        changes: dict[str, Any] = {
            "text": request.text,
            "type": request.type or fact.type,
            "sensitivity": request.sensitivity or fact.sensitivity,
        }
        if "time_anchor" in request.model_fields_set:  # an absolute date replaces "next Friday"
            changes.update(time_anchor=request.time_anchor, temporal_marker=None)
        if all(getattr(fact, name) == value for name, value in changes.items()):
            return EditFactResponse(fact=FactView.of(fact), previous=FactView.of(fact))
        embedder = self._deps.embedder
        [vector] = embedder.embed([request.text])
        draft = FactDraft.model_validate(
            {
                **fact.model_dump(include=set(FactDraft.model_fields) - {"source"}),
                **changes,
                "confidence": USER_CORRECTION_CONFIDENCE,
                "source": Source(),
                "embedding": vector,
                "embedding_model": embedder.model_name,
                "idempotency_key": _correction_key(fact.id, changes),
            }
        )
        now = self._deps.clock.now()
        new = self._deps.facts.correct_fact(user_id, fact.id, draft, now)
        invalidate_context(self._deps.cache, user_id)
        previous = self._deps.facts.get_fact(user_id, fact.id)
        if new is None:  # a concurrent edit superseded it, or a deletion erased it
            if previous is None:
                raise NotFound("fact not found")
            raise FactNotCurrent("this fact was changed meanwhile; edit the current one")
        previous = previous or fact
        return EditFactResponse(fact=FactView.of(new), previous=FactView.of(previous))

    def delete_fact(self, user_id: str, request: FactRef) -> DeletedResponse:
        """Erase the fact and its history for good."""
        if not self._deps.facts.delete_fact(user_id, str(request.fact_id)):
            raise NotFound("fact not found")
        invalidate_context(self._deps.cache, user_id)
        return DeletedResponse()

    # -- helpers ------------------------------------------------------------------------------
    def _fact(self, user_id: str, fact_id: UUID) -> Fact:
        fact = self._deps.facts.get_fact(user_id, str(fact_id))
        if fact is None:
            raise NotFound("fact not found")
        return fact

    def _subject(self, user_id: str, subject: UUID | str | None) -> str | None:
        """``None`` (any), ``SELF``, or the id of one of the user's persons (else 404)."""
        if subject is None:
            return None
        if subject == SELF:
            return SELF
        person_id = str(subject)
        if self._deps.contacts.get_person(user_id, person_id) is None:
            raise NotFound("person not found")
        return person_id


def _about(fact: Fact, subject: str | None) -> bool:
    if subject is None:
        return True
    if subject == SELF:
        return fact.subject_entity_id is None
    return fact.subject_entity_id == subject


def _correction_key(fact_id: str, changes: dict[str, Any]) -> str:
    digest = hashlib.sha256(repr(sorted(changes.items())).encode()).hexdigest()[:32]
    return f"correction:{fact_id}:{digest}"


# -- the API: POST path -> request model and handler --------------------------------------------
R = TypeVar("R", bound=BaseModel)


@dataclass(frozen=True)
class Operation(Generic[R]):
    request: type[R]
    run: Callable[[SettingsApi, str, R], BaseModel]


def _op(request: type[R], run: Callable[[SettingsApi, str, R], BaseModel]) -> Operation[Any]:
    return Operation(request, run)


OPERATIONS: dict[str, Operation[Any]] = {
    "/facts/list": _op(ListFactsRequest, SettingsApi.list_facts),
    "/facts/search": _op(SearchFactsRequest, SettingsApi.search_facts),
    "/facts/get": _op(FactRef, SettingsApi.get_fact),
    "/facts/edit": _op(EditFactRequest, SettingsApi.edit_fact),
    "/facts/delete": _op(FactRef, SettingsApi.delete_fact),
    "/facts/versions": _op(FactRef, SettingsApi.fact_versions),
    "/facts/restore": _op(RestoreFactRequest, SettingsApi.restore_fact),
    "/persons/list": _op(Empty, lambda admin, user, _: admin.persons.list_persons(user)),
    "/persons/update": _op(UpdatePersonRequest, lambda a, u, r: a.persons.update(u, r)),
    "/persons/merge": _op(MergePersonsRequest, lambda a, u, r: a.persons.merge(u, r)),
    "/persons/split": _op(SplitPersonRequest, lambda a, u, r: a.persons.split(u, r)),
    "/persons/delete": _op(PersonRef, lambda a, u, r: a.persons.delete(u, r)),
    "/pending/list": _op(ListPendingRequest, lambda a, u, r: a.pending.list_items(u, r)),
    "/pending/resolve": _op(ResolvePendingRequest, lambda a, u, r: a.pending.resolve(u, r)),
    "/settings/assistant/get": _op(Empty, lambda admin, user, _: admin.profile.get(user)),
    "/settings/assistant/update": _op(
        UpdateAssistantRequest, lambda a, u, r: a.profile.update(u, r)
    ),
    "/settings/hitl/get": _op(Empty, lambda admin, user, _: admin.hitl.get(user)),
    "/settings/hitl/update": _op(UpdateHitlRequest, lambda a, u, r: a.hitl.update(u, r)),
    "/settings/strategies/list": _op(Empty, lambda admin, user, _: admin.strategies.list(user)),
    "/settings/strategies/forget": _op(StrategyRef, lambda a, u, r: a.strategies.forget(u, r)),
    "/settings/strategies/forget_all": _op(
        ForgetAllRequest, lambda a, u, r: a.strategies.forget_all(u, r)
    ),
    "/export": _op(Empty, lambda admin, user, _: admin.account.export(user)),
    "/account/delete": _op(DeleteAccountRequest, lambda a, u, _: a.account.delete(u)),
}


def operation_for(path: str) -> Operation[Any]:
    operation = OPERATIONS.get(path.rstrip("/"))
    if operation is None:
        raise NotFound(f"no operation at {path!r}; see docs/openapi.yaml")
    return operation
