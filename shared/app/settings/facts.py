"""The user's facts as ``/v1/facts`` resources: list (filtered, keyset-paged), get, PATCH,
DELETE, versions, ``:restore`` and ``:search``.

Facts are versioned: a PATCH supersedes the fact with a new version, which has a new id,
and answers that version; the edited one stays as history (``/versions``) and can no
longer be edited (409 ``fact_not_current``). An etag names the version read: a stale one
answers 412 ``stale_etag`` and nothing changes. The store's correction refuses a version
that is no longer current in its own transaction, so two devices racing past the etag check
still cannot both write: the second is answered 412 too.
"""

from __future__ import annotations

import hashlib
from typing import Any

from shared.app.settings.needs import SettingsPorts
from shared.app.settings.paged import FACTS, VERSIONS, Limits, Paging, instant, keyset_page
from shared.app.settings.queries import FactsQuery, masked, parse_filter
from shared.errors import BadRequest, NotFound, PreconditionFailed
from shared.models.memory import SELF, Fact, FactDraft, FactFilter, FactPosition, Source
from shared.models.memory_api import (
    DeletedResponse,
    FactView,
    ListFactsRequest,
    ScoredFactView,
    SearchFactsRequest,
    SearchResponse,
    fact_etag,
)
from shared.models.memory_v1 import FactList, FactPatch, VersionList
from shared.rest import etags
from shared.rest.paging import PageQuery, scope_of
from shared.rest.routes import validated
from shared.services.context_cache import invalidate_context
from shared.services.memory.needs import FactNotCurrent
from shared.services.memory.retrieval import Channels, RecallRequest, Retriever

USER_CORRECTION_CONFIDENCE = 1.0  # the user said so
SEARCH_POOL = 100  # semantic matches fetched when results are filtered by subject or type
FILTER_FIELDS = frozenset({"subject_id", "type"})
EDITABLE = frozenset({"text", "type", "sensitivity", "time_anchor"})


