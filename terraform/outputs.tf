output "function_urls" {
  description = "HTTPS endpoint of each function (turn, resume and memory are the clients' API)."
  value       = { for name, fn in google_cloudfunctions2_function.function : name => fn.service_config[0].uri }
}

output "cloud_sql_instance" {
  description = "Connection name of the PostgreSQL instance (project:region:instance)."
  value       = google_sql_database_instance.main.connection_name
}

output "db_iam_users" {
  description = "Database users of the functions; scripts/grant_db_access.py grants them the tables."
  value       = sort([for user in google_sql_user.function : user.name])
}

output "db_proxy" {
  description = "The migration proxy VM and its zone, when db_proxy is on."
  value = var.db_proxy ? {
    name = google_compute_instance.db_proxy[0].name
    zone = google_compute_instance.db_proxy[0].zone
  } : null
}

output "extraction_queue" {
  value = google_cloud_tasks_queue.extraction.id
}

output "agent_jobs_topic" {
  value = google_pubsub_topic.agent_jobs.id
}

output "kms_key" {
  value = google_kms_crypto_key.data_keys.id
}

output "api_base_url" {
  description = "The clients' one production base URL (null without api_domain)."
  value       = local.edge_enabled ? "https://${var.api_domain}/v1" : null
}

output "api_ip_address" {
  description = "The load balancer's address: the A record of api_domain points here."
  value       = one(google_compute_global_address.api[*].address)
}
