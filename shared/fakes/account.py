"""The account's stores as fakes: Firestore's ``users/{uid}`` trees (``ConversationArchive``)
and the user's Redis keys (``UserKeyspace``), with knobs to make deletions fail."""

from __future__ import annotations

from datetime import datetime

from shared.adapters.redis_account import owns
from shared.errors import DependencyUnavailable
from shared.models.memory_api import ConversationExport


class FakeArchive:
    """Firestore's ``users/{uid}`` trees; ``fail_deletes`` makes the next deletions fail."""

    def __init__(self) -> None:
        self.trees: dict[str, ConversationExport] = {}
        self.fail_deletes = 0
        self.erasures: list[tuple[str, str]] = []  # marks set: ("begin" | "end", user)

    def export_user(self, user_id: str) -> ConversationExport:
        return self.trees.get(user_id, ConversationExport())

    def delete_user(self, user_id: str) -> int:
        if self.fail_deletes:
            self.fail_deletes -= 1
            raise DependencyUnavailable("firestore unavailable")
        tree = self.trees.pop(user_id, None)
        return 0 if tree is None else 1 + len(tree.chats)

    def begin_erasure(self, user_id: str, now: datetime) -> None:
        self.erasures.append(("begin", user_id))

    def running_turns(self, user_id: str, now: datetime) -> int:
        return 0

    def end_erasure(self, user_id: str, now: datetime) -> None:
        self.erasures.append(("end", user_id))


class FakeKeyspace:
    def __init__(self, prefix: str = "pa") -> None:
        self.keys: set[str] = set()
        self._prefix = prefix

    def delete_user(self, user_id: str) -> int:
        mine = {key for key in self.keys if owns(self._prefix, key, user_id)}
        self.keys -= mine
        return len(mine)
