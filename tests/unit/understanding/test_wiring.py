"""The tier wired into the product, on fakes with the scripted model behind it: what it
settles costs no model call (classify, planner, extraction), what it leaves open goes to the
model with its certain parts kept, and the turn's record says who decided."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from shared.app.agent_delivery import AgentJobService
from shared.app.extraction import ExtractionService
from shared.app.turn import TurnService
from shared.config import Settings
from shared.deps import Deps
from shared.fakes.clock import FixedClock
from shared.fakes.scripted_llm import ScriptedLLM
from shared.graph.nodes import planning
from shared.graph.state import Intent, PlanStep, TurnState
from shared.models.domain import AssistantProfile, ExtractionTask, ToolCall
from shared.models.jobs import AgentJob
from shared.models.memory import FactFilter, Person
from shared.understanding import UnderstandingTier
from tests.unit.turn_kit import classification, metadata, nodes, request
from tests.unit.understanding.conftest import with_tier

ZONE = "Europe/Zurich"


@pytest.fixture
def wired(deps: Deps, tier: UnderstandingTier, clock: FixedClock) -> Deps:
    """The unit composition root with the tier and the agents' data store."""
    wired = with_tier(deps, tier)
    profile = AssistantProfile(timezone=ZONE, currency="CHF")
    wired.profiles.put_profile("alice", profile, clock.now())
    return wired


def _tasks(deps: Deps) -> list[ExtractionTask]:
    queued = deps.tasks.tasks  # type: ignore[attr-defined]
    queue = deps.settings.extraction_queue
    return [ExtractionTask.model_validate_json(t.body) for t in queued if t.queue == queue]


def _configured(wired: Deps, **settings: Any) -> Deps:
    """The same ports under other settings (``MODEL_STRENGTH``, ``UNDERSTANDING_*`` as a
    deployment sets them)."""
    changed = Settings(
        env="test", model_provider="scripted", **{"speculative_reply": False, **settings}
    )  # no speculative reply: see ``with_tier``
    return Deps(changed, **{k: v for k, v in wired.__dict__.items() if k != "settings"})


def _jobs(deps: Deps) -> list[AgentJob]:
    return [AgentJob.model_validate_json(m.data) for m in deps.publisher.messages]  # type: ignore[attr-defined]


def test_a_statement_it_reads_whole_costs_only_the_reply(wired: Deps, llm: ScriptedLLM) -> None:
    llm.add("How lovely!")
    said = "My sister Anna lives in Berlin and she loves climbing."
    TurnService(wired).run("alice", request(said))
    assert len(llm.calls) == 1  # the reply: no classify call
    record = metadata(wired, "m1")
    assert record.decided_by == "understanding" and record.fast_path
    assert record.understanding is not None
    assert (record.understanding.label, record.understanding.facts) == ("statement", True)

    [task] = _tasks(wired)
    assert task.stated is not None
    outcome = ExtractionService(wired).run(task)
    assert (outcome.read_by, len(llm.calls)) == ("understanding", 1)  # no extraction call
    [anna] = wired.contacts.list_persons("alice")
    assert (anna.display_name, anna.role_to_user) == ("Anna", "sibling")
    facts = wired.facts.list_facts("alice", FactFilter(subject_id=anna.id))
    texts = sorted(f.text for f in facts)
    assert any("Berlin" in t for t in texts) and any("climbing" in t for t in texts), texts


def test_what_it_leaves_open_goes_to_the_model_with_its_people_kept(
    wired: Deps, llm: ScriptedLLM
) -> None:
    # The tier cannot read "off sick" whole: the model classifies and extracts, but the
    # tier's reading of "my colleague Anna" stands over the model's (which missed her).
    llm.add(classification(facts=True), "Get well soon to her.")
    TurnService(wired).run("alice", request("My colleague Anna wants to stay home sick today."))
    assert "Classify" in llm.calls[0].request.system
    record = metadata(wired, "m1")
    assert record.decided_by == "model"
    assert record.understanding is not None and record.understanding.people
    [task] = _tasks(wired)
    assert task.stated is None  # the extraction model reads it
    assert task.said is None  # only a tier reader stores sentences as said
    assert task.fallback is not None
    assert [f.text for f in task.fallback.facts] == ["Anna is the user's colleague"]


