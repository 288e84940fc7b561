"""The one API origin (terraform/edge.tf): each public /v1 path reaches its function through
the load balancer, internal endpoints are not routed at all, and Cloud Armor is in place."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.rest.origin import function_for
from tests.terraform.edge import NOT_ROUTED, route
from tests.terraform.tfconfig import copy_of_terraform, load

PUBLIC_PATHS = {
    # a turn (POST, streamed) and the list of a chat's messages (GET) share one path
    "/v1/chats/c1/messages": "turn",
    "/v1/chats/c1/messages?page_size=50": "turn",
    "/v1/chats": "resume",
    "/v1/chats/c1": "resume",
    "/v1/chats/c1/questions/q1:answer": "resume",
    "/v1/jobs": "resume",
    "/v1/jobs/j1": "resume",
    "/v1/jobs/j1:pause": "resume",
    "/v1/jobs/j1:takeover": "resume",
    "/v1/facts": "memory",
    "/v1/facts/f1": "memory",
    "/v1/facts:search": "memory",
    "/v1/facts/f1:restore": "memory",
    "/v1/facts/f1/versions": "memory",
    "/v1/persons": "memory",
    "/v1/persons/p1:merge": "memory",
    "/v1/pendingItems/i1:resolve": "memory",
    "/v1/settings/assistant": "memory",
    "/v1/settings/hitl": "memory",
    "/v1/strategies": "memory",
    "/v1/strategies/s1": "memory",
    "/v1/account": "memory",
    "/v1/account:export": "memory",
    "/v1/calendarFeed": "memory",
    "/v1/calendarFeed:enable": "memory",
    "/v1/calendarFeeds/tok/calendar.ics": "memory",
}

NOT_PUBLIC = [
    "/timeout",  # resume's Cloud Tasks callback
    "/outbox/drain",  # resume's scheduler job
    "/",  # agents' Pub/Sub push and extraction's task both post to their function's root
    "/extraction",
    "/turn",  # the pre-v1 paths are gone, not kept beside
    "/facts/list",
    "/v1",
    "/v1/",
    "/v1/chatsX",
    "/v1/factsheet",
    "/v1/calendarFeedX",
    "/v2/chats",
    "/V1/chats",
]


@pytest.mark.parametrize(("path", "function"), PUBLIC_PATHS.items())
def test_each_public_path_reaches_its_function(path: str, function: str) -> None:
    assert route(load(), path) == function


@pytest.mark.parametrize("path", NOT_PUBLIC)
def test_internal_and_unknown_paths_are_not_routed(path: str) -> None:
    assert route(load(), path) == NOT_ROUTED


@pytest.mark.parametrize("path", [*PUBLIC_PATHS, *NOT_PUBLIC])
def test_the_load_balancer_and_the_local_origin_route_alike(path: str) -> None:
    """shared/rest/origin.py is the table the local proxy (scripts/web_serve.py) serves."""
    local = function_for(path.split("?", maxsplit=1)[0]) or NOT_ROUTED
    assert route(load(), path) == local


def test_another_host_is_not_routed() -> None:
    assert route(load(), "/v1/facts", on_api_domain=False) == NOT_ROUTED


def test_only_the_public_functions_sit_behind_the_load_balancer() -> None:
    tf = load()
    assert 'fn.invoker == "public"' in tf.locals["edge_functions"]
    for address in (
        "google_compute_region_network_endpoint_group.api",
        "google_compute_backend_service.api",
    ):
        assert tf.block(address).body["for_each"] == "${local.edge_functions}"


def test_the_public_functions_admit_only_the_load_balancer_once_it_exists() -> None:
    tf = load()
    for name, fn in tf.locals["functions"].items():
        wanted = "${local.public_ingress}" if fn["invoker"] == "public" else "ALLOW_INTERNAL_ONLY"
        assert fn["ingress"] == wanted, name
    assert tf.locals["public_ingress"] == (
        '${local.edge_enabled ? "ALLOW_INTERNAL_AND_GCLB" : "ALLOW_ALL"}'
    )


def test_every_backend_logs_and_is_guarded_by_cloud_armor() -> None:
    backend = load().block("google_compute_backend_service.api").body
    assert backend["load_balancing_scheme"] == "EXTERNAL_MANAGED"
    assert backend["security_policy"] == "${google_compute_security_policy.api[0].id}"
    assert backend["log_config"][0]["enable"] is True


def test_cloud_armor_bans_by_ip_and_runs_the_owasp_rules_in_preview() -> None:
    tf = load()
    policy = tf.block("google_compute_security_policy.api").body
    ban = next(rule for rule in policy["rule"] if rule["action"] == "rate_based_ban")
    options = ban["rate_limit_options"][0]
    assert (options["enforce_on_key"], options["exceed_action"]) == ("IP", "deny(429)")
    log4j = next(rule for rule in policy["rule"] if "cve-canary" in str(rule["match"]))
    assert log4j["action"].startswith("deny") and not log4j.get("preview", False)
    waf = policy["dynamic"][0]["rule"]
    assert waf["for_each"] == "${local.waf_rules}"
    assert waf["content"][0]["preview"] == "${!var.armor_enforce_waf}"
    assert tf.variables["armor_enforce_waf"]["default"] is False
    assert {"sqli-v422-stable", "xss-v422-stable"} <= set(tf.locals["waf_rules"])


def test_port_80_only_redirects_to_https_keeping_the_method() -> None:
    tf = load()
    redirect = tf.block("google_compute_url_map.http_redirect").body["default_url_redirect"][0]
    assert redirect["https_redirect"] is True
    assert redirect["redirect_response_code"] == "PERMANENT_REDIRECT"
    listeners = tf.block("google_compute_global_forwarding_rule.api").body["for_each"]
    assert 'port = "443", target = one(google_compute_target_https_proxy.api' in listeners
    assert 'port = "80", target = one(google_compute_target_http_proxy.http_redirect' in listeners


# -- the routing rules notice a broken URL map --------------------------------------------------


def _url_map_edited(tmp_path: Path, old: str, new: str) -> Path:
    directory = copy_of_terraform(tmp_path)
    edge = directory / "edge.tf"
    text = edge.read_text()
    assert old in text
    edge.write_text(text.replace(old, new, 1))
    return directory


def test_the_messages_rule_after_the_chats_rule_is_noticed(tmp_path: Path) -> None:
    directory = _url_map_edited(tmp_path, "priority = 1\n", "priority = 50\n")
    assert route(load(directory), "/v1/chats/c1/messages") == "resume"


def test_a_bare_prefix_is_noticed(tmp_path: Path) -> None:
    directory = _url_map_edited(tmp_path, 'prefix_match = "/v1/facts/"', 'prefix_match = "/v1/f"')
    assert route(load(directory), "/v1/factsheet") == "memory"


def test_a_default_that_reaches_a_function_is_noticed(tmp_path: Path) -> None:
    directory = _url_map_edited(tmp_path, "http_status = 404", "http_status = 503")
    assert route(load(directory), "/timeout", on_api_domain=False) == "memory"
