"""Stage 1, entry and session: history, summarization, the user's context.

``session_init`` loads the messages since the running summary (a plain greeting loads
nothing: its reply waits only for the chat; an answer takes them from the asking turn's
checkpoint when the chat has not changed since the question); over the thresholds,
``summarize`` folds the older ones into the summary (the raw messages stay in Firestore; the
new summary is written with the turn); ``context_loader`` brings persona, presentation rules,
the user's own facts and the names of the user's people, from Redis when cached (encrypted
with the user's data key), else from Firestore and PostgreSQL in parallel.
"""

from __future__ import annotations

import json
import logging
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from datetime import UTC, datetime
from typing import Any

from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime

from shared.conversation.greetings import is_plain_greeting
from shared.errors import DependencyUnavailable
from shared.graph.context import TurnContext, TurnPorts
from shared.graph.degraded import without
from shared.graph.instrument import node
from shared.graph.metering import approx_tokens
from shared.graph.routing import after_session_init
from shared.graph.state import Conversation, MemoryState, SummaryUpdate, TurnState
from shared.models.domain import AssistantProfile
from shared.models.memory import SELF, FactFilter, Person
from shared.ports import ChatTurn, LLMRequest
from shared.services.context_cache import (
    CONTEXT_TTL_SECONDS,
    context_key,
    context_version,
)

log = logging.getLogger("graph")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

HISTORY_WINDOW = 60  # messages loaded at most; summarization keeps the rest far below
PROFILE_FACTS = 20
_SUMMARY_INSTRUCTIONS = (
    "You keep the running summary of a conversation between a user and their assistant. "
    "Merge the previous summary and the new messages into one summary of at most 150 words: "
    "keep names, dates, decisions, open questions and what the user asked for; drop "
    "pleasantries. Write it in the conversation's language. Reply with the summary only."
)


@node("session_init")
def session_init(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    context, conversation = runtime.context, state.conversation
    if context.first_turn or is_plain_greeting(conversation.user_message):
        return {}
    history = conversation.history[-HISTORY_WINDOW:]
    if not conversation.history_loaded:
        history = context.ports.conversations.recent_messages(
            context.user_id, context.chat_id, HISTORY_WINDOW, after=conversation.summarized_until
        )
    settings = context.ports.settings
    tokens = sum(approx_tokens(m.text) for m in history) + approx_tokens(conversation.summary)
    needs = (
        len(history) > settings.summarize_after_messages or tokens > settings.summarize_after_tokens
    ) and len(history) > settings.keep_recent_messages
    return {"conversation": Conversation(history=history, needs_summary=needs)}


@node("summarize")
def summarize(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    conversation = state.conversation
    keep = runtime.context.ports.settings.keep_recent_messages
    older, recent = conversation.history[:-keep], conversation.history[-keep:]
    transcript = "\n".join(f"{m.role}: {m.text}" for m in older)
    request = LLMRequest(
        kind="extraction",
        system=_SUMMARY_INSTRUCTIONS,
        messages=[
            ChatTurn(
                role="user",
                text=f"Previous summary:\n{conversation.summary or '(none)'}\n\n"
                f"New messages:\n{transcript}",
            )
        ],
        max_output_tokens=300,
        temperature=0.0,
    )
    text = runtime.context.llm.generate(request).text.strip()
    update = SummaryUpdate(text=text, until=older[-1].created_at, since=older[0].created_at)
    return {"conversation": Conversation(history=recent, summary=text, new_summary=update)}


@node("context_loader")
def context_loader(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    context = runtime.context
    memory = MemoryState()
    try:
        profile, facts, names = _cached_context(context.ports, context.user_id)
    except DependencyUnavailable as error:  # PostgreSQL: the data key, the facts, the people
        without(context, "context_loader", error)
        profile, facts, names = context.ports.profiles.get_profile(context.user_id), [], []
        memory = MemoryState(unavailable=True)
    language = profile.language or state.conversation.language
    conversation = Conversation(
        profile=profile, profile_facts=facts, known_names=names, language=language
    )
    return {"conversation": conversation, "memory": memory}


def _cached_context(
    ports: TurnPorts, user_id: str
) -> tuple[AssistantProfile, list[str], list[str]]:
    """The profile, the user's own facts and the names of the user's people (the tier
    finds them however they are typed): from Redis, or the stores at once."""
    cipher, key = ports.keyring.cipher_for(user_id), context_key(user_id)
    version, cached = _cache_read(ports, user_id)  # the version before the stores are read
    if cached is not None:
        data = json.loads(cipher.decrypt(cached, "cache.context"))
        if data.get("version") == version and "names" in data:
            profile = AssistantProfile.model_validate(data["profile"])
            return profile, list(data["facts"]), list(data["names"])
    with ThreadPoolExecutor(max_workers=3) as pool:
        profile_job = pool.submit(ports.profiles.get_profile, user_id)
        facts_job = pool.submit(
            ports.facts.list_facts, user_id, FactFilter(subject_id=SELF, limit=PROFILE_FACTS)
        )
        names_job = pool.submit(ports.contacts.list_persons, user_id)
        profile, facts = profile_job.result(), [f.text for f in facts_job.result()]
        names = _names(names_job.result())
    if version is not None:
        blob = json.dumps(
            {
                "version": version,
                "profile": profile.model_dump(mode="json"),
                "facts": facts,
                "names": names,
            }
        )
        with suppress(DependencyUnavailable):  # a cache: the turn goes on without it
            ports.cache.set(key, cipher.encrypt(blob, "cache.context"), CONTEXT_TTL_SECONDS)
    return profile, facts, names


KNOWN_NAMES = 500  # a bound on what a turn carries; most users know far fewer


def _names(persons: list[Person]) -> list[str]:
    """Each person's name and aliases, once each, most recently changed people first."""
    newest = sorted(persons, key=lambda p: p.updated_at or p.created_at or _EPOCH, reverse=True)
    names = dict.fromkeys(n for p in newest for n in (p.display_name, *p.aliases))
    return list(names)[:KNOWN_NAMES]


def _cache_read(ports: TurnPorts, user_id: str) -> tuple[int | None, bytes | None]:
    """(context version, cached value); (None, None) when Redis cannot be read."""
    try:
        return context_version(ports.cache, user_id), ports.cache.get(context_key(user_id))
    except DependencyUnavailable:
        log.warning("context cache unavailable, loading from the stores")
        return None, None


def build(checkpointer: bool | None = False) -> Any:
    """``checkpointer=False``: the turn's thread is checkpointed by the parent graph only."""
    graph = StateGraph(TurnState, context_schema=TurnContext)
    graph.add_node("session_init", session_init)
    graph.add_node("summarize", summarize)
    graph.add_node("context_loader", context_loader)
    graph.add_edge(START, "session_init")
    graph.add_conditional_edges(
        "session_init", after_session_init, ["summarize", "context_loader", "__end__"]
    )
    graph.add_edge("summarize", "context_loader")
    return graph.compile(name="entry", checkpointer=checkpointer)
