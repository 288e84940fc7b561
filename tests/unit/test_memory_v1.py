"""The memory function's /v1 conventions on the in-memory stores: methods and query
parameters refused, GET without effect, page tokens bound to user, filter and time, and
conditional writes (etags) that refuse a stale version and change nothing."""

from __future__ import annotations

import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from shared.app.settings.routes import ROUTER
from shared.deps import Deps
from shared.fakes.clock import FixedClock
from shared.models.memory import ExtractionChanges, FactDraft, FactFilter, Person
from shared.rest.origin import function_for
from tests.unit.memory_calls import call, ok, refused

ALICE, BOB = "alice", "bob"
FEEDS = "/v1/calendarFeeds/"  # the feed's public URL: served before the routes (no user)
CONTRACT = Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml"


def remember(deps: Deps, user: str, *texts: str, subject: Person | None = None) -> list[str]:
    drafts = [
        FactDraft.model_validate(
            {
                "text": text,
                "subject_entity_id": subject.id if subject else None,
                "relation_to_user": subject.role_to_user if subject else "self",
                "confidence": 0.9,
                "embedding": deps.embedder.embed([text])[0],
                "embedding_model": deps.embedder.model_name,
                "idempotency_key": text,
            }
        )
        for text in texts
    ]
    changes = ExtractionChanges(new_facts=drafts, new_persons=[subject] if subject else [])
    assert deps.facts.apply_extraction(uuid.uuid4().hex, user, changes, deps.clock.now())
    return [f.id for f in deps.facts.list_facts(user, FactFilter()) if f.text in texts]


def anna(user: str) -> Person:
    return Person(id=str(uuid.uuid4()), user_id=user, display_name="Anna", role_to_user="friend")


def state(deps: Deps) -> object:
    every = FactFilter(include_history=True, limit=1000)
    return [
        (
            [f.model_dump_json() for f in deps.facts.list_facts(user, every)],
            [p.model_dump_json() for p in deps.contacts.list_persons(user)],
            deps.profiles.get_profile(user).model_dump_json(),
            deps.trust.get(user).model_dump_json(),
        )
        for user in (ALICE, BOB)
    ]


def test_the_route_table_is_the_documented_contract() -> None:
    spec = yaml.safe_load(CONTRACT.read_text())
    documented = {
        (method.upper(), path)
        for path, item in spec["paths"].items()
        if function_for(path) == "memory" and not path.startswith(FEEDS)
        for method in item
        if method in ("get", "post", "patch", "delete", "put")
    }
    assert documented == set(ROUTER.templates())
    assert all(function_for(template) == "memory" for _, template in ROUTER.templates())


# -- methods, parameters, GET ------------------------------------------------------------------
def test_another_method_is_405_with_allow(deps: Deps) -> None:
    answer = call(deps, ALICE, "PUT", "/v1/facts/6f1d2f7e-61a1-4a0e-9f6e-3b8d2f6f0c11")
    assert (answer.status, answer.headers["Allow"]) == (405, "GET, PATCH, DELETE")
    assert call(deps, ALICE, "POST", "/v1/settings/hitl").headers["Allow"] == "GET, PATCH"
    assert call(deps, ALICE, "GET", "/v1/account").headers["Allow"] == "DELETE"
    assert refused(deps, ALICE, "POST", "/facts/list", {}) == (404, "not_found")  # gone


@pytest.mark.parametrize(
    "path", ["/v1/facts", "/v1/persons", "/v1/pendingItems", "/v1/strategies", "/v1/settings/hitl"]
)
def test_an_unknown_or_repeated_query_parameter_is_400(deps: Deps, path: str) -> None:
    assert refused(deps, ALICE, "GET", path, pageSize=5) == (400, "invalid_request")
    assert refused(deps, ALICE, "GET", f"{path}?page_size=1&page_size=2")[0] == 400


def test_no_get_changes_anything(deps: Deps, clock: FixedClock) -> None:
    person = anna(ALICE)
    [fact] = remember(deps, ALICE, "Anna likes tea", subject=person)
    values = {"fact": fact, "person": person.id, "item": str(uuid.uuid4()), "strategy": "s"}
    before = state(deps)
    gets = [template for method, template in ROUTER.templates() if method == "GET"]
    assert len(gets) == 17
    required = {  # the lists that need a window
        "/v1/calendarEvents": {"start": "2026-11-01T00:00:00Z", "end": "2026-11-08T00:00:00Z"},
        "/v1/expenses": {"month": "2026-11"},
    }
    for template in gets:
        path = template.format(**values)
        answer = call(deps, ALICE, "GET", path, **required.get(template, {}))
        assert answer.status in (200, 404), path
    assert state(deps) == before


