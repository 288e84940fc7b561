"""Stage 7, the response: the UI router picks one writer, then ``message_persist``.

``greeting_text`` and ``hitl_text`` write without a model; ``simple_text`` and
``complex_text`` stream the model's tokens to the client as they come (custom stream
events), with memory, persona and presentation rules in the prompt. A "by the way"
question is appended to the answer. A reply told to stop (``signals.stop``: a newer message
of the chat interrupts it) ends at the next token; what was written is kept, marked
``interrupted``. A question about a known person that the retrieved
facts answer (``understood.answer``) is answered by quoting them when the deployment says
so (``UNDERSTANDING_ANSWERS=reply``: the offline model garbles them), else the quote is
given to the model as the answer to phrase.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime

from shared.conversation.greetings import greeting_reply
from shared.conversation.phrases import phrase
from shared.graph import readings, understood
from shared.graph.context import TurnContext
from shared.graph.degraded import memory_note
from shared.graph.instrument import node
from shared.graph.persist import record_turn
from shared.graph.reply_prompt import reply_request, system_prompt
from shared.graph.routing import ui_route
from shared.graph.state import PlanStep, ResponseState, TurnState
from shared.models.wire import ReplyKind


def _emit(runtime: Runtime[TurnContext], text: str) -> None:
    runtime.stream_writer({"chunk": text})


def _reply(text: str, kind: ReplyKind = "text") -> dict[str, Any]:
    return {"response": ResponseState(text=text, kind=kind)}


@node("greeting_text")
def greeting_text(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    text = greeting_reply(state.conversation.user_message)
    _emit(runtime, text)
    return _reply(text)


def _acknowledged(state: TurnState, language: str) -> str:
    """Which person the answer chose, as the question labelled it ("Anna (colleague)")."""
    chosen = state.memory.resolved[-1] if state.memory.resolved else None
    if chosen is None:
        return phrase("noted", language, name="")
    if chosen.new_person:
        return phrase("noted_new", language, name=chosen.display_name)
    pending = state.hitl.pending
    options = pending.interrupt.options if pending else []
    label = next((o.label for o in options if o.id == chosen.person_id), chosen.display_name)
    return phrase("noted", language, name=label)


@node("hitl_text")
def hitl_text(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    ask, language = state.hitl.ask, state.conversation.language
    if ask is None:  # a "by the way" question was answered: acknowledge it
        text = _acknowledged(state, language)
        _emit(runtime, text)
        return _reply(text)
    options = "\n".join(f"{n}. {option.label}" for n, option in enumerate(ask.interrupt.options, 1))
    text = f"{ask.interrupt.question}\n{options}"
    _emit(runtime, text)
    return {"response": ResponseState(text=text, kind="question", interrupt=ask.interrupt)}


def _stream_answer(
    state: TurnState,
    runtime: Runtime[TurnContext],
    system: str,
    focus: str,
    cap: int | None = None,
) -> tuple[str, bool]:
    """The streamed answer, and whether it was stopped before its end. The speculative reply
    the classify node started is taken when it asked exactly this (``speculation``)."""
    stop, context = runtime.context.signals.stop, runtime.context
    request = reply_request(state, system, focus, cap)
    held = context.speculation.claim(request)
    if stop.is_set():
        if held is not None:
            held.drop()
        return "", True
    parts: list[str] = []
    for chunk in held.chunks() if held is not None else context.llm.stream(request):
        if chunk.text:
            parts.append(chunk.text)
            _emit(runtime, chunk.text)
        if stop.is_set():
            if held is not None:
                held.drop()
            return "".join(parts).strip(), True
    return "".join(parts).strip(), False


def _note(state: TurnState, runtime: Runtime[TurnContext]) -> str:
    note = memory_note(state)
    if note:
        _emit(runtime, note)
    return note


def _followup(state: TurnState, runtime: Runtime[TurnContext]) -> str:
    ambiguity = state.disambiguation.followup
    if ambiguity is None:
        return ""
    labels = [c.label for c in ambiguity.candidates]
    language = state.conversation.language
    options = ", ".join([*labels, phrase("someone_else", language).lower()])
    text = "\n\n" + phrase("by_the_way", language, name=ambiguity.mention, options=options)
    _emit(runtime, text)
    return text


@node("simple_text")
def simple_text(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    system, quoted = system_prompt(state), understood.answer(state)
    # "reply" (a weak model): what the tier is sure of is said as it is. In every mode a
    # question about someone nothing stored answers is told so, with no model call: a model
    # handed other people's facts answers from them.
    said = understood.nothing_known(state) or understood.known_instead(state)
    if said is None and runtime.context.ports.settings.understanding_answers == "reply":
        said = quoted or understood.told_back(state) or understood.all_known(state)
    if said is not None:
        _emit(runtime, said.text)
        answer = said.text
    else:
        if quoted is not None:
            system += f"\nThe stored facts answer the question: {quoted.text} Answer from them."
        cap = runtime.context.ports.settings.free_reply_max_output_tokens
        answer, stopped = _stream_answer(state, runtime, system, state.conversation.focus, cap)
        if stopped:
            return _reply(answer, "interrupted")
    response = ResponseState(
        text=answer + _note(state, runtime) + _followup(state, runtime),
        quoted=quoted.fact_ids if quoted else [],
    )
    return {"response": response}


@node("complex_text")
def complex_text(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    planning, language = state.planning, state.conversation.language
    steps = {step.id: step for step in planning.steps}
    done = [r for r in planning.results if r.status == "done"]
    # said in the plan's own words, never by an agent's name
    started = [
        _step_in_words(steps[r.step_id]) for r in planning.results if r.status == "published"
    ]
    refused = [_step_in_words(steps[r.step_id]) for r in planning.results if r.status == "refused"]
    notes = []
    if refused:
        key = "timed_out" if state.hitl.timed_out else "refused"
        notes.append(phrase(key, language, what="; ".join(refused)))
    if started:
        notes.append(phrase("started", language, what="; ".join(started)))
    text = ""
    read = [r for r in done if readings.reads_only(steps[r.step_id])]
    if read:  # what the user's records say, as found: nothing for a model to phrase
        text = "\n\n".join(r.output or "" for r in read)
        _emit(runtime, text)
        done = [r for r in done if r not in read]
    if done:
        results = "\n".join(f"{steps[r.step_id].agent}: {r.output}" for r in done)
        system = system_prompt(state) + f"\nYour agents' results:\n{results}"
        answer, stopped = _stream_answer(state, runtime, system, state.conversation.focus)
        text = f"{text}\n\n{answer}" if text else answer
        if stopped:
            return _reply(text, "interrupted")
    tail = "\n\n".join(notes)
    if tail:
        tail = f"\n\n{tail}" if text else tail
        _emit(runtime, tail)
    kind: ReplyKind = "progress" if started and not done else "text"
    return _reply(text + tail + _note(state, runtime) + _followup(state, runtime), kind)


def _step_in_words(step: PlanStep) -> str:
    return step.inputs.get("goal", "").rstrip(".") or "it"


@node("message_persist")
def message_persist(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    record_turn(runtime.context, state)
    return {}


def build(checkpointer: bool | None = False) -> Any:
    """``checkpointer=False``: the turn's thread is checkpointed by the parent graph only."""
    graph = StateGraph(TurnState, context_schema=TurnContext)
    writers = {
        "greeting_text": greeting_text,
        "hitl_text": hitl_text,
        "simple_text": simple_text,
        "complex_text": complex_text,
    }
    for name, fn in writers.items():
        graph.add_node(name, fn)
        graph.add_edge(name, "message_persist")
    graph.add_node("message_persist", message_persist)
    graph.add_conditional_edges(START, ui_route, list(writers))
    graph.add_edge("message_persist", "__end__")
    return graph.compile(name="response", checkpointer=checkpointer)
