"""Profiles (dev, test): where a stack keeps its state and which loopback ports it uses."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"
PROJECT = "local-project"
LOCATION = "europe-west6"
EXTRACTION_QUEUE = "extraction"
HITL_TIMEOUT_QUEUE = "hitl-timeouts"
REMINDER_QUEUE = "reminders"  # reminders and approval deadlines ring through it
AGENTS_TOPIC = "agent-jobs"
DEAD_LETTER_TOPIC = "agent-jobs-dead-letter"
DEAD_LETTER_SUBSCRIPTION = "agent-jobs-dead-letter-sub"
PUSH_SUBSCRIPTION = "agent-jobs-push"
# What the local model service serves (scripts/model_service), as the functions name it.
LOCAL_MODEL = "smollm2-135m-instruct"
LOCAL_EMBEDDING_MODEL = "all-MiniLM-L6-v2"
# Settings' per-kind models besides the reply's (shared/model_catalog.py): all SmolLM2 here.
LOCAL_KINDS = ("routing", "planning", "extraction", "watchdog", "judge")
LOCAL_EMBEDDING_DIMENSION = 384
# The same defaults as shared.config.Settings (kept literal: this must not import the app).
TASKS_INVOKER_EMAIL = f"tasks-invoker@{PROJECT}.iam.gserviceaccount.com"
AGENTS_INVOKER_EMAIL = f"pubsub-invoker@{PROJECT}.iam.gserviceaccount.com"

BASE_PORTS = {"dev": 8500, "test": 8600}
STATE_DIRS = {"dev": ".stack", "test": ".stack-test"}
OFFSETS = {
    "firestore": 10,
    "pubsub": 11,
    "tasks": 12,
    "redis": 13,
    "postgres": 14,
    "push-relay": 15,
    "model": 16,
    "mail": 17,  # scripts/stacklib/mail_server.py: SMTP, and its page one port up
    "mail-web": 18,
    "turn": 20,
    "extraction": 21,
    "resume": 22,
    "agents": 23,
    "memory": 24,
    "web": 25,  # scripts/web_serve.py: the web client and the API on one origin
    "scheduler": 26,  # scripts/stacklib/scheduler.py: Cloud Scheduler's jobs, dev only
}


@dataclass(frozen=True)
class Profile:
    name: str

    @property
    def state(self) -> Path:
        return ROOT / STATE_DIRS[self.name]

    @property
    def keeps(self) -> bool:
        """The dev stack keeps its Firestore documents (``firestore_data``), its queued
        tasks (``kept_tasks``) and its unacknowledged Pub/Sub messages (``kept_messages``)
        across restarts; the test stack starts empty."""
        return self.name == "dev"

    @property
    def logs(self) -> Path:
        return self.state / "logs"

    @property
    def run(self) -> Path:
        return self.state / "run"

    def log_file(self, service: str) -> Path:
        return self.logs / f"{service}.log"

    def pid_file(self, service: str) -> Path:
        return self.run / f"{service}.pid"

    @property
    def env_file(self) -> Path:
        return self.state / "env"

    def port(self, service: str) -> int:
        return self.base_port + OFFSETS[service]

    @property
    def base_port(self) -> int:
        """``STACK_PORT_BASE`` moves the test stack, so two work trees can each run one."""
        if self.name == "test" and os.environ.get("STACK_PORT_BASE"):
            return int(os.environ["STACK_PORT_BASE"])
        return BASE_PORTS[self.name]

    def url(self, service: str) -> str:
        return f"http://{HOST}:{self.port(service)}/"

    @property
    def queue_path(self) -> str:
        return f"projects/{PROJECT}/locations/{LOCATION}/queues/{EXTRACTION_QUEUE}"

    @property
    def queue_paths(self) -> list[str]:
        queues = (EXTRACTION_QUEUE, HITL_TIMEOUT_QUEUE, REMINDER_QUEUE)
        return [f"projects/{PROJECT}/locations/{LOCATION}/queues/{queue}" for queue in queues]

    def model_env(self, token: str) -> dict[str, str]:
        """Settings that point the production Vertex adapters at the local model service."""
        return {
            "MODEL_PROVIDER": "vertex",
            "VERTEX_BASE_URL": self.url("model").rstrip("/"),
            "VERTEX_ACCESS_TOKEN": token,
            "VERTEX_MODEL": LOCAL_MODEL,
            **{f"VERTEX_{kind.upper()}_MODEL": LOCAL_MODEL for kind in LOCAL_KINDS},
            "VERTEX_EMBEDDING_MODEL": LOCAL_EMBEDDING_MODEL,
            "EMBEDDING_DIMENSION": str(LOCAL_EMBEDDING_DIMENSION),
            # SmolLM2 garbles a stored fact it is asked to phrase: the quote is the reply.
            "UNDERSTANDING_ANSWERS": "reply",
            # It routes worse than the tier's nearest examples do below their thresholds,
            # misjudges whether a reply answers a question, and loops in the research agent.
            "MODEL_STRENGTH": "weak",
            # Its extraction stores sentences of the message as facts about made-up people.
            "EXTRACTION_READER": "understanding",
            # The research agent tries the web as in production; the service has none and
            # refuses the grounding tool as Vertex does, so the agent says it cannot search.
            "WEB_SEARCH_PROVIDER": "vertex",
            # One generation at a time: a short answer waits for the replies ahead of it,
            # which ramble to the service's 384-token cap (6 s); a free reply stops at 96
            # (bench.turn --local). Replies with agent results keep their own cap.
            "FREE_REPLY_MAX_OUTPUT_TOKENS": "96",
        }

    def env(self, database_url: str, model_token: str) -> dict[str, str]:
        """What the functions, scripts and tests read (see shared.config.Settings).

        The dev functions use the local model service. The test profile's functions are
        served by the tests with the model they script (the Vertex fake), so its env names
        no model; a test or bench that wants the service takes ``model_env``."""
        auth = self.state / "auth"
        model = self.model_env(model_token) if self.name == "dev" else {}
        return {
            "ENV": self.name,
            "GCP_PROJECT": PROJECT,
            "GOOGLE_CLOUD_PROJECT": PROJECT,
            "FIRESTORE_EMULATOR_HOST": f"{HOST}:{self.port('firestore')}",
            "PUBSUB_EMULATOR_HOST": f"{HOST}:{self.port('pubsub')}",
            "CLOUD_TASKS_EMULATOR_HOST": f"{HOST}:{self.port('tasks')}",
            "REDIS_URL": f"redis://{HOST}:{self.port('redis')}/0",
            "DATABASE_URL": database_url,
            "AUTH_ISSUER": f"https://securetoken.google.com/{PROJECT}",
            "AUTH_AUDIENCE": PROJECT,
            "AUTH_JWKS_FILE": str(auth / "user_jwks.json"),
            "INTERNAL_JWKS_FILE": str(auth / "internal_jwks.json"),
            "KEK_PROVIDER": "local",
            "LOCAL_KEK_FILE": str(auth / "kek.key"),
            "WEB_PUSH_KEY_FILE": str(auth / "vapid.pem"),
            "TASKS_LOCATION": LOCATION,
            "EXTRACTION_QUEUE": EXTRACTION_QUEUE,
            "EXTRACTION_URL": self.url("extraction"),
            "HITL_TIMEOUT_QUEUE": HITL_TIMEOUT_QUEUE,
            "REMINDER_QUEUE": REMINDER_QUEUE,
            "TASKS_INVOKER_EMAIL": TASKS_INVOKER_EMAIL,
            "AGENTS_URL": self.url("agents"),
            "AGENTS_TOPIC": AGENTS_TOPIC,
            "AGENTS_INVOKER_EMAIL": AGENTS_INVOKER_EMAIL,
            "TURN_URL": self.url("turn"),
            "RESUME_URL": self.url("resume"),
            "MEMORY_URL": self.url("memory"),
            "STACK_STATE_DIR": str(self.state),
            # Mail really goes out, to the stack's SMTP server (plain: it is on loopback).
            "OUTBOX_PROVIDER": "smtp",
            "SMTP_HOST": HOST,
            "SMTP_PORT": str(self.port("mail")),
            "SMTP_STARTTLS": "false",
            "MAIL_FROM_ADDRESS": "assistant@assistant.localhost",
            "MAIL_WEB_URL": self.url("mail-web"),
            "PUBLIC_API_ORIGIN": self.url("web").rstrip("/"),  # calendar feed URLs
            **model,
        }
