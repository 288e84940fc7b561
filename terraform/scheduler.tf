# The expiry job: facts whose durability ran out (short: days, medium: weeks, long: months)
# are closed with valid_to, never deleted. Cloud Scheduler POSTs, once an hour, to the
# extraction function's /expire with the same OIDC token (invoker account, audience) that
# extraction already checks for its tasks; shared/app/expiry.py does the work in batches.
resource "google_cloud_scheduler_job" "fact_expiry" {
  name             = "fact-expiry"
  region           = var.region
  description      = "Close facts whose durability ran out (shared/app/expiry.py)"
  schedule         = "17 * * * *"
  time_zone        = "Etc/UTC"
  attempt_deadline = "320s" # the extraction function's timeout is 300 s

  retry_config {
    retry_count          = 3
    min_backoff_duration = "60s"
    max_backoff_duration = "600s"
    max_doublings        = 2
  }

  http_target {
    http_method = "POST"
    uri         = "${local.function_urls.extraction}/expire"
    oidc_token {
      service_account_email = google_service_account.invoker["tasks"].email
      audience              = local.function_urls.extraction
    }
  }

  depends_on = [google_project_service.api]
}

# Cloud Scheduler's service agent mints the invoker's OIDC token for each run.
resource "google_project_service_identity" "scheduler_agent" {
  provider   = google-beta
  service    = "cloudscheduler.googleapis.com"
  depends_on = [google_project_service.api]
}

resource "google_service_account_iam_member" "scheduler_token_creator" {
  service_account_id = google_service_account.invoker["tasks"].name
  role               = "roles/iam.serviceAccountTokenCreator"
  member             = "serviceAccount:${google_project_service_identity.scheduler_agent.email}"
}
