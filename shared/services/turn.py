"""One conversation turn: validate, claim, run the graph, hand off background work, persist.

Idempotency: the turn id is derived from (user, client_message_id) and claimed in
Firestore before anything runs, so a repeated request replays the recorded answer; the
extraction task is named from the turn id (Cloud Tasks refuses a second task of that name)
and agent jobs carry ids derived from it (the agents function claims each id once).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from datetime import timedelta

from shared.deps import Deps
from shared.errors import MessageTooLong, NotFound, RateLimited, TurnInProgress
from shared.graph.builder import build_turn_graph
from shared.graph.context import TurnContext
from shared.graph.state import Conversation, TurnState
from shared.models.domain import Message
from shared.models.wire import Reply, TurnRequest, TurnResponse
from shared.services import handoff
from shared.services.ids import new_chat_id_for, turn_id_for

log = logging.getLogger("turn")


@dataclass(frozen=True)
class Chunk:
    text: str


@dataclass(frozen=True)
class Done:
    response: TurnResponse


TurnEvent = Chunk | Done


@dataclass(frozen=True)
class PreparedTurn:
    user_id: str
    chat_id: str
    turn_id: str
    request: TurnRequest
    chat_is_new: bool
    history: list[Message]
    replay: TurnResponse | None = None


class TurnService:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    def prepare(self, user_id: str, request: TurnRequest) -> PreparedTurn:
        """Everything that can refuse the request, before a single byte is streamed."""
        settings, store = self._deps.settings, self._deps.conversations
        self._check_rate(user_id)
        if len(request.message) > settings.max_message_chars:
            raise MessageTooLong(f"message over {settings.max_message_chars} characters")
        chat_id = request.chat_id or new_chat_id_for(user_id, request.client_message_id)
        chat_is_new = request.chat_id is None
        if not chat_is_new and store.get_chat(user_id, chat_id) is None:
            raise NotFound("chat not found")
        turn_id = turn_id_for(user_id, request.client_message_id)
        claim = store.claim_turn(
            user_id,
            request.client_message_id,
            chat_id,
            turn_id,
            self._deps.clock.now(),
            settings.turn_lease_seconds,
        )
        if claim.status == "done":
            return PreparedTurn(user_id, claim.chat_id, turn_id, request, False, [], claim.response)
        if claim.status == "running":
            raise TurnInProgress("this message is still being answered; retry shortly")
        history = (
            []
            if chat_is_new
            else store.recent_messages(user_id, chat_id, settings.history_messages)
        )
        return PreparedTurn(user_id, chat_id, turn_id, request, chat_is_new, history)

    def events(self, turn: PreparedTurn) -> Iterator[TurnEvent]:
        if turn.replay is not None:
            yield Chunk(turn.replay.reply.text)
            yield Done(turn.replay)
            return
        try:
            state = yield from self._run_graph(turn)
            response = self._finish(turn, state)
        except BaseException:
            self._deps.conversations.release_turn(turn.user_id, turn.request.client_message_id)
            raise
        yield Done(response)

    def run(self, user_id: str, request: TurnRequest) -> TurnResponse:
        return self.run_prepared(self.prepare(user_id, request))

    def run_prepared(self, turn: PreparedTurn) -> TurnResponse:
        for event in self.events(turn):
            if isinstance(event, Done):
                return event.response
        raise AssertionError("a turn always ends with Done")

    def _check_rate(self, user_id: str) -> None:
        window = 60
        bucket = int(self._deps.clock.now().timestamp()) // window
        count = self._deps.cache.hit(f"rate:{user_id}:{bucket}", window)
        if count > self._deps.settings.rate_limit_per_minute:
            raise RateLimited("too many messages; wait a minute")

    def _run_graph(self, turn: PreparedTurn) -> Generator[TurnEvent, None, TurnState]:
        context = TurnContext(
            user_id=turn.user_id,
            chat_id=turn.chat_id,
            turn_id=turn.turn_id,
            llm=self._deps.llm,
            clock=self._deps.clock,
        )
        initial = TurnState(
            conversation=Conversation(user_message=turn.request.message, history=turn.history)
        )
        final: dict[str, object] = {}
        started = time.perf_counter()
        for mode, payload in build_turn_graph().stream(
            initial, context=context, stream_mode=["custom", "values"]
        ):
            if mode == "custom" and isinstance(payload, dict) and "chunk" in payload:
                yield Chunk(str(payload["chunk"]))
            elif mode == "values" and isinstance(payload, dict):
                final = payload
        state = TurnState.model_validate(final)
        log.info(
            "turn graph finished",
            extra={
                "turn_id": turn.turn_id,
                "nodes": state.nodes_run,
                "ms": round((time.perf_counter() - started) * 1000, 1),
            },
        )
        return state

    def _finish(self, turn: PreparedTurn, state: TurnState) -> TurnResponse:
        assert state.response is not None, "every route ends in a response node"
        now = self._deps.clock.now()
        user_message = Message(
            id=f"{turn.turn_id}-u",
            role="user",
            text=turn.request.message,
            created_at=now,
            turn_id=turn.turn_id,
        )
        handoff.enqueue_extraction(self._deps, turn.user_id, turn.chat_id, user_message, state)
        handoff.publish_jobs(self._deps, turn.user_id, turn.chat_id, turn.turn_id, state)
        reply_message = Message(
            id=f"{turn.turn_id}-a",
            role="assistant",
            text=state.response.text,
            created_at=now + timedelta(microseconds=1),
            turn_id=turn.turn_id,
        )
        response = TurnResponse(
            chat_id=turn.chat_id,
            turn_id=turn.turn_id,
            reply=Reply(text=state.response.text, kind=state.response.kind),
        )
        self._deps.conversations.complete_turn(
            turn.user_id,
            turn.request.client_message_id,
            [user_message, reply_message],
            response,
            now,
            new_chat=turn.chat_is_new,
        )
        return response
