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

from langgraph.types import Durability

from shared.app.chat_queue import ClaimInput, claim_turn
from shared.app.handoff_drain import drain_chat
from shared.app.turn_heartbeat import Heartbeat
from shared.app.turn_input import (
    PreparedTurn,
    graph_config,
    graph_input,
    initial_state,
    may_ask,
)
from shared.conversation.answers import WORDS, MessagePicker
from shared.conversation.phrases import phrase
from shared.conversation.titles import title_from
from shared.deps import Deps
from shared.errors import (
    AccountErased,
    BadRequest,
    InterruptNotPending,
    MessageTooLong,
    ModelDeclined,
    NodeFailed,
    NotFound,
    TurnInProgress,
)
from shared.graph.builder import build_turn_graph, checkpointed
from shared.graph.context import TurnContext
from shared.graph.metering import Meter, MeteredLLM
from shared.graph.persist import next_control, record_turn, wire_response
from shared.graph.state import ResponseState, TurnState
from shared.models.domain import HitlControl, TurnClaim
from shared.models.wire import TurnRequest, TurnResponse
from shared.ports import ResumeClaim
from shared.services.ids import new_chat_id_for, turn_id_for
from shared.services.model_work import for_work

log = logging.getLogger("turn")


@dataclass(frozen=True)
class Chunk:
    text: str


@dataclass(frozen=True)
class Done:
    response: TurnResponse


TurnEvent = Chunk | Done


