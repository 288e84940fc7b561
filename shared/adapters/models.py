"""Choose the model provider from Settings.

Each branch imports only its own adapters (hence the imports inside the function), so a test
never pays for google-genai. Nothing here loads a model or opens a connection: no function
process holds model weights. Offline, ``vertex`` talks to the stack's local model service
(``scripts/model_service``), which serves SmolLM2 and MiniLM over the same REST API.
"""

from __future__ import annotations

from shared.config import Settings
from shared.ports import LLM, Embedder


def build_models(settings: Settings) -> tuple[LLM, Embedder]:
    if settings.model_provider == "vertex":
        from shared.adapters.vertex_llm import build_vertex

        return build_vertex(settings)
    from shared.fakes.scripted_llm import HashEmbedder, ScriptedLLM

    # An empty script: a test that reaches the model without scripting it fails loudly.
    return ScriptedLLM(), HashEmbedder(settings.embedding_dimension)
