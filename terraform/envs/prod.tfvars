# Production: warm user-facing functions, a standby database, a replicated cache.
project_id      = "my-assistant-prod"
environment     = "prod"
app_env         = "prod"
billing_account = "000000-000000-000000"
monthly_budget  = 4000 # idle ~450, busy ~3,300 at 900k turns a month
alert_emails    = ["oncall@example.com"]

# The clients' one origin, https://api.example.com/v1 (docs/deploy.md, "The one API origin").
api_domain = "api.example.com"

# One warm instance each for turn and resume hides the cold start (bench/cold_start).
function_scaling = {
  turn       = { min_instances = 1, max_instances = 50 }
  resume     = { min_instances = 1, max_instances = 20 }
  memory     = { min_instances = 0, max_instances = 10 }
  extraction = { min_instances = 0, max_instances = 20 }
  agents     = { min_instances = 0, max_instances = 20 }
}

db_tier                   = "db-custom-2-7680"
db_availability_type      = "REGIONAL"
db_disk_size_gb           = 20
db_point_in_time_recovery = true
db_backup_count           = 14
deletion_protection       = true

redis_tier           = "STANDARD_HA"
redis_memory_size_gb = 2

extraction_queue = {
  max_dispatches_per_second = 20
  max_concurrent_dispatches = 40
  max_attempts              = 8
  min_backoff               = "10s"
  max_backoff               = "600s"
}
