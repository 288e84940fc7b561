"""Background fact extraction for one turn (the Cloud Tasks target).

Idempotent: the task key is the Cloud Tasks task name (derived from the turn id); the facts
and the processed-key row are written in one PostgreSQL transaction, so a redelivered task
finds its key and writes nothing.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

from pydantic import BaseModel, Field

from shared.deps import Deps
from shared.models.domain import ExtractionTask, FactType, NewFact, ResolvedEntity
from shared.ports import ChatTurn, LLMRequest
from shared.services.ids import extraction_task_name
from shared.services.structured import structured_with_retry

log = logging.getLogger("extraction")
_SELF = {"user", "me", "myself", "self", "i"}
_MIN_ATTRIBUTION = 0.8

_INSTRUCTIONS = (
    "Extract facts worth remembering next week from the user's message. Each fact is one "
    "short sentence (max 200 characters) in third person. 'about' is 'user' for facts "
    "about the user, otherwise the person's name or role exactly as written in the "
    "message. Skip small talk, questions and anything not stated as true."
)


class ExtractedFact(BaseModel):
    text: str = Field(min_length=1, max_length=200)
    type: FactType
    about: str = Field(min_length=1, max_length=80)
    confidence: float = Field(ge=0.0, le=1.0)


class Extraction(BaseModel):
    facts: list[ExtractedFact] = Field(max_length=10)
    topics: list[str] = Field(max_length=5)


@dataclass(frozen=True)
class ExtractionOutcome:
    task_key: str
    stored: int
    skipped: int
    duplicate: bool


def _subject(about: str, entities: list[ResolvedEntity]) -> tuple[bool, str | None]:
    """(attributable, person id); a fact about an unresolved person is never guessed."""
    if about.strip().casefold() in _SELF:
        return True, None
    for entity in entities:
        if entity.mention.casefold() == about.strip().casefold():
            ok = entity.person_id is not None and entity.confidence >= _MIN_ATTRIBUTION
            return ok, entity.person_id
    return False, None


class ExtractionService:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    def run(self, task: ExtractionTask) -> ExtractionOutcome:
        key = extraction_task_name(task.turn_id)
        request = LLMRequest(
            system=_INSTRUCTIONS,
            messages=[ChatTurn(role="user", text=task.text)],
            max_output_tokens=512,
            temperature=0.0,
        )
        extraction, _ = structured_with_retry(self._deps.llm, request, Extraction)
        kept: list[tuple[ExtractedFact, str | None]] = []
        for fact in extraction.facts:
            if fact.type == "Preference" and not task.has_preferences:
                continue
            attributable, subject = _subject(fact.about, task.resolved_entities)
            if attributable:
                kept.append((fact, subject))
        new_facts = self._embed(task, kept)
        saved = self._deps.facts.save_extraction(key, task.user_id, new_facts)
        outcome = ExtractionOutcome(
            task_key=key,
            stored=len(new_facts) if saved else 0,
            skipped=len(extraction.facts) - len(kept),
            duplicate=not saved,
        )
        log.info(
            "extraction done",
            extra={
                "task": key,
                "stored": outcome.stored,
                "skipped": outcome.skipped,
                "duplicate": not saved,
            },
        )
        return outcome

    def _embed(
        self, task: ExtractionTask, kept: list[tuple[ExtractedFact, str | None]]
    ) -> list[NewFact]:
        if not kept:
            return []
        embedder = self._deps.embedder
        vectors = embedder.embed([fact.text for fact, _ in kept])
        return [
            NewFact(
                text=fact.text,
                type=fact.type,
                subject_entity_id=subject,
                relation_to_user="self" if subject is None else "contact",
                confidence=fact.confidence,
                idempotency_key=hashlib.sha256(
                    f"{task.turn_id}\x1f{fact.text.casefold()}".encode()
                ).hexdigest(),
                embedding=vector,
                embedding_model=embedder.model_name,
                source_chat_id=task.chat_id,
                source_turn_id=task.turn_id,
                source_message_id=task.message_id,
            )
            for (fact, subject), vector in zip(kept, vectors, strict=True)
        ]