class FactAdmin:
    def __init__(self, deps: SettingsPorts) -> None:
        self._deps = deps

    def list(self, user_id: str, query: FactsQuery) -> FactList:
        terms = validated(ListFactsRequest, parse_filter(query.filter, FILTER_FIELDS), "filter")
        subject = None if terms.subject_id is None else str(terms.subject_id)
        where = FactFilter(
            subject_id=self.subject(user_id, subject),
            fact_type=terms.type,
            include_history=query.show_history,
        )
        scope = scope_of("facts", **where.model_dump(mode="json"))
        paging = self._paging(user_id, scope, query, FACTS)
        after = None
        if paging.position is not None:
            created_at, fact_id = paging.position
            after = FactPosition(created_at=created_at, id=fact_id)
        page = where.model_copy(update={"limit": paging.size + 1, "after": after})
        facts = self._deps.facts.list_facts(user_id, page)
        shown = facts[: paging.size]
        last = [instant(shown[-1].created_at), shown[-1].id] if len(facts) > paging.size else None
        return FactList(
            facts=[FactView.of(f) for f in shown], next_page_token=paging.next_token(last)
        )

    def search(self, user_id: str, request: SearchFactsRequest) -> SearchResponse:
        """The turn's hybrid retrieval over facts (no session summaries), optionally "as of"
        a past moment; filtered by subject and type after ranking. A ranked top ``limit``
        (at most 50), not a list: it has no pages."""
        subject = self.subject(
            user_id, None if request.subject_id is None else str(request.subject_id)
        )
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
            ScoredFactView(fact=FactView.of(fact), similarity=item.similarity, score=item.score)
            for item in recall.items
            if (fact := item.fact) is not None
            and _about(fact, subject)
            and request.type in (None, fact.type)
        ]
        return SearchResponse(results=matching[: request.limit])

    def get(self, user_id: str, fact_id: str) -> FactView:
        return FactView.of(self.fact(user_id, fact_id))

    def versions(self, user_id: str, fact_id: str, query: PageQuery) -> VersionList:
        versions = self._deps.facts.versions(user_id, fact_id)
        if not versions:
            raise NotFound("fact not found")
        paging = self._paging(user_id, scope_of("versions", fact=versions[-1].id), query, VERSIONS)
        page = keyset_page(versions, _version_key, paging, newest_first=True)
        return VersionList(
            versions=[FactView.of(v) for v in page.items], next_page_token=page.next_page_token
        )

    def restore(self, user_id: str, version_id: str) -> FactView:
        """Make an earlier version current again, as a new version (history is kept)."""
        version = self.fact(user_id, version_id)
        restored = self._deps.facts.restore_version(user_id, version.id, self._deps.clock.now())
        if restored is None:  # erased meanwhile
            raise NotFound("fact not found")
        invalidate_context(self._deps.cache, user_id)
        return FactView.of(restored)

    def patch(
        self, user_id: str, fact_id: str, body: FactPatch, mask: str | None, if_match: str | None
    ) -> FactView:
        """Supersede the fact with the masked fields changed, re-embedded; the old one is
        history. Answers the new current version (a new id)."""
        changes = masked(body, mask, EDITABLE)
        for name in sorted(changes.keys() - {"time_anchor"}):
            if changes[name] is None:
                raise BadRequest(f"{name}: cannot be null")
        fact = self.fact(user_id, fact_id)
        expected = etags.wanted(if_match, body.etag)
        etags.check(expected, fact_etag(fact))
        if fact.valid_to is not None:
            raise FactNotCurrent("this version was superseded; edit the current one")
        if "time_anchor" in changes:  # an absolute date replaces "next Friday"
            changes["temporal_marker"] = None
        if all(getattr(fact, name) == value for name, value in changes.items()):
            return FactView.of(fact)
        new = self._deps.facts.correct_fact(
            user_id, fact.id, self._correction(fact, changes), self._deps.clock.now()
        )
        invalidate_context(self._deps.cache, user_id)
        if new is None:  # a concurrent edit superseded it, or a deletion erased it
            if self._deps.facts.get_fact(user_id, fact.id) is None:
                raise NotFound("fact not found")
            if expected is not None:
                raise PreconditionFailed("the fact changed since it was read; read it again")
            raise FactNotCurrent("this fact was changed meanwhile; edit the current one")
        return FactView.of(new)

    def delete(self, user_id: str, fact_id: str, if_match: str | None) -> DeletedResponse:
        """Erase the fact and its whole history for good. The etag is checked just before;
        an edit slipping in between is erased with the rest, as a delete a moment later
        would have erased it (nothing the user kept is lost that they did not delete)."""
        fact = self.fact(user_id, fact_id)
        etags.check(etags.wanted(if_match), fact_etag(fact))
        if not self._deps.facts.delete_fact(user_id, fact.id):
            raise NotFound("fact not found")
        invalidate_context(self._deps.cache, user_id)
        return DeletedResponse()

    # -- helpers ------------------------------------------------------------------------------
    def fact(self, user_id: str, fact_id: str) -> Fact:
        fact = self._deps.facts.get_fact(user_id, fact_id)
        if fact is None:
            raise NotFound("fact not found")
        return fact

    def subject(self, user_id: str, subject: str | None) -> str | None:
        """``None`` (any), ``SELF``, or the id of one of the user's persons (else 404)."""
        if subject is None or subject == SELF:
            return subject
        person = self._deps.contacts.get_person(user_id, subject)
        if person is None:
            raise NotFound("person not found")
        return person.id

    def _paging(self, user_id: str, scope: str, query: PageQuery, limits: Limits) -> Paging:
        tokens, now = self._deps.page_tokens, self._deps.clock.now()
        return Paging.of(tokens, user_id, scope, query, limits, now)

    def _correction(self, fact: Fact, changes: dict[str, Any]) -> FactDraft:
        embedder = self._deps.embedder
        text = changes.get("text", fact.text)
        [vector] = embedder.embed([text])
        return FactDraft.model_validate(
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


def _about(fact: Fact, subject: str | None) -> bool:
    if subject is None:
        return True
    if subject == SELF:
        return fact.subject_entity_id is None
    return fact.subject_entity_id == subject


def _version_key(fact: Fact) -> tuple[str, str]:
    return instant(fact.created_at), fact.id


def _correction_key(fact_id: str, changes: dict[str, Any]) -> str:
    digest = hashlib.sha256(repr(sorted(changes.items())).encode()).hexdigest()[:32]
    return f"correction:{fact_id}:{digest}"
