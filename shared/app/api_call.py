"""One authenticated ``/v1`` request as a route's handler sees it: who asks, the path's
variables, and the request's body and query parsed by their models."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

import flask
from pydantic import BaseModel, ConfigDict

from shared.deps import Deps
from shared.errors import NotFound
from shared.rest.paging import PageQuery
from shared.rest.routes import query
from shared.web import parse_json, read_body

M = TypeVar("M", bound=BaseModel)
Item = TypeVar("Item")


@dataclass(frozen=True)
class ApiCall:
    deps: Deps
    user_id: str
    request: flask.Request
    params: dict[str, str]
    trace: str | None = None

    def body(self, model: type[M]) -> M:
        """The JSON body as ``model``; an empty body is ``{}`` (a create with defaults)."""
        raw = read_body(self.request, self.deps.settings.max_body_bytes)
        return parse_json(raw or b"{}", model)

    def query(self, model: type[M]) -> M:
        return query(self.request, model)

    def no_query(self) -> None:
        """A route that takes no query parameter refuses any (400), rather than ignore it."""
        query(self.request, NoQuery)

    def id(self, name: str, pattern: str) -> str:
        """A path variable naming a resource; one that no resource could have is simply not
        found, like another user's (the same answer: nothing tells them apart)."""
        value = self.params[name]
        reserved = value.startswith("__") and value.endswith("__")  # Firestore's own ids
        if reserved or not re.fullmatch(pattern, value):
            raise NotFound(f"{name} not found")
        return value


class NoQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")


Position = tuple[datetime, str]  # the last item of a page: its time and id


def page_start(call: ApiCall, scope: str, page: PageQuery) -> Position | None:
    """Where the page asked for starts: after the token's position (None: the first page)."""
    if not page.page_token:
        return None
    now = call.deps.clock.now()
    moment, item_id = call.deps.page_tokens.read(page.page_token, call.user_id, scope, now)
    return datetime.fromisoformat(str(moment)), str(item_id)


def next_token(call: ApiCall, scope: str, more: bool, last: Position | None) -> str:
    """The next page's token; empty on the last page (nothing came after it)."""
    if not more or last is None:
        return ""
    moment, item_id = last
    position = [moment.isoformat(), item_id]
    return call.deps.page_tokens.issue(call.user_id, scope, position, call.deps.clock.now())


def cut_page(
    call: ApiCall, scope: str, size: int, found: list[Item], position: Callable[[Item], Position]
) -> tuple[list[Item], str]:
    """The page of ``size`` items from a read of ``size + 1`` (an extra item says another
    page follows), and the next page's token, after the last item shown."""
    shown = found[:size]
    last = position(shown[-1]) if shown else None
    return shown, next_token(call, scope, len(found) > size, last)
