"""What the memory function's requests may say beyond their body: the query parameters of
each route, the list filters (a small subset of AIP-160) and update masks (AIP-134).

Filter grammar: ``term (" AND " term)*`` with ``term = field "=" '"' value '"'``, each field
at most once, e.g. ``subject_id = "self" AND type = "Preference"``. A list names the fields
it filters by; anything else is 400 ``invalid_request``.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator, model_validator

from shared.errors import BadRequest
from shared.rest.paging import PageQuery

_TERM = re.compile(r'([a-z_]+)\s*=\s*"([^"\\]*)"')
_AND = re.compile(r"\s+AND\s+")
ALL_FIELDS = "*"


class NoQuery(BaseModel):
    """Routes that take no query parameter refuse any."""

    model_config = ConfigDict(extra="forbid")


class FilteredPage(PageQuery):
    filter: str = Field(default="", max_length=500)


class FactsQuery(FilteredPage):
    show_history: bool = False  # superseded versions too (AIP-164's show_deleted, by analogy)


class PatchQuery(NoQuery):
    update_mask: str | None = Field(default=None, max_length=300)


class DeleteAccountQuery(NoQuery):
    """``DELETE /v1/account?confirm=true``: a deliberate act, since a DELETE has no body."""

    confirm: bool = False

    def confirmed(self) -> None:
        if self.confirm is not True:
            raise BadRequest("confirm: must be true to delete the account")


def parse_filter(text: str, fields: frozenset[str]) -> dict[str, str]:
    """``field = "value"`` terms joined by AND, as a mapping; "" filters nothing."""
    terms: dict[str, str] = {}
    if not text.strip():
        return terms
    for term in _AND.split(text.strip()):
        found = _TERM.fullmatch(term.strip())
        if found is None:
            raise BadRequest(f'filter: expected field = "value" terms joined by AND: {term!r}')
        name, value = found.groups()
        if name not in fields:
            raise BadRequest(f"filter: {name!r} is not one of {sorted(fields)}")
        if name in terms:
            raise BadRequest(f"filter: {name!r} given twice")
        terms[name] = value
    return terms


def masked(body: BaseModel, update_mask: str | None, editable: frozenset[str]) -> dict[str, Any]:
    """The fields a PATCH changes: those the mask names (a named field absent from the body
    is set to null, ``*`` names every field), else those present in the body."""
    if update_mask is None:
        names = set(body.model_fields_set) - {"etag"}
    else:
        names = {name.strip() for name in update_mask.split(",") if name.strip()}
        if ALL_FIELDS in names:
            names = set(editable)
        if unknown := names - editable:
            raise BadRequest(f"update_mask: {sorted(unknown)} not among {sorted(editable)}")
    if not names:
        raise BadRequest("nothing to change: name fields in the body or in update_mask")
    return {name: getattr(body, name) for name in sorted(names)}


# -- the user's things (``shared.app.settings.things``) ------------------------------------------
MAX_WINDOW_DAYS = 62  # a calendar view shows a day, a week or a month
MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")


class EventsQuery(PageQuery):
    start: AwareDatetime
    end: AwareDatetime

    @model_validator(mode="after")
    def _short_window(self) -> EventsQuery:
        if self.end <= self.start:
            raise ValueError("end must be after start")
        if (self.end - self.start).days > MAX_WINDOW_DAYS:
            raise ValueError(f"a window of at most {MAX_WINDOW_DAYS} days")
        return self


class NotesQuery(PageQuery):
    query: str = Field(default="", max_length=200)  # words every note listed contains


class ExpensesQuery(PageQuery):
    month: str = Field(pattern=MONTH.pattern)  # YYYY-MM, in time_zone
    time_zone: str = Field(default="UTC", max_length=64)

    @field_validator("time_zone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError("not an IANA time zone") from exc
        return value

    def window(self) -> tuple[datetime, datetime]:
        """The month's first instant and the next month's, in the user's zone."""
        year, month = (int(part) for part in self.month.split("-"))
        zone = ZoneInfo(self.time_zone)
        after = (year + 1, 1) if month == 12 else (year, month + 1)
        return datetime(year, month, 1, tzinfo=zone), datetime(*after, 1, tzinfo=zone)
