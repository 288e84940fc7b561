"""The assistant profile operations of the memory function, on the in-memory fakes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from shared.adapters.clock import FixedClock
from shared.app.settings.api import SettingsApi, operation_for
from shared.app.settings.profile import is_time_zone
from shared.deps import Deps
from shared.errors import BadRequest, DataRejected
from shared.models.domain import AssistantProfile
from shared.models.memory_api import Empty, UpdateAssistantRequest
from shared.services.context_cache import context_key
from shared.web import parse_json

ALICE, BOB = "alice", "bob"


def run(deps: Deps, user: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """One call as the function makes it: the table's model parses the JSON body."""
    operation = operation_for(path)
    request = parse_json(json.dumps(body or {}).encode(), operation.request)
    result: dict[str, Any] = operation.run(SettingsApi(deps), user, request).model_dump(mode="json")
    return result


def update(deps: Deps, user: str, **fields: Any) -> dict[str, Any]:
    profile: dict[str, Any] = run(deps, user, "/settings/assistant/update", fields)["profile"]
    return profile


def cached_context(deps: Deps, user: str) -> None:
    deps.cache.set(context_key(user), b"persona and profile facts", 3600)


def test_the_paths_take_their_models() -> None:
    assert operation_for("/settings/assistant/get").request is Empty
    assert operation_for("/settings/assistant/update/").request is UpdateAssistantRequest


def test_get_answers_the_defaults_until_the_user_sets_something(deps: Deps) -> None:
    assert run(deps, ALICE, "/settings/assistant/get") == {
        "profile": AssistantProfile().model_dump(mode="json")
    }
    assert run(deps, ALICE, "/settings/assistant/get")["profile"]["updated_at"] is None


def test_update_merges_the_given_fields_into_the_stored_profile(
    deps: Deps, clock: FixedClock
) -> None:
    first = update(deps, ALICE, persona_name="Ada", timezone="Europe/Zurich", language="de")
    assert (first["persona_name"], first["timezone"], first["tone"]) == (
        "Ada",
        "Europe/Zurich",
        "warm and concise",  # the default, kept
    )
    clock.advance(60)
    second = update(deps, ALICE, tone="dry", presentation_rules=["  no emoji  "], language=None)
    expected = {
        **first,
        "tone": "dry",
        "presentation_rules": ["no emoji"],
        "language": None,  # null: the language the user writes in
        "updated_at": clock.now().isoformat().replace("+00:00", "Z"),
    }
    assert second == expected
    stored = deps.profiles.get_profile(ALICE)
    assert stored.model_dump(mode="json") == expected
    assert stored.updated_at == clock.now()
    assert run(deps, ALICE, "/settings/assistant/get")["profile"] == expected


def test_an_update_changes_only_its_user(deps: Deps) -> None:
    update(deps, ALICE, persona_name="Ada", privacy_mode=True)
    assert deps.profiles.get_profile(BOB) == AssistantProfile()


def test_an_update_drops_the_cached_context_of_its_user_only(deps: Deps) -> None:
    cached_context(deps, ALICE)
    cached_context(deps, BOB)
    update(deps, ALICE, tone="formal")
    assert deps.cache.get(context_key(ALICE)) is None
    assert deps.cache.get(context_key(BOB)) is not None


def test_reading_the_profile_keeps_the_cached_context(deps: Deps) -> None:
    cached_context(deps, ALICE)
    run(deps, ALICE, "/settings/assistant/get")
    assert deps.cache.get(context_key(ALICE)) is not None


@pytest.mark.parametrize(
    "zone",
    ["Mars/Olympus", "Europe", "europe/zurich", " UTC", "../etc/passwd", "/etc/localtime",
     "localtime", "Europe/Zurich/"],
)  # fmt: skip
def test_an_unknown_time_zone_is_refused_and_nothing_changes(deps: Deps, zone: str) -> None:
    update(deps, ALICE, persona_name="Ada")
    before = deps.profiles.get_profile(ALICE)
    cached_context(deps, ALICE)
    with pytest.raises(DataRejected) as refused:
        update(deps, ALICE, timezone=zone, tone="changed too")
    assert (refused.value.status, refused.value.code) == (422, "data_rejected")
    assert "timezone" in refused.value.message
    assert deps.profiles.get_profile(ALICE) == before
    assert deps.cache.get(context_key(ALICE)) is not None


@pytest.mark.parametrize(
    "zone", ["UTC", "Europe/Zurich", "America/Argentina/Buenos_Aires", "Etc/GMT+5", "Asia/Tokyo"]
)
def test_iana_zones_are_accepted(deps: Deps, zone: str) -> None:
    assert is_time_zone(zone)
    assert update(deps, ALICE, timezone=zone)["timezone"] == zone


@pytest.mark.parametrize(
    "body",
    [
        {"mood": "cheerful"},  # not a profile field
        {"updated_at": "2026-01-01T00:00:00Z"},  # set by the server
        {"persona_name": None},  # only language takes null
        {"timezone": None},
        {"privacy_mode": None},
        {"privacy_mode": "yes"},
        {"persona_name": ""},
        {"persona_name": "x" * 41},
        {"language": "deu"},
        {"timezone": "x" * 65},
        {"presentation_rules": ["rule"] * 11},
        {"presentation_rules": ["   "]},
    ],
)
def test_invalid_updates_are_bad_requests(deps: Deps, body: dict[str, Any]) -> None:
    cached_context(deps, ALICE)
    with pytest.raises(BadRequest) as refused:
        run(deps, ALICE, "/settings/assistant/update", body)
    assert (refused.value.status, refused.value.code) == (400, "invalid_request")
    assert deps.profiles.get_profile(ALICE) == AssistantProfile()
    assert deps.cache.get(context_key(ALICE)) is not None


def test_get_takes_no_parameters(deps: Deps) -> None:
    with pytest.raises(BadRequest):
        run(deps, ALICE, "/settings/assistant/get", {"user_id": BOB})
