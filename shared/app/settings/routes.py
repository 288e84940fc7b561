"""The memory function's ``/v1`` API: each method and path template, what it reads from
the query string, the path and the body, and the part of ``SettingsApi`` it calls.
docs/openapi.yaml describes the same table (a test holds them together).

Every route validates its query string against its own model, so an unknown or repeated
parameter is 400 on any route; ids in the path are UUIDs (else 400); ``GET`` only reads.
A body naming an ``etag`` answers it in the ``ETag`` header too.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import flask
from pydantic import BaseModel

from shared.app.settings.api import SettingsApi
from shared.app.settings.calendar_feed import CalendarFeedAdmin
from shared.app.settings.queries import (
    DeleteAccountQuery,
    EventsQuery,
    ExpensesQuery,
    FactsQuery,
    FilteredPage,
    NoQuery,
    NotesQuery,
    PatchQuery,
)
from shared.errors import BadRequest
from shared.models.history_api import ForgetAllRequest
from shared.models.memory_api import SearchFactsRequest
from shared.models.memory_v1 import (
    AssistantPatch,
    FactPatch,
    HitlPatch,
    MergeRequest,
    PendingAnswer,
    PersonPatch,
    SplitRequest,
)
from shared.models.notify_api import NotificationSettingsPatch
from shared.models.things_v1 import CalendarEventPatch, NotePatch
from shared.rest import etags
from shared.rest.paging import PageQuery
from shared.rest.routes import Route, Router, query
from shared.web import json_response, parse_json, read_body

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Call:
    """One request to a route: the caller, the path's variables, the parsed query."""

    request: flask.Request
    params: Mapping[str, str]
    user_id: str
    api: SettingsApi
    max_body: int
    args: Any = None  # the route's query model

    def body(self, model: type[M]) -> M:
        return parse_json(read_body(self.request, self.max_body) or b"{}", model)

    def id(self, name: str) -> str:
        """The path variable ``name``, a UUID (canonical form)."""
        try:
            return str(uuid.UUID(self.params[name]))
        except ValueError as exc:
            raise BadRequest(f"{name}: not a UUID") from exc

    @property
    def if_match(self) -> str | None:
        return self.request.headers.get("If-Match")


Run = Callable[[Call], BaseModel]


def _route(method: str, template: str, run: Run, args: type[BaseModel] = NoQuery) -> Route:
    def handler(call: Call) -> flask.Response:
        parsed = replace(call, args=query(call.request, args))
        body = run(parsed).model_dump(mode="json")
        response = json_response(body)
        if isinstance(body.get("etag"), str):
            response.headers["ETag"] = etags.header(body["etag"])
        return response

    return Route(method, template, handler)


def _patch(run: Callable[[Call, str | None], BaseModel]) -> Run:
    return lambda c: run(c, c.args.update_mask)


def _restore(call: Call) -> BaseModel:
    call.body(NoQuery)  # {} or nothing
    return call.api.facts.restore(call.user_id, call.id("fact"))


def _forget_all(call: Call) -> BaseModel:
    call.body(ForgetAllRequest)  # {"confirm": true}
    return call.api.strategies.forget_all(call.user_id)


def _delete_account(call: Call) -> BaseModel:
    call.args.confirmed()
    return call.api.account.delete(call.user_id)


def _feed(call: Call) -> CalendarFeedAdmin:
    call.body(NoQuery)  # {} or nothing
    return call.api.calendar_feed


THINGS = [
    _route(
        "GET", "/v1/calendarEvents", lambda c: c.api.things.events(c.user_id, c.args), EventsQuery
    ),
    _route(
        "PATCH",
        "/v1/calendarEvents/{event}",
        lambda c: c.api.things.patch_event(
            c.user_id, c.params["event"], c.body(CalendarEventPatch), c.if_match
        ),
    ),
    _route(
        "DELETE",
        "/v1/calendarEvents/{event}",
        lambda c: c.api.things.delete(c.user_id, "events", c.params["event"]),
    ),
    _route("GET", "/v1/notes", lambda c: c.api.things.notes(c.user_id, c.args), NotesQuery),
    _route(
        "PATCH",
        "/v1/notes/{note}",
        lambda c: c.api.things.patch_note(
            c.user_id, c.params["note"], c.body(NotePatch), c.if_match
        ),
    ),
    _route(
        "DELETE",
        "/v1/notes/{note}",
        lambda c: c.api.things.delete(c.user_id, "notes", c.params["note"]),
    ),
    _route(
        "GET", "/v1/expenses", lambda c: c.api.things.expenses(c.user_id, c.args), ExpensesQuery
    ),
    _route(
        "DELETE",
        "/v1/expenses/{expense}",
        lambda c: c.api.things.delete(c.user_id, "expenses", c.params["expense"]),
    ),
    _route("GET", "/v1/budgets", lambda c: c.api.things.budgets(c.user_id, c.args), PageQuery),
]

