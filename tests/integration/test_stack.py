"""The running test stack behaves like the Google services it stands in for.

Cloud Tasks: names are deduplicated, tasks reach HTTP targets with a Google-style OIDC token
and the X-CloudTasks-* headers, schedule_time is honoured. Pub/Sub: pushes reach the agents URL
through the relay with a verifiable token, and undeliverable ones end as dead letters. Redis and
PostgreSQL (with pgvector) answer; minted user tokens verify against the user key set. The
local model service answers the production Vertex adapters with the stack's token only.
"""

from __future__ import annotations

import base64
import json
import os
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from urllib.request import urlopen

import grpc
import jwt
import numpy as np
import pg8000.native
import pytest
import redis
from google.api_core.exceptions import AlreadyExists
from google.cloud import pubsub_v1, tasks_v2
from google.cloud.tasks_v2.services.cloud_tasks.transports import CloudTasksGrpcTransport

from scripts.stacklib.profile import Profile
from scripts.stacklib.push_relay import RelayServer
from scripts.stacklib.tokens import mint_user_token, model_token
from shared.adapters import model_guard
from shared.adapters.vertex_llm import build_vertex
from shared.config import Settings
from shared.deps import Deps
from shared.errors import ConfigurationError, WebSearchUnavailable
from shared.ports import ChatTurn, LLMRequest

pytestmark = [pytest.mark.stack, pytest.mark.usefixtures("stack_env")]

PROJECT = "local-project"
GOOGLE_ISSUER = "https://accounts.google.com"
AGENTS_TOPIC_PATH = f"projects/{PROJECT}/topics/agent-jobs"


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


StatusFor = Callable[[Received], int]


class Target:
    """A loopback HTTP server that records requests and answers with ``status_for(request)``."""

    def __init__(self, port: int = 0, status_for: StatusFor = lambda _: 200) -> None:
        received: queue.Queue[Received] = queue.Queue()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                request = Received(self.path, headers, body)
                received.put(request)
                self.send_response(status_for(request))
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.received = received
        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def wait(self, match: Callable[[Received], bool], timeout: float = 20.0) -> Received:
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                request = self.received.get(timeout=left)
            except queue.Empty:
                break
            if match(request):
                return request
        raise AssertionError(f"no matching request reached {self.url} within {timeout}s")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join()


@contextmanager
def serving(port: int = 0, status_for: StatusFor = lambda _: 200) -> Iterator[Target]:
    target = Target(port, status_for)
    try:
        yield target
    finally:
        target.close()


def signing_key(jwks_variable: str, token: str) -> Any:
    keys = jwt.PyJWKSet.from_dict(json.loads(Path(os.environ[jwks_variable]).read_text()))
    return keys[jwt.get_unverified_header(token)["kid"]].key


def internal_claims(token_header: str, audience: str) -> dict[str, Any]:
    """Verify an internal caller's bearer token as the functions do: the stack's internal JWKS."""
    scheme, _, token = token_header.partition(" ")
    assert scheme == "Bearer"
    claims: dict[str, Any] = jwt.decode(
        token,
        signing_key("INTERNAL_JWKS_FILE", token),
        algorithms=["RS256"],
        audience=audience,
        issuer=GOOGLE_ISSUER,
        options={"require": ["exp", "iat", "iss", "aud", "sub"]},
    )
    assert claims["email_verified"] is True
    assert claims["exp"] - claims["iat"] == 3600
    return claims


# -- Cloud Tasks --------------------------------------------------------------------------------


@pytest.fixture
def tasks_client() -> Iterator[tasks_v2.CloudTasksClient]:
    channel = grpc.insecure_channel(os.environ["CLOUD_TASKS_EMULATOR_HOST"])
    client = tasks_v2.CloudTasksClient(transport=CloudTasksGrpcTransport(channel=channel))
    yield client
    client.transport.close()


@pytest.fixture
def extraction_queue() -> str:
    return tasks_v2.CloudTasksClient.queue_path(
        PROJECT, os.environ["TASKS_LOCATION"], os.environ["EXTRACTION_QUEUE"]
    )


