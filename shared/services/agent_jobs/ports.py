"""The slices of the composition root the job runner reads, so that it never imports
``shared.deps``: the application layer hands in ``Deps``, which satisfies each structurally,
and unit tests may hand in plain fakes."""

from __future__ import annotations

from typing import Protocol

from shared.agents.spec import AgentPorts
from shared.config import Settings
from shared.ports import (
    LLM,
    Clock,
    ConversationStore,
    JobStore,
    OperatorAlerts,
    TaskQueue,
    TrustStore,
)


class JobDocumentPorts(Protocol):
    """The job document under its lease (``claims``)."""

    @property
    def settings(self) -> Settings: ...
    @property
    def clock(self) -> Clock: ...
    @property
    def jobs(self) -> JobStore: ...


class ChatPorts(Protocol):
    """Messages posted to the job's chat (``reports``)."""

    @property
    def clock(self) -> Clock: ...
    @property
    def conversations(self) -> ConversationStore: ...


class QuestionPorts(ChatPorts, Protocol):
    """A question on the chat and its timeout task (``interrupts``)."""

    @property
    def settings(self) -> Settings: ...
    @property
    def tasks(self) -> TaskQueue: ...


class SupervisorPorts(JobDocumentPorts, QuestionPorts, AgentPorts, Protocol):
    """Everything a run of a job touches: the above, the agents' tools, the model, the
    user's trust (approvals) and the operators' alerts (escalations)."""

    @property
    def llm(self) -> LLM: ...
    @property
    def trust(self) -> TrustStore: ...
    @property
    def operator_alerts(self) -> OperatorAlerts: ...
