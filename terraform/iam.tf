# Least privilege: one service account per function, granted only what its code uses; two
# invoker accounts that alone may call extraction (Cloud Tasks) and agents (Pub/Sub push).
# No account holds a primitive role (tests/terraform/test_iam.py).

resource "google_service_account" "function" {
  for_each     = local.functions
  account_id   = "${var.name_prefix}-${each.key}"
  display_name = "${each.key} function (${var.environment})"
}

resource "google_service_account" "invoker" {
  for_each     = toset(["tasks", "pubsub"])
  account_id   = "${var.name_prefix}-${each.key}-invoker"
  display_name = "Signs the OIDC tokens ${each.key} presents to the functions it calls"
}

resource "google_service_account" "builder" {
  account_id   = "${var.name_prefix}-builder"
  display_name = "Cloud Build of the function bundles"
}

resource "google_service_account" "db_proxy" {
  account_id   = "${var.name_prefix}-db-proxy"
  display_name = "Cloud SQL Auth Proxy VM used for migrations"
}

locals {
  # Project-level roles: Firestore, Cloud SQL, Vertex AI and the ranking API (Discovery
  # Engine: rankingConfigs.rank, in its viewer role) have no narrower grant for them.
  # resume finishes the turns it continues, so it hands off work exactly like turn.
  function_project_roles = {
    turn       = ["roles/datastore.user", "roles/cloudsql.client", "roles/cloudsql.instanceUser", "roles/aiplatform.user", "roles/discoveryengine.viewer"]
    resume     = ["roles/datastore.user", "roles/cloudsql.client", "roles/cloudsql.instanceUser", "roles/aiplatform.user", "roles/discoveryengine.viewer"]
    memory     = ["roles/datastore.user", "roles/cloudsql.client", "roles/cloudsql.instanceUser", "roles/aiplatform.user", "roles/discoveryengine.viewer"]
    extraction = ["roles/cloudsql.client", "roles/cloudsql.instanceUser", "roles/aiplatform.user"]
    agents     = ["roles/datastore.user", "roles/aiplatform.user"]
  }

  # Reading or writing facts means PostgreSQL and the user's data key, so these functions also
  # get a database user and the KMS key.
  database_functions = toset([
    for name, roles in local.function_project_roles : name if contains(roles, "roles/cloudsql.instanceUser")
  ])

  # The functions that enqueue extraction and approval timeouts and publish agent jobs.
  handoff_functions = toset(["turn", "resume"])
  # The functions that put tasks on the reminders queue: turn (an approval about to expire),
  # resume (the reminders API, a reminder's next occurrence) and agents (the reminders tool,
  # a job's questions and its end).
  reminder_functions = toset(["turn", "resume", "agents"])

  function_project_grants = {
    for grant in flatten([
      for name, roles in local.function_project_roles : [
        for role in roles : { name = name, role = role }
      ]
    ]) : "${grant.name} ${grant.role}" => grant
  }
}

resource "google_project_iam_member" "function" {
  for_each = local.function_project_grants
  project  = var.project_id
  role     = each.value.role
  member   = "serviceAccount:${google_service_account.function[each.value.name].email}"
}

resource "google_kms_crypto_key_iam_member" "data_keys" {
  for_each      = local.database_functions
  crypto_key_id = google_kms_crypto_key.data_keys.id
  role          = "roles/cloudkms.cryptoKeyEncrypterDecrypter" # wrap new data keys, unwrap old
  member        = "serviceAccount:${google_service_account.function[each.key].email}"
}

resource "google_secret_manager_secret_iam_member" "redis_url" {
  for_each  = local.functions
  secret_id = google_secret_manager_secret.redis_url.id
  role      = "roles/secretmanager.secretAccessor"
  member    = "serviceAccount:${google_service_account.function[each.key].email}"
}

resource "google_secret_manager_secret_iam_member" "page_token_key" {
  for_each  = local.functions
  secret_id = google_secret_manager_secret.page_token_key.id
  role      = "roles/secretmanager.secretAccessor"
  member    = "serviceAccount:${google_service_account.function[each.key].email}"
}

resource "google_cloud_tasks_queue_iam_member" "extraction_enqueuer" {
  for_each = local.handoff_functions
  name     = google_cloud_tasks_queue.extraction.name
  location = google_cloud_tasks_queue.extraction.location
  role     = "roles/cloudtasks.enqueuer"
  member   = "serviceAccount:${google_service_account.function[each.key].email}"
}

