"""Ports: the interfaces services and the graph depend on.

Each has a real adapter in ``shared/adapters`` and an in-memory fake (``memory_*``) for unit
tests; ``tests/contract`` runs one test file against both.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Literal, Protocol, TypeVar

from pydantic import BaseModel

from shared.models.base import Strict
from shared.models.domain import (
    Chat,
    Message,
    NewFact,
    Person,
    StoredFact,
    TurnClaim,
)
from shared.models.wire import TurnResponse

M = TypeVar("M", bound=BaseModel)


class Clock(Protocol):
    def now(self) -> datetime: ...


class ConversationStore(Protocol):
    """Chats, messages and per-turn idempotency records (Firestore)."""

    def get_chat(self, user_id: str, chat_id: str) -> Chat | None: ...

    def create_chat(self, user_id: str, chat_id: str, now: datetime) -> Chat: ...

    def recent_messages(self, user_id: str, chat_id: str, limit: int) -> list[Message]: ...

    def claim_turn(
        self,
        user_id: str,
        client_message_id: str,
        chat_id: str,
        turn_id: str,
        now: datetime,
        lease_seconds: int,
    ) -> TurnClaim:
        """Atomically start a turn, or report the earlier one with the same client id."""
        ...

    def complete_turn(
        self,
        user_id: str,
        client_message_id: str,
        messages: Sequence[Message],
        response: TurnResponse,
        now: datetime,
    ) -> None:
        """Write the turn's messages, its recorded response and the chat's update at once."""
        ...

    def release_turn(self, user_id: str, client_message_id: str) -> None:
        """Forget a failed turn so the client may retry it with the same id."""
        ...

    def append_message(self, user_id: str, chat_id: str, message: Message) -> bool:
        """Add a message whose id is its idempotency key; False if it already existed."""
        ...


class IdempotencyStore(Protocol):
    def claim(self, key: str, now: datetime, ttl_seconds: int) -> bool:
        """True for the first caller of ``key``; False for every later one."""
        ...

    def release(self, key: str) -> None:
        """Give up a claim whose work failed transiently, so a redelivery may retry it."""
        ...


class Cache(Protocol):
    def get(self, key: str) -> bytes | None: ...

    def set(self, key: str, value: bytes, ttl_seconds: int) -> None: ...

    def delete(self, *keys: str) -> None: ...

    def hit(self, key: str, window_seconds: int) -> int:
        """Count one event in a fixed window and return the count so far."""
        ...


class FactStore(Protocol):
    def save_extraction(self, task_key: str, user_id: str, facts: Sequence[NewFact]) -> bool:
        """Store all facts of one extraction task in one transaction; False if already done."""
        ...

    def list_facts(self, user_id: str) -> list[StoredFact]: ...


class ContactStore(Protocol):
    def list_persons(self, user_id: str) -> list[Person]: ...

    def add_person(self, person: Person) -> None: ...


class QueuedTask(Strict):
    queue: str
    url: str
    name: str  # Cloud Tasks deduplicates by name
    body: bytes
    schedule_time: datetime | None = None


class TaskQueue(Protocol):
    def enqueue(self, task: QueuedTask) -> bool:
        """Create the task; False when a task of that name already exists."""
        ...


class Publisher(Protocol):
    def publish(self, topic: str, data: bytes, attributes: dict[str, str]) -> str:
        """Publish and return the message id."""
        ...


class ChatTurn(Strict):
    role: Literal["user", "assistant"]
    text: str


class LLMRequest(Strict):
    system: str = ""
    messages: list[ChatTurn]
    max_output_tokens: int = 512
    temperature: float = 0.2


class Usage(Strict):
    input_tokens: int = 0
    output_tokens: int = 0


class Generation(Strict):
    text: str
    usage: Usage


class StreamChunk(Strict):
    text: str = ""
    usage: Usage | None = None  # set on the last chunk


class LLM(Protocol):
    name: str

    def generate(self, request: LLMRequest) -> Generation: ...

    def stream(self, request: LLMRequest) -> Iterator[StreamChunk]: ...

    def structured(self, request: LLMRequest, schema: type[M]) -> tuple[M, Usage]:
        """Reply constrained to ``schema``; raises ModelOutputInvalid when it does not validate."""
        ...


class Embedder(Protocol):
    model_name: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors, one per text."""
        ...
