"""Each route of the Global Supervisor end to end on fakes with the scripted model: which
nodes ran (from the turn's metadata), what was stored, enqueued and published."""

from __future__ import annotations

from shared.app.turn import Chunk, TurnService
from shared.deps import Deps
from shared.errors import DependencyUnavailable
from shared.fakes.clock import FixedClock
from shared.fakes.scripted_llm import ScriptedLLM
from shared.models.domain import ExtractionTask, Message
from shared.models.jobs import AgentJob
from shared.models.memory import ExtractionChanges, FactDraft
from shared.services.context_cache import context_key
from tests.unit.turn_kit import add_person, classification, metadata, nodes, request

ENTRY = ["session_init", "context_loader", "hitl_handler", "classify"]


def _tasks(deps: Deps) -> list[ExtractionTask]:
    return [ExtractionTask.model_validate_json(t.body) for t in deps.tasks.tasks]  # type: ignore[attr-defined]


def _jobs(deps: Deps) -> list[AgentJob]:
    return [AgentJob.model_validate_json(m.data) for m in deps.publisher.messages]  # type: ignore[attr-defined]


def test_greeting_skips_the_model_and_all_memory_work(deps: Deps, llm: ScriptedLLM) -> None:
    response = TurnService(deps).run("alice", request("Grüezi!"))
    assert response.reply.text.startswith("Hallo")  # answered in its language
    assert llm.calls == []
    assert nodes(deps, "m1") == ["session_init", "hitl_handler", "classify", "greeting_text"]
    assert metadata(deps, "m1").fast_path is True
    assert deps.tasks.tasks == []  # type: ignore[attr-defined]
    assert deps.cache.get(context_key("alice")) is None  # the context was never loaded


def test_simple_route_answers_without_retrieval(deps: Deps, llm: ScriptedLLM) -> None:
    llm.add(classification(), "It is a fine day.")
    TurnService(deps).run("alice", request("How is the day?"))
    assert nodes(deps, "m1") == [
        *ENTRY, "entity_resolution", "memory_assembly", "fact_extraction", "simple_text",
    ]  # fmt: skip
    assert deps.tasks.tasks == [] and deps.publisher.messages == []  # type: ignore[attr-defined]


def test_full_memory_route_retrieves_in_parallel_and_enqueues_with_resolutions(
    deps: Deps, llm: ScriptedLLM, clock: FixedClock
) -> None:
    anna = add_person(deps, "Anna", "sibling")
    entity = {"name": "Anna", "role": "sister"}
    classified = classification(
        facts=True, semantic=True, temporal=True, entities=[entity], when=["next week"]
    )
    llm.add(classified, "Anna is in Bern next week.")
    TurnService(deps).run("alice", request("My sister Anna visits next week; what's planned?"))
    ran = nodes(deps, "m1")
    assert {"semantic_retrieval", "temporal_retrieval"} <= set(ran)
    assert ran.index("memory_assembly") > max(
        ran.index("semantic_retrieval"), ran.index("temporal_retrieval")
    )
    [task] = _tasks(deps)
    assert [(e.mention, e.person_id) for e in task.resolved_entities] == [("Anna", anna.id)]
    assert task.timezone == "UTC"


def test_retrieved_facts_reach_the_answer_prompt(deps: Deps, llm: ScriptedLLM) -> None:
    anna = add_person(deps, "Anna", "sibling")
    text = "Anna is allergic to peanuts"
    fact = FactDraft(
        text=text, type="Allergy", subject_entity_id=anna.id, relation_to_user="sibling",
        confidence=0.95, embedding=deps.embedder.embed([text])[0],
        embedding_model=deps.embedder.model_name, idempotency_key="seed-1",
    )  # fmt: skip
    changes = ExtractionChanges(new_facts=[fact])
    assert deps.facts.apply_extraction("seed", "alice", changes, deps.clock.now())
    llm.add(
        classification(semantic=True, entities=[{"name": "Anna", "role": None}]),
        "Avoid peanuts.",
    )
    TurnService(deps).run("alice", request("What should I cook for Anna? peanuts allergic"))
    answer = llm.calls[-1].request
    assert "Known about Anna: Anna is allergic to peanuts" in answer.system


