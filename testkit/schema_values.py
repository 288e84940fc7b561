"""Hypothesis values valid under a JSON schema, for the subset a ``responseJsonSchema`` holds
once sent to Gemini (``shared.adapters.vertex_schema.for_gemini``): type, enum, properties,
required, additionalProperties, items, minItems/maxItems, minimum/maximum, anyOf/oneOf.

hypothesis-jsonschema would do this, but its last release (0.23.1) calls a Hypothesis
internal (``many.more()``) that the pinned Hypothesis no longer has.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

Json = dict[str, Any]
# Long enough to break any maxLength of the product's schemas (Gemini does not enforce them).
_TEXT = st.one_of(st.text(max_size=40), st.text(min_size=80, max_size=700))


def values(schema: Json) -> st.SearchStrategy[Any]:
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        return st.one_of([values(option) for option in options])
    kind = schema.get("type")
    if isinstance(kind, list):
        return st.one_of([values({**schema, "type": one}) for one in kind])
    build = _BY_TYPE.get(str(kind))
    return build(schema) if build else st.one_of(_TEXT, st.integers(), st.booleans(), st.none())


def _object(schema: Json) -> st.SearchStrategy[Any]:
    properties: Json = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    return st.fixed_dictionaries(
        {name: values(sub) for name, sub in properties.items() if name in required},
        optional={name: values(sub) for name, sub in properties.items() if name not in required},
    )


def _array(schema: Json) -> st.SearchStrategy[Any]:
    items = values(schema.get("items") or {"type": "string"})
    return st.lists(items, min_size=schema.get("minItems", 0), max_size=schema.get("maxItems", 6))


def _number(schema: Json) -> st.SearchStrategy[Any]:
    low, high = schema.get("minimum"), schema.get("maximum")
    if schema.get("type") == "integer":
        return st.integers(low, high)
    return st.floats(low, high, allow_nan=False, allow_infinity=False)


_BY_TYPE: dict[str, Callable[[Json], st.SearchStrategy[Any]]] = {
    "object": _object,
    "array": _array,
    "number": _number,
    "integer": _number,
    "string": lambda _: _TEXT,
    "boolean": lambda _: st.booleans(),
    "null": lambda _: st.none(),
}
