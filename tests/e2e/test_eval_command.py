"""The evaluation command (``eval/run.py``) on a small slice, against the served functions:
dated sessions through turns and the Tasks queue, questions as turns, evidence recall from
the turns' records, the scripted judge. The served model is the e2e rule model, steered by
markers: ``[facts]`` makes a message state a fact, ``[ask]`` makes a question retrieve."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from google.cloud import tasks_v2

from eval.product import Drained, Product
from shared.adapters.cloud_tasks import build_tasks_client
from shared.adapters.keyring_local import LocalKek
from shared.adapters.postgres import Database
from shared.adapters.postgres_facts import PostgresFactStore
from shared.adapters.postgres_keyring import PostgresKeyRing
from shared.config import Settings
from shared.models.memory import ExtractionChanges
from shared.services.ids import extraction_task_name
from tests.e2e.conftest import EVAL_CLOCK, ROOT, STATE, Served

pytestmark = [pytest.mark.stack, pytest.mark.e2e]


def slice_dataset() -> list[dict[str, Any]]:
    """Two dated sessions of one user, three questions (LoCoMo layout)."""
    conversation = {
        "speaker_a": "Maya",
        "speaker_b": "Assistant",
        "session_1_date_time": "10:15 am on 4 March, 2023",
        "session_1": [
            {"speaker": "Maya", "dia_id": "D1:1", "text": "[facts] Maya lives in Wipkingen"},
            {"speaker": "Assistant", "dia_id": "D1:2", "text": "Nice!"},
            {"speaker": "Maya", "dia_id": "D1:3", "text": "The weather is grey today"},
        ],
        "session_2_date_time": "6:30 pm on 23 April, 2023",
        "session_2": [
            {"speaker": "Maya", "dia_id": "D2:1", "text": "[facts] Oskar sold Maya a Bianchi"},
        ],
    }
    qa = [
        {"question": "[ask] Where does Maya live?", "answer": "Wipkingen",
         "evidence": ["D1:1"], "category": 4},
        {"question": "[ask] Who sold Maya a bike?", "answer": "Oskar",
         "evidence": ["D2:1"], "category": 1},
        {"question": "[ask] How was the weather?", "answer": "grey",
         "evidence": ["D1:3"], "category": 2},  # said, but no fact was stored from it
        {"question": "An adversarial one", "answer": "x", "evidence": [], "category": 5},
    ]  # fmt: skip
    return [{"sample_id": "slice", "conversation": conversation, "qa": qa}]


def test_the_eval_command_scores_a_small_slice(served: Served, tmp_path: Path) -> None:
    dataset, out = tmp_path / "slice.json", tmp_path / "report.json"
    dataset.write_text(json.dumps(slice_dataset()))
    done = subprocess.run(
        [sys.executable, "-m", "eval.run", "--dataset", str(dataset), "--provider", "scripted",
         "--profile", "test", "--out", str(out)],
        check=False, cwd=ROOT, capture_output=True, text=True, timeout=300,
        env={"PATH": "/usr/bin:/bin", "CLOCK_OFFSET_FILE": str(EVAL_CLOCK),
             **{k: v for k, v in os.environ.items() if k == "STACK_PORT_BASE"}},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    summary = report["summary"]
    assert summary["questions"] == 3  # the adversarial question has nothing to find
    assert summary["recall@10"] == pytest.approx(2 / 3, abs=1e-3)  # no fact: grey weather
    rows = {row["question"]: row for row in report["questions"]}
    assert rows["[ask] Where does Maya live?"]["evidence_rank"] is not None
    assert rows["[ask] How was the weather?"]["evidence_rank"] is None
    for row in rows.values():  # the scripted judge: half the gold answer's terms, or wrong
        assert row["correct"] == (row["gold"].lower() in row["reply"].lower())
        assert row["reason"].endswith("gold terms") and row["tokens"] > 0 and row["ms"] > 0
    assert set(report["categories"]) == {"multi-hop", "single-hop", "temporal"}
    assert 0 <= summary["accuracy"] <= 1 and summary["latency_ms_p95"] >= summary["latency_ms_p50"]
    assert float(EVAL_CLOCK.read_text()) == 0  # the functions' clock is back to now

    # the facts were stored at their sessions' dates, through the real extraction
    user = f"eval-{report['run']}-slice"
    facts = served.facts(user)
    stated = {f["text"]: datetime.fromisoformat(f["valid_from"]).date() for f in facts}
    assert stated["Maya lives in Wipkingen"] == datetime(2023, 3, 4, tzinfo=UTC).date()
    assert stated["Oskar sold Maya a Bianchi"] == datetime(2023, 4, 23, tzinfo=UTC).date()


def test_the_extraction_wait_ends_when_the_queue_lets_go(stack_env_session: None) -> None:
    """A task still queued is waited for; one the queue let go of without storing anything
    (an extraction that failed for good answers 200) ends the wait as failed, not after the
    whole timeout; a processed task key is applied. Against the real queue and PostgreSQL."""
    settings = Settings(clock_offset_file=str(EVAL_CLOCK))
    product = Product(settings, STATE, "http://127.0.0.1:9/unused")
    tasks = build_tasks_client(settings)
    user = f"eval-wait-{uuid.uuid4().hex[:8]}"
    queued, applied = f"t{uuid.uuid4().hex[:24]}", f"t{uuid.uuid4().hex[:24]}"
    name = tasks.task_path(
        settings.gcp_project, settings.tasks_location, settings.extraction_queue,
        extraction_task_name(queued),
    )  # fmt: skip
    later = datetime.now(UTC) + timedelta(hours=1)
    tasks.create_task(
        parent=tasks.queue_path(
            settings.gcp_project, settings.tasks_location, settings.extraction_queue
        ),
        task=tasks_v2.Task(
            name=name,
            schedule_time=later,
            http_request=tasks_v2.HttpRequest(url=settings.extraction_url, body=b"{}"),
        ),
    )
    assert settings.local_kek_file is not None
    db = Database(settings)
    store = PostgresFactStore(db, PostgresKeyRing(db, LocalKek(settings.local_kek_file)))
    store.apply_extraction(extraction_task_name(applied), user, ExtractionChanges(), later)
    try:
        assert product.wait_for_extraction(user, [queued, applied], 1.5) == Drained(1, 0, 1)
        tasks.delete_task(name=name)
        started = time.monotonic()
        assert product.wait_for_extraction(user, [queued, applied], 60) == Drained(1, 1, 0)
        assert time.monotonic() - started < 30  # ended by the queue, not by the timeout
    finally:
        product.close()
        db.close()
