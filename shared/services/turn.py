"""One conversation turn: validate, claim, run the Global Supervisor graph, stream.

Idempotency: the turn id is derived from (user, client_message_id) and claimed in
Firestore before anything runs, so a repeated request replays the recorded answer; the
extraction task is named from the turn id (Cloud Tasks refuses a second task of that name)
and agent jobs carry ids derived from it (the agents function claims each id once).

Failures: a node that fails ends the turn with a fallback reply in the chat's language,
recorded as failed (user message, fallback, metadata; nothing handed off). If recording
itself fails, the claim is released and the error raised, so the client may retry.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import Any

from shared.deps import Deps
from shared.errors import MessageTooLong, NodeFailed, NotFound, RateLimited, TurnInProgress
from shared.graph.builder import build_turn_graph
from shared.graph.context import TurnContext
from shared.graph.metering import Meter, MeteredLLM
from shared.graph.phrases import phrase
from shared.graph.state import Conversation, Hitl, ResponseState, TurnState
from shared.models.domain import Chat
from shared.models.wire import TurnRequest, TurnResponse
from shared.services.ids import new_chat_id_for, turn_id_for
from shared.services.turn_record import record_turn, wire_response

log = logging.getLogger("turn")


@dataclass(frozen=True)
class Chunk:
    text: str


@dataclass(frozen=True)
class Done:
    response: TurnResponse


TurnEvent = Chunk | Done


@dataclass(frozen=True)
class Answer:
    """The chat, as the resume service read it, and the option of its pending question."""

    chat: Chat
    option_id: str


@dataclass(frozen=True)
class PreparedTurn:
    user_id: str
    chat_id: str
    turn_id: str
    request: TurnRequest
    chat_is_new: bool
    chat: Chat | None = None
    replay: TurnResponse | None = None
    trace: str | None = None
    answer: str | None = None  # an option of the chat's pending question, chosen via resume


class TurnService:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    def prepare(
        self,
        user_id: str,
        request: TurnRequest,
        trace: str | None = None,
        answer: Answer | None = None,
    ) -> PreparedTurn:
        """Everything that can refuse the request, before a single byte is streamed."""
        settings, store = self._deps.settings, self._deps.conversations
        self._check_rate(user_id)
        if len(request.message) > settings.max_message_chars:
            raise MessageTooLong(f"message over {settings.max_message_chars} characters")
        chat_id = request.chat_id or new_chat_id_for(user_id, request.client_message_id)
        chat_is_new = request.chat_id is None
        if answer is not None:  # read and checked by the resume service
            chat: Chat | None = answer.chat
        else:
            chat = None if chat_is_new else store.get_chat(user_id, chat_id)
        if not chat_is_new and chat is None:
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
            return PreparedTurn(
                user_id, claim.chat_id, turn_id, request, False, replay=claim.response
            )
        if claim.status == "running":
            raise TurnInProgress("this message is still being answered; retry shortly")
        return PreparedTurn(
            user_id,
            chat_id,
            turn_id,
            request,
            chat_is_new,
            chat,
            trace=trace,
            answer=answer.option_id if answer else None,
        )

    def events(self, turn: PreparedTurn) -> Iterator[TurnEvent]:
        if turn.replay is not None:
            yield Chunk(turn.replay.reply.text)
            yield Done(turn.replay)
            return
        context = self._context(turn)
        try:
            response = yield from self._run_graph(turn, context)
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

    def _context(self, turn: PreparedTurn) -> TurnContext:
        meter = Meter(self._deps.settings.turn_token_budget)
        return TurnContext(
            user_id=turn.user_id,
            chat_id=turn.chat_id,
            turn_id=turn.turn_id,
            client_message_id=turn.request.client_message_id,
            chat_is_new=turn.chat_is_new,
            llm=MeteredLLM(self._deps.llm, meter),
            meter=meter,
            ports=self._deps,
            trace=turn.trace,
        )

    def _run_graph(
        self, turn: PreparedTurn, context: TurnContext
    ) -> Generator[TurnEvent, None, TurnResponse]:
        state = initial_state(turn)
        last: dict[str, Any] = state.model_dump()
        first_chunk: float | None = None
        try:
            for namespace, mode, payload in build_turn_graph().stream(
                state, context=context, stream_mode=["custom", "values"], subgraphs=True
            ):
                if mode == "custom" and isinstance(payload, dict) and "chunk" in payload:
                    first_chunk = first_chunk or time.perf_counter()
                    yield Chunk(str(payload["chunk"]))
                elif mode == "values" and not namespace and isinstance(payload, dict):
                    last = payload
        except NodeFailed as failure:
            if failure.node == "message_persist":
                raise failure.cause from failure
            failed = TurnState.model_validate(last)
            response = yield from self._fail(context, failed, failure)
            _log_turn(context, failed, response, first_chunk, failure)
            return response
        final = TurnState.model_validate(last)
        response = wire_response(context, final)
        _log_turn(context, final, response, first_chunk)
        return response

    def _fail(
        self, context: TurnContext, state: TurnState, failure: NodeFailed
    ) -> Generator[TurnEvent, None, TurnResponse]:
        log.warning(
            "turn failed, answering with the fallback",
            extra={"turn_id": context.turn_id, "node": failure.node, "code": failure.cause.code},
        )
        text = phrase("fallback", state.conversation.language)
        failed = state.model_copy(  # a question asked before the failure is not left open
            update={
                "response": ResponseState(text=text, kind="fallback"),
                "hitl": state.hitl.model_copy(update={"ask": None}),
            }
        )
        yield Chunk(text)
        return record_turn(context, failed, failure)


def _log_turn(
    context: TurnContext,
    state: TurnState,
    response: TurnResponse,
    first_chunk: float | None,
    failure: NodeFailed | None = None,
) -> None:
    """The one line per turn that the log-based metrics read (terraform/monitoring.tf)."""
    now = time.perf_counter()
    log.info(
        "turn done",
        extra={
            "turn_id": context.turn_id,
            "route": state.intent.route if state.intent else None,
            "outcome": "failed" if failure else "ok",
            "graph_ms": round((now - context.started) * 1000, 1),
            "ttft_ms": round(((first_chunk or now) - context.started) * 1000, 1),
            "interrupted": response.interrupt is not None,
            "nodes": state.nodes_run,
            "tokens": context.meter.turn.total,
        },
    )


def initial_state(turn: PreparedTurn) -> TurnState:
    chat, message_id = turn.chat, f"{turn.turn_id}-u"
    return TurnState(
        conversation=Conversation(
            user_message=turn.request.message,
            message_id=message_id,
            focus=turn.request.message,
            focus_message_id=message_id,
            focus_turn_id=turn.turn_id,
            summary=chat.summary if chat else "",
            summarized_until=chat.summarized_until if chat else None,
        ),
        hitl=_hitl(chat, turn.answer),
    )


def _hitl(chat: Chat | None, answer: str | None) -> Hitl:
    pending = chat.pending if chat else None
    if answer is None:
        return Hitl(pending=pending)
    return Hitl(pending=pending, outcome="answered", option_id=answer)
