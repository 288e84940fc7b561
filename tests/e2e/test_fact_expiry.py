"""Memory that ages, on the real stack: a fact whose durability ran out leaves retrieval at
once, and the expiry job (run by its command, and by Cloud Scheduler's POST to extraction's
``/expire``) closes it with ``valid_to``, never deleting it."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from scripts.stacklib.tokens import mint_internal_token
from shared.adapters.postgres import Database
from shared.config import Settings
from shared.deps import Deps
from shared.fakes.scripted_llm import HashEmbedder
from shared.models.memory import ExtractionChanges, FactDraft, FactFilter
from tests.e2e.conftest import ROOT, STATE, Served, new_user

pytestmark = [pytest.mark.e2e, pytest.mark.stack]

SETTINGS = Settings()
EMBEDDER = HashEmbedder(dimension=768)  # what the fake Vertex endpoint embeds with


@pytest.fixture(scope="module")
def stores() -> Iterator[Deps]:
    database = Database(SETTINGS)
    yield Deps(SETTINGS, _database=database)
    database.close()


def remember(stores: Deps, user: str, text: str, durability: str, when: datetime) -> str:
    draft = FactDraft(
        text=text, confidence=0.9, durability=durability,  # type: ignore[arg-type]
        embedding=EMBEDDER.embed([text])[0], embedding_model=SETTINGS.vertex_embedding_model,
        idempotency_key=text,
    )  # fmt: skip
    changes = ExtractionChanges(new_facts=[draft])
    stores.facts.apply_extraction(uuid.uuid4().hex, user, changes, when)
    [fact] = [f for f in stores.facts.list_facts(user, FactFilter()) if f.text == text]
    return fact.id


def search(served: Served, user: str, query: str) -> list[str]:
    found = served.memory(user, "POST", "/v1/facts:search", {"query": query}).json()["results"]
    return [r["fact"]["text"] for r in found]


def test_an_expired_fact_leaves_search_and_the_job_closes_it(served: Served, stores: Deps) -> None:
    user, now = new_user(), datetime.now(UTC)
    cold = remember(stores, user, "I have a cold this week", "short", now - timedelta(days=8))
    remember(stores, user, "I have a cat called Pixel", "durable", now - timedelta(days=400))
    assert search(served, user, "a cold or a cat") == ["I have a cat called Pixel"]  # at once

    done = subprocess.run(
        [sys.executable, "scripts/expire_facts.py"],
        check=True, cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert json.loads(done.stdout.strip().splitlines()[-1])["closed"] >= 1
    [version] = served.memory(user, "GET", f"/v1/facts/{cold}/versions").json()["versions"]
    assert (version["current"], version["ended_by"]) == (False, "expired")
    assert datetime.fromisoformat(version["valid_to"]) == datetime.fromisoformat(
        version["expires_at"]
    )  # closed when it left retrieval, not when the job ran
    listed = served.facts(user)
    assert [f["text"] for f in listed] == ["I have a cat called Pixel"]


def test_the_scheduled_post_needs_the_invokers_token(served: Served) -> None:
    expire = served.extraction_url.rstrip("/") + "/expire"
    assert httpx.post(expire, timeout=30).status_code == 401
    user_token = {"Authorization": f"Bearer {served.token('someone')}"}
    assert httpx.post(expire, headers=user_token, timeout=30).status_code == 401
    token = mint_internal_token(STATE, SETTINGS.extraction_url, SETTINGS.tasks_invoker_email)
    response = httpx.post(expire, headers={"Authorization": f"Bearer {token}"}, timeout=60)
    assert response.status_code == 200
    assert response.json()["status"] == "expired"
