"""The dev stack's Cloud Tasks kept across restarts, in one JSON file.

Cloud Tasks keeps a task until it runs; the emulator keeps it in memory. Without this, a
``make down`` at night would lose the delivery task of tomorrow morning's reminder, while
Firestore (``firestore_data``) still says a task holds it: the reminder would never ring.
Each task is its protobuf, base64; a reserved name (Cloud Tasks refuses a name for a while
after its task ran) is kept with the seconds it has left.
"""

from __future__ import annotations

import base64
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from google.cloud.tasks_v2 import Task

log = logging.getLogger("tasks-emulator")
WRITE_DELAY = 0.5  # seconds after a change before writing: a burst of changes, one write


@dataclass
class Snapshot:
    tasks: list[tuple[str, Task]] = field(default_factory=list)  # (queue path, task)
    reserved: dict[str, float] = field(default_factory=dict)  # name -> seconds left


def save(path: str | os.PathLike[str], snapshot: Snapshot) -> None:
    """Written whole to a temporary file, then renamed: a stop mid-write keeps the old one."""
    body = {
        "tasks": [
            {"queue": queue, "task": base64.b64encode(Task.serialize(task)).decode()}
            for queue, task in snapshot.tasks
        ],
        "reserved": snapshot.reserved,
    }
    target = Path(path)
    partial = target.with_suffix(".partial")
    partial.write_text(json.dumps(body))
    partial.replace(target)


def load(path: str | os.PathLike[str]) -> Snapshot:
    """What ``save`` wrote; nothing when no file is there (a first start, or a wipe). A file
    that cannot be read is set aside as ``<name>.unreadable`` and the emulator starts empty:
    a broken file must not keep the stack from starting."""
    kept = Path(path)
    try:
        body = json.loads(kept.read_text())
        tasks = [
            (item["queue"], Task.deserialize(base64.b64decode(item["task"])))
            for item in body["tasks"]
        ]
        reserved = {name: float(left) for name, left in body["reserved"].items()}
    except FileNotFoundError:
        return Snapshot()
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        log.warning("%s cannot be read (%s); starting with no tasks", kept, error)
        kept.replace(kept.with_suffix(".unreadable"))
        return Snapshot()
    return Snapshot(tasks, reserved)
