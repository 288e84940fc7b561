"""Learning from history over HTTP, with the production Vertex client against the fake
endpoint (``model_rules``): a research job succeeds and is remembered; a similar request
then plans with no planning call (the model refuses any plan about "Unplanned") and its job
runs the adapted plan. A job aborted at the failure threshold is followed by a similar
request whose plan prompt carries the warning. A redelivered job records nothing more; the
export holds the execution memory and account deletion removes it from PostgreSQL."""

from __future__ import annotations

import base64
import json
import uuid
from typing import Any

import httpx
import pytest
from google.cloud import firestore

from scripts.stacklib.profile import PROJECT
from shared.adapters.postgres import connect
from shared.config import Settings
from testkit.model_rules import NO_PLANNING
from testkit.vertex_server import RecordedRequest
from tests.e2e.conftest import Served, new_user, wait_for
from tests.e2e.test_agent_jobs import chat_messages, job_document
from tests.e2e.test_background_work import internal_headers
from tests.e2e.test_turn_graph_over_http import turn_record

pytestmark = [pytest.mark.e2e, pytest.mark.stack]


def turn(served: Served, user: str, message: str, chat_id: str | None = None) -> dict[str, Any]:
    body = {"message": message, "client_message_id": uuid.uuid4().hex, "chat_id": chat_id}
    response = served.say(user, body)
    assert response.status_code == 200, response.text
    reply: dict[str, Any] = response.json()
    assert reply["reply"]["kind"] != "fallback", reply
    return reply


def strategies(served: Served, user: str) -> list[dict[str, Any]]:
    response = served.memory(user, "GET", "/v1/strategies")
    assert response.status_code == 200, response.text
    listed: list[dict[str, Any]] = response.json()["strategies"]
    return listed


def recorded_runs(served: Served, user: str, outcome: str) -> list[dict[str, Any]]:
    """Wait until the user's execution memory holds a run with this outcome."""
    return wait_for(
        lambda: [s for s in strategies(served, user) if s["last_outcome"] == outcome], 60
    )


def plan_prompts(served: Served, about: str) -> list[str]:
    """The system prompts of the planning calls whose request mentions ``about`` (the fake
    model keeps every test's requests: ``about`` must be this test's own words)."""

    def planning(request: RecordedRequest) -> bool:
        config = request.body.get("generationConfig") or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
        return "steps" in (schema.get("properties") or {}) and about in json.dumps(request.body)

    return [
        "".join(p.get("text", "") for p in (r.body.get("systemInstruction") or {})["parts"])
        for r in list(served.model.requests)
        if planning(r)
    ]


def turn_metadata(db: firestore.Client, user: str, turn_id: str) -> dict[str, Any]:
    return dict(turn_record(db, user, turn_id)["metadata"])


def executions_in_postgres(user: str) -> int:
    conn = connect(Settings())
    try:
        cursor = conn.cursor()
        cursor.execute(
            "SELECT (SELECT count(*) FROM executions WHERE user_id = %s)"
            " + (SELECT count(*) FROM strategy_feedback WHERE user_id = %s)",
            (user, user),
        )
        row = cursor.fetchone()
        assert row is not None
        return int(row[0])
    finally:
        conn.close()


def redeliver(served: Served, state: dict[str, Any]) -> None:
    """Pub/Sub pushes the finished job's message again (a new message id)."""
    settings = Settings()
    push = {
        "message": {
            "data": base64.b64encode(json.dumps(state["job"]).encode()).decode(),
            "messageId": f"redelivered-{uuid.uuid4().hex[:6]}",
            "attributes": {"job_id": state["job"]["job_id"]},
        },
        "subscription": f"projects/{PROJECT}/subscriptions/agent-jobs-push",
    }
    url = served.agents_url + f"projects/{PROJECT}/topics/agent-jobs"
    headers = internal_headers(settings.agents_url, settings.agents_invoker_email)
    assert httpx.post(url, json=push, headers=headers, timeout=30).status_code == 200


def test_a_plan_that_worked_is_reused_without_a_planning_call(
    served: Served, db: firestore.Client
) -> None:
    user = new_user()
    first = turn(served, user, "[complex] Research the AI agent market")
    [learned] = recorded_runs(served, user, "done")
    assert learned["requests"] == ["[complex] Research the AI agent market"]
    assert [s["goal"] for s in learned["plan"]] == ["Research the AI agent market"]

    second = turn(served, user, f"[complex] Research the {NO_PLANNING} market", first["chat_id"])
    assert plan_prompts(served, NO_PLANNING) == []  # the model was never asked to plan
    [job_id] = second["jobs"]
    result = wait_for(lambda: chat_messages(db, user, second["chat_id"]).get(f"{job_id}-result"))
    assert result == f"Result for: Research the {NO_PLANNING} market"  # the adapted plan ran
    state = job_document(db, user, job_id)
    assert state["job"]["origin"]["strategy_id"] == learned["strategy_id"]
    advice = turn_metadata(db, user, second["turn_id"])["plan_advice"]
    assert (advice["source"], advice["strategy_id"]) == ("reused", learned["strategy_id"])
    assert advice["confidence"] > 0.8

    # The second run counts for the same strategy, once, however often it is delivered.
    wait_for(lambda: strategies(served, user)[0]["runs"] == 2, 60)
    redeliver(served, state)
    [strategy] = strategies(served, user)
    assert (strategy["runs"], strategy["done"]) == (2, 2)
    exported = served.memory(user, "GET", "/v1/account:export").json()["executions"]
    assert sorted(e["request"] for e in exported) == [
        "[complex] Research the AI agent market",
        f"[complex] Research the {NO_PLANNING} market",
    ]
    assert executions_in_postgres(user) == 2

    deleted = served.memory(user, "DELETE", "/v1/account", confirm="true")
    assert deleted.status_code == 200, deleted.text
    assert executions_in_postgres(user) == 0
    assert strategies(served, user) == []


def test_a_job_aborted_at_the_threshold_warns_the_next_similar_plan(
    served: Served, db: firestore.Client
) -> None:
    user = new_user()
    turn(served, user, "[team] [fails] Plan a trip to Rome in May")
    [failed] = recorded_runs(served, user, "aborted")
    assert (failed["failed"], len(failed["plan"])) == (1, 3)
    assert {f["subtask_id"] for f in failed["failures"]} == {"s1", "s2"}  # s3 never ran

    again = turn(served, user, "[team] Plan a trip to Lisbon in June")
    [prompt] = plan_prompts(served, "Lisbon in June")
    assert "Warning: last time, for “[team] [fails] Plan a trip to Rome in May”" in prompt
    assert "failed because model_output_invalid" in prompt
    advice = turn_metadata(db, user, again["turn_id"])["plan_advice"]
    assert (advice["source"], advice["warnings"]) == ("planned", 1)
