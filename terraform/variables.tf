# One project per environment: Firestore's (default) database, the budget and the service
# agents are per project, so environments never share one.

variable "project_id" {
  description = "The GCP project this environment lives in."
  type        = string
}

variable "environment" {
  description = "dev, staging or prod: names, labels and sizes."
  type        = string
  validation {
    condition     = contains(["dev", "staging", "prod"], var.environment)
    error_message = "environment is dev, staging or prod."
  }
}

variable "app_env" {
  description = "Settings.env of the deployed code. Settings treats ENV=dev as a laptop (it accepts key files and emulator hosts), so a deployed dev environment runs with staging's checks."
  type        = string
  validation {
    condition     = contains(["staging", "prod"], var.app_env)
    error_message = "a deployed environment runs as staging or prod, never dev/test."
  }
}

variable "name_prefix" {
  description = "Prefix of every named resource (functions, service accounts, instances)."
  type        = string
  default     = "assistant"
  validation {
    # Service account ids stop at 30 characters, "<prefix>-pubsub-invoker" is the longest.
    condition     = can(regex("^[a-z][a-z0-9-]{2,14}$", var.name_prefix))
    error_message = "name_prefix: 3 to 15 lower-case letters, digits or dashes."
  }
}

variable "region" {
  description = "Region of the functions, queues, Cloud SQL and Memorystore."
  type        = string
  default     = "europe-west6"
}

variable "firestore_location" {
  description = "Firestore location: a region, or a multi-region such as eur3."
  type        = string
  default     = "europe-west6"
}

variable "vertex_location" {
  description = "Vertex AI location of the models."
  type        = string
  default     = "europe-west4"
}

# One model per kind of work; the defaults, their retirement dates and the page each date
# comes from are in shared/model_catalog.py (a retired id answers 404 to every call).
variable "vertex_model" {
  description = "The model of the reply the user reads."
  type        = string
  default     = "gemini-3.5-flash"
}

variable "vertex_routing_model" {
  description = "The model that classifies and routes a message."
  type        = string
  default     = "gemini-3.5-flash-lite"
}

variable "vertex_planning_model" {
  description = "The model that plans and runs agent steps."
  type        = string
  default     = "gemini-3.5-flash"
}

variable "vertex_extraction_model" {
  description = "The model that reads facts out of messages and summarises chats."
  type        = string
  default     = "gemini-3.5-flash-lite"
}

variable "vertex_watchdog_model" {
  description = "The model that watches agent jobs for loops."
  type        = string
  default     = "gemini-3.5-flash-lite"
}

variable "vertex_judge_model" {
  description = "The model that judges the evaluation's answers."
  type        = string
  default     = "gemini-3.5-flash"
}

variable "vertex_embedding_model" {
  type    = string
  default = "gemini-embedding-001"
}

variable "embedding_dimension" {
  description = "Must match an HNSW index of the migrations (768 or 384)."
  type        = number
  default     = 768
  validation {
    condition     = contains([384, 768], var.embedding_dimension)
    error_message = "the migrations index 384- and 768-dimension embeddings only."
  }
}

variable "log_level" {
  type    = string
  default = "INFO"
}

variable "rate_limit_per_minute" {
  description = "Turns per user per minute before 429."
  type        = number
  default     = 30
}

variable "settings_overrides" {
  description = "Extra Settings values (UPPER_CASE name => value) applied over the generated map; tests/terraform checks each name is a Settings field."
  type        = map(string)
  default     = {}
}

variable "function_scaling" {
  description = "Instances per function. turn and resume keep warm instances in prod: a cold start costs seconds."
  type = map(object({
    min_instances = number
    max_instances = number
  }))
  validation {
    condition     = alltrue([for s in values(var.function_scaling) : s.min_instances <= s.max_instances])
    error_message = "min_instances must not exceed max_instances."
  }
}

variable "db_tier" {
  description = "Cloud SQL machine tier."
  type        = string
}

variable "db_availability_type" {
  description = "ZONAL, or REGIONAL for a standby in a second zone."
  type        = string
  default     = "ZONAL"
}

variable "db_disk_size_gb" {
  type    = number
  default = 10
}

variable "db_point_in_time_recovery" {
  description = "Write-ahead logs kept for point-in-time recovery (prod)."
  type        = bool
  default     = false
}

variable "db_backup_count" {
  description = "Automated daily backups kept."
  type        = number
  default     = 7
}

variable "deletion_protection" {
  description = "Refuse to delete Cloud SQL and Firestore (prod)."
  type        = bool
  default     = true
}

variable "redis_tier" {
  description = "BASIC, or STANDARD_HA for a replica with automatic failover."
  type        = string
  default     = "BASIC"
}

variable "redis_memory_size_gb" {
  type    = number
  default = 1
}

