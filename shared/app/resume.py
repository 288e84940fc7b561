"""Answer a chat's waiting interrupt through ``functions/resume``: exactly once.

The chat's control record (``HitlControl``, Firestore) is the authority on what waits. An
answer is one option of the interrupt: its id, or words that pick exactly one option (its
number, its label, yes/no, "someone else"). One transaction claims the turn
``resume.<interrupt id>`` and the interrupt itself (status ``resuming``, owner, lease), so
of two answers racing (a double tap, two devices, a message and a resume, the approval
timeout) one wins and the other gets 409 ``interrupt_not_pending``; a crashed run's lease
runs out and the interrupt can be answered again.

What the answer continues is the control record's ``target``: the turn graph's checkpoint
(``Command(resume=...)`` on its thread, from the saved checkpoint id). Every side effect
after the answer runs in the nodes after ``await_answer``, and approved actions carry the
idempotency key thread + interrupt id.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.app.turn import TurnService
from shared.app.turn_input import PreparedTurn
from shared.conversation.answers import ANSWER, EDIT, REJECT, WORDS, rule_answer
from shared.deps import Deps
from shared.errors import InterruptNotPending, MessageTooLong, NotFound, TurnInProgress
from shared.models.wire import Interrupt, ResumeRequest, TurnRequest
from shared.ports import ResumeClaim


def resume_message_id(interrupt_id: str) -> str:
    return f"resume.{interrupt_id}"[:128]


@dataclass(frozen=True)
class AnswerPicker:
    """Which option an answer picks (run inside the claim's transaction): an option's id,
    words that pick one option, or, where an option takes words (``WORDS``: an approval's
    edit, a clarification's answer), the words themselves."""

    answer: str
    new_request: bool = False  # the words are a whole command of their own, not an edit

    def __call__(self, interrupt: Interrupt) -> str | None:
        options = interrupt.options
        if self.answer not in WORDS and any(o.id == self.answer for o in options):
            return self.answer
        picked = rule_answer(self.answer, options, interrupt.question)
        if picked is None and any(o.id == ANSWER for o in options) and self.answer.strip():
            return ANSWER
        if picked is None and any(o.id == EDIT for o in options) and _instruction(self.answer):
            # an approval answered with what to do instead; a new command is no such answer
            # (the client sends it to the chat: 400 invalid_request)
            return None if self.new_request else EDIT
        return picked


@dataclass(frozen=True)
class TimeoutPicker:
    """What an unanswered question's deadline answers: rejected, or left without answer."""

    def __call__(self, interrupt: Interrupt) -> str | None:
        ids = [option.id for option in interrupt.options]
        return next((i for i in (REJECT, ANSWER) if i in ids), None)


def _instruction(text: str) -> bool:
    """Words that can replace a step's goal: at least two (not "edit", not "3"), and no
    question ("What do you know about my family?" is a new request, not the step's goal)."""
    return len(text.split()) >= 2 and not text.rstrip().endswith("?")


class ResumeService:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps
        self.turns = TurnService(deps)

    def prepare(
        self, user_id: str, request: ResumeRequest, trace: str | None = None
    ) -> PreparedTurn:
        limit = self._deps.settings.max_message_chars
        if len(request.answer) > limit:
            raise MessageTooLong(f"answer over {limit} characters")
        picker = AnswerPicker(request.answer, self._new_command(request.answer))
        return self._claim(user_id, request, trace, picker)

    def _new_command(self, answer: str) -> bool:
        """Whether the understanding tier reads ``answer`` as a whole command with its call
        spelled out ("put dinner with Anna in my calendar on Friday at 7pm"): typed while an
        approval waits, that is the user's next request, never the waiting step's new goal
        ("make it 8pm instead" is)."""
        tier = self._deps.understanding
        if tier is None or not _instruction(answer):
            return False
        from shared.understanding import Context

        reading = tier.understand(answer, Context(now=self._deps.clock.now()))
        return reading.plan.decided and any(step.call for step in reading.plan.steps)

    def time_out(
        self, user_id: str, chat_id: str, interrupt_id: str, trace: str | None = None
    ) -> PreparedTurn | None:
        """The approval's deadline passed: reject it, unless it was answered (None)."""
        request = ResumeRequest(chat_id=chat_id, interrupt_id=interrupt_id, answer=REJECT)
        try:
            return self._claim(user_id, request, trace, TimeoutPicker())
        except (InterruptNotPending, NotFound):  # answered, or the chat (account) is gone
            return None

    def _claim(
        self,
        user_id: str,
        request: ResumeRequest,
        trace: str | None,
        picker: AnswerPicker | TimeoutPicker,
    ) -> PreparedTurn:
        timed_out = isinstance(picker, TimeoutPicker)
        turn = TurnRequest(
            chat_id=request.chat_id,
            message=request.answer,  # replaced by the picked option's label
            client_message_id=resume_message_id(request.interrupt_id),
        )
        claim = ResumeClaim(request.interrupt_id, picker)
        try:
            prepared = self.turns.prepare(
                user_id, turn, trace=trace, resume=claim, timed_out=timed_out
            )
        except TurnInProgress as busy:  # the same answer is running: this one lost
            raise InterruptNotPending("this interrupt is being answered") from busy
        if prepared.replay is not None:  # answered and finished before
            raise InterruptNotPending("this interrupt was answered already")
        return prepared
