"""Where the runner finds agents and tools: the registry in production, scripted ones in
tests (``Catalog`` is all the runner knows of them)."""

from __future__ import annotations

from typing import Protocol

from shared.agents.spec import AgentPorts, AgentSpec, Tool


class Catalog(Protocol):
    def agent(self, name: str) -> AgentSpec:
        """The agent of this name; unknown names get the default agent."""
        ...

    def tools(self, spec: AgentSpec, ports: AgentPorts) -> tuple[Tool, ...]:
        """The agent's tools that can run with these ports."""
        ...

    def helpers(self) -> tuple[str, ...]:
        """Agents a subtask may recruit."""
        ...


class RegistryCatalog:
    """``shared.agents.registry`` (imported on first use: it loads every tool)."""

    def agent(self, name: str) -> AgentSpec:
        from shared.agents import registry

        return registry.resolve(name)

    def tools(self, spec: AgentSpec, ports: AgentPorts) -> tuple[Tool, ...]:
        from shared.agents import registry

        return registry.offered_tools(spec, ports)

    def helpers(self) -> tuple[str, ...]:
        from shared.agents import registry

        return tuple(
            name
            for name, spec in registry.AGENTS.items()
            if not spec.inline and not spec.deterministic and spec.plannable
        )