def test_complex_route_plans_runs_short_steps_inline_and_publishes_long_ones(
    deps: Deps, llm: ScriptedLLM
) -> None:
    plan = {
        "steps": [
            {"id": "s1", "agent": "research", "goal": "compare hotels in Rome"},
            {"id": "s2", "agent": "drafting", "goal": "draft a note to Bea about the trip"},
        ]
    }
    llm.add(classification("complex"), plan, "Dear Bea, ...", "Here is your draft.")
    service = TurnService(deps)
    response = service.run("alice", request("Plan Rome and tell Bea"))
    assert nodes(deps, "m1")[-4:] == [
        "global_planner", "agent_execution", "agent_execution", "complex_text",
    ]  # fmt: skip
    [job] = _jobs(deps)
    assert (job.agent, job.goal) == ("research", "compare hotels in Rome")
    assert response.jobs == [job.job_id]  # the client may pause or cancel it
    assert "Here is your draft." in response.reply.text
    assert "(compare hotels in Rome)" in response.reply.text  # says what was started
    assert "research" not in response.reply.text  # not by its agent's name
    synthesis = llm.calls[-1].request
    assert "drafting: Dear Bea, ..." in synthesis.system


def test_a_plan_naming_an_unknown_agent_is_retried_then_fails(deps: Deps, llm: ScriptedLLM) -> None:
    bad = {"steps": [{"id": "s1", "agent": "hacker", "goal": "do things"}]}
    llm.add(classification("complex"), bad, bad)
    response = TurnService(deps).run("alice", request("Do something complex"))
    assert response.reply.kind == "fallback"
    assert metadata(deps, "m1").failed_node == "global_planner"
    assert deps.publisher.messages == []  # type: ignore[attr-defined]


def test_an_acting_agent_asks_for_approval_and_the_answer_continues_there(
    deps: Deps, llm: ScriptedLLM
) -> None:
    plan = {"steps": [{"id": "s1", "agent": "productivity", "goal": "book Friday 3pm gym"}]}
    llm.add(classification("complex"), plan)
    service = TurnService(deps)
    asked = service.run("alice", request("Book me the gym on Friday"))
    assert asked.reply.kind == "question" and asked.interrupt is not None
    assert asked.interrupt.kind == "approval"
    assert deps.publisher.messages == []  # type: ignore[attr-defined]  # nothing acted yet
    chat = deps.conversations.get_chat("alice", asked.chat_id)
    assert chat is not None and chat.control.status == "pending"
    service.run("alice", request("yes", cmid="m2", chat_id=asked.chat_id))
    assert nodes(deps, "m2")[-2:] == ["agent_execution", "complex_text"]
    [job] = _jobs(deps)
    assert job.agent == "productivity"
    chat = deps.conversations.get_chat("alice", asked.chat_id)
    assert chat is not None and chat.control.status == "idle"


def test_a_refused_approval_runs_nothing(deps: Deps, llm: ScriptedLLM) -> None:
    plan = {"steps": [{"id": "s1", "agent": "productivity", "goal": "book Friday 3pm gym"}]}
    llm.add(classification("complex"), plan)
    service = TurnService(deps)
    asked = service.run("alice", request("Book me the gym on Friday"))
    answered = service.run("alice", request("no", cmid="m2", chat_id=asked.chat_id))
    assert deps.publisher.messages == []  # type: ignore[attr-defined]
    assert "left this undone" in answered.reply.text


def _two_thomases(deps: Deps) -> tuple[str, str]:
    return add_person(deps, "Thomas", "colleague").id, add_person(deps, "Thomas", "sibling").id


