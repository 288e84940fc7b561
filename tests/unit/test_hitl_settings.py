"""The human-in-the-loop settings (``/v1/settings/hitl``) of the memory function, on the
in-memory fakes, and the store-level helpers the turn graph and the agents runner call."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from shared.deps import Deps
from shared.fakes.clock import FixedClock
from shared.models.trust import ActionContext, Trigger, TrustRecord
from shared.services.hitl import escalation_for, record_task_outcome
from tests.unit.memory_calls import call

ALICE, BOB = "alice", "bob"
GET, UPDATE = "GET", "PATCH"
PATH = "/v1/settings/hitl"


def run(deps: Deps, user: str, method: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """The settings without their etag (the tests below compare the rest)."""
    answer = call(deps, user, method, PATH, body)
    assert answer.status == 200, answer.body
    return {name: value for name, value in answer.body.items() if name != "etag"}


def test_a_new_user_is_a_novice_in_command(deps: Deps) -> None:
    hitl = run(deps, ALICE, GET)
    assert {k: v for k, v in hitl.items() if k != "next_level"} == {
        "level": "novice",
        "mode": "human_in_command",
        "level_mode": "human_in_command",
        "pinned_mode": None,
        "tasks_completed": 0,
        "tasks_failed": 0,
        "serious_incidents": 0,
        "success_rate": None,
        "first_task_at": None,
        "last_incident_at": None,
        "level_since": None,
        "updated_at": None,
    }
    assert hitl["next_level"] == {
        "level": "proficient",
        "mode": "human_in_the_loop",
        "eligible": False,
        "requirements": [
            {"name": "tasks_completed", "required": 50, "current": 0, "met": False},
            {"name": "success_rate", "required": 0.9, "current": None, "met": False},
            {"name": "days_since_first_task", "required": 7, "current": None, "met": False},
            {"name": "days_since_last_incident", "required": 7, "current": None, "met": True},
        ],
    }


def test_pin_and_unpin_change_only_the_mode(deps: Deps, clock: FixedClock) -> None:
    for _ in range(3):
        record_task_outcome(deps.trust, ALICE, "success", clock.now())
    record_task_outcome(deps.trust, ALICE, "failure", clock.now())
    clock.advance(60)
    pinned = run(deps, ALICE, UPDATE, {"pinned_mode": "human_on_the_loop"})
    assert (pinned["mode"], pinned["level_mode"], pinned["pinned_mode"]) == (
        "human_on_the_loop",
        "human_in_command",
        "human_on_the_loop",
    )
    assert (pinned["tasks_completed"], pinned["tasks_failed"], pinned["success_rate"]) == (
        3,
        1,
        0.75,
    )
    assert pinned["updated_at"] == clock.now().isoformat().replace("+00:00", "Z")
    assert run(deps, ALICE, GET) == pinned
    assert run(deps, BOB, GET)["pinned_mode"] is None

    unpinned = run(deps, ALICE, UPDATE, {"pinned_mode": None})
    assert unpinned == {**pinned, "mode": "human_in_command", "pinned_mode": None}
    assert run(deps, ALICE, UPDATE, {"pinned_mode": None}) == unpinned  # a retry: the same


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"pinned_mode": "autopilot"},
        {"pinned_mode": 1},
        {"pinned_mode": None, "tasks_completed": 500},
        {"pinned_mode": None, "level": "expert"},
        {"level": "expert"},
    ],
)
def test_anything_but_a_mode_is_refused(deps: Deps, body: dict[str, Any]) -> None:
    assert call(deps, ALICE, UPDATE, PATH, body).status == 400
    assert deps.trust.get(ALICE) == TrustRecord()


def test_the_get_takes_no_parameters(deps: Deps) -> None:
    assert call(deps, ALICE, GET, PATH, level="expert").status == 400


def test_the_etag_is_of_the_pinned_mode_only(deps: Deps, clock: FixedClock) -> None:
    before = call(deps, ALICE, GET, PATH).body["etag"]
    record_task_outcome(deps.trust, ALICE, "success", clock.now())  # the product's counters
    assert call(deps, ALICE, GET, PATH).body["etag"] == before
    pin = {"pinned_mode": "human_on_the_loop", "etag": before}
    assert call(deps, ALICE, UPDATE, PATH, pin).status == 200
    stale = call(deps, ALICE, UPDATE, PATH, {"pinned_mode": None}, {"If-Match": f'"{before}"'})
    assert (stale.status, stale.code) == (412, "stale_etag")
    assert deps.trust.get(ALICE).pinned_mode == "human_on_the_loop"


def test_the_escalation_follows_the_stored_mode(deps: Deps, clock: FixedClock) -> None:
    costly = ActionContext(
        agent="executor", tool="book_flight", sensitive=False, confidence=0.9, estimated_cost_usd=3
    )
    settings = deps.settings
    first = escalation_for(deps.trust, settings, ALICE, costly)
    assert first is not None and (first.escalation, first.trigger) == (
        "approve",
        Trigger.COST_OVER_LIMIT,
    )
    deps.trust.put_settings(ALICE, "human_on_the_loop", clock.now())
    notified = escalation_for(deps.trust, settings, ALICE, costly)
    assert notified is not None and notified.escalation == "notify"
    cheap = costly.model_copy(update={"estimated_cost_usd": 0.1})
    assert escalation_for(deps.trust, settings, ALICE, cheap) is None


def test_recorded_outcomes_promote_and_a_serious_incident_demotes(
    deps: Deps, clock: FixedClock
) -> None:
    start = clock.now()
    for i in range(50):
        record_task_outcome(deps.trust, ALICE, "success", start + timedelta(hours=4 * i))
    promoted = run(deps, ALICE, GET)  # 50 tasks over 8 days and 4 hours
    assert (promoted["level"], promoted["mode"]) == ("proficient", "human_in_the_loop")
    assert promoted["next_level"]["level"] == "expert"

    later = start + timedelta(days=9)
    stored = record_task_outcome(deps.trust, ALICE, "serious_incident", later)
    assert (stored.level, stored.level_since, stored.last_incident_at) == ("novice", later, later)
    demoted = run(deps, ALICE, GET)
    assert (demoted["level"], demoted["serious_incidents"], demoted["tasks_failed"]) == (
        "novice",
        1,
        1,
    )
