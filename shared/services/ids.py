"""Deterministic ids: a retried request or a redelivered event maps to the same records."""

from __future__ import annotations

import hashlib


def _digest(*parts: str, length: int = 24) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:length]


def turn_id_for(user_id: str, client_message_id: str) -> str:
    return "t" + _digest(user_id, client_message_id)


def new_chat_id_for(user_id: str, client_message_id: str) -> str:
    """A chat made by a retried request (``POST /v1/chats?request_id=``, or an internal
    caller's first message) must be the same chat both times."""
    return "c" + _digest("chat", user_id, client_message_id, length=20)


def extraction_task_name(turn_id: str) -> str:
    return f"extract-{turn_id}"


def summary_task_name(turn_id: str) -> str:
    """A task that only keeps the chat's new summary: its own name, so a question's deferred
    extraction (named from the same turn) is never refused as a duplicate."""
    return f"summarize-{turn_id}"


def answer_task_name(turn_id: str) -> str:
    """The task carrying the answer to a turn's "by the way" question: its own name, as the
    turn's extraction task may still be queued under ``extraction_task_name``."""
    return f"answer-{turn_id}"


def job_id_for(turn_id: str, step: int) -> str:
    return f"{turn_id}-job{step}"
