"""Domain records shared by services, adapters and queue payloads.

A class the turn state holds stays in this module: a checkpoint names each class's module
(``shared/graph/serde.py``), so moving one would orphan the checkpoints already stored.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field, model_validator

from shared.models.agent_data import (
    MAX_SOURCES,
    MAX_SUGGESTIONS_HTML,
    EmailAddress,
    WebSource,
)
from shared.models.base import Strict
from shared.models.extraction import Extraction
from shared.models.history import PlanAdvice
from shared.models.memory import SessionNote
from shared.models.money import Currency
from shared.models.wire import Interrupt, MessageKind, TurnResponse

Role = Literal["user", "assistant", "system"]


class PendingQuestion(Strict):
    """A question a turn asks, kept in the turn graph's checkpoint (``TurnState.hitl``).

    ``resume_at`` is the graph's own record of where to continue (the original message,
    its intent, the plan): validated by the graph when read back.
    """

    interrupt: Interrupt
    blocking: bool  # False: a "by the way" question; the turn was answered anyway
    turn_id: str  # the turn that asked
    asked_at: datetime
    resume_at: dict[str, Any] = Field(default_factory=dict)


ControlStatus = Literal["idle", "pending", "resuming"]
InterruptTarget = Literal["turn", "job", "pending_item"]


class HitlControl(Strict):
    """The chat's control record: the authority on whether an interrupt is pending.

    At most one interrupt per chat. ``pending``: waiting for the answer; ``resuming``: an
    answer claimed it (``owner``, until ``lease_until``; an expired lease makes it pending
    again, so a crashed run never locks the chat). What the answer continues is
    ``target``: the turn graph's checkpoint (``thread_id`` + ``checkpoint_id``), an agent
    job (``thread_id`` = job id) or a fact-system pending item (``thread_id`` = its id).
    """

    status: ControlStatus = "idle"
    interrupt: Interrupt | None = None
    blocking: bool = True  # False: a "by the way" question (not on the wire response)
    target: InterruptTarget = "turn"
    thread_id: str | None = None
    checkpoint_id: str | None = None
    asked_at: datetime | None = None
    timeout_at: datetime | None = None  # approvals: auto-rejected then
    message_count: int | None = None  # the chat's messages once the question was stored
    owner: str | None = None  # the turn id that claimed it
    lease_until: datetime | None = None

    def waiting(self, now: datetime) -> bool:
        """Answerable now: pending, or claimed by a run whose lease ran out."""
        if self.interrupt is None:
            return False
        if self.status == "pending":
            return True
        return self.status == "resuming" and (self.lease_until is None or self.lease_until <= now)


class Waiting(Strict):
    """A turn waiting for its chat (``ChatRun.queue``), until ``until`` at the latest."""

    turn_id: str
    owner: str  # the request (attempt) that waits
    arrival: int
    until: datetime


class ChatRun(Strict):
    """One turn at a time per chat, the others wait in arrival order (double texting).

    The holder (``turn_id``, the request ``owner``) keeps ``lease_until`` ahead while it runs;
    a crashed holder's lease runs out and the next waiter goes. ``stop``: a turn sent with the
    ``interrupt`` strategy asks the holder to stop its reply. ``arrivals`` numbers the claims
    of the chat in the order they reached it."""

    turn_id: str | None = None
    owner: str | None = None
    lease_until: datetime | None = None
    stop: bool = False
    queue: list[Waiting] = Field(default_factory=list)
    arrivals: int = 0

    def held_by_other(self, owner: str, now: datetime) -> bool:
        alive = self.lease_until is not None and self.lease_until > now
        return self.turn_id is not None and alive and self.owner != owner

    def ahead_of(self, owner: str, now: datetime) -> list[Waiting]:
        """Live waiters before ``owner`` (all of them if it does not wait)."""
        ahead: list[Waiting] = []
        for waiting in self.queue:
            if waiting.owner == owner:
                return ahead
            if waiting.until > now:
                ahead.append(waiting)
        return ahead

    def free_for(self, owner: str, now: datetime) -> bool:
        return not self.held_by_other(owner, now) and not self.ahead_of(owner, now)

    def waits(self, owner: str) -> bool:
        return any(waiting.owner == owner for waiting in self.queue)

    def released(self) -> ChatRun:
        """No holder; the queue as it is."""
        return self.model_copy(
            update={"turn_id": None, "owner": None, "lease_until": None, "stop": False}
        )

    def without(self, owner: str, now: datetime) -> ChatRun:
        """The queue without ``owner`` and without waiters that gave up long ago."""
        queue = [w for w in self.queue if w.owner != owner and w.until > now]
        return self.model_copy(update={"queue": queue})


class Chat(Strict):
    id: str
    user_id: str
    created_at: datetime
    updated_at: datetime
    title: str = ""  # the user's, or taken from the first message (shared.conversation.titles)
    summary: str = ""  # running summary of the messages up to ``summarized_until``
    summarized_until: datetime | None = None
    control: HitlControl = Field(default_factory=HitlControl)
    message_count: int = 0
    outbox: list[str] = Field(default_factory=list)  # turns (client ids) with unsent handoffs
    run: ChatRun = Field(default_factory=ChatRun)


class Handoff(Strict):
    """Background work a turn hands off: a Cloud Task (``queue``, ``url``) or a Pub/Sub
    message (``topic``). ``name`` (task name, job id) makes a second send harmless: Cloud
    Tasks refuses the name, the agents function claims the job once. Kept in the turn
    record's outbox while it could not be sent."""

    kind: Literal["task", "message"]
    name: str
    queue: str = ""  # a task's queue, or a message's topic
    url: str = ""
    body: str
    attributes: dict[str, str] = Field(default_factory=dict)  # task headers, or attributes
    schedule_time: datetime | None = None


