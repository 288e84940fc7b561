"""Trust levels: how an assistant earns autonomy, and loses it. Pure.

Each level gives a HITL mode (``MODE_OF_LEVEL``): novice -> human-in-command, proficient ->
human-in-the-loop, expert -> human-on-the-loop. The user may pin a mode instead
(``effective_mode``).

``record_outcome`` counts one finished task and then applies the rules:

- promotion, one rule per level, every condition at or above its threshold (a value
  exactly at the threshold counts as met):

  ===================  =====  ============  =================  ======================
  from -> to           tasks  success rate  days since first   days since last
                                            task               incident (if any)
  ===================  =====  ============  =================  ======================
  novice -> proficient    50  90 %           7                  7
  proficient -> expert   200  98 %          30                 30
  ===================  =====  ============  =================  ======================

  "tasks" are successful tasks; the success rate is successes over all finished tasks
  (incidents included), compared exactly (integers, no float rounding); days are whole days
  (floor). An outcome may promote two levels at once when the record meets both rules (say
  the first task after a month without incident).
- demotion: a serious incident drops any level straight to novice: a protection of the
  user, not a punishment of the assistant.
  Counters are lifetime and kept: the incident's no-incident windows (7 days, then 30) are
  what the assistant has to sit out before it climbs back. An ordinary failure only counts.

A pinned mode is the user's explicit choice and survives promotions and demotions.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from shared.models.trust import (
    HitlMode,
    NextLevel,
    Outcome,
    Requirement,
    TrustLevel,
    TrustRecord,
)

DAY = timedelta(days=1)

MODE_OF_LEVEL: dict[TrustLevel, HitlMode] = {
    "novice": "human_in_command",
    "proficient": "human_in_the_loop",
    "expert": "human_on_the_loop",
}


@dataclass(frozen=True)
class UpgradeRule:
    target: TrustLevel
    min_tasks: int
    min_success_percent: int
    min_days: int
    no_incident_days: int


UPGRADES: dict[TrustLevel, UpgradeRule] = {
    "novice": UpgradeRule("proficient", 50, 90, 7, 7),
    "proficient": UpgradeRule("expert", 200, 98, 30, 30),
}


def effective_mode(record: TrustRecord) -> HitlMode:
    """The pinned mode if the user chose one, else the mode of the trust level."""
    return record.pinned_mode or MODE_OF_LEVEL[record.level]


def success_rate(record: TrustRecord) -> float | None:
    finished = record.tasks_completed + record.tasks_failed
    return record.tasks_completed / finished if finished else None


def record_outcome(record: TrustRecord, outcome: Outcome, now: datetime) -> TrustRecord:
    """The record after one more finished task: counted, then promoted or demoted."""
    changes: dict[str, object] = {"first_task_at": record.first_task_at or now}
    if outcome == "success":
        changes["tasks_completed"] = record.tasks_completed + 1
    else:
        changes["tasks_failed"] = record.tasks_failed + 1
    if outcome == "serious_incident":
        changes.update(serious_incidents=record.serious_incidents + 1, last_incident_at=now)
        if record.level != "novice":
            changes.update(level="novice", level_since=now)
    counted = record.model_copy(update=changes)
    return counted if outcome == "serious_incident" else _promoted(counted, now)


def next_level(record: TrustRecord, now: datetime) -> NextLevel | None:
    """What the next level needs, condition by condition; None at the top."""
    rule = UPGRADES.get(record.level)
    if rule is None:
        return None
    requirements = _requirements(record, rule, now)
    return NextLevel(
        level=rule.target,
        mode=MODE_OF_LEVEL[rule.target],
        eligible=all(r.met for r in requirements),
        requirements=requirements,
    )


def _promoted(record: TrustRecord, now: datetime) -> TrustRecord:
    while (step := next_level(record, now)) is not None and step.eligible:
        record = record.model_copy(update={"level": step.level, "level_since": now})
    return record


def _requirements(record: TrustRecord, rule: UpgradeRule, now: datetime) -> list[Requirement]:
    finished = record.tasks_completed + record.tasks_failed
    rate_met = record.tasks_completed * 100 >= rule.min_success_percent * finished
    started = _days(record.first_task_at, now)
    quiet = _days(record.last_incident_at, now)
    return [
        Requirement(
            name="tasks_completed",
            required=rule.min_tasks,
            current=record.tasks_completed,
            met=record.tasks_completed >= rule.min_tasks,
        ),
        Requirement(
            name="success_rate",
            required=rule.min_success_percent / 100,
            current=success_rate(record),
            met=finished > 0 and rate_met,
        ),
        Requirement(
            name="days_since_first_task",
            required=rule.min_days,
            current=started,
            met=started is not None and started >= rule.min_days,
        ),
        Requirement(
            name="days_since_last_incident",
            required=rule.no_incident_days,
            current=quiet,
            met=quiet is None or quiet >= rule.no_incident_days,
        ),
    ]


def _days(since: datetime | None, now: datetime) -> int | None:
    return None if since is None else (now - since) // DAY
