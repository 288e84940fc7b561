"""Serve every function against the test stack, with the fake Vertex endpoint as model."""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from google.cloud import firestore

from scripts import serve
from scripts.stacklib.profile import Profile
from scripts.stacklib.tokens import mint_user_token
from shared.config import Settings
from shared.deps import Deps
from testkit.faults import free_port
from testkit.model_rules import reply_for
from testkit.push_services import FakeFcm, MockPushService
from testkit.vertex_server import FakeVertexServer
from tests.e2e.snapshots import firestore_paths, postgres_counts

PROFILE = "test"
STATE = serve.state_dir(PROFILE)
ROOT = Path(__file__).resolve().parents[2]
EVAL_CLOCK = STATE / "eval-clock"


@dataclass
class Served:
    turn_url: str
    resume_url: str
    extraction_url: str
    agents_url: str
    model: FakeVertexServer
    restart: Callable[[], None]
    memory_url: str = ""
    push: MockPushService | None = None  # the browsers' push service (Web Push)
    fcm: FakeFcm | None = None  # FCM HTTP v1

    def token(self, user: str) -> str:
        return mint_user_token(STATE, user, ttl=600)

    def memory(
        self,
        user: str | None,
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
        **params: Any,
    ) -> httpx.Response:
        """A request to the memory function's ``/v1`` resources (docs/api.md) through the one
        origin, as clients reach them; ``params`` become the query string."""
        sent = {"Authorization": f"Bearer {self.token(user)}"} if user else {}
        sent.update(headers or {})
        url = self.origin_url + path
        return httpx.request(method, url, json=body, params=params, headers=sent, timeout=60)

    def facts(self, user: str, where: str = "", history: bool = False) -> list[dict[str, Any]]:
        """Every fact the user's list answers for a filter (``subject_id = "self"``...),
        through all its pages."""
        facts: list[dict[str, Any]] = []
        query: dict[str, Any] = {"filter": where, "show_history": history, "page_size": 1000}
        while True:
            page = self.memory(user, "GET", "/v1/facts", **query)
            assert page.status_code == 200, page.text
            facts += page.json()["facts"]
            if not page.json()["next_page_token"]:
                return facts
            query["page_token"] = page.json()["next_page_token"]

    def post(self, url: str, user: str | None, body: Any, **kwargs: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.token(user)}"} if user else {}
        headers.update(kwargs.pop("headers", {}))
        return httpx.post(url, json=body, headers=headers, timeout=60, **kwargs)

    # -- /v1, through the one local origin (scripts/web_serve.py) as clients reach it ------
    @property
    def origin_url(self) -> str:
        return Profile(PROFILE).url("web").rstrip("/")

    def api(
        self, method: str, path: str, user: str | None, body: Any = None, **kwargs: Any
    ) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.token(user)}"} if user else {}
        headers.update(kwargs.pop("headers", {}))
        return httpx.request(
            method, self.origin_url + path, json=body, headers=headers, timeout=60, **kwargs
        )

    def new_chat(self, user: str, request_id: str | None = None) -> str:
        params = {"request_id": request_id} if request_id else {}
        response = self.api("POST", "/v1/chats", user, {}, params=params)
        assert response.status_code == 200, response.text
        return str(response.json()["id"])

    def say(self, user: str | None, body: dict[str, Any], **kwargs: Any) -> httpx.Response:
        """A message as a client sends it: to the body's ``chat_id``, or else to a chat made
        for it first (its request id is the message's, so a retry finds the same chat)."""
        sent = dict(body)
        chat = sent.pop("chat_id", None)
        if chat is None and user is not None:
            chat = self.new_chat(user, str(sent.get("client_message_id") or uuid.uuid4().hex))
        return self.api("POST", f"/v1/chats/{chat or 'none'}/messages", user, sent, **kwargs)

    def answer(
        self, user: str | None, chat: str, question: str, answer: str, **kwargs: Any
    ) -> httpx.Response:
        path = f"/v1/chats/{chat}/questions/{question}:answer"
        return self.api("POST", path, user, {"answer": answer}, **kwargs)

    def messages(self, user: str | None, chat: str, **params: Any) -> httpx.Response:
        return self.api("GET", f"/v1/chats/{chat}/messages", user, params=params)