@pytest.mark.parametrize("model_says", ["broken", "nothing", "unstorable"])
def test_what_the_tier_was_sure_of_is_stored_when_extraction_reads_nothing(
    wired: Deps, llm: ScriptedLLM, model_says: str
) -> None:
    llm.add(classification(facts=True), "Get well soon to her.")
    TurnService(wired).run("alice", request("My colleague Anna wants to stay home sick today."))
    if model_says == "broken":
        llm.add({"facts": "nope"}, {"facts": "still nope"})  # twice: the retry too
    elif model_says == "nothing":
        llm.add({"facts": [], "entities": []})
    else:  # about someone it cannot place: skipped
        fact = {"text": "He is ill", "type": "Health", "about": "he", "confidence": 0.9}
        llm.add({"facts": [fact], "entities": []})
    [anna] = _persons_after_extraction(wired)
    assert (anna.display_name, anna.role_to_user) == ("Anna", "colleague")
    [fact] = wired.facts.list_facts("alice", FactFilter(subject_id=anna.id))
    assert "colleague" in fact.text


def test_for_a_weak_model_the_open_route_is_guessed_and_only_the_reply_is_a_model_call(
    wired: Deps, llm: ScriptedLLM
) -> None:
    guessing = _configured(wired, model_strength="weak")
    llm.add("Get well soon to her.")
    TurnService(guessing).run("alice", request("My colleague Anna wants to stay home sick today."))
    assert len(llm.calls) == 1 and "Classify" not in llm.calls[0].request.system
    record = metadata(guessing, "m1")
    assert record.understanding is not None and record.understanding.guessed
    assert (record.understanding.label, record.decided_by) == ("statement", "understanding")
    [task] = _tasks(guessing)
    assert task.stated is None  # "off sick" is no shape it reads: the extraction model's


def test_offline_the_tier_reads_for_extraction_what_it_was_sure_of_and_the_sentence(
    wired: Deps, llm: ScriptedLLM
) -> None:
    offline = _configured(
        wired, model_strength="weak", understanding_answers="reply",
        extraction_reader="understanding",
    )  # fmt: skip
    reply = TurnService(offline).run("alice", request("My colleague Anna is off sick today."))
    assert reply.reply.text == "Noted."  # told back, no model call
    [task] = _tasks(offline)
    assert task.said is not None
    assert [f.text for f in task.said.facts] == ["The user's colleague Anna is off sick today."]
    outcome = ExtractionService(offline).run(task)
    assert (outcome.stored, outcome.read_by, llm.calls) == (2, "understanding", [])
    [anna] = offline.contacts.list_persons("alice")
    assert (anna.display_name, anna.role_to_user) == ("Anna", "colleague")
    facts = offline.facts.list_facts("alice", FactFilter(subject_id=anna.id))
    assert sorted(f.text for f in facts) == [
        "Anna is the user's colleague",
        "The user's colleague Anna is off sick today.",
    ]
    assert {f.sensitivity for f in facts if "sick" in f.text} == {"high"}


@pytest.mark.parametrize(
    "said",
    [
        "I still need to register at the Kreisbüro within 14 days.",  # was: an approval
        "The movers broke one leg of my drawing table.",  # was: a feedback agent's job
        "The physio appointment is on 25 May at 8 am.",  # was: thanks, nothing stored
    ],
)
def test_a_guessed_session_message_is_replied_to_and_extracted(
    wired: Deps, llm: ScriptedLLM, said: str
) -> None:
    guessing = _configured(wired, model_strength="weak")
    llm.add("Noted.")
    result = TurnService(guessing).run("alice", request(said))
    assert result.interrupt is None and _jobs(guessing) == []
    record = metadata(guessing, "m1")
    assert record.route == "simple" and record.jobs_published == 0
    assert len(_tasks(guessing)) == 1 and record.extraction_enqueued


def test_a_reminder_is_planned_asked_and_made_once_without_a_model(
    wired: Deps, llm: ScriptedLLM, clock: FixedClock
) -> None:
    service = TurnService(wired)
    asked = service.run("alice", request("Remind me to call my mother Maria tomorrow at 10am"))
    assert asked.interrupt is not None and asked.interrupt.kind == "approval"
    assert "call my mother Maria" in asked.interrupt.question
    assert "global_planner" in nodes(wired, "m1") and llm.calls == []  # nor the planner
    service.run("alice", request("yes", cmid="m2", chat_id=asked.chat_id))
    [job] = _jobs(wired)
    [subtask] = job.subtasks
    assert subtask.call is not None and subtask.call.approved

    jobs = AgentJobService(wired, sleep=lambda _: None, rand=lambda: 0.5)
    assert jobs.run(job, "push-1").status == "done"
    assert jobs.run(job, "push-2").status == "duplicate"  # a redelivery
    [reminder] = wired.reminders.list_open("alice", 10)
    tomorrow = datetime(2026, 11, 22, 10, 0, tzinfo=ZoneInfo(ZONE))
    assert reminder.due_at == tomorrow and "Maria" in reminder.text
    assert llm.calls == []  # the job made its known call without a model step
    [maria] = [p for p in _persons_after_extraction(wired) if p.display_name == "Maria"]
    assert maria.role_to_user == "parent"


