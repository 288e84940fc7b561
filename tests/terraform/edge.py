"""The load balancer's URL map (terraform/edge.tf) read as a router, so tests can ask where a
path goes without deploying it.

Matching follows the URL map's documented rules: route rules in ascending priority, the first
whose match rule holds wins; ``full_path_match`` is equality, ``prefix_match`` a prefix (both
case-sensitive by default), ``path_template_match`` a template whose ``*`` or ``{name=*}``
is one path segment and ``**`` or ``{name=**}`` any rest. The query string is not part of the
path. A path no rule takes gets the path matcher's default, which aborts with 404.
"""

from __future__ import annotations

import re
from typing import Any

from tests.terraform.tfconfig import Block, Terraform

URL_MAP = "google_compute_url_map.api"
NOT_ROUTED = "404"
_BACKEND = re.compile(r'^\$\{google_compute_backend_service\.api\["(\w+)"\]\.id\}$')
_SEGMENT = "[^/]+"


def _template_regex(template: str) -> re.Pattern[str]:
    pattern = ""
    for part in re.split(r"(\{[^}]*\}|\*\*|\*)", template):
        if part in ("**",) or part.endswith("=**}"):
            pattern += ".*"
        elif part == "*" or (part.startswith("{") and part.endswith("}")):
            pattern += _SEGMENT
        else:
            pattern += re.escape(part)
    return re.compile(pattern)


def _matches(rule: dict[str, Any], path: str) -> bool:
    if "full_path_match" in rule:
        return bool(path == rule["full_path_match"])
    if "prefix_match" in rule:
        return path.startswith(rule["prefix_match"])
    if "path_template_match" in rule:
        return bool(_template_regex(rule["path_template_match"]).fullmatch(path))
    return False


def _target(holder: dict[str, Any]) -> str:
    """The function a route or default sends to, or NOT_ROUTED when it aborts with 404."""
    for action in holder.get("default_route_action", []) + holder.get("route_action", []):
        for fault in action.get("fault_injection_policy", []):
            for abort in fault.get("abort", []):
                if abort.get("http_status") == 404 and abort.get("percentage") == 100:
                    return NOT_ROUTED
    service = holder.get("service") or holder.get("default_service") or ""
    backend = _BACKEND.match(service)
    return backend.group(1) if backend else f"unknown backend {service!r}"


def route(tf: Terraform, path: str, *, on_api_domain: bool = True) -> str:
    """The function that serves ``path`` through the load balancer, or NOT_ROUTED."""
    url_map: Block = tf.block(URL_MAP)
    path = path.split("?", 1)[0]
    matcher_name = next(
        (
            rule["path_matcher"]
            for rule in url_map.body.get("host_rule", [])
            if on_api_domain and rule["hosts"] == ["${var.api_domain}"]
        ),
        None,
    )
    if matcher_name is None:
        return _target(url_map.body)
    matcher = next(m for m in url_map.body["path_matcher"] if m["name"] == matcher_name)
    for rule in sorted(matcher.get("route_rules", []), key=lambda r: int(r["priority"])):
        if any(_matches(match, path) for match in rule.get("match_rules", [])):
            return _target(rule)
    return _target(matcher)
