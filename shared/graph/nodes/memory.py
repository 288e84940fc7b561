"""Stage 4, the memory pipeline: who is meant, what we know, what to remember.

``entity_resolution`` runs the fact system's resolver on the classifier's mentions (keyed
name hashes, roles, nicknames; no model call without descriptors). The retrieval router
then skips retrieval, runs the hybrid retrieval, or it and the upcoming-window read in
parallel;
``memory_assembly`` groups what was found by person. ``fact_extraction`` only *plans* the
background extraction with the turn's resolutions (and the facts the understanding tier
read whole, which the task stores without a model call); ``message_persist`` enqueues it with the
turn's other writes, and a blocking question defers it until the person is known.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextvars import copy_context
from typing import Any

from langgraph.graph import START, StateGraph
from langgraph.runtime import Runtime

from shared.conversation.text import fold
from shared.graph.context import TurnContext
from shared.graph.degraded import memory_optional
from shared.graph.early_reply import MemorySteps, Step
from shared.graph.instrument import node
from shared.graph.reply_prompt import PER_ENTITY
from shared.graph.routing import ambiguity_blocks, route_retrieval
from shared.graph.state import (
    EARLIER,
    Ambiguity,
    Candidate,
    FactView,
    MemoryState,
    Resolved,
    SessionView,
    TurnState,
    merge,
)
from shared.models.domain import ExtractionTask, ResolvedEntity
from shared.models.memory import Fact, Person, TemporalQuery
from shared.services.memory.profiles import Mention
from shared.services.memory.resolution import RESOLVED, Resolution, Resolver, red_flag_facts
from shared.services.memory.retrieval import RecallRequest, Retriever
from shared.services.memory.understanding import RECENT_MESSAGES
from shared.services.memory.windows import window_for

SEMANTIC_LIMIT = 8
TEMPORAL_LIMIT = 10
PER_GROUP = 30  # facts of a group the question names ("my family")


@node("entity_resolution")
@memory_optional("entity_resolution")
def entity_resolution(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    return _early_or(runtime.context, state, resolve)


def resolve(state: TurnState, context: TurnContext) -> dict[str, Any]:
    intent = state.intent
    known = {fold(r.mention) for r in state.memory.resolved}
    mentions = [e for e in (intent.entities if intent else []) if fold(e.name) not in known]
    if not mentions:
        return {}
    ports, user = context.ports, context.user_id

    facts_of = red_flag_facts(ports.facts, user)  # read only if the red-flag check runs
    resolver = Resolver(
        user, ports.contacts, ports.embedder, context.llm, facts_of, [], state.conversation.focus
    )
    resolved, ambiguous = list(state.memory.resolved), []
    for entity in mentions:
        relation = {"relation": entity.role} if entity.role else {}
        outcome = resolver.resolve(Mention(entity.name, None, relation))
        if outcome.outcome in ("user", "person"):
            resolved.append(_resolved(outcome))
        elif outcome.outcome == "ambiguous" and outcome.candidate_ids:
            ambiguous.append(_ambiguity(context, outcome))
    return {"memory": MemoryState(resolved=resolved, ambiguous=ambiguous)}


def _resolved(outcome: Resolution) -> Resolved:
    person = outcome.person
    return Resolved(
        mention=outcome.mention,
        person_id=person.id if person and outcome.outcome == "person" else None,
        display_name=person.display_name if person else "user",
        confidence=outcome.confidence,
    )


def _ambiguity(context: TurnContext, outcome: Resolution) -> Ambiguity:
    known = {p.id: p for p in context.ports.contacts.list_persons(context.user_id)}
    persons = [known[pid] for pid in outcome.candidate_ids if pid in known]
    return Ambiguity(
        mention=outcome.mention,
        candidates=[Candidate(person_id=p.id, label=_label(p)) for p in persons],
    )


def _label(person: Person) -> str:
    """What tells namesakes apart: the relation as the user said it ("sister"), else the
    role, and one descriptor if known."""
    relation = person.descriptors.get("relation") or person.role_to_user.replace("_", " ")
    details = [] if relation == "other" else [relation]
    details += [person.descriptors[k] for k in _LABEL_DESCRIPTORS if k in person.descriptors][:1]
    return f"{person.display_name} ({', '.join(details)})" if details else person.display_name


_LABEL_DESCRIPTORS = ("employer", "city", "occupation", "age")


@node("semantic_retrieval")
@memory_optional("semantic_retrieval")
def semantic_retrieval(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    """Hybrid retrieval (``services/memory/retrieval.py``): references in the question read
    against the recent conversation, dense + keyword + temporal + session channels fused."""
    return _early_or(runtime.context, state, recall)


def recall(state: TurnState, context: TurnContext) -> dict[str, Any]:
    conversation = state.conversation
    ports = context.ports
    request = RecallRequest(
        question=conversation.focus,
        recent=[m.text for m in conversation.history[-RECENT_MESSAGES:]],
        limit=SEMANTIC_LIMIT,
        timezone=conversation.profile.timezone,
        privacy_mode=conversation.profile.privacy_mode,
        boost_subject_ids=[r.person_id for r in state.memory.resolved if r.person_id],
    )
    found_by = Retriever.of(ports).recall(context.user_id, request, ports.clock.now())
    temporal = found_by.plan.temporal
    views = [_view(i.fact, i.score, temporal) for i in found_by.items if i.fact is not None]
    sessions = [
        SessionView(chat_id=n.chat_id, summary=n.summary, started_at=n.started_at,
                    covers_until=n.covers_until)
        for i in found_by.items if (n := i.session) is not None
    ]  # fmt: skip
    recalled = [item.key for item in found_by.items]
    found = MemoryState(semantic=views, sessions=sessions, recalled=recalled)
    roles = set(state.intent.about_roles) if state.intent else set()
    from shared.understanding.answers import asks_about_the_user  # the tier loads on use

    about_me = asks_about_the_user(conversation.focus)
    if not roles and not about_me:
        return {"memory": found}
    # "What do you know about my family / about me?": their facts, whatever the words are near.
    group = [p for p in ports.contacts.list_persons(context.user_id) if p.role_to_user in roles]
    whose: list[str | None] = [p.id for p in group] + ([None] if about_me else [])
    current = ports.facts.current_facts(context.user_id, whose)[:PER_GROUP]
    seen = {v.id for v in views}
    views += [_view(fact, 1.0, temporal) for fact in current if fact.id not in seen]
    return {
        "memory": found.model_copy(
            update={
                "semantic": views,
                "subjects": {p.id: p.display_name for p in group},
                "roles": {p.id: p.role_to_user for p in group},
            }
        )
    }


@node("temporal_retrieval")
@memory_optional("temporal_retrieval")
def temporal_retrieval(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    return _early_or(runtime.context, state, in_windows)


def in_windows(state: TurnState, context: TurnContext) -> dict[str, Any]:
    conversation = state.conversation
    references = (state.intent.temporal_references if state.intent else []) or ["upcoming"]
    now = context.ports.clock.now()
    seen: dict[str, FactView] = {}
    for reference in references:
        start, end = window_for(reference, now, conversation.profile.timezone)
        query = TemporalQuery(
            start=start, end=end, limit=TEMPORAL_LIMIT,
            privacy_mode=conversation.profile.privacy_mode, at=now,
        )  # fmt: skip
        for fact in context.ports.facts.in_window(context.user_id, query):
            seen.setdefault(fact.id, _view(fact, 1.0))
    return {"memory": MemoryState(temporal=list(seen.values()))}


def _view(fact: Fact, score: float, temporal: bool = False) -> FactView:
    return FactView(
        id=fact.id,
        subject_id=fact.subject_entity_id,
        text=fact.text,
        time_anchor=fact.time_anchor,
        stated=fact.valid_from if temporal else None,
        score=round(score, 6),
    )


@node("memory_assembly")
@memory_optional("memory_assembly")
def memory_assembly(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    return _early_or(runtime.context, state, assemble)


def assemble(state: TurnState, context: TurnContext) -> dict[str, Any]:
    memory = state.memory
    names = {
        **memory.subjects,
        **{r.person_id: r.display_name for r in memory.resolved if r.person_id},
    }
    unknown = {f.subject_id for f in [*memory.semantic, *memory.temporal]} - set(names) - {None}
    if unknown:
        persons = context.ports.contacts.list_persons(context.user_id)
        names.update({p.id: p.display_name for p in persons if p.id in unknown})
    grouped: dict[str, list[str]] = {}
    if state.conversation.profile_facts:
        grouped["user"] = list(state.conversation.profile_facts[:PER_ENTITY])
    for fact in [*memory.semantic, *memory.temporal]:  # retrieval's order: best first
        key = "user" if fact.subject_id is None else names.get(fact.subject_id, "someone")
        texts = grouped.setdefault(key, [])
        line = _line(fact)
        if line not in texts and len(texts) < PER_ENTITY:
            texts.append(line)
    for session in memory.sessions:
        grouped.setdefault(EARLIER, []).append(
            f"{session.started_at.date().isoformat()} to"
            f" {session.covers_until.date().isoformat()}: {session.summary}"
        )
    return {"memory": MemoryState(facts_by_entity=grouped, subjects=names)}


def _line(fact: FactView) -> str:
    when = f" ({fact.time_anchor.date().isoformat()})" if fact.time_anchor else ""
    said = f" (said on {fact.stated.date().isoformat()})" if fact.stated else ""
    return f"{fact.text}{when}{said}"


@node("fact_extraction")
def fact_extraction(state: TurnState, runtime: Runtime[TurnContext]) -> dict[str, Any]:
    intent, conversation, context = state.intent, state.conversation, runtime.context
    if intent is None or not intent.has_extractable_facts or state.memory.extraction:
        return {}
    task = ExtractionTask(
        user_id=context.user_id,
        chat_id=context.chat_id,
        turn_id=conversation.focus_turn_id,
        message_id=conversation.focus_message_id,
        text=conversation.focus,
        resolved_entities=[
            ResolvedEntity(mention=r.mention, person_id=r.person_id, confidence=r.confidence)
            for r in state.memory.resolved
            if r.confidence >= RESOLVED and not r.new_person
        ],
        has_preferences=intent.has_preferences,
        timezone=conversation.profile.timezone,
        enqueued_at=context.ports.clock.now(),
        stated=intent.stated,  # read whole by the understanding tier: no model call
        fallback=intent.fallback,
        # Only a tier reader stores them: a model reader's task does not carry them.
        said=intent.said if context.ports.settings.extraction_reader == "understanding" else None,
    )
    deferred = bool(state.memory.ambiguous) and ambiguity_blocks(intent)
    return {"memory": MemoryState(extraction=task, extraction_deferred=deferred)}


def _early_or(context: TurnContext, state: TurnState, step: Step) -> dict[str, Any]:
    """The step's update: the one the classify node made ahead for a speculative reply
    (``early_reply``) when it read exactly these inputs, else the step run now."""
    early = context.speculation.taken(inputs(step, state))
    return early if early is not None else step(state, context)


def ahead(context: TurnContext, state: TurnState, steps: list[Step]) -> TurnState:
    """``state`` after the steps, run now side by side from it (as the stage's parallel
    branches) and kept for the stage to take (``_early_or``)."""
    if len(steps) > 1:
        with ThreadPoolExecutor(len(steps), thread_name_prefix="early-memory") as pool:
            runs = [pool.submit(copy_context().run, step, state, context) for step in steps]
            updates = [run.result() for run in runs]
    else:
        updates = [step(state, context) for step in steps]
    found = state.memory
    for step, update in zip(steps, updates, strict=True):
        context.speculation.keep(inputs(step, state), update)
        found = merge(found, update.get("memory")) or found
    return state.model_copy(update={"memory": found})


def inputs(step: Step, state: TurnState) -> str:
    """What of the state the step reads: equal inputs, the same update (within a turn)."""
    intent, memory, conversation = state.intent, state.memory, state.conversation
    profile = conversation.profile
    parts: tuple[object, ...]
    if step is resolve:
        parts = (intent.entities if intent else [], memory.resolved, conversation.focus)
    elif step is recall:
        recent = [m.text for m in conversation.history[-RECENT_MESSAGES:]]
        ids = [r.person_id for r in memory.resolved]
        roles = intent.about_roles if intent else []
        parts = (conversation.focus, recent, profile.timezone, profile.privacy_mode, ids, roles)
    elif step is in_windows:
        references = intent.temporal_references if intent else []
        parts = (references, profile.timezone, profile.privacy_mode)
    else:
        parts = (
            memory.semantic, memory.temporal, memory.sessions, memory.subjects,
            memory.resolved, conversation.profile_facts,
        )  # fmt: skip
    return f"{step.__name__}:{parts!r}"


EARLY = MemorySteps(
    resolve=resolve,
    retrieval={"semantic_retrieval": recall, "temporal_retrieval": in_windows},
    assemble=assemble,
    ahead=ahead,
)


def build(checkpointer: bool | None = False) -> Any:
    """``checkpointer=False``: the turn's thread is checkpointed by the parent graph only."""
    graph = StateGraph(TurnState, context_schema=TurnContext)
    for name, fn in (
        ("entity_resolution", entity_resolution),
        ("semantic_retrieval", semantic_retrieval),
        ("temporal_retrieval", temporal_retrieval),
        ("memory_assembly", memory_assembly),
        ("fact_extraction", fact_extraction),
    ):
        graph.add_node(name, fn)
    graph.add_edge(START, "entity_resolution")
    graph.add_conditional_edges(
        "entity_resolution",
        route_retrieval,
        ["semantic_retrieval", "temporal_retrieval", "memory_assembly"],
    )
    graph.add_edge("semantic_retrieval", "memory_assembly")
    graph.add_edge("temporal_retrieval", "memory_assembly")
    graph.add_edge("memory_assembly", "fact_extraction")
    graph.add_edge("fact_extraction", "__end__")
    return graph.compile(name="memory", checkpointer=checkpointer)