def _persons_after_extraction(deps: Deps) -> list[Person]:
    for task in _tasks(deps):
        ExtractionService(deps).run(task)
    return deps.contacts.list_persons("alice")


def test_an_expense_in_the_users_currency_is_recorded_when_trusted(
    wired: Deps, llm: ScriptedLLM, clock: FixedClock
) -> None:
    wired.trust.update(
        "alice", lambda r: r.model_copy(update={"pinned_mode": "human_on_the_loop"}), clock.now()
    )
    response = TurnService(wired).run("alice", request("I spent 42.50 on groceries"))
    assert response.interrupt is None and llm.calls == []
    [job] = _jobs(wired)
    AgentJobService(wired, sleep=lambda _: None, rand=lambda: 0.5).run(job, "push-1")
    month = clock.now() - timedelta(days=1)
    [expense] = wired.agent_data.list_expenses("alice", month, clock.now() + timedelta(days=1), 10)
    assert (expense.amount_minor, expense.currency, expense.category) == (4250, "CHF", "groceries")


@pytest.mark.parametrize("answers", ["reply", "ground"])
def test_a_question_the_stored_facts_answer(wired: Deps, llm: ScriptedLLM, answers: str) -> None:
    llm.add("Nice.")
    TurnService(wired).run("alice", request("My sister Anna lives in Berlin."))
    for task in _tasks(wired):
        ExtractionService(wired).run(task)
    asking = _configured(wired, understanding_answers=answers)
    llm.add("She lives in Berlin.")
    calls = len(llm.calls)
    reply = TurnService(asking).run("alice", request("Where does Anna live?", cmid="m2"))
    record = metadata(asking, "m2")
    assert record.understanding is not None and record.understanding.answer
    if answers == "reply":
        assert reply.reply.text == "Anna lives in Berlin." and len(llm.calls) == calls
    else:
        assert "The stored facts answer the question: Anna lives in Berlin." in (
            llm.calls[-1].request.system
        )


def test_a_plain_greeting_never_wakes_the_tier(deps: Deps, llm: ScriptedLLM) -> None:
    class Asleep:
        def understand(self, *_: object) -> None:
            raise AssertionError("a greeting read by the tier")

    greeted = Deps(
        deps.settings,
        understanding=Asleep(),
        **{name: value for name, value in deps.__dict__.items() if name != "settings"},
    )
    TurnService(greeted).run("alice", request("Hello!"))
    assert metadata(greeted, "m1").decided_by == "rule" and llm.calls == []


@pytest.mark.parametrize(
    ("agent", "tool", "args"),
    [
        ("wealth", "reminders_add", {"text": "x", "due_at": "2026-11-22T10:00:00+01:00"}),
        ("productivity", "reminders_add", {"text": "x", "due_at": "tomorrow"}),
        ("stranger", None, {}),
    ],
)
def test_a_tier_plan_the_contract_refuses_is_left_to_the_model(
    agent: str, tool: str | None, args: dict[str, str]
) -> None:
    call = ToolCall(tool=tool, args=args) if tool else None
    step = PlanStep(id="s1", agent=agent, inputs={"goal": "do it"}, call=call)
    assert planning._understood_plan(TurnState(intent=Intent(planned=[step]))) is None
    fine = step.model_copy(update={"agent": "productivity", "call": None})
    assert planning._understood_plan(TurnState(intent=Intent(planned=[fine]))) is not None


def test_a_statement_read_whole_is_told_back_when_the_tier_replies(
    wired: Deps, llm: ScriptedLLM
) -> None:
    quoting = _configured(wired, understanding_answers="reply")
    told = TurnService(quoting).run("alice", request("My brother Tom works as a nurse in Bern."))
    assert told.reply.text == "Noted: Tom works as a nurse in Bern."
    heard = TurnService(quoting).run("alice", request("I had a long day at work.", "m2"))
    assert heard.reply.text == "Noted."  # its facts are the extraction model's to read
    assert llm.calls == []  # neither a classification nor a reply
    llm.add("Good to know.")
    grounded = TurnService(wired).run("bob", request("My brother Tom works as a nurse in Bern."))
    assert grounded.reply.text == "Good to know."  # production: the model writes the reply


