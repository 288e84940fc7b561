"""Web search in a job: the grounded search's tokens and queries count in the job's budget
(queries are billed apart, with a cap of their own), and the job's answer in the chat
carries the sources and the search suggestions."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from shared.agents.tools.research import WebSearchTool
from shared.config import Settings
from shared.deps import Deps
from shared.fakes.clock import FixedClock
from shared.fakes.scripted_llm import HashEmbedder, ScriptedLLM
from shared.models.agent_data import WebFindings, WebSource
from shared.ports import LLMRequest
from testkit.fakes import in_memory_stores
from tests.unit.agents.agent_kit import (
    Runner,
    ScriptedCatalog,
    TeamModel,
    agent,
    call,
    finish,
    make_job,
    sub,
)

WIDGET = '<div class="chip">who won euro 2024</div>'


@dataclass
class GroundedWeb:
    """A provider answering like Gemini's grounding: sources, suggestions, 2 queries."""

    def search(self, query: str, limit: int) -> WebFindings:
        sources = [WebSource(title="uefa.com", uri="https://example.org/uefa")]
        return WebFindings(answer="Spain won.", sources=sources, suggestions_html=WIDGET,
                           input_tokens=12, output_tokens=30, grounded_prompts=1,
                           search_queries=2)  # fmt: skip


@pytest.fixture
def web_deps(clock: FixedClock, team: TeamModel) -> Deps:
    settings = Settings(env="test", model_provider="scripted", agent_job_max_web_queries=3)
    deps = Deps(
        settings, clock=clock, llm=ScriptedLLM(handler=team.handler),
        embedder=HashEmbedder(dimension=64), web_search=GroundedWeb(), **in_memory_stores(clock),
    )  # fmt: skip
    deps.conversations.create_chat("alice", "c1", clock.now())
    return deps


@pytest.fixture
def runner(web_deps: Deps) -> Runner:
    researcher = agent("researcher", tools=["web_search"])
    return Runner(web_deps, ScriptedCatalog([researcher], [WebSearchTool()]))


def test_the_answer_carries_the_sources_and_the_cost_is_counted(
    runner: Runner, team: TeamModel, clock: FixedClock
) -> None:
    team.on("who won", call("web_search", query="who won euro 2024"), finish("Spain won."))
    outcome = runner.run(make_job(clock.now(), sub("a", "who won", agent="researcher")))
    assert outcome.status == "done"
    [answer] = [m for m in runner.deps.conversations.recent_messages("alice", "c1", 10)
                if m.id == "t1-job0-result"]  # fmt: skip
    assert [(s.title, s.uri) for s in answer.sources] == [("uefa.com", "https://example.org/uefa")]
    assert answer.search_suggestions_html == WIDGET
    state = runner.state()
    assert state.web_queries_used == 2 and state.tokens_used >= 42


def test_web_queries_past_the_jobs_cap_are_refused(
    runner: Runner, team: TeamModel, clock: FixedClock
) -> None:
    seen: list[str] = []

    def finishing(request: LLMRequest) -> dict[str, str]:
        seen.append("\n".join(turn.text for turn in request.messages))
        return finish("I could only search once.")

    team.on(
        "who won",
        call("web_search", query="first"),
        call("web_search", query="second"),  # 4 queries > the cap of 3
        finishing,
    )
    outcome = runner.run(make_job(clock.now(), sub("a", "who won", agent="researcher")))
    assert outcome.status == "done"  # the second search refused, the job went on
    assert runner.state().web_queries_used == 4
    assert runner.chat()["t1-job0-result"] == "I could only search once."
    assert "refused: web_search: the job spent its budget" in seen[-1]
