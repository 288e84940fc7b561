"""The served functions against docs/openapi.yaml, fuzzed by schemathesis: no server error,
and every status, content type, header and body is the one the contract documents.

Acceptance of valid and refusal of invalid input are tested case by case elsewhere
(tests/e2e/test_refusals.py); here a 413 for a schema-breaking 96 KB body or a 422 for a
well-formed but unknown time zone would be false alarms, so those two checks stay off.
"""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import pytest

from tests.e2e.conftest import Served
from tests.e2e.memory_kit import open_stores, seed

pytestmark = [pytest.mark.e2e, pytest.mark.stack]

ROOT = Path(__file__).resolve().parents[2]
FUZZER = ROOT / ".tools" / "schemathesis-venv" / "bin" / "schemathesis"
CHECKS = ",".join(
    (
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_headers_conformance",
        "response_schema_conformance",
        "unsupported_method",
    )
)

JOB_PATHS = ("/jobs/pause", "/jobs/resume", "/jobs/cancel", "/jobs/takeover")
MEMORY_PATHS = (r"^/v1/(facts|persons|pendingItems|settings|strategies|account)",)  # regexes


def fuzz(
    base_url: str, token: str, workdir: Path, *paths: str, stateful: bool = False
) -> subprocess.CompletedProcess[str]:
    command = [
        str(FUZZER), "run", str(ROOT / "docs" / "openapi.yaml"),
        "--url", base_url.rstrip("/"),
        "--header", f"Authorization: Bearer {token}",
        "--checks", CHECKS,
        "--max-examples", "25",
        "--seed", "20261122",
        # stateful: follows the contract's OpenAPI links (list -> get -> patch/delete...)
        "--phases", "examples,coverage,fuzzing" + (",stateful" if stateful else ""),
        "--no-color",
    ]  # fmt: skip
    for path in paths:
        command += ["--include-path-regex" if path.startswith("^") else "--include-path", path]
    # Its cache (.schemathesis/) goes to the test's own folder, never into the repository.
    return subprocess.run(
        command, capture_output=True, text=True, timeout=600, check=False, cwd=workdir
    )


@pytest.mark.parametrize(
    ("function", "paths"),
    [
        ("turn", ("/turn",)),
        ("resume", ("/resume", "/messages", "/chats", *JOB_PATHS)),
        ("memory", MEMORY_PATHS),
    ],
)
def test_responses_keep_the_documented_contract(
    served: Served, function: str, paths: tuple[str, ...], tmp_path: Path
) -> None:
    assert FUZZER.exists(), "scripts/bootstrap.sh installs schemathesis into .tools/"
    url = {"turn": served.turn_url, "resume": served.resume_url, "memory": served.memory_url}
    user = f"fuzz{uuid.uuid4().hex[:10]}"
    if function == "memory":
        seed_memory(user)
    token = served.token(user)
    result = fuzz(url[function], token, tmp_path, *paths, stateful=function == "memory")
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]


def seed_memory(user: str) -> None:
    """Facts, persons and pending items, so the stateful phase's links have ids to follow."""
    with open_stores() as stores:
        seed(stores, user)