def http_task(url: str, name: str | None = None, **extra: Any) -> dict[str, Any]:
    task: dict[str, Any] = {"http_request": {"url": url, "body": b"{}"}, **extra}
    if name:
        task["name"] = name
    return task


def test_reused_task_name_is_rejected_with_already_exists(
    tasks_client: tasks_v2.CloudTasksClient, extraction_queue: str
) -> None:
    name = f"{extraction_queue}/tasks/dedup-{uuid.uuid4().hex}"
    with serving() as target:
        tasks_client.create_task(parent=extraction_queue, task=http_task(target.url, name))
        with pytest.raises(AlreadyExists):
            tasks_client.create_task(parent=extraction_queue, task=http_task(target.url, name))
        target.wait(lambda r: True)
        # Cloud Tasks keeps refusing the name after the task ran.
        with pytest.raises(AlreadyExists):
            tasks_client.create_task(parent=extraction_queue, task=http_task(target.url, name))


def test_task_reaches_its_http_target_with_an_oidc_token(
    tasks_client: tasks_v2.CloudTasksClient, extraction_queue: str
) -> None:
    task_id = f"oidc-{uuid.uuid4().hex}"
    email = os.environ["TASKS_INVOKER_EMAIL"]
    with serving() as target:
        audience = f"{target.url}/"
        tasks_client.create_task(
            parent=extraction_queue,
            task={
                "name": f"{extraction_queue}/tasks/{task_id}",
                "http_request": {
                    "url": f"{target.url}/extract",
                    "headers": {"Content-Type": "application/json"},
                    "body": b'{"job": 1}',
                    "oidc_token": {"service_account_email": email, "audience": audience},
                },
            },
        )
        request = target.wait(lambda r: r.headers.get("x-cloudtasks-taskname") == task_id)

    assert request.path == "/extract"
    assert request.json() == {"job": 1}
    assert request.headers["content-type"] == "application/json"
    assert request.headers["x-cloudtasks-queuename"] == os.environ["EXTRACTION_QUEUE"]
    assert request.headers["x-cloudtasks-taskretrycount"] == "0"
    claims = internal_claims(request.headers["authorization"], audience)
    assert claims["email"] == email


def test_failed_task_is_retried_with_a_growing_retry_count(
    tasks_client: tasks_v2.CloudTasksClient, extraction_queue: str
) -> None:
    task_id = f"retry-{uuid.uuid4().hex}"
    with serving(status_for=lambda _: 503) as target:
        tasks_client.create_task(
            parent=extraction_queue,
            task=http_task(target.url, f"{extraction_queue}/tasks/{task_id}"),
        )

        def mine(r: Received) -> bool:
            return r.headers.get("x-cloudtasks-taskname") == task_id

        first, second = target.wait(mine), target.wait(mine)
    assert first.headers["x-cloudtasks-taskretrycount"] == "0"
    assert second.headers["x-cloudtasks-taskretrycount"] == "1"
    assert second.headers["x-cloudtasks-taskexecutioncount"] == "1"


def test_task_waits_for_its_schedule_time(
    tasks_client: tasks_v2.CloudTasksClient, extraction_queue: str
) -> None:
    delay = 1.5
    with serving() as target:
        created = time.monotonic()
        eta = datetime.now(UTC) + timedelta(seconds=delay)
        task = tasks_client.create_task(
            parent=extraction_queue, task=http_task(target.url, schedule_time=eta)
        )
        task_id = task.name.rsplit("/", 1)[-1]
        target.wait(lambda r: r.headers.get("x-cloudtasks-taskname") == task_id)
        assert time.monotonic() - created >= delay - 0.1


# -- Pub/Sub push through the relay -------------------------------------------------------------