class ChatUpdate(Strict):
    """What a turn changes on its chat, written in the same commit as its messages."""

    summary: str | None = None  # set together with summarized_until
    summarized_until: datetime | None = None
    control: HitlControl | None = None  # the chat's next control record
    title: str | None = None  # the first turn names an untitled chat


class NodeRun(Strict):
    node: str
    ms: float
    input_tokens: int = 0
    output_tokens: int = 0


class UnderstandingUse(Strict):
    """What the deterministic understanding tier settled in a turn (True) and what it left
    to the model (False); ``label`` is its route label when it decided the route."""

    label: str | None = None
    route: bool = False
    guessed: bool = False  # the route is the nearest label's, below the thresholds
    people: bool = False
    facts: bool = False  # the extraction task stores them without a model call
    plan: bool = False  # the planner made no model call
    answer: bool = False  # the reply quotes stored facts (or the model was given them)


class TurnMetadata(Strict):
    """What a turn did, kept on its turn record: which nodes ran, tokens, cost, timings."""

    outcome: Literal["ok", "failed", "interrupted"] = "ok"
    error_code: str | None = None
    failed_node: str | None = None
    route: str | None = None
    fast_path: bool = False
    # Who decided the intent: the greeting rule, the understanding tier, or the model; and
    # part by part what the tier settled (None: it did not read the message).
    decided_by: Literal["rule", "understanding", "model"] | None = None
    understanding: UnderstandingUse | None = None
    flags: dict[str, bool] = Field(default_factory=dict)
    nodes: list[NodeRun] = Field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    # Of those, what streams stopped before their end cost (a dropped speculative reply).
    stopped_tokens: int = 0
    cost_usd: float = 0.0
    graph_ms: float = 0.0
    extraction_enqueued: bool = False
    jobs_published: int = 0
    handoffs_unsent: int = 0  # left in the turn's outbox: a queue was down
    interrupt_kind: str | None = None
    thread_id: str | None = None  # the graph thread (checkpoints) the turn ran on
    # What retrieval put before the model, best first: fact ids, "session:<chat id>" for a
    # session summary (ids only, never text; the evaluation scores recall@k from them).
    retrieved: list[str] = Field(default_factory=list)
    plan_advice: PlanAdvice | None = None  # what past executions contributed to the plan


class TurnRecord(Strict):
    """A turn as recorded (``ConversationStore.get_turn``)."""

    status: Literal["queued", "running", "done", "failed"]
    chat_id: str
    turn_id: str
    response: TurnResponse | None = None
    metadata: TurnMetadata | None = None
    arrival: int | None = None  # its number among its chat's claims


class Message(Strict):
    id: str
    role: Role
    text: str
    created_at: datetime
    turn_id: str | None = None
    # A reply grounded in web search: its sources, and Google's search suggestions widget
    sources: list[WebSource] = Field(default_factory=list, max_length=MAX_SOURCES)
    search_suggestions_html: str = Field(default="", max_length=MAX_SUGGESTIONS_HTML)
    # What it is, set by its writer (messages stored before it was kept read as text), and
    # the interrupt a question asked: clients tie the log line to the card by it.
    kind: MessageKind = "text"
    question_id: str | None = None

    @model_validator(mode="after")
    def _a_question_names_its_interrupt(self) -> Message:
        if (self.kind == "question") != (self.question_id is not None):
            raise ValueError("a question message names the interrupt it asked, and only it")
        return self


ClaimStatus = Literal[
    "new", "done", "running", "not_pending", "bad_answer", "no_chat", "queued", "busy", "erased"
]


