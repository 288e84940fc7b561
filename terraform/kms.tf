# The key-encryption key: it wraps each user's data key (shared/adapters/keyring_kms.py).
# Destroying it makes every stored fact unreadable, hence prevent_destroy.

resource "google_kms_key_ring" "main" {
  name       = "${var.name_prefix}-keys"
  location   = var.region
  depends_on = [google_project_service.api]
}

resource "google_kms_crypto_key" "data_keys" {
  name            = "user-data-keys"
  key_ring        = google_kms_key_ring.main.id
  purpose         = "ENCRYPT_DECRYPT"
  rotation_period = "7776000s" # 90 days; old versions keep decrypting what they wrapped

  version_template {
    algorithm        = "GOOGLE_SYMMETRIC_ENCRYPTION"
    protection_level = "SOFTWARE"
  }

  lifecycle {
    prevent_destroy = true
  }
}

# Customer-managed encryption of the images, the agent-job messages and the proxy VM's disk.
resource "google_kms_crypto_key" "at_rest" {
  name            = "at-rest"
  key_ring        = google_kms_key_ring.main.id
  purpose         = "ENCRYPT_DECRYPT"
  rotation_period = "7776000s"

  lifecycle {
    prevent_destroy = true
  }
}

# The service agents that encrypt with it; created here so the grant precedes first use.
resource "google_project_service_identity" "cmek_agents" {
  provider = google-beta
  for_each = toset(["artifactregistry.googleapis.com", "pubsub.googleapis.com"])
  service  = each.value

  depends_on = [google_project_service.api]
}

resource "google_kms_crypto_key_iam_member" "at_rest" {
  for_each      = google_project_service_identity.cmek_agents
  crypto_key_id = google_kms_crypto_key.at_rest.id
  role          = "roles/cloudkms.cryptoKeyEncrypterDecrypter"
  member        = "serviceAccount:${each.value.email}"
}

resource "google_kms_crypto_key_iam_member" "compute_agent" {
  crypto_key_id = google_kms_crypto_key.at_rest.id
  role          = "roles/cloudkms.cryptoKeyEncrypterDecrypter"
  member        = "serviceAccount:service-${data.google_project.this.number}@compute-system.iam.gserviceaccount.com"
  depends_on    = [google_project_service.api]
}