def test_blocking_disambiguation_asks_first_and_the_answer_resumes_the_question(
    deps: Deps, llm: ScriptedLLM
) -> None:
    colleague, brother = _two_thomases(deps)
    thomas = [{"name": "Thomas", "role": None}]
    llm.add(classification(facts=True, semantic=True, entities=thomas))
    service = TurnService(deps)
    asked = service.run("alice", request("Thomas is moving to Bern; what does he like?"))
    assert asked.interrupt is not None and asked.interrupt.kind == "disambiguation"
    assert {o.id for o in asked.interrupt.options} == {colleague, brother, "someone_else"}
    assert nodes(deps, "m1")[-2:] == ["disambiguation_blocking", "hitl_text"]
    assert deps.tasks.tasks == []  # type: ignore[attr-defined]  # deferred: who is unknown
    assert llm.pending == 0 and len(llm.calls) == 1  # no answer written before asking

    index = [o.id for o in asked.interrupt.options].index(brother) + 1
    llm.add("Your brother Thomas likes jazz.")
    answered = service.run("alice", request(str(index), cmid="m2", chat_id=asked.chat_id))
    assert answered.reply.text == "Your brother Thomas likes jazz."
    assert "resolve_disambiguation" in nodes(deps, "m2")
    assert "classify" not in nodes(deps, "m2")  # the intent of the question is kept
    assert llm.calls[-1].request.messages[-1].text.startswith("Thomas is moving")
    [task] = _tasks(deps)
    assert task.turn_id == asked.turn_id  # named from the asking turn: idempotent
    assert [(e.person_id, e.confidence) for e in task.resolved_entities] == [(brother, 1.0)]


def test_someone_else_marks_a_new_person_for_extraction(deps: Deps, llm: ScriptedLLM) -> None:
    _two_thomases(deps)
    llm.add(classification(facts=True, semantic=True, entities=[{"name": "Thomas"}]))
    service = TurnService(deps)
    asked = service.run("alice", request("Thomas got a dog; does he like cats?"))
    llm.add("Noted.")
    service.run("alice", request("someone else", cmid="m2", chat_id=asked.chat_id))
    [task] = _tasks(deps)
    assert [(e.person_id, e.new_person) for e in task.resolved_entities] == [(None, True)]


def test_non_blocking_disambiguation_answers_now_and_asks_by_the_way(
    deps: Deps, llm: ScriptedLLM
) -> None:
    colleague, _ = _two_thomases(deps)
    llm.add(classification(facts=True, entities=[{"name": "Thomas"}]), "Nice!")
    service = TurnService(deps)
    response = service.run("alice", request("Thomas is moving to Bern"))
    assert response.interrupt is None
    assert response.reply.text.startswith("Nice!")
    assert "By the way, which Thomas did you mean" in response.reply.text
    assert nodes(deps, "m1")[-2:] == ["disambiguation_simple", "simple_text"]
    [task] = _tasks(deps)  # enqueued now: the fact system holds what it cannot attribute
    assert task.resolved_entities == []
    chat = deps.conversations.get_chat("alice", response.chat_id)
    assert chat is not None and chat.control.status == "pending" and not chat.control.blocking
    ack = service.run("alice", request("the colleague", cmid="m2", chat_id=response.chat_id))
    assert ack.reply.text == "Thanks, noted: you meant Thomas (colleague)."
    assert nodes(deps, "m2") == ["await_answer", *ENTRY[:3], "resolve_disambiguation", "hitl_text"]
    # The answer travels with the asked turn's extraction, which may not have run yet.
    names = [t.name for t in deps.tasks.tasks]  # type: ignore[attr-defined]
    assert names == [f"extract-{response.turn_id}", f"answer-{response.turn_id}"]
    answered = _tasks(deps)[1]
    assert answered.turn_id == response.turn_id and answered.text == task.text
    assert answered.settles == "Thomas"
    assert [(e.mention, e.person_id) for e in answered.resolved_entities] == [("Thomas", colleague)]


def test_a_new_request_escapes_a_pending_question(deps: Deps, llm: ScriptedLLM) -> None:
    _two_thomases(deps)
    llm.add(classification(facts=True, semantic=True, entities=[{"name": "Thomas"}]))
    service = TurnService(deps)
    asked = service.run("alice", request("Thomas is moving to Bern; what does he like?"))
    llm.add(classification(), "It is sunny.")
    new_request = request("Forget that. How's the weather?", cmid="m2", chat_id=asked.chat_id)
    escaped = service.run("alice", new_request)
    assert escaped.reply.text == "It is sunny."
    chat = deps.conversations.get_chat("alice", asked.chat_id)
    assert chat is not None and chat.control.status == "idle"
    [task] = _tasks(deps)  # the deferred extraction runs, without a guessed person
    assert task.turn_id == asked.turn_id and task.resolved_entities == []


