"""Response schemas as Gemini takes them, and answers fitted back to the product's schema.

``responseJsonSchema`` supports only the keywords in ``SUPPORTED`` (GenerationConfig
reference, https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/
GenerationConfig), and a ``$ref`` may have no sibling keys but ``$``-ones. Reports say
``pattern``, ``minLength`` and ``maxLength`` are ignored rather than refused, so Gemini may
answer a string over its limit: ``for_gemini`` sends only what Gemini enforces (``$ref``
inlined, ``const`` as a one-value enum), and ``fit`` trims an over-long string before the
product validates it, unless its field says ``x-no-trim`` (an id, a code: a cut is wrong).
"""

from __future__ import annotations

from typing import Any

from shared.models.base import NO_TRIM

SUPPORTED = frozenset(
    {
        "$id", "$defs", "$ref", "$anchor", "type", "format", "title", "description", "enum",
        "items", "prefixItems", "minItems", "maxItems", "minimum", "maximum", "anyOf", "oneOf",
        "properties", "additionalProperties", "required", "propertyOrdering",
    }
)  # fmt: skip
Json = dict[str, Any]


def inline_refs(schema: Json) -> Json:
    """The schema with every local ``#/$defs/X`` replaced by its definition (no cycles in the
    product's schemas; a cycle raises RecursionError rather than being sent)."""
    defs = schema.get("$defs", {})

    def resolve(node: Any) -> Any:
        if isinstance(node, list):
            return [resolve(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            target = defs[str(node["$ref"]).rsplit("/", 1)[-1]]
            extra = {k: v for k, v in node.items() if k != "$ref"}
            return resolve({**target, **extra})
        return {k: resolve(v) for k, v in node.items() if k != "$defs"}

    resolved: Json = resolve(schema)
    return resolved


def for_gemini(schema: Json) -> Json:
    """What is sent as ``responseJsonSchema``: inlined, documented keywords only."""

    def clean(node: Any, under_properties: bool = False) -> Any:
        if isinstance(node, list):
            return [clean(item) for item in node]
        if not isinstance(node, dict):
            return node
        if under_properties:  # keys are property names, not keywords
            return {name: clean(sub) for name, sub in node.items()}
        kept: Json = {}
        for key, value in node.items():
            if key == "const":
                kept["enum"] = [value]
            elif key in SUPPORTED:
                kept[key] = clean(value, under_properties=key == "properties")
        return kept

    cleaned: Json = clean(inline_refs(schema))
    return cleaned


def fit(value: Any, schema: Json) -> Any:
    """``value`` with strings over their ``maxLength`` trimmed where the field allows it;
    ``schema`` is the product's own (inlined) schema. Anything else is left to validation."""
    if isinstance(value, str):
        limit = schema.get("maxLength")
        if isinstance(limit, int) and len(value) > limit and not schema.get(NO_TRIM):
            return value[:limit].rstrip() or value[:limit]
        return value
    for option in schema.get("anyOf", []):
        if _matches_type(value, option):
            return fit(value, option)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [fit(item, schema["items"]) for item in value]
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        properties = schema["properties"]
        return {k: fit(v, properties[k]) if k in properties else v for k, v in value.items()}
    return value


def _matches_type(value: Any, option: Json) -> bool:
    wanted = option.get("type")
    kinds = {"string": str, "array": list, "object": dict, "boolean": bool}
    return wanted in kinds and isinstance(value, kinds[wanted])
