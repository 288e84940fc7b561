"""Research tools: the user's memory (facts), their notes and documents, and the web.

``memory_search`` embeds the query and asks ``FactStore.search`` for the user's own facts
(their privacy mode hides facts of high sensitivity). ``web_search`` needs a provider
(``Settings.web_search_provider``); without one the tool is not offered (``available``).
Its cost goes to the job's budget, its sources to the job's answer (``ToolContext``); where
the web cannot be reached (the local model service) it says so, for the agent to tell.
"""

from __future__ import annotations

import logging

from pydantic import Field

from shared.agents.spec import AgentPorts, ToolContext, ToolRefused
from shared.agents.tools.common import ToolBase, result
from shared.errors import WebSearchUnavailable
from shared.models.base import Strict
from shared.models.memory import SemanticQuery
from shared.ports import Usage

log = logging.getLogger("agents")


class MemorySearchArgs(Strict):
    query: str = Field(min_length=1, max_length=500, pattern=r"\S")
    limit: int = Field(default=8, ge=1, le=20)


class WebSearchArgs(Strict):
    query: str = Field(min_length=1, max_length=300, pattern=r"\S")
    limit: int = Field(default=5, ge=1, le=10)


class MemorySearch(ToolBase[MemorySearchArgs]):
    name = "memory_search"
    description = "Search what the assistant knows about the user and the people they know."
    args_schema = MemorySearchArgs

    def call(self, context: ToolContext, args: MemorySearchArgs) -> str:
        ports = context.ports
        profile = ports.profiles.get_profile(context.user_id)
        [embedding] = ports.embedder.embed([args.query], task="RETRIEVAL_QUERY")
        query = SemanticQuery(
            embedding=embedding,
            embedding_model=ports.embedder.model_name,
            limit=args.limit,
            privacy_mode=profile.privacy_mode,
        )
        found = ports.facts.search(context.user_id, query, ports.clock.now())
        return result(
            facts=[
                {
                    "text": scored.fact.text,
                    "type": scored.fact.type,
                    "about": scored.fact.relation_to_user,
                    "since": scored.fact.valid_from,
                    "score": round(scored.score, 3),
                }
                for scored in found
            ]
        )


NO_WEB = (
    "Web search is not available here ({why}). Tell the user you could not search the web "
    "for this; do not answer from memory as if you had."
)


class WebSearchTool(ToolBase[WebSearchArgs]):
    name = "web_search"
    description = (
        "Search the web for current facts (opening hours, prices, news): an answer grounded "
        "in web pages, with the sources to cite."
    )
    args_schema = WebSearchArgs

    def available(self, ports: AgentPorts) -> bool:
        return ports.web_search is not None

    def call(self, context: ToolContext, args: WebSearchArgs) -> str:
        provider = context.ports.web_search
        if provider is None:
            raise ToolRefused("web_search: no web search provider is configured")
        try:
            found = provider.search(args.query, args.limit)
        except WebSearchUnavailable as missing:
            return result(available=False, note=NO_WEB.format(why=missing.message))
        spent = Usage(
            input_tokens=found.input_tokens,
            output_tokens=found.output_tokens,
            search_queries=found.search_queries,
        )
        log.info(
            "web search",
            extra={"job_id": context.job_id, "grounded_prompts": found.grounded_prompts,
                   **spent.model_dump()},
        )  # fmt: skip
        if context.spend is not None and not context.spend(spent):
            raise ToolRefused("web_search: the job spent its budget (tokens or web queries)")
        if context.cite is not None and (found.sources or found.suggestions_html):
            context.cite(found)  # shown with the job's answer: links and suggestions
        return result(
            answer=found.answer,
            sources=[s.model_dump() for s in found.sources[: args.limit]],
            results=[r.model_dump() for r in found.snippets[: args.limit]],
        )
