"""One turn at a time per chat: claiming a turn, waiting for the chat when another runs.

Double texting (three messages sent at once to one chat) used to run three turns that each
read the same history. Now the chat has one holder and a queue (``ChatRun``, decided in the
claim's transaction), and what a message does when the chat is busy is its request's
``multitask_strategy``:

- ``enqueue`` (default): it waits its turn, for ``chat_wait_seconds`` at most, then runs
  with every earlier turn's messages in its history. Replies come in the order the claims
  reached the chat.
- ``interrupt``: it goes to the front of the queue and asks the holder to stop; the holder's
  partial reply is kept, marked interrupted, and hands nothing off.
- ``reject``: 409 ``chat_busy`` at once.

Waiting is a plain read of the chat document every 0.1 s to 0.5 s (backing off), and a new
claim once the chat is free for this request. A wait in vain leaves the queue and answers
409 ``chat_busy`` with ``Retry-After``.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

from shared.deps import Deps
from shared.errors import ChatBusy
from shared.models.domain import TurnClaim
from shared.models.wire import TurnRequest
from shared.ports import ResumeClaim

RETRY_AFTER_SECONDS = 2
FIRST_POLL_SECONDS = 0.1
LONGEST_POLL_SECONDS = 0.5


@dataclass(frozen=True)
class ClaimInput:
    user_id: str
    request: TurnRequest
    chat_id: str
    turn_id: str
    new_chat: bool
    resume: ResumeClaim
    owner: str

    @staticmethod
    def owner_id() -> str:
        return uuid.uuid4().hex


def claim_turn(deps: Deps, given: ClaimInput) -> TurnClaim:
    """The turn's claim, once the chat is free for it (or a refusal, or its replay)."""
    wait = deps.settings.chat_wait_seconds
    deadline = time.monotonic() + wait
    claim = _claim(deps, given, wait)
    pause = FIRST_POLL_SECONDS
    while claim.status == "queued":
        if time.monotonic() >= deadline:
            deps.conversations.leave_queue(
                given.user_id,
                given.request.client_message_id,
                claim.chat_id,
                given.owner,
                deps.clock.now(),
            )
            raise ChatBusy("the chat is still busy; retry shortly", RETRY_AFTER_SECONDS)
        time.sleep(pause)
        pause = min(LONGEST_POLL_SECONDS, pause * 1.5)
        chat = deps.conversations.get_chat(given.user_id, claim.chat_id)
        if chat is None or chat.run.free_for(given.owner, deps.clock.now()):
            claim = _claim(deps, given, max(1.0, deadline - time.monotonic()))
    if claim.status == "busy":
        raise ChatBusy("another message of this chat is being answered", RETRY_AFTER_SECONDS)
    return claim


def _claim(deps: Deps, given: ClaimInput, wait_seconds: float) -> TurnClaim:
    settings = deps.settings
    return deps.conversations.claim_turn(
        given.user_id,
        given.request.client_message_id,
        given.chat_id,
        given.turn_id,
        deps.clock.now(),
        settings.turn_lease_seconds,
        new_chat=given.new_chat,
        resume=given.resume,
        owner=given.owner,
        strategy=given.request.multitask_strategy,
        wait_seconds=wait_seconds,
    )
