"""How the turn state is serialized into checkpoints: LangGraph's msgpack, with an allowlist.

Reading a checkpoint rebuilds the pydantic models it holds; only the state's own model
classes may be rebuilt (anything else in a tampered or foreign checkpoint is refused).
"""

from __future__ import annotations

import inspect
from types import ModuleType

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from pydantic import BaseModel

from shared.graph import state
from shared.models import domain, history, memory, wire


def _models(module: ModuleType) -> list[tuple[str, str]]:
    return [
        (cls.__module__, cls.__name__)
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, BaseModel) and cls.__module__ == module.__name__
    ]


def checkpoint_serde() -> JsonPlusSerializer:
    allowed = [
        model for module in (state, domain, history, memory, wire) for model in _models(module)
    ]
    return JsonPlusSerializer(allowed_msgpack_modules=allowed)
