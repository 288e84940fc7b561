"""Turn state: small and namespaced. Durable data lives in the stores, not here.

Eight top-level keys. Each namespace merges field by field (``merge``): a node returns only
the fields it sets (``{"memory": MemoryState(semantic=[...])}``), so parallel branches and
stage subgraphs never overwrite each other. ``trace`` collects one entry per node run.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from shared.models.domain import (
    AssistantProfile,
    ExtractionTask,
    Message,
    NodeRun,
    PendingQuestion,
    ToolCall,
    UnderstandingUse,
)
from shared.models.extraction import Extraction
from shared.models.history import PlanAdvice
from shared.models.wire import Interrupt, ReplyKind

Route = Literal["greeting", "simple", "complex"]
S = TypeVar("S", bound=BaseModel)


def merge(old: S | None, new: S | None) -> S | None:
    """Take the fields ``new`` set explicitly; keep the rest of ``old``."""
    if old is None or new is None:
        return new if new is not None else old
    return old.model_copy(update={name: getattr(new, name) for name in new.model_fields_set})


TRACE_RESET = "__new_turn__"  # a resumed thread starts the trace of a new turn


def extend_trace(old: list[NodeRun], new: list[NodeRun]) -> list[NodeRun]:
    if new and new[0].node == TRACE_RESET:
        return list(new[1:])
    # A stage subgraph hands back its whole trace, which starts with the parent's.
    if len(new) >= len(old) and new[: len(old)] == old:
        return list(new)
    return [*old, *new]


class _State(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SummaryUpdate(_State):
    text: str
    until: datetime  # the newest message the summary covers
    since: datetime | None = None  # the oldest message this summarization folded in


class Conversation(_State):
    user_message: str = ""  # what the user typed in this turn
    message_id: str = ""
    focus: str = ""  # what this turn answers: the message, or the question it resumed
    focus_message_id: str = ""
    focus_turn_id: str = ""
    history: list[Message] = Field(default_factory=list)
    history_loaded: bool = False  # carried over by a resumed thread: no need to read it
    summary: str = ""
    summarized_until: datetime | None = None  # history starts after this
    needs_summary: bool = False  # history over the thresholds (set by session_init)
    new_summary: SummaryUpdate | None = None
    language: str = "en"
    profile: AssistantProfile = Field(default_factory=AssistantProfile)
    profile_facts: list[str] = Field(default_factory=list)  # preloaded: the user's own facts
    known_names: list[str] = Field(default_factory=list)  # preloaded: the user's people


class EntityRef(_State):
    name: str
    role: str | None = None


class PlanStep(_State):
    id: str
    agent: str
    inputs: dict[str, str] = Field(default_factory=dict)
    depends_on: list[str] = Field(default_factory=list)
    call: ToolCall | None = None  # decided before the agent runs (an explicit command)


Decider = Literal["rule", "understanding", "model"]


class Intent(_State):
    route: Route = "simple"
    has_extractable_facts: bool = False
    has_preferences: bool = False
    needs_semantic_retrieval: bool = False
    needs_temporal_retrieval: bool = False
    entities: list[EntityRef] = Field(default_factory=list)
    temporal_references: list[str] = Field(default_factory=list)
    fast_path: bool = False  # decided by a rule or the understanding tier: no model call
    decided_by: Decider = "model"
    # What the understanding tier (shared/graph/understood.py) settled: its label when it
    # decided the route, the plan of an explicit command (the planner calls no model), the
    # facts it read whole (extraction calls no model).
    label: str | None = None
    planned: list[PlanStep] = Field(default_factory=list)
    stated: Extraction | None = None
    fallback: Extraction | None = None  # not read whole: what is certain all the same
    said: Extraction | None = None  # not read whole: its plain sentences, as said
    about_roles: list[str] = Field(default_factory=list)  # a question about "my family"
    tier: UnderstandingUse | None = None  # None: the tier did not read the message


class Candidate(_State):
    person_id: str
    label: str  # display name with role, for the question's options


class Resolved(_State):
    mention: str
    person_id: str | None = None  # None: the user, or a new person (``new_person``)
    display_name: str = ""
    confidence: float = 1.0
    new_person: bool = False


class Ambiguity(_State):
    mention: str
    candidates: list[Candidate]


class FactView(_State):
    id: str
    subject_id: str | None  # None: the user
    text: str
    time_anchor: datetime | None = None
    stated: datetime | None = None  # when it was first said: shown for "when" questions
    score: float = 0.0


class SessionView(_State):
    """An earlier conversation's running summary that retrieval brought back."""

    chat_id: str
    summary: str
    started_at: datetime
    covers_until: datetime


