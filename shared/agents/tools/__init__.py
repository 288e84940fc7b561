"""The agents' tools, one module per domain; ``shared.agents.registry`` lists them by name."""
