"""The assistant profile operations of the memory function, on the in-memory fakes."""

from __future__ import annotations

from typing import Any

import pytest

from shared.app.settings.profile import is_time_zone
from shared.deps import Deps
from shared.fakes.clock import FixedClock
from shared.models.domain import AssistantProfile
from shared.models.memory_v1 import AssistantSettings
from shared.services.context_cache import context_key
from tests.unit.memory_calls import call, ok

ALICE, BOB = "alice", "bob"


PATH = "/v1/settings/assistant"


def get(deps: Deps, user: str) -> dict[str, Any]:
    profile: dict[str, Any] = ok(deps, user, "GET", PATH)
    return profile


def update(deps: Deps, user: str, **fields: Any) -> dict[str, Any]:
    profile: dict[str, Any] = ok(deps, user, "PATCH", PATH, fields)
    return profile


def without_etag(profile: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in profile.items() if name != "etag"}


def cached_context(deps: Deps, user: str) -> None:
    deps.cache.set(context_key(user), b"persona and profile facts", 3600)


def test_get_answers_the_defaults_until_the_user_sets_something(deps: Deps) -> None:
    assert get(deps, ALICE) == AssistantSettings.of(AssistantProfile()).model_dump(mode="json")
    assert get(deps, ALICE)["updated_at"] is None


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
        **without_etag(first),
        "tone": "dry",
        "presentation_rules": ["no emoji"],
        "language": None,  # null: the language the user writes in
        "updated_at": clock.now().isoformat().replace("+00:00", "Z"),
    }
    assert without_etag(second) == expected
    stored = deps.profiles.get_profile(ALICE)
    assert stored.model_dump(mode="json") == expected
    assert stored.updated_at == clock.now()
    assert get(deps, ALICE) == second
    assert second["etag"] != first["etag"]


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
    get(deps, ALICE)
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
    refused = call(deps, ALICE, "PATCH", PATH, {"timezone": zone, "tone": "changed too"})
    assert (refused.status, refused.code) == (422, "data_rejected")
    assert "timezone" in refused.body["error"]["message"]
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
    refused = call(deps, ALICE, "PATCH", PATH, body)
    assert (refused.status, refused.code) == (400, "invalid_request")
    assert deps.profiles.get_profile(ALICE) == AssistantProfile()
    assert deps.cache.get(context_key(ALICE)) is not None


def test_get_takes_no_parameters(deps: Deps) -> None:
    assert call(deps, ALICE, "GET", PATH, user_id=BOB).status == 400


def test_a_masked_field_absent_from_the_body_is_reset(deps: Deps) -> None:
    update(deps, ALICE, language="de", tone="dry")
    reset = ok(deps, ALICE, "PATCH", PATH, {"tone": "ignored"}, update_mask="language")
    assert (reset["language"], reset["tone"]) == (None, "dry")