# -- paging ------------------------------------------------------------------------------------
def page(deps: Deps, user: str, **params: Any) -> Any:
    return call(deps, user, "GET", "/v1/facts", **params)


def test_facts_page_by_keyset_with_facts_added_between_pages(deps: Deps, clock: FixedClock) -> None:
    remember(deps, ALICE, *(f"old fact {n}" for n in range(25)))
    seen: list[str] = []
    token = ""
    for round_ in range(10):
        clock.advance(1)
        remember(deps, ALICE, f"new fact {round_}")
        answer = page(deps, ALICE, page_size=7, page_token=token).body
        seen += [f["text"] for f in answer["facts"]]
        token = answer["next_page_token"]
        if not token:
            break
    assert len(seen) == len(set(seen))
    assert {f"old fact {n}" for n in range(25)} <= set(seen)
    everything = len(deps.facts.list_facts(ALICE, FactFilter(limit=1000)))
    assert len(page(deps, ALICE, page_size=5000).body["facts"]) == everything  # at most 1000


def test_a_forged_foreign_expired_or_other_list_token_is_refused(
    deps: Deps, clock: FixedClock
) -> None:
    remember(deps, ALICE, "one", "two", "three")
    token = page(deps, ALICE, page_size=1).body["next_page_token"]
    assert page(deps, ALICE, page_size=1, page_token=token).status == 200
    payload, mac = token.split(".")
    forged = payload[:-2] + ("AA" if payload[-2:] != "AA" else "BB") + "." + mac
    invalid = [
        (ALICE, {"page_token": forged}),
        (ALICE, {"page_token": "not a token"}),
        (BOB, {"page_token": token}),  # another user's
        (ALICE, {"page_token": token, "filter": 'subject_id = "self"'}),  # another filter
        (ALICE, {"page_token": token, "show_history": "true"}),
    ]
    for user, params in invalid:
        assert (page(deps, user, **params).code, user, params) == (
            "invalid_page_token",
            user,
            params,
        )
    other_list = refused(deps, ALICE, "GET", "/v1/persons", page_token=token)
    assert other_list == (400, "invalid_page_token")
    clock.advance(24 * 3600 + 1)
    expired = page(deps, ALICE, page_token=token)
    assert (expired.status, expired.code) == (400, "invalid_page_token")


# -- etags -------------------------------------------------------------------------------------
def test_two_devices_editing_one_fact_the_stale_one_gets_412(deps: Deps) -> None:
    [fact] = remember(deps, ALICE, "I live in Basel")
    phone = call(deps, ALICE, "GET", f"/v1/facts/{fact}")
    laptop = call(deps, ALICE, "GET", f"/v1/facts/{fact}")
    assert phone.headers["ETag"] == laptop.headers["ETag"] == f'"{phone.body["etag"]}"'
    edited = call(
        deps, ALICE, "PATCH", f"/v1/facts/{fact}", {"text": "I live in Bern"},
        {"If-Match": phone.headers["ETag"]},
    )  # fmt: skip
    assert edited.status == 200 and edited.headers["ETag"] == f'"{edited.body["etag"]}"'
    before = state(deps)
    for body, headers in [
        ({"text": "I live in Zurich"}, {"If-Match": laptop.headers["ETag"]}),
        ({"text": "I live in Zurich", "etag": laptop.body["etag"]}, {}),
    ]:
        stale = call(deps, ALICE, "PATCH", f"/v1/facts/{fact}", body, headers)
        assert (stale.status, stale.code) == (412, "stale_etag")
    stale_delete = call(deps, ALICE, "DELETE", f"/v1/facts/{fact}", None, laptop_tag(laptop))
    assert (stale_delete.status, stale_delete.code) == (412, "stale_etag")
    assert state(deps) == before
    current = edited.body["id"]
    assert ok(deps, ALICE, "DELETE", f"/v1/facts/{current}", None, headers=laptop_tag(edited))