def _asked_by_the_way(deps: Deps, llm: ScriptedLLM) -> tuple[TurnService, str]:
    """A statement about one of two Thomases: answered, and asked about "by the way"."""
    _two_thomases(deps)
    llm.add(classification(facts=True, entities=[{"name": "Thomas"}]), "Nice!")
    service = TurnService(deps)
    return service, service.run("alice", request("Thomas is moving to Bern")).chat_id


def test_a_by_the_way_answer_of_someone_else_is_acknowledged_as_someone_new(
    deps: Deps, llm: ScriptedLLM
) -> None:
    service, chat_id = _asked_by_the_way(deps, llm)
    ack = service.run("alice", request("someone else", cmid="m2", chat_id=chat_id))
    assert ack.reply.text == "Thanks, noted: someone new called Thomas."


def test_escaping_a_by_the_way_question_enqueues_its_extraction_only_once(
    deps: Deps, llm: ScriptedLLM
) -> None:
    service, chat_id = _asked_by_the_way(deps, llm)
    llm.add(classification(), "It is sunny.")
    service.run("alice", request("How's the weather?", cmid="m2", chat_id=chat_id))
    chat = deps.conversations.get_chat("alice", chat_id)
    assert chat is not None and chat.control.status == "idle"
    assert len([t for t in _tasks(deps) if t.facts]) == 1  # the asked turn's, once


def test_a_greeting_keeps_the_pending_question(deps: Deps, llm: ScriptedLLM) -> None:
    _two_thomases(deps)
    llm.add(classification(semantic=True, entities=[{"name": "Thomas"}]))
    service = TurnService(deps)
    asked = service.run("alice", request("What does Thomas like?"))
    service.run("alice", request("thanks", cmid="m2", chat_id=asked.chat_id))
    chat = deps.conversations.get_chat("alice", asked.chat_id)
    assert chat is not None and chat.control.status == "pending"


def test_a_short_unclear_reply_asks_the_model_whether_it_answers(
    deps: Deps, llm: ScriptedLLM
) -> None:
    colleague, _ = _two_thomases(deps)
    llm.add(classification(semantic=True, entities=[{"name": "Thomas"}]))
    service = TurnService(deps)
    asked = service.run("alice", request("What does Thomas like?"))
    llm.add({"answers_question": True, "option_id": colleague}, "He likes chess.")
    service.run("alice", request("the one from work", cmid="m2", chat_id=asked.chat_id))
    assert llm.calls[-2].schema is not None and llm.calls[-2].schema.__name__ == "AnswerMatch"
    assert "resolve_disambiguation" in nodes(deps, "m2")


def test_long_history_is_summarized_and_the_summary_stored(
    deps: Deps, llm: ScriptedLLM, clock: FixedClock
) -> None:
    service = TurnService(deps)
    chat = service.run("alice", request("Hello", cmid="c0")).chat_id
    for n in range(11):  # 2 + 22 messages: over the 20-message threshold
        clock.advance(60)
        deps.conversations.append_message(
            "alice", chat,
            Message(id=f"x{n}", role="user", text=f"note {n}", created_at=clock.now()),
        )  # fmt: skip
        deps.conversations.append_message(
            "alice", chat,
            Message(id=f"y{n}", role="assistant", text=f"ok {n}", created_at=clock.now()),
        )  # fmt: skip
    clock.advance(60)
    llm.add("User left 11 notes.", classification(), "Sure.")
    service.run("alice", request("What did I note?", cmid="c1", chat_id=chat))
    assert "summarize" in nodes(deps, "c1")
    stored = deps.conversations.get_chat("alice", chat)
    assert stored is not None and stored.summary == "User left 11 notes."
    assert len(deps.conversations.recent_messages("alice", chat, 100)) == 26  # raw kept
    answer = llm.calls[-1].request
    assert "Earlier in this conversation: User left 11 notes." in answer.system
    assert len(answer.messages) == 8 + 1  # the kept recent messages and the question
    llm.add(classification(), "Fine.")
    service.run("alice", request("And now?", cmid="c2", chat_id=chat))
    assert "summarize" not in nodes(deps, "c2")  # only what came after the summary


