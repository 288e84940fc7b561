"""Background fact extraction for one turn: the Cloud Tasks target's service.

One structured model call extracts facts, entity mentions and topics, unless the turn's
understanding tier read the message whole (``ExtractionTask.stated``: the same shape, no
model call). Either way each fact is attributed
to the user or to a person resolved with confidence >= 0.8 (or a clearly new one), never to
a guess; ambiguous ones are held pending. Conflicts with current facts supersede, reinforce
or wait for the user. Everything is written by ONE ``FactStore.apply_extraction`` call, in
one transaction with the task key, so a redelivered task writes nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Literal

from shared.deps import Deps
from shared.errors import DataRejected, ModelDeclined, ModelOutputInvalid
from shared.models.domain import ExtractionTask
from shared.models.extraction import MAX_ENTITIES, MAX_FACTS, ExtractedFact, Extraction
from shared.models.memory import ExtractionChanges, Fact, FactDraft, PendingItem
from shared.services.context_cache import invalidate_context
from shared.services.ids import extraction_task_name, summary_task_name
from shared.services.memory.attribution import attribute
from shared.services.memory.conflict_questions import ask_about_conflict
from shared.services.memory.conflicts import NEIGHBOURS, ChangePlan, Proposal, plan_changes
from shared.services.memory.drafts import Drafter, Held, derived_id, hold_conflict, hold_mention
from shared.services.memory.learning import learned_persons
from shared.services.memory.pending import PendingItems
from shared.services.memory.prompt import ExtractionPrompt, extraction_prompt, known_facts
from shared.services.memory.resolution import RESOLVED, Resolver, red_flag_facts
from shared.services.model_work import for_work
from shared.services.structured import structured_with_retry

log = logging.getLogger("extraction")

MIN_CONFIDENCE = 0.5
Status = Literal["stored", "duplicate", "erased", "settled"]


@dataclass(frozen=True)
class ExtractionOutcome:
    task_key: str
    status: Status
    stored: int = 0  # new facts and replacements written
    reinforced: int = 0
    pending: int = 0  # items held for the user
    new_persons: int = 0
    skipped: int = 0  # facts dropped: no subject, a preference unasked, an unsure health fact
    settled: int = 0  # items held for a name that the user's answer settled
    session: bool = False  # the chat's running summary was stored as session memory
    read_by: Literal["understanding", "model", ""] = ""  # "": nothing was read

    @property
    def duplicate(self) -> bool:
        return self.status == "duplicate"

    def as_body(self) -> dict[str, object]:
        return {
            "status": self.status,
            "stored": self.stored,
            "reinforced": self.reinforced,
            "pending": self.pending,
            "new_persons": self.new_persons,
            "skipped": self.skipped,
            "settled": self.settled,
            "session": self.session,
            "read_by": self.read_by,
        }


class ExtractionService:
    def __init__(self, deps: Deps) -> None:
        self._deps = deps
        self._llm = for_work(deps.llm, "extraction")  # background: the user waits for nothing

    def run(self, task: ExtractionTask, task_key: str | None = None) -> ExtractionOutcome:
        """Holding the user (``FactStore.hold_user``): an account erasure waits for the
        whole extraction, its writes to Redis and Firestore included, and one that finished
        before is seen by the first check, before any model call, read or data key."""
        with self._deps.facts.hold_user(task.user_id):
            return self._run_held(task, task_key)

    def _run_held(self, task: ExtractionTask, task_key: str | None) -> ExtractionOutcome:
        key = _task_key(task, task_key)
        status = self._deps.facts.task_status(task.user_id, key)
        answered_late = status.done and not status.erased_since(task.enqueued_at)
        if task.settles is not None and answered_late:  # the turn's extraction ran first
            return replace(self._settle(task, key), session=self._keep_summary(task))
        if status.refuses(task.enqueued_at):  # before any model call or data key
            outcome = ExtractionOutcome(key, "duplicate" if status.done else "erased")
            log.info("extraction skipped", extra={"task": key, **outcome.as_body()})
            return outcome
        session = self._keep_summary(task)
        if not task.facts:
            return ExtractionOutcome(key, "stored", session=session)
        outcome = self._extract(task, key)
        return replace(outcome, session=session)

    def _keep_summary(self, task: ExtractionTask) -> bool:
        """The chat's running summary as session memory: embedded, stored once per version
        (a redelivered or late task changes nothing)."""
        if task.summary is None:
            return False
        embedder = self._deps.embedder
        [vector] = embedder.embed([task.summary.summary])
        return self._deps.sessions.put_summary(
            task.user_id, task.summary, vector, embedder.model_name
        )

    def _extract(self, task: ExtractionTask, key: str) -> ExtractionOutcome:
        prompt = self._prompt(task)
        extraction = task.stated or self._read(prompt, task)
        held = self._held(task, key, extraction)
        if task.fallback is not None and extraction is not task.fallback and held.empty:
            # A weak model's reading that keeps nothing: what the tier was sure of instead.
            log.warning("extraction kept nothing of the model's reading: the fallback is")
            held = self._held(task, key, task.fallback)
        try:
            return self._apply(task, key, prompt, held)
        except DataRejected:
            # A fact closed meanwhile (the user's edit, a parallel task): plan once more.
            log.warning("extraction refused, planning again", extra={"task": key})
            return self._apply(task, key, prompt, held)

    def _held(self, task: ExtractionTask, key: str, extraction: Extraction) -> Held:
        facts = [f for f in extraction.facts if _kept(f, task.has_preferences)]
        attributed = attribute(facts, extraction.entities, self._resolver(task, key))
        held = Drafter(task, key, self._deps.embedder).draft(attributed)
        held.skipped += len(extraction.facts) - len(facts)
        held.learned = learned_persons(attributed, extraction.entities)
        return held

    def _read(self, prompt: ExtractionPrompt, task: ExtractionTask) -> Extraction:
        """The model's reading; when it breaks its schema, what the tier was sure of
        (``ExtractionTask.fallback``), if anything: a weak model loses less. With
        ``EXTRACTION_READER=understanding`` only that, and no model call."""
        if self._deps.settings.extraction_reader == "understanding":
            return _tier_reading(task)
        try:
            return structured_with_retry(self._llm, prompt.request, Extraction)[0]
        except (ModelOutputInvalid, ModelDeclined):
            if task.fallback is None:
                raise
            log.warning("extraction output invalid: the tier's fallback is stored")
            return task.fallback

    def _settle(self, task: ExtractionTask, key: str) -> ExtractionOutcome:
        """Settle what the turn's extraction held for the answered name, as the user chose."""
        chosen = next(e for e in reversed(task.resolved_entities) if e.mention == task.settles)
        settled = PendingItems(self._deps).settle_mention(task.user_id, task.chat_id, chosen)
        outcome = ExtractionOutcome(key, "settled", settled=settled)
        log.info("extraction answer", extra={"task": key, **outcome.as_body()})
        return outcome

    def _prompt(self, task: ExtractionTask) -> ExtractionPrompt:
        deps, user = self._deps, task.user_id
        names: dict[str | None, str] = {None: "user"}
        for entity in task.resolved_entities:
            if entity.person_id and entity.confidence >= RESOLVED:
                person = deps.contacts.get_person(user, entity.person_id)
                if person is not None:
                    names[person.id] = person.display_name
        current = deps.facts.current_facts(user, list(names))
        return extraction_prompt(task.text, known_facts(current), names, task.has_preferences)

    def _resolver(self, task: ExtractionTask, key: str) -> Resolver:
        deps, user = self._deps, task.user_id

        def new_id(profile: str) -> str:
            return derived_id(user, key, "person", profile)

        return Resolver(
            user, deps.contacts, deps.embedder, self._llm, red_flag_facts(deps.facts, user),
            task.resolved_entities, task.text, new_id,
        )  # fmt: skip

    def _apply(
        self, task: ExtractionTask, key: str, prompt: ExtractionPrompt, held: Held
    ) -> ExtractionOutcome:
        deps, user = self._deps, task.user_id
        now = deps.clock.now()
        # Facts date from the message, not from when a queue ran its task: two messages'
        # tasks may run in either order, and the newer said wins (``plan_changes``).
        said = min(now, task.enqueued_at)
        subjects = list(dict.fromkeys(d.draft.subject_entity_id for d in held.attributed))
        current = deps.facts.current_facts(user, subjects) if subjects else []
        plan = plan_changes(
            [Proposal(d.draft, _replaced(prompt, d.replaces)) for d in held.attributed],
            current,
            lambda draft: deps.facts.nearest(
                user, draft.embedding, draft.embedding_model, NEIGHBOURS
            ),
            lambda draft, old: hold_conflict(task, key, draft, old, now),
            said_at=said,
        )
        pending = [hold_mention(task, key, item, now) for item in held.mentions]
        changes = _changes(plan, held, pending)
        if changes != ExtractionChanges():
            # Before the commit too: a turn between the commit and the invalidation below
            # would read the cached context without what was just stored (a new person).
            invalidate_context(deps.cache, user)
        applied = deps.facts.apply_extraction(key, user, changes, said, task.enqueued_at)
        if not applied and task.settles is not None:  # the turn's extraction won the race
            return self._settle(task, key)
        if applied and changes != ExtractionChanges():
            invalidate_context(deps.cache, user)
        if applied and plan.conflicts:
            ask_about_conflict(deps, task, plan.conflicts)
        by_tier = task.stated is not None or deps.settings.extraction_reader == "understanding"
        outcome = _outcome(key, applied, changes, held.skipped + len(plan.outdated), by_tier)
        log.info("extraction done", extra={"task": key, **outcome.as_body()})
        return outcome


