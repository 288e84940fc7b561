"""Human in the loop over HTTP against the emulators: checkpoints in Firestore, exactly one
resume per interrupt, approval timeouts through the Cloud Tasks emulator, escapes."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from google.cloud import firestore

from shared.config import Settings
from shared.services.hitl_timeouts import timeout_url
from tests.e2e.conftest import Served, new_user, wait_for
from tests.e2e.test_background_work import internal_headers
from tests.e2e.test_turn_graph_over_http import facts_by_subject, seed_namesakes

pytestmark = [pytest.mark.e2e, pytest.mark.stack]


def _turn(served: Served, user: str, message: str, chat_id: str | None = None) -> dict[str, Any]:
    body = {"message": message, "client_message_id": uuid.uuid4().hex, "chat_id": chat_id}
    response = served.say(user, body)
    assert response.status_code == 200, response.text
    return dict(response.json())


def _resume(served: Served, user: str, asked: dict[str, Any], answer: str) -> httpx.Response:
    return served.answer(user, asked["chat_id"], asked["interrupt"]["id"], answer)


def _chat(db: firestore.Client, user: str, chat_id: str) -> dict[str, Any]:
    ref = db.collection("users").document(user).collection("chats").document(chat_id)
    return ref.get().to_dict() or {}


def _texts(db: firestore.Client, user: str, chat_id: str) -> list[str]:
    ref = db.collection("users").document(user).collection("chats").document(chat_id)
    messages = ref.collection("messages").order_by("created_at").stream()
    return [str((m.to_dict() or {})["text"]) for m in messages]


def _ask_which_thomas(served: Served, user: str) -> tuple[dict[str, Any], dict[str, str]]:
    ids = seed_namesakes(user)
    asked = _turn(served, user, "[facts] [ask] @Thomas moved to Bern; what does he like?")
    assert asked["interrupt"]["kind"] == "disambiguation"
    return asked, ids


def test_a_fresh_process_resumes_what_another_interrupted(
    served: Served, db: firestore.Client
) -> None:
    user = new_user()
    asked, ids = _ask_which_thomas(served, user)
    control = _chat(db, user, asked["chat_id"])["control"]
    assert (control["status"], control["thread_id"]) == ("pending", asked["turn_id"])
    assert control["checkpoint_id"]  # the checkpoint the answer resumes from
    served.restart()  # process A is gone; B knows only what Firestore holds
    answered = _resume(served, user, asked, ids["sibling"])
    assert answered.status_code == 200, answered.text
    assert answered.json()["reply"]["text"].startswith("You said: [facts] [ask] @Thomas")
    stored = wait_for(lambda: facts_by_subject(user))
    assert [(text, subject) for text, subject, _ in stored] == [
        ("Thomas moved to Bern; what does he like?", ids["sibling"])
    ]
    assert _chat(db, user, asked["chat_id"])["control"]["status"] == "idle"


def test_concurrent_answers_resume_once(served: Served, db: firestore.Client) -> None:
    user = new_user()
    asked, ids = _ask_which_thomas(served, user)
    answers = [ids["sibling"], ids["colleague"], "1", "2", ids["sibling"], "someone else"]
    with ThreadPoolExecutor(max_workers=len(answers)) as pool:
        responses = list(pool.map(lambda a: _resume(served, user, asked, a), answers))
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200, *[409] * (len(answers) - 1)], [r.text for r in responses]
    assert {r.json()["error"]["code"] for r in responses if r.status_code == 409} == {
        "interrupt_not_pending"
    }
    replies = [t for t in _texts(db, user, asked["chat_id"]) if t.startswith("You said:")]
    assert len(replies) == 1  # the one answer ran; no second run of the resumed thread
    stored = wait_for(lambda: facts_by_subject(user))
    assert len(stored) == 1  # the deferred extraction ran once
    late = _resume(served, user, asked, ids["sibling"])
    assert (late.status_code, late.json()["error"]["code"]) == (409, "interrupt_not_pending")


def test_an_unanswered_approval_is_rejected_by_its_timeout_once(
    served: Served, db: firestore.Client
) -> None:
    user = new_user()
    asked = _turn(served, user, "[act] Book the gym for Friday 3pm")
    assert asked["interrupt"]["kind"] == "approval"
    told = wait_for(
        lambda: [t for t in _texts(db, user, asked["chat_id"]) if "did not hear back" in t],
        seconds=60,
    )
    assert len(told) == 1
    late = _resume(served, user, asked, "approve")
    assert (late.status_code, late.json()["error"]["code"]) == (409, "interrupt_not_pending")
    assert _chat(db, user, asked["chat_id"])["control"]["status"] == "idle"
    texts = _texts(db, user, asked["chat_id"])
    assert not any(t.startswith("Result for") for t in texts)  # no agent ran


def test_a_new_request_escapes_the_question(served: Served, db: firestore.Client) -> None:
    user = new_user()
    asked, _ = _ask_which_thomas(served, user)
    escaped = _turn(served, user, "What's the weather like today?", chat_id=asked["chat_id"])
    assert escaped["interrupt"] is None
    assert escaped["reply"]["text"].startswith("You said: What's the weather")
    assert _chat(db, user, asked["chat_id"])["control"]["status"] == "idle"
    late = _resume(served, user, asked, "1")
    assert (late.status_code, late.json()["error"]["code"]) == (409, "interrupt_not_pending")

    # The deferred extraction ran without a guessed person: the fact system holds it.
    def held() -> list[dict[str, Any]]:
        listed = served.memory(user, "GET", "/v1/pendingItems")
        return list(listed.json()["pending_items"])

    [item] = wait_for(held)
    assert item["kind"] == "disambiguation" and item["mention"] == "Thomas"


def test_erasing_the_account_deletes_its_checkpoint_threads(
    served: Served, db: firestore.Client
) -> None:
    user, neighbour = new_user(), new_user()
    asked, ids = _ask_which_thomas(served, user)
    assert _resume(served, user, asked, ids["sibling"]).status_code == 200
    kept, _ = _ask_which_thomas(served, neighbour)

    def checkpoints(thread_id: str) -> int:
        thread = db.collection("checkpoint_threads").document(thread_id)
        return sum(len(list(c.stream())) for c in thread.collections())

    assert checkpoints(asked["turn_id"]) == 2  # the question's turn and the answer's
    erased = served.memory(user, "DELETE", "/v1/account", confirm="true")
    assert erased.status_code == 200, erased.text
    assert checkpoints(asked["turn_id"]) == 0
    assert checkpoints(kept["turn_id"]) == 1  # another user's thread is untouched


def test_a_poll_shows_a_question_background_work_opened_and_resume_answers_it(
    served: Served, db: firestore.Client
) -> None:
    user = new_user()
    first = _turn(served, user, "[facts] My phone number is 555 0101")
    chat_id = first["chat_id"]
    wait_for(lambda: facts_by_subject(user))
    polled = served.messages(user, chat_id)
    assert polled.status_code == 200, polled.text
    assert polled.json()["question"] is None
    newest = polled.json()["messages"][-1]["created_at"]
    # a changed number, stated unsurely: the fact system holds it and asks in the chat
    changed = "[facts] [unsure] These days my phone number is 777 9999"
    _turn(served, user, changed, chat_id=chat_id)

    def asked() -> dict[str, Any] | None:
        view = served.messages(user, chat_id, filter=f'create_time > "{newest}"').json()
        return view if view["question"] else None

    view = wait_for(asked)
    interrupt = view["question"]
    assert interrupt["kind"] == "fact_conflict"
    assert all(m["created_at"] > newest for m in view["messages"])
    assert interrupt["question"] in [m["text"] for m in view["messages"]]
    answered = _resume(served, user, {"chat_id": chat_id, "interrupt": interrupt}, "take_new")
    assert answered.status_code == 200, answered.text
    texts = [text for text, _, _ in facts_by_subject(user)]
    assert "My phone number is 555 0101" not in texts  # superseded (kept in its history)
    assert "These days my phone number is 777 9999" in texts
    again = served.messages(user, chat_id)
    assert again.json()["question"] is None
    foreign = served.messages(new_user(), chat_id)
    assert (foreign.status_code, foreign.json()["error"]["code"]) == (404, "not_found")


def test_an_email_is_sent_once_after_the_plan_and_the_send_are_approved(
    served: Served, db: firestore.Client
) -> None:
    user = new_user()
    asked = _turn(served, user, "[act] Email Bea the itinerary for Rome")
    assert asked["interrupt"]["kind"] == "approval"  # the plan's acting step first
    approved = _resume(served, user, asked, "approve")
    assert approved.status_code == 200, approved.text
    [job_id] = approved.json()["jobs"]
    chat_id = asked["chat_id"]

    def send_question() -> dict[str, Any] | None:
        view = served.messages(user, chat_id).json()
        interrupt = view["question"]
        return interrupt if interrupt and interrupt["id"].startswith(job_id) else None

    question = wait_for(send_question)  # the job asks before the one sensitive call
    assert question["kind"] == "approval" and "email_send" in question["question"]
    answers = [{"chat_id": chat_id, "interrupt": question}] * 2  # a double tap
    statuses = sorted(_resume(served, user, a, "yes").status_code for a in answers)
    assert statuses == [200, 409]
    result = wait_for(lambda: dict(_texts_by_id(db, user, chat_id)).get(f"{job_id}-result"))
    assert result.startswith("Done.")
    outbox = list(db.collection(f"users/{user}/outbox").stream())
    assert len(outbox) == 1  # sent once, with the approval's key
    again = served.api("POST", f"/v1/jobs/{job_id}:cancel", user)
    assert (again.status_code, again.json()["error"]["code"]) == (409, "job_not_active")


def _texts_by_id(db: firestore.Client, user: str, chat_id: str) -> list[tuple[str, str]]:
    ref = db.collection("users").document(user).collection("chats").document(chat_id)
    return [(m.id, str((m.to_dict() or {})["text"])) for m in ref.collection("messages").stream()]


def test_the_user_cancels_a_job_that_waits_and_takes_over_its_context(
    served: Served, db: firestore.Client
) -> None:
    user = new_user()
    asked = _turn(served, user, "[act] Email Bea the itinerary for Florence")
    [job_id] = _resume(served, user, asked, "approve").json()["jobs"]
    chat_id = asked["chat_id"]

    def waiting() -> dict[str, Any] | None:
        view = served.messages(user, chat_id).json()
        return view["question"]

    question = wait_for(waiting)
    paused = served.api("POST", f"/v1/jobs/{job_id}:pause", user)
    assert (paused.status_code, paused.json()["status"]) == (200, "paused")
    cancelled = served.api("POST", f"/v1/jobs/{job_id}:cancel", user)
    assert (cancelled.status_code, cancelled.json()["status"]) == (200, "cancelled")
    assert waiting() is None  # its question left the chat
    late = _resume(served, user, {"chat_id": chat_id, "interrupt": question}, "yes")
    assert (late.status_code, late.json()["error"]["code"]) == (409, "interrupt_not_pending")
    context = served.api("POST", f"/v1/jobs/{job_id}:takeover", user)
    assert context.status_code == 200, context.text
    [subtask] = context.json()["subtasks"]
    assert subtask["agent"] == "productivity" and subtask["pending"].startswith("email_send")
    assert list(db.collection(f"users/{user}/outbox").stream()) == []  # nothing was sent
    foreign = served.api("POST", f"/v1/jobs/{job_id}:cancel", new_user())
    assert (foreign.status_code, foreign.json()["error"]["code"]) == (404, "not_found")
    listed = served.api("GET", "/v1/jobs", user).json()
    assert ([j["id"] for j in listed["jobs"]], listed["next_page_token"]) == ([job_id], "")
    job = served.api("GET", f"/v1/jobs/{job_id}", user).json()
    assert (job["status"], job["chat_id"], job["subtasks"][0]["agent"]) == (
        "cancelled", chat_id, "productivity")  # fmt: skip
    missing = served.api("GET", "/v1/jobs/nosuchjob", user)
    assert served.api("GET", f"/v1/jobs/{job_id}", new_user()).json() == missing.json()
    assert served.api("GET", "/v1/jobs", new_user()).json() == {"jobs": [], "next_page_token": ""}


def test_only_the_tasks_queue_may_deliver_a_timeout(served: Served) -> None:
    settings = Settings()
    url = served.resume_url + "timeout"
    body = {"user_id": "someone", "chat_id": "c1", "interrupt_id": "i1"}
    anonymous = httpx.post(url, json=body, timeout=30)
    as_user = served.post(url, new_user(), body)
    assert [anonymous.status_code, as_user.status_code] == [401, 401]
    headers = internal_headers(timeout_url(settings), settings.tasks_invoker_email)
    broken = httpx.post(url, content=b"{not json", headers=headers, timeout=30)
    assert (broken.status_code, broken.json()["error"]["code"]) == (200, "invalid_event")
    nothing = httpx.post(url, json=body, headers=headers, timeout=30)  # no such chat
    assert (nothing.status_code, nothing.json()) == (200, {"status": "answered_before"})
