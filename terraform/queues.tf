# Background work: Cloud Tasks for extraction (and the approval timeouts of the human-in-the-
# loop work), Pub/Sub for agent jobs. Both deliver at least once; the handlers are idempotent.

resource "google_cloud_tasks_queue" "extraction" {
  name     = "extraction"
  location = var.region

  rate_limits {
    max_dispatches_per_second = var.extraction_queue.max_dispatches_per_second
    max_concurrent_dispatches = var.extraction_queue.max_concurrent_dispatches
  }

  retry_config {
    max_attempts  = var.extraction_queue.max_attempts
    min_backoff   = var.extraction_queue.min_backoff
    max_backoff   = var.extraction_queue.max_backoff
    max_doublings = 4
  }

  # Every task reaches the function with the invoker's OIDC token for the function's URL,
  # whatever the enqueuer asked for.
  http_target {
    oidc_token {
      service_account_email = google_service_account.invoker["tasks"].email
      audience              = local.function_urls.extraction
    }
  }

  stackdriver_logging_config {
    sampling_ratio = 1.0
  }

  depends_on = [google_project_service.api]
}

# Scheduled approval timeouts for pending interrupts, delivered to resume.
resource "google_cloud_tasks_queue" "hitl_timeouts" {
  name     = "hitl-timeouts"
  location = var.region

  rate_limits {
    max_dispatches_per_second = 5
    max_concurrent_dispatches = 5
  }

  retry_config {
    max_attempts  = 5
    min_backoff   = "10s"
    max_backoff   = "300s"
    max_doublings = 3
  }

  http_target {
    oidc_token {
      service_account_email = google_service_account.invoker["tasks"].email
      audience              = local.function_urls.resume
    }
  }

  stackdriver_logging_config {
    sampling_ratio = 1.0
  }

  depends_on = [google_project_service.api]
}

# Reminders ring through it at their due_at, and the notifications of approvals and jobs go
# through it (both to resume). A task carries its own OIDC token, audience its exact URL.
# 1,000 reminders due in the same minute is the load it is sized for (bench/reminders.py).
resource "google_cloud_tasks_queue" "reminders" {
  name     = "reminders"
  location = var.region

  rate_limits {
    max_dispatches_per_second = 100
    max_concurrent_dispatches = 100
  }

  retry_config {
    max_attempts  = 10
    min_backoff   = "5s"
    max_backoff   = "300s"
    max_doublings = 4
  }

  stackdriver_logging_config {
    sampling_ratio = 1.0
  }

  depends_on = [google_project_service.api]
}

resource "google_pubsub_topic" "agent_jobs" {
  name                       = "agent-jobs"
  message_retention_duration = "86400s"
  kms_key_name               = google_kms_crypto_key.at_rest.id
  depends_on                 = [google_kms_crypto_key_iam_member.at_rest]
}

resource "google_pubsub_topic" "agent_jobs_dead_letter" {
  name                       = "agent-jobs-dead-letter"
  message_retention_duration = "604800s"
  kms_key_name               = google_kms_crypto_key.at_rest.id
  depends_on                 = [google_kms_crypto_key_iam_member.at_rest]
}

# Authenticated push, as the local stack's relay emulates it: the /projects/P/topics/T path
# lets functions-framework build the CloudEvent from the plain push body.
resource "google_pubsub_subscription" "agent_jobs_push" {
  name                       = "agent-jobs-push"
  topic                      = google_pubsub_topic.agent_jobs.id
  ack_deadline_seconds       = 600 # the push deadline; agents times out at 540 s
  message_retention_duration = "604800s"

  push_config {
    push_endpoint = "${local.function_urls.agents}/projects/${var.project_id}/topics/${google_pubsub_topic.agent_jobs.name}"
    oidc_token {
      service_account_email = google_service_account.invoker["pubsub"].email
      audience              = local.function_urls.agents
    }
  }

  dead_letter_policy {
    dead_letter_topic     = google_pubsub_topic.agent_jobs_dead_letter.id
    max_delivery_attempts = 5
  }

  retry_policy {
    minimum_backoff = "10s"
    maximum_backoff = "600s"
  }

  expiration_policy {
    ttl = "" # never expires for lack of traffic
  }

  depends_on = [google_pubsub_topic_iam_member.dead_letter_publisher]
}

# Operators read dead-lettered jobs here (and the alert in monitoring.tf counts them).
resource "google_pubsub_subscription" "agent_jobs_dead_letter" {
  name                       = "agent-jobs-dead-letter"
  topic                      = google_pubsub_topic.agent_jobs_dead_letter.id
  message_retention_duration = "604800s"

  expiration_policy {
    ttl = ""
  }
}

# Handoffs a turn kept while Cloud Tasks or Pub/Sub were down (the turn record's outbox) are
# sent by the chat's next turn, and by this drain every minute for chats that went quiet.
# resume checks the OIDC token: the tasks invoker's, for exactly this URL.
resource "google_cloud_scheduler_job" "outbox_drain" {
  name             = "${var.name_prefix}-outbox-drain"
  region           = var.region
  schedule         = "* * * * *"
  time_zone        = "Etc/UTC"
  attempt_deadline = "120s"

  retry_config {
    retry_count = 0 # the next minute's run is the retry
  }

  http_target {
    http_method = "POST"
    uri         = "${local.function_urls.resume}/outbox/drain"
    body        = base64encode("{}")
    headers     = { "Content-Type" = "application/json" }

    oidc_token {
      service_account_email = google_service_account.invoker["tasks"].email
      audience              = "${local.function_urls.resume}/outbox/drain"
    }
  }

  depends_on = [google_project_service.api]
}

# Reminders further ahead than Cloud Tasks' 30 days, and those whose task could not be made
# (a queue outage), get their task from this sweep; every 10 minutes bounds how late an
# outage can make one ring. resume checks the tasks invoker's OIDC token for exactly this URL.
resource "google_cloud_scheduler_job" "reminder_sweep" {
  name             = "${var.name_prefix}-reminder-sweep"
  region           = var.region
  schedule         = "*/10 * * * *"
  time_zone        = "Etc/UTC"
  attempt_deadline = "300s"

  retry_config {
    retry_count = 0 # the next run is the retry
  }

  http_target {
    http_method = "POST"
    uri         = "${local.function_urls.resume}/reminders/sweep"
    body        = base64encode("{}")
    headers     = { "Content-Type" = "application/json" }

    oidc_token {
      service_account_email = google_service_account.invoker["tasks"].email
      audience              = "${local.function_urls.resume}/reminders/sweep"
    }
  }

  depends_on = [google_project_service.api]
}
