"""The one public origin: which function serves each path of ``/v1``.

Production's load balancer (terraform/edge.tf's URL map) and the local stack's proxy
(scripts/web_serve.py) both follow this table; tests hold them to it. A URL map routes by
path, not by method, so a collection's methods all go to one function: a chat's messages
(``POST`` is a turn, ``GET`` the list) are the turn function's.
"""

from __future__ import annotations

import re

API_PREFIX = "/v1"
_TURN = re.compile(r"^/v1/chats/[^/:]+/messages$")
RESUME_COLLECTIONS = ("chats", "jobs", "reminders", "notifications", "devices", "pushConfig")
MEMORY_COLLECTIONS = (
    "facts", "persons", "pendingItems", "settings", "strategies", "account",
    "calendarFeed", "calendarFeeds",  # the user's feed (a singleton), and its public URLs
    "calendarEvents", "notes", "expenses", "budgets",  # the things the agents recorded
)  # fmt: skip


def function_for(path: str) -> str | None:
    """The function that serves a public path, or None: not part of the API."""
    if _TURN.match(path):
        return "turn"
    if _under(path, RESUME_COLLECTIONS):
        return "resume"
    if _under(path, MEMORY_COLLECTIONS):
        return "memory"
    return None


def _under(path: str, collections: tuple[str, ...]) -> bool:
    for collection in collections:
        root = f"{API_PREFIX}/{collection}"
        if path == root or path.startswith((root + "/", root + ":")):
            return True
    return False
