"""Clocks: the system one for production, and an offset one that lets the evaluation replay
dated conversations through the real functions (dev/test only). The settable one for tests
is ``shared.fakes.clock.FixedClock``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


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
