"""Builders for the extraction tests: tasks, persons, the model's scripted extraction output.

``ScriptedModel`` is the handler behind ``ScriptedLLM``: it answers the extraction call with
the output a test sets, and the red-flag check by a policy, so a test states what the model
says and asserts what gets stored.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel

from shared.config import Settings
from shared.deps import Deps
from shared.fakes.clock import FixedClock
from shared.fakes.scripted_llm import HashEmbedder, ScriptedLLM
from shared.models.domain import ExtractionTask, ResolvedEntity
from shared.models.extraction import Extraction
from shared.models.memory import Person, PersonRole
from shared.ports import ContactStore, FactStore, LLMRequest, PendingStore
from shared.services.memory.schema import RedFlagVerdict

USER = "alice"
NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
RedFlag = Literal["same", "different", "unsure"]


def pid(key: str) -> str:
    """A stable person id per test key ("martin_son")."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"test-person:{key}"))


def person(
    key: str,
    name: str,
    role: PersonRole = "other",
    aliases: tuple[str, ...] = (),
    user: str = USER,
    **descriptors: str,
) -> Person:
    return Person(
        id=pid(key),
        user_id=user,
        display_name=name,
        role_to_user=role,
        aliases=list(aliases),
        descriptors=descriptors,
    )


def task(
    text: str = "a message",
    entities: tuple[tuple[str, str | None, float], ...] = (),
    prefs: bool = False,
    turn: str = "t1",
    timezone: str = "UTC",
    user: str = USER,
) -> ExtractionTask:
    """``entities``: (mention, person key or None for the user, confidence)."""
    return ExtractionTask(
        user_id=user,
        chat_id="c1",
        turn_id=turn,
        message_id=f"{turn}-u",
        text=text,
        resolved_entities=[
            ResolvedEntity(mention=m, person_id=pid(k) if k else None, confidence=c)
            for m, k, c in entities
        ],
        has_preferences=prefs,
        timezone=timezone,
        enqueued_at=NOW,
    )


def fact(
    text: str, about: str = "user", type: str = "Other", confidence: float = 0.95, **more: Any
) -> dict[str, Any]:
    return {"text": text, "about": about, "type": type, "confidence": confidence, **more}


def entity(name: str, role: str | None = None, **descriptors: str) -> dict[str, Any]:
    return {
        "name": name,
        "role": role,
        "descriptors": [{"key": k, "value": v} for k, v in descriptors.items()],
    }


def extraction(*facts: dict[str, Any], entities: tuple[dict[str, Any], ...] = ()) -> Extraction:
    return Extraction.model_validate(
        {"facts": list(facts), "entities": list(entities), "topics": []}
    )


class ScriptedModel:
    """What the model answers: ``output`` to the extraction call; the red-flag check by
    ``red_flag`` (None: a red-flag call fails the test, the cheap path should have decided)."""

    def __init__(self) -> None:
        self.output = Extraction()
        self.red_flag: RedFlag | Callable[[LLMRequest], RedFlagVerdict] | None = None
        self.red_flags: list[LLMRequest] = []

    def __call__(self, request: LLMRequest, schema: type[BaseModel] | None) -> BaseModel:
        if schema is Extraction:
            return self.output
        if schema is RedFlagVerdict:
            self.red_flags.append(request)
            if self.red_flag is None:
                raise AssertionError(f"unexpected red-flag check: {request.messages[0].text}")
            if callable(self.red_flag):
                return self.red_flag(request)
            return {
                "same": RedFlagVerdict(same_person=True, confidence=0.95, reason="same"),
                "different": RedFlagVerdict(same_person=False, confidence=0.95, reason="not"),
                "unsure": RedFlagVerdict(same_person=False, confidence=0.5, reason="unsure"),
            }[self.red_flag]
        raise AssertionError(f"unexpected structured call for {schema}")


def extraction_deps(
    facts: FactStore, contacts: ContactStore, pending: PendingStore, model: ScriptedModel
) -> Deps:
    """Deps for ``ExtractionService`` on the given stores, the user's data erased first (the
    person ids are fixed, so every test starts from none)."""
    for user in (USER, "bob"):
        facts.delete_user(user, NOW - timedelta(days=1))  # erased before the tasks
    return Deps(
        Settings(env="test", model_provider="scripted"),
        clock=FixedClock(NOW),
        llm=ScriptedLLM(handler=model),
        embedder=HashEmbedder(dimension=64),
        facts=facts,
        contacts=contacts,
        pending=pending,
    )
