"""Clocks: the system one for production, a settable one for tests, and an offset one that
lets the evaluation replay dated conversations through the real functions (dev/test only)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class FixedClock:
    """Stands still until a test moves it, so time-dependent code is deterministic."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)
        if self._now.tzinfo is None:
            raise ValueError("FixedClock needs a timezone-aware datetime")

    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float) -> datetime:
        self._now += timedelta(seconds=seconds)
        return self._now

    def set(self, value: datetime) -> None:
        if value.tzinfo is None:
            raise ValueError("FixedClock needs a timezone-aware datetime")
        self._now = value


class OffsetFileClock:
    """The system time plus the seconds written in a file (read at every call, so another
    process can move every function's clock at once); no file, or no number in it: no
    offset. Settings refuse it outside dev and test."""

    def __init__(self, path: str) -> None:
        self._path = Path(path)

    def now(self) -> datetime:
        return datetime.now(UTC) + timedelta(seconds=self.offset())

    def offset(self) -> float:
        try:
            return float(self._path.read_text().strip() or 0)
        except (OSError, ValueError):
            return 0.0

    def set_offset(self, seconds: float) -> None:
        self._path.write_text(f"{seconds}\n")
