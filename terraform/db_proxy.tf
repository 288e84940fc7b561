# The way in for migrations: Cloud SQL has no public address, so operators reach it through
# the Cloud SQL Auth Proxy on a small VM in the VPC, over Identity-Aware Proxy TCP forwarding
# (docs/deploy.md, "Migrations"). Created with -var db_proxy=true, removed afterwards.

data "google_compute_zones" "available" {
  region = var.region
}

resource "google_compute_instance" "db_proxy" {
  count        = var.db_proxy ? 1 : 0
  name         = "${var.name_prefix}-db-proxy"
  zone         = data.google_compute_zones.available.names[0]
  machine_type = "e2-micro"

  boot_disk {
    kms_key_self_link = google_kms_crypto_key.at_rest.id
    initialize_params {
      image = "cos-cloud/cos-stable"
      size  = 10
    }
  }

  # No access_config: no public address. The image comes through Private Google Access.
  network_interface {
    subnetwork = google_compute_subnetwork.functions.id
  }

  service_account {
    email  = google_service_account.db_proxy.email
    scopes = ["cloud-platform"] # what it may do is its IAM grant: roles/cloudsql.client
  }

  shielded_instance_config {
    enable_secure_boot          = true
    enable_vtpm                 = true
    enable_integrity_monitoring = true
  }

  metadata = {
    enable-oslogin         = "TRUE"
    block-project-ssh-keys = "TRUE"
    serial-port-enable     = "FALSE"
    # Password logins only (the postgres user), forwarded to the instance's private address.
    startup-script = <<-EOT
      #!/bin/bash
      docker rm -f cloud-sql-proxy 2>/dev/null
      docker run -d --name cloud-sql-proxy --restart=always --network=host \
        ${var.db_proxy_image} --private-ip --address 0.0.0.0 --port 5432 \
        ${google_sql_database_instance.main.connection_name}
    EOT
  }

  depends_on = [google_project_iam_member.db_proxy, google_kms_crypto_key_iam_member.compute_agent]
}
