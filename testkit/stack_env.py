"""The test stack's environment: ``scripts/stack up --profile test`` writes it to
``.stack-test/env`` (or ``STACK_ENV_FILE`` names another file). Loading it before any
``Settings`` is built points every client at the same real local services."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STACK_ENV = Path(os.environ.get("STACK_ENV_FILE", ROOT / ".stack-test" / "env"))


def load_stack_env(path: Path = STACK_ENV) -> bool:
    """Put the file's variables into ``os.environ`` (what is set already wins: the Google
    clients read the emulator hosts there); False when the stack is not up."""
    if not path.exists():
        return False
    for line in path.read_text().splitlines():
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            os.environ.setdefault(key, value)
    return True


def require_stack_env(path: Path = STACK_ENV) -> None:
    """``load_stack_env``, or exit with the command that starts the stack."""
    if not load_stack_env(path):
        raise SystemExit(f"{path} is missing: run scripts/stack up --profile test first")