ROUTES = [
    _route("GET", "/v1/facts", lambda c: c.api.facts.list(c.user_id, c.args), FactsQuery),
    _route(
        "POST",
        "/v1/facts:search",
        lambda c: c.api.facts.search(c.user_id, c.body(SearchFactsRequest)),
    ),
    _route("GET", "/v1/facts/{fact}", lambda c: c.api.facts.get(c.user_id, c.id("fact"))),
    _route(
        "PATCH",
        "/v1/facts/{fact}",
        _patch(
            lambda c, mask: c.api.facts.patch(
                c.user_id, c.id("fact"), c.body(FactPatch), mask, c.if_match
            )
        ),
        PatchQuery,
    ),
    _route(
        "DELETE",
        "/v1/facts/{fact}",
        lambda c: c.api.facts.delete(c.user_id, c.id("fact"), c.if_match),
    ),
    _route(
        "GET",
        "/v1/facts/{fact}/versions",
        lambda c: c.api.facts.versions(c.user_id, c.id("fact"), c.args),
        PageQuery,
    ),
    _route(
        "POST",
        "/v1/facts/{fact}:restore",
        _restore,
    ),
    _route("GET", "/v1/persons", lambda c: c.api.persons.list(c.user_id, c.args), PageQuery),
    _route("GET", "/v1/persons/{person}", lambda c: c.api.persons.get(c.user_id, c.id("person"))),
    _route(
        "PATCH",
        "/v1/persons/{person}",
        _patch(
            lambda c, mask: c.api.persons.patch(
                c.user_id, c.id("person"), c.body(PersonPatch), mask, c.if_match
            )
        ),
        PatchQuery,
    ),
    _route(
        "DELETE",
        "/v1/persons/{person}",
        lambda c: c.api.persons.delete(c.user_id, c.id("person"), c.if_match),
    ),
    _route(
        "POST",
        "/v1/persons/{person}:merge",
        lambda c: c.api.persons.merge(c.user_id, c.id("person"), c.body(MergeRequest)),
    ),
    _route(
        "POST",
        "/v1/persons/{person}:split",
        lambda c: c.api.persons.split(c.user_id, c.id("person"), c.body(SplitRequest)),
    ),
    _route(
        "GET", "/v1/pendingItems", lambda c: c.api.pending.list(c.user_id, c.args), FilteredPage
    ),
    _route("GET", "/v1/pendingItems/{item}", lambda c: c.api.pending.get(c.user_id, c.id("item"))),
    _route(
        "POST",
        "/v1/pendingItems/{item}:resolve",
        lambda c: c.api.pending.resolve(c.user_id, c.id("item"), c.body(PendingAnswer)),
    ),
    _route("GET", "/v1/settings/assistant", lambda c: c.api.profile.get(c.user_id)),
    _route(
        "PATCH",
        "/v1/settings/assistant",
        _patch(
            lambda c, mask: c.api.profile.patch(c.user_id, c.body(AssistantPatch), mask, c.if_match)
        ),
        PatchQuery,
    ),
    _route("GET", "/v1/settings/hitl", lambda c: c.api.hitl.get(c.user_id)),
    _route(
        "PATCH",
        "/v1/settings/hitl",
        _patch(lambda c, mask: c.api.hitl.patch(c.user_id, c.body(HitlPatch), mask, c.if_match)),
        PatchQuery,
    ),
    _route("GET", "/v1/settings/notifications", lambda c: c.api.notifications.get(c.user_id)),
    _route(
        "PATCH",
        "/v1/settings/notifications",
        _patch(
            lambda c, mask: c.api.notifications.patch(
                c.user_id, c.body(NotificationSettingsPatch), mask, c.if_match
            )
        ),
        PatchQuery,
    ),
    _route("GET", "/v1/strategies", lambda c: c.api.strategies.list(c.user_id, c.args), PageQuery),
    _route(
        "DELETE",
        "/v1/strategies/{strategy}",
        lambda c: c.api.strategies.forget(c.user_id, c.params["strategy"]),
    ),
    _route(
        "POST",
        "/v1/strategies:forgetAll",
        _forget_all,
    ),
    _route("GET", "/v1/calendarFeed", lambda c: c.api.calendar_feed.get(c.user_id)),
    _route("POST", "/v1/calendarFeed:enable", lambda c: _feed(c).enable(c.user_id)),
    _route("POST", "/v1/calendarFeed:rotate", lambda c: _feed(c).rotate(c.user_id)),
    _route("DELETE", "/v1/calendarFeed", lambda c: c.api.calendar_feed.disable(c.user_id)),
    _route("GET", "/v1/account:export", lambda c: c.api.account.export(c.user_id)),
    _route("DELETE", "/v1/account", _delete_account, DeleteAccountQuery),
    *THINGS,
]
ROUTER = Router(ROUTES)


def handle(request: flask.Request, api: SettingsApi, user_id: str, max_body: int) -> flask.Response:
    """Answer ``request`` (404 for an unknown path, 405 with ``Allow`` for another method)."""
    matched = ROUTER.match(request.method, request.path)
    return matched.route.handler(Call(request, matched.params, user_id, api, max_body))
