"""The chat's HITL control record: claimed once, leased, opened by background work.

Runs on the fake and on the Firestore emulator (``conversations`` is parametrised).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from shared.models.domain import ChatUpdate, HitlControl, Message
from shared.models.wire import Interrupt
from shared.ports import ConversationStore, ResumeClaim
from tests.contract.test_conversations import LEASE, at, pending, run_turn


def _waiting(store: ConversationStore, user_id: str) -> HitlControl:
    store.create_chat(user_id, "c1", at(0))
    question = pending("t1", 1)
    run_turn(store, user_id, "t1", 1, ChatUpdate(control=question))
    return question


def _resume(
    store: ConversationStore, user_id: str, cmid: str, seconds: float, claim: ResumeClaim
) -> str:
    result = store.claim_turn(
        user_id, cmid, "c1", f"turn-{cmid}", at(seconds), LEASE, new_chat=False, resume=claim
    )
    return result.status + ("+resumed" if result.resumed else "")


def _first_option(interrupt: Interrupt) -> str | None:
    return interrupt.options[0].id


def test_an_interrupt_is_claimed_by_one_answer_with_a_lease(
    conversations: ConversationStore, user_id: str
) -> None:
    question = _waiting(conversations, user_id)
    assert question.interrupt is not None
    claim = ResumeClaim(question.interrupt.id, _first_option)
    result = conversations.claim_turn(
        user_id, "r1", "c1", "turn-r1", at(5), LEASE, new_chat=False, resume=claim
    )
    assert (result.status, result.resumed, result.option_id) == ("new", True, "p1")
    assert result.chat is not None and result.chat.control == question  # as it was
    chat = conversations.get_chat(user_id, "c1")
    assert chat is not None
    assert (chat.control.status, chat.control.owner) == ("resuming", "turn-r1")
    assert chat.control.lease_until == at(5 + LEASE)
    assert _resume(conversations, user_id, "r2", 6, claim) == "not_pending"  # a second device
    assert conversations.get_turn(user_id, "r2") is None  # the loser wrote nothing
    assert _resume(conversations, user_id, "r3", 6 + LEASE, claim) == "new+resumed"  # expired


def test_concurrent_answers_resume_once(conversations: ConversationStore, user_id: str) -> None:
    question = _waiting(conversations, user_id)
    assert question.interrupt is not None
    claim = ResumeClaim(question.interrupt.id, _first_option)
    with ThreadPoolExecutor(max_workers=6) as pool:
        outcomes = list(
            pool.map(lambda n: _resume(conversations, user_id, f"r{n}", 5, claim), range(6))
        )
    assert sorted(outcomes) == ["new+resumed", *["not_pending"] * 5]


def test_an_answer_that_picks_nothing_writes_nothing(
    conversations: ConversationStore, user_id: str
) -> None:
    question = _waiting(conversations, user_id)
    assert question.interrupt is not None
    picks_nothing = ResumeClaim(question.interrupt.id, lambda _: None)
    assert _resume(conversations, user_id, "r1", 5, picks_nothing) == "bad_answer"
    assert conversations.get_turn(user_id, "r1") is None
    chat = conversations.get_chat(user_id, "c1")
    assert chat is not None and chat.control == question


def test_a_message_takes_a_waiting_question_and_waits_while_it_is_answered(
    conversations: ConversationStore, user_id: str
) -> None:
    _waiting(conversations, user_id)
    assert _resume(conversations, user_id, "m1", 5, ResumeClaim()) == "new+resumed"
    assert _resume(conversations, user_id, "m2", 6, ResumeClaim()) == "running"
    conversations.create_chat(user_id, "c2", at(0))  # no question there: a plain turn
    plain = conversations.claim_turn(
        user_id, "m3", "c2", "t3", at(7), LEASE, new_chat=False, resume=ResumeClaim()
    )
    assert (plain.status, plain.resumed) == ("new", False)


def test_a_missing_chat_is_refused_unless_new(
    conversations: ConversationStore, user_id: str
) -> None:
    gone = conversations.claim_turn(user_id, "m1", "c9", "t1", at(1), LEASE, new_chat=False)
    assert gone.status == "no_chat" and conversations.get_turn(user_id, "m1") is None
    fresh = conversations.claim_turn(user_id, "m2", "c9", "t2", at(1), LEASE, new_chat=True)
    assert fresh.status == "new"


def _job_question(interrupt_id: str) -> tuple[HitlControl, Message]:
    control = pending("job-1", 3).model_copy(
        update={"target": "job", "thread_id": "job-1", "timeout_at": None}
    )
    assert control.interrupt is not None
    control = control.model_copy(
        update={"interrupt": control.interrupt.model_copy(update={"id": interrupt_id})}
    )
    question = Message.model_validate(
        {"id": f"{interrupt_id}-q", "role": "assistant", "text": "Send it?", "created_at": at(3)}
    )
    return control, question


def test_background_work_opens_an_interrupt_once_and_never_over_another(
    conversations: ConversationStore, user_id: str
) -> None:
    conversations.create_chat(user_id, "c1", at(0))
    control, question = _job_question("job-1-send")
    assert conversations.open_interrupt(user_id, "c1", control, question, at(3))
    assert conversations.open_interrupt(user_id, "c1", control, question, at(4))  # redelivery
    texts = [m.text for m in conversations.recent_messages(user_id, "c1", 10)]
    assert texts == ["Send it?"]
    other, other_question = _job_question("job-2-pay")
    assert not conversations.open_interrupt(user_id, "c1", other, other_question, at(5))
    chat = conversations.get_chat(user_id, "c1")
    assert chat is not None and chat.control == control


def test_a_turn_leaves_its_question_pending_with_one_write(
    conversations: ConversationStore, user_id: str
) -> None:
    conversations.create_chat(user_id, "c1", at(0))
    question = pending("t1", 1).model_copy(update={"checkpoint_id": "cp-1"})
    assert conversations.put_control(user_id, "c1", question)
    chat = conversations.get_chat(user_id, "c1")
    assert chat is not None and chat.control == question
    assert not conversations.put_control(user_id, "gone", question)
    assert conversations.get_chat(user_id, "gone") is None


def test_a_message_takes_a_background_question_only_when_it_picks_an_option(
    conversations: ConversationStore, user_id: str
) -> None:
    conversations.create_chat(user_id, "c1", at(0))
    control, question = _job_question("job-1-send")
    conversations.open_interrupt(user_id, "c1", control, question, at(3))
    picks_nothing = ResumeClaim(choose=lambda _: None)
    assert _resume(conversations, user_id, "m1", 5, picks_nothing) == "new"  # a new turn
    chat = conversations.get_chat(user_id, "c1")
    assert chat is not None and chat.control == control  # still waiting
    picks_first = ResumeClaim(choose=_first_option)
    assert _resume(conversations, user_id, "m2", 6, picks_first) == "new+resumed"
    chat = conversations.get_chat(user_id, "c1")
    assert chat is not None and (chat.control.status, chat.control.owner) == (
        "resuming",
        "turn-m2",
    )


def test_a_failed_answer_may_be_retried_at_once_by_the_same_request(
    conversations: ConversationStore, user_id: str
) -> None:
    question = _waiting(conversations, user_id)
    assert question.interrupt is not None
    claim = ResumeClaim(question.interrupt.id, _first_option)
    assert _resume(conversations, user_id, "r1", 5, claim) == "new+resumed"
    conversations.release_turn(user_id, "r1")  # the attempt failed before it was recorded
    assert _resume(conversations, user_id, "r1", 6, claim) == "new+resumed"  # its retry
    assert _resume(conversations, user_id, "r2", 7, claim) == "not_pending"  # anyone else
