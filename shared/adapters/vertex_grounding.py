"""``WebSearch`` by Gemini grounded in Google Search on Vertex AI (the ``googleSearch``
tool): one plain-text generation whose answer comes with ``groundingMetadata`` (the queries
it ran, the pages it used as ``groundingChunks[].web {uri, title}``, and the search
suggestions widget ``searchEntryPoint.renderedContent`` that Google requires clients to show
with a grounded answer). https://cloud.google.com/vertex-ai/generative-ai/docs/grounding/grounding-with-google-search

The call asks for text, not JSON: the agents' structured steps stay separate, so the
combination of grounding with a response schema (Gemini 3 only) is never needed. Grounded
prompts are billed apart from tokens (per prompt on Gemini 2.5, per search query on
Gemini 3): the findings carry both counts for the job's metering.

A model that cannot ground answers 400 (the local model service has no web):
``WebSearchUnavailable``, so the agent tells the user rather than answering from memory.
"""

from __future__ import annotations

from google import genai
from google.genai import types

from shared.adapters.model_guard import check_allow_model_requests
from shared.adapters.vertex_client import vertex_errors
from shared.adapters.vertex_llm import answer_text, usage_of
from shared.errors import ModelRequestRefused, WebSearchUnavailable
from shared.models.agent_data import MAX_SUGGESTIONS_HTML, WebFindings, https_sources

INSTRUCTION = (
    "Answer the question from current Google Search results, in a few sentences. Say so "
    "when the results do not answer it; never invent opening hours, prices or dates."
)


class VertexGroundedSearch:
    def __init__(self, client: genai.Client, model: str) -> None:
        self._client, self._model = client, model
        self.name = f"vertex-grounding:{model}"

    def search(self, query: str, limit: int) -> WebFindings:
        check_allow_model_requests(self.name)
        config = types.GenerateContentConfig(
            system_instruction=INSTRUCTION,
            temperature=0.0,  # Google's advice for grounded answers
            tools=[types.Tool(google_search=types.GoogleSearch())],
        )
        try:
            with vertex_errors(f"{self.name} grounded search"):
                response = self._client.models.generate_content(
                    model=self._model, contents=query, config=config
                )
        except ModelRequestRefused as refused:
            raise WebSearchUnavailable(f"web search is not available: {refused.message}") from None
        return findings_of(response, limit)


def findings_of(response: types.GenerateContentResponse, limit: int) -> WebFindings:
    """The answer and its grounding, sanitised: https sources only, each link once."""
    candidate = response.candidates[0] if response.candidates else None
    grounding = candidate.grounding_metadata if candidate is not None else None
    chunks = (grounding.grounding_chunks or []) if grounding is not None else []
    pairs = [(c.web.title or "", c.web.uri or "") for c in chunks if c.web is not None]
    queries = list((grounding.web_search_queries or []) if grounding is not None else [])
    entry = grounding.search_entry_point if grounding is not None else None
    html = (entry.rendered_content or "") if entry is not None else ""
    usage = usage_of(response.usage_metadata)
    return WebFindings(
        answer=answer_text(response)[:8000],
        sources=https_sources(pairs, limit),
        queries=[q[:500] for q in queries[:20]],
        suggestions_html=html if len(html) <= MAX_SUGGESTIONS_HTML else "",
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        grounded_prompts=1 if grounding is not None else 0,
        search_queries=len(queries),
    )
