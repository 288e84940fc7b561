# One origin for the clients' API: a global external Application Load Balancer on
# https://<api_domain>/v1, routing by path to turn, resume and memory (serverless NEGs), with
# a Google-managed certificate and Cloud Armor. Built only when var.api_domain is set; the
# routing table is in the URL map below and in docs/deploy.md ("One API origin").
# extraction, agents and the internal paths of resume (/timeout, /outbox/drain) have no route
# here: they stay on their own function URLs behind OIDC.
locals {
  edge_enabled = var.api_domain != null
  edge_functions = {
    for name, fn in local.functions : name => fn if fn.invoker == "public" && local.edge_enabled
  }
  # With the load balancer in front, the public functions' own run.app URLs refuse the
  # internet (Cloud Armor could be bypassed otherwise); queues and the LB still reach them.
  public_ingress = local.edge_enabled ? "ALLOW_INTERNAL_AND_GCLB" : "ALLOW_ALL"
  # OWASP CRS 4.22 sets of Cloud Armor's preconfigured WAF (armor/docs/waf-rules); the v422
  # names are the ones Google recommends over v33. Sensitivity 1: the fewest false positives.
  waf_rules = [
    "sqli-v422-stable",
    "xss-v422-stable",
    "lfi-v422-stable",
    "rfi-v422-stable",
    "rce-v422-stable",
    "methodenforcement-v422-stable",
    "scannerdetection-v422-stable",
    "protocolattack-v422-stable",
    "sessionfixation-v422-stable",
    "java-v422-stable",
    "nodejs-v422-stable",
    "php-v422-stable",
  ]
}

resource "google_compute_region_network_endpoint_group" "api" {
  for_each              = local.edge_functions
  name                  = "${var.name_prefix}-${each.key}-neg"
  region                = var.region
  network_endpoint_type = "SERVERLESS"
  # A gen2 function is a Cloud Run service of the same name; the cloud_function block is for
  # 1st gen only (load-balancing/docs/negs/serverless-neg-concepts).
  cloud_run {
    service = google_cloudfunctions2_function.function[each.key].name
  }
}

resource "google_compute_backend_service" "api" {
  for_each              = local.edge_functions
  name                  = "${var.name_prefix}-${each.key}"
  load_balancing_scheme = "EXTERNAL_MANAGED"
  security_policy       = google_compute_security_policy.api[0].id
  # No timeout_sec or health check: serverless NEGs take neither; the function's own timeout
  # (300 s for turn's streamed answer) bounds a request.
  backend {
    group = google_compute_region_network_endpoint_group.api[each.key].id
  }
  log_config {
    enable      = true
    sample_rate = 1.0
  }
}

