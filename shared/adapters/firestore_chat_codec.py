"""How chats, messages and the HITL control record look in Firestore documents.

Timestamps are stored as Firestore timestamps and come back as UTC datetimes of microsecond
precision; the control record's interrupt is stored in its JSON form.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, TypeVar

from google.cloud.firestore_v1.base_document import DocumentSnapshot
from google.cloud.firestore_v1.document import DocumentReference
from pydantic import BaseModel

from shared.models.domain import Chat, ChatRun, ChatUpdate, HitlControl, Message

Snapshot = DocumentSnapshot[DocumentReference]
M = TypeVar("M", bound=BaseModel)
_TIMES = ("asked_at", "timeout_at", "lease_until")


def plain(value: Any) -> Any:
    """Firestore's values as written: ``DatetimeWithNanoseconds`` becomes a UTC datetime."""
    if isinstance(value, datetime):  # a plain datetime (pydantic keeps the subclass)
        utc = value.astimezone(UTC) if value.tzinfo else value
        return datetime.combine(utc.date(), utc.time(), utc.tzinfo)
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    return value


def model_or_none(model: type[M], data: Any) -> M | None:
    return None if data is None else model.model_validate(plain(data))


def message_data(message: Message) -> dict[str, Any]:
    return {
        "role": message.role,
        "text": message.text,
        "created_at": message.created_at,
        "turn_id": message.turn_id,
        "kind": message.kind,
        **({"question_id": message.question_id} if message.question_id else {}),
        **({"sources": [s.model_dump() for s in message.sources]} if message.sources else {}),
        **(
            {"search_suggestions_html": message.search_suggestions_html}
            if message.search_suggestions_html
            else {}
        ),
    }


def message_from(snap: Snapshot) -> Message:
    data = snap.to_dict() or {}
    return Message(
        id=snap.id,
        role=data["role"],
        text=data["text"],
        created_at=plain(data["created_at"]),
        turn_id=data.get("turn_id"),
        sources=data.get("sources") or [],
        search_suggestions_html=data.get("search_suggestions_html") or "",
        kind=data.get("kind") or "text",  # written before messages said what they are
        question_id=data.get("question_id"),
    )


def control_data(control: HitlControl) -> dict[str, Any]:
    data = control.model_dump(mode="json")
    return data | {name: getattr(control, name) for name in _TIMES}


def chat_from(user_id: str, snap: Snapshot) -> Chat:
    data = snap.to_dict() or {}
    return Chat(
        id=snap.id,
        user_id=user_id,
        created_at=plain(data["created_at"]),
        updated_at=plain(data["updated_at"]),
        title=data.get("title", ""),
        summary=data.get("summary", ""),
        summarized_until=plain(data.get("summarized_until")),
        control=control_from(data.get("control")),
        message_count=int(data.get("message_count", 0)),
        outbox=list(data.get("outbox") or []),
        run=run_from(data.get("run")),
    )


def run_from(data: Any) -> ChatRun:
    return model_or_none(ChatRun, data) or ChatRun()


def run_data(run: ChatRun) -> dict[str, Any]:
    """Timestamps as Firestore timestamps (the queue's too), the rest as JSON."""
    data = run.model_dump(mode="json")
    data["lease_until"] = run.lease_until
    data["queue"] = [{**w.model_dump(mode="json"), "until": w.until} for w in run.queue]
    return data


RUN_RELEASED = {"run.turn_id": None, "run.owner": None, "run.lease_until": None, "run.stop": False}


def control_from(data: Any) -> HitlControl:
    return model_or_none(HitlControl, data) or HitlControl()


def chat_update_data(update: ChatUpdate | None) -> dict[str, Any]:
    """The chat fields a turn's ``ChatUpdate`` writes."""
    if update is None:
        return {}
    data: dict[str, Any] = {}
    if update.summary is not None:
        data["summary"] = update.summary
        data["summarized_until"] = update.summarized_until
    if update.control is not None:
        data["control"] = control_data(update.control)
    if update.title is not None:
        data["title"] = update.title
    return data
