"""Research grounded in Google Search: the real google-genai client against the faithful
Vertex fake, which answers Google's documented grounded example and refuses what Vertex
refuses (no grounding on a model that cannot, no JSON mode with it before Gemini 3)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scripts.model_service.vertex_rules import generate_refusal
from shared.adapters import model_guard
from shared.adapters.vertex_client import build_vertex_client
from shared.adapters.vertex_grounding import VertexGroundedSearch
from shared.config import Settings
from shared.deps import Deps
from shared.errors import WebSearchUnavailable
from testkit.vertex_grounding import ANSWER, QUERIES, REDIRECT, WIDGET, grounded_reply
from testkit.vertex_server import FakeVertexServer

GROUNDED = {"contents": [{"role": "user", "parts": [{"text": "q"}]}],
            "tools": [{"googleSearch": {}}]}  # fmt: skip
JSON_MODE = {"responseMimeType": "application/json", "responseJsonSchema": {"type": "object"}}


@pytest.fixture(autouse=True)
def allow_model_requests() -> Iterator[None]:
    with model_guard.override_allow_model_requests(True):
        yield


@pytest.fixture
def fake() -> Iterator[FakeVertexServer]:
    with FakeVertexServer(token="test-token") as server:
        yield server


def settings(fake: FakeVertexServer, **changes: str) -> Settings:
    return Settings(
        model_provider="vertex", gcp_project="test-project", vertex_location="europe-west4",
        vertex_base_url=fake.base_url, vertex_access_token="test-token", **changes,
    )  # fmt: skip


def search(fake: FakeVertexServer, model: str = "gemini-3.5-flash") -> VertexGroundedSearch:
    return VertexGroundedSearch(build_vertex_client(settings(fake)), model)


def test_a_grounded_answer_comes_with_its_sources_suggestions_and_cost(
    fake: FakeVertexServer,
) -> None:
    fake.add(grounded_reply())
    found = search(fake).search("Who won the euro 2024?", 5)
    assert found.answer == ANSWER
    assert [(s.title, s.uri) for s in found.sources] == [
        ("aljazeera.com", REDIRECT + "example-aljazeera"), ("uefa.com", REDIRECT + "example-uefa")
    ]  # fmt: skip
    assert found.queries == QUERIES and found.suggestions_html == WIDGET
    assert (found.input_tokens, found.output_tokens) == (12, 30)
    assert (found.grounded_prompts, found.search_queries) == (1, 2)
    [request] = fake.requests
    assert request.body["tools"] == [{"googleSearch": {}}]
    assert "responseMimeType" not in request.body.get("generationConfig", {})


def test_links_that_are_not_https_are_never_kept(fake: FakeVertexServer) -> None:
    bad = ["http://example.com/a", "javascript:alert(1)", "data:text/html,x", "ftp://x.org/f",
           'https://ok.example/"onmouseover=x', "https://ok.example/page"]  # fmt: skip
    fake.add(grounded_reply([{"web": {"uri": uri, "title": f"t{n}"}} for n, uri in enumerate(bad)]))
    found = search(fake).search("q", 10)
    assert [s.uri for s in found.sources] == ["https://ok.example/page"]


def test_the_local_model_service_has_no_web_and_says_so(fake: FakeVertexServer) -> None:
    with pytest.raises(WebSearchUnavailable, match="not supported by model smollm2"):
        search(fake, "smollm2-135m-instruct").search("Kunsthaus opening hours Sunday", 5)


def test_grounding_with_json_mode_is_refused_before_gemini_3_and_taken_by_gemini_3() -> None:
    with_json = {**GROUNDED, "generationConfig": JSON_MODE}
    refused = generate_refusal("gemini-2.5-flash", with_json)
    assert refused is not None and refused.status == 400
    assert "response mime type" in refused.message
    assert generate_refusal("gemini-3.5-flash", with_json) is None
    assert generate_refusal("gemini-2.5-flash", GROUNDED) is None  # text answers: fine
    assert generate_refusal("smollm2-135m-instruct", GROUNDED) is not None


def test_the_provider_is_configuration(fake: FakeVertexServer) -> None:
    assert Deps(settings(fake)).web_search is None  # "none" by default
    chosen = Deps(settings(fake, web_search_provider="vertex")).web_search
    assert isinstance(chosen, VertexGroundedSearch) and chosen.name.endswith("gemini-3.5-flash")
