"""What the classify node guesses for a speculative reply (``speculation``), and when it keeps it.

For a message the tier leaves open but whose people it has read (some or none, no group),
the guess is the intent the tier's nearest label would have if it were settled, on the
simple route: a question about someone or about the user retrieves, one naming a time in a
schedule-like request looks in that window too, plain chat retrieves nothing. The memory
steps that intent needs (resolution, retrieval, assembly) run ahead, beside the
classification call, and the reply is started with their memory. The classification keeps it
when it asks for the same memory work (route simple, same people, same retrieval, no plan,
same language); the response node still takes it only if its own request is the speculated
one. The memory stage takes the steps run ahead when its inputs are theirs
(``nodes.memory.inputs``), so the stores are read once and the request comes out the same.
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from shared.graph import understood
from shared.graph.context import TurnContext
from shared.graph.reply_prompt import reply_request, system_prompt
from shared.graph.routing import route_retrieval
from shared.graph.state import Conversation, Intent, MemoryState, Resolved, TurnState

if TYPE_CHECKING:
    from shared.understanding import Understanding

log = logging.getLogger("graph")

Step = Callable[[TurnState, TurnContext], dict[str, Any]]


@dataclass(frozen=True)
class MemorySteps:
    """The memory stage's steps (``nodes.memory.EARLY``), handed in by the classify node."""

    resolve: Step
    retrieval: dict[str, Step]  # by the node that runs it (``route_retrieval``)
    assemble: Step
    ahead: Callable[[TurnContext, TurnState, list[Step]], TurnState]  # kept for the stage


@dataclass
class Guess:
    intent: Intent
    language: str
    resolved: list[Resolved] = field(default_factory=list)
    started: bool = False  # a reply was speculated (not when the memory found people unclear)
    worker: threading.Thread | None = None

    def settle(self) -> None:
        """Wait for the memory steps run ahead (and so for the speculation to be started)."""
        if self.worker is not None:
            self.worker.join()


def guessable(reading: Understanding) -> bool:
    return not reading.route.decided and reading.people.decided and not reading.about_roles


def guessed_intent(reading: Understanding) -> Intent:
    """The memory work the tier's nearest label asks for, merged as the model's would be."""
    route = reading.route.model_copy(update={"label": reading.route.best})
    nearest = understood.settled_intent(reading.model_copy(update={"route": route}))
    said = Intent(
        needs_semantic_retrieval=nearest.needs_semantic_retrieval,
        needs_temporal_retrieval=nearest.needs_temporal_retrieval,
    )
    return understood.merged_intent(said, reading)


def start(
    context: TurnContext, state: TurnState, reading: Understanding | None, steps: MemorySteps
) -> Guess | None:
    """Run the guessed intent's memory steps and start its reply, in a thread; the guess."""
    if not context.ports.settings.speculative_reply or reading is None:
        return None
    if not guessable(reading):
        return None
    conversation = state.conversation
    language = conversation.profile.language or reading.language or "en"
    guess = Guess(intent=guessed_intent(reading), language=language)
    ahead = state.model_copy(
        update={
            "conversation": conversation.model_copy(update={"language": language}),
            "intent": guess.intent,
        }
    )
    # the classification call goes first; the stores are read while it runs (the node's
    # context goes along, so a call the resolver makes is counted in this node)
    run = contextvars.copy_context().run
    work = (_speculate, context, ahead, guess, steps)
    guess.worker = threading.Thread(target=run, args=work, name="early-memory", daemon=True)
    guess.worker.start()
    return guess


def _speculate(context: TurnContext, state: TurnState, guess: Guess, steps: MemorySteps) -> None:
    try:
        state = steps.ahead(context, state, [steps.resolve])
        if state.memory.ambiguous:
            return  # the turn asks which person first, or adds the question to its reply
        found = [steps.retrieval[n] for n in route_retrieval(state) if n in steps.retrieval]
        if found:
            state = steps.ahead(context, state, found)
        state = steps.ahead(context, state, [steps.assemble])
    except Exception:  # only a guess: the memory stage runs (or fails) on its own
        log.warning("early memory failed", exc_info=True, extra={"turn_id": context.turn_id})
        return
    guess.resolved = list(state.memory.resolved)
    cap = context.ports.settings.free_reply_max_output_tokens  # the simple path's request
    request = reply_request(state, system_prompt(state), state.conversation.focus, cap)
    context.speculation.start(context.llm, request)
    guess.started = True


def abandon(context: TurnContext, guess: Guess | None) -> None:
    if guess is not None:
        guess.settle()
    context.speculation.drop()


def agrees(intent: Intent, conversation: Conversation, guess: Guess) -> bool:
    return (
        guess.started
        and intent.route == "simple"
        and not intent.planned
        and conversation.language == guess.language
        and _memory_work(intent, guess) == _memory_work(guess.intent, guess)
    )


def _memory_work(intent: Intent, guess: Guess) -> tuple[object, ...]:
    """What the memory stage does with ``intent``, given the people the guess resolved."""
    steps = route_retrieval(TurnState(intent=intent, memory=MemoryState(resolved=guess.resolved)))
    windows = intent.temporal_references if "temporal_retrieval" in steps else []
    return intent.entities, intent.about_roles, sorted(steps), windows
