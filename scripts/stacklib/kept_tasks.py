"""The dev stack's Cloud Tasks kept across restarts, in one JSON file.

Cloud Tasks keeps a task until it runs; the emulator keeps it in memory. Without this, a
``make down`` at night would lose the delivery task of tomorrow morning's reminder, while
Firestore (``firestore_data``) still says a task holds it: the reminder would never ring.
Each task is its protobuf, base64; a reserved name (Cloud Tasks refuses a name for a while
after its task ran) is kept with the seconds it has left.
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass, field
from typing import Any

from google.cloud.tasks_v2 import Task

from .kept_file import read_json, write_json


@dataclass
class Snapshot:
    tasks: list[tuple[str, Task]] = field(default_factory=list)  # (queue path, task)
    reserved: dict[str, float] = field(default_factory=dict)  # name -> seconds left


def save(path: str | os.PathLike[str], snapshot: Snapshot) -> None:
    body = {
        "tasks": [
            {"queue": queue, "task": base64.b64encode(Task.serialize(task)).decode()}
            for queue, task in snapshot.tasks
        ],
        "reserved": snapshot.reserved,
    }
    write_json(path, body)


def load(path: str | os.PathLike[str]) -> Snapshot:
    """What ``save`` wrote; an empty snapshot without a readable file (``kept_file``)."""
    return read_json(path, _parse, Snapshot())


def _parse(body: Any) -> Snapshot:
    tasks = [
        (item["queue"], Task.deserialize(base64.b64decode(item["task"]))) for item in body["tasks"]
    ]
    reserved = {name: float(left) for name, left in body["reserved"].items()}
    return Snapshot(tasks, reserved)
