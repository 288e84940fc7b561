"""JobStore contract: the fake and Firestore (emulator) keep job documents the same way, and
a claim is atomic however many deliveries race for it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from shared.adapters.firestore_jobs import FirestoreJobStore
from shared.errors import DependencyUnavailable
from shared.fakes.jobs import FakeJobStore
from shared.models.jobs import AgentJob, JobInterrupt, JobResume, JobState, Subtask
from shared.ports import JobStore
from shared.services.agent_jobs.claims import claim_change
from shared.services.agent_jobs.jobstate import new_state, with_subtask
from tests.contract.conftest import BACKENDS, _real, unique

NOW = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)


@pytest.fixture(params=BACKENDS)
def jobs(request: pytest.FixtureRequest) -> JobStore:
    if request.param == "fake":
        return FakeJobStore()
    return FirestoreJobStore(_real(request, "firestore_client"))


def job(user: str, job_id: str = "t1-job0") -> AgentJob:
    return AgentJob(
        job_id=job_id,
        user_id=user,
        chat_id="c1",
        turn_id="t1",
        goal="plan a trip",
        subtasks=[
            Subtask(id="a", agent="research", goal="hotels"),
            Subtask(id="b", agent="research", goal="compare", depends_on=["a"]),
        ],
        created_at=NOW,
    )


def test_a_written_state_reads_back_equal(jobs: JobStore, user_id: str) -> None:
    assert jobs.get(user_id, "t1-job0") is None
    state = with_subtask(new_state(job(user_id), "run-1", NOW, 600), "a", status="done",
                         result="Hotel Roma")  # fmt: skip
    assert jobs.update(user_id, "t1-job0", lambda stored: (stored, state)) is None
    assert jobs.get(user_id, "t1-job0") == state
    assert jobs.get(unique("other"), "t1-job0") is None  # under its user only


def test_a_change_that_returns_nothing_writes_nothing(jobs: JobStore, user_id: str) -> None:
    assert jobs.update(user_id, "j", lambda stored: ("looked", None)) == "looked"
    assert jobs.get(user_id, "j") is None


def test_a_failing_change_writes_nothing(jobs: JobStore, user_id: str) -> None:
    state = new_state(job(user_id, "j"), "run-1", NOW, 600)
    jobs.update(user_id, "j", lambda stored: (None, state))

    def broken(stored: JobState | None) -> tuple[None, JobState | None]:
        raise LookupError("lease lost")

    with pytest.raises(LookupError):
        jobs.update(user_id, "j", broken)
    assert jobs.get(user_id, "j") == state


def race(count: int, attempt: Callable[[int], str]) -> list[str]:
    """Run ``attempt`` in ``count`` threads at once; a transaction that kept aborting under
    the contention (the emulator locks pessimistically) is ``unavailable``, a typed error."""
    outcomes: list[str] = []
    start = threading.Barrier(count)

    def run(n: int) -> None:
        start.wait()
        try:
            outcomes.append(attempt(n))
        except DependencyUnavailable:
            outcomes.append("unavailable")

    threads = [threading.Thread(target=run, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def test_concurrent_updates_lose_nothing(jobs: JobStore, user_id: str) -> None:
    state = new_state(job(user_id, "j"), "run-1", NOW, 600)
    jobs.update(user_id, "j", lambda stored: (None, state))

    def bump(stored: JobState | None) -> tuple[str, JobState | None]:
        assert stored is not None
        return "done", stored.model_copy(update={"tokens_used": stored.tokens_used + 1})

    outcomes = race(4, lambda _n: jobs.update(user_id, "j", bump))
    stored = jobs.get(user_id, "j")
    assert stored is not None and stored.tokens_used == outcomes.count("done") >= 1


def test_one_of_racing_deliveries_claims_the_job(jobs: JobStore, user_id: str) -> None:
    delivered = job(user_id)

    def deliver(n: int) -> str:
        change = claim_change(delivered, f"run-{n}", NOW, 600)
        return jobs.update(user_id, delivered.job_id, change).outcome

    outcomes = race(4, deliver)
    assert outcomes.count("claimed") == 1
    assert set(outcomes) <= {"claimed", "busy", "unavailable"}


def test_an_answer_is_claimed_once(jobs: JobStore, user_id: str) -> None:
    waiting = new_state(job(user_id), "run-1", NOW, 600).model_copy(
        update={
            "status": "waiting",
            "lease_owner": None,
            "lease_until": None,
            "interrupt": JobInterrupt(id="q1", purpose="approval", subtask_id="a", opened=True),
        }
    )
    jobs.update(user_id, "t1-job0", lambda stored: (None, waiting))
    answer = job(user_id).model_copy(
        update={"resume": JobResume(interrupt_id="q1", option_id="approve")}
    )
    first = jobs.update(user_id, "t1-job0", claim_change(answer, "run-2", NOW, 600))
    assert first.outcome == "claimed" and first.state is not None
    assert first.state.interrupt is not None and first.state.interrupt.option_id == "approve"
    again = jobs.update(user_id, "t1-job0", claim_change(answer, "run-3", NOW, 600))
    assert again.outcome in ("busy", "duplicate")  # held by run-2, and answered already
    stored = jobs.get(user_id, "t1-job0")
    assert stored is not None and stored.answered == ["q1"]


def test_jobs_list_most_recent_first_by_pages(jobs: JobStore, user_id: str) -> None:
    for index, seconds in enumerate((0, 5, 5, 9)):
        state = new_state(job(user_id, f"t1-job{index}"), "run-1", NOW, 600)
        state = state.model_copy(update={"updated_at": NOW + timedelta(seconds=seconds)})
        jobs.update(user_id, f"t1-job{index}", lambda stored, new=state: (None, new))
    first = jobs.list_jobs(user_id, 2)
    assert [s.job.job_id for s in first] == ["t1-job3", "t1-job2"]
    last = first[-1]
    rest = jobs.list_jobs(user_id, 10, after=(last.updated_at, last.job.job_id))
    assert [s.job.job_id for s in rest] == ["t1-job1", "t1-job0"]
    assert jobs.list_jobs(unique("other"), 10) == []
