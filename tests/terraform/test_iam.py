"""Least privilege: no primitive role anywhere, and extraction and agents answer only their
queue's invoker account (never anyone on the internet)."""

from __future__ import annotations

from pathlib import Path

from tests.terraform.checks import (
    primitive_role_problems,
    public_functions,
    public_invocation_problems,
)
from tests.terraform.tfconfig import copy_of_terraform, load


def test_no_primitive_roles() -> None:
    assert primitive_role_problems(load()) == []


def test_extraction_and_agents_are_not_publicly_invokable() -> None:
    assert public_invocation_problems(load()) == []


def test_the_public_functions_are_the_clients_api() -> None:
    public, unattributed = public_functions(load())
    assert public == {"turn", "resume", "memory"}
    assert unattributed == []


# -- the rules notice a broken configuration ----------------------------------------------------


def _with(tmp_path: Path, file: str, text: str) -> Path:
    directory = copy_of_terraform(tmp_path)
    with (directory / file).open("a") as handle:
        handle.write(text)
    return directory


def test_a_public_grant_on_extraction_is_noticed(tmp_path: Path) -> None:
    directory = _with(
        tmp_path,
        "iam.tf",
        """
resource "google_cloud_run_v2_service_iam_member" "oops" {
  name     = google_cloudfunctions2_function.function["extraction"].name
  location = var.region
  role     = "roles/run.invoker"
  member   = "allUsers"
}
""",
    )
    problems = public_invocation_problems(load(directory))
    assert any("google_cloud_run_v2_service_iam_member.oops" in p for p in problems)


def test_making_agents_public_is_noticed(tmp_path: Path) -> None:
    directory = copy_of_terraform(tmp_path)
    functions = directory / "functions.tf"
    functions.write_text(
        functions.read_text().replace('invoker         = "pubsub"', 'invoker         = "public"')
    )
    problems = public_invocation_problems(load(directory))
    assert "agents is publicly invokable" in problems


def test_a_primitive_role_is_noticed(tmp_path: Path) -> None:
    directory = _with(
        tmp_path,
        "iam.tf",
        """
resource "google_project_iam_member" "shortcut" {
  project = var.project_id
  role    = "roles/editor"
  member  = "serviceAccount:${google_service_account.function["turn"].email}"
}
""",
    )
    assert primitive_role_problems(load(directory)) == [
        "google_project_iam_member.shortcut: primitive role roles/editor"
    ]


def test_a_primitive_role_in_the_role_map_is_noticed(tmp_path: Path) -> None:
    directory = copy_of_terraform(tmp_path)
    iam = directory / "iam.tf"
    iam.write_text(
        iam.read_text().replace(
            'agents     = ["roles/datastore.user"', 'agents     = ["roles/owner"', 1
        )
    )
    assert primitive_role_problems(load(directory)) != []
