"""Response nodes: the greeting reply (no model), the streamed answer, the delegation notice."""

from __future__ import annotations

from langgraph.runtime import Runtime

from shared.graph.context import TurnContext
from shared.graph.state import Accounting, PlannedJob, Planning, ResponseState, TurnState
from shared.ports import ChatTurn, LLMRequest

_PERSONA = (
    "You are a concise, warm personal assistant. Answer in the user's language. "
    "Never invent facts about the user or people they know."
)
_GREETINGS = {
    "thanks": "You're welcome! Anything else I can do for you?",
    "hello": "Hello! How can I help you today?",
}
DEFAULT_AGENT = "research"


def greet(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, object]:
    message = state.conversation.user_message.lower()
    thanked = any(word in message for word in ("thank", "thx", "danke", "merci", "grazie"))
    text = _GREETINGS["thanks" if thanked else "hello"]
    runtime.stream_writer({"chunk": text})
    return {"response": ResponseState(text=text), "nodes_run": ["greet"]}


def answer(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, object]:
    history = [
        ChatTurn(role="assistant" if m.role == "assistant" else "user", text=m.text)
        for m in state.conversation.history
        if m.role in ("user", "assistant")
    ]
    request = LLMRequest(
        system=_PERSONA,
        messages=[*history, ChatTurn(role="user", text=state.conversation.user_message)],
    )
    parts: list[str] = []
    usage = Accounting()
    for chunk in runtime.context.llm.stream(request):
        if chunk.text:
            parts.append(chunk.text)
            runtime.stream_writer({"chunk": chunk.text})
        if chunk.usage:
            usage = Accounting(
                input_tokens=chunk.usage.input_tokens, output_tokens=chunk.usage.output_tokens
            )
    return {
        "response": ResponseState(text="".join(parts).strip()),
        "usage": [usage],
        "nodes_run": ["answer"],
    }


def delegate(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, object]:
    """Hand long work to an agent job; the result arrives later as an assistant message."""
    job = PlannedJob(agent=DEFAULT_AGENT, goal=state.conversation.user_message)
    text = "I'm on it and will post the result here when it's ready."
    runtime.stream_writer({"chunk": text})
    return {
        "planning": Planning(jobs=[job]),
        "response": ResponseState(text=text, kind="progress"),
        "nodes_run": ["delegate"],
    }
