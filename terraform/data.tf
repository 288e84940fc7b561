# The stores: Firestore (conversations, turns, idempotency keys), Memorystore for Redis (rate
# limits, caches) and Cloud SQL for PostgreSQL with pgvector (facts, persons).

resource "google_firestore_database" "main" {
  name                              = "(default)"
  location_id                       = var.firestore_location
  type                              = "FIRESTORE_NATIVE"
  concurrency_mode                  = "PESSIMISTIC" # claim_turn is a read-then-write transaction
  app_engine_integration_mode       = "DISABLED"
  point_in_time_recovery_enablement = var.environment == "prod" ? "POINT_IN_TIME_RECOVERY_ENABLED" : "POINT_IN_TIME_RECOVERY_DISABLED"
  delete_protection_state           = var.deletion_protection ? "DELETE_PROTECTION_ENABLED" : "DELETE_PROTECTION_DISABLED"
  deletion_policy                   = var.deletion_protection ? "ABANDON" : "DELETE"
  depends_on                        = [google_project_service.api]
}

locals {
  # Collection groups whose documents carry expire_at for a TTL policy: finished turn
  # records (firestore_conversations), idempotency keys (firestore_idempotency) and the graph
  # checkpoints of finished threads with their chunks (firestore_checkpoints).
  ttl_collections = ["turns", "idempotency", "checkpoints", "checkpoint_chunks"]
}

resource "google_firestore_field" "expire_at" {
  for_each   = toset(local.ttl_collections)
  database   = google_firestore_database.main.name
  collection = each.value
  field      = "expire_at"

  ttl_config {}
  # Never queried: no single-field index (a monotonically rising indexed timestamp hot-spots).
  index_config {}
}

# The queries need no composite index: messages are read newest first on created_at alone
# (the document-id tie-break rides on the single-field index). Large fields nobody filters on
# are kept out of the index to save index writes.
resource "google_firestore_field" "unindexed" {
  for_each = {
    message_text        = { collection = "messages", field = "text" }
    turn_response       = { collection = "turns", field = "response" }
    checkpoint_body     = { collection = "checkpoints", field = "checkpoint" }
    checkpoint_metadata = { collection = "checkpoints", field = "metadata" }
    checkpoint_values   = { collection = "checkpoints", field = "values" }
    checkpoint_writes   = { collection = "checkpoints", field = "writes" }
    checkpoint_chunk    = { collection = "checkpoint_chunks", field = "data" }
  }
  database   = google_firestore_database.main.name
  collection = each.value.collection
  field      = each.value.field

  index_config {}
}

# A thread's newest checkpoint of a namespace (firestore_checkpoints.get_tuple and list):
# ns == ?, ordered by checkpoint_id descending.
resource "google_firestore_index" "checkpoints_newest" {
  database    = google_firestore_database.main.name
  collection  = "checkpoints"
  query_scope = "COLLECTION"

  fields {
    field_path = "ns"
    order      = "ASCENDING"
  }
  fields {
    field_path = "checkpoint_id"
    order      = "DESCENDING"
  }
  fields {
    field_path = "__name__"
    order      = "DESCENDING"
  }
}

# delete_for_runs finds a run's checkpoints across threads: a collection-group query.
resource "google_firestore_field" "checkpoint_run_id" {
  database   = google_firestore_database.main.name
  collection = "checkpoints"
  field      = "run_id"

  index_config {
    indexes {
      order       = "ASCENDING"
      query_scope = "COLLECTION_GROUP"
    }
  }
}

# The scheduled outbox drain finds the turns of every user with unsent handoffs.
resource "google_firestore_field" "turn_outbox_pending" {
  database   = google_firestore_database.main.name
  collection = "turns"
  field      = "outbox_pending"

  index_config {
    indexes {
      order       = "ASCENDING"
      query_scope = "COLLECTION_GROUP"
    }
  }
}

# The reminder sweep finds, across users, the pending reminders no delivery task holds yet
# (shared/adapters/firestore_reminders.py): a range on unqueued_due_at, ordered by it.
resource "google_firestore_field" "reminder_unqueued_due_at" {
  database   = google_firestore_database.main.name
  collection = "reminders"
  field      = "unqueued_due_at"

  index_config {
    indexes {
      order       = "ASCENDING"
      query_scope = "COLLECTION_GROUP"
    }
  }
}

resource "google_redis_instance" "cache" {
  name               = "${var.name_prefix}-cache"
  region             = var.region
  tier               = var.redis_tier
  memory_size_gb     = var.redis_memory_size_gb
  redis_version      = "REDIS_7_2"
  connect_mode       = "PRIVATE_SERVICE_ACCESS"
  authorized_network = google_compute_network.main.id
  reserved_ip_range  = google_compute_global_address.private_services.name

  auth_enabled            = true
  transit_encryption_mode = "SERVER_AUTHENTICATION"

  maintenance_policy {
    weekly_maintenance_window {
      day = "SUNDAY"
      start_time {
        hours = 3
      }
    }
  }

  depends_on = [google_service_networking_connection.private_services]
}

resource "google_secret_manager_secret" "redis_url" {
  secret_id = "${var.name_prefix}-redis-url"
  replication {
    user_managed {
      replicas {
        location = var.region
      }
    }
  }
  depends_on = [google_project_service.api]
}

