"""Rows of the fact system's tables <-> domain models, encrypting on the way in.

Only this module knows which columns hold ciphertext and under which context each is bound
(the context is associated data: a ciphertext copied to another column does not decrypt).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pgvector import Vector
from pydantic import Field

from shared.adapters.fact_rules import check_draft, expiry, fact_terms
from shared.models.base import Strict
from shared.models.memory import Fact, FactDraft, PendingItem, Person, Source
from shared.ports import UserCipher

FACT_TEXT = "facts.text"
FACT_TEMPORAL_MARKER = "facts.temporal_marker"
PERSON_NAME = "persons.display_name"
PERSON_ALIASES = "persons.aliases"
PERSON_DESCRIPTORS = "persons.descriptors"
PENDING_PAYLOAD = "pending_items.payload"

FACT_COLUMNS = (
    "id, user_id, avatar_id, subject_entity_id, relation_to_user, text_enc, type, confidence,"
    " scope, durability, sensitivity, temporal_marker_enc, time_anchor, valid_from, valid_to,"
    " source_chat_id, source_turn_id, source_message_id, embedding_model, embedding_dim,"
    " seen_count, last_seen_at, created_at, updated_at, expires_at, ended_by"
)
_FACT_INSERT_COLUMNS = (
    "id, user_id, avatar_id, subject_entity_id, relation_to_user, text_enc, type, confidence,"
    " scope, durability, sensitivity, temporal_marker_enc, time_anchor, valid_from,"
    " supersedes_id, source_chat_id, source_turn_id, source_message_id, embedding,"
    " embedding_model, embedding_dim, idempotency_hash, seen_count, last_seen_at, created_at,"
    " updated_at, terms, expires_at"
)
PERSON_COLUMNS = (
    "id, user_id, avatar_id, display_name_enc, aliases_enc, descriptors_enc, role_to_user,"
    " created_at, updated_at"
)
PENDING_COLUMNS = (
    "id, user_id, chat_id, kind, payload_enc, conflicting_fact_id, created_at, resolved_at"
)


def idempotency_hash(cipher: UserCipher, key: str) -> bytes:
    """Keyed per user: a dump cannot confirm a guessed text from a key derived from it."""
    return cipher.name_hash("idempotency-key:" + key)


# -- facts ----------------------------------------------------------------------------------
def insert_facts_sql(count: int, on_conflict: str) -> str:
    row = "(" + ", ".join(["%s"] * (_FACT_INSERT_COLUMNS.count(",") + 1)) + ")"
    return (
        f"INSERT INTO facts ({_FACT_INSERT_COLUMNS}) VALUES "
        + ", ".join([row] * count)
        + f" {on_conflict}"
    )


def fact_row(
    cipher: UserCipher,
    user_id: str,
    draft: FactDraft,
    now: datetime,
    supersedes_id: str | None = None,
) -> list[Any]:
    check_draft(draft)
    marker = draft.temporal_marker
    return [
        str(uuid.uuid4()),
        user_id,
        draft.avatar_id,
        draft.subject_entity_id,
        draft.relation_to_user,
        cipher.encrypt(draft.text, FACT_TEXT),
        draft.type,
        draft.confidence,
        draft.scope,
        draft.durability,
        draft.sensitivity,
        None if marker is None else cipher.encrypt(marker, FACT_TEMPORAL_MARKER),
        draft.time_anchor,
        now,
        supersedes_id,
        draft.source.chat_id,
        draft.source.turn_id,
        draft.source.message_id,
        Vector(draft.embedding),
        draft.embedding_model,
        len(draft.embedding),
        idempotency_hash(cipher, draft.idempotency_key),
        1,
        now,
        now,
        now,
        cipher.term_hashes(fact_terms(draft.text, marker)),
        expiry(draft.durability, now, draft.time_anchor),
    ]


def _moment(value: Any) -> Any:
    """A timestamp read as ISO text (a query that selected ``col::text``) or as a datetime."""
    return datetime.fromisoformat(value) if isinstance(value, str) else value


def fact_from_row(cipher: UserCipher, row: Sequence[Any]) -> Fact:
    (fact_id, user_id, avatar_id, subject, relation, text_enc, fact_type, confidence) = row[:8]
    (scope, durability, sensitivity, marker_enc, time_anchor, valid_from, valid_to) = row[8:15]
    (chat_id, turn_id, message_id, model, dim, seen, last_seen, created, updated) = row[15:24]
    expires_at, ended_by = row[24:26]
    time_anchor, valid_from, valid_to, last_seen, created, updated, expires_at = map(
        _moment, (time_anchor, valid_from, valid_to, last_seen, created, updated, expires_at)
    )
    return Fact(
        id=str(fact_id),
        user_id=user_id,
        avatar_id=avatar_id,
        subject_entity_id=None if subject is None else str(subject),
        relation_to_user=relation,
        text=cipher.decrypt(text_enc, FACT_TEXT),
        type=fact_type,
        confidence=float(confidence),
        scope=scope,
        durability=durability,
        sensitivity=sensitivity,
        temporal_marker=None
        if marker_enc is None
        else cipher.decrypt(marker_enc, FACT_TEMPORAL_MARKER),
        time_anchor=time_anchor,
        valid_from=valid_from,
        valid_to=valid_to,
        source=Source(chat_id=chat_id, turn_id=turn_id, message_id=message_id),
        embedding_model=model,
        embedding_dim=int(dim),
        seen_count=int(seen),
        last_seen_at=last_seen,
        created_at=created,
        updated_at=updated,
        expires_at=expires_at,
        ended_by=ended_by,
    )


def fact_json_sql(row: str) -> str:
    """``FACT_COLUMNS`` of ``row`` (an alias and a dot) as one JSON array, sent as text: a
    statement that finds many facts and keeps a few returns this, and only the kept are
    parsed and decrypted (``fact_from_json``)."""
    columns = ", ".join(f"{row}{column.strip()}" for column in FACT_COLUMNS.split(","))
    return f"json_build_array({columns})::text"


def fact_from_json(cipher: UserCipher, text: str) -> Fact:
    values = json.loads(text)
    for index in (5, 11):  # text_enc, temporal_marker_enc: bytea as "\\x<hex>"
        if values[index] is not None:
            values[index] = bytes.fromhex(values[index][2:])
    return fact_from_row(cipher, values)


# -- persons --------------------------------------------------------------------------------
def person_names(person: Person) -> list[str]:
    return [person.display_name, *person.aliases]


def name_hashes(cipher: UserCipher, person: Person) -> list[bytes]:
    return sorted({cipher.name_hash(name) for name in person_names(person)})


def person_secrets(cipher: UserCipher, person: Person) -> list[Any]:
    """display_name_enc, aliases_enc, descriptors_enc, name_hashes."""
    return [
        cipher.encrypt(person.display_name, PERSON_NAME),
        cipher.encrypt(json.dumps(person.aliases), PERSON_ALIASES),
        cipher.encrypt(json.dumps(person.descriptors, sort_keys=True), PERSON_DESCRIPTORS),
        name_hashes(cipher, person),
    ]


# Learning from a message never overwrites a person changed since it was read; it moves
# updated_at forward even at the same instant, so a copy read before it is stale too.
LEARN_PERSON_SQL = (
    "UPDATE persons SET display_name_enc = %s, aliases_enc = %s, descriptors_enc = %s,"
    " name_hashes = %s::bytea[], updated_at = GREATEST(%s, updated_at + interval '1 microsecond')"
    " WHERE user_id = %s AND id = %s AND updated_at = %s"
)


def learn_person_args(cipher: UserCipher, person: Person, now: datetime) -> list[Any]:
    return [*person_secrets(cipher, person), now, person.user_id, person.id, person.updated_at]


# Timestamps the caller left out are the database's now().
INSERT_PERSON_SQL = (
    "INSERT INTO persons (id, user_id, avatar_id, role_to_user, created_at, updated_at,"
    " display_name_enc, aliases_enc, descriptors_enc, name_hashes) VALUES (%s, %s, %s, %s,"
    " COALESCE(%s::timestamptz, now()), COALESCE(%s::timestamptz, %s::timestamptz, now()),"
    " %s, %s, %s, %s::bytea[]) ON CONFLICT (id) DO NOTHING"
)


def person_insert_args(
    cipher: UserCipher, person: Person, now: datetime | None = None
) -> list[Any]:
    created = person.created_at or now
    head = [person.id, person.user_id, person.avatar_id, person.role_to_user]
    return [*head, created, person.updated_at, created, *person_secrets(cipher, person)]


def person_from_row(cipher: UserCipher, row: Sequence[Any]) -> Person:
    person_id, user_id, avatar_id, name_enc, aliases_enc, descriptors_enc, role, created = row[:8]
    return Person(
        id=str(person_id),
        user_id=user_id,
        avatar_id=avatar_id,
        display_name=cipher.decrypt(name_enc, PERSON_NAME),
        role_to_user=role,
        aliases=json.loads(cipher.decrypt(aliases_enc, PERSON_ALIASES)),
        descriptors=json.loads(cipher.decrypt(descriptors_enc, PERSON_DESCRIPTORS)),
        created_at=created,
        updated_at=row[8],
    )


# -- pending items --------------------------------------------------------------------------
class PendingPayload(Strict):
    """The encrypted part of a pending item."""

    mention: str | None = None
    candidate_ids: list[str] = Field(default_factory=list)
    proposed_person: Person | None = None
    facts: list[FactDraft] = Field(default_factory=list)


INSERT_PENDING_SQL = (
    f"INSERT INTO pending_items ({PENDING_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (id) DO NOTHING"
)


def pending_insert_args(cipher: UserCipher, item: PendingItem) -> list[Any]:
    payload = PendingPayload(
        mention=item.mention,
        candidate_ids=item.candidate_ids,
        proposed_person=item.proposed_person,
        facts=item.facts,
    )
    return [
        item.id,
        item.user_id,
        item.chat_id,
        item.kind,
        cipher.encrypt(payload.model_dump_json(), PENDING_PAYLOAD),
        item.conflicting_fact_id,
        item.created_at,
        item.resolved_at,
    ]


def pending_from_row(cipher: UserCipher, row: Sequence[Any]) -> PendingItem:
    item_id, user_id, chat_id, kind, payload_enc, conflicting, created, resolved = row
    payload = PendingPayload.model_validate_json(cipher.decrypt(payload_enc, PENDING_PAYLOAD))
    return PendingItem(
        id=str(item_id),
        user_id=user_id,
        chat_id=chat_id,
        kind=kind,
        mention=payload.mention,
        candidate_ids=payload.candidate_ids,
        proposed_person=payload.proposed_person,
        facts=payload.facts,
        conflicting_fact_id=None if conflicting is None else str(conflicting),
        created_at=created,
        resolved_at=resolved,
    )
