"""What every tool shares: the base class, the result encoding, the user's clock and month."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any, Generic, TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel

from shared.agents.spec import AgentPorts, ToolContext, ToolRefused

A = TypeVar("A", bound=BaseModel)
MONTH_PATTERN = r"^\d{4}-(0[1-9]|1[0-2])$"


class ToolBase(Generic[A]):
    """A tool: ``name``, ``description`` (what the model reads), ``args_schema`` (a strict
    pydantic model), ``sensitive``, ``acts``; subclasses implement ``call`` with their own
    args."""

    name: str
    description: str
    args_schema: type[A]
    sensitive: bool = False
    acts: bool = False  # changes the user's data or the world

    def available(self, ports: AgentPorts) -> bool:
        return True

    def run(self, context: ToolContext, args: BaseModel) -> str:
        if not isinstance(args, self.args_schema):
            raise ToolRefused(f"{self.name}: arguments must be {self.args_schema.__name__}")
        if self.sensitive and not context.idempotency_key:
            raise ToolRefused(f"{self.name}: acts for the user, so it runs only once approved")
        return self.call(context, args)

    def call(self, context: ToolContext, args: A) -> str:
        raise NotImplementedError


def result(**data: Any) -> str:
    """A tool's result as compact JSON (times in ISO 8601)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=_json_value)


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, BaseModel):
        return value.model_dump()  # its times come back here: one ISO format
    return str(value)


def user_zone(context: ToolContext) -> ZoneInfo:
    """The user's time zone (their assistant profile); UTC if it names no known zone."""
    name = context.ports.profiles.get_profile(context.user_id).timezone
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def month_window(month: str, zone: ZoneInfo) -> tuple[datetime, datetime]:
    """[first instant, first instant of the next month) of ``YYYY-MM`` in ``zone``."""
    year, number = (int(part) for part in month.split("-"))
    start = datetime(year, number, 1, tzinfo=zone)
    following = (start.replace(tzinfo=None) + timedelta(days=32)).replace(day=1)
    return start, following.replace(tzinfo=zone)