resource "google_secret_manager_secret_version" "redis_url" {
  secret = google_secret_manager_secret.redis_url.id
  # TLS with the instance's own CA; the certificate names no host, so only the chain is
  # checked. redis-py passes unknown URL parameters (ssl_ca_data) to its SSL connection.
  secret_data = format(
    "rediss://:%s@%s:%d/0?ssl_check_hostname=false&ssl_ca_data=%s",
    google_redis_instance.cache.auth_string,
    google_redis_instance.cache.host,
    google_redis_instance.cache.port,
    urlencode(google_redis_instance.cache.server_ca_certs[0].cert),
  )
}

resource "google_sql_database_instance" "main" {
  name                = "${var.name_prefix}-pg"
  region              = var.region
  database_version    = "POSTGRES_18" # the version the local stack runs
  deletion_protection = var.deletion_protection

  settings {
    tier                        = var.db_tier
    edition                     = "ENTERPRISE"
    availability_type           = var.db_availability_type
    disk_type                   = "PD_SSD"
    disk_size                   = var.db_disk_size_gb
    disk_autoresize             = true
    deletion_protection_enabled = var.deletion_protection

    ip_configuration {
      ipv4_enabled    = false
      private_network = google_compute_network.main.id
      ssl_mode        = "TRUSTED_CLIENT_CERTIFICATE_REQUIRED" # the connectors' mTLS
    }

    backup_configuration {
      enabled                        = true
      start_time                     = "02:00"
      point_in_time_recovery_enabled = var.db_point_in_time_recovery
      transaction_log_retention_days = 7
      backup_retention_settings {
        retained_backups = var.db_backup_count
        retention_unit   = "COUNT"
      }
    }

    maintenance_window {
      day  = 7
      hour = 3
    }

    insights_config {
      query_insights_enabled = true
    }

    # IAM database authentication: the functions log in as their service accounts.
    database_flags {
      name  = "cloudsql.iam_authentication"
      value = "on"
    }
    database_flags {
      name  = "log_checkpoints"
      value = "on"
    }
    database_flags {
      name  = "log_connections"
      value = "on"
    }
    database_flags {
      name  = "log_disconnections"
      value = "on"
    }
    database_flags {
      name  = "log_lock_waits"
      value = "on"
    }
    database_flags {
      name  = "log_min_messages"
      value = "error"
    }
    database_flags {
      name  = "log_min_error_statement"
      value = "error"
    }
    database_flags {
      name  = "log_temp_files"
      value = "0"
    }
    database_flags {
      name  = "log_duration"
      value = "on"
    }
    database_flags {
      name  = "log_min_duration_statement"
      value = "-1"
    }
    database_flags {
      name  = "log_hostname"
      value = "on"
    }
    database_flags {
      name  = "log_statement"
      value = "ddl"
    }
    database_flags {
      name  = "cloudsql.enable_pgaudit"
      value = "on"
    }
  }

  depends_on = [google_service_networking_connection.private_services]
}

resource "google_sql_database" "app" {
  name     = "assistant"
  instance = google_sql_database_instance.main.name
}

# One IAM database user per function that reads or writes PostgreSQL. Their table grants
# come from scripts/grant_db_access.py after the migrations (docs/deploy.md).
resource "google_sql_user" "function" {
  for_each = local.database_functions
  name     = trimsuffix(google_service_account.function[each.key].email, ".gserviceaccount.com")
  instance = google_sql_database_instance.main.name
  type     = "CLOUD_IAM_SERVICE_ACCOUNT"
}

# Signs the API's page tokens (shared/rest/paging.py): random, never leaves Secret Manager
# and the state.
resource "random_password" "page_token_key" {
  length  = 48
  special = false
}

resource "google_secret_manager_secret" "page_token_key" {
  secret_id = "${var.name_prefix}-page-token-key"
  replication {
    user_managed {
      replicas {
        location = var.region
      }
    }
  }
  depends_on = [google_project_service.api]
}

# The mail relay's password (shared/adapters/smtp_mailer.py). Its value comes from the relay's
# provider and is added by an operator, so it never passes through the state:
#   printf %s "$PASSWORD" | gcloud secrets versions add <name_prefix>-smtp-password --data-file=-
resource "google_secret_manager_secret" "smtp_password" {
  secret_id = "${var.name_prefix}-smtp-password"
  replication {
    user_managed {
      replicas {
        location = var.region
      }
    }
  }
  depends_on = [google_project_service.api]
}

resource "google_secret_manager_secret_version" "page_token_key" {
  secret      = google_secret_manager_secret.page_token_key.id
  secret_data = random_password.page_token_key.result
}

# Web Push's VAPID private key (a PEM P-256 key; shared/adapters/web_push.py). Terraform has
# no provider here that makes EC keys, so its first version is a placeholder (Web Push stays
# off, the inbox and FCM work) until the operator adds the real key as a new version
# (docs/notifications.md); the functions read the latest version when an instance starts.
resource "google_secret_manager_secret" "web_push_vapid_key" {
  secret_id = "${var.name_prefix}-web-push-vapid-key"
  replication {
    user_managed {
      replicas {
        location = var.region
      }
    }
  }
  depends_on = [google_project_service.api]
}

resource "google_secret_manager_secret_version" "web_push_vapid_key" {
  secret      = google_secret_manager_secret.web_push_vapid_key.id
  secret_data = "unset: add the VAPID key as a new version (README, Notifications)"
  lifecycle {
    ignore_changes = [secret_data]
  }
}
