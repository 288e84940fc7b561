"""Choose the model provider from Settings.

Each branch imports only its own adapters (hence the imports inside the function), so a cold
start pays for google-genai, or llama.cpp and numpy, never for both. Nothing here loads a model
or opens a connection.
"""

from __future__ import annotations

from shared.config import Settings
from shared.ports import LLM, Embedder


def build_models(settings: Settings) -> tuple[LLM, Embedder]:
    if settings.model_provider == "vertex":
        from shared.adapters.vertex_llm import build_vertex

        return build_vertex(settings)
    if settings.model_provider == "local":
        from shared.adapters.local_embedder import LocalEmbedder
        from shared.adapters.local_llm import LocalLLM

        return LocalLLM(threads=settings.local_threads), LocalEmbedder()
    from shared.adapters.scripted_llm import HashEmbedder, ScriptedLLM

    # An empty script: a test that reaches the model without scripting it fails loudly.
    return ScriptedLLM(), HashEmbedder(settings.embedding_dimension)
