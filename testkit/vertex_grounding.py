"""A grounded answer as Vertex returns it, recorded from Google's documented example.

Source: "Grounding with Google Search", section "Understanding the grounding response",
https://ai.google.dev/gemini-api/docs/google-search (the question "Who won the euro 2024?").
The page elides the redirect links (``https://vertexaisearch.cloud.google.com.....``) and the
widget (``<!-- HTML and CSS for the search widget -->``); here the links get a path of our
own under the same host, and the widget a small chip list of the example's two queries, in
the shape of a ``searchEntryPoint.renderedContent``. Everything else is as documented.
"""

from __future__ import annotations

from typing import Any

from testkit.vertex_replies import FakeReply

ANSWER = (
    "Spain won Euro 2024, defeating England 2-1 in the final. This victory marks Spain's "
    "record fourth European Championship title."
)
QUERIES = ["UEFA Euro 2024 winner", "who won euro 2024"]
REDIRECT = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/"
CHUNKS = [
    {"web": {"uri": REDIRECT + "example-aljazeera", "title": "aljazeera.com"}},
    {"web": {"uri": REDIRECT + "example-uefa", "title": "uefa.com"}},
]
WIDGET = (
    "<style>.chip{display:inline-block;margin:2px;padding:4px 10px;border:1px solid #ddd;"
    'border-radius:16px;font:13px sans-serif}</style><div class="container">'
    + "".join(
        f'<a class="chip" href="https://www.google.com/search?q={q.replace(" ", "+")}">{q}</a>'
        for q in QUERIES
    )
    + "</div>"
)


def grounding_metadata(chunks: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "webSearchQueries": QUERIES,
        "searchEntryPoint": {"renderedContent": WIDGET},
        "groundingChunks": CHUNKS if chunks is None else chunks,
        "groundingSupports": [
            {
                "segment": {"startIndex": 0, "endIndex": 56, "text": ANSWER[:56]},
                "groundingChunkIndices": [0],
            },
            {
                "segment": {"startIndex": 57, "endIndex": len(ANSWER), "text": ANSWER[57:]},
                "groundingChunkIndices": [0, 1],
            },
        ],
    }


def grounded_reply(chunks: list[dict[str, Any]] | None = None) -> FakeReply:
    """The documented answer with its grounding metadata (``chunks`` replaces the sources,
    e.g. to send links a client must not show)."""
    candidate = {
        "content": {"role": "model", "parts": [{"text": ANSWER}]},
        "finishReason": "STOP",
        "index": 0,
        "groundingMetadata": grounding_metadata(chunks),
    }
    usage = {"promptTokenCount": 12, "candidatesTokenCount": 30, "totalTokenCount": 42}
    return FakeReply(body={"candidates": [candidate], "usageMetadata": usage})


def asks_to_ground(body: dict[str, Any]) -> bool:
    """Whether a generateContent body enables the googleSearch tool."""
    return any(
        isinstance(tool, dict) and ("googleSearch" in tool or "google_search" in tool)
        for tool in body.get("tools") or []
    )
