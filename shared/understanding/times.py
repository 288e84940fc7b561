"""Time expressions, resolved in the user's time zone by ``dateparser``.

spaCy's entity recognizer finds the expressions (a date and a time next to each other,
"tomorrow at 10am", are one); ``dateparser`` resolves each against the user's local now,
preferring the future ("on March 3rd" is the next March 3rd). Only what names one day or
one moment is resolved; what dateparser would guess is left unresolved: an hour without am
or pm ("at 5"), a numeric date ("3/4", day or month first?), a bare ordinal ("the 5th"), a
span ("next week").
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from shared.understanding.result import TimeRef

if TYPE_CHECKING:
    from dateparser.date import DateDataParser
    from spacy.tokens import Doc

_JOINERS = frozenset({"at", "on", ",", "around"})
_LEAD = frozenset({"in", "on", "at"})
_CLOCK = re.compile(
    r"\b\d{1,2}(:\d{2})?\s*(am|pm|a\.m\.|p\.m\.)(?!\w)|\b\d{1,2}:\d{2}\b|\bnoon\b|\bmidnight\b"
    r"|^in (an?|\w+) (hours?|minutes?)$",
    re.IGNORECASE,
)
_AMBIGUOUS = re.compile(
    r"\b\d{1,2}[/.]\d{1,2}\b|^(on )?the \d+(st|nd|rd|th)$|\bat \d{1,2}$|o'clock"
    r"|\b(week|weekend|month|year|soon|later|sometime|ago|past|last|earlier|recently)\b",
    re.IGNORECASE,
)
_OFFSET_DAYS = re.compile(r"^in (a|an|one|two|three|four|five|six|\d+) (days?|weeks?)$", re.I)

_lock = threading.Lock()
_parsers: dict[str, Any] = {}
DAY_NAMES = frozenset(
    {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
)
_MONTHS = frozenset(
    {"january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"}
)  # fmt: skip
# Words after which a month name alone is the month: "in june", "since may", "early march".
MONTH_AFTER = frozenset(
    {"in", "on", "of", "since", "until", "till", "by", "from", "early", "late", "mid", "next",
     "last", "this", "before", "after"}
)  # fmt: skip
_WORD = re.compile(r"[A-Za-z]+|\d{1,2}(?:st|nd|rd|th)?\b")


def cased(text: str) -> str:
    """``text`` with lowercase month and day names capitalised, so that spaCy's entity
    recognizer sees the date people type on a phone ("her birthday is may 3", "on
    friday"). A month alone counts only after a word that makes it one ("in june"); "may"
    and "march" only beside a day. Same length: offsets into it hold for ``text``."""
    words = list(_WORD.finditer(text))
    chars = list(text)
    for i, word in enumerate(words):
        name = word.group()
        if name not in DAY_NAMES and name not in _MONTHS:
            continue
        before = words[i - 1].group().lower() if i else ""
        after = words[i + 1].group() if i + 1 < len(words) else ""
        if before == "of" and i > 1:
            before = words[i - 2].group()
        beside_a_day = after[:1].isdigit() or before[:1].isdigit()
        alone = before in MONTH_AFTER and name not in ("may", "march")
        if name in DAY_NAMES or beside_a_day or alone:
            chars[word.start()] = name[0].upper()
    return "".join(chars)


@dataclass
class Times:
    resolved: list[TimeRef] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)


def find_times(doc: Doc, now: datetime, timezone: str) -> Times:
    """``now`` is aware; ``timezone`` an IANA name (the user's)."""
    zone = ZoneInfo(timezone)
    local_now = now.astimezone(zone)
    times = Times()
    for start, end in _expressions(doc):
        text = doc.text[start:end]
        at = _resolve(text, local_now, timezone)
        if at is None:
            times.unresolved.append(text)
            continue
        clock = bool(_CLOCK.search(text))
        if not clock:
            at = at.replace(hour=0, minute=0, second=0, microsecond=0)
        times.resolved.append(TimeRef(text=text, at=at, clock=clock, start=start, end=end))
    return times


def _expressions(doc: Doc) -> list[tuple[int, int]]:
    """Character spans of the date and time entities, neighbours joined, "in" kept."""
    spans: list[list[int]] = []  # [first token, last token + 1]
    for ent in doc.ents:
        if ent.label_ not in ("DATE", "TIME"):
            continue
        between = doc[spans[-1][1] : ent.start] if spans else None
        if between is not None and all(t.lower_ in _JOINERS for t in between):
            spans[-1][1] = ent.end
        else:
            spans.append([ent.start, ent.end])
    out = []
    for start, last in spans:
        first = start - 1 if start > 0 and doc[start - 1].lower_ in _LEAD else start
        out.append((doc[first].idx, doc[last - 1].idx + len(doc[last - 1].text)))
    return out


def _resolve(text: str, local_now: datetime, timezone: str) -> datetime | None:
    if _AMBIGUOUS.search(text):
        return None
    data = _parser(timezone, local_now).get_date_data(text)
    at: datetime | None = data.date_obj
    if at is None or at.tzinfo is None:
        return None
    if data.period not in ("day", "time") and not _OFFSET_DAYS.match(text):
        return None
    if at > local_now + timedelta(days=3660) or at.year < local_now.year - 120:
        return None  # far beyond a plan or a lifetime: a misreading
    return at


def _parser(timezone: str, local_now: datetime) -> DateDataParser:
    """One parser per zone and minute of ``now`` (its settings are fixed at creation)."""
    from dateparser.date import DateDataParser

    key = f"{timezone}|{local_now.isoformat(timespec='minutes')}"
    with _lock:
        parser = _parsers.get(key)
        if parser is None:
            if len(_parsers) > 64:
                _parsers.clear()
            parser = _parsers[key] = DateDataParser(
                languages=["en"],
                settings={
                    "RELATIVE_BASE": local_now.replace(tzinfo=None),
                    "TIMEZONE": timezone,
                    "RETURN_AS_TIMEZONE_AWARE": True,
                    "PREFER_DATES_FROM": "future",
                    "RETURN_TIME_AS_PERIOD": True,
                },
            )
        return parser
