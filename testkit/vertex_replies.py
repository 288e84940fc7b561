"""What the fake Vertex endpoint (``testkit.vertex_server``) answers: the request it recorded
and reply builders in Vertex's response shapes (``generateContent``, SSE events, errors with
Google's error body, embeddings, the ranking API).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

Json = dict[str, Any]

_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    501: "UNIMPLEMENTED",
    503: "UNAVAILABLE",
}


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Json
    authorized: bool
    project: str = ""
    location: str = ""
    model: str = ""
    rpc: str = ""


@dataclass(frozen=True)
class FakeReply:
    status: int = 200
    body: Json = field(default_factory=dict)
    events: tuple[Json, ...] = ()  # set for a streamed reply: one SSE event each
    pause: float = 0.0  # seconds between streamed events (a reply a client sees arrive)
    delay: float = 0.0  # seconds before the first byte (a reply stopped before it starts)


def _usage(input_tokens: int, output_tokens: int) -> Json:
    return {
        "promptTokenCount": input_tokens,
        "candidatesTokenCount": output_tokens,
        "totalTokenCount": input_tokens + output_tokens,
    }


def _candidate(text: str, finish: str | None) -> Json:
    candidate: Json = {"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return candidate


def text_reply(text: str, input_tokens: int = 5, output_tokens: int = 7) -> FakeReply:
    return FakeReply(
        body={
            "candidates": [_candidate(text, "STOP")],
            "usageMetadata": _usage(input_tokens, output_tokens),
            "modelVersion": "gemini-fake",
        }
    )


def json_reply(value: Json, input_tokens: int = 5, output_tokens: int = 7) -> FakeReply:
    return text_reply(json.dumps(value), input_tokens, output_tokens)


def stream_reply(
    pieces: Sequence[str],
    input_tokens: int = 5,
    output_tokens: int = 9,
    pause: float = 0.0,
    delay: float = 0.0,
) -> FakeReply:
    """Like Vertex: every event carries (cumulative) usage, the last one a finish reason."""
    events = []
    for i, piece in enumerate(pieces):
        last = i == len(pieces) - 1
        events.append(
            {
                "candidates": [_candidate(piece, "STOP" if last else None)],
                "usageMetadata": _usage(input_tokens, output_tokens if last else i + 1),
            }
        )
    return FakeReply(events=tuple(events), pause=pause, delay=delay)


def finish_reply(reason: str, text: str = "", thoughts: int = 0) -> FakeReply:
    """A candidate stopped for ``reason`` (SAFETY, RECITATION, MAX_TOKENS, ...), with ``text``
    said before it (none: the candidate has no content, as Vertex sends a blocked one)."""
    candidate: Json = {"finishReason": reason, "index": 0}
    if text:
        candidate["content"] = {"role": "model", "parts": [{"text": text}]}
    usage = _usage(5, len(text.split()))  # candidatesTokenCount leaves thoughts out
    usage.update(thoughtsTokenCount=thoughts, totalTokenCount=usage["totalTokenCount"] + thoughts)
    return FakeReply(body={"candidates": [candidate], "usageMetadata": usage})


def blocked_reply(reason: str = "PROHIBITED_CONTENT") -> FakeReply:
    """A prompt Vertex will not answer: no candidates, ``promptFeedback.blockReason``."""
    return FakeReply(
        body={"promptFeedback": {"blockReason": reason}, "usageMetadata": _usage(5, 0)}
    )


def throttled_reply(retry_seconds: float) -> FakeReply:
    """429 RESOURCE_EXHAUSTED with a ``google.rpc.RetryInfo`` detail."""
    reply = error_reply(429, "Resource exhausted. Please try again later.")
    detail = {
        "@type": "type.googleapis.com/google.rpc.RetryInfo",
        "retryDelay": f"{retry_seconds}s",
    }
    reply.body["error"]["details"] = [detail]
    return reply


def error_reply(status: int, message: str = "scripted failure") -> FakeReply:
    return FakeReply(
        status=status,
        body={
            "error": {
                "code": status,
                "message": message,
                "status": _STATUS_NAMES.get(status, "UNKNOWN"),
            }
        },
    )


def embeddings_reply(vectors: Sequence[Sequence[float]]) -> Callable[[RecordedRequest], FakeReply]:
    """Answer whichever embedding call the SDK made, in that call's response shape."""

    def reply(request: RecordedRequest) -> FakeReply:
        if request.rpc == "embedContent":
            return FakeReply(
                body={
                    "embedding": {"values": list(vectors[0])},
                    "usageMetadata": {"promptTokenCount": 3},
                }
            )
        return FakeReply(body={"embeddings": [{"values": list(v)} for v in vectors]})

    return reply


def ranking_reply(request: RecordedRequest) -> FakeReply:
    """The ranking API's answer, scoring each record by the words it shares with the query
    (a stand-in for the semantic ranker: deterministic, and not the input order)."""
    query = set(str(request.body.get("query", "")).lower().split())
    records = request.body.get("records") or []
    scored = [
        {"id": r["id"], "score": len(query & set(str(r.get("content", "")).lower().split()))}
        for r in records
    ]
    scored.sort(key=lambda r: -r["score"])
    top = int(request.body.get("topN") or len(scored))
    return FakeReply(body={"records": scored[:top]})