def _tier_reading(task: ExtractionTask) -> Extraction:
    """What the tier was sure of, and the sentences as said (the same people named)."""
    parts = [part for part in (task.fallback, task.said) if part is not None]
    entities = {e.name: e for part in parts for e in part.entities}
    return Extraction(
        facts=[fact for part in parts for fact in part.facts][:MAX_FACTS],
        entities=list(entities.values())[:MAX_ENTITIES],
    )


def _kept(fact: ExtractedFact, has_preferences: bool) -> bool:
    """Not a preference nobody asked for, nor a fact the reader itself is less than even sure
    the message states (the prompt asks only for what is stated as true)."""
    wanted = has_preferences or fact.type != "Preference"
    return wanted and fact.confidence >= MIN_CONFIDENCE


def _task_key(task: ExtractionTask, queued_as: str | None) -> str:
    """An answer's task writes under the key of the turn's extraction: one of the two does."""
    if task.settles is not None:
        return extraction_task_name(task.turn_id)
    return queued_as or (extraction_task_name if task.facts else summary_task_name)(task.turn_id)


def _replaced(prompt: ExtractionPrompt, ref: str | None) -> Fact | None:
    return prompt.refs.get(ref.strip().upper()) if ref else None


def _changes(plan: ChangePlan, held: Held, pending: list[PendingItem]) -> ExtractionChanges:
    drafts: list[FactDraft] = [*plan.new_facts, *(s.replacement for s in plan.supersessions)]
    subjects = {d.subject_entity_id for d in drafts}
    return ExtractionChanges(
        new_persons=[p for p in held.new_persons if p.id in subjects],  # none without a fact
        learned_persons=held.learned,
        new_facts=plan.new_facts,
        supersessions=plan.supersessions,
        reinforcements=plan.reinforcements,
        pending=[*pending, *plan.conflicts],
    )


def _outcome(
    key: str, applied: bool, changes: ExtractionChanges, skipped: int, stated: bool
) -> ExtractionOutcome:
    if not applied:
        return ExtractionOutcome(key, "duplicate")
    return ExtractionOutcome(
        key,
        "stored",
        stored=len(changes.new_facts) + len(changes.supersessions),
        reinforced=len(changes.reinforcements),
        pending=len(changes.pending),
        new_persons=len(changes.new_persons),
        skipped=skipped,
        read_by="understanding" if stated else "model",
    )
