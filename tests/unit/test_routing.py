"""Properties of the pure routing functions over generated states."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from shared.graph import routing
from shared.graph.state import (
    Ambiguity,
    Candidate,
    Hitl,
    Intent,
    MemoryState,
    Planning,
    PlanStep,
    Resolved,
    StepResult,
    TurnState,
)
from shared.models.domain import PendingQuestion
from shared.models.wire import Interrupt

intents = st.builds(
    Intent,
    route=st.sampled_from(["greeting", "simple", "complex"]),
    has_extractable_facts=st.booleans(),
    needs_semantic_retrieval=st.booleans(),
    needs_temporal_retrieval=st.booleans(),
)
ambiguities = st.lists(
    st.builds(
        Ambiguity,
        mention=st.just("Tom"),
        candidates=st.just([Candidate(person_id="p1", label="Tom")]),
    ),
    max_size=2,
)
resolved = st.lists(
    st.builds(Resolved, mention=st.just("Ann"), person_id=st.sampled_from([None, "p2"])),
    max_size=2,
)


def _question(kind: str, blocking: bool) -> PendingQuestion:
    return PendingQuestion(
        interrupt=Interrupt(id="q1", kind=kind, question="?"),  # type: ignore[arg-type]
        blocking=blocking,
        turn_id="t1",
        asked_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


questions = st.builds(
    _question,
    kind=st.sampled_from(["disambiguation", "approval"]),
    blocking=st.booleans(),
)
hitls = st.builds(
    Hitl,
    pending=st.none() | questions,
    outcome=st.sampled_from(["none", "answered", "escaped", "kept"]),
    ask=st.none() | questions,
)


@st.composite
def states(draw: st.DrawFn) -> TurnState:
    return TurnState(
        intent=draw(st.none() | intents),
        memory=MemoryState(ambiguous=draw(ambiguities), resolved=draw(resolved)),
        hitl=draw(hitls),
    )


@given(states())
def test_retrieval_is_never_empty_and_temporal_always_comes_with_semantic(
    state: TurnState,
) -> None:
    targets = routing.route_retrieval(state)
    assert targets
    if "temporal_retrieval" in targets:
        assert "semantic_retrieval" in targets
    if targets == ["memory_assembly"]:
        intent = state.intent
        assert intent is None or not (
            intent.needs_semantic_retrieval or intent.needs_temporal_retrieval
        )
        assert intent is None or not any(r.person_id for r in state.memory.resolved)


@given(states())
def test_ambiguity_is_skipped_only_without_one_and_blocks_per_intent(state: TurnState) -> None:
    target = routing.route_ambiguity(state)
    if not state.memory.ambiguous:
        assert target == routing.END
    elif routing.ambiguity_blocks(state.intent):
        assert target == "disambiguation_blocking"
    else:
        assert target == "disambiguation_simple"


@given(states())
def test_greetings_go_straight_to_the_response(state: TurnState) -> None:
    greeting = state.intent is not None and state.intent.route == "greeting"
    assert (routing.after_classification(state) == "response") == greeting


@given(states())
def test_a_blocking_question_always_wins_the_ui_route(state: TurnState) -> None:
    if state.hitl.ask is not None and state.hitl.ask.blocking:
        assert routing.ui_route(state) == "hitl_text"


@given(states())
def test_only_an_answer_resumes_anywhere_but_classification(state: TurnState) -> None:
    """...or a question kept to be asked again ("yes" to "at what time?"): the response."""
    target = routing.after_hitl(state)
    if state.hitl.outcome == "kept" and state.hitl.ask is not None:
        assert target == "response"
    elif state.hitl.outcome != "answered" or state.hitl.pending is None:
        assert target == "classification"
    elif state.hitl.pending.interrupt.kind == "approval":
        assert target == "planning"


steps = st.lists(
    st.builds(
        PlanStep,
        id=st.sampled_from(["s1", "s2", "s3", "s4"]),
        agent=st.just("research"),
        depends_on=st.lists(st.sampled_from(["s1", "s2", "s3", "s4"]), max_size=2),
    ),
    max_size=4,
    unique_by=lambda step: step.id,
)


@given(steps, st.lists(st.sampled_from(["s1", "s2", "s3", "s4"]), unique=True))
def test_ready_steps_are_unhandled_with_every_dependency_handled(
    plan: list[PlanStep], handled: list[str]
) -> None:
    results = [StepResult(step_id=s, status="done") for s in handled]
    state = TurnState(planning=Planning(steps=plan, results=results))
    ready = routing.next_step_ids(state)
    for step in plan:
        expected = step.id not in handled and all(d in handled for d in step.depends_on)
        assert (step.id in ready) == expected
    assert (routing.more_steps(state) == "agent_execution") == bool(ready)
    asking = state.model_copy(update={"hitl": Hitl(ask=_question("approval", True))})
    assert routing.more_steps(asking) == routing.END
