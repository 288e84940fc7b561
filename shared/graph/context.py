"""Run-scoped dependencies, handed to nodes through LangGraph's runtime context.

``ports`` is the composition root itself (``Deps``), typed by what the graph may use: each
store is still built on first use, so a greeting never opens a PostgreSQL connection.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from shared.agents.spec import AgentPorts
from shared.config import Settings
from shared.graph.metering import Meter, MeteredLLM
from shared.graph.speculation import SpeculationSlot
from shared.ports import ConversationStore, DecompositionAdvisor, KeyRing, Publisher, TaskQueue
from shared.services.memory.needs import MemoryPorts

if TYPE_CHECKING:  # the tier's modules load with its first use, not with the graph
    from shared.understanding import UnderstandingTier


class TurnPorts(MemoryPorts, AgentPorts, Protocol):
    """What the graph may use: the memory ports (answers resolve held facts), the agents'
    stores (a request that only reads is read in the turn), the advisor on past executions,
    and the rest."""

    @property
    def settings(self) -> Settings: ...
    @property
    def conversations(self) -> ConversationStore: ...
    @property
    def keyring(self) -> KeyRing: ...
    @property
    def tasks(self) -> TaskQueue: ...
    @property
    def publisher(self) -> Publisher: ...
    @property
    def advisor(self) -> DecompositionAdvisor:
        """What the user's past executions suggest for a plan (``plan_history``)."""
        ...

    @property
    def understanding(self) -> UnderstandingTier | None: ...


@dataclass(frozen=True)
class RunSignals:
    """Set from outside the run (its heartbeat): ``stop`` the reply (an interrupting turn
    waits, or the chat was lost); ``lost``: the chat is no longer this turn's to release."""

    stop: threading.Event = field(default_factory=threading.Event)
    lost: threading.Event = field(default_factory=threading.Event)


@dataclass(frozen=True)
class TurnContext:
    user_id: str
    chat_id: str
    turn_id: str
    client_message_id: str
    chat_is_new: bool
    llm: MeteredLLM  # every call counts against the turn's budget
    meter: Meter
    ports: TurnPorts
    trace: str | None = None  # the request's trace header, passed on to queued work
    thread_id: str = ""  # the graph thread this run is on (its checkpoints)
    resumed: bool = False  # this run continues a waiting interrupt it claimed
    started: float = field(default_factory=time.perf_counter)
    signals: RunSignals = field(default_factory=RunSignals)
    finish_in_commit: bool = False  # no checkpoint follows: the completion ends the run
    # Set by the completion when its commit also released the lease and the chat.
    finished: threading.Event = field(default_factory=threading.Event)
    first_turn: bool = False  # the chat has no message yet (new, or created empty)
    title: str | None = None  # the completion names the untitled chat so
    speculation: SpeculationSlot = field(default_factory=SpeculationSlot)  # reply started early
