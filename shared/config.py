"""Settings: the only reader of environment variables.

Every field maps to the upper-case environment variable of the same name (``REDIS_URL`` ->
``redis_url``). Terraform generates the deployed values from one map with these names, and
``scripts/stack`` writes the local ones to ``.stack*/env``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from shared.errors import ConfigurationError
from shared.model_catalog import DEFAULT_EMBEDDING_MODEL, DEFAULT_MODELS, ModelKind

Environment = Literal["dev", "test", "staging", "prod"]
ModelProvider = Literal["vertex", "scripted"]

_PLACEHOLDERS = {"", "changeme", "change-me", "secret", "dev", "local", "test"}
# Fact search has an HNSW index for these dimensions only (shared/migrations/0002_memory.sql).
SEARCHABLE_DIMENSIONS = (384, 768)
# Embedding models whose vectors have one size only (the local model service serves MiniLM).
FIXED_DIMENSIONS = {"all-MiniLM-L6-v2": 384}


class Settings(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore", frozen=True)

    env: Environment = "dev"
    gcp_project: str = "local-project"
    gcp_region: str = "europe-west6"
    log_level: str = "INFO"

    # Emulators (set only locally; the Google client libraries read the first two themselves).
    firestore_emulator_host: str | None = None
    pubsub_emulator_host: str | None = None
    cloud_tasks_emulator_host: str | None = None

    # dev/test only: a file holding the seconds to add to the system clock (the evaluation
    # replays dated conversations through the real functions); absent file: no offset
    clock_offset_file: str | None = None

    # Stores
    redis_url: str = "redis://127.0.0.1:6379/0"
    redis_prefix: str = "pa"
    database_url: str | None = None  # direct pg8000 (local); unset in prod -> Cloud SQL connector
    cloud_sql_instance: str | None = None  # "project:region:instance"
    db_name: str = "assistant"
    db_iam_user: str | None = None  # service-account user name for IAM database authentication

    # Queues
    tasks_location: str = "europe-west6"
    extraction_queue: str = "extraction"
    extraction_url: str = "http://127.0.0.1:8521/"
    tasks_invoker_email: str = "tasks-invoker@local-project.iam.gserviceaccount.com"
    agents_topic: str = "agent-jobs"
    agents_invoker_email: str = "pubsub-invoker@local-project.iam.gserviceaccount.com"
    agents_url: str = "http://127.0.0.1:8523/"
    resume_url: str = "http://127.0.0.1:8522/"  # approval timeouts are delivered here
    hitl_timeout_queue: str = "hitl-timeouts"
    reminder_queue: str = "reminders"  # reminders ring through it (at their due_at)
    approval_timeout_seconds: int = Field(default=1800, ge=1)  # unanswered: auto-rejected
    max_event_age_seconds: int = 3600

    # Models: "vertex" is Gemini on Vertex AI; in dev and test the same adapters may talk to
    # another endpoint of the same REST API (the stack's local model service, or the tests'
    # fake) at vertex_base_url with a static vertex_access_token. "scripted" is for tests.
    model_provider: ModelProvider = "vertex"
    vertex_location: str = "europe-west4"
    # One model per kind of work (shared/model_catalog.py: defaults, retirement dates).
    vertex_model: str = DEFAULT_MODELS["reply"]  # the reply the user reads
    vertex_routing_model: str = DEFAULT_MODELS["routing"]
    vertex_planning_model: str = DEFAULT_MODELS["planning"]
    vertex_extraction_model: str = DEFAULT_MODELS["extraction"]
    vertex_watchdog_model: str = DEFAULT_MODELS["watchdog"]
    vertex_judge_model: str = DEFAULT_MODELS["judge"]
    vertex_embedding_model: str = DEFAULT_EMBEDDING_MODEL
    vertex_base_url: str | None = None  # dev/test only: a local endpoint of the Vertex API
    vertex_access_token: str | None = None  # dev/test only: that endpoint's static token
    embedding_dimension: int = 768
    # Reranking of the fused retrieval candidates: the Vertex AI ranking API (Discovery
    # Engine) in production, the identity locally.
    reranker: Literal["identity", "vertex"] = "identity"
    ranking_model: str = "semantic-ranker-default-004"
    ranking_location: str = "global"
    ranking_base_url: str | None = None  # only to point it at a fake endpoint in tests
    # The deterministic understanding tier (shared/understanding) reads every message before
    # any model call; what it settles costs no call. "reply": an answer quoted from the
    # stored facts is the reply (a weak model, like the offline one, garbles it); "ground":
    # it is handed to the model as the answer to phrase.
    understanding_tier: bool = True
    understanding_answers: Literal["ground", "reply"] = "ground"
    # How much the chat model can be trusted with. "weak" (the offline SmolLM2, which
    # routes worse than the tier's nearest examples and loops in the research agent):
    # a route the tier leaves open (too close to call) takes the nearest label instead of
    # a classification call; a reply to a question that the tier cannot read escapes the
    # question instead of asking the model whether it answers; a research request is
    # answered in the reply, from what is known, instead of by the research agent.
    # "strong" (Gemini, production): the model is asked in each of those three places.
    model_strength: Literal["strong", "weak"] = "strong"
    # Who reads a message for facts in the extraction task: "model" (one structured call),
    # or "understanding": only what the tier read (whole, or the parts it was sure of), no
    # model call. For a model whose reading stores junk (the offline one: docs/local-stack.md
    # "What works offline"); "model" in production.
    extraction_reader: Literal["model", "understanding"] = "model"
    # A message the tier leaves open (its people read): the memory its nearest label asks
    # for is read and the reply call started beside the classification call, shown only if
    # the classification agrees (shared/graph/early_reply.py). False: one after the other.
    speculative_reply: bool = True
    # Output cap of a free reply (the simple path's model-written answer); a reply with
    # agent results keeps the request's default. On one local generation at a time, a
    # short answer waits behind another turn's reply: capping free replies bounds that wait.
    free_reply_max_output_tokens: int = Field(default=512, ge=16, le=8192)

    # End-user authentication (Firebase Authentication / Identity Platform ID tokens)
    auth_issuer: str = "https://securetoken.google.com/local-project"
    auth_audience: str = "local-project"
    auth_jwks_url: str = (
        "https://www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com"
    )
    auth_jwks_file: str | None = None  # local: the key set scripts/stack generates
    # Internal callers (Cloud Tasks, Pub/Sub push) present Google-signed OIDC tokens in prod;
    # locally the stack signs equivalent tokens with its own key (docs/api.md, "Authentication").
    internal_jwks_file: str | None = None
    internal_issuer: str = "https://accounts.google.com"

    # Encryption at rest: per-user data keys wrapped by a key-encryption key
    kek_provider: Literal["local", "kms"] = "local"
    local_kek_file: str | None = None  # dev/test: 32 random bytes written by scripts/stack
    kms_key_name: str | None = None  # prod: projects/P/locations/L/keyRings/R/cryptoKeys/K
    # Signs the API's page tokens (shared/rest/paging.py). Production: a Secret Manager secret
    # (terraform makes it); locally a fixed key is enough, tokens only guard a test user.
    page_token_key: SecretStr | None = None

    # Agents: where messages sent on the user's behalf go. "smtp": handed to the relay
    # below (shared/adapters/smtp_mailer.py) and recorded under the user with its answer;
    # "firestore": only recorded (unit tests, a deployment that must send nothing).
    outbox_provider: Literal["firestore", "smtp"] = "firestore"
    # The relay: production uses 587 with STARTTLS (Cloud Functions cannot use port 25);
    # the password is a Secret Manager secret (terraform). The local stack's SMTP server
    # (scripts/stacklib/mail.py) takes plain SMTP without login.
    smtp_host: str = "localhost"
    smtp_port: int = Field(default=587, ge=1, le=65535)
    smtp_starttls: bool = True
    smtp_username: str = ""
    smtp_password: SecretStr | None = None
    smtp_timeout_seconds: float = Field(default=20.0, gt=0, le=120)
    # The research agent's web search (shared/adapters/vertex_grounding.py): "vertex":
    # Gemini grounded in Google Search, on the model below (default: the reply model);
    # "none": no web_search tool. Against the local model service it answers that there is
    # no web there, and the agent says so.
    web_search_provider: Literal["none", "vertex"] = "none"
    vertex_grounding_model: str = ""
    # The public origin of /v1 (https://<api_domain>): calendar feed URLs are made from it.
    public_api_origin: str = Field(default="http://127.0.0.1", pattern=r"^https?://[^/]+$")
    # Sender identity: mail goes out from the product's address, with the user's own
    # address (their assistant profile's ``email``) as Reply-To.
    mail_from_address: str = Field(
        default="assistant@localhost", pattern=r"^[^@\s<>]+@[^@\s<>]+$", max_length=254
    )
    mail_from_name: str = Field(default="Assistant", pattern=r"^[^\x00-\x1f\x7f]{1,80}$")

    # Push (shared/services/notify): Web Push to browsers (VAPID key: a PEM P-256 private
    # key, from Secret Manager in production; locally a file scripts/stack generates), FCM
    # HTTP v1 to phones (the function's service account; locally the tests' fake endpoint).
    web_push_private_key: SecretStr | None = None
    web_push_key_file: str | None = None  # dev/test only
    web_push_subject: str = "mailto:assistant@example.com"  # VAPID "sub": who to call
    # Hosts (and their subdomains) a subscription's endpoint may name: the browsers' push
    # services. Nothing else is ever sent a request.
    web_push_hosts: str = (
        "fcm.googleapis.com,updates.push.services.mozilla.com,notify.windows.com,push.apple.com"
    )
    web_push_ca_file: str | None = None  # dev/test only: the local mock push service's CA
    fcm_enabled: bool = False
    fcm_project: str | None = None  # the Firebase project (default: gcp_project)
    fcm_base_url: str = "https://fcm.googleapis.com"
    fcm_access_token: str | None = None  # dev/test only: the fake FCM's static token

    # Degrading instead of falling over (shared/adapters/breaker.py): a dependency's
    # breaker opens after this many failures in a row and lets one probe through after the
    # reset time.
    breaker_failures: int = Field(default=3, ge=1)
    breaker_reset_seconds: float = Field(default=2.0, gt=0.0)
    redis_timeout_seconds: float = Field(default=2.0, gt=0.0)
    firestore_deadline_seconds: float = Field(default=10.0, gt=0.0)  # per call, retries included

    # Limits
    max_message_chars: int = 8000
    max_body_bytes: int = 65536
    rate_limit_per_minute: int = 30
    turn_lease_seconds: int = Field(default=30, ge=3)  # renewed while the turn runs
    turn_heartbeat_seconds: float = Field(default=0.5, gt=0.0)  # checks for a stop, renews
    chat_wait_seconds: float = Field(default=30.0, ge=0.0)  # a queued message waits this long
    history_messages: int = 20

    # The turn graph: summarization thresholds and the per-turn budget
    summarize_after_messages: int = 20  # unsummarized history longer than this is compressed
    summarize_after_tokens: int = 4000
    keep_recent_messages: int = 8  # kept verbatim after a summarization
    turn_token_budget: int = 30000  # model tokens (in + out) one turn may spend
    usd_per_million_input_tokens: float = 0.30  # for the turn's cost accounting
    usd_per_million_output_tokens: float = 2.50
    idempotency_ttl_days: int = 7

    # Human-in-the-loop escalation triggers (shared/services/hitl_policy.py)
    hitl_cost_limit_usd: float = Field(default=1.0, ge=0.0, allow_inf_nan=False)  # per action
    hitl_min_confidence: float = Field(default=0.6, ge=0.0, le=1.0)  # below: escalate
    hitl_max_consecutive_failures: int = Field(default=3, ge=1)  # this many: escalate

    # Agent jobs (shared/services/agent_jobs): the supervisor policy and the watchdog
    agent_max_steps: int = Field(default=30, ge=1)  # model steps per subtask
    agent_subtask_retries: int = Field(default=3, ge=0)  # on transient errors, backed off
    agent_retry_base_seconds: float = Field(default=0.5, ge=0.0)  # doubles per retry
    agent_retry_max_seconds: float = Field(default=8.0, ge=0.0)
    agent_parallelism: int = Field(default=6, ge=1)  # subtasks running at once
    agent_team_cap: int = Field(default=10, ge=1)  # subtasks per job, recruits included
    agent_job_token_budget: int = Field(default=60000, ge=1000)  # unless the job sets one
    agent_recruit_min_tokens: int = Field(default=4000, ge=0)  # left, for a recruit
    # Grounded web searches are billed apart from tokens (per search query on Gemini 3):
    # a job runs at most this many queries, beside its token budget.
    agent_job_max_web_queries: int = Field(default=20, ge=0)
    agent_mailbox_size: int = Field(default=50, ge=2)  # full: the oldest half is dropped
    agent_job_lease_seconds: int = Field(default=600, ge=30)  # a crashed run's hold
    agent_max_deliveries: int = Field(default=5, ge=1)  # the dead-letter policy's attempts
    watchdog_every_steps: int = Field(default=5, ge=1)
    watchdog_window_steps: int = Field(default=20, ge=1)
    operator_webhook_url: str | None = None  # escalations are POSTed here ("": none)

    # Learning from history (shared/services/history): the execution memory and its advisor
    advisor_enabled: bool = True  # False: every plan is made by the model, as without history
    advisor_reuse_confidence: float = Field(default=0.8, ge=0.0, le=1.0)  # above: reused as is
    advisor_example_confidence: float = Field(default=0.5, ge=0.0, le=1.0)  # from: an example
    advisor_min_similarity: float = Field(default=0.5, ge=0.0, le=1.0)  # below: unrelated
    advisor_half_life_days: float = Field(default=30.0, gt=0.0)  # a strategy's recency halves
    execution_memory_ttl_days: int = Field(default=180, ge=1)  # executions expire after

    @field_validator("model_provider", mode="before")
    @classmethod
    def _no_model_in_the_functions(cls, value: object) -> object:
        if value == "local":
            raise ConfigurationError(
                "MODEL_PROVIDER=local is gone: no function loads model weights any more. "
                "`scripts/stack up` serves the offline models over the Vertex API and writes "
                "MODEL_PROVIDER=vertex with VERTEX_BASE_URL to .stack/env"
            )
        return value

    @model_validator(mode="after")
    def _refuse_inconsistent_models(self) -> Settings:
        if self.vertex_access_token and not self.vertex_base_url:
            raise ConfigurationError("vertex_access_token is only for a local vertex_base_url")
        if self.model_provider != "vertex":
            return self  # the scripted model's hash vectors may be of any size in tests
        if self.embedding_dimension not in SEARCHABLE_DIMENSIONS:
            raise ConfigurationError(
                f"embedding_dimension {self.embedding_dimension}: fact search is indexed for "
                f"{SEARCHABLE_DIMENSIONS} only"
            )
        fixed = FIXED_DIMENSIONS.get(self.vertex_embedding_model)
        if fixed not in (None, self.embedding_dimension):
            raise ConfigurationError(
                f"{self.vertex_embedding_model} has {fixed} dimensions, not "
                f"embedding_dimension {self.embedding_dimension}"
            )
        return self

    @model_validator(mode="after")
    def _refuse_unsafe_production(self) -> Settings:
        if self.env in ("dev", "test"):
            return self
        local_only = {
            "auth_jwks_file": self.auth_jwks_file,
            "internal_jwks_file": self.internal_jwks_file,
            "vertex_access_token": self.vertex_access_token,
            "ranking_base_url": self.ranking_base_url,
            "clock_offset_file": self.clock_offset_file,
            "vertex_base_url": self.vertex_base_url,
            "cloud_tasks_emulator_host": self.cloud_tasks_emulator_host,
            "firestore_emulator_host": self.firestore_emulator_host,
            "local_kek_file": self.local_kek_file,
            "web_push_key_file": self.web_push_key_file,
            "web_push_ca_file": self.web_push_ca_file,
            "fcm_access_token": self.fcm_access_token,
        }
        set_locally = [name for name, value in local_only.items() if value]
        if set_locally:
            raise ConfigurationError(f"local-only settings set in {self.env}: {set_locally}")
        if self.fcm_base_url != "https://fcm.googleapis.com":
            raise ConfigurationError("fcm_base_url is only for a local fake")
        if self.page_token_key is None or len(self.page_token_key.get_secret_value()) < 16:
            raise ConfigurationError("outside dev/test, page_token_key is needed (16+ chars)")
        if not self.public_api_origin.startswith("https://"):
            raise ConfigurationError("outside dev/test, public_api_origin is an https origin")
        if self.outbox_provider == "smtp" and not self.smtp_starttls:
            raise ConfigurationError("outside dev/test, the mail relay is reached with STARTTLS")
        if self.kek_provider != "kms" or not self.kms_key_name:
            raise ConfigurationError("outside dev/test, data keys must be wrapped by Cloud KMS")
        if self.model_provider == "scripted":
            raise ConfigurationError("the scripted model is for tests only")
        if self.auth_audience.strip().lower() in _PLACEHOLDERS or "local" in self.auth_audience:
            raise ConfigurationError("auth_audience is a placeholder")
        return self

    def models(self) -> dict[ModelKind, str]:
        """The model of each kind of work."""
        return {
            "routing": self.vertex_routing_model,
            "reply": self.vertex_model,
            "planning": self.vertex_planning_model,
            "extraction": self.vertex_extraction_model,
            "watchdog": self.vertex_watchdog_model,
            "judge": self.vertex_judge_model,
        }

    @staticmethod
    def one_model(model: str) -> dict[str, str]:
        """Settings keywords that give every kind of work ``model`` (a local service)."""
        kinds = ("", "routing_", "planning_", "extraction_", "watchdog_", "judge_")
        return {f"vertex_{kind}model": model for kind in kinds}

    @property
    def is_local(self) -> bool:
        return self.env in ("dev", "test")

    @property
    def web_push_pem(self) -> bytes | None:
        """The VAPID private key (PEM), from the secret or, locally, the stack's file."""
        if self.web_push_private_key is not None:
            value = self.web_push_private_key.get_secret_value()
            # terraform's placeholder until the operator adds the key: Web Push is off
            return value.encode() if "-----BEGIN" in value else None
        if self.web_push_key_file:
            from pathlib import Path

            return Path(self.web_push_key_file).read_bytes()
        return None

    @property
    def page_token_secret(self) -> bytes:
        if self.page_token_key is not None:
            return self.page_token_key.get_secret_value().encode()
        return b"local page tokens: " + self.env.encode()  # refused outside dev/test above


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()


__all__ = ["Environment", "ModelProvider", "Settings", "get_settings"]
