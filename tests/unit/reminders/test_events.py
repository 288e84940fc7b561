"""What notifies besides reminders: a question waiting (told now, and again five minutes
before its timeout), a job done or failed; each task named from its notification's stable
id, so a retried turn or redelivered job schedules it once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from shared.config import Settings
from shared.fakes.queues import FakeTaskQueue
from shared.models.wire import Interrupt, InterruptOption
from shared.services.notify.events import NotifyTask, job_task, question_tasks

NOW = datetime(2026, 11, 28, 12, tzinfo=UTC)
ASKED = Interrupt(id="t1-job0-a-q1", kind="approval", question="May I send the mail to Bea?",
                  options=[InterruptOption(id="approve", label="Yes")])  # fmt: skip


def test_an_approval_is_told_now_and_again_before_it_expires() -> None:
    settings = Settings()
    tasks = question_tasks(settings, "u", "c1", ASKED, NOW, NOW + timedelta(minutes=30))
    told = [NotifyTask.model_validate_json(t.body) for t in tasks]
    assert [n.notification.kind for n in told] == ["approval_waiting", "approval_expiring"]
    assert [t.schedule_time for t in tasks] == [None, NOW + timedelta(minutes=25)]
    assert all(n.while_waiting and n.while_waiting.interrupt_id == ASKED.id for n in told)
    assert told[0].notification.target.question_id == ASKED.id
    queue = FakeTaskQueue()
    again = question_tasks(settings, "u", "c1", ASKED, NOW, NOW + timedelta(minutes=30))
    assert [queue.enqueue(t) for t in [*tasks, *again]] == [True, True, False, False]


def test_a_short_timeout_is_told_once_and_an_escalation_as_such() -> None:
    tasks = question_tasks(Settings(), "u", "c1", ASKED, NOW, NOW + timedelta(minutes=3), True)
    [told] = [NotifyTask.model_validate_json(t.body) for t in tasks]
    assert told.notification.kind == "escalation"


def test_a_job_is_told_done_or_failed_once() -> None:
    done = job_task(Settings(), "u", "c1", "t1-job0", True, "Rome in May", NOW)
    failed = job_task(Settings(), "u", "c1", "t1-job0", False, "Rome in May", NOW)
    kinds = [NotifyTask.model_validate_json(t.body).notification.kind for t in (done, failed)]
    assert kinds == ["job_done", "job_failed"] and done.name != failed.name
