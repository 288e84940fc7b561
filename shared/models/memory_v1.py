"""Wire models of the memory function's ``/v1`` resources (docs/api.md, docs/openapi.yaml)
that the RPC-era models in ``memory_api`` lacked: pages with ``next_page_token``, the
bodies of PATCH (the fields an ``update_mask`` may name, and the ``etag`` read) and of the
custom methods whose resource is in the path, and the settings singletons with their etag.
"""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from pydantic import Field, model_validator

from shared.models.base import Strict, digest_of
from shared.models.domain import AssistantProfile
from shared.models.history_api import StrategyView
from shared.models.memory import FactType, PersonRole, Sensitivity
from shared.models.memory_api import (
    Choice,
    DescriptorKey,
    DescriptorValue,
    FactText,
    FactView,
    Name,
    PendingView,
    PersonFields,
    PersonView,
    UpdateAssistantRequest,
)
from shared.models.trust import HitlMode, HitlView

Etag = str | None  # the etag read; None: an unconditional write

ETAG_FIELD = Field(default=None, min_length=1, max_length=64)


# -- pages (AIP-158): next_page_token is empty on the last page -------------------------------
class FactList(Strict):
    facts: list[FactView]
    next_page_token: str


class VersionList(Strict):
    versions: list[FactView]  # the latest first
    next_page_token: str


class PersonList(Strict):
    persons: list[PersonView]
    next_page_token: str


class PendingList(Strict):
    pending_items: list[PendingView]
    next_page_token: str


class StrategyList(Strict):
    strategies: list[StrategyView]  # most recently run first
    next_page_token: str


# -- PATCH bodies (AIP-134): the fields the mask may name, and the etag read --------------------
class FactPatch(Strict):
    text: FactText | None = None
    type: FactType | None = None
    sensitivity: Sensitivity | None = None
    # When masked (null included) it replaces the anchor, and the relative marker is dropped.
    time_anchor: datetime | None = None
    etag: Etag = ETAG_FIELD


class PersonPatch(Strict):
    display_name: Name | None = None
    role_to_user: PersonRole | None = None
    aliases: list[Name] | None = Field(default=None, max_length=20)
    descriptors: dict[DescriptorKey, DescriptorValue] | None = Field(default=None, max_length=20)
    etag: Etag = ETAG_FIELD


class AssistantPatch(UpdateAssistantRequest):
    etag: Etag = ETAG_FIELD


class HitlPatch(Strict):
    """Pin a mode, or ``null`` to follow the trust level again; nothing else is writable."""

    pinned_mode: HitlMode | None = None
    etag: Etag = ETAG_FIELD


# -- custom methods on a resource named in the path (AIP-136) -----------------------------------
class MergeRequest(Strict):
    """``POST /v1/persons/{person}:merge``: ``{person}`` is kept, ``absorb_id`` merged in."""

    absorb_id: UUID  # the kept person itself: 409 conflict (nothing to merge)


class SplitRequest(Strict):
    new_person: PersonFields
    fact_ids: list[UUID] = Field(min_length=1, max_length=500)

    @model_validator(mode="after")
    def _distinct(self) -> SplitRequest:
        if len(set(self.fact_ids)) != len(self.fact_ids):
            raise ValueError("fact_ids must be distinct")
        return self


class PendingAnswer(Strict):
    choice: Choice
    person_id: UUID | None = None  # with choice "person" only


# -- settings singletons (AIP-156) ---------------------------------------------------------
class AssistantSettings(AssistantProfile):
    etag: str

    @classmethod
    def of(cls, profile: AssistantProfile) -> AssistantSettings:
        editable = profile.model_dump(mode="json", exclude={"updated_at"})
        return cls.model_validate({**profile.model_dump(), "etag": digest_of(editable)})


class HitlSettings(HitlView):
    etag: str  # of the pinned mode: the counters are the product's, not the user's

    @classmethod
    def of(cls, view: HitlView) -> HitlSettings:
        return cls.model_validate({**view.model_dump(), "etag": digest_of(view.pinned_mode)})
