"""The models the product may call, what each kind of work uses, and when each one retires.

Vertex AI answers 404 for a retired model id, so a default past its date fails every call.
The table is read from Google's pages (``source`` of each row); ``assumed`` marks a date the
page does not give, taken as release + one year so the retirement test still watches it.
``retirement_problems`` is what ``get_deps`` logs at start-up; tests/unit/test_model_catalog.py
fails once a default is within ``WARN_DAYS`` of its date.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

ModelKind = Literal["routing", "reply", "planning", "extraction", "watchdog", "judge"]
Family = Literal["gemini-3", "gemini-2.5", "embedding", "local"]
ThinkingControl = Literal["level", "budget", "none"]
Effort = Literal["lowest", "low"]

LIFECYCLE = "https://cloud.google.com/vertex-ai/generative-ai/docs/learn/model-versions"
GEMINI_API_DEPRECATIONS = "https://ai.google.dev/gemini-api/docs/deprecations"
EMBEDDINGS = "https://cloud.google.com/vertex-ai/generative-ai/docs/embeddings/get-text-embeddings"
THINKING = "https://cloud.google.com/vertex-ai/generative-ai/docs/thinking"
_LOCAL = "scripts/model_service"
WARN_DAYS = 30


@dataclass(frozen=True)
class ModelInfo:
    id: str
    family: Family
    thinking: ThinkingControl
    retires: date | None  # None: no date announced
    source: str
    levels: tuple[str, ...] = ()  # thinkingLevel values accepted, lowest first
    assumed: bool = False  # the page gives no date: release + one year
    batch_limit: int = 0  # embedding models: texts per request


def _gemini3(model_id: str, retires: date, source: str, assumed: bool = False) -> ModelInfo:
    # Gemini 3 Flash models accept MINIMAL to HIGH and cannot turn thinking off (THINKING).
    levels = ("MINIMAL", "LOW", "MEDIUM", "HIGH")
    return ModelInfo(model_id, "gemini-3", "level", retires, source, levels, assumed)


CATALOG: dict[str, ModelInfo] = {
    m.id: m
    for m in (
        _gemini3("gemini-3.5-flash", date(2027, 5, 19), LIFECYCLE),  # "until May 2027 or later"
        _gemini3("gemini-3.5-flash-lite", date(2027, 7, 21), LIFECYCLE, assumed=True),
        _gemini3("gemini-3.1-flash-lite", date(2027, 5, 7), GEMINI_API_DEPRECATIONS),
        ModelInfo("gemini-2.5-flash", "gemini-2.5", "budget", date(2026, 10, 16), LIFECYCLE),
        ModelInfo("gemini-2.5-flash-lite", "gemini-2.5", "budget", date(2026, 7, 22), LIFECYCLE),
        # gemini-embedding-001 takes one input per request on Vertex (EMBEDDINGS page).
        ModelInfo("gemini-embedding-001", "embedding", "none", None, EMBEDDINGS, batch_limit=1),
        ModelInfo("text-embedding-005", "embedding", "none", None, EMBEDDINGS, batch_limit=250),
        # The local model service's models (scripts/model_service): never retire.
        ModelInfo("smollm2-135m-instruct", "local", "none", None, "scripts/model_service"),
        ModelInfo(
            "all-MiniLM-L6-v2", "local", "none", None, "scripts/model_service", (), False, 250
        ),
    )
}

# Cheap, fast work on Flash-Lite; what the user reads or what plans work on Flash.
DEFAULT_MODELS: dict[ModelKind, str] = {
    "routing": "gemini-3.5-flash-lite",
    "reply": "gemini-3.5-flash",
    "planning": "gemini-3.5-flash",
    "extraction": "gemini-3.5-flash-lite",
    "watchdog": "gemini-3.5-flash-lite",
    "judge": "gemini-3.5-flash",
}
DEFAULT_EMBEDDING_MODEL = "gemini-embedding-001"
# Classification and extraction think as little as the model allows: they are cheap work.
EFFORT: dict[ModelKind, Effort] = {
    "routing": "lowest",
    "reply": "lowest",
    "planning": "low",
    "extraction": "lowest",
    "watchdog": "lowest",
    "judge": "low",
}


def info(model_id: str) -> ModelInfo | None:
    return CATALOG.get(model_id)


def thinking_fields(model_id: str, kind: ModelKind) -> dict[str, Any]:
    """The ``thinkingConfig`` for this model and work: a level or a budget, never both;
    nothing for a model the table does not know (its default thinking)."""
    found = CATALOG.get(model_id)
    if found is None or found.thinking == "none":
        return {}
    if found.thinking == "budget":
        return {"thinking_budget": 0 if EFFORT[kind] == "lowest" else 512}
    return {"thinking_level": found.levels[0 if EFFORT[kind] == "lowest" else 1]}


def retirement_problems(models: dict[str, str], today: date) -> list[str]:
    """One line per configured model past (or without a known) retirement; ``models`` maps
    the kind of work to the model id it uses."""
    problems = []
    for kind, model_id in sorted(models.items()):
        found = CATALOG.get(model_id)
        if found is None:
            problems.append(f"{kind}: model {model_id} is not in shared/model_catalog.py")
        elif found.retires is not None and found.retires < today:
            problems.append(
                f"{kind}: model {model_id} retired on {found.retires} ({found.source}); "
                f"Vertex AI answers 404 to every call: set another model"
            )
    return problems


def days_left(model_id: str, today: date) -> int | None:
    found = CATALOG.get(model_id)
    if found is None or found.retires is None:
        return None
    return (found.retires - today).days