def test_context_is_cached_encrypted_and_reloaded_after_invalidation(
    deps: Deps, llm: ScriptedLLM
) -> None:
    from shared.models.domain import AssistantProfile
    from shared.services.context_cache import invalidate_context

    deps.profiles.put_profile(
        "alice", AssistantProfile(persona_name="Ada", presentation_rules=["Use bullet points"]),
        deps.clock.now(),
    )  # fmt: skip
    llm.add(classification(), "One.", classification(), "Two.")
    service = TurnService(deps)
    chat = service.run("alice", request("First?")).chat_id
    cached = deps.cache.get(context_key("alice"))
    assert cached is not None and b"Ada" not in cached  # encrypted with the user's key
    assert "You are Ada" in llm.calls[1].request.system
    assert "Rule: Use bullet points" in llm.calls[1].request.system
    deps.profiles.put_profile("alice", AssistantProfile(persona_name="Bo"), deps.clock.now())
    service.run("alice", request("Second?", cmid="m2", chat_id=chat))
    assert "You are Ada" in llm.calls[3].request.system  # cached until invalidated
    invalidate_context(deps.cache, "alice")
    llm.add(classification(), "Three.")
    service.run("alice", request("Third?", cmid="m3", chat_id=chat))
    assert "You are Bo" in llm.calls[5].request.system


def test_stream_of_a_question_ends_with_the_interrupt(deps: Deps, llm: ScriptedLLM) -> None:
    _two_thomases(deps)
    llm.add(classification(semantic=True, entities=[{"name": "Thomas"}]))
    service = TurnService(deps)
    events = list(service.events(service.prepare("alice", request("What does Thomas like?"))))
    chunks = [e.text for e in events if isinstance(e, Chunk)]
    assert chunks and chunks[0].startswith("Which Thomas do you mean?")


class _ContextCacheDown:
    """Counts rate-limit hits but cannot read or write cached values."""

    def __init__(self, inner: object) -> None:
        self._inner = inner

    def hit(self, key: str, window_seconds: int) -> int:
        return self._inner.hit(key, window_seconds)  # type: ignore[attr-defined, no-any-return]

    def get(self, key: str) -> bytes | None:
        raise DependencyUnavailable("redis down")

    def set(self, key: str, value: bytes, ttl_seconds: int) -> None:
        raise DependencyUnavailable("redis down")


def test_the_turn_loads_its_context_from_the_stores_when_the_cache_is_down(
    deps: Deps, llm: ScriptedLLM
) -> None:
    from shared.models.domain import AssistantProfile

    deps.profiles.put_profile("alice", AssistantProfile(persona_name="Ada"), deps.clock.now())
    deps.__dict__["cache"] = _ContextCacheDown(deps.cache)
    llm.add(classification(), "Hi there.")
    response = TurnService(deps).run("alice", request("Who are you?"))
    assert response.reply.kind == "text"
    assert "You are Ada" in llm.calls[-1].request.system


def test_a_by_the_way_answer_settles_the_facts_extraction_held_back(
    deps: Deps, llm: ScriptedLLM
) -> None:
    from shared.app.extraction import ExtractionService
    from shared.models.memory import FactFilter

    colleague, _ = _two_thomases(deps)
    llm.add(classification(facts=True, entities=[{"name": "Thomas"}]), "Nice!")
    service = TurnService(deps)
    response = service.run("alice", request("Thomas is moving to Bern"))
    [task] = _tasks(deps)
    fact = {"text": "Thomas is moving to Bern", "type": "Travel", "about": "Thomas"}
    llm.add({"facts": [{**fact, "confidence": 0.9}], "entities": [{"name": "Thomas"}]})
    ExtractionService(deps).run(task)  # the background job: who is meant is unknown
    [held] = deps.pending.list_pending("alice", response.chat_id)
    assert held.kind == "disambiguation" and held.resolved_at is None

    service.run("alice", request("the colleague", cmid="m2", chat_id=response.chat_id))
    settled = deps.pending.get_pending("alice", held.id)
    assert settled is not None and settled.resolved_at is not None
    stored = deps.facts.list_facts("alice", FactFilter(subject_id=colleague))
    assert [f.text for f in stored] == ["Thomas is moving to Bern"]


