# The deployed configuration of the code: every field of shared/config.py:Settings, as the
# upper-case environment variable it is read from. tests/terraform/test_settings.py holds this
# map and Settings together (same names, and a valid Settings in every environment), and
# lists the local-only fields that stay unset here on purpose.
locals {
  settings = {
    ENV         = var.app_env
    GCP_PROJECT = var.project_id
    GCP_REGION  = var.region
    LOG_LEVEL   = var.log_level

    REDIS_PREFIX       = "pa"
    CLOUD_SQL_INSTANCE = google_sql_database_instance.main.connection_name
    DB_NAME            = google_sql_database.app.name

    TASKS_LOCATION           = google_cloud_tasks_queue.extraction.location
    EXTRACTION_QUEUE         = google_cloud_tasks_queue.extraction.name
    EXTRACTION_URL           = local.function_urls.extraction
    TASKS_INVOKER_EMAIL      = google_service_account.invoker["tasks"].email
    AGENTS_TOPIC             = google_pubsub_topic.agent_jobs.name
    AGENTS_INVOKER_EMAIL     = google_service_account.invoker["pubsub"].email
    AGENTS_URL               = local.function_urls.agents
    RESUME_URL               = local.function_urls.resume
    HITL_TIMEOUT_QUEUE       = google_cloud_tasks_queue.hitl_timeouts.name
    REMINDER_QUEUE           = google_cloud_tasks_queue.reminders.name
    APPROVAL_TIMEOUT_SECONDS = 1800
    MAX_EVENT_AGE_SECONDS    = 3600

    MODEL_PROVIDER          = "vertex"
    VERTEX_LOCATION         = var.vertex_location
    VERTEX_MODEL            = var.vertex_model
    VERTEX_ROUTING_MODEL    = var.vertex_routing_model
    VERTEX_PLANNING_MODEL   = var.vertex_planning_model
    VERTEX_EXTRACTION_MODEL = var.vertex_extraction_model
    VERTEX_WATCHDOG_MODEL   = var.vertex_watchdog_model
    VERTEX_JUDGE_MODEL      = var.vertex_judge_model
    VERTEX_EMBEDDING_MODEL  = var.vertex_embedding_model
    EMBEDDING_DIMENSION     = var.embedding_dimension
    # Retrieval reranks its fused candidates with the Vertex AI ranking API.
    RERANKER         = "vertex"
    RANKING_MODEL    = "semantic-ranker-default-004"
    RANKING_LOCATION = "global"
    # The deterministic understanding tier runs before every model call (MiniLM in the
    # function, with spaCy and dateparser); Gemini phrases its extractive answers and
    # classifies what the tier leaves open (no guessing: Gemini routes better than a guess),
    # judges replies to questions and runs the research agent (a strong model).
    UNDERSTANDING_TIER    = true
    UNDERSTANDING_ANSWERS = "ground"
    MODEL_STRENGTH        = "strong"
    EXTRACTION_READER     = "model"
    # The reply call starts beside classification when the tier reads plain chat (one model
    # round trip before the first token instead of two; docs/architecture.md, "Time to first token").
    SPECULATIVE_REPLY = true
    # The cap of a free reply (Gemini's answers are short; the local model's are capped
    # lower so a short answer does not wait behind a long one).
    FREE_REPLY_MAX_OUTPUT_TOKENS = 512

    # Firebase Authentication of this project issues the users' ID tokens.
    AUTH_ISSUER     = "https://securetoken.google.com/${var.project_id}"
    AUTH_AUDIENCE   = var.project_id
    AUTH_JWKS_URL   = "https://www.googleapis.com/service_accounts/v1/jwk/securetoken@system.gserviceaccount.com"
    INTERNAL_ISSUER = "https://accounts.google.com"

    KEK_PROVIDER = "kms"
    KMS_KEY_NAME = google_kms_crypto_key.data_keys.id

    # Mail the agents send for the user goes to the relay on 587 with STARTTLS (Cloud
    # Functions cannot use port 25), from the product's address, the user's as Reply-To;
    # the outbox in Firestore records each send and the relay's answer.
    OUTBOX_PROVIDER      = "smtp"
    SMTP_HOST            = var.smtp_host
    SMTP_PORT            = 587
    SMTP_STARTTLS        = true
    SMTP_USERNAME        = var.smtp_username
    SMTP_TIMEOUT_SECONDS = 20
    MAIL_FROM_ADDRESS    = var.mail_from_address
    MAIL_FROM_NAME       = var.mail_from_name
    # Calendar feed URLs are made on the one origin (or the memory function's own URL).
    PUBLIC_API_ORIGIN = "https://${var.api_domain == null ? trimprefix(local.function_urls.memory, "https://") : var.api_domain}"
    # The research agent searches the web with Gemini grounded in Google Search.
    WEB_SEARCH_PROVIDER    = "vertex"
    VERTEX_GROUNDING_MODEL = var.vertex_model

    # Degrading instead of falling over: a dependency's circuit breaker opens after three
    # failures in a row and probes again after 2 s; Redis answers in 2 s or counts as down;
    # every Firestore call gives up after 10 s (its generated retries included).
    BREAKER_FAILURES           = 3
    BREAKER_RESET_SECONDS      = 2.0
    REDIS_TIMEOUT_SECONDS      = 2.0
    FIRESTORE_DEADLINE_SECONDS = 10.0

    MAX_MESSAGE_CHARS     = 8000
    MAX_BODY_BYTES        = 65536
    RATE_LIMIT_PER_MINUTE = var.rate_limit_per_minute
    # A running turn's claim (and its chat) is renewed by its heartbeat; a crashed one is
    # free again within the lease. A message waits for its chat at most CHAT_WAIT_SECONDS.
    TURN_LEASE_SECONDS     = 30
    TURN_HEARTBEAT_SECONDS = 0.5
    CHAT_WAIT_SECONDS      = 30
    HISTORY_MESSAGES       = 20
    IDEMPOTENCY_TTL_DAYS   = 7

    # The turn graph: summarization thresholds, the per-turn token budget, and the prices of
    # gemini-2.5-flash for the turn's cost accounting (to be updated for the 3.5 defaults).
    SUMMARIZE_AFTER_MESSAGES      = 20
    SUMMARIZE_AFTER_TOKENS        = 4000
    KEEP_RECENT_MESSAGES          = 8
    TURN_TOKEN_BUDGET             = 30000
    USD_PER_MILLION_INPUT_TOKENS  = 0.30
    USD_PER_MILLION_OUTPUT_TOKENS = 2.50

    # Human-in-the-loop escalation triggers (seed thresholds: $1 per action, confidence
    # below 0.6, three failures in a row).
    HITL_COST_LIMIT_USD           = 1.0
    HITL_MIN_CONFIDENCE           = 0.6
    HITL_MAX_CONSECUTIVE_FAILURES = 3

    # Agent jobs: the supervisor policy and the watchdog. The lease
    # outlives the agents function's timeout; deliveries match the dead-letter policy.
    AGENT_MAX_STEPS           = 30
    AGENT_SUBTASK_RETRIES     = 3
    AGENT_RETRY_BASE_SECONDS  = 0.5
    AGENT_RETRY_MAX_SECONDS   = 8.0
    AGENT_PARALLELISM         = 6
    AGENT_TEAM_CAP            = 10
    AGENT_JOB_TOKEN_BUDGET    = 60000
    AGENT_RECRUIT_MIN_TOKENS  = 4000
    AGENT_JOB_MAX_WEB_QUERIES = 20
    AGENT_MAILBOX_SIZE        = 50
    AGENT_JOB_LEASE_SECONDS   = 600 # > the agents function's 540 s timeout
    AGENT_MAX_DELIVERIES      = 5   # agent_jobs_push's dead_letter_policy.max_delivery_attempts
    WATCHDOG_EVERY_STEPS      = 5
    WATCHDOG_WINDOW_STEPS     = 20
    # An operator endpoint for escalations, per environment through settings_overrides.
    OPERATOR_WEBHOOK_URL = ""

    # Learning from history: above 0.8 confidence a past plan is reused without a
    # planning call, from 0.5 it is the planner's example; executions expire after 180 days.
    ADVISOR_ENABLED            = true
    ADVISOR_REUSE_CONFIDENCE   = 0.8
    ADVISOR_EXAMPLE_CONFIDENCE = 0.5
    ADVISOR_MIN_SIMILARITY     = 0.5
    ADVISOR_HALF_LIFE_DAYS     = 30
    EXECUTION_MEMORY_TTL_DAYS  = 180

    # Push (docs/notifications.md): Web Push to the browsers' push services, FCM to phones.
    WEB_PUSH_SUBJECT = var.web_push_subject
    WEB_PUSH_HOSTS   = "fcm.googleapis.com,updates.push.services.mozilla.com,notify.windows.com,push.apple.com"
    FCM_ENABLED      = var.fcm_enabled
    FCM_PROJECT      = var.project_id
    FCM_BASE_URL     = "https://fcm.googleapis.com"
  }

  # Values that differ per function: each one logs in to PostgreSQL as its own service account.
  function_settings = {
    for name in keys(local.functions) : name => {
      DB_IAM_USER = trimsuffix(google_service_account.function[name].email, ".gserviceaccount.com")
    }
  }

  # Settings read from Secret Manager: the Redis URL carries the AUTH string and the CA; the
  # page token key signs the API's page tokens; the mail relay's password is added by an
  # operator (never in the state).
  secret_settings = {
    REDIS_URL      = google_secret_manager_secret.redis_url.secret_id
    PAGE_TOKEN_KEY = google_secret_manager_secret.page_token_key.secret_id
    SMTP_PASSWORD  = google_secret_manager_secret.smtp_password.secret_id
    # Web Push's VAPID key (a placeholder until the operator adds it: Web Push is off then)
    WEB_PUSH_PRIVATE_KEY = google_secret_manager_secret.web_push_vapid_key.secret_id
  }

  # Deterministic Cloud Run URLs, known before the functions exist: a function's own URL is
  # the audience it checks, so it cannot come from the function resource itself.
  function_urls = {
    for name in keys(local.functions) :
    name => "https://${var.name_prefix}-${name}-${data.google_project.this.number}.${var.region}.run.app"
  }
}
