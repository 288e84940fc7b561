# The five Cloud Functions (gen2), deployed from the bundles `make bundles` writes to build/.
locals {
  # invoker: "public" functions authenticate Firebase ID tokens themselves; the others accept
  # only the OIDC token of their queue's invoker account (and refuse anyone else at the door).
  # ingress: queues and push subscriptions count as internal callers; users reach the public
  # three from the internet, through the load balancer when there is one (edge.tf).
  # signature: the functions-framework decorator of the entry point in functions/<name>/main.py.
  functions = {
    turn = {
      entry_point     = "turn"
      signature       = "http"
      invoker         = "public"
      ingress         = local.public_ingress
      memory          = "1Gi"
      cpu             = "1"
      timeout_seconds = 300 # a streamed answer stays open until the last token
      concurrency     = 4   # functions-framework serves 4 threads per vCPU
    }
    resume = {
      entry_point     = "resume"
      signature       = "http"
      invoker         = "public"
      ingress         = local.public_ingress
      memory          = "1Gi"
      cpu             = "1"
      timeout_seconds = 300
      concurrency     = 4
    }
    memory = {
      entry_point     = "memory"
      signature       = "http"
      invoker         = "public"
      ingress         = local.public_ingress
      memory          = "512Mi"
      cpu             = "1"
      timeout_seconds = 120
      concurrency     = 4
    }
    extraction = {
      entry_point     = "extraction"
      signature       = "http"
      invoker         = "tasks"
      ingress         = "ALLOW_INTERNAL_ONLY"
      memory          = "1Gi"
      cpu             = "1"
      timeout_seconds = 300
      concurrency     = 4
    }
    agents = {
      entry_point     = "agents"
      signature       = "cloudevent"
      invoker         = "pubsub"
      ingress         = "ALLOW_INTERNAL_ONLY"
      memory          = "1Gi"
      cpu             = "1"
      timeout_seconds = 540 # below the push subscription's 600 s acknowledgement deadline
      concurrency     = 4
    }
  }
}

resource "google_storage_bucket" "sources" {
  name                        = "${var.project_id}-${var.name_prefix}-sources"
  location                    = var.region
  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  force_destroy               = true # holds only rebuildable zips

  versioning {
    enabled = true
  }
  lifecycle_rule {
    condition {
      days_since_noncurrent_time = 7
    }
    action {
      type = "Delete"
    }
  }
  logging {
    log_bucket = google_storage_bucket.access_logs.name
  }
}

resource "google_storage_bucket" "access_logs" {
  # checkov:skip=CKV_GCP_62:this is the access-log bucket itself; logging it would recurse
  name                        = "${var.project_id}-${var.name_prefix}-access-logs"
  location                    = var.region
  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"

  versioning {
    enabled = true
  }
  lifecycle_rule {
    condition {
      age = 90
    }
    action {
      type = "Delete"
    }
  }
}

# Cloud Storage writes the usage logs as this Google group.
resource "google_storage_bucket_iam_member" "access_logs_writer" {
  bucket = google_storage_bucket.access_logs.name
  role   = "roles/storage.objectCreator"
  member = "group:cloud-storage-analytics@google.com"
}

data "archive_file" "bundle" {
  for_each    = local.functions
  type        = "zip"
  source_dir  = "${path.module}/../build/${each.key}"
  output_path = "${path.module}/.build/${each.key}.zip"
}

resource "google_storage_bucket_object" "bundle" {
  for_each = local.functions
  # The content hash in the name: a changed bundle is a new object, which redeploys.
  name   = "${each.key}-${data.archive_file.bundle[each.key].output_sha256}.zip"
  bucket = google_storage_bucket.sources.name
  source = data.archive_file.bundle[each.key].output_path
}

resource "google_artifact_registry_repository" "functions" {
  repository_id = "${var.name_prefix}-functions"
  location      = var.region
  format        = "DOCKER"
  description   = "Images Cloud Build makes of the function bundles."
  kms_key_name  = google_kms_crypto_key.at_rest.id

  cleanup_policies {
    id     = "keep-recent"
    action = "KEEP"
    most_recent_versions {
      keep_count = 5
    }
  }
  cleanup_policies {
    id     = "delete-old"
    action = "DELETE"
    condition {
      older_than = "2592000s"
    }
  }

  depends_on = [google_kms_crypto_key_iam_member.at_rest]
}

resource "google_cloudfunctions2_function" "function" {
  # checkov:skip=CKV_GCP_124:turn, resume and memory are the mobile and web clients' API on the internet (through the load balancer once api_domain is set); extraction and agents are ALLOW_INTERNAL_ONLY (tests/terraform/test_iam.py)
  for_each = local.functions
  name     = "${var.name_prefix}-${each.key}"
  location = var.region

  build_config {
    runtime           = "python311" # pyproject: requires-python ==3.11
    entry_point       = each.value.entry_point
    service_account   = google_service_account.builder.id
    docker_repository = google_artifact_registry_repository.functions.id
    source {
      storage_source {
        bucket = google_storage_bucket.sources.name
        object = google_storage_bucket_object.bundle[each.key].name
      }
    }
  }

  service_config {
    available_memory                 = each.value.memory
    available_cpu                    = each.value.cpu
    timeout_seconds                  = each.value.timeout_seconds
    max_instance_request_concurrency = each.value.concurrency
    min_instance_count               = var.function_scaling[each.key].min_instances
    max_instance_count               = var.function_scaling[each.key].max_instances
    service_account_email            = google_service_account.function[each.key].email
    all_traffic_on_latest_revision   = true
    ingress_settings                 = each.value.ingress

    # Direct VPC egress: Memorystore and Cloud SQL are reachable on private addresses only.
    direct_vpc_egress = "VPC_EGRESS_PRIVATE_RANGES_ONLY"
    direct_vpc_network_interface {
      network    = google_compute_network.main.id
      subnetwork = google_compute_subnetwork.functions.id
    }

    environment_variables = merge(local.settings, var.settings_overrides, local.function_settings[each.key])

    dynamic "secret_environment_variables" {
      for_each = local.secret_settings
      content {
        key        = secret_environment_variables.key
        project_id = var.project_id
        secret     = secret_environment_variables.value
        version    = "latest"
      }
    }
  }

  depends_on = [
    google_project_service.api,
    google_project_iam_member.builder,
    google_secret_manager_secret_iam_member.redis_url,
    google_secret_manager_secret_version.redis_url,
    google_secret_manager_secret_iam_member.page_token_key,
    google_secret_manager_secret_version.page_token_key,
    google_secret_manager_secret_iam_member.web_push_vapid_key,
    google_secret_manager_secret_version.web_push_vapid_key,
  ]
}
