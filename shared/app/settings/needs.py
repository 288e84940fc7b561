"""``SettingsPorts``: what the settings API reads, the fact system's ports and the
execution memory (``shared.deps.Deps`` satisfies it)."""

from __future__ import annotations

from typing import Protocol

from shared.app.settings.calendar_feed import CalendarFeedPorts
from shared.ports import AgentDataStore, ExecutionMemory, NotificationStore
from shared.rest.paging import PageTokens
from shared.services.memory.needs import MemoryPorts


class SettingsPorts(MemoryPorts, CalendarFeedPorts, Protocol):
    @property
    def executions(self) -> ExecutionMemory:
        """How earlier jobs were planned and went (``/settings/strategies/*``, export)."""
        ...

    @property
    def notifications(self) -> NotificationStore:
        """The notification preferences (``/settings/notifications``)."""
        ...

    @property
    def page_tokens(self) -> PageTokens:
        """Signs and reads the lists' page tokens (``shared.rest.paging``)."""
        ...

    @property
    def agent_data(self) -> AgentDataStore:
        """The records the agents keep: the client's views of events, notes, expenses."""
        ...