EARLIER = "earlier conversations"  # the facts_by_entity key of the sessions' summaries


class MemoryState(_State):
    resolved: list[Resolved] = Field(default_factory=list)
    ambiguous: list[Ambiguity] = Field(default_factory=list)
    semantic: list[FactView] = Field(default_factory=list)
    temporal: list[FactView] = Field(default_factory=list)
    sessions: list[SessionView] = Field(default_factory=list)
    recalled: list[str] = Field(default_factory=list)  # what retrieval chose, best first
    facts_by_entity: dict[str, list[str]] = Field(default_factory=dict)  # "user" or a name
    subjects: dict[str, str] = Field(default_factory=dict)  # person id -> name, of the facts
    roles: dict[str, str] = Field(default_factory=dict)  # person id -> role, of a group asked
    extraction: ExtractionTask | None = None  # enqueued by message_persist
    extraction_deferred: bool = False  # waits for the answer to a blocking question
    unavailable: bool = False  # PostgreSQL could not be read: answered without memory


class Disambiguation(_State):
    blocking: Ambiguity | None = None  # ask first, answer after
    followup: Ambiguity | None = None  # answer now, ask "by the way" at the end


class StepResult(_State):
    step_id: str
    # published: by this turn; sent: by an earlier turn of the same plan (before an approval)
    status: Literal["done", "published", "sent", "refused", "skipped"]
    output: str = ""


class Planning(_State):
    steps: list[PlanStep] = Field(default_factory=list)
    results: list[StepResult] = Field(default_factory=list)
    approved: list[str] = Field(default_factory=list)  # step ids the user approved
    advice: PlanAdvice | None = None  # where the plan came from (``plan_history``)


class Hitl(_State):
    pending: PendingQuestion | None = None  # loaded with the chat
    outcome: Literal["none", "answered", "escaped", "kept"] = "none"
    option_id: str | None = None  # the option the answer chose
    ask: PendingQuestion | None = None  # a new question this turn leaves pending
    released: ExtractionTask | None = None  # an escaped question's deferred extraction
    timed_out: bool = False  # the answer is the approval timeout's automatic rejection


class ResponseState(_State):
    text: str = ""
    kind: ReplyKind = "text"
    interrupt: Interrupt | None = None
    quoted: list[str] = Field(default_factory=list)  # ids of stored facts the reply quotes


class TurnState(_State):
    conversation: Annotated[Conversation, merge] = Field(default_factory=Conversation)
    intent: Annotated[Intent | None, merge] = None
    memory: Annotated[MemoryState, merge] = Field(default_factory=MemoryState)
    disambiguation: Annotated[Disambiguation, merge] = Field(default_factory=Disambiguation)
    planning: Annotated[Planning, merge] = Field(default_factory=Planning)
    hitl: Annotated[Hitl, merge] = Field(default_factory=Hitl)
    response: Annotated[ResponseState, merge] = Field(default_factory=ResponseState)
    trace: Annotated[list[NodeRun], extend_trace] = Field(default_factory=list)

    @property
    def nodes_run(self) -> list[str]:
        return [run.node for run in self.trace]


class TurnInput(_State):
    """What a thread waiting in ``await_answer`` is resumed with: the next turn.

    ``option_id``: chosen through ``functions/resume`` (or the timeout); None: the turn's
    message may answer the question, the HITL handler decides."""

    conversation: Conversation
    option_id: str | None = None
    timed_out: bool = False
    chat_unchanged: bool = False  # nothing was added to the chat since the question


class ResumePoint(_State):
    """Where a turn continues once its question is answered (``PendingQuestion.resume_at``)."""

    focus: str
    focus_message_id: str
    focus_turn_id: str
    intent: Intent
    mention: str | None = None  # disambiguation: the name asked about
    resolved: list[Resolved] = Field(default_factory=list)
    extraction: ExtractionTask | None = None  # deferred until the person is known
    steps: list[PlanStep] = Field(default_factory=list)  # approval: the plan so far
    results: list[StepResult] = Field(default_factory=list)
    step_id: str | None = None  # approval: the step waiting for it
    advice: PlanAdvice | None = None  # approval: where the plan came from
