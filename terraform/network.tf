# A private network: the functions reach Memorystore and Cloud SQL on private addresses
# (Direct VPC egress), Google APIs through Private Google Access. Nothing here has a public IP.

resource "google_compute_network" "main" {
  name                    = "${var.name_prefix}-vpc"
  auto_create_subnetworks = false
  depends_on              = [google_project_service.api]
}

resource "google_compute_subnetwork" "functions" {
  name                     = "${var.name_prefix}-functions"
  network                  = google_compute_network.main.id
  region                   = var.region
  ip_cidr_range            = "10.10.0.0/22" # Direct VPC egress: two addresses per instance
  private_ip_google_access = true

  log_config {
    aggregation_interval = "INTERVAL_5_MIN"
    flow_sampling        = 0.5
    metadata             = "INCLUDE_ALL_METADATA"
  }
}

# Private services access: Memorystore and Cloud SQL get addresses from this range.
resource "google_compute_global_address" "private_services" {
  name          = "${var.name_prefix}-private-services"
  purpose       = "VPC_PEERING"
  address_type  = "INTERNAL"
  prefix_length = 20
  network       = google_compute_network.main.id
}

resource "google_service_networking_connection" "private_services" {
  network                 = google_compute_network.main.id
  service                 = "servicenetworking.googleapis.com"
  reserved_peering_ranges = [google_compute_global_address.private_services.name]
}

# Only Identity-Aware Proxy's TCP forwarding reaches the migration proxy (docs/deploy.md).
resource "google_compute_firewall" "iap_to_db_proxy" {
  name      = "${var.name_prefix}-iap-to-db-proxy"
  network   = google_compute_network.main.id
  direction = "INGRESS"
  # Google's published source range of IAP TCP forwarding.
  source_ranges           = ["35.235.240.0/20"]
  target_service_accounts = [google_service_account.db_proxy.email]

  allow {
    protocol = "tcp"
    ports    = ["5432"]
  }
  log_config {
    metadata = "INCLUDE_ALL_METADATA"
  }
}
