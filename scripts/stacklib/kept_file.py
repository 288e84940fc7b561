"""What the dev stack's in-memory emulators keep across a restart, in one JSON file each.

Shared by the Cloud Tasks emulator (``kept_tasks``) and the push relay's Pub/Sub keeper
(``kept_messages``): the file is written whole and renamed (a stop mid-write keeps the old
one), rewritten a moment after each change while the process runs and once more when the
stack stops it (SIGTERM); a file that cannot be read is set aside and the process starts
empty. Standard library only: the Cloud Tasks emulator runs in its own venv.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

log = logging.getLogger("kept")
WRITE_DELAY = 0.5  # seconds after a change before writing: a burst of changes, one write
T = TypeVar("T")


def write_json(path: str | os.PathLike[str], body: Any) -> None:
    target = Path(path)
    partial = target.with_suffix(".partial")
    partial.write_text(json.dumps(body))
    partial.replace(target)


def read_json(path: str | os.PathLike[str], parse: Callable[[Any], T], empty: T) -> T:
    """``parse`` of the file's JSON; ``empty`` when no file is there (a first start, or a
    wipe). A file ``parse`` cannot read is set aside as ``<name>.unreadable``: a broken file
    must not keep the stack from starting."""
    kept = Path(path)
    try:
        return parse(json.loads(kept.read_text()))
    except FileNotFoundError:
        return empty
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        log.warning("%s cannot be read (%s); starting without it", kept, error)
        kept.replace(kept.with_suffix(".unreadable"))
        return empty


def keep_writing(changed: threading.Event, write: Callable[[], None]) -> None:
    """Call ``write`` ``WRITE_DELAY`` after ``changed`` is set (``write`` clears it), and on
    SIGTERM before exiting. Call from the main thread (it installs the signal handler)."""
    lock = threading.Lock()  # the stop's write waits for one under way: one writer at a time

    def write_changes() -> None:
        while True:
            changed.wait()
            time.sleep(WRITE_DELAY)
            with lock:
                write()

    def on_stop(signum: int, _frame: object) -> None:
        with lock:
            write()
        sys.exit(128 + signum)

    threading.Thread(target=write_changes, name="keep", daemon=True).start()
    signal.signal(signal.SIGTERM, on_stop)
