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

MEMORY_PATHS = (
    "/facts/list", "/facts/search", "/facts/get", "/facts/edit", "/facts/delete",
    "/persons/list", "/persons/update", "/persons/merge", "/persons/split", "/persons/delete",
    "/pending/list", "/pending/resolve", "/settings/assistant/get",
    "/settings/assistant/update", "/settings/hitl/get", "/settings/hitl/update",
    "/export", "/account/delete",
)  # fmt: skip


def fuzz(
    base_url: str, token: str, workdir: Path, *paths: str, phases: str = "examples,coverage,fuzzing"
) -> subprocess.CompletedProcess[str]:
    command = [
        str(FUZZER), "run", str(ROOT / "docs" / "openapi.yaml"),
        "--url", base_url.rstrip("/"),
        "--header", f"Authorization: Bearer {token}",
        "--checks", CHECKS,
        "--max-examples", "25",
        "--seed", "20261122",
        "--phases", phases,
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
        ("memory", MEMORY_PATHS),
    ],
)
def test_responses_keep_the_documented_contract(
    served: Served, function: str, paths: tuple[str, ...], tmp_path: Path
) -> None:
    assert FUZZER.exists(), "scripts/bootstrap.sh installs schemathesis into .tools/"
    url = {"memory": served.memory_url}
    token = served.token(f"fuzz{uuid.uuid4().hex[:10]}")
    result = fuzz(url[function], token, tmp_path, *paths)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]


def test_chats_and_jobs_keep_the_contract_and_its_links(served: Served, tmp_path: Path) -> None:
    """Through the one origin, as clients reach them; the stateful phase follows the links
    (create a chat, then get, rename, send to and list it; list jobs, get one, pause it)."""
    token = served.token(f"fuzz{uuid.uuid4().hex[:10]}")
    phases = "examples,coverage,fuzzing,stateful"
    result = fuzz(served.origin_url, token, tmp_path, "^/v1/(chats|jobs)", phases=phases)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "Stateful" in result.stdout or "stateful" in result.stdout
