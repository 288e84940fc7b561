"""The dev stack's Cloud Scheduler (``scripts/stacklib/scheduler.py``) is let in: each job's
run, with its token, is accepted by the function it calls, as terraform's jobs are."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scripts import serve
from scripts.stacklib.scheduler import JOBS, run
from tests.e2e.conftest import PROFILE, STATE, Served

pytestmark = [pytest.mark.e2e, pytest.mark.stack]  # last: the served functions hold the ports


def test_every_job_the_scheduler_plays_is_accepted(served: Served) -> None:
    env = serve.read_env(PROFILE)
    assert {job.name: run(job, env, str(STATE)) for job in JOBS} == {job.name: 200 for job in JOBS}


def test_a_job_with_the_other_audience_is_refused(served: Served) -> None:
    env = serve.read_env(PROFILE)
    for job in JOBS:  # the token must name what terraform's names, nothing else
        other = replace(job, audience_is_function=not job.audience_is_function)
        assert run(other, env, str(STATE)) in (401, 403), job.name
