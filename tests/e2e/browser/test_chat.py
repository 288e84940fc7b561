"""The chat in a real browser: a streamed reply, a retried message, a reply with a numbered
list that is no question, a disambiguation, an approval with a double click, and one question
answered in two tabs."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
from google.cloud import firestore
from playwright.sync_api import Browser, BrowserContext, Page, Request, Route, expect

from tests.e2e.browser.conftest import ROOT, messages, open_chats, seed_thomases, send, sign_in
from tests.e2e.conftest import Served, new_user, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.stack]
MESSAGES = re.compile(r"/v1/chats/[^/]+/messages")  # a chat's turns (POST) and polls (GET)

README_SHOT = ROOT / "docs" / "web-chat-question.png"
ASK_THOMAS = "[facts] [ask] @Thomas moved to Bern; what does he like?"
# Records every state of the reply streaming in (the live message), as the user saw it.
WATCH_LIVE = """() => {
  window.liveStates = [];
  new MutationObserver(() => {
    const live = document.querySelector('[data-live]');
    if (live) window.liveStates.push([live.textContent, Number(live.dataset.chunks)]);
  }).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


def assistant_says(page: Page, text: str) -> None:
    reply = messages(page).locator(".message.assistant:not(.live)", has_text=text)
    expect(reply).to_have_count(1, timeout=30_000)


def test_a_reply_streams_in_chunk_by_chunk(phone: BrowserContext, web_url: str) -> None:
    page = phone.new_page()
    sign_in(page, web_url, new_user())
    page.evaluate(WATCH_LIVE)
    send(page, "[slowly] Tell me about the sea")
    assistant_says(page, "You said: [slowly] Tell me about the sea")
    states: list[list[Any]] = page.evaluate("window.liveStates")
    partial = [text for text, chunks in states if chunks >= 1]
    assert len(set(partial)) > 1, states  # seen growing, before the closing event
    assert all("You said: [slowly] Tell me about the sea".startswith(t) for t in partial)
    assert max(chunks for _, chunks in states) > 1
    expect(page.locator("[data-live]")).to_have_count(0)


def test_a_message_whose_reply_was_lost_is_retried_once_with_the_same_id(
    phone: BrowserContext, web_url: str, served: Served
) -> None:
    page = phone.new_page()
    user = new_user()
    sign_in(page, web_url, user)
    sent: list[dict[str, Any]] = []

    def lose_the_first_reply(route: Route) -> None:
        if route.request.method != "POST":  # the chat's polls pass
            route.continue_()
            return
        sent.append(json.loads(route.request.post_data or "{}"))
        if len(sent) == 1:
            route.fetch()  # the turn runs on the server...
            route.abort("connectionreset")  # ...and its reply never reaches the browser
        else:
            route.continue_()

    page.route(MESSAGES, lose_the_first_reply)
    send(page, "Remember to buy oat milk")
    assistant_says(page, "You said: Remember to buy oat milk")
    assert len(sent) == 2 and sent[0]["client_message_id"] == sent[1]["client_message_id"]
    [chat] = served.api("GET", "/v1/chats", user).json()["chats"]
    stored = served.messages(user, chat["id"]).json()
    assert [m["role"] for m in stored["messages"]] == ["user", "assistant"]  # the turn ran once
    chats = open_chats(page)
    expect(chats).to_contain_text("Remember to buy oat milk")  # its title, from the message


def test_a_reply_with_a_numbered_list_is_shown_as_said_not_as_a_question(
    phone: BrowserContext, web_url: str
) -> None:
    page = phone.new_page()
    sign_in(page, web_url, new_user())
    send(page, "Pack for Rome:\n1. shoes\n2. a hat")
    assistant_says(page, "You said: Pack for Rome:\n1. shoes\n2. a hat")
    reply = messages(page).locator(".message.assistant:not(.live)")
    expect(reply).to_have_attribute("data-kind", "text")
    expect(messages(page)).not_to_contain_text("Asked:")


def lose_polls(route: Route) -> None:
    if route.request.method == "GET":
        route.abort()
    else:
        route.continue_()


def test_a_disambiguation_answered_by_a_button_stores_the_fact_on_that_person(
    browser: Browser, web_url: str, served: Served
) -> None:
    user = new_user()
    ids = seed_thomases(user)
    context = browser.new_context(viewport={"width": 600, "height": 720})
    page = context.new_page()
    sign_in(page, web_url, user)
    send(page, ASK_THOMAS)
    question = page.get_by_role("region", name="Who do you mean?")
    expect(question).to_contain_text("Thomas")
    options = question.get_by_role("button")
    expect(options).to_have_text(["Thomas (colleague)", "Thomas (sibling)", "Someone else"])
    asked = messages(page).locator(".message.asked")
    expect(asked).to_have_text("Asked: Who do you mean?")  # the card says the rest
    expect(asked).to_have_attribute("data-kind", "question")
    save_readme_shot(page, README_SHOT)
    question.get_by_role("button", name="Thomas (sibling)").click()
    assistant_says(page, f"You said: {ASK_THOMAS}")
    expect(question).to_have_count(0)
    expect(asked).to_have_text("Asked: Who do you mean?")  # answered: the line stays short

    def facts_of_the_sibling() -> list[str]:
        return [f["text"] for f in served.facts(user, f'subject_id = "{ids["sibling"]}"')]

    assert wait_for(facts_of_the_sibling) == ["Thomas moved to Bern; what does he like?"]
    assert served.facts(user, f'subject_id = "{ids["colleague"]}"') == []
    context.close()


def save_readme_shot(page: Page, path: Path) -> None:
    """docs/web-client.md's picture of the chat with a question open (the conversation only: no
    dates or user names; whole-pixel edges: the same picture each run)."""
    expect(messages(page).locator(".message.assistant")).to_have_count(1)
    page.locator(":focus").blur()
    box = page.locator(".conversation").bounding_box()
    assert box is not None
    margin = 8  # a little of the page around it, the clip on whole pixels
    clip = {
        "x": math.floor(box["x"]) - margin,
        "y": math.floor(box["y"]) - margin,
        "width": math.ceil(box["width"]) + 2 * margin,
        "height": math.ceil(box["height"]) + 2 * margin,
    }
    page.screenshot(path=str(path), clip=clip, animations="disabled")


def test_an_approval_double_clicked_sends_the_email_once(
    phone: BrowserContext, web_url: str, db: firestore.Client
) -> None:
    page = phone.new_page()
    user = new_user()
    sign_in(page, web_url, user)
    answers: list[Request] = []
    page.on("request", lambda r: answers.append(r) if r.url.endswith(":answer") else None)
    send(page, "[act] Email Bea the itinerary for Rome")
    plan = page.get_by_role("region", name="May I go ahead?")
    expect(plan).to_contain_text("Shall I go ahead with this? Email Bea the itinerary")
    plan.get_by_role("button", name="Yes, go ahead").dblclick()
    jobs = page.get_by_role("region", name="Tasks")
    expect(jobs.get_by_role("button", name="Pause", exact=False)).to_be_visible()
    send_mail = page.get_by_role("region", name="May I go ahead?")  # the job asks, polled
    expect(send_mail).to_contain_text("may I send this email?", timeout=20_000)
    send_mail.get_by_role("button", name="Yes, go ahead").dblclick()
    expect(messages(page).get_by_text("Done.", exact=False)).to_be_visible(timeout=30_000)
    expect(jobs.locator(".job-status")).to_have_text("done")
    assert len(answers) == 2  # one answer per question, whatever the clicks
    outbox = list(db.collection(f"users/{user}/outbox").stream())
    assert len(outbox) == 1


def test_one_question_answered_in_two_tabs_wins_once_and_the_other_says_already_answered(
    browser: Browser, web_url: str
) -> None:
    user = new_user()
    seed_thomases(user)
    first_context = browser.new_context(viewport={"width": 390, "height": 844})
    second_context = browser.new_context(viewport={"width": 390, "height": 844})
    first, second = first_context.new_page(), second_context.new_page()
    sign_in(first, web_url, user)
    send(first, ASK_THOMAS)
    expect(first.get_by_role("region", name="Who do you mean?")).to_be_visible()
    sign_in(second, web_url, user)
    open_chats(second).get_by_role("button", name="question").click()
    on_second = second.get_by_role("region", name="Who do you mean?")
    expect(on_second).to_be_visible()
    second.route(MESSAGES, lose_polls)  # its next polls are lost

    first.get_by_role("button", name="Thomas (colleague)").click()
    assistant_says(first, f"You said: {ASK_THOMAS}")
    on_second.get_by_role("button", name="Thomas (sibling)").click()
    expect(second.get_by_role("status")).to_have_text(
        "Already answered: this question was answered elsewhere or is no longer open."
    )
    expect(second.get_by_role("alert")).to_have_count(0)  # not shown as a failure
    expect(on_second).to_have_count(0)
    second.unroute(MESSAGES)  # the next poll brings the other tab's answer
    assistant_says(second, f"You said: {ASK_THOMAS}")
    first_context.close()
    second_context.close()