variable "extraction_queue" {
  description = "Dispatch limits and retries of the extraction queue."
  type = object({
    max_dispatches_per_second = number
    max_concurrent_dispatches = number
    max_attempts              = number
    min_backoff               = string
    max_backoff               = string
  })
  default = {
    max_dispatches_per_second = 5
    max_concurrent_dispatches = 10
    max_attempts              = 8
    min_backoff               = "10s"
    max_backoff               = "600s"
  }
}

variable "db_proxy" {
  description = "Run the Cloud SQL Auth Proxy VM that migrations go through (docs/deploy.md). Off between migrations."
  type        = bool
  default     = false
}

variable "db_proxy_image" {
  type    = string
  default = "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.18.2"
}

variable "alert_emails" {
  description = "Who receives alerts and budget notifications."
  type        = list(string)
}

variable "billing_account" {
  description = "Billing account id (XXXXXX-XXXXXX-XXXXXX) the budget watches."
  type        = string
}

variable "monthly_budget" {
  description = "Monthly budget in budget_currency; alerts at 50%, 90% and 100% (forecast)."
  type        = number
}

variable "budget_currency" {
  description = "The billing account's currency (a budget in another currency is refused)."
  type        = string
  default     = "USD"
}

variable "turn_latency_p95_ms" {
  description = "Alert when the p95 of a whole turn exceeds this."
  type        = number
  default     = 20000
}

variable "ttft_p95_ms" {
  description = "Alert when the p95 time to first token of simple turns exceeds this (Swisper: 5 s)."
  type        = number
  default     = 5000
}

variable "interrupt_rate_max" {
  description = "Alert when more than this share of turns end in a human-in-the-loop interrupt (Swisper: 25%)."
  type        = number
  default     = 0.25
}

variable "error_rate_max" {
  description = "Alert when more than this share of a function's requests answer 5xx."
  type        = number
  default     = 0.05
}

# -- the one API origin (edge.tf) ------------------------------------------------------------

variable "api_domain" {
  description = "Domain of the clients' API (api.example.com): the load balancer, its managed certificate and Cloud Armor serve https://<api_domain>/v1. Null: no load balancer, and turn, resume and memory answer the internet on their own URLs."
  type        = string
  default     = null
  validation {
    condition     = var.api_domain == null || can(regex("^([a-z0-9]([a-z0-9-]*[a-z0-9])?\\.)+[a-z]{2,}$", var.api_domain))
    error_message = "api_domain: a lower-case host name such as api.example.com, without scheme or path."
  }
}

variable "armor_enforce_waf" {
  description = "false: the OWASP rules only log what they would block (preview); true: they block. Flip after the logs show no false positives (docs/deploy.md)."
  type        = bool
  default     = false
}

variable "armor_rate_limit" {
  description = "Per client IP: above count requests per interval_sec the excess answers 429; above ban_count per ban_interval_sec the IP is refused for ban_duration_sec."
  type = object({
    count            = number
    interval_sec     = number
    ban_count        = number
    ban_interval_sec = number
    ban_duration_sec = number
  })
  # A busy client (a streamed turn plus its list calls) stays far below 300 a minute;
  # offices behind one NAT address get room.
  default = {
    count            = 300
    interval_sec     = 60
    ban_count        = 3000
    ban_interval_sec = 600
    ban_duration_sec = 600
  }
}

# -- mail sent for the user (shared/adapters/smtp_mailer.py) ---------------------------------

variable "smtp_host" {
  description = "The mail relay the agents' email_send hands mail to, on port 587 with STARTTLS (Cloud Functions cannot use port 25). Its password is the Secret Manager secret <name_prefix>-smtp-password: add its value with `gcloud secrets versions add` (docs/agents.md, \"Mail, calendar feed and web search\")."
  type        = string
  default     = "smtp.example.com"
}

variable "smtp_username" {
  description = "The relay's login (its password is the secret above)."
  type        = string
  default     = "assistant@example.com"
}

variable "mail_from_address" {
  description = "The product's address mail is sent from (the relay must allow it); the user's own address goes in Reply-To."
  type        = string
  default     = "assistant@example.com"
  validation {
    condition     = can(regex("^[^@\\s<>]+@[^@\\s<>]+$", var.mail_from_address))
    error_message = "mail_from_address: one plain address, such as assistant@example.com."
  }
}

variable "mail_from_name" {
  description = "The name shown with the sender's address."
  type        = string
  default     = "Assistant"
}

variable "web_push_subject" {
  description = "VAPID subject (RFC 8292): a mailto: or https: URL where push services can reach the operator."
  type        = string
  default     = "mailto:ops@example.com"
}

variable "fcm_enabled" {
  description = "Send push to phones through FCM HTTP v1 (the project must have Firebase Cloud Messaging enabled)."
  type        = bool
  default     = false
}
