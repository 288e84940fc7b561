"""Wire models of the ``memory`` function (the settings UI), mirrored in docs/openapi.yaml.

Requests refuse unknown fields and bound every length; ids of facts, persons and pending
items are UUIDs. Responses are views of the domain records in ``shared.models.memory``
(never the embeddings, never another user's rows).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal
from uuid import UUID

from pydantic import AwareDatetime, Field, StrictBool, StringConstraints, model_validator

from shared.models.agent_data import EmailAddress
from shared.models.base import Strict, digest_of
from shared.models.history_api import ExecutionView
from shared.models.memory import (
    Durability,
    EndedBy,
    Fact,
    FactType,
    PendingKind,
    Person,
    PersonRole,
    Scope,
    Sensitivity,
)
from shared.models.money import Currency
from shared.models.wire import CHAT_ID_PATTERN, MessageKind

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=120)]
DescriptorKey = Annotated[str, StringConstraints(min_length=1, max_length=40)]
DescriptorValue = Annotated[str, StringConstraints(min_length=1, max_length=200)]
FactText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
RuleText = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]
Choice = Literal["keep_old", "take_new", "keep_both", "person", "someone_else"]
CONFLICT_CHOICES: tuple[Choice, ...] = ("keep_old", "take_new", "keep_both")
DISAMBIGUATION_CHOICES: tuple[Choice, ...] = ("person", "someone_else")


# -- requests ---------------------------------------------------------------------------------
class ListFactsRequest(Strict):
    """The terms of ``GET /v1/facts``'s filter (``shared.app.settings.queries``)."""

    subject_id: UUID | Literal["self"] | None = None  # a person, or "self" for the user
    type: FactType | None = None


class SearchFactsRequest(Strict):
    query: str = Field(min_length=1, max_length=1000)
    limit: int = Field(default=10, ge=1, le=50)
    subject_id: UUID | Literal["self"] | None = None
    type: FactType | None = None
    privacy_mode: bool = False  # hide facts of sensitivity "high"
    # What memory held then: the versions valid at that moment (bi-temporal columns), not
    # yet expired; with a time zone. Omitted: now.
    as_of: AwareDatetime | None = None


class PersonFields(Strict):
    display_name: Name
    role_to_user: PersonRole = "other"
    aliases: list[Name] = Field(default_factory=list, max_length=20)
    descriptors: dict[DescriptorKey, DescriptorValue] = Field(default_factory=dict, max_length=20)


class UpdatePersonRequest(Strict):
    person_id: UUID
    display_name: Name | None = None
    role_to_user: PersonRole | None = None
    aliases: list[Name] | None = Field(default=None, max_length=20)
    descriptors: dict[DescriptorKey, DescriptorValue] | None = Field(default=None, max_length=20)

    @model_validator(mode="after")
    def _something_to_change(self) -> UpdatePersonRequest:
        if len(self.model_fields_set - {"person_id"}) == 0:
            raise ValueError("nothing to change")
        if "display_name" in self.model_fields_set and self.display_name is None:
            raise ValueError("display_name cannot be null")
        return self


class ListPendingRequest(Strict):
    chat_id: str | None = Field(default=None, pattern=CHAT_ID_PATTERN)


class ResolvePendingRequest(Strict):
    pending_id: UUID
    choice: Choice
    person_id: UUID | None = None  # with choice "person" only

    @model_validator(mode="after")
    def _person_with_choice(self) -> ResolvePendingRequest:
        if (self.choice == "person") != (self.person_id is not None):
            raise ValueError("person_id is required with choice 'person' and only with it")
        return self


class UpdateAssistantRequest(Strict):
    """The assistant profile's fields to change (any subset); the others keep their value.

    Bounds are ``AssistantProfile``'s; ``timezone`` is checked against the IANA database
    by the service (422), not here. Only ``language`` ("the user's language") and
    ``currency`` (none) and ``email`` (none) take null.
    """

    persona_name: str | None = Field(default=None, min_length=1, max_length=40)
    tone: str | None = Field(default=None, max_length=200)
    language: str | None = Field(default=None, pattern=r"^[a-z]{2}$")
    timezone: str | None = Field(default=None, min_length=1, max_length=64)
    presentation_rules: list[RuleText] | None = Field(default=None, max_length=10)
    privacy_mode: StrictBool | None = None
    currency: Currency | None = None
    email: EmailAddress | None = None

    @model_validator(mode="after")
    def _null_only_for_language(self) -> UpdateAssistantRequest:
        for name in sorted(self.model_fields_set - {"language", "currency", "email"}):
            if getattr(self, name) is None:
                raise ValueError(f"{name} cannot be null")
        return self