resource "google_compute_url_map" "api" {
  count       = local.edge_enabled ? 1 : 0
  name        = "${var.name_prefix}-api"
  description = "One origin for the clients' /v1 API; paths not listed answer 404."

  # Anything unrouted (another host, the bare IP, a path outside /v1's collections) is aborted
  # with 404 at the load balancer: the default service is only a required placeholder and
  # receives nothing.
  default_service = google_compute_backend_service.api["memory"].id
  default_route_action {
    fault_injection_policy {
      abort {
        http_status = 404
        percentage  = 100
      }
    }
  }

  host_rule {
    hosts        = [var.api_domain]
    path_matcher = "v1"
  }

  path_matcher {
    name            = "v1"
    default_service = google_compute_backend_service.api["memory"].id
    default_route_action {
      fault_injection_policy {
        abort {
          http_status = 404
          percentage  = 100
        }
      }
    }

    # A URL map routes by path, not by method: both the turn (POST, streamed) and the list of
    # a chat's messages (GET) go to turn. Ahead of the /v1/chats rule below.
    route_rules {
      priority = 1
      service  = google_compute_backend_service.api["turn"].id
      match_rules {
        path_template_match = "/v1/chats/{chat=*}/messages"
      }
    }

    # Each collection: itself, its resources and their custom methods (/v1/chats/c/questions/
    # q:answer), and its collection-level custom methods (/v1/facts:search). Not a bare
    # prefix, which would also take /v1/chatsX.
    route_rules {
      priority = 10
      service  = google_compute_backend_service.api["resume"].id
      match_rules {
        full_path_match = "/v1/chats"
      }
      match_rules {
        prefix_match = "/v1/chats/"
      }
      match_rules {
        prefix_match = "/v1/chats:"
      }
    }
    route_rules {
      priority = 11
      service  = google_compute_backend_service.api["resume"].id
      match_rules {
        full_path_match = "/v1/jobs"
      }
      match_rules {
        prefix_match = "/v1/jobs/"
      }
      match_rules {
        prefix_match = "/v1/jobs:"
      }
    }
    route_rules {
      priority = 12
      service  = google_compute_backend_service.api["resume"].id
      match_rules {
        full_path_match = "/v1/reminders"
      }
      match_rules {
        prefix_match = "/v1/reminders/"
      }
      match_rules {
        prefix_match = "/v1/reminders:"
      }
    }
    route_rules {
      priority = 13
      service  = google_compute_backend_service.api["resume"].id
      match_rules {
        full_path_match = "/v1/notifications"
      }
      match_rules {
        prefix_match = "/v1/notifications/"
      }
      match_rules {
        prefix_match = "/v1/notifications:"
      }
    }
    route_rules {
      priority = 14
      service  = google_compute_backend_service.api["resume"].id
      match_rules {
        full_path_match = "/v1/devices"
      }
      match_rules {
        prefix_match = "/v1/devices/"
      }
      match_rules {
        prefix_match = "/v1/devices:"
      }
    }
    route_rules {
      priority = 15
      service  = google_compute_backend_service.api["resume"].id
      match_rules {
        full_path_match = "/v1/pushConfig"
      }
      match_rules {
        prefix_match = "/v1/pushConfig/"
      }
      match_rules {
        prefix_match = "/v1/pushConfig:"
      }
    }
    route_rules {
      priority = 20
      service  = google_compute_backend_service.api["memory"].id
      match_rules {
        full_path_match = "/v1/facts"
      }
      match_rules {
        prefix_match = "/v1/facts/"
      }
      match_rules {
        prefix_match = "/v1/facts:"
      }
    }
    route_rules {
      priority = 21
      service  = google_compute_backend_service.api["memory"].id
      match_rules {
        full_path_match = "/v1/persons"
      }
      match_rules {
        prefix_match = "/v1/persons/"
      }
      match_rules {
        prefix_match = "/v1/persons:"
      }
    }
    route_rules {
      priority = 22
      service  = google_compute_backend_service.api["memory"].id
      match_rules {
        full_path_match = "/v1/pendingItems"
      }
      match_rules {
        prefix_match = "/v1/pendingItems/"
      }
      match_rules {
        prefix_match = "/v1/pendingItems:"
      }
    }
    route_rules {
      priority = 23
      service  = google_compute_backend_service.api["memory"].id
      # Singletons (/v1/settings/assistant, /v1/settings/hitl): no collection of its own.
      match_rules {
        prefix_match = "/v1/settings/"
      }
    }
    route_rules {
      priority = 24
      service  = google_compute_backend_service.api["memory"].id
      match_rules {
        full_path_match = "/v1/strategies"
      }
      match_rules {
        prefix_match = "/v1/strategies/"
      }
      match_rules {
        prefix_match = "/v1/strategies:"
      }
    }
    route_rules {
      priority = 25
      service  = google_compute_backend_service.api["memory"].id
      # The account singleton and its custom methods (the export among them).
      match_rules {
        full_path_match = "/v1/account"
      }
      match_rules {
        prefix_match = "/v1/account/"
      }
      match_rules {
        prefix_match = "/v1/account:"
      }
    }
    route_rules {
      priority = 26
      service  = google_compute_backend_service.api["memory"].id
      # The user's calendar feed (a singleton and its custom methods), and the feeds' public
      # URLs that calendar apps read (/v1/calendarFeeds/{token}/calendar.ics).
      match_rules {
        full_path_match = "/v1/calendarFeed"
      }
      match_rules {
        prefix_match = "/v1/calendarFeed:"
      }
      match_rules {
        prefix_match = "/v1/calendarFeeds/"
      }
    }
    route_rules {
      priority = 27
      service  = google_compute_backend_service.api["memory"].id
      # The records the agents keep, as the client's views read, edit and delete them.
      match_rules {
        full_path_match = "/v1/calendarEvents"
      }
      match_rules {
        prefix_match = "/v1/calendarEvents/"
      }
    }
    route_rules {
      priority = 28
      service  = google_compute_backend_service.api["memory"].id
      match_rules {
        full_path_match = "/v1/notes"
      }
      match_rules {
        prefix_match = "/v1/notes/"
      }
    }
    route_rules {
      priority = 29
      service  = google_compute_backend_service.api["memory"].id
      match_rules {
        full_path_match = "/v1/expenses"
      }
      match_rules {
        prefix_match = "/v1/expenses/"
      }
    }
    route_rules {
      priority = 30
      service  = google_compute_backend_service.api["memory"].id
      match_rules {
        full_path_match = "/v1/budgets"
      }
      match_rules {
        prefix_match = "/v1/budgets/"
      }
    }
  }
}

# Compute Engine's managed certificate rather than Certificate Manager: one domain, and
# nothing is served yet, so load-balancer authorization (the certificate is issued once the
# domain's A record points at the address below) costs no cutover. Certificate Manager with
# DNS authorization is the move for several domains or a live migration.
resource "google_compute_managed_ssl_certificate" "api" {
  count = local.edge_enabled ? 1 : 0
  name  = "${var.name_prefix}-api"
  managed {
    domains = [var.api_domain]
  }
}

