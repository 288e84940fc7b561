"""terraform/ against the pinned google provider's schema (what `terraform validate` would say
about arguments and types, without downloading the provider)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.terraform.schema import pinned_versions, provider_schema, schema_problems
from tests.terraform.tfconfig import copy_of_terraform


def test_terraform_matches_the_provider_schema() -> None:
    assert schema_problems() == []


def test_the_providers_are_pinned_to_the_checked_schema() -> None:
    pins, problems = pinned_versions()
    assert problems == []
    for provider, version in pins.items():
        assert provider_schema(provider, version)["provider_version"] == version


# -- the checker refuses what terraform would --------------------------------------------------


def _with(tmp_path: Path, text: str) -> Path:
    directory = copy_of_terraform(tmp_path)
    (directory / "broken.tf").write_text(text)
    return directory


def test_an_unknown_argument_is_refused(tmp_path: Path) -> None:
    directory = _with(
        tmp_path,
        """
resource "google_pubsub_topic" "extra" {
  name         = "extra"
  retention    = "600s"
}
""",
    )
    assert schema_problems(directory) == [
        "broken.tf: google_pubsub_topic.extra: unknown argument or block 'retention'"
    ]


def test_an_unknown_nested_argument_is_refused(tmp_path: Path) -> None:
    directory = _with(
        tmp_path,
        """
resource "google_compute_url_map" "extra" {
  name            = "extra"
  default_service = "x"
  path_matcher {
    name            = "api"
    default_service = "x"
    route_rules {
      priority = 1
      service  = "x"
      match_rules {
        path_template = "/v1/chats/{chat=*}/messages"
      }
    }
  }
}
""",
    )
    assert schema_problems(directory) == [
        "broken.tf: google_compute_url_map.extra.path_matcher.route_rules.match_rules:"
        " unknown argument or block 'path_template'"
    ]


def test_a_missing_required_argument_is_refused(tmp_path: Path) -> None:
    directory = _with(
        tmp_path,
        """
resource "google_compute_security_policy" "extra" {
  name = "extra"
  rule {
    action = "deny(403)"
    match {
      versioned_expr = "SRC_IPS_V1"
      config {
        src_ip_ranges = ["*"]
      }
    }
  }
}
""",
    )
    assert schema_problems(directory) == [
        "broken.tf: google_compute_security_policy.extra.rule: missing required 'priority'"
    ]


def test_an_unknown_type_is_refused(tmp_path: Path) -> None:
    directory = _with(
        tmp_path,
        """
resource "google_compute_load_balancer" "extra" {
  name = "extra"
}

data "google_cloudfunctions3_function" "extra" {
  name = "extra"
}
""",
    )
    problems = schema_problems(directory)
    assert problems == [
        "broken.tf: google_compute_load_balancer.extra: google 7.46.1 has no resource"
        " google_compute_load_balancer",
        "broken.tf: data.google_cloudfunctions3_function.extra: google 7.46.1 has no data"
        " google_cloudfunctions3_function",
    ]


def test_a_dynamic_block_is_checked_inside(tmp_path: Path) -> None:
    directory = _with(
        tmp_path,
        """
resource "google_compute_security_policy" "extra" {
  name = "extra"
  dynamic "rule" {
    for_each = toset(["a"])
    content {
      action   = "allow"
      priority = 1
      colour   = "red"
      match {
        versioned_expr = "SRC_IPS_V1"
        config {
          src_ip_ranges = ["*"]
        }
      }
    }
  }
  dynamic "rules" {
    for_each = []
    content {}
  }
}
""",
    )
    assert schema_problems(directory) == [
        "broken.tf: google_compute_security_policy.extra.rule: unknown argument or block 'colour'",
        "broken.tf: google_compute_security_policy.extra: unknown block 'rules' (dynamic)",
    ]


def test_a_type_of_no_declared_provider_is_refused(tmp_path: Path) -> None:
    directory = _with(
        tmp_path,
        """
resource "gogle_pubsub_topic" "extra" {
  name = "extra"
}
""",
    )
    assert schema_problems(directory) == [
        "broken.tf: gogle_pubsub_topic.extra: no provider 'gogle' in required_providers (a typo?)"
    ]


def test_meta_arguments_are_not_provider_arguments(tmp_path: Path) -> None:
    directory = _with(
        tmp_path,
        """
resource "google_pubsub_topic" "extra" {
  count      = 1
  provider   = google-beta
  name       = "extra"
  depends_on = [google_pubsub_topic.agent_jobs]
  lifecycle {
    prevent_destroy = true
  }
}
""",
    )
    assert schema_problems(directory) == []


def test_a_beta_only_type_needs_the_beta_provider(tmp_path: Path) -> None:
    directory = _with(
        tmp_path,
        """
resource "google_project_service_identity" "extra" {
  service = "pubsub.googleapis.com"
}
""",
    )
    assert schema_problems(directory) == [
        "broken.tf: google_project_service_identity.extra: google 7.46.1 has no resource"
        " google_project_service_identity (only in google-beta: set provider = google-beta)"
    ]


@pytest.mark.parametrize("pin", ["~> 7.46", ">= 7.46.1", "7.46"])
def test_a_provider_range_is_refused(tmp_path: Path, pin: str) -> None:
    directory = copy_of_terraform(tmp_path)
    versions = directory / "versions.tf"
    versions.write_text(versions.read_text().replace('"= 7.46.1"', f'"{pin}"', 1))
    problems = schema_problems(directory)
    assert problems == [f'versions.tf: google version {pin!r} is not an exact pin ("= X.Y.Z")']


def test_a_pin_without_a_schema_is_refused(tmp_path: Path) -> None:
    directory = copy_of_terraform(tmp_path)
    versions = directory / "versions.tf"
    versions.write_text(versions.read_text().replace('"= 7.46.1"', '"= 7.47.0"', 1))
    with pytest.raises(FileNotFoundError, match=r"google-7\.47\.0"):
        schema_problems(directory)
