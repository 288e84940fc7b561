"""``GET /v1/jobs`` pages the user's jobs by their last change: no duplicate and no gap while
jobs change between pages; a token works only for its user and list. The jobs are stored as
the agents function stores them (``FirestoreJobStore``), paused, so no run picks them up."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from google.cloud import firestore

from shared.adapters.firestore_jobs import FirestoreJobStore
from shared.models.jobs import AgentJob
from shared.services.agent_jobs.jobstate import new_state
from tests.e2e.conftest import Served, new_user, refused

pytestmark = [pytest.mark.e2e, pytest.mark.stack]
T0 = datetime.now(UTC) - timedelta(hours=1)


def store_job(jobs: FirestoreJobStore, user: str, index: int, minutes: int) -> str:
    job_id = f"t{index:04d}-job0"
    job = AgentJob(job_id=job_id, user_id=user, chat_id="c1", turn_id=f"t{index:04d}",
                   agent="research", goal=f"goal {index}", created_at=T0)  # fmt: skip
    state = new_state(job, "bench", T0, 1).model_copy(
        update={
            "status": "paused",
            "lease_owner": None,
            "lease_until": None,
            "updated_at": T0 + timedelta(minutes=minutes),
        }
    )
    jobs.update(user, job_id, lambda stored: (None, state))
    return job_id


def page(served: Served, user: str, token: str = "") -> dict[str, Any]:
    params: dict[str, Any] = {"page_size": 2, **({"page_token": token} if token else {})}
    answer = served.api("GET", "/v1/jobs", user, params=params)
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def test_jobs_page_without_duplicate_or_gap_while_they_change(served: Served) -> None:
    user = new_user()
    jobs = FirestoreJobStore(firestore.Client(project=os.environ["GCP_PROJECT"]))
    stored = [store_job(jobs, user, index, minutes=index) for index in range(5)]
    first = page(served, user)
    assert [j["id"] for j in first["jobs"]] == [stored[4], stored[3]]
    assert first["jobs"][0]["status"] == "paused" and first["jobs"][0]["goal"] == "goal 4"
    store_job(jobs, user, 9, minutes=30)  # newer than every page: not in the later pages
    seen, token = [j["id"] for j in first["jobs"]], first["next_page_token"]
    while token:
        later = page(served, user, token)
        seen += [j["id"] for j in later["jobs"]]
        token = later["next_page_token"]
    assert seen == stored[::-1]
    assert page(served, user)["jobs"][0]["id"] == "t0009-job0"
    foreign = served.api(
        "GET", "/v1/jobs", new_user(), params={"page_token": first["next_page_token"]}
    )
    assert refused(foreign) == (400, "invalid_page_token")
    got = served.api("GET", f"/v1/jobs/{stored[0]}", user).json()
    assert (got["id"], got["chat_id"], got["subtasks"][0]["agent"]) == (stored[0], "c1", "research")
    cancelled = served.api("POST", f"/v1/jobs/{stored[0]}:cancel", user)
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
