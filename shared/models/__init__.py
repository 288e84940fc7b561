"""Pydantic wire and domain models (``extra="forbid"`` everywhere)."""