def test_a_question_about_someone_nothing_is_known_of_is_not_left_to_invention(
    wired: Deps, llm: ScriptedLLM
) -> None:
    quoting = _configured(wired, understanding_answers="reply", model_strength="weak")
    service = TurnService(quoting)
    asked = service.run("carol", request("When is my sister Lena's birthday?"))
    assert asked.reply.text == "I don't know anything about Lena yet."
    boss = service.run("carol", request("Who is my boss?", "m2"))
    assert boss.reply.text == "I don't know anything about your boss yet."
    assert llm.calls == []  # a weak model would have made a birthday up
    service.run("carol", request("My sister Lena lives in Graz.", "m3"))
    for task in _tasks(quoting):
        if task.stated is not None:  # the statement's (the questions' need a model)
            ExtractionService(quoting).run(task)
    known = service.run("carol", request("When is my sister Lena's birthday?", "m4"))
    assert known.reply.text == "I don't know that yet. What I know about Lena: Lena lives in Graz."
    assert llm.calls == []


def test_a_model_too_weak_for_the_research_agent_answers_in_the_reply(
    wired: Deps, llm: ScriptedLLM
) -> None:
    weak = _configured(wired, model_strength="weak")
    llm.add("Trains to Milan cost from 40 francs.")
    reply = TurnService(weak).run("dana", request("Compare the prices of trains to Milan."))
    assert reply.reply.text == "Trains to Milan cost from 40 francs."
    assert _jobs(weak) == []
    TurnService(wired).run("erin", request("Compare the prices of trains to Milan."))
    assert [job.agent for job in _jobs(wired)] == ["research"]  # production: its agent


def test_what_it_knows_about_the_family_names_everyone_in_it(wired: Deps, llm: ScriptedLLM) -> None:
    quoting = _configured(wired, understanding_answers="reply")
    service = TurnService(quoting)
    service.run("alice", request("My sister Anna lives in Berlin and she loves climbing."))
    asked = service.run(
        "alice", request("Remind me to call my mother Maria tomorrow at 10am", "m2")
    )
    service.run("alice", request("no", cmid="m3", chat_id=asked.chat_id))
    for task in _tasks(quoting):
        ExtractionService(quoting).run(task)
    calls = len(llm.calls)
    reply = service.run("alice", request("What do you know about my family?", cmid="m4"))
    assert "Anna lives in Berlin" in reply.reply.text and "Maria is your mother" in reply.reply.text
    assert len(llm.calls) == calls  # quoted: no model call


def test_for_a_weak_model_an_unclear_reply_escapes_without_asking_the_model(
    wired: Deps, llm: ScriptedLLM
) -> None:
    for role, relation in (("sibling", "sister"), ("colleague", "colleague")):
        wired.contacts.add_person(
            Person(id=str(uuid.uuid4()), user_id="alice", display_name="Anna",
                   role_to_user=role, descriptors={"relation": relation})  # type: ignore[arg-type]
        )  # fmt: skip
    guessing = _configured(wired, model_strength="weak", understanding_answers="reply")
    service = TurnService(guessing)
    asked = service.run("alice", request("Where does Anna live?"))
    assert asked.interrupt is not None
    assert {o.label for o in asked.interrupt.options} >= {"Anna (sister)", "Anna (colleague)"}
    llm.add("Nice.")
    service.run("alice", request("Anna bought a new bike.", cmid="m2", chat_id=asked.chat_id))
    assert all(call.schema is None or call.schema.__name__ != "AnswerMatch" for call in llm.calls)
    assert "resolve_disambiguation" not in nodes(guessing, "m2")  # escaped: a new message


def test_what_is_known_about_the_user_is_quoted_to_them(wired: Deps, llm: ScriptedLLM) -> None:
    """On make dev "what do you know about me?" after "remember that i'm vegetarian" was
    left to SmolLM2, which wrote about a chef."""
    quoting = _configured(
        wired,
        understanding_answers="reply",
        model_strength="weak",
        extraction_reader="understanding",
    )  # fmt: skip  (make dev's settings)
    service = TurnService(quoting)
    nothing = service.run("dora", request("what do you know about me?"))
    assert nothing.reply.text == "I don't know anything about you yet."
    service.run("dora", request("remember that i'm vegetarian", "m2"))
    for task in _tasks(quoting):
        if task.stated is not None or task.said is not None:  # read by the tier
            ExtractionService(quoting).run(task)
    known = service.run("dora", request("what do you know about me?", "m3"))
    assert known.reply.text == "You are vegetarian."
    assert llm.calls == []