def laptop_tag(answer: Any) -> dict[str, str]:
    return {"If-Match": answer.headers["ETag"]}


def test_an_edit_racing_past_the_etag_check_is_412_too(deps: Deps) -> None:
    """The other device writes between this request's check and its write: the store's
    correction refuses the superseded version, answered as a stale etag."""
    [fact] = remember(deps, ALICE, "I live in Basel")
    read = ok(deps, ALICE, "GET", f"/v1/facts/{fact}")
    store = deps.facts
    correct = store.correct_fact

    def racing(user_id: str, fact_id: str, replacement: FactDraft, now: datetime) -> Any:
        rival = replacement.model_copy(update={"text": "I live in Geneva", "idempotency_key": "x"})
        correct(user_id, fact_id, rival, now)  # the other device, first
        return correct(user_id, fact_id, replacement, now)

    store.correct_fact = racing  # type: ignore[method-assign]
    answer = call(deps, ALICE, "PATCH", f"/v1/facts/{fact}", {"text": "Bern", "etag": read["etag"]})
    assert (answer.status, answer.code) == (412, "stale_etag")
    current = [f.text for f in store.list_facts(ALICE, FactFilter())]
    assert current == ["I live in Geneva"]


def test_persons_and_settings_refuse_a_stale_etag_and_change_nothing(deps: Deps) -> None:
    person = anna(ALICE)
    remember(deps, ALICE, "Anna likes tea", subject=person)
    path = f"/v1/persons/{person.id}"
    read = ok(deps, ALICE, "GET", path)
    renamed = ok(deps, ALICE, "PATCH", path, {"display_name": "Anna K.", "etag": read["etag"]})
    assert renamed["etag"] != read["etag"]
    profile = ok(deps, ALICE, "GET", "/v1/settings/assistant")
    ok(deps, ALICE, "PATCH", "/v1/settings/assistant", {"tone": "dry", "etag": profile["etag"]})
    before = state(deps)
    for method, target, body in [
        ("PATCH", path, {"display_name": "Annie", "etag": read["etag"]}),
        ("DELETE", path, None),
        ("PATCH", "/v1/settings/assistant", {"tone": "wordy", "etag": profile["etag"]}),
    ]:
        stale_tag = {"If-Match": f'"{read["etag"] if "persons" in target else profile["etag"]}"'}
        assert refused(deps, ALICE, method, target, body, headers=stale_tag) == (412, "stale_etag")
    assert state(deps) == before
    assert ok(deps, ALICE, "PATCH", path, {"aliases": ["Ann"]}, headers={"If-Match": "*"})


def test_a_person_changed_between_check_and_write_is_412_or_merged(deps: Deps) -> None:
    """The other device renames the person after this request's etag check: the
    compare-and-set refuses a conditional write; an unconditional one reads again."""
    person = anna(ALICE)
    remember(deps, ALICE, "Anna likes tea", subject=person)
    path = f"/v1/persons/{person.id}"
    contacts = deps.contacts
    update = contacts.update_person
    rivals = iter(["Annie", "Anne"])

    def racing(changed: Person, unchanged_since: datetime | None = None) -> bool:
        rival, name = contacts.get_person(ALICE, changed.id), next(rivals, None)
        if rival is not None and name is not None:  # two rival writes, then none
            update(rival.model_copy(update={"display_name": name}))
        return update(changed, unchanged_since)

    contacts.update_person = racing  # type: ignore[method-assign]
    read = ok(deps, ALICE, "GET", path)
    conditional = {"aliases": ["Ann"], "etag": read["etag"]}
    assert refused(deps, ALICE, "PATCH", path, conditional) == (412, "stale_etag")
    assert ok(deps, ALICE, "GET", path)["aliases"] == []  # nothing of it was written
    merged = ok(deps, ALICE, "PATCH", path, {"aliases": ["Ann"]})
    assert (merged["display_name"], merged["aliases"]) == ("Anne", ["Ann"])  # the rival's kept


def test_the_export_holds_every_fact_beyond_one_page(deps: Deps) -> None:
    remember(deps, ALICE, *(f"fact number {n}" for n in range(1050)))
    exported = ok(deps, ALICE, "GET", "/v1/account:export")
    assert (len(exported["facts"]), exported["facts_truncated"]) == (1050, False)
    assert len({f["id"] for f in exported["facts"]}) == 1050
