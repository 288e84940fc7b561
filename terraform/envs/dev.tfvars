# A shared development environment: smallest sizes, scales to zero, easy to tear down.
project_id      = "my-assistant-dev" # your dev project
environment     = "dev"
app_env         = "staging" # Settings' dev mode is for laptops only
billing_account = "000000-000000-000000"
monthly_budget  = 150 # idle ~80 (docs/deploy.md, "Cost")
alert_emails    = ["oncall@example.com"]

function_scaling = {
  turn       = { min_instances = 0, max_instances = 5 }
  resume     = { min_instances = 0, max_instances = 5 }
  memory     = { min_instances = 0, max_instances = 3 }
  extraction = { min_instances = 0, max_instances = 3 }
  agents     = { min_instances = 0, max_instances = 3 }
}

db_tier                   = "db-f1-micro"
db_availability_type      = "ZONAL"
db_point_in_time_recovery = false
db_backup_count           = 3
deletion_protection       = false

redis_tier           = "BASIC"
redis_memory_size_gb = 1
