"""The models of each kind of work: current defaults, their retirement, thinking per family."""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime, timedelta

import pytest

from shared.adapters.clock import SystemClock
from shared.config import Settings
from shared.deps.models import log_retired_models
from shared.fakes.clock import FixedClock
from shared.model_catalog import (
    CATALOG,
    DEFAULT_EMBEDDING_MODEL,
    DEFAULT_MODELS,
    WARN_DAYS,
    days_left,
    retirement_problems,
    thinking_fields,
)

DEFAULTS = sorted({*DEFAULT_MODELS.values(), DEFAULT_EMBEDDING_MODEL})


def too_close_to_retirement(today: date) -> list[str]:
    return [
        f"{model} retires in {left} days ({CATALOG[model].source}): choose a newer default"
        for model in DEFAULTS
        if (left := days_left(model, today)) is not None and left < WARN_DAYS
    ]


def test_no_default_model_is_within_30_days_of_its_retirement() -> None:
    """Fails in real life once a default ages: today is the system clock's."""
    assert too_close_to_retirement(SystemClock().now().date()) == []


def test_the_rule_fires_30_days_before_a_retirement() -> None:
    reply_retires = CATALOG[DEFAULT_MODELS["reply"]].retires
    assert reply_retires is not None
    clock = FixedClock(datetime.combine(reply_retires, datetime.min.time(), UTC))
    clock.advance(-timedelta(days=WARN_DAYS).total_seconds())
    assert too_close_to_retirement(clock.now().date()) == []
    clock.advance(timedelta(days=1).total_seconds())
    assert any(
        DEFAULT_MODELS["reply"] in line for line in too_close_to_retirement(clock.now().date())
    )


def test_every_default_is_in_the_catalog_with_its_source_page() -> None:
    for model in DEFAULTS:
        assert CATALOG[model].source.startswith("https://"), model


def test_the_settings_and_terraform_defaults_are_the_catalogs() -> None:
    settings = Settings(model_provider="vertex")
    assert settings.models() == DEFAULT_MODELS
    assert settings.vertex_embedding_model == DEFAULT_EMBEDDING_MODEL


def test_a_retired_configured_model_is_logged_as_an_error_at_start_up(
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = Settings(model_provider="vertex", vertex_routing_model="gemini-2.5-flash")
    with caplog.at_level(logging.ERROR, logger="models"):
        problems = log_retired_models(settings, date(2026, 11, 27))
    assert problems == [
        "routing: model gemini-2.5-flash retired on 2026-10-16 "
        f"({CATALOG['gemini-2.5-flash'].source}); Vertex AI answers 404 to every call: "
        "set another model"
    ]
    assert [r.levelno for r in caplog.records] == [logging.ERROR]


def test_current_defaults_log_nothing(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="models"):
        assert log_retired_models(Settings(model_provider="vertex"), date(2026, 11, 27)) == []
    assert caplog.records == []


def test_an_unknown_model_is_reported() -> None:
    assert retirement_problems({"reply": "gemini-9-ultra"}, date(2026, 11, 27)) == [
        "reply: model gemini-9-ultra is not in shared/model_catalog.py"
    ]


@pytest.mark.parametrize(
    ("model", "kind", "expected"),
    [
        ("gemini-3.5-flash-lite", "routing", {"thinking_level": "MINIMAL"}),
        ("gemini-3.5-flash-lite", "extraction", {"thinking_level": "MINIMAL"}),
        ("gemini-3.5-flash", "planning", {"thinking_level": "LOW"}),
        ("gemini-2.5-flash", "routing", {"thinking_budget": 0}),
        ("gemini-2.5-flash", "planning", {"thinking_budget": 512}),
        ("smollm2-135m-instruct", "reply", {}),
        ("a-model-nobody-listed", "reply", {}),
    ],
)
def test_thinking_is_a_level_or_a_budget_by_family_never_both(
    model: str, kind: str, expected: dict[str, object]
) -> None:
    assert thinking_fields(model, kind) == expected  # type: ignore[arg-type]


def test_one_model_names_every_kind_of_work() -> None:
    settings = Settings(model_provider="vertex", **Settings.one_model("smollm2-135m-instruct"))  # type: ignore[arg-type]
    assert set(settings.models().values()) == {"smollm2-135m-instruct"}
