"""The model behind the served functions in end-to-end tests and load benchmarks: rules.

The functions run in their own processes with the production ``vertex`` provider pointed at
the fake Vertex endpoint, so the whole production client path runs; these rules answer by
what the request asks for. Markers in the user's message steer the classifier:
``[complex]`` -> a plan with one research step (published as an agent job; ``[badplan]``
names an agent that does not exist; ``[act]`` plans the acting productivity agent, which
needs the user's approval), ``[facts]`` -> extractable facts (about the first
``@Name`` if any; a phone number is a Contact fact, ``[unsure]`` lowers its confidence),
``[ask]`` -> semantic retrieval, ``@Name`` -> a person mentioned.
``[slowly]`` -> the reply streams a word every 0.15 s (a client sees it arrive);
``[late]`` -> the classification answers after 2 s (a newer message stops the turn's reply
before its first word); ``[unsafe]`` -> the reply stops for SAFETY before its first word;
``[team]`` -> three research steps, the third needing the other two (one job of three
subtasks); ``[poison]`` anywhere in a request -> Vertex answers 503 (a job that always
fails). A job's agent finishes at its first step with "Result for: <its goal>", unless its
goal mentions an email: then it calls ``email_send`` first (the job asks for approval), or
says "remind me in N minutes to ...": then it calls ``reminders_add`` for now + N minutes, or
holds ``[fails]`` (kept in the plan's goals): then its steps break their schema, so the
subtask fails for good, or ``[web]``: then it calls ``web_search`` first, which (the
``googleSearch`` tool) gets Google's documented grounded answer (testkit/vertex_grounding.py).
``[remind]`` plans the productivity agent, which adds the reminder "Remind me to <x>" for
tomorrow; ``[spend]`` plans the wealth agent, which records "I spent <n> CHF on <category>"
as an expense. A planning request that names ``Unplanned`` is refused (400): a test sends it
where the plan must come from the execution memory, never from the model.
"""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from shared.fakes.scripted_llm import HashEmbedder
from testkit.vertex_grounding import asks_to_ground, grounded_reply
from testkit.vertex_server import (
    FakeReply,
    RecordedRequest,
    embeddings_reply,
    error_reply,
    finish_reply,
    json_reply,
    stream_reply,
    text_reply,
)

_EMBEDDER = HashEmbedder(dimension=768)
NO_PLANNING = "Unplanned"  # the planner must not be asked about it
WEB = "[web]"  # a research goal whose agent searches the web before it answers
FAILS = "[fails]"  # a subtask whose goal holds it fails for good
_MARKERS = re.compile(
    r"\[(facts|ask|complex|badplan|act|team|poison|unsure|slowly|late|unsafe|remind|spend)\]\s*"
)


def _user_text(request: RecordedRequest) -> str:
    contents = request.body.get("contents") or []
    parts = contents[-1].get("parts", []) if contents else []
    return "".join(str(part.get("text", "")) for part in parts)


def _schema_fields(request: RecordedRequest) -> set[str]:
    config = request.body.get("generationConfig") or {}
    schema: dict[str, Any] = config.get("responseJsonSchema") or config.get("responseSchema") or {}
    return set((schema.get("properties") or {}).keys())


_MENTION = re.compile(r"@(\w+)")
_COMPLEX = ("[complex]", "[act]", "[team]", "[remind]", "[spend]")  # planned requests


def _classification(text: str) -> dict[str, Any]:
    return {
        "route": "complex" if any(m in text for m in _COMPLEX) else "simple",
        "has_extractable_facts": "[facts]" in text,
        "has_preferences": False,
        "needs_semantic_retrieval": "[ask]" in text,
        "needs_temporal_retrieval": False,
        "entities": [{"name": name, "role": None} for name in _MENTION.findall(text)],
        "temporal_references": [],
        "language": "en",
    }


def _extraction(prompt: str) -> dict[str, Any]:
    message = prompt.rsplit("Message:", 1)[-1]  # the prompt puts the user's words last
    fact = _MARKERS.sub("", message).replace("@", "").strip()[:200] or "nothing"
    names = _MENTION.findall(message)
    about = names[0] if names else "user"
    return {
        "facts": [
            {
                "text": fact,
                "type": "Contact" if "phone" in fact else "Other",
                "about": about,
                "confidence": 0.6 if "[unsure]" in message else 0.9,
            }
        ],
        "entities": [{"name": name} for name in names],
        "topics": [],
    }


def _plan(text: str) -> dict[str, Any]:
    goal = _MARKERS.sub("", text).strip() or "the task"
    agent = "nonexistent" if "[badplan]" in text else "research"
    if "[act]" in text or "[remind]" in text:
        agent = "productivity"  # acts for the user: the turn asks for approval first
    if "[spend]" in text:
        agent = "wealth"
    if "[team]" in text:  # two parts at once, then one that needs both
        return {
            "steps": [
                {"id": "s1", "agent": "research", "goal": f"hotels for {goal}"},
                {"id": "s2", "agent": "research", "goal": f"flights for {goal}"},
                {"id": "s3", "agent": "research", "goal": f"compare {goal}",
                 "depends_on": ["s1", "s2"]},
            ]
        }  # fmt: skip
    return {"steps": [{"id": "s1", "agent": agent, "goal": goal}]}


