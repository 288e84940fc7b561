"""The human-in-the-loop rules: escalation triggers and their priorities, the three modes,
and trust levels (promotion at the thresholds, demotion on a serious incident, a pinned
mode winning over the level)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.config import Settings
from shared.models.trust import (
    ActionContext,
    HitlMode,
    Outcome,
    Priority,
    Trigger,
    TrustLevel,
    TrustRecord,
    TrustSettings,
)
from shared.services.hitl_policy import (
    effective_mode,
    escalate,
    fired_triggers,
    looks_sensitive,
    needs_approval,
    record_outcome,
    trust_settings,
)
from shared.services.hitl_trust import next_level

NOW = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)
MODES: tuple[HitlMode, ...] = ("human_in_command", "human_in_the_loop", "human_on_the_loop")
LIMITS = {"cost_limit_usd": 1.0, "min_confidence": 0.6, "max_consecutive_failures": 3}


def action(**changes: Any) -> ActionContext:
    """A harmless action: fires no trigger until a test says otherwise."""
    fields: dict[str, Any] = {
        "agent": "researcher",
        "tool": "search_web",
        "sensitive": False,
        "confidence": 0.9,
        "estimated_cost_usd": 0.01,
        "consecutive_failures": 0,
        "in_scope": True,
    }
    return ActionContext.model_validate({**fields, **changes})


def under(mode: HitlMode) -> TrustSettings:
    return TrustSettings(mode=mode, **LIMITS)


# -- triggers -------------------------------------------------------------------------------------
FIRING: dict[Trigger, dict[str, Any]] = {
    Trigger.SENSITIVE_ACTION: {"sensitive": True},
    Trigger.COST_OVER_LIMIT: {"estimated_cost_usd": 1.01},
    Trigger.LOW_CONFIDENCE: {"confidence": 0.59},
    Trigger.CONSECUTIVE_FAILURES: {"consecutive_failures": 3},
    Trigger.OUT_OF_SCOPE: {"in_scope": False},
}
AT_THE_LIMIT = [  # the seed's comparisons: cost >, confidence <, failures >=
    {"estimated_cost_usd": 1.0},
    {"confidence": 0.6},
    {"consecutive_failures": 2},
]


def test_a_harmless_action_fires_nothing() -> None:
    assert fired_triggers(action(), under("human_in_the_loop")) == []


@pytest.mark.parametrize("trigger", list(Trigger))
def test_each_trigger_fires_on_its_condition(trigger: Trigger) -> None:
    assert fired_triggers(action(**FIRING[trigger]), under("human_in_the_loop")) == [trigger]


@pytest.mark.parametrize("changes", AT_THE_LIMIT)
def test_at_the_limit_nothing_fires(changes: dict[str, Any]) -> None:
    assert fired_triggers(action(**changes), under("human_in_the_loop")) == []


def test_the_priorities_are_the_seeds() -> None:
    assert {t: t.priority for t in Trigger} == {
        Trigger.SENSITIVE_ACTION: Priority.HIGHEST,
        Trigger.COST_OVER_LIMIT: Priority.HIGH,
        Trigger.LOW_CONFIDENCE: Priority.MEDIUM,
        Trigger.CONSECUTIVE_FAILURES: Priority.MEDIUM,
        Trigger.OUT_OF_SCOPE: Priority.LOW,
    }


def test_every_fired_trigger_is_reported_highest_priority_first() -> None:
    everything = {k: v for changes in FIRING.values() for k, v in changes.items()}
    decision = escalate(action(**everything), under("human_in_the_loop"))
    assert decision is not None
    assert decision.triggers == [
        Trigger.SENSITIVE_ACTION,
        Trigger.COST_OVER_LIMIT,
        Trigger.LOW_CONFIDENCE,
        Trigger.CONSECUTIVE_FAILURES,
        Trigger.OUT_OF_SCOPE,
    ]
    assert decision.trigger is Trigger.SENSITIVE_ACTION
    assert "search_web" in decision.reason


@pytest.mark.parametrize(
    ("fired", "expected"),
    [
        ({"estimated_cost_usd": 5.0, "confidence": 0.1}, Trigger.COST_OVER_LIMIT),
        ({"confidence": 0.1, "consecutive_failures": 9}, Trigger.LOW_CONFIDENCE),
        ({"consecutive_failures": 9, "in_scope": False}, Trigger.CONSECUTIVE_FAILURES),
    ],
)
def test_the_highest_priority_trigger_is_named(fired: dict[str, Any], expected: Trigger) -> None:
    decision = escalate(action(**fired), under("human_in_the_loop"))
    assert decision is not None and decision.trigger is expected


@pytest.mark.parametrize(
    "tool", ["send_email", "sendEmail", "delete-fact", "publish", "share_document", "pay_invoice"]
)
def test_tools_named_after_a_sensitive_verb_are_sensitive(tool: str) -> None:
    assert looks_sensitive(tool)
    assert fired_triggers(action(tool=tool), under("human_on_the_loop")) == [
        Trigger.SENSITIVE_ACTION
    ]


@pytest.mark.parametrize("tool", ["search_web", "display", "payload_check", "list_notes"])
def test_other_tool_names_are_not(tool: str) -> None:
    assert not looks_sensitive(tool)


@pytest.mark.parametrize(
    ("trigger", "words"),
    [
        (Trigger.SENSITIVE_ACTION, "confirmation"),
        (Trigger.COST_OVER_LIMIT, "$1.01 is over the limit of $1.00"),
        (Trigger.LOW_CONFIDENCE, "0.59 is below 0.60"),
        (Trigger.CONSECUTIVE_FAILURES, "3 consecutive failures"),
        (Trigger.OUT_OF_SCOPE, "out of scope"),
    ],
)
def test_the_reason_says_why(trigger: Trigger, words: str) -> None:
    decision = escalate(action(**FIRING[trigger]), under("human_in_command"))
    assert decision is not None and words in decision.reason


# -- modes ----------------------------------------------------------------------------------------
def test_in_command_every_action_needs_approval() -> None:
    decision = escalate(action(), under("human_in_command"))
    assert decision is not None
    assert (decision.escalation, decision.trigger, decision.triggers) == ("approve", None, [])
    assert decision.reason == "human-in-command: every action is approved"
    for trigger, changes in FIRING.items():
        fired = escalate(action(**changes), under("human_in_command"))
        assert fired is not None and (fired.escalation, fired.trigger) == ("approve", trigger)


@pytest.mark.parametrize(
    ("trigger", "in_the_loop", "on_the_loop"),
    [
        (Trigger.SENSITIVE_ACTION, "approve", "approve"),  # always confirmed: irreversible
        (Trigger.COST_OVER_LIMIT, "approve", "notify"),
        (Trigger.LOW_CONFIDENCE, "approve", "notify"),
        (Trigger.CONSECUTIVE_FAILURES, "approve", "notify"),
        (Trigger.OUT_OF_SCOPE, "notify", "notify"),
    ],
)
def test_what_each_mode_does_with_each_trigger(
    trigger: Trigger, in_the_loop: str, on_the_loop: str
) -> None:
    expectations: dict[HitlMode, str] = {
        "human_in_the_loop": in_the_loop,
        "human_on_the_loop": on_the_loop,
    }
    proposed = action(**FIRING[trigger])
    for mode, expected in expectations.items():
        decision = escalate(proposed, under(mode))
        assert decision is not None
        assert (decision.escalation, decision.trigger, decision.mode) == (expected, trigger, mode)
        assert needs_approval(proposed, under(mode)) == (expected == "approve")


@pytest.mark.parametrize("mode", ["human_in_the_loop", "human_on_the_loop"])
def test_without_a_trigger_the_looser_modes_do_not_escalate(mode: HitlMode) -> None:
    assert escalate(action(), under(mode)) is None
    assert not needs_approval(action(), under(mode))


def test_a_low_trigger_with_a_blocking_one_blocks() -> None:
    decision = escalate(action(in_scope=False, confidence=0.2), under("human_in_the_loop"))
    assert decision is not None
    assert (decision.escalation, decision.trigger) == ("approve", Trigger.LOW_CONFIDENCE)


def test_the_deployed_limits_apply() -> None:
    settings = Settings(
        hitl_cost_limit_usd=0.5, hitl_min_confidence=0.8, hitl_max_consecutive_failures=2
    )
    limits = trust_settings(TrustRecord(level="proficient"), settings)
    assert limits == TrustSettings(
        mode="human_in_the_loop",
        cost_limit_usd=0.5,
        min_confidence=0.8,
        max_consecutive_failures=2,
    )
    assert fired_triggers(
        action(estimated_cost_usd=0.6, confidence=0.7, consecutive_failures=2), limits
    ) == [
        Trigger.COST_OVER_LIMIT,
        Trigger.LOW_CONFIDENCE,
        Trigger.CONSECUTIVE_FAILURES,
    ]


actions = st.builds(
    ActionContext,
    agent=st.just("writer"),
    tool=st.sampled_from(["search_web", "send_email", "draft_note"]),
    sensitive=st.booleans(),
    confidence=st.floats(0.0, 1.0),
    estimated_cost_usd=st.floats(0.0, 5.0),
    consecutive_failures=st.integers(0, 6),
    in_scope=st.booleans(),
)


@given(actions)
def test_a_stricter_mode_never_asks_less(proposed: ActionContext) -> None:
    approve = [needs_approval(proposed, under(mode)) for mode in MODES]
    assert approve[0]  # in command
    assert approve[1] or not approve[2]  # on the loop approves only what in the loop does
    fired = fired_triggers(proposed, under("human_in_the_loop"))
    assert [t.priority for t in fired] == sorted((t.priority for t in fired), reverse=True)
    for mode in MODES[1:]:
        decision = escalate(proposed, under(mode))
        assert (decision is None) == (fired == [])
        assert decision is None or decision.trigger == fired[0]


# -- trust levels ---------------------------------------------------------------------------------
def record(**changes: Any) -> TrustRecord:
    return TrustRecord.model_validate(changes)


def novice_ready(**changes: Any) -> TrustRecord:
    """One success short of proficient, on every other condition exactly at the threshold."""
    fields = {"tasks_completed": 49, "first_task_at": NOW - 7 * DAY}
    return record(**{**fields, **changes})


def proficient_ready(**changes: Any) -> TrustRecord:
    """One success short of expert, on every other condition exactly at the threshold."""
    fields = {
        "level": "proficient",
        "tasks_completed": 199,
        "first_task_at": NOW - 30 * DAY,
        "level_since": NOW - 20 * DAY,
    }
    return record(**{**fields, **changes})


def level_after_success(before: TrustRecord) -> TrustLevel:
    return record_outcome(before, "success", NOW).level


@pytest.mark.parametrize(
    ("before", "expected"),
    [
        (novice_ready(), "proficient"),  # 50 tasks, 100 %, 7 days, no incident
        (novice_ready(tasks_completed=48), "novice"),  # 49 tasks
        (novice_ready(tasks_completed=53, tasks_failed=6), "proficient"),  # 54/60 = 90 %
        (novice_ready(tasks_completed=53, tasks_failed=7), "novice"),  # 54/61 < 90 %
        (novice_ready(first_task_at=NOW - 7 * DAY + timedelta(seconds=1)), "novice"),  # 6 days
        (novice_ready(last_incident_at=NOW - 7 * DAY), "proficient"),  # 7 days without
        (novice_ready(last_incident_at=NOW - 7 * DAY + timedelta(seconds=1)), "novice"),
    ],
)
def test_novice_to_proficient_exactly_at_the_thresholds(
    before: TrustRecord, expected: TrustLevel
) -> None:
    assert level_after_success(before) == expected


@pytest.mark.parametrize(
    ("before", "expected"),
    [
        (proficient_ready(), "expert"),  # 200 tasks, 100 %, 30 days, no incident
        (proficient_ready(tasks_completed=198), "proficient"),  # 199 tasks
        (proficient_ready(tasks_completed=244, tasks_failed=5), "expert"),  # 245/250 = 98 %
        (proficient_ready(tasks_completed=244, tasks_failed=6), "proficient"),  # < 98 %
        (proficient_ready(first_task_at=NOW - 30 * DAY + timedelta(seconds=1)), "proficient"),
        (proficient_ready(last_incident_at=NOW - 30 * DAY), "expert"),
        (proficient_ready(last_incident_at=NOW - 30 * DAY + timedelta(seconds=1)), "proficient"),
    ],
)
def test_proficient_to_expert_exactly_at_the_thresholds(
    before: TrustRecord, expected: TrustLevel
) -> None:
    assert level_after_success(before) == expected


def test_a_promotion_records_when_it_happened() -> None:
    after = record_outcome(novice_ready(), "success", NOW)
    assert (after.level, after.level_since, after.tasks_completed) == ("proficient", NOW, 50)
    assert effective_mode(after) == "human_in_the_loop"
    unchanged = record_outcome(novice_ready(tasks_completed=10), "success", NOW)
    assert (unchanged.level, unchanged.level_since) == ("novice", None)


def test_a_record_meeting_both_rules_climbs_two_levels() -> None:
    after = record_outcome(
        novice_ready(tasks_completed=199, first_task_at=NOW - 40 * DAY), "success", NOW
    )
    assert (after.level, after.level_since) == ("expert", NOW)


def test_the_first_outcome_starts_the_clock() -> None:
    first = record_outcome(TrustRecord(), "failure", NOW)
    assert (first.first_task_at, first.tasks_failed, first.tasks_completed) == (NOW, 1, 0)
    later = record_outcome(first, "success", NOW + DAY)
    assert later.first_task_at == NOW


def test_an_ordinary_failure_counts_and_demotes_nothing() -> None:
    expert = record(
        level="expert", tasks_completed=300, tasks_failed=50, first_task_at=NOW - 99 * DAY
    )
    after = record_outcome(expert, "failure", NOW)
    assert (after.level, after.tasks_failed, after.serious_incidents) == ("expert", 51, 0)
    assert after.last_incident_at is None


@pytest.mark.parametrize("level", ["expert", "proficient"])
def test_a_serious_incident_drops_any_level_to_novice(level: TrustLevel) -> None:
    before = record(level=level, tasks_completed=400, first_task_at=NOW - 99 * DAY)
    after = record_outcome(before, "serious_incident", NOW)
    assert after == before.model_copy(
        update={
            "level": "novice",
            "level_since": NOW,
            "tasks_failed": 1,
            "serious_incidents": 1,
            "last_incident_at": NOW,
        }
    )
    assert effective_mode(after) == "human_in_command"


def test_a_novice_incident_keeps_the_level_and_its_start() -> None:
    after = record_outcome(
        record(tasks_completed=3, first_task_at=NOW - DAY), "serious_incident", NOW
    )
    assert (after.level, after.level_since, after.last_incident_at) == ("novice", None, NOW)


def test_after_an_incident_the_no_incident_windows_gate_the_climb_back() -> None:
    history = record(level="expert", tasks_completed=400, first_task_at=NOW - 99 * DAY)
    after = record_outcome(history, "serious_incident", NOW)
    after = record_outcome(after, "success", NOW + 6 * DAY)
    assert after.level == "novice"
    after = record_outcome(after, "success", NOW + 7 * DAY)
    assert after.level == "proficient"
    after = record_outcome(after, "success", NOW + 29 * DAY)
    assert after.level == "proficient"
    after = record_outcome(after, "success", NOW + 30 * DAY)
    assert after.level == "expert"


@pytest.mark.parametrize("level", ["novice", "proficient", "expert"])
@pytest.mark.parametrize("pinned", MODES)
def test_a_pinned_mode_wins_over_the_level(level: TrustLevel, pinned: HitlMode) -> None:
    assert effective_mode(record(level=level, pinned_mode=pinned)) == pinned


@pytest.mark.parametrize(
    ("level", "mode"),
    [
        ("novice", "human_in_command"),
        ("proficient", "human_in_the_loop"),
        ("expert", "human_on_the_loop"),
    ],
)
def test_unpinned_the_mode_follows_the_level(level: TrustLevel, mode: HitlMode) -> None:
    assert effective_mode(record(level=level)) == mode


def test_a_pin_survives_promotion_and_demotion() -> None:
    pinned = novice_ready(pinned_mode="human_in_command")
    promoted = record_outcome(pinned, "success", NOW)
    demoted = record_outcome(promoted, "serious_incident", NOW)
    assert (promoted.level, promoted.pinned_mode) == ("proficient", "human_in_command")
    assert (demoted.level, effective_mode(demoted)) == ("novice", "human_in_command")
    on_the_loop = record_outcome(record(pinned_mode="human_on_the_loop"), "serious_incident", NOW)
    assert effective_mode(on_the_loop) == "human_on_the_loop"


def test_next_level_lists_each_condition() -> None:
    almost = novice_ready(tasks_completed=40, tasks_failed=10, last_incident_at=NOW - 2 * DAY)
    step = next_level(almost, NOW)
    assert step is not None
    assert (step.level, step.mode, step.eligible) == ("proficient", "human_in_the_loop", False)
    assert [(r.name, r.required, r.current, r.met) for r in step.requirements] == [
        ("tasks_completed", 50, 40, False),
        ("success_rate", 0.9, 0.8, False),
        ("days_since_first_task", 7, 7, True),
        ("days_since_last_incident", 7, 2, False),
    ]
    fresh = next_level(TrustRecord(), NOW)
    assert fresh is not None
    assert [(r.current, r.met) for r in fresh.requirements] == [
        (0, False),
        (None, False),  # no task yet: no rate
        (None, False),
        (None, True),  # no incident ever
    ]
    assert next_level(record(level="expert"), NOW) is None


outcomes = st.lists(
    st.sampled_from(["success", "success", "success", "failure", "serious_incident"]), max_size=60
)


@given(outcomes, st.integers(0, 3 * 24))
def test_outcomes_are_counted_and_an_incident_always_ends_at_novice(
    sequence: list[Outcome], hours_between: int
) -> None:
    current = TrustRecord()
    for i, outcome in enumerate(sequence):
        current = record_outcome(current, outcome, NOW + i * timedelta(hours=hours_between))
        if outcome == "serious_incident":
            assert current.level == "novice"
    assert current.tasks_completed == sequence.count("success")
    assert current.tasks_failed == len(sequence) - sequence.count("success")
    assert current.serious_incidents == sequence.count("serious_incident")