def test_relay_forwards_with_a_verifiable_token() -> None:
    """The relay code itself, pointed at a test target (the stack's relay targets AGENTS_URL)."""
    email = os.environ["AGENTS_INVOKER_EMAIL"]
    with serving(status_for=lambda _: 202) as target:
        relay = RelayServer(0, f"{target.url}/", email, os.environ["STACK_STATE_DIR"])
        threading.Thread(target=relay.serve_forever, daemon=True).start()
        try:
            push = {"message": {"data": "", "messageId": "1"}, "subscription": "s"}
            with urlopen(
                f"http://127.0.0.1:{relay.server_address[1]}/{AGENTS_TOPIC_PATH}",
                data=json.dumps(push).encode(),
                timeout=10,
            ) as response:
                assert response.status == 202  # the target's status goes back to Pub/Sub
        finally:
            relay.shutdown()
            relay.server_close()
        request = target.wait(lambda r: True)
    assert request.path == f"/{AGENTS_TOPIC_PATH}"
    assert request.json() == push
    assert internal_claims(request.headers["authorization"], f"{target.url}/")["email"] == email


@pytest.fixture
def agents_port() -> int:
    """The agents function's port, if free: the push chain is observed by standing in for it."""
    port = urlsplit(os.environ["AGENTS_URL"]).port
    assert port is not None
    try:
        Target(port).close()
    except OSError:
        pytest.skip(f"the agents function is being served on {port}; cannot stand in for it")
    return port


@pytest.fixture
def publisher() -> Iterator[pubsub_v1.PublisherClient]:
    client = pubsub_v1.PublisherClient()
    yield client
    client.stop()
    client.transport.close()


def _marker(request: Received) -> str | None:
    attributes: dict[str, str] = request.json()["message"].get("attributes", {})
    return attributes.get("marker")


def test_push_reaches_agents_url_with_a_verifiable_token(
    agents_port: int, publisher: pubsub_v1.PublisherClient
) -> None:
    marker = uuid.uuid4().hex
    with serving(agents_port, status_for=lambda _: 204) as target:
        publisher.publish(AGENTS_TOPIC_PATH, b'{"job": "push"}', marker=marker).result(timeout=10)
        request = target.wait(lambda r: _marker(r) == marker)

    # functions-framework derives the CloudEvent source from this path.
    assert request.path == f"/{AGENTS_TOPIC_PATH}"
    envelope = request.json()
    assert envelope["subscription"] == f"projects/{PROJECT}/subscriptions/agent-jobs-push"
    assert base64.b64decode(envelope["message"]["data"]) == b'{"job": "push"}'
    claims = internal_claims(request.headers["authorization"], os.environ["AGENTS_URL"])
    assert claims["email"] == os.environ["AGENTS_INVOKER_EMAIL"]


def test_undeliverable_push_ends_in_the_dead_letter_topic(
    agents_port: int, publisher: pubsub_v1.PublisherClient
) -> None:
    marker = uuid.uuid4().hex
    dead_letters = f"projects/{PROJECT}/subscriptions/agent-jobs-dead-letter-sub"
    subscriber = pubsub_v1.SubscriberClient()
    try:
        with serving(agents_port, status_for=lambda r: 500 if _marker(r) == marker else 204):
            publisher.publish(AGENTS_TOPIC_PATH, b"{}", marker=marker).result(timeout=10)
            deadline = time.monotonic() + 60
            found = None
            while found is None and time.monotonic() < deadline:
                response = subscriber.pull(subscription=dead_letters, max_messages=20, timeout=5)
                for received in response.received_messages:
                    if received.message.attributes.get("marker") == marker:
                        found = received
                        subscriber.acknowledge(subscription=dead_letters, ack_ids=[received.ack_id])
                if found is None:
                    time.sleep(1)
    finally:
        subscriber.close()
    assert found is not None, "the message never reached the dead-letter topic"
    assert found.message.attributes["CloudPubSubDeadLetterSourceDeliveryCount"] == "5"


# -- Stores and tokens --------------------------------------------------------------------------


def test_redis_answers() -> None:
    client = redis.Redis.from_url(os.environ["REDIS_URL"])
    try:
        key = f"stack-test:{uuid.uuid4().hex}"
        assert client.set(key, "1", ex=10)
        assert client.get(key) == b"1"
        assert client.config_get("maxmemory-policy") == {"maxmemory-policy": "volatile-lru"}
    finally:
        client.close()


