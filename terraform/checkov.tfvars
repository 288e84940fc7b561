# Values for the security scan only (terraform/.checkov.yaml): every optional resource on,
# so checkov sees them all.
db_proxy   = true
api_domain = "api.example.com"
