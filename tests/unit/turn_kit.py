"""Helpers for the turn tests: scripted classifications, requests, the stored record."""

from __future__ import annotations

import uuid
from typing import Any

from shared.deps import Deps
from shared.models.domain import TurnMetadata
from shared.models.memory import Person
from shared.models.wire import TurnRequest


def classification(
    route: str = "simple",
    *,
    facts: bool = False,
    semantic: bool = False,
    temporal: bool = False,
    entities: list[dict[str, Any]] | None = None,
    when: list[str] | None = None,
    language: str = "en",
) -> dict[str, Any]:
    return {
        "route": route,
        "entities": entities or [],
        "temporal_references": when or [],
        "has_extractable_facts": facts,
        "has_preferences": False,
        "needs_semantic_retrieval": semantic,
        "needs_temporal_retrieval": temporal,
        "language": language,
    }


def request(message: str, cmid: str = "m1", chat_id: str | None = None) -> TurnRequest:
    return TurnRequest(message=message, client_message_id=cmid, chat_id=chat_id)


def metadata(deps: Deps, cmid: str, user: str = "alice") -> TurnMetadata:
    record = deps.conversations.get_turn(user, cmid)
    assert record is not None and record.metadata is not None
    return record.metadata


def nodes(deps: Deps, cmid: str, user: str = "alice") -> list[str]:
    return [run.node for run in metadata(deps, cmid, user).nodes]


def add_person(deps: Deps, name: str, role: str = "other", user: str = "alice") -> Person:
    person = Person(
        id=str(uuid.uuid4()),
        user_id=user,
        display_name=name,
        role_to_user=role,  # type: ignore[arg-type]
    )
    deps.contacts.add_person(person)
    return person
