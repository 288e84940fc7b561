"""The dev stack's Firestore documents survive a restart: exported from a running emulator
(a private one here), imported by the next (scripts/stacklib/firestore_data.py)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from google.cloud import firestore

from scripts.stacklib import firestore_data
from scripts.stacklib.profile import PROJECT
from scripts.stacklib.services import firestore_command, http_ok
from testkit.faults import free_port, wait_until

pytestmark = pytest.mark.stack


@contextmanager
def emulator(
    port: int, monkeypatch: pytest.MonkeyPatch, import_data: Path | None = None
) -> Iterator[firestore.Client]:
    process = subprocess.Popen(
        firestore_command(port, import_data), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        assert wait_until(lambda: http_ok(port), 60), "the emulator did not start"
        monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", f"127.0.0.1:{port}")
        client = firestore.Client(project=PROJECT)
        yield client
        client.close()
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.timeout(240)
def test_documents_are_kept_from_one_start_to_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exports, port = tmp_path / "exports", free_port()
    with emulator(port, monkeypatch) as db:
        db.collection("users").document("u1").set({"currency": "CHF"})
        first = firestore_data.save(port, exports)
        db.collection("users").document("u2").set({"currency": "EUR"})
        second = firestore_data.save(port, exports)
    assert first is not None and second is not None
    assert list(exports.glob("*/*.overall_export_metadata")) == [second]  # the newest only
    with emulator(free_port(), monkeypatch, firestore_data.latest(exports)) as db:
        kept = {d.id: d.to_dict() for d in db.collection("users").stream()}
    assert kept == {"u1": {"currency": "CHF"}, "u2": {"currency": "EUR"}}


def test_nothing_running_saves_nothing(tmp_path: Path) -> None:
    assert firestore_data.save(free_port(), tmp_path / "exports") is None
    assert firestore_data.latest(tmp_path / "exports") is None
