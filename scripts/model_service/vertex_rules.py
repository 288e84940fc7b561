"""What Vertex AI refuses, as Google documents it: both fakes of Vertex apply these rules
(this service and ``testkit/vertex_server.py``), so the suite sees what production would.

- an empty text part: 400 ("empty text parameter"; Vertex troubleshooting, and issue 24's
  trace of a chat that broke for good);
- a model id that is unknown or past its retirement: 404 ("Model versions and lifecycle":
  "API requests that reference a retired model ID typically return a 404");
- ``thinkingLevel`` and ``thinkingBudget`` in one request, or a level the model does not
  take: 400 (thinking page, https://cloud.google.com/vertex-ai/generative-ai/docs/thinking);
- ``responseJsonSchema`` keywords outside the documented list, or a ``$ref`` with sibling
  keys not starting with ``$``: 400 (GenerationConfig reference);
- more texts in one embedding request than the model takes: 400 ("Get text embeddings");
- the ``googleSearch`` tool on a model that cannot ground (the local model service's: it has
  no web) 400; with a JSON response (``responseMimeType`` application/json or a response
  schema) on a model before Gemini 3, 400 as well: Gemini 3 is the first to combine
  structured output with built-in tools ("Gemini 3 lets you combine Structured Outputs with
  built-in tools, including Grounding with Google Search", Gemini 3 developer guide;
  Gemini 2.5 answers "Tool use with a response mime type: 'application/json' is
  unsupported").

Gemini-like (``gemini_like=True``): ``pattern``, ``minLength`` and ``maxLength`` are accepted
and ignored, as reports say Gemini does, instead of refused; ``gemini_enforced`` drops them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from shared.adapters.vertex_schema import SUPPORTED
from shared.model_catalog import CATALOG

Json = dict[str, Any]
NOT_ENFORCED = frozenset({"pattern", "minLength", "maxLength"})
STATUS_NAMES = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND"}


@dataclass(frozen=True)
class Refusal:
    status: int
    message: str

    def body(self) -> Json:
        name = STATUS_NAMES.get(self.status, "UNKNOWN")
        return {"error": {"code": self.status, "message": self.message, "status": name}}


def model_refusal(model: str, today: date, served: tuple[str, ...] = ()) -> Refusal | None:
    """404 for a model Vertex would not serve: retired, or neither known nor ``served``."""
    found = CATALOG.get(model)
    if found is None and model not in served:
        return Refusal(404, f"Publisher Model {model} was not found")
    if found is not None and found.retires is not None and found.retires < today:
        return Refusal(404, f"Publisher Model {model} was not found (retired {found.retires})")
    return None


def generate_refusal(model: str, body: Json, gemini_like: bool = False) -> Refusal | None:
    for content in [*(body.get("contents") or []), body.get("systemInstruction") or {}]:
        for part in content.get("parts") or []:
            if "text" in part and not str(part["text"]).strip():
                return Refusal(400, "Unable to submit request: it has an empty text parameter")
    config = body.get("generationConfig") or {}
    grounding = grounding_problem(model, body, config)
    if grounding is not None:
        return Refusal(400, grounding)
    problem = thinking_problem(model, _field(config, "thinkingConfig", "thinking_config") or {})
    if problem is None and config.get("responseJsonSchema") is not None:
        problems = schema_problems(config["responseJsonSchema"], gemini_like)
        problem = "; ".join(problems[:3]) if problems else None
    return None if problem is None else Refusal(400, problem)


def _field(body: Json, camel: str, snake: str) -> Any:
    """Vertex's JSON parser takes either spelling (google-genai 3.4 sends ``thinking_level``)."""
    return body.get(camel, body.get(snake))


def grounding_problem(model: str, body: Json, config: Json) -> str | None:
    tools = body.get("tools") or []
    grounded = any(
        isinstance(t, dict) and ("googleSearch" in t or "google_search" in t) for t in tools
    )
    if not grounded:
        return None
    found = CATALOG.get(model)
    if found is None or found.family not in ("gemini-3", "gemini-2.5"):
        return f"Grounding with Google Search is not supported by model {model}"
    mime = _field(config, "responseMimeType", "response_mime_type")
    schema = any(
        _field(config, camel, snake) is not None
        for camel, snake in (("responseSchema", "response_schema"),
                             ("responseJsonSchema", "response_json_schema"))
    )  # fmt: skip
    if found.family != "gemini-3" and (mime == "application/json" or schema):
        return "Tool use with a response mime type: 'application/json' is unsupported"
    return None


def thinking_problem(model: str, thinking: Json) -> str | None:
    level = _field(thinking, "thinkingLevel", "thinking_level")
    budget = _field(thinking, "thinkingBudget", "thinking_budget")
    if level is not None and budget is not None:
        return "thinkingLevel and thinkingBudget cannot both be set"
    found = CATALOG.get(model)
    if level is None or found is None or found.family == "local":
        return None
    if level not in found.levels:
        return f"thinkingLevel {level} is not supported by {model}"
    return None


def schema_problems(schema: Any, gemini_like: bool = False, where: str = "") -> list[str]:
    """Why Vertex would refuse this ``responseJsonSchema`` (empty: it would not)."""
    if isinstance(schema, list):
        return [p for i, s in enumerate(schema) for p in schema_problems(s, gemini_like, where)]
    if not isinstance(schema, dict):
        return []
    problems = []
    if "$ref" in schema and any(not key.startswith("$") for key in schema):
        problems.append(f"{where or '/'}: $ref with sibling keys")
    allowed = SUPPORTED | NOT_ENFORCED if gemini_like else SUPPORTED
    for key, value in schema.items():
        if key not in allowed:
            problems.append(f"{where or '/'}: unsupported keyword {key}")
        elif key in ("properties", "$defs") and isinstance(value, dict):
            for name, sub in value.items():
                problems += schema_problems(sub, gemini_like, f"{where}/{key}/{name}")
        elif isinstance(value, (dict, list)) and key not in ("enum", "required"):
            problems += schema_problems(value, gemini_like, f"{where}/{key}")
    return problems


def gemini_enforced(schema: Any) -> Any:
    """The schema as Gemini enforces it: without ``pattern``, ``minLength``, ``maxLength``."""
    if isinstance(schema, list):
        return [gemini_enforced(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    kept: Json = {}
    for key, value in schema.items():
        if key in NOT_ENFORCED:
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):  # names, not keywords
            kept[key] = {name: gemini_enforced(sub) for name, sub in value.items()}
        else:
            kept[key] = value if key in ("enum", "required") else gemini_enforced(value)
    return kept


def embed_refusal(model: str, rpc: str, body: Json) -> Refusal | None:
    found = CATALOG.get(model)
    if found is None or not found.batch_limit:
        return None
    count = len(body.get("requests") or body.get("instances") or [None])
    if rpc in ("batchEmbedContents", "predict") and count > found.batch_limit:
        return Refusal(400, f"{model} takes at most {found.batch_limit} texts per request")
    return None
