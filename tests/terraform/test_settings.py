"""terraform/settings.tf against shared/config.py:Settings: every field deployed (or listed as
local-only with its reason), no unknown name, and a valid Settings in every environment.

When a field is added to Settings, ``test_every_field_has_a_deployed_value`` fails until the
field gets its value in ``locals.settings`` of terraform/settings.tf.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.terraform.checks import (
    LOCAL_ONLY,
    function_wiring_problems,
    setting_name_problems,
    setting_value_problems,
    settings_fields,
)
from tests.terraform.tfconfig import MissingValue, copy_of_terraform, load

ENVIRONMENTS = sorted(load().environments)


def test_the_three_environments_exist() -> None:
    assert ENVIRONMENTS == ["dev", "prod", "staging"]


def test_every_field_has_a_deployed_value() -> None:
    assert setting_name_problems(load(), settings_fields()) == []


def test_the_function_resource_deploys_exactly_these_maps() -> None:
    assert function_wiring_problems(load()) == []


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_deployed_settings_are_valid(environment: str) -> None:
    assert setting_value_problems(load(), environment) == []


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_every_required_variable_has_a_value(environment: str) -> None:
    tf = load()
    tfvars = tf.environments[environment]
    required = {name for name, body in tf.variables.items() if "default" not in body}
    assert sorted(required - set(tfvars)) == []
    assert sorted(set(tfvars) - set(tf.variables)) == [], "tfvars set undeclared variables"


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_overrides_name_settings_fields(environment: str) -> None:
    overrides = load().environments[environment].get("settings_overrides", {})
    fields = {field.upper() for field in settings_fields()}
    assert sorted(set(overrides) - fields) == []


def test_local_only_reasons_are_given() -> None:
    assert all(reason.strip() for reason in LOCAL_ONLY.values())


# -- the rules notice a broken configuration ----------------------------------------------------


def _broken(tmp_path: Path, file: str, old: str, new: str) -> Path:
    directory = copy_of_terraform(tmp_path)
    path = directory / file
    text = path.read_text()
    assert old in text, f"{file} no longer contains {old!r}: update this test"
    path.write_text(text.replace(old, new, 1))
    return directory


def test_a_missing_field_is_noticed(tmp_path: Path) -> None:
    directory = _broken(tmp_path, "settings.tf", "    KMS_KEY_NAME =", "    # KMS_KEY_NAME =")
    problems = setting_name_problems(load(directory), settings_fields())
    assert any(problem.startswith("KMS_KEY_NAME:") for problem in problems)


def test_a_new_settings_field_is_noticed() -> None:
    problems = setting_name_problems(load(), [*settings_fields(), "summary_threshold"])
    assert problems and "terraform/settings.tf" in problems[0]


def test_a_misspelt_name_is_noticed(tmp_path: Path) -> None:
    directory = _broken(tmp_path, "settings.tf", "    REDIS_PREFIX ", "    REDIS_PREFX ")
    assert any(
        "REDIS_PREFX" in p for p in setting_name_problems(load(directory), settings_fields())
    )


def test_an_unsafe_value_is_noticed(tmp_path: Path) -> None:
    directory = _broken(tmp_path, "settings.tf", 'KEK_PROVIDER = "kms"', 'KEK_PROVIDER = "local"')
    assert setting_value_problems(load(directory), "prod") != []


def test_a_variable_without_value_is_noticed(tmp_path: Path) -> None:
    directory = _broken(tmp_path, "variables.tf", '  default     = "gemini-3.5-flash"\n', "")
    with pytest.raises(MissingValue):
        setting_value_problems(load(directory), "dev")
