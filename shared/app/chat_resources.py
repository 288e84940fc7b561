"""Chats and the listing of their messages (``/v1/chats...``): create, get, list, rename.

A chat exists before its first message (create, then send): ``POST /v1/chats`` is one
Firestore create, and the first turn of the empty chat then costs what any first turn
costs (the claim reads the chat in its transaction anyway; no history is read). A
``request_id`` makes the create idempotent: the chat's id derives from it.

Another user's chat is simply not found. ``GET`` reads and never writes. The title is the
chat's one field a user changes (its etag digests it); a stale etag changes nothing (412).
"""

from __future__ import annotations

import re
import uuid
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from shared.app.api_call import ApiCall, cut_page, page_start
from shared.deps import Deps
from shared.errors import BadRequest, NotFound
from shared.models.chat_api import ChatPage, ChatPatch, ChatResource, MessagePage, NewChat
from shared.models.domain import Chat
from shared.models.wire import CHAT_ID_PATTERN, CLIENT_ID_PATTERN, ChatMessage, Interrupt
from shared.ports import MessagePage as MessageRange
from shared.rest import etags
from shared.rest.paging import PageQuery, scope_of
from shared.services.ids import new_chat_id_for

CHATS_PAGE = (30, 100)  # default and maximum page size
MESSAGES_PAGE = (50, 200)
_SINCE = re.compile(r'^\s*create_time\s*>\s*"([^"]+)"\s*$')


class CreateQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")
    request_id: str | None = Field(default=None, pattern=CLIENT_ID_PATTERN)


class PatchQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")
    update_mask: str = Field(default="title", pattern=r"^title$")  # the one field


class MessageQuery(PageQuery):
    """``filter``: ``create_time > "<RFC 3339>"`` (what arrived after a point, for a poll);
    ``order_by``: ``create_time`` (oldest first, the default) or ``create_time desc``."""

    filter: str = Field(default="", max_length=200)
    order_by: str = Field(default="create_time", pattern=r"^create_time( asc| desc)?$")


def chat_etag(chat: Chat) -> str:
    return etags.etag_of("chat", chat.id, chat.title)


def chat_resource(deps: Deps, chat: Chat) -> ChatResource:
    return ChatResource(
        id=chat.id,
        title=chat.title,
        etag=chat_etag(chat),
        created_at=chat.created_at,
        updated_at=chat.updated_at,
        message_count=chat.message_count,
        question=waiting_question(deps, chat),
    )


def waiting_question(deps: Deps, chat: Chat) -> Interrupt | None:
    """A question the user can answer now (a "by the way" question does not block)."""
    control = chat.control
    return control.interrupt if control.waiting(deps.clock.now()) and control.blocking else None


def create(call: ApiCall) -> ChatResource:
    asked = call.query(CreateQuery)
    body = call.body(NewChat)
    chat_id = (
        new_chat_id_for(call.user_id, asked.request_id)
        if asked.request_id
        else "c" + uuid.uuid4().hex[:20]
    )
    chat = call.deps.conversations.create_chat(
        call.user_id, chat_id, call.deps.clock.now(), title=body.title.strip()
    )
    return chat_resource(call.deps, chat)


def read(call: ApiCall) -> ChatResource:
    return chat_resource(call.deps, _chat(call))


def rename(call: ApiCall) -> ChatResource:
    call.query(PatchQuery)
    body = call.body(ChatPatch)
    expected = etags.wanted(call.request.headers.get("If-Match"), body.etag)
    chat_id = call.id("chat", CHAT_ID_PATTERN)
    title = body.title.strip()
    if not title:
        raise BadRequest("title: give some words")
    renamed = call.deps.conversations.retitle(
        call.user_id, chat_id, title, lambda chat: etags.check(expected, chat_etag(chat))
    )
    if renamed is None:
        raise NotFound("chat not found")
    return chat_resource(call.deps, renamed)


def list_chats(call: ApiCall) -> ChatPage:
    page = call.query(PageQuery)
    scope, size = scope_of("chats"), page.size(*CHATS_PAGE)
    start = page_start(call, scope, page)
    found = call.deps.conversations.list_chats(call.user_id, size + 1, start)
    shown, token = cut_page(call, scope, size, found, lambda c: (c.updated_at, c.id))
    return ChatPage(chats=[chat_resource(call.deps, chat) for chat in shown], next_page_token=token)


def list_messages(call: ApiCall) -> MessagePage:
    page = call.query(MessageQuery)
    chat = _chat(call)
    since = _since(page.filter)
    newest_first = page.order_by.endswith("desc")
    scope = scope_of("messages", chat=chat.id, since=since, newest_first=newest_first)
    size = page.size(*MESSAGES_PAGE)
    wanted = MessageRange(size + 1, since, page_start(call, scope, page), newest_first)
    found = call.deps.conversations.list_messages(call.user_id, chat.id, wanted)
    shown, token = cut_page(call, scope, size, found, lambda m: (m.created_at, m.id))
    return MessagePage(
        messages=[
            ChatMessage(
                id=m.id,
                role=m.role,
                text=m.text,
                created_at=m.created_at,
                sources=m.sources,
                search_suggestions_html=m.search_suggestions_html,
                kind=m.kind,
                question_id=m.question_id,
            )
            for m in shown
        ],
        next_page_token=token,
        question=waiting_question(call.deps, chat),
    )


def _chat(call: ApiCall) -> Chat:
    chat = call.deps.conversations.get_chat(call.user_id, call.id("chat", CHAT_ID_PATTERN))
    if chat is None:
        raise NotFound("chat not found")
    return chat


def _since(text: str) -> datetime | None:
    if not text:
        return None
    found = _SINCE.match(text)
    if found is None:
        raise BadRequest('filter: only create_time > "<RFC 3339 time>" is supported')
    try:
        moment = datetime.fromisoformat(found.group(1).replace("Z", "+00:00"))
    except ValueError as exc:
        raise BadRequest("filter: create_time is not an RFC 3339 time") from exc
    if moment.tzinfo is None:
        raise BadRequest("filter: give the time's offset (Z or +hh:mm)")
    return moment