resource "google_cloud_tasks_queue_iam_member" "hitl_enqueuer" {
  for_each = local.handoff_functions
  name     = google_cloud_tasks_queue.hitl_timeouts.name
  location = google_cloud_tasks_queue.hitl_timeouts.location
  role     = "roles/cloudtasks.enqueuer"
  member   = "serviceAccount:${google_service_account.function[each.key].email}"
}

resource "google_cloud_tasks_queue_iam_member" "reminder_enqueuer" {
  for_each = local.reminder_functions
  name     = google_cloud_tasks_queue.reminders.name
  location = google_cloud_tasks_queue.reminders.location
  role     = "roles/cloudtasks.enqueuer"
  member   = "serviceAccount:${google_service_account.function[each.key].email}"
}

resource "google_service_account_iam_member" "reminder_tasks_invoker_user" {
  for_each           = setsubtract(local.reminder_functions, local.handoff_functions)
  service_account_id = google_service_account.invoker["tasks"].name
  role               = "roles/iam.serviceAccountUser"
  member             = "serviceAccount:${google_service_account.function[each.key].email}"
}

# resume sends the pushes: FCM HTTP v1 as its own service account (messages.send needs
# cloudmessaging.messages.create). Every function mounts the secret settings, the VAPID key
# among them (only resume signs with it).
resource "google_project_iam_member" "fcm_sender" {
  project = var.project_id
  role    = "roles/firebasecloudmessaging.admin"
  member  = "serviceAccount:${google_service_account.function["resume"].email}"
}

resource "google_secret_manager_secret_iam_member" "web_push_vapid_key" {
  for_each  = local.functions
  secret_id = google_secret_manager_secret.web_push_vapid_key.id
  role      = "roles/secretmanager.secretAccessor"
  member    = "serviceAccount:${google_service_account.function[each.key].email}"
}

# A task names the account whose OIDC token it carries; Cloud Tasks requires actAs on it.
resource "google_service_account_iam_member" "tasks_invoker_user" {
  for_each           = local.handoff_functions
  service_account_id = google_service_account.invoker["tasks"].name
  role               = "roles/iam.serviceAccountUser"
  member             = "serviceAccount:${google_service_account.function[each.key].email}"
}

resource "google_pubsub_topic_iam_member" "agent_jobs_publisher" {
  for_each = local.handoff_functions
  topic    = google_pubsub_topic.agent_jobs.id
  role     = "roles/pubsub.publisher"
  member   = "serviceAccount:${google_service_account.function[each.key].email}"
}

# Who may call each function. Cloud Run checks this before the code checks the token again.
# turn, resume and memory are the mobile and web clients' API: open at the door, and the code
# admits only verified Firebase ID tokens.
resource "google_cloud_run_v2_service_iam_member" "public_invoker" {
  for_each = { for name, fn in local.functions : name => fn if fn.invoker == "public" }
  name     = google_cloudfunctions2_function.function[each.key].name
  location = var.region
  role     = "roles/run.invoker"
  member   = "allUsers"
}

resource "google_cloud_run_v2_service_iam_member" "internal_invoker" {
  for_each = { for name, fn in local.functions : name => fn if fn.invoker != "public" }
  name     = google_cloudfunctions2_function.function[each.key].name
  location = var.region
  role     = "roles/run.invoker"
  member   = "serviceAccount:${google_service_account.invoker[each.value.invoker].email}"
}

# Pub/Sub's service agent signs the push tokens and moves failed messages to the dead letter.
locals {
  pubsub_agent = "serviceAccount:${google_project_service_identity.cmek_agents["pubsub.googleapis.com"].email}"
}

resource "google_service_account_iam_member" "pubsub_token_creator" {
  service_account_id = google_service_account.invoker["pubsub"].name
  role               = "roles/iam.serviceAccountTokenCreator"
  member             = local.pubsub_agent
}

resource "google_pubsub_topic_iam_member" "dead_letter_publisher" {
  topic  = google_pubsub_topic.agent_jobs_dead_letter.id
  role   = "roles/pubsub.publisher"
  member = local.pubsub_agent
}

resource "google_pubsub_subscription_iam_member" "dead_letter_subscriber" {
  subscription = google_pubsub_subscription.agent_jobs_push.id
  role         = "roles/pubsub.subscriber"
  member       = local.pubsub_agent
}

# Cloud Build turns the bundles into images: the role made for a function's build account
# (read the source, write the image and the build logs).
resource "google_project_iam_member" "builder" {
  project = var.project_id
  role    = "roles/run.builder"
  member  = "serviceAccount:${google_service_account.builder.email}"
}

resource "google_project_iam_member" "db_proxy" {
  project = var.project_id
  role    = "roles/cloudsql.client"
  member  = "serviceAccount:${google_service_account.db_proxy.email}"
}
