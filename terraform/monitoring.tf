# Alerts on what users feel (errors, latency, time to first token), on the assistant asking
# for approval too often, on dead-lettered agent jobs, and on spend.
#
# The turn metrics read the structured log line "turn done" of the turn service
# (terraform/README.md lists the fields they need).

locals {
  function_service_names = [for name in keys(local.functions) : "\"${var.name_prefix}-${name}\""]
  run_services           = "resource.type = \"cloud_run_revision\" AND resource.labels.service_name = one_of(${join(", ", local.function_service_names)})"
  turn_log_filter        = "resource.type = \"cloud_run_revision\" AND resource.labels.service_name = \"${var.name_prefix}-turn\" AND jsonPayload.message = \"turn done\""
  notification_channels  = [for channel in google_monitoring_notification_channel.email : channel.id]
}

resource "google_monitoring_notification_channel" "email" {
  for_each     = toset(var.alert_emails)
  display_name = "${var.name_prefix} ${var.environment}: ${each.value}"
  type         = "email"
  labels = {
    email_address = each.value
  }
  depends_on = [google_project_service.api]
}

resource "google_logging_metric" "turn_latency" {
  name            = "${var.name_prefix}/turn_latency"
  description     = "Duration of the turn graph in ms."
  filter          = local.turn_log_filter
  value_extractor = "EXTRACT(jsonPayload.graph_ms)"

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "DISTRIBUTION"
    unit        = "ms"
  }
  bucket_options {
    exponential_buckets {
      num_finite_buckets = 40
      growth_factor      = 1.3
      scale              = 10
    }
  }
}

resource "google_logging_metric" "time_to_first_token" {
  name            = "${var.name_prefix}/time_to_first_token"
  description     = "ms from the request to the first streamed token of a simple turn."
  filter          = "${local.turn_log_filter} AND jsonPayload.route = \"simple\""
  value_extractor = "EXTRACT(jsonPayload.ttft_ms)"

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "DISTRIBUTION"
    unit        = "ms"
  }
  bucket_options {
    exponential_buckets {
      num_finite_buckets = 40
      growth_factor      = 1.3
      scale              = 10
    }
  }
}

resource "google_logging_metric" "turns" {
  name        = "${var.name_prefix}/turns"
  description = "Finished turns."
  filter      = local.turn_log_filter
  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "INT64"
  }
}

resource "google_logging_metric" "turn_interrupts" {
  name        = "${var.name_prefix}/turn_interrupts"
  description = "Turns that ended in a human-in-the-loop interrupt."
  filter      = "${local.turn_log_filter} AND jsonPayload.interrupted = true"
  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "INT64"
  }
}

resource "google_logging_metric" "function_errors" {
  name        = "${var.name_prefix}/function_errors"
  description = "Log entries at ERROR or above, per function."
  filter      = "${local.run_services} AND severity >= ERROR"
  label_extractors = {
    function = "EXTRACT(resource.labels.service_name)"
  }
  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "INT64"
    labels {
      key        = "function"
      value_type = "STRING"
    }
  }
}

resource "google_monitoring_alert_policy" "error_rate" {
  display_name          = "${var.name_prefix} ${var.environment}: 5xx share above ${var.error_rate_max * 100}%"
  combiner              = "OR"
  notification_channels = local.notification_channels

  conditions {
    display_name = "5xx / all requests, per function, over 5 minutes"
    condition_threshold {
      filter             = "${local.run_services} AND metric.type = \"run.googleapis.com/request_count\" AND metric.labels.response_code_class = \"5xx\""
      denominator_filter = "${local.run_services} AND metric.type = \"run.googleapis.com/request_count\""
      comparison         = "COMPARISON_GT"
      threshold_value    = var.error_rate_max
      duration           = "300s"
      aggregations {
        alignment_period     = "300s"
        per_series_aligner   = "ALIGN_DELTA"
        cross_series_reducer = "REDUCE_SUM"
        group_by_fields      = ["resource.labels.service_name"]
      }
      denominator_aggregations {
        alignment_period     = "300s"
        per_series_aligner   = "ALIGN_DELTA"
        cross_series_reducer = "REDUCE_SUM"
        group_by_fields      = ["resource.labels.service_name"]
      }
    }
  }
  conditions {
    display_name = "errors logged, per function, over 5 minutes"
    condition_threshold {
      filter          = "resource.type = \"cloud_run_revision\" AND metric.type = \"logging.googleapis.com/user/${google_logging_metric.function_errors.name}\""
      comparison      = "COMPARISON_GT"
      threshold_value = 10
      duration        = "0s"
      aggregations {
        alignment_period     = "300s"
        per_series_aligner   = "ALIGN_DELTA"
        cross_series_reducer = "REDUCE_SUM"
        group_by_fields      = ["metric.labels.function"]
      }
    }
  }

  alert_strategy {
    auto_close = "1800s"
  }
  documentation {
    mime_type = "text/markdown"
    content   = "Read the function's ERROR logs in Cloud Logging. 503 `dependency_unavailable` means a store or the model is down; anything else is a bug."
  }
}

