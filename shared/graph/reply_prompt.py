"""The reply call's request, built in one place: the response node makes it, and the classify
node makes the same one ahead of time for a speculative reply (``speculation``), which is
used only when the two are equal."""

from __future__ import annotations

from shared.graph import understood
from shared.graph.state import TurnState
from shared.ports import ChatTurn, LLMRequest

PER_ENTITY = 10  # facts per person (or the user) the reply is given


def system_prompt(state: TurnState) -> str:
    conversation = state.conversation
    profile = conversation.profile
    parts = [
        f"You are {profile.persona_name}, the user's personal assistant; tone: {profile.tone}. "
        f"Answer in the language with ISO code '{conversation.language}'. Use only what you "
        "know below about the user and their people; never invent facts about them. "
        "Speak to the user as 'you', never as 'the user'."
    ]
    parts += [f"Rule: {rule}" for rule in profile.presentation_rules]
    if conversation.summary:
        parts.append(f"Earlier in this conversation: {conversation.summary}")
    for who, facts in understood.asked_about(state).items():
        parts.append(f"Known about {who}: " + "; ".join(facts))
    return "\n".join(parts)


def reply_request(
    state: TurnState, system: str, focus: str, max_output_tokens: int | None = None
) -> LLMRequest:
    """``max_output_tokens``: the free reply's cap (``Settings.free_reply_max_output_tokens``);
    None: the request's default (a reply with agent results)."""
    history = [
        ChatTurn(role="assistant" if m.role == "assistant" else "user", text=m.text)
        for m in state.conversation.history
        if m.role in ("user", "assistant") and m.text.strip()  # an old empty reply: skipped
    ]
    messages = [*history, ChatTurn(role="user", text=focus)]
    if max_output_tokens is None:
        return LLMRequest(system=system, messages=messages)
    return LLMRequest(system=system, messages=messages, max_output_tokens=max_output_tokens)
