"""Research grounded in web search over HTTP: the job's answer in the chat carries the
sources and search suggestions of the grounded search (the fake Vertex's documented
example), and the search's cost is counted in the job's tokens."""

from __future__ import annotations

import uuid

import pytest
from google.cloud import firestore

from testkit.vertex_grounding import REDIRECT, WIDGET
from tests.e2e.conftest import Served, new_user, wait_for
from tests.e2e.test_agent_jobs import job_document

pytestmark = [pytest.mark.e2e, pytest.mark.stack]


def test_a_grounded_answer_carries_its_sources(served: Served, db: firestore.Client) -> None:
    user = new_user()
    body = {"message": "[complex] [web] Who won the euro 2024?",
            "client_message_id": uuid.uuid4().hex}  # fmt: skip
    reply = served.say(user, body).json()
    job_id = f"{reply['turn_id']}-job0"

    def answer() -> dict | None:
        page = served.messages(user, reply["chat_id"]).json()["messages"]
        return next((m for m in page if m["id"] == f"{job_id}-result"), None)

    message = wait_for(answer)
    assert "Spain won Euro 2024" in message["text"]
    assert message["sources"] == [
        {"title": "aljazeera.com", "uri": REDIRECT + "example-aljazeera"},
        {"title": "uefa.com", "uri": REDIRECT + "example-uefa"},
    ]
    assert message["search_suggestions_html"] == WIDGET
    others = served.messages(user, reply["chat_id"]).json()["messages"]
    assert all(m["sources"] == [] for m in others if m["id"] != message["id"])
    state = wait_for(lambda: (d := job_document(db, user, job_id))["status"] == "done" and d)
    assert state["tokens_used"] >= 12 + 30  # the grounded search's tokens are counted
    assert state["web_queries_used"] == 2  # and its queries, billed apart
