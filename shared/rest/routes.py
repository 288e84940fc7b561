"""Routes of the resource-oriented API: ``(method, path template) -> handler``.

Templates follow Google's HTTP mapping: ``/v1/facts/{fact}``, and a custom method as a
``:verb`` suffix (``/v1/facts/{fact}:restore``, ``/v1/facts:search``). A variable matches one
path segment without ``/`` or ``:``; what it may contain is the handler's to check (ids are
validated by the request models). A path no template matches is 404; a path that matches
with another method is 405 with ``Allow``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import flask
from pydantic import BaseModel, ValidationError

from shared.errors import BadRequest, MethodNotAllowed, NotFound

M = TypeVar("M", bound=BaseModel)
_VARIABLE = re.compile(r"\{([a-z_]+)\}")
_SEGMENT = r"[^/:]+"


@dataclass(frozen=True)
class Route:
    method: str
    template: str
    handler: Callable[..., flask.Response]

    def pattern(self) -> re.Pattern[str]:
        parts = _VARIABLE.split(self.template)
        regex = "".join(
            re.escape(part) if index % 2 == 0 else f"(?P<{part}>{_SEGMENT})"
            for index, part in enumerate(parts)
        )
        return re.compile(f"^{regex}$")


@dataclass(frozen=True)
class Matched:
    route: Route
    params: dict[str, str]


class Router:
    def __init__(self, routes: Iterable[Route]) -> None:
        self._routes = [(route, route.pattern()) for route in routes]

    def templates(self) -> list[tuple[str, str]]:
        return [(route.method, route.template) for route, _ in self._routes]

    def match(self, method: str, path: str) -> Matched:
        allowed: list[str] = []
        for route, pattern in self._routes:
            found = pattern.match(path)
            if found is None:
                continue
            if route.method == method:
                return Matched(route, found.groupdict())
            allowed.append(route.method)
        if allowed:
            raise MethodNotAllowed(f"{method} is not allowed here", allow=", ".join(allowed))
        raise NotFound(f"no resource at {path!r}; see docs/openapi.yaml")


def query(request: flask.Request, model: type[M]) -> M:
    """The query string as ``model`` (lax: query values are strings). An unknown parameter,
    or a parameter given twice, is refused rather than ignored."""
    values: dict[str, Any] = {}
    for name in request.args:
        given = request.args.getlist(name)
        if len(given) > 1:
            raise BadRequest(f"{name}: given more than once")
        values[name] = given[0]
    return validated(model, values, "query")


def validated(model: type[M], values: Mapping[str, Any], where: str) -> M:
    try:
        return model.model_validate(dict(values))
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or where
        raise BadRequest(f"{field}: {first['msg']}") from exc
