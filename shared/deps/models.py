"""Choose the model provider from Settings, and say at start-up which configured model is retired.

Each branch imports only its own adapters (hence the imports inside the function), so a test
never pays for google-genai. Nothing here loads a model or opens a connection: no function
process holds model weights. Offline, ``vertex`` talks to the stack's local model service
(``scripts/model_service``), which serves SmolLM2 and MiniLM over the same REST API.
"""

from __future__ import annotations

import logging
from datetime import date

from shared.config import Settings
from shared.model_catalog import retirement_problems
from shared.ports import LLM, Embedder


def build_models(settings: Settings) -> tuple[LLM, Embedder]:
    if settings.model_provider == "vertex":
        from shared.adapters.vertex_llm import build_vertex

        return build_vertex(settings)
    from shared.fakes.scripted_llm import HashEmbedder, ScriptedLLM

    # An empty script: a test that reaches the model without scripting it fails loudly.
    return ScriptedLLM(), HashEmbedder(settings.embedding_dimension)


def log_retired_models(settings: Settings, today: date) -> list[str]:
    """At start-up, an error the operator sees for each configured model past its retirement
    (every call to it would fail with 404), or unknown to the catalog."""
    models = {str(kind): model for kind, model in settings.models().items()}
    models["embeddings"] = settings.vertex_embedding_model
    problems = retirement_problems(models, today)
    for problem in problems:
        logging.getLogger("models").error("model configuration: %s", problem)
    return problems