@pytest.fixture(scope="session")
def served(stack_env_session: None) -> Iterator[Served]:
    model = FakeVertexServer(token="e2e-static-token", fallback=reply_for).start()
    push, fcm = MockPushService(), FakeFcm(project=os.environ["GCP_PROJECT"])
    extra = {
        "MODEL_PROVIDER": "vertex",
        "VERTEX_BASE_URL": model.base_url,
        "VERTEX_ACCESS_TOKEN": model.token,
        # The fake model's markers steer its classification; the understanding tier would
        # read these messages first (tests/e2e/test_newcomer.py runs it on the real model).
        "UNDERSTANDING_TIER": "false",
        "RATE_LIMIT_PER_MINUTE": "20",
        "APPROVAL_TIMEOUT_SECONDS": "8",  # so a test sees an unanswered approval expire
        "AGENT_RETRY_BASE_SECONDS": "0.05",  # a failing agent job fails fast
        "LOG_LEVEL": "WARNING",
        # the evaluation's replay clock (eval/product.py): no file, no offset
        "CLOCK_OFFSET_FILE": str(EVAL_CLOCK),
        # push goes to the loopback stand-ins (testkit/push_services.py)
        "WEB_PUSH_HOSTS": f"{Settings().web_push_hosts},{push.host}",
        "WEB_PUSH_CA_FILE": str(push.ca_file),
        "FCM_ENABLED": "true",
        "FCM_BASE_URL": fcm.base_url,
        "FCM_ACCESS_TOKEN": fcm.token,
    }

    def restart() -> None:
        serve.down(PROFILE)
        serve.up(PROFILE, extra_env=extra)

    restart()
    env = serve.read_env(PROFILE)
    yield Served(
        env["TURN_URL"],
        env["RESUME_URL"],
        env["EXTRACTION_URL"],
        env["AGENTS_URL"],
        model,
        restart,
        memory_url=env["MEMORY_URL"],
        push=push,
        fcm=fcm,
    )
    serve.down(PROFILE)
    model.stop()
    push.stop()
    fcm.stop()


@pytest.fixture(scope="session")
def stack_env_session() -> None:
    if not Path(STATE / "env").exists():
        pytest.fail("the test stack is not up: run `make test`")


@pytest.fixture(scope="module")
def stores() -> Iterator[Deps]:
    """The stack's stores, for tests that seed or check what the functions stored."""
    from tests.e2e.memory_kit import open_stores  # it imports this module

    with open_stores() as deps:
        yield deps


@pytest.fixture(scope="module")
def cache() -> Iterator[redis.Redis]:
    from tests.e2e.memory_kit import open_cache

    with open_cache() as client:
        yield client


@pytest.fixture(scope="session")
def db() -> firestore.Client:
    return firestore.Client(project=os.environ["GCP_PROJECT"])


@pytest.fixture
def victim(served: Served, db: firestore.Client) -> Iterator[tuple[str, str]]:
    """A user with one chat; after the test, their stored data must be exactly as before."""
    user = f"u{uuid.uuid4().hex[:12]}"
    chat = served.say(user, {"message": "Hello", "client_message_id": "setup"}).json()["chat_id"]
    before = (firestore_paths(db, user), postgres_counts())
    yield user, chat
    assert (firestore_paths(db, user), postgres_counts()) == before


def new_user() -> str:
    return f"u{uuid.uuid4().hex[:12]}"


def refused(response: httpx.Response) -> tuple[int, str]:
    """A refusal's status and machine-readable code."""
    return response.status_code, response.json()["error"]["code"]


@contextmanager
def private_function(
    served: Served, name: str, env: dict[str, str] | None = None, log: Path | None = None
) -> Iterator[PrivateFunction]:
    """A second instance of function ``name`` on a free port, with ``env`` over the test
    stack's environment (another Redis, database or Firestore), logging to ``log``."""
    port = free_port()
    full_env = {
        **os.environ,
        **serve.read_env(PROFILE),
        **served_model_env(served),
        "LOG_LEVEL": "INFO",
        "PYTHONUNBUFFERED": "1",  # its log is read while it runs
        **(env or {}),
    }
    with open(log or os.devnull, "ab") as sink:
        process = serve.spawn(name, port, full_env, sink)
    instance = PrivateFunction(f"http://127.0.0.1:{port}", process.pid, log)
    try:
        assert serve.wait_ready(port, 90), f"the second {name} function did not start"
        yield instance
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
        process.wait(15)


@dataclass
class PrivateFunction:
    url: str
    pid: int  # leads its process group (gunicorn's arbiter and worker)
    log: Path | None = None

    def log_lines(self, text: str) -> int:
        """How many lines of its log contain ``text``."""
        assert self.log is not None, "started without a log"
        return sum(text in line for line in self.log.read_text().splitlines())


def served_model_env(served: Served) -> dict[str, str]:
    return {
        "MODEL_PROVIDER": "vertex",
        "VERTEX_BASE_URL": served.model.base_url,
        "VERTEX_ACCESS_TOKEN": served.model.token,
        "UNDERSTANDING_TIER": "false",  # the fake model's markers steer these tests
    }


@contextmanager
def function_without_redis(served: Served, name: str) -> Iterator[str]:
    """A second instance of function ``name`` whose Redis address answers nothing."""
    with private_function(served, name, {"REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"}) as fn:
        yield fn.url


def wait_for(check: Callable[[], Any], seconds: float = 30.0) -> Any:
    """Poll until ``check`` returns something truthy (background work over real queues)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"condition not met within {seconds} s")