class TurnClaim(Strict):
    """Outcome of claiming a ``client_message_id``: run it, replay it, or wait for it.

    ``not_pending``: a resume found no matching interrupt waiting; ``bad_answer``: its
    answer picks none of the options; ``no_chat``: the chat must exist and does not
    (nothing is written in these three cases);
    ``queued``: another turn holds the chat, this one waits in its queue (``ChatRun``);
    ``busy``: another turn holds the chat and the request asked not to wait (nothing written);
    ``resumed``: the claim also took the chat's waiting interrupt (``chat.control`` as it
    was before), so this turn continues it."""

    status: ClaimStatus
    turn_id: str
    chat_id: str
    response: TurnResponse | None = None
    chat: Chat | None = None  # as read in the claim's transaction
    resumed: bool = False
    option_id: str | None = None  # the option the resume's answer picked
    arrival: int | None = None  # its number among the chat's claims (``ChatRun.arrivals``)


class ResolvedEntity(Strict):
    mention: str
    person_id: str | None = None  # None: the user themself (unless ``new_person``)
    confidence: float = Field(ge=0.0, le=1.0)
    new_person: bool = False  # the user said it is someone not yet known


class AssistantProfile(Strict):
    """The user's assistant: persona, presentation rules, zone, currency. Firestore, one
    document."""

    persona_name: str = Field(default="Assistant", min_length=1, max_length=40)
    tone: str = Field(default="warm and concise", max_length=200)
    language: str | None = Field(default=None, pattern=r"^[a-z]{2}$")  # None: the user's
    timezone: str = Field(default="UTC", max_length=64)  # IANA name, checked on update
    presentation_rules: list[str] = Field(default_factory=list, max_length=10)
    privacy_mode: bool = False  # hides facts of high sensitivity from replies
    # ISO 4217: an amount the user states without one ("I spent 40 on groceries") is in it.
    currency: Currency | None = None
    # The user's own address: Reply-To of mail sent on their behalf; None: replies go to
    # the product's address (shared.config mail_from_address), which reads none of them.
    email: EmailAddress | None = None
    updated_at: datetime | None = None


class ExtractionTask(Strict):
    """Payload of the Cloud Task the turn enqueues for ``functions/extraction``."""

    user_id: str
    chat_id: str
    turn_id: str
    message_id: str
    text: str
    resolved_entities: list[ResolvedEntity] = Field(default_factory=list)
    has_preferences: bool = False
    timezone: str = "UTC"  # IANA name: "next Friday" is resolved in the user's zone
    avatar_id: str | None = None
    enqueued_at: datetime
    facts: bool = True  # False: only the session summary below (named summarize-<turn>)
    summary: SessionNote | None = None  # the chat's new running summary, to embed and keep
    # What the understanding tier read whole in the turn: stored without a model call.
    stated: Extraction | None = None
    # What it was sure of in a message it did not read whole ("My colleague Anna is off
    # sick": Anna is the user's colleague): stored when the extraction model fails.
    fallback: Extraction | None = None
    # Its plain sentences as said, in the third person: with ``EXTRACTION_READER=
    # understanding``, stored with the fallback instead of a model's reading.
    said: Extraction | None = None
    # The user's answer to this turn's "by the way, which X?": the mention it settles (the
    # chosen person is among ``resolved_entities``). It may come before the turn's own
    # extraction ran: then this task extracts with the answer, else it settles what was held.
    settles: str | None = Field(default=None, max_length=200)

    @model_validator(mode="after")
    def _answer_names_its_person(self) -> ExtractionTask:
        mentions = {e.mention for e in self.resolved_entities if e.person_id or e.new_person}
        if self.settles is not None and self.settles not in mentions:
            raise ValueError("settles names no chosen person among resolved_entities")
        return self


class OpenArg(Strict):
    """An argument the user picks before the call may run (the currency of "I spent 42.50
    on groceries" when none is known): the call is complete with any one of ``options``."""

    name: str = Field(min_length=1, max_length=40)
    options: list[str] = Field(min_length=1, max_length=6)


class ToolCall(Strict):
    """A tool call decided before any agent step: the understanding tier read an explicit
    command ("remind me to ... at ..."), so the step's agent makes this call without a model.
    ``args`` are what the tool's schema accepts (checked again when it runs); ``approved``:
    the user approved this very call in the turn, so the job does not ask again; ``open``:
    an argument still to be chosen by the user (the call cannot run until it is)."""

    tool: str = Field(min_length=1, max_length=60)
    args: dict[str, str] = Field(default_factory=dict, max_length=20)
    approved: bool = False
    open: OpenArg | None = None

    def completions(self) -> list[ToolCall]:
        """The call with its open argument set to each option (itself when none is open)."""
        if self.open is None:
            return [self]
        return [self.completed(option) for option in self.open.options]

    def completed(self, value: str) -> ToolCall:
        if self.open is None or value not in self.open.options:
            raise ValueError(f"{value!r} is not an option of this call")
        args = {**self.args, self.open.name: value}
        return self.model_copy(update={"args": args, "open": None})