_EARLIER = re.compile(r"^Result of (\S+):", re.MULTILINE)
_REMIND = re.compile(r"remind me in (\d+) minutes? to (.+)", re.IGNORECASE)
_SPENT = re.compile(r"I spent (\d+(?:\.\d\d)?) CHF on (\w+)", re.IGNORECASE)


def _agent_step(text: str) -> dict[str, Any]:
    """A job's agent finishes at once: the result for its goal, naming what it was given.
    A goal that mentions an email sends one first (a sensitive tool: the job asks)."""
    if text.startswith("Result: "):  # the tool answered: done
        return {"action": "finish", "text": f"Done. {text[:300]}"}
    goal = text.split("\n", 1)[0].removeprefix("Goal: ")
    if FAILS in goal:
        return {"action": "dance"}  # not an action: the step breaks its schema
    if WEB in goal:  # searches the web first (a grounded answer with its sources)
        return {"action": "tool", "tool": "web_search", "tool_args": json.dumps({"query": goal})}
    call = _tool_call(goal)
    if call is not None:
        tool, args = call
        return {"action": "tool", "tool": tool, "tool_args": json.dumps(args)}
    used = _EARLIER.findall(text)
    suffix = f" (using {', '.join(used)})" if used else ""
    return {"action": "finish", "text": f"Result for: {goal}{suffix}"}


_EMAIL_GOAL = re.compile(r"\bemail (\w+)(?: that (.+))?", re.IGNORECASE)


def _email_of(goal: str) -> dict[str, Any]:
    """ "Email Carla that the meeting moved" mails carla@example.com "The meeting moved";
    any other goal mails Bea the itinerary."""
    named = _EMAIL_GOAL.search(goal)
    to = f"{named.group(1).lower()}@example.com" if named else "bea@example.com"
    about = named.group(2) if named and named.group(2) else ""
    subject = about[:80].rstrip(" .").capitalize() if about else "Itinerary"
    return {"to": [to], "subject": subject, "body": goal}


def _tool_call(goal: str) -> tuple[str, dict[str, Any]] | None:
    """The tool a goal's first step calls, with its arguments; None: it answers at once."""
    if "email" in goal.lower():
        return "email_send", _email_of(goal)
    remind = _REMIND.search(goal)
    if remind:  # "remind me in 2 minutes to call Tom": the reminder, due from now
        due = datetime.now(UTC) + timedelta(minutes=int(remind.group(1)))
        return "reminders_add", {"text": remind.group(2).strip(), "due_at": due.isoformat()}
    if goal.lower().startswith("remind me"):  # "[remind] Remind me to ...": tomorrow
        due = (datetime.now(UTC) + timedelta(days=1)).replace(microsecond=0)
        text = goal.removeprefix("Remind me to ").strip()[:200]
        return "reminders_add", {"text": text, "due_at": due.isoformat()}
    if spent := _SPENT.search(goal):
        return "expense_record", {
            "amount": spent[1],
            "currency": "CHF",
            "category": spent[2].lower(),
        }
    return None


def _streamed(text: str) -> FakeReply:
    if "[unsafe]" in text:
        return finish_reply("SAFETY")
    words = f"You said: {text}".split(" ")
    pause = 0.15 if "[slowly]" in text else 0.0
    return stream_reply([w + " " for w in words[:-1]] + [words[-1]], pause=pause)


def reply_for(request: RecordedRequest) -> FakeReply:
    if request.rpc in ("embedContent", "batchEmbedContents"):
        texts = [
            "".join(p.get("text", "") for p in item["content"]["parts"])
            for item in request.body.get("requests", [request.body])
        ]
        return embeddings_reply(_EMBEDDER.embed(texts))(request)
    text = _user_text(request)
    if "[poison]" in text:  # a job the model never serves: the agents function fails each time
        return error_reply(503, "poisoned")
    if request.rpc == "streamGenerateContent":
        return _streamed(text)
    if "steps" in _schema_fields(request) and NO_PLANNING in text:
        return error_reply(400, "the planner was asked for a plan that history should give")
    structured = _STRUCTURED.get(next(iter(_schema_fields(request) & set(_STRUCTURED)), ""))
    if structured is not None:
        delay = 2.0 if "[late]" in text and "route" in _schema_fields(request) else 0.0
        return dataclasses.replace(json_reply(structured(text)), delay=delay)
    return _plain(request, text)


def _plain(request: RecordedRequest, text: str) -> FakeReply:
    """A text answer; the research agent's web search (the googleSearch tool) gets Google's
    documented grounded answer."""
    return grounded_reply() if asks_to_ground(request.body) else text_reply(f"Result for: {text}")


# A structured call is recognised by a field only its schema has.
_STRUCTURED: dict[str, Any] = {
    "route": _classification,
    "facts": _extraction,
    "steps": _plan,  # the global planner
    "answers_question": lambda _text: {"answers_question": False, "option_id": None},
    "tool_args": _agent_step,  # a step of an agent job
    "verdict": lambda _text: {"verdict": "OK", "note": ""},  # the jobs' watchdog
}
