"""Every function in functions/ is deployed from its bundle, through an entry point that exists
in its main.py with the decorator its trigger needs."""

from __future__ import annotations

import shutil
from pathlib import Path

from scripts.build_bundles import FUNCTIONS
from tests.terraform.checks import FUNCTIONS_DIR, entry_point_problems
from tests.terraform.tfconfig import load


def test_every_function_has_a_resource_and_an_entry_point() -> None:
    assert entry_point_problems(load()) == []


def test_terraform_deploys_what_the_build_script_bundles() -> None:
    assert set(load().locals["functions"]) == set(FUNCTIONS)


def test_warm_user_facing_functions_in_prod() -> None:
    scaling = load().environments["prod"]["function_scaling"]
    assert scaling["turn"]["min_instances"] >= 1
    assert scaling["resume"]["min_instances"] >= 1


def test_every_environment_scales_every_function() -> None:
    tf = load()
    for environment, values in tf.environments.items():
        assert set(values["function_scaling"]) == set(tf.locals["functions"]), environment


def test_a_function_without_resource_is_noticed(tmp_path: Path) -> None:
    functions = tmp_path / "functions"
    shutil.copytree(FUNCTIONS_DIR, functions)
    (functions / "billing").mkdir()
    (functions / "billing" / "main.py").write_text("def billing() -> None: ...\n")
    problems = entry_point_problems(load(), functions)
    assert "functions/billing: no entry in local.functions" in problems


def test_a_renamed_entry_point_is_noticed(tmp_path: Path) -> None:
    functions = tmp_path / "functions"
    shutil.copytree(FUNCTIONS_DIR, functions)
    main = functions / "resume" / "main.py"
    main.write_text(main.read_text().replace("def resume(", "def resume_turn("))
    assert "functions/resume/main.py: no function resume()" in entry_point_problems(
        load(), functions
    )


def test_a_wrong_trigger_is_noticed(tmp_path: Path) -> None:
    functions = tmp_path / "functions"
    shutil.copytree(FUNCTIONS_DIR, functions)
    main = functions / "agents" / "main.py"
    main.write_text(
        main.read_text().replace("@functions_framework.cloud_event", "@functions_framework.http")
    )
    problems = entry_point_problems(load(), functions)
    assert any("agents() is not @functions_framework.cloud_event" in p for p in problems)
