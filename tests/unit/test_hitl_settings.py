"""The human-in-the-loop settings paths of the memory function, on the in-memory fakes, and
the store-level helpers the turn graph and the agents runner call."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from shared.adapters.clock import FixedClock
from shared.app.settings.api import SettingsApi, operation_for
from shared.deps import Deps
from shared.errors import BadRequest
from shared.models.memory_api import Empty
from shared.models.trust import ActionContext, Trigger, TrustRecord, UpdateHitlRequest
from shared.services.hitl import escalation_for, record_task_outcome
from shared.web import parse_json

ALICE, BOB = "alice", "bob"
GET, UPDATE = "/settings/hitl/get", "/settings/hitl/update"


def run(deps: Deps, user: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """One call as the function makes it: the table's model parses the JSON body."""
    operation = operation_for(path)
    request = parse_json(json.dumps(body or {}).encode(), operation.request)
    result: dict[str, Any] = operation.run(SettingsApi(deps), user, request).model_dump(mode="json")
    hitl: dict[str, Any] = result["hitl"]
    return hitl


def test_the_paths_take_their_models() -> None:
    assert operation_for(GET).request is Empty
    assert operation_for(UPDATE + "/").request is UpdateHitlRequest


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
    with pytest.raises(BadRequest):
        run(deps, ALICE, UPDATE, body)
    assert deps.trust.get(ALICE) == TrustRecord()


def test_the_get_path_takes_no_fields(deps: Deps) -> None:
    with pytest.raises(BadRequest):
        run(deps, ALICE, GET, {"level": "expert"})


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