# -- views ------------------------------------------------------------------------------------
class SourceView(Strict):
    chat_id: str | None = None
    turn_id: str | None = None
    message_id: str | None = None


class FactView(Strict):
    id: str
    subject_id: str | None  # None: about the user
    relation_to_user: str
    text: str
    type: FactType
    confidence: float
    sensitivity: Sensitivity
    scope: Scope
    durability: Durability
    temporal_marker: str | None
    time_anchor: datetime | None
    current: bool
    valid_from: datetime
    valid_to: datetime | None
    source: SourceView
    seen_count: int
    last_seen_at: datetime
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None  # leaves retrieval then (durability short, medium, long)
    ended_by: EndedBy | None  # a closed version: superseded (an edit, a restore) or expired
    etag: str  # of what the user may change, and of being current (AIP-154)

    @classmethod
    def of(cls, fact: Fact) -> FactView:
        same = fact.model_dump(include=set(cls.model_fields) & set(Fact.model_fields))
        return cls.model_validate(
            {
                **same,
                "subject_id": fact.subject_entity_id,
                "current": fact.valid_to is None,
                "etag": fact_etag(fact),
            }
        )


def fact_etag(fact: Fact) -> str:
    """Changes with an edit (a superseded version is no longer current) or a move to another
    person; not with a sighting (``seen_count``), which the user cannot edit."""
    editable = (fact.text, fact.type, fact.sensitivity, fact.time_anchor)
    return digest_of(fact.id, *editable, fact.subject_entity_id, fact.valid_to is None)


class PersonView(Strict):
    id: str
    display_name: str
    role_to_user: PersonRole
    aliases: list[str]
    descriptors: dict[str, str]
    created_at: datetime | None
    updated_at: datetime | None
    etag: str  # of the names, role and descriptors (AIP-154)

    @classmethod
    def of(cls, person: Person) -> PersonView:
        fields = person.model_dump(exclude={"user_id", "avatar_id"})
        return cls.model_validate({**fields, "etag": person_etag(person)})


def person_etag(person: Person) -> str:
    editable = (person.display_name, person.role_to_user, person.aliases, person.descriptors)
    return digest_of(person.id, *editable)


class HeldFact(Strict):
    """A fact waiting for the user's answer (not stored yet)."""

    text: str
    type: FactType
    sensitivity: Sensitivity
    temporal_marker: str | None


class PendingView(Strict):
    id: str
    kind: PendingKind
    chat_id: str | None
    mention: str | None
    choices: list[Choice]
    candidates: list[PersonView]  # disambiguation: the persons the mention may mean
    proposed_person: PersonView | None  # disambiguation: created on "someone_else"
    conflicting_fact: FactView | None  # fact_conflict: the current fact
    facts: list[HeldFact]
    created_at: datetime
    resolved_at: datetime | None


class ScoredFactView(Strict):
    fact: FactView
    similarity: float  # cosine similarity of the embeddings
    score: float  # the hybrid retrieval's fused rank score (higher: better)


class StoredDocument(Strict):
    """A Firestore document under ``users/{uid}`` other than chats and messages."""

    path: str  # relative to users/{uid}
    data: dict[str, Any]


class MessageExport(Strict):
    id: str
    role: str
    text: str
    created_at: datetime | None
    turn_id: str | None
    kind: MessageKind = "text"  # stored before kinds were kept: text
    question_id: str | None = None


class ChatExport(Strict):
    id: str
    created_at: datetime | None
    updated_at: datetime | None
    summary: str
    messages: list[MessageExport]


class ConversationExport(Strict):
    """Everything Firestore holds for the user."""

    settings: dict[str, Any] = Field(default_factory=dict)  # the users/{uid} document
    chats: list[ChatExport] = Field(default_factory=list)
    documents: list[StoredDocument] = Field(default_factory=list)


# -- responses --------------------------------------------------------------------------------
class SearchResponse(Strict):
    results: list[ScoredFactView]


class DeletedResponse(Strict):
    deleted: Literal[True] = True


class SplitResponse(Strict):
    person: PersonView  # the new person
    moved: int


class ResolveResponse(Strict):
    item: PendingView
    stored: int  # facts stored by this answer


class ExportResponse(Strict):
    format: Literal["memory-export/1"] = "memory-export/1"
    user_id: str
    exported_at: datetime
    persons: list[PersonView]
    facts: list[FactView]  # current and superseded
    facts_truncated: bool  # always false: the export pages through every fact (kept in format 1)
    pending: list[PendingView]
    conversations: ConversationExport
    executions: list[ExecutionView] = Field(default_factory=list)  # the execution memory
