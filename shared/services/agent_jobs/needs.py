"""The slices of the composition root the job runner reads, so that it never imports
``shared.deps``: the application layer hands in ``Deps``, which satisfies each structurally,
and unit tests may hand in plain fakes."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from shared.agents.spec import AgentPorts
from shared.config import Settings
from shared.ports import (
    LLM,
    AgentDataStore,
    Clock,
    ConversationStore,
    EmailNotices,
    Embedder,
    FactStore,
    JobStore,
    OperatorAlerts,
    Outbox,
    ProfileStore,
    ReminderBook,
    TaskQueue,
    TrustStore,
    WebSearch,
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


class JobToolPorts:
    """What a job's tools write through: the stores of ``ports``, with the writes of the
    agents' records and of sent mail fenced for work created at ``since`` (the job), so a
    job running across an erasure of its account writes nothing after it."""

    def __init__(self, ports: AgentPorts, since: datetime) -> None:
        self._ports = ports
        self.agent_data: AgentDataStore = ports.agent_data.fenced(since)
        self.outbox: Outbox = ports.outbox.fenced(since)

    @property
    def clock(self) -> Clock:
        return self._ports.clock

    @property
    def facts(self) -> FactStore:
        return self._ports.facts

    @property
    def embedder(self) -> Embedder:
        return self._ports.embedder

    @property
    def profiles(self) -> ProfileStore:
        return self._ports.profiles

    @property
    def email_notices(self) -> EmailNotices:
        return self._ports.email_notices

    @property
    def web_search(self) -> WebSearch | None:
        return self._ports.web_search

    @property
    def reminder_book(self) -> ReminderBook:
        return self._ports.reminder_book
