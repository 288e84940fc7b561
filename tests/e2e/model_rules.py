"""The model behind the served functions in end-to-end tests: rules, not a queue.

The functions run in their own processes with the production ``vertex`` provider pointed at
the fake Vertex endpoint, so the whole production client path runs; these rules answer by
what the request asks for. Markers in the user's message steer the classifier:
``[complex]`` -> a plan with one research step (published as an agent job), ``[facts]`` ->
extractable facts.
"""

from __future__ import annotations

from typing import Any

from shared.adapters.scripted_llm import HashEmbedder
from tests.fakes.vertex_server import (
    FakeReply,
    RecordedRequest,
    embeddings_reply,
    json_reply,
    stream_reply,
    text_reply,
)

_EMBEDDER = HashEmbedder(dimension=768)


def _user_text(request: RecordedRequest) -> str:
    contents = request.body.get("contents") or []
    parts = contents[-1].get("parts", []) if contents else []
    return "".join(str(part.get("text", "")) for part in parts)


def _schema_fields(request: RecordedRequest) -> set[str]:
    config = request.body.get("generationConfig") or {}
    schema: dict[str, Any] = config.get("responseJsonSchema") or config.get("responseSchema") or {}
    return set((schema.get("properties") or {}).keys())


def _classification(text: str) -> dict[str, Any]:
    return {
        "route": "complex" if "[complex]" in text else "simple",
        "has_extractable_facts": "[facts]" in text,
        "has_preferences": False,
        "needs_semantic_retrieval": False,
        "needs_temporal_retrieval": False,
        "entities": [],
        "language": "en",
    }


def _extraction(prompt: str) -> dict[str, Any]:
    message = prompt.rsplit("Message:", 1)[-1]  # the prompt puts the user's words last
    fact = message.replace("[facts]", "").strip()[:200] or "nothing"
    return {
        "facts": [{"text": fact, "type": "Other", "about": "user", "confidence": 0.9}],
        "topics": [],
    }


def reply_for(request: RecordedRequest) -> FakeReply:
    if request.rpc in ("embedContent", "batchEmbedContents"):
        texts = [
            "".join(p.get("text", "") for p in item["content"]["parts"])
            for item in request.body.get("requests", [request.body])
        ]
        return embeddings_reply(_EMBEDDER.embed(texts))(request)
    text = _user_text(request)
    if request.rpc == "streamGenerateContent":
        words = f"You said: {text}".split(" ")
        return stream_reply([w + " " for w in words[:-1]] + [words[-1]])
    fields = _schema_fields(request)
    if "route" in fields:
        return json_reply(_classification(text))
    if "facts" in fields:
        return json_reply(_extraction(text))
    if "steps" in fields:  # the global planner: one long step for the research agent
        goal = text.replace("[complex]", "").strip() or "the task"
        return json_reply({"steps": [{"id": "s1", "agent": "research", "goal": goal}]})
    if "answers_question" in fields:
        return json_reply({"answers_question": False, "option_id": None})
    return text_reply(f"Result for: {text}")
