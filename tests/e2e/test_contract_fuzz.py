"""The API against docs/openapi.yaml, fuzzed by schemathesis through the one origin, as
clients reach it: no server error, and every status, content type, header and body is the
one the contract documents. The stateful phase follows the contract's OpenAPI links (create
a chat, then get, rename, send to and list it; list facts, get one, patch or delete it with
its etag; list jobs, get one, pause it).

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
PHASES = "examples,coverage,fuzzing,stateful"
GROUPS = {
    "memory": r"^/v1/(facts|persons|pendingItems|settings|strategies|account)",
    "chats and jobs": r"^/v1/(chats|jobs)",
    "reminders and push": r"^/v1/(reminders|notifications|devices|pushConfig)",
}


def fuzz(
    base_url: str, token: str, workdir: Path, path_regex: str
) -> subprocess.CompletedProcess[str]:
    command = [
        str(FUZZER), "run", str(ROOT / "docs" / "openapi.yaml"),
        "--url", base_url.rstrip("/"),
        "--header", f"Authorization: Bearer {token}",
        "--checks", CHECKS,
        "--max-examples", "25",
        "--seed", "20261122",
        "--phases", PHASES,
        "--include-path-regex", path_regex,
        "--no-color",
    ]  # fmt: skip
    # Its cache (.schemathesis/) goes to the test's own folder, never into the repository.
    return subprocess.run(
        command, capture_output=True, text=True, timeout=600, check=False, cwd=workdir
    )


@pytest.mark.parametrize("group", GROUPS)
def test_the_api_keeps_the_documented_contract_and_its_links(
    served: Served, group: str, tmp_path: Path
) -> None:
    assert FUZZER.exists(), "scripts/bootstrap.sh installs schemathesis into .tools/"
    user = f"fuzz{uuid.uuid4().hex[:10]}"
    if group == "memory":  # facts, persons and pending items: ids for the links to follow
        with open_stores() as stores:
            seed(stores, user)
    result = fuzz(served.origin_url, served.token(user), tmp_path, GROUPS[group])
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "stateful" in result.stdout.lower(), "the stateful phase did not run"
