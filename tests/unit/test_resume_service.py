"""Answering a pending question through the resume function's service, on fakes."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from shared.app.resume import ResumeService
from shared.app.turn import Chunk, Done, TurnService
from shared.deps import Deps
from shared.errors import BadRequest, ChatBusy, InterruptNotPending, NotFound
from shared.fakes.clock import FixedClock
from shared.fakes.conversations import FakeConversationStore
from shared.fakes.scripted_llm import ScriptedLLM
from shared.models.domain import ExtractionTask, Message
from shared.models.jobs import AgentJob
from shared.models.wire import ResumeRequest, TurnResponse
from tests.unit.turn_kit import add_person, classification, nodes, request


def _ask_which_thomas(deps: Deps, llm: ScriptedLLM) -> tuple[TurnResponse, str]:
    add_person(deps, "Thomas", "colleague")
    brother = add_person(deps, "Thomas", "sibling").id
    llm.add(classification(facts=True, semantic=True, entities=[{"name": "Thomas"}]))
    asked = TurnService(deps).run("alice", request("Thomas moved to Bern; what does he like?"))
    assert asked.interrupt is not None
    return asked, brother


def _answer(asked: TurnResponse, answer: str) -> ResumeRequest:
    assert asked.interrupt is not None
    return ResumeRequest(chat_id=asked.chat_id, interrupt_id=asked.interrupt.id, answer=answer)


def test_an_option_id_continues_the_asked_turn_once(deps: Deps, llm: ScriptedLLM) -> None:
    asked, brother = _ask_which_thomas(deps, llm)
    llm.add("Your brother likes jazz.")
    service = ResumeService(deps)
    response = service.turns.run_prepared(service.prepare("alice", _answer(asked, brother)))
    assert response.reply.text == "Your brother likes jazz."
    assert response.chat_id == asked.chat_id and response.interrupt is None
    assert "resolve_disambiguation" in nodes(deps, f"resume.{asked.interrupt.id}")  # type: ignore[union-attr]
    [task] = [ExtractionTask.model_validate_json(t.body) for t in deps.tasks.tasks]  # type: ignore[attr-defined]
    assert [e.person_id for e in task.resolved_entities] == [brother]
    stored = [m.text for m in deps.conversations.recent_messages("alice", asked.chat_id, 10)]
    assert "Thomas (sibling)" in stored  # the user's choice, as its label
    with pytest.raises(InterruptNotPending):
        service.prepare("alice", _answer(asked, brother))  # a second answer


def test_words_that_pick_one_option_are_an_answer(deps: Deps, llm: ScriptedLLM) -> None:
    asked, _ = _ask_which_thomas(deps, llm)
    llm.add("He likes chess.")
    service = ResumeService(deps)
    events = list(service.turns.events(service.prepare("alice", _answer(asked, "the colleague"))))
    assert isinstance(events[0], Chunk) and isinstance(events[-1], Done)


def test_an_answer_that_picks_nothing_is_refused_and_keeps_the_question(
    deps: Deps, llm: ScriptedLLM
) -> None:
    asked, _ = _ask_which_thomas(deps, llm)
    with pytest.raises(BadRequest):
        ResumeService(deps).prepare("alice", _answer(asked, "the weather is nice"))
    chat = deps.conversations.get_chat("alice", asked.chat_id)
    assert chat is not None and chat.control.status == "pending"


def test_unknown_interrupt_and_other_users_chat(deps: Deps, llm: ScriptedLLM) -> None:
    asked, brother = _ask_which_thomas(deps, llm)
    wrong = ResumeRequest(chat_id=asked.chat_id, interrupt_id="nope", answer=brother)
    with pytest.raises(InterruptNotPending):
        ResumeService(deps).prepare("alice", wrong)
    with pytest.raises(NotFound):
        ResumeService(deps).prepare("mallory", _answer(asked, brother))


def test_an_approval_through_resume_runs_the_step(deps: Deps, llm: ScriptedLLM) -> None:
    plan = {"steps": [{"id": "s1", "agent": "productivity", "goal": "book Friday 3pm gym"}]}
    llm.add(classification("complex"), plan)
    asked = TurnService(deps).run("alice", request("Book me the gym on Friday"))
    service = ResumeService(deps)
    service.turns.run_prepared(service.prepare("alice", _answer(asked, "approve")))
    assert len(deps.publisher.messages) == 1  # type: ignore[attr-defined]


def test_an_answer_over_the_cap_is_refused_before_anything(deps: Deps, llm: ScriptedLLM) -> None:
    from shared.errors import MessageTooLong

    asked, _ = _ask_which_thomas(deps, llm)
    with pytest.raises(MessageTooLong):
        ResumeService(deps).prepare("alice", _answer(asked, "x" * 8001))


def _ask_approval(deps: Deps, llm: ScriptedLLM) -> TurnResponse:
    plan = {"steps": [{"id": "s1", "agent": "productivity", "goal": "book Friday 3pm gym"}]}
    llm.add(classification("complex"), plan)
    asked = TurnService(deps).run("alice", request("Book me the gym on Friday"))
    assert asked.interrupt is not None and asked.interrupt.kind == "approval"
    return asked


def test_an_approval_schedules_its_timeout_once_named_by_the_interrupt(
    deps: Deps, llm: ScriptedLLM
) -> None:
    asked = _ask_approval(deps, llm)
    [task] = [t for t in deps.tasks.tasks if t.queue == "hitl-timeouts"]  # type: ignore[attr-defined]
    assert task.queue == "hitl-timeouts" and task.url.endswith("/timeout")
    assert task.name == f"hitl-timeout-{asked.interrupt.id}"  # type: ignore[union-attr]
    asked_at = deps.clock.now()
    assert task.schedule_time == asked_at + timedelta(seconds=1800)
    chat = deps.conversations.get_chat("alice", asked.chat_id)
    assert chat is not None and chat.control.timeout_at == task.schedule_time


def test_the_timeout_rejects_once_and_tells_the_user(deps: Deps, llm: ScriptedLLM) -> None:
    asked = _ask_approval(deps, llm)
    service = ResumeService(deps)
    assert asked.interrupt is not None
    prepared = service.time_out("alice", asked.chat_id, asked.interrupt.id)
    assert prepared is not None
    told = service.turns.run_prepared(prepared)
    assert "did not hear back" in told.reply.text
    assert deps.publisher.messages == []  # type: ignore[attr-defined]  # nothing ran
    assert service.time_out("alice", asked.chat_id, asked.interrupt.id) is None  # redelivered
    with pytest.raises(InterruptNotPending):  # the user's late answer
        service.prepare("alice", _answer(asked, "approve"))
    texts = [m.text for m in deps.conversations.recent_messages("alice", asked.chat_id, 10)]
    assert "Yes, go ahead" not in texts  # nobody typed an answer


def test_a_timeout_after_the_answer_does_nothing(deps: Deps, llm: ScriptedLLM) -> None:
    asked = _ask_approval(deps, llm)
    service = ResumeService(deps)
    service.turns.run_prepared(service.prepare("alice", _answer(asked, "approve")))
    assert asked.interrupt is not None
    assert service.time_out("alice", asked.chat_id, asked.interrupt.id) is None
    assert len(deps.publisher.messages) == 1  # type: ignore[attr-defined]


def test_a_crashed_answer_frees_the_interrupt_when_its_lease_runs_out(
    deps: Deps, llm: ScriptedLLM, clock: FixedClock
) -> None:
    asked, brother = _ask_which_thomas(deps, llm)
    service = ResumeService(deps)
    service.prepare("alice", _answer(asked, brother))  # claimed, then the process died
    chat = deps.conversations.get_chat("alice", asked.chat_id)
    assert chat is not None and chat.control.status == "resuming"
    with pytest.raises(InterruptNotPending):  # still leased to the first answer
        service.prepare("alice", _answer(asked, brother))
    clock.advance(deps.settings.turn_lease_seconds + 1)
    llm.add("Your brother likes jazz.")
    response = service.turns.run_prepared(service.prepare("alice", _answer(asked, brother)))
    assert response.reply.text == "Your brother likes jazz."
    chat = deps.conversations.get_chat("alice", asked.chat_id)
    assert chat is not None and chat.control.status == "idle"


def test_a_message_does_not_run_while_an_answer_runs(deps: Deps, llm: ScriptedLLM) -> None:
    asked, brother = _ask_which_thomas(deps, llm)
    ResumeService(deps).prepare("alice", _answer(asked, brother))
    message = request("the sibling", cmid="m9", chat_id=asked.chat_id)
    with pytest.raises(ChatBusy) as busy:
        TurnService(deps).prepare(
            "alice", message.model_copy(update={"multitask_strategy": "reject"})
        )
    assert busy.value.retry_after is not None
    assert deps.conversations.get_turn("alice", "m9") is None  # refused: nothing written


def test_the_answer_resumes_the_checkpoint_the_question_was_saved_in(
    deps: Deps, llm: ScriptedLLM
) -> None:
    asked, brother = _ask_which_thomas(deps, llm)
    chat = deps.conversations.get_chat("alice", asked.chat_id)
    assert chat is not None and chat.control.thread_id == asked.turn_id
    saved = deps.checkpointer.get_tuple({"configurable": {"thread_id": asked.turn_id}})
    assert saved is not None
    assert chat.control.checkpoint_id == saved.config["configurable"]["checkpoint_id"]
    llm.add("Your brother likes jazz.")
    service = ResumeService(deps)
    service.turns.run_prepared(service.prepare("alice", _answer(asked, brother)))
    history = list(deps.checkpointer.list({"configurable": {"thread_id": asked.turn_id}}))
    assert len(history) == 2  # one checkpoint per turn (durability="exit"), one thread


def test_an_approval_answered_with_other_words_runs_the_step_as_rewritten(
    deps: Deps, llm: ScriptedLLM
) -> None:
    asked = _ask_approval(deps, llm)
    assert [o.id for o in asked.interrupt.options] == ["approve", "reject", "edit"]  # type: ignore[union-attr]
    service = ResumeService(deps)
    edited = "Book the gym on Saturday at 10am instead"
    service.turns.run_prepared(service.prepare("alice", _answer(asked, edited)))
    [job] = [AgentJob.model_validate_json(m.data) for m in deps.publisher.messages]  # type: ignore[attr-defined]
    assert edited in job.model_dump_json()
    texts = [m.text for m in deps.conversations.recent_messages("alice", asked.chat_id, 10)]
    assert edited in texts  # the user's words, not an option's label


def test_edit_is_chosen_by_words_only(deps: Deps, llm: ScriptedLLM) -> None:
    asked = _ask_approval(deps, llm)
    with pytest.raises(BadRequest):  # "edit" without saying how
        ResumeService(deps).prepare("alice", _answer(asked, "edit"))
    with pytest.raises(BadRequest):  # the third option by number: no words either
        ResumeService(deps).prepare("alice", _answer(asked, "3"))
    with pytest.raises(BadRequest):  # a question is a new request, never the step's goal
        ResumeService(deps).prepare("alice", _answer(asked, "What do you know about my family?"))


class CountingConversations(FakeConversationStore):
    """The fake store, counting history reads."""

    history_reads = 0

    def recent_messages(
        self, user_id: str, chat_id: str, limit: int, after: datetime | None = None
    ) -> list[Message]:
        self.history_reads += 1
        return super().recent_messages(user_id, chat_id, limit, after)


def test_an_answer_takes_the_history_from_the_checkpoint_while_the_chat_is_unchanged(
    deps: Deps, llm: ScriptedLLM
) -> None:
    store = CountingConversations()
    deps.__dict__["conversations"] = store  # a counting fake in place of the plain one
    asked, brother = _ask_which_thomas(deps, llm)
    reads = store.history_reads
    llm.add("Your brother likes jazz.")
    service = ResumeService(deps)
    service.turns.run_prepared(service.prepare("alice", _answer(asked, brother)))
    assert store.history_reads == reads  # no read: the checkpoint holds it
    texts = " ".join(turn.text for turn in llm.calls[-1].request.messages)
    assert "Which Thomas" in texts  # the question, from the checkpoint's history


def test_an_answer_reads_the_history_when_the_chat_changed_since_the_question(
    deps: Deps, llm: ScriptedLLM, clock: FixedClock
) -> None:
    store = CountingConversations()
    deps.__dict__["conversations"] = store
    asked, brother = _ask_which_thomas(deps, llm)
    result = Message(
        id="job-result", role="assistant", text="Your report is ready.", created_at=clock.now()
    )
    store.append_message("alice", asked.chat_id, result)  # an agent posted meanwhile
    reads = store.history_reads
    llm.add("Your brother likes jazz.")
    service = ResumeService(deps)
    service.turns.run_prepared(service.prepare("alice", _answer(asked, brother)))
    assert store.history_reads == reads + 1
    texts = " ".join(turn.text for turn in llm.calls[-1].request.messages)
    assert "Your report is ready." in texts