def test_postgres_answers_with_pgvector() -> None:
    url = urlsplit(os.environ["DATABASE_URL"])
    assert url.hostname == "127.0.0.1" and url.password
    conn = pg8000.native.Connection(
        url.username or "",
        host=url.hostname,
        port=url.port or 5432,
        password=url.password,
        database=url.path.lstrip("/"),
    )
    try:
        conn.run("CREATE EXTENSION IF NOT EXISTS vector")
        [[version]] = conn.run("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        assert tuple(int(part) for part in version.split(".")[:2]) >= (0, 8)
        [[distance]] = conn.run("SELECT '[1,2,3]'::vector <-> '[1,2,5]'::vector")
        assert distance == pytest.approx(2.0)
    finally:
        conn.close()


def test_emulators_answer() -> None:
    for variable in ("FIRESTORE_EMULATOR_HOST", "PUBSUB_EMULATOR_HOST"):
        with urlopen(f"http://{os.environ[variable]}/", timeout=5) as response:
            assert response.read().strip() == b"Ok"


def test_minted_user_token_verifies_against_the_user_key_set() -> None:
    token = mint_user_token(os.environ["STACK_STATE_DIR"], "alice", ttl=60)
    claims = jwt.decode(
        token,
        signing_key("AUTH_JWKS_FILE", token),
        algorithms=["RS256"],
        audience=os.environ["AUTH_AUDIENCE"],
        issuer=os.environ["AUTH_ISSUER"],
    )
    assert claims["sub"] == claims["user_id"] == "alice"
    assert claims["exp"] - claims["iat"] == 60


# -- The local model service -------------------------------------------------------------------


def model_settings(profile: Profile, token: str) -> Settings:
    """Settings from the profile's model variables, as the dev functions read them."""
    variables = profile.model_env(token)
    return Settings(env="test", **{name.lower(): value for name, value in variables.items()})


def model_health(profile: Profile) -> Any:
    with urlopen(f"{profile.url('model')}healthz", timeout=5) as response:
        return json.load(response)


def test_the_model_service_embeds_for_the_vertex_adapter_with_the_stacks_token() -> None:
    profile = Profile("test")
    _, embedder = build_vertex(model_settings(profile, model_token(profile.state)))
    before = model_health(profile)

    with model_guard.override_allow_model_requests(True):
        dog, puppy, market = (
            np.array(v) for v in embedder.embed(["my dog", "my puppy", "the stock market"])
        )

    assert (embedder.model_name, dog.shape) == ("all-MiniLM-L6-v2", (384,))
    assert dog @ puppy > dog @ market
    after = model_health(profile)
    assert after["models"] == {"text": "smollm2-135m-instruct", "embedding": "all-MiniLM-L6-v2"}
    assert after["embedding_lane"]["admitted"] == before["embedding_lane"]["admitted"] + 1


def test_the_model_service_has_no_web_and_the_research_tool_says_so() -> None:
    profile = Profile("test")
    deps = Deps(model_settings(profile, model_token(profile.state)))
    assert deps.web_search is not None  # dev tries the web as production does
    refused = pytest.raises(WebSearchUnavailable, match="not supported by model smollm2")
    with model_guard.override_allow_model_requests(True), refused:
        deps.web_search.search("What time does the Kunsthaus open on Sunday?", 5)


def test_the_model_service_refuses_another_token() -> None:
    llm, _ = build_vertex(model_settings(Profile("test"), "not-the-stacks-token"))

    with model_guard.override_allow_model_requests(True), pytest.raises(ConfigurationError):
        llm.generate(LLMRequest(messages=[ChatTurn(role="user", text="Hi")]))


def test_the_dev_env_sends_the_functions_to_the_model_service() -> None:
    env = Profile("dev").env("postgresql://u:p@127.0.0.1:8514/assistant", "dev-token")

    settings = Settings(env="dev", **{k.lower(): v for k, v in env.items() if k != "ENV"})
    assert settings.model_provider == "vertex"
    assert settings.vertex_base_url == "http://127.0.0.1:8516"
    assert (settings.vertex_embedding_model, settings.embedding_dimension) == (
        "all-MiniLM-L6-v2",
        384,
    )
    assert "MODEL_PROVIDER" not in Profile("test").env("postgresql://x", "t")  # tests choose
