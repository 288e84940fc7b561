# Production's shape at a fraction of its size: where a release is tried before prod.
project_id      = "my-assistant-staging"
environment     = "staging"
app_env         = "staging"
billing_account = "000000-000000-000000"
monthly_budget  = 300 # idle ~100
alert_emails    = ["oncall@example.com"]

function_scaling = {
  turn       = { min_instances = 0, max_instances = 10 }
  resume     = { min_instances = 0, max_instances = 10 }
  memory     = { min_instances = 0, max_instances = 5 }
  extraction = { min_instances = 0, max_instances = 5 }
  agents     = { min_instances = 0, max_instances = 5 }
}

db_tier                   = "db-g1-small"
db_availability_type      = "ZONAL"
db_point_in_time_recovery = true
db_backup_count           = 7
deletion_protection       = true

redis_tier           = "BASIC"
redis_memory_size_gb = 1