resource "google_compute_ssl_policy" "api" {
  count           = local.edge_enabled ? 1 : 0
  name            = "${var.name_prefix}-api"
  profile         = "MODERN"
  min_tls_version = "TLS_1_2"
}

resource "google_compute_target_https_proxy" "api" {
  count            = local.edge_enabled ? 1 : 0
  name             = "${var.name_prefix}-api"
  url_map          = google_compute_url_map.api[0].id
  ssl_certificates = [google_compute_managed_ssl_certificate.api[0].id]
  ssl_policy       = google_compute_ssl_policy.api[0].id
}

resource "google_compute_global_address" "api" {
  count = local.edge_enabled ? 1 : 0
  name  = "${var.name_prefix}-api"
}

# Port 80 only redirects to https. 308, not 301: a client's POST stays a POST.
resource "google_compute_url_map" "http_redirect" {
  count = local.edge_enabled ? 1 : 0
  name  = "${var.name_prefix}-api-http"
  default_url_redirect {
    https_redirect         = true
    redirect_response_code = "PERMANENT_REDIRECT"
    strip_query            = false
  }
}

resource "google_compute_target_http_proxy" "http_redirect" {
  count   = local.edge_enabled ? 1 : 0
  name    = "${var.name_prefix}-api-http"
  url_map = google_compute_url_map.http_redirect[0].id
}

# One address, two listeners: 443 serves the API, 80 only redirects.
resource "google_compute_global_forwarding_rule" "api" {
  for_each = {
    for name, listener in {
      https = { port = "443", target = one(google_compute_target_https_proxy.api[*].id) }
      http  = { port = "80", target = one(google_compute_target_http_proxy.http_redirect[*].id) }
    } : name => listener if local.edge_enabled
  }
  name                  = "${var.name_prefix}-api-${each.key}"
  load_balancing_scheme = "EXTERNAL_MANAGED"
  ip_protocol           = "TCP"
  port_range            = each.value.port
  ip_address            = google_compute_global_address.api[0].id
  target                = each.value.target
}

# Cloud Armor on every backend: a per-IP rate limit that bans abusers, then the OWASP rules,
# which log what they would block (preview) until var.armor_enforce_waf turns them on.
resource "google_compute_security_policy" "api" {
  # checkov:skip=CKV_GCP_73:the cve-canary rule is below (priority 900, enforced; tests/terraform/test_edge.py); checkov loses static rule blocks next to a dynamic one
  count       = local.edge_enabled ? 1 : 0
  name        = "${var.name_prefix}-api"
  description = "Rate-based ban per client IP and the preconfigured OWASP CRS rules."
  type        = "CLOUD_ARMOR"

  advanced_options_config {
    # The API speaks JSON: the WAF inspects its fields instead of the raw body.
    json_parsing = "STANDARD"
    log_level    = "VERBOSE" # names the matched signature, for tuning before enforcing
  }

  adaptive_protection_config {
    layer_7_ddos_defense_config {
      enable = true
    }
  }

  rule {
    priority    = 100
    action      = "rate_based_ban"
    description = "Per client IP: over the rate answers 429; far over it bans the IP."
    match {
      versioned_expr = "SRC_IPS_V1"
      config {
        src_ip_ranges = ["*"]
      }
    }
    rate_limit_options {
      enforce_on_key = "IP"
      conform_action = "allow"
      exceed_action  = "deny(429)"
      rate_limit_threshold {
        count        = var.armor_rate_limit.count
        interval_sec = var.armor_rate_limit.interval_sec
      }
      ban_threshold {
        count        = var.armor_rate_limit.ban_count
        interval_sec = var.armor_rate_limit.ban_interval_sec
      }
      ban_duration_sec = var.armor_rate_limit.ban_duration_sec
    }
  }

  # Log4Shell's signature, enforced from the start: a precise match, with no false positives
  # to fear on a Python API.
  rule {
    priority    = 900
    action      = "deny(403)"
    description = "CVE-2021-44228 and CVE-2021-45046 (Log4j)."
    match {
      expr {
        expression = "evaluatePreconfiguredWaf('cve-canary')"
      }
    }
  }

  dynamic "rule" {
    for_each = local.waf_rules
    content {
      priority    = 1000 + rule.key
      action      = "deny(403)"
      preview     = !var.armor_enforce_waf
      description = "OWASP CRS: ${rule.value}"
      match {
        expr {
          expression = "evaluatePreconfiguredWaf('${rule.value}', {'sensitivity': 1})"
        }
      }
    }
  }

  rule {
    priority    = 2147483647
    action      = "allow"
    description = "Default: allow what no rule above denied."
    match {
      versioned_expr = "SRC_IPS_V1"
      config {
        src_ip_ranges = ["*"]
      }
    }
  }
}