def test_namesakes_are_told_apart_by_role_and_a_descriptor(deps: Deps, llm: ScriptedLLM) -> None:
    for city in ("Bern", "Basel"):
        lea = add_person(deps, "Lea", "friend")
        deps.contacts.update_person(lea.model_copy(update={"descriptors": {"city": city}}))
    llm.add(classification(semantic=True, entities=[{"name": "Lea"}]))
    asked = TurnService(deps).run("alice", request("What does Lea like?"))
    assert asked.interrupt is not None
    labels = sorted(o.label for o in asked.interrupt.options)
    assert labels == ["Lea (friend, Basel)", "Lea (friend, Bern)", "Someone else"]


def test_each_acting_step_is_approved_on_its_own(deps: Deps, llm: ScriptedLLM) -> None:
    plan = {
        "steps": [
            {"id": "s1", "agent": "productivity", "goal": "book the gym on Friday"},
            {"id": "s2", "agent": "productivity", "goal": "book the sauna after it"},
        ]
    }
    llm.add(classification("complex"), plan)
    service = TurnService(deps)
    first = service.run("alice", request("Book gym and sauna"))
    assert first.interrupt is not None and "gym" in first.interrupt.question
    second = service.run("alice", request("yes", cmid="m2", chat_id=first.chat_id))
    assert second.interrupt is not None and "sauna" in second.interrupt.question
    assert [job.goal for job in _jobs(deps)] == ["book the gym on Friday"]  # the approved one
    service.run("alice", request("yes", cmid="m3", chat_id=first.chat_id))
    jobs = _jobs(deps)  # each published once, with ids of the plan's turn
    assert [job.goal for job in jobs] == ["book the gym on Friday", "book the sauna after it"]
    assert [job.job_id for job in jobs] == [f"{first.turn_id}-job0", f"{first.turn_id}-job1"]


def test_a_context_cached_by_a_turn_that_raced_a_change_is_not_used(
    deps: Deps, llm: ScriptedLLM
) -> None:
    from shared.models.domain import AssistantProfile
    from shared.services.context_cache import invalidate_context

    deps.profiles.put_profile("alice", AssistantProfile(persona_name="Ada"), deps.clock.now())
    llm.add(classification(), "One.")
    service = TurnService(deps)
    chat = service.run("alice", request("First?")).chat_id
    stale = deps.cache.get(context_key("alice"))  # what a slow turn loaded before the change
    assert stale is not None
    deps.profiles.put_profile("alice", AssistantProfile(persona_name="Bo"), deps.clock.now())
    invalidate_context(deps.cache, "alice")
    deps.cache.set(context_key("alice"), stale, 3600)  # ...and writes back after it
    llm.add(classification(), "Two.")
    service.run("alice", request("Second?", cmid="m2", chat_id=chat))
    assert "You are Bo" in llm.calls[-1].request.system


def _capped(deps: Deps, cap: int) -> Deps:
    settings = deps.settings.model_copy(update={"free_reply_max_output_tokens": cap})
    return Deps(settings, **{k: v for k, v in deps.__dict__.items() if k != "settings"})


def test_a_free_reply_is_capped_and_a_reply_with_agent_results_is_not(
    deps: Deps, llm: ScriptedLLM
) -> None:
    """``FREE_REPLY_MAX_OUTPUT_TOKENS`` (the local model's settings: a short answer waits
    behind other turns' free replies, not behind agent output cut short)."""
    capped = _capped(deps, 64)
    llm.add(classification(), "It is a fine day.")
    TurnService(capped).run("alice", request("How is the day?"))
    assert llm.calls[-1].request.max_output_tokens == 64
    plan = {"steps": [{"id": "s1", "agent": "drafting", "goal": "draft a note to Bea"}]}
    llm.add(classification("complex"), plan, "Dear Bea, ...", "Here is your draft.")
    TurnService(capped).run("alice", request("Draft a note to Bea", "m2"))
    synthesis = llm.calls[-1].request
    assert "drafting: Dear Bea, ..." in synthesis.system
    assert synthesis.max_output_tokens == 512  # the request's default, as before
