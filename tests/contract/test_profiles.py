"""ProfileStore contract: the fake and Firestore (emulator) behave the same."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from shared.models.domain import AssistantProfile
from shared.ports import ProfileStore

NOW = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)  # Firestore keeps microseconds

CUSTOM = AssistantProfile(
    persona_name="Ada",
    tone="dry, to the point",
    language="de",
    timezone="Europe/Zurich",
    presentation_rules=["no emoji", "dates as 1 March 2026"],
    privacy_mode=True,
)


def test_a_user_without_a_profile_gets_the_defaults(profiles: ProfileStore, user_id: str) -> None:
    profile = profiles.get_profile(user_id)
    assert profile == AssistantProfile()
    assert (profile.persona_name, profile.timezone, profile.updated_at) == (
        "Assistant",
        "UTC",
        None,
    )


def test_a_stored_profile_reads_back_with_its_time(profiles: ProfileStore, user_id: str) -> None:
    profiles.put_profile(user_id, CUSTOM, NOW)
    assert profiles.get_profile(user_id) == CUSTOM.model_copy(update={"updated_at": NOW})


def test_a_stored_time_reads_back_as_a_plain_datetime(profiles: ProfileStore, user_id: str) -> None:
    """The profile rides in the turn's state, and LangGraph's checkpoint reader refuses to
    rebuild Firestore's ``DatetimeWithNanoseconds`` (it logs a warning on every resume)."""
    profiles.put_profile(user_id, CUSTOM, NOW)
    assert type(profiles.get_profile(user_id).updated_at) is datetime


def test_put_replaces_the_whole_profile(profiles: ProfileStore, user_id: str) -> None:
    profiles.put_profile(user_id, CUSTOM, NOW)
    later = NOW + timedelta(minutes=5)
    profiles.put_profile(user_id, AssistantProfile(persona_name="Bea"), later)
    assert profiles.get_profile(user_id) == AssistantProfile(persona_name="Bea", updated_at=later)


def test_a_repeated_put_stores_the_same(profiles: ProfileStore, user_id: str) -> None:
    profiles.put_profile(user_id, CUSTOM, NOW)
    profiles.put_profile(user_id, CUSTOM, NOW)
    assert profiles.get_profile(user_id) == CUSTOM.model_copy(update={"updated_at": NOW})


def test_profiles_are_per_user(profiles: ProfileStore, user_id: str) -> None:
    neighbour = f"{user_id}_2"  # shares the uid as a prefix
    profiles.put_profile(user_id, CUSTOM, NOW)
    assert profiles.get_profile(neighbour) == AssistantProfile()
    profiles.put_profile(neighbour, AssistantProfile(tone="formal"), NOW)
    assert profiles.get_profile(user_id).tone == CUSTOM.tone


def test_a_returned_profile_is_a_copy(profiles: ProfileStore, user_id: str) -> None:
    profiles.put_profile(user_id, CUSTOM, NOW)
    profiles.get_profile(user_id).presentation_rules.append("shout")
    assert profiles.get_profile(user_id).presentation_rules == CUSTOM.presentation_rules


@pytest.mark.parametrize("bad", ["", "a/b", "..", "__reserved__"])
def test_ids_that_name_another_path_are_refused(profiles: ProfileStore, bad: str) -> None:
    with pytest.raises(ValueError):
        profiles.get_profile(bad)
    with pytest.raises(ValueError):
        profiles.put_profile(bad, CUSTOM, NOW)