resource "google_monitoring_alert_policy" "turn_latency" {
  display_name          = "${var.name_prefix} ${var.environment}: turn latency"
  combiner              = "OR"
  notification_channels = local.notification_channels

  conditions {
    display_name = "p95 of turn requests above ${var.turn_latency_p95_ms} ms for 10 minutes"
    condition_threshold {
      filter          = "resource.type = \"cloud_run_revision\" AND resource.labels.service_name = \"${var.name_prefix}-turn\" AND metric.type = \"run.googleapis.com/request_latencies\""
      comparison      = "COMPARISON_GT"
      threshold_value = var.turn_latency_p95_ms
      duration        = "600s"
      aggregations {
        alignment_period     = "300s"
        per_series_aligner   = "ALIGN_DELTA"
        cross_series_reducer = "REDUCE_PERCENTILE_95"
      }
    }
  }
  conditions {
    display_name = "p95 of the turn graph above ${var.turn_latency_p95_ms} ms for 10 minutes"
    condition_threshold {
      filter          = "resource.type = \"cloud_run_revision\" AND metric.type = \"logging.googleapis.com/user/${google_logging_metric.turn_latency.name}\""
      comparison      = "COMPARISON_GT"
      threshold_value = var.turn_latency_p95_ms
      duration        = "600s"
      aggregations {
        alignment_period     = "300s"
        per_series_aligner   = "ALIGN_DELTA"
        cross_series_reducer = "REDUCE_PERCENTILE_95"
      }
    }
  }
  conditions {
    display_name = "p95 time to first token of simple turns above ${var.ttft_p95_ms} ms for 10 minutes"
    condition_threshold {
      filter          = "resource.type = \"cloud_run_revision\" AND metric.type = \"logging.googleapis.com/user/${google_logging_metric.time_to_first_token.name}\""
      comparison      = "COMPARISON_GT"
      threshold_value = var.ttft_p95_ms
      duration        = "600s"
      aggregations {
        alignment_period     = "300s"
        per_series_aligner   = "ALIGN_DELTA"
        cross_series_reducer = "REDUCE_PERCENTILE_95"
      }
    }
  }

  alert_strategy {
    auto_close = "3600s"
  }
  documentation {
    mime_type = "text/markdown"
    content   = "Slow turns: check Vertex AI latency and quota, cold starts (instance count of turn), and Cloud SQL and Memorystore CPU."
  }
}

resource "google_monitoring_alert_policy" "interrupt_rate" {
  display_name          = "${var.name_prefix} ${var.environment}: approvals asked too often"
  combiner              = "OR"
  notification_channels = local.notification_channels

  conditions {
    display_name = "more than ${var.interrupt_rate_max * 100}% of turns interrupted over an hour"
    condition_threshold {
      filter             = "resource.type = \"cloud_run_revision\" AND metric.type = \"logging.googleapis.com/user/${google_logging_metric.turn_interrupts.name}\""
      denominator_filter = "resource.type = \"cloud_run_revision\" AND metric.type = \"logging.googleapis.com/user/${google_logging_metric.turns.name}\""
      comparison         = "COMPARISON_GT"
      threshold_value    = var.interrupt_rate_max
      duration           = "0s"
      aggregations {
        alignment_period     = "3600s"
        per_series_aligner   = "ALIGN_DELTA"
        cross_series_reducer = "REDUCE_SUM"
      }
      denominator_aggregations {
        alignment_period     = "3600s"
        per_series_aligner   = "ALIGN_DELTA"
        cross_series_reducer = "REDUCE_SUM"
      }
    }
  }

  documentation {
    mime_type = "text/markdown"
    content   = "Users are asked to approve more than a quarter of their turns: review the approval rules before they learn to click yes."
  }
}

resource "google_monitoring_alert_policy" "dead_letters" {
  display_name          = "${var.name_prefix} ${var.environment}: agent jobs dead-lettered"
  combiner              = "OR"
  notification_channels = local.notification_channels

  conditions {
    display_name = "a job failed 5 deliveries"
    condition_threshold {
      filter          = "resource.type = \"pubsub_subscription\" AND resource.labels.subscription_id = \"${google_pubsub_subscription.agent_jobs_push.name}\" AND metric.type = \"pubsub.googleapis.com/subscription/dead_letter_message_count\""
      comparison      = "COMPARISON_GT"
      threshold_value = 0
      duration        = "0s"
      aggregations {
        alignment_period     = "300s"
        per_series_aligner   = "ALIGN_DELTA"
        cross_series_reducer = "REDUCE_SUM"
      }
    }
  }

  documentation {
    mime_type = "text/markdown"
    content   = "Pull the messages from the agent-jobs-dead-letter subscription, read the agents function's logs for their job ids, fix, and republish to agent-jobs."
  }
}

resource "google_billing_budget" "monthly" {
  billing_account = var.billing_account
  display_name    = "${var.name_prefix} ${var.environment}"

  budget_filter {
    projects = ["projects/${data.google_project.this.number}"]
  }
  amount {
    specified_amount {
      currency_code = var.budget_currency
      units         = tostring(var.monthly_budget)
    }
  }
  threshold_rules {
    threshold_percent = 0.5
  }
  threshold_rules {
    threshold_percent = 0.9
  }
  threshold_rules {
    threshold_percent = 1.0
    spend_basis       = "FORECASTED_SPEND"
  }
  all_updates_rule {
    monitoring_notification_channels = local.notification_channels
  }

  depends_on = [google_project_service.api]
}