class TurnService:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps

    def prepare(
        self,
        user_id: str,
        request: TurnRequest,
        trace: str | None = None,
        resume: ResumeClaim | None = None,
        timed_out: bool = False,
    ) -> PreparedTurn:
        """Everything that can refuse the request, before a single byte is streamed.

        One transaction claims the turn and, when the chat waits on a question of the turn
        graph, the question too (``resume`` names which one; a plain message takes it if
        it is there, and the HITL handler then decides whether the message answers it).
        While another turn holds the chat, the claim waits for it (``chat_queue``)."""
        settings = self._deps.settings
        self._deps.rate_limiter.check(user_id)
        if len(request.message) > settings.max_message_chars:
            raise MessageTooLong(f"message over {settings.max_message_chars} characters")
        chat_id = request.chat_id or new_chat_id_for(user_id, request.client_message_id)
        chat_is_new = request.chat_id is None
        turn_id = turn_id_for(user_id, request.client_message_id)
        owner = ClaimInput.owner_id()
        claim = claim_turn(
            self._deps,
            ClaimInput(
                user_id,
                request,
                chat_id,
                turn_id,
                chat_is_new,
                resume or ResumeClaim(choose=MessagePicker(request.message)),
                owner,
            ),
        )
        if claim.status == "done":
            return PreparedTurn(
                user_id, claim.chat_id, turn_id, request, False, replay=claim.response
            )
        _refuse(claim)
        control = claim.chat.control if claim.chat is not None and claim.resumed else None
        message = request.message  # the user's words, before an option's label replaces them
        chosen = resume is not None and claim.option_id not in (None, *WORDS)
        if control is not None and chosen and control.interrupt:  # via resume: the label
            label = next(o.label for o in control.interrupt.options if o.id == claim.option_id)
            request = request.model_copy(update={"message": label})  # else: the user's words
        return PreparedTurn(
            user_id,
            claim.chat_id,
            turn_id,
            request,
            chat_is_new,
            claim.chat,
            trace=trace,
            resumed=control,
            answer=claim.option_id,
            timed_out=timed_out,
            owner=owner,
            title=None if resume or (claim.chat and claim.chat.title) else title_from(message),
        )

    def events(self, turn: PreparedTurn) -> Iterator[TurnEvent]:
        if turn.replay is not None:
            yield Chunk(turn.replay.reply.text)
            yield Done(turn.replay)
            return
        if turn.chat is not None and turn.chat.outbox:  # handoffs an outage held back
            drain_chat(self._deps, turn.user_id, turn.chat_id, turn.chat.outbox)
        if turn.resumed is not None and turn.resumed.target != "turn":
            yield from self._answer_elsewhere(turn)
            return
        context = self._context(turn)
        ids = (turn.user_id, turn.request.client_message_id, turn.chat_id, turn.owner)
        try:
            with Heartbeat(self._deps, *ids, context.signals):
                response = yield from self._run_graph(turn, context)
        except BaseException:
            self._deps.conversations.release_turn(*ids)
            raise
        yield Done(response)

    def _answer_elsewhere(self, turn: PreparedTurn) -> Iterator[TurnEvent]:
        from shared.app.resume_elsewhere import answer_elsewhere

        try:
            response = answer_elsewhere(self._deps, turn)
        except BaseException:
            self._deps.conversations.release_turn(
                turn.user_id, turn.request.client_message_id, turn.chat_id, turn.owner
            )
            raise
        yield Chunk(response.reply.text)
        yield Done(response)

    def run(self, user_id: str, request: TurnRequest) -> TurnResponse:
        return self.run_prepared(self.prepare(user_id, request))

    def run_prepared(self, turn: PreparedTurn) -> TurnResponse:
        for event in self.events(turn):
            if isinstance(event, Done):
                return event.response
        raise AssertionError("a turn always ends with Done")

    def _context(self, turn: PreparedTurn) -> TurnContext:
        meter = Meter(self._deps.settings.turn_token_budget)
        return TurnContext(
            user_id=turn.user_id,
            chat_id=turn.chat_id,
            turn_id=turn.turn_id,
            client_message_id=turn.request.client_message_id,
            chat_is_new=turn.chat_is_new,
            llm=MeteredLLM(for_work(self._deps.llm, "turn"), meter),
            meter=meter,
            ports=self._deps,
            trace=turn.trace,
            thread_id=turn.thread_id,
            resumed=turn.resumed is not None,
            finish_in_commit=not may_ask(turn),  # no checkpoint follows the completion
            first_turn=turn.first_turn,
            title=turn.title,
        )

    def _run_graph(
        self, turn: PreparedTurn, context: TurnContext
    ) -> Generator[TurnEvent, None, TurnResponse]:
        graph = build_turn_graph()
        durability: Durability | None = None
        if may_ask(turn):  # one checkpoint per turn, written when the run ends
            graph, durability = checkpointed(graph, self._deps.checkpointer), "exit"
        last: dict[str, Any] = initial_state(turn).model_dump()
        first_chunk: float | None = None
        checkpoint_id, interrupted = None, False
        try:
            for namespace, mode, payload in graph.stream(
                graph_input(turn),
                graph_config(turn),
                context=context,
                stream_mode=["custom", "values", "checkpoints"],
                subgraphs=True,
                durability=durability,
            ):
                if mode == "custom" and isinstance(payload, dict) and "chunk" in payload:
                    first_chunk = first_chunk or time.perf_counter()
                    yield Chunk(str(payload["chunk"]))
                elif namespace or not isinstance(payload, dict):
                    continue
                elif mode == "checkpoints":
                    checkpoint_id = payload["config"]["configurable"]["checkpoint_id"]
                elif mode == "values":
                    interrupted = interrupted or "__interrupt__" in payload
                    last = {k: v for k, v in payload.items() if k != "__interrupt__"}
        except NodeFailed as failure:
            if failure.node == "message_persist":
                raise failure.cause from failure
            failed = TurnState.model_validate(last)
            response = yield from self._fail(context, failed, failure)
            self._finish(context)
            _log_turn(context, failed, response, first_chunk, failure)
            return response
        final = TurnState.model_validate(last)
        pending = None
        if interrupted and checkpoint_id is not None:
            pending = self._left_pending(turn, context, final, checkpoint_id)
        self._finish(context, pending)
        response = wire_response(context, final)
        _log_turn(context, final, response, first_chunk)
        return response

    def _left_pending(
        self, turn: PreparedTurn, context: TurnContext, state: TurnState, checkpoint_id: str
    ) -> HitlControl | None:
        """The question waiting from now on: its checkpoint is saved (stored only after it,
        a control record never names a checkpoint that does not exist)."""
        control = next_control(context, state)
        if control is None:
            return None
        before = turn.chat.message_count if turn.chat is not None else 0
        # turn_messages: no user message after a timeout, no reply stopped before its start
        written = (0 if state.hitl.timed_out else 1) + (1 if state.response.text.strip() else 0)
        update = {"checkpoint_id": checkpoint_id, "message_count": before + written}
        return control.model_copy(update=update)

    def _finish(self, context: TurnContext, pending: HitlControl | None = None) -> None:
        """The run is over, its checkpoint saved: the chat goes to the next turn (with the
        question it leaves waiting, if any). A run that asks nothing did this in its
        completion (``persist.ends_in_commit``)."""
        if context.finished.is_set() and pending is None:
            return
        self._deps.conversations.finish_turn(
            context.user_id,
            context.client_message_id,
            context.chat_id,
            control=pending,
            release_chat=not context.signals.lost.is_set(),
        )

    def _fail(
        self, context: TurnContext, state: TurnState, failure: NodeFailed
    ) -> Generator[TurnEvent, None, TurnResponse]:
        log.warning(
            "turn failed, answering with the fallback",
            extra={"turn_id": context.turn_id, "node": failure.node, "code": failure.cause.code},
        )
        declined = isinstance(failure.cause, ModelDeclined)  # a clear answer, not "try again"
        text = phrase("declined" if declined else "fallback", state.conversation.language)
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
            "output_tokens": context.meter.turn.output_tokens,
        },
    )


def _refuse(claim: TurnClaim) -> None:
    if claim.status == "running":
        raise TurnInProgress("this message is still being answered; retry shortly")
    if claim.status == "no_chat":
        raise NotFound("chat not found")
    if claim.status == "not_pending":
        raise InterruptNotPending("no pending interrupt with this id")
    if claim.status == "bad_answer":
        raise BadRequest("the answer picks none of the interrupt's options")
    if claim.status == "erased":
        raise AccountErased("this account is being deleted")
