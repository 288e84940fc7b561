"""Research tools: the user's memory (facts), their notes and documents, and the web.

``memory_search`` embeds the query and asks ``FactStore.search`` for the user's own facts
(their privacy mode hides facts of high sensitivity). ``web_search`` needs a provider; none
is built in, and without one the tool is not offered (``available``).
"""

from __future__ import annotations

from pydantic import Field

from shared.agents.spec import AgentPorts, ToolContext, ToolRefused
from shared.agents.tools.common import ToolBase, result
from shared.models.base import Strict
from shared.models.memory import SemanticQuery


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


class WebSearchTool(ToolBase[WebSearchArgs]):
    name = "web_search"
    description = "Search the web; results have a title, a URL to cite and a snippet."
    args_schema = WebSearchArgs

    def available(self, ports: AgentPorts) -> bool:
        return ports.web_search is not None

    def call(self, context: ToolContext, args: WebSearchArgs) -> str:
        provider = context.ports.web_search
        if provider is None:
            raise ToolRefused("web_search: no web search provider is configured")
        return result(results=provider.search(args.query, args.limit)[: args.limit])
