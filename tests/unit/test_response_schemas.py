"""Every response schema against what Gemini enforces: any value valid under the schema as
sent (``for_gemini``: types, enums, required, item counts, no length or pattern) is either
kept (what was valid stays as it was; no fact of an extraction goes missing) or refused as
``ModelOutputInvalid``, which a turn answers with its fallback reply. Nothing else escapes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from eval.judge import Verdict
from shared.adapters.vertex_llm import parse_answer
from shared.adapters.vertex_schema import for_gemini
from shared.errors import ModelOutputInvalid
from shared.graph.nodes.classification import Classification
from shared.graph.nodes.hitl import AnswerMatch
from shared.graph.nodes.planning import Plan
from shared.models.extraction import Extraction
from shared.services.agent_jobs.prompts import AgentStep
from shared.services.agent_jobs.watchdog import WatchdogVerdict
from shared.services.memory.schema import RedFlagVerdict
from testkit.schema_values import values

RESPONSE_SCHEMAS: list[type[BaseModel]] = [
    Classification,
    AnswerMatch,
    Plan,
    Extraction,
    RedFlagVerdict,
    AgentStep,
    WatchdogVerdict,
    Verdict,
]
# Schemas whose every field Gemini enforces, or that trimming repairs: nothing is refused.
# (AnswerMatch's option id is not: an id cut short would choose another option.)
ALWAYS_KEPT = {WatchdogVerdict, RedFlagVerdict, Verdict}


def test_every_schema_a_structured_call_names_is_covered() -> None:
    """A new structured call's schema must join RESPONSE_SCHEMAS."""
    call = re.compile(r"structured(?:_with_retry)?\((?:[^()]|\([^()]*\))*?,\s*(\w+)\)", re.S)
    sources = [*Path("shared").rglob("*.py"), Path("eval/judge.py")]
    named = {m for path in sources for m in call.findall(path.read_text())} - {"schema"}
    assert named == {schema.__name__ for schema in RESPONSE_SCHEMAS}


def outcome(schema: type[BaseModel], value: Any) -> BaseModel | ModelOutputInvalid:
    own = schema.model_json_schema()
    try:
        return parse_answer(schema, json.dumps(value), own, "test")
    except ModelOutputInvalid as refused:
        return refused


@pytest.mark.parametrize("schema", RESPONSE_SCHEMAS, ids=lambda s: s.__name__)
def test_a_value_gemini_may_return_is_kept_or_refused_never_a_crash(
    schema: type[BaseModel],
) -> None:
    sent = for_gemini(schema.model_json_schema())

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(values(sent))
    def check(value: Any) -> None:
        result = outcome(schema, value)
        if schema in ALWAYS_KEPT:
            assert isinstance(result, schema), result
        if isinstance(result, Extraction):  # kept: every fact the model read, none dropped
            assert len(result.facts) == len(value.get("facts", []))
        try:
            valid = schema.model_validate(value)
        except ValidationError:
            return
        assert result == valid  # what was valid is kept as it was

    check()


@given(st.text(min_size=201, max_size=400).filter(str.strip))
@settings(max_examples=30, deadline=None)
def test_an_over_long_fact_is_trimmed_and_kept(text: str) -> None:
    value = {
        "facts": [{"text": text, "type": "Other", "about": "user", "confidence": 0.9}],
        "entities": [],
        "topics": [],
    }

    result = outcome(Extraction, value)

    assert isinstance(result, Extraction) and len(result.facts) == 1
    assert result.facts[0].text == text[:200].rstrip() or result.facts[0].text == text[:200]


def test_a_closed_set_is_an_enum_in_what_is_sent() -> None:
    sent = for_gemini(Classification.model_json_schema())
    assert sent["properties"]["route"]["enum"] == ["simple", "complex"]
    assert "$defs" not in sent and "pattern" not in json.dumps(sent)
