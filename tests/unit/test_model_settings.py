"""Settings refuse model configurations that cannot work, at start-up rather than mid-turn."""

from __future__ import annotations

from typing import Any

import pytest

from scripts.stacklib.profile import Profile
from shared.config import Settings
from shared.errors import ConfigurationError

LOCAL_SERVICE = {
    "model_provider": "vertex",
    "vertex_base_url": "http://127.0.0.1:8516",
    "vertex_access_token": "static-token",
    "vertex_model": "smollm2-135m-instruct",
    "vertex_embedding_model": "all-MiniLM-L6-v2",
    "embedding_dimension": 384,
}
PRODUCTION: dict[str, Any] = {
    # The test stack's environment is loaded for every test: clear its local-only values.
    **dict.fromkeys(
        (
            "auth_jwks_file",
            "internal_jwks_file",
            "local_kek_file",
            "cloud_tasks_emulator_host",
            "web_push_key_file",
        ),
    ),
    "firestore_emulator_host": None,
    "smtp_starttls": True,  # the stack's SMTP server is plain (loopback)
    "public_api_origin": "https://api.example.com",  # calendar feed URLs
    "model_provider": "vertex",  # the suite sets MODEL_PROVIDER=scripted
    "env": "prod",
    "kek_provider": "kms",
    "kms_key_name": "projects/p/locations/l/keyRings/r/cryptoKeys/k",
    "auth_audience": "assistant-prod",
    "page_token_key": "k" * 16,
}


def test_the_local_model_service_settings_are_accepted() -> None:
    settings = Settings(env="dev", **LOCAL_SERVICE)

    assert (settings.model_provider, settings.embedding_dimension) == ("vertex", 384)


def test_production_with_gemini_is_accepted() -> None:
    settings = Settings(**PRODUCTION)

    assert (settings.vertex_base_url, settings.embedding_dimension) == (None, 768)


def test_the_local_model_is_weak_and_production_strong() -> None:
    """MODEL_STRENGTH names what the model is trusted with (tests/unit/understanding/
    test_wiring.py shows what each value changes); only the local profile says weak."""
    local = {k.lower(): v for k, v in Profile("dev").model_env("token").items()}
    assert Settings(env="dev", **local).model_strength == "weak"
    assert Settings(**PRODUCTION).model_strength == "strong"
    with pytest.raises(ValueError):
        Settings(model_strength="guess")


def test_production_mail_goes_to_the_relay_over_starttls_only() -> None:
    relay = {"outbox_provider": "smtp", "smtp_host": "smtp.example.com", "smtp_port": 587}
    assert Settings(**PRODUCTION, **relay).smtp_starttls
    with pytest.raises(ConfigurationError, match="STARTTLS"):
        Settings(**{**PRODUCTION, "smtp_starttls": False}, **relay)


@pytest.mark.parametrize(
    "sender",
    [{"mail_from_address": "a@b.c\r\nBcc: x@y.z"}, {"mail_from_name": "Assistant\r\nBcc: x"}],
)
def test_a_sender_identity_that_could_inject_a_header_is_refused(sender: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        Settings(**sender)


def test_the_removed_in_process_provider_is_refused_with_the_way_out() -> None:
    with pytest.raises(ConfigurationError, match="scripts/stack up"):
        Settings(model_provider="local")


@pytest.mark.parametrize(
    ("changes", "complaint"),
    [
        ({"vertex_base_url": None}, "only for a local vertex_base_url"),
        ({"embedding_dimension": 512}, "indexed for"),
        ({"embedding_dimension": 768}, "has 384 dimensions"),
    ],
    ids=["token-without-endpoint", "unindexed-dimension", "minilm-at-768"],
)
def test_inconsistent_model_settings_are_refused(changes: dict[str, Any], complaint: str) -> None:
    with pytest.raises(ConfigurationError, match=complaint):
        Settings(env="dev", **{**LOCAL_SERVICE, **changes})


def test_a_local_endpoint_is_refused_in_production() -> None:
    with pytest.raises(ConfigurationError, match="vertex_base_url"):
        Settings(**PRODUCTION, vertex_base_url="http://127.0.0.1:8516")


def test_the_scripted_model_may_use_any_dimension_in_tests() -> None:
    assert Settings(env="test", model_provider="scripted", embedding_dimension=64).env == "test"
