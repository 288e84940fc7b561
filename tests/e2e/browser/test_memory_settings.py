"""The memory settings in a real browser: merging two persons, and an account exported,
deleted and signed into again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from shared.deps import Deps
from tests.e2e.browser.conftest import go_to, messages, open_chats, send, sign_in
from tests.e2e.conftest import Served, new_user
from tests.e2e.memory_kit import seed

pytestmark = [pytest.mark.e2e, pytest.mark.stack]

SON_FACTS = {"Martin is eight years old", "Martin plays football on Saturdays"}


def open_memory(page: Page) -> None:
    go_to(page, "Memory & settings")
    expect(page.get_by_role("region", name="People")).to_be_visible()


def test_merging_two_persons_moves_the_facts(
    phone: BrowserContext, web_url: str, served: Served, stores: Deps
) -> None:
    seeded = seed(stores, new_user())
    page = phone.new_page()
    sign_in(page, web_url, seeded.user)
    open_memory(page)
    people = page.get_by_role("region", name="People")
    colleague = people.get_by_role("article", name="Martin (colleague)")
    colleague.get_by_role("button", name="Merge…").click()
    colleague.get_by_label("Martin is the same person as").select_option(label="Martin (child)")
    colleague.get_by_role("button", name="Merge", exact=True).click()
    expect(people.get_by_role("article")).to_have_count(1)
    expect(people.get_by_role("article", name="Martin (child)")).to_be_visible()

    facts = page.get_by_role("region", name="Facts")
    facts.get_by_label("Facts about").select_option(label="Martin (child)")
    shown = facts.get_by_role("list", name="Current facts").locator(".fact-text")
    expect(shown).to_have_count(3)
    moved = {*SON_FACTS, "Martin works in accounting"}
    assert set(shown.all_inner_texts()) == moved
    stored = served.facts(seeded.user, f'subject_id = "{seeded.son.id}"')
    assert {fact["text"] for fact in stored} == moved
    persons = served.memory(seeded.user, "GET", "/v1/persons").json()["persons"]
    assert [p["id"] for p in persons] == [seeded.son.id]


def test_export_then_delete_the_account_then_sign_in_to_an_empty_account(
    phone: BrowserContext, web_url: str, served: Served, stores: Deps
) -> None:
    seeded = seed(stores, new_user())
    user = seeded.user
    page = phone.new_page()
    sign_in(page, web_url, user)
    send(page, "Please remember my umbrella")
    expect(messages(page).locator(".message.assistant:not(.live)")).to_have_count(1)
    open_memory(page)

    with page.expect_download() as download:
        page.get_by_role("button", name="Export everything (JSON)").click()
    exported = json.loads(Path(download.value.path()).read_text())
    assert exported["user_id"] == user
    assert len(exported["persons"]) == 2 and len(exported["conversations"]["chats"]) == 1
    assert download.value.suggested_filename == f"assistant-export-{user}.json"

    delete = page.get_by_role("button", name="Delete my account")
    confirm = page.get_by_label("To delete your account", exact=False)
    confirm.fill("delete someone-else")
    expect(delete).to_be_disabled()
    confirm.fill(f"delete {user}")
    delete.click()
    expect(page.get_by_role("button", name="Sign in")).to_be_visible()

    sign_in(page, web_url, user)
    expect(open_chats(page).get_by_role("listitem")).to_have_count(0)
    open_memory(page)
    expect(page.get_by_role("region", name="People")).to_contain_text("No people yet.")
    expect(page.get_by_role("region", name="Open questions")).to_contain_text("Nothing waits")
    no_one = served.memory(user, "GET", "/v1/persons").json()
    assert no_one == {"persons": [], "next_page_token": ""}
    assert served.api("GET", "/v1/chats", user).json() == {"chats": [], "next_page_token": ""}
    export = served.memory(user, "GET", "/v1/account:export").json()
    assert (export["facts"], export["conversations"]["chats"]) == ([], [])
