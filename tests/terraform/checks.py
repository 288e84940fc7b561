"""The rules that hold terraform/ and the code together. Each returns a list of problems (empty
when the rule holds), so a test can assert it on the real configuration and, on a copy broken
on purpose, that the rule notices.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource

from shared.config import Settings
from shared.errors import ConfigurationError
from tests.terraform.tfconfig import APPLY_TIME, ROOT, Block, Terraform, strings_in

FUNCTIONS_DIR = ROOT / "functions"

# Settings fields a deployment leaves unset on purpose, each with the reason. Every other
# field needs a value in terraform/settings.tf.
LOCAL_ONLY: dict[str, str] = {
    "firestore_emulator_host": "emulators run on laptops and in CI only",
    "pubsub_emulator_host": "emulators run on laptops and in CI only",
    "cloud_tasks_emulator_host": "emulators run on laptops and in CI only",
    "database_url": "deployed code reaches Cloud SQL through the connector and IAM auth",
    "vertex_base_url": "points the Vertex client at the local model service or the tests' fake",
    "vertex_access_token": "a local endpoint's static token; deployed code uses its account",
    "auth_jwks_file": "the local stack's key set; deployed code fetches AUTH_JWKS_URL",
    "internal_jwks_file": "the local stack's signing key; deployed code uses Google's keys",
    "local_kek_file": "deployed data keys are wrapped by Cloud KMS (KMS_KEY_NAME)",
    "ranking_base_url": "points the ranking client at the tests' fake endpoint",
    "clock_offset_file": "the evaluation's replay clock; deployed code uses the system clock",
    "web_push_key_file": "the local stack's VAPID key; deployed code reads WEB_PUSH_PRIVATE_KEY",
    "web_push_ca_file": "trusts the tests' loopback push service; deployed code trusts the CAs",
    "fcm_access_token": "the tests' fake FCM token; deployed code uses its service account",
}

_ENV_EXPRESSION = (
    "${merge(local.settings, var.settings_overrides, local.function_settings[each.key])}"
)
_OVERLAY_KEY = re.compile(r"\b([A-Z][A-Z0-9_]*)\s*=(?!=)")


def settings_fields() -> set[str]:
    return set(Settings.model_fields)


# -- settings ---------------------------------------------------------------------------------


def deployed_setting_names(tf: Terraform) -> set[str]:
    """Every environment variable the functions get: the shared map, the per-function values
    and the values read from Secret Manager."""
    names = set(tf.locals["settings"]) | set(tf.locals["secret_settings"])
    overlay = str(tf.locals["function_settings"])
    names |= set(_OVERLAY_KEY.findall(overlay.partition("=>")[2]))
    return names


def setting_name_problems(tf: Terraform, fields: Iterable[str]) -> list[str]:
    fields = set(fields)
    deployed = deployed_setting_names(tf)
    problems = [
        f"{name}: not a field of shared/config.py:Settings (a typo, or a removed field)"
        for name in sorted(deployed - {field.upper() for field in fields})
    ]
    for field in sorted(fields - set(LOCAL_ONLY)):
        if field.upper() not in deployed:
            problems.append(
                f"{field.upper()}: a Settings field without a deployed value; add it to"
                " locals.settings in terraform/settings.tf (or, if it must stay unset when"
                " deployed, to LOCAL_ONLY in tests/terraform/checks.py with the reason)"
            )
    problems += [
        f"{field.upper()}: local-only, yet deployed"
        for field in LOCAL_ONLY
        if field.upper() in deployed
    ]
    problems += [
        f"LOCAL_ONLY names {field}, which Settings no longer has"
        for field in LOCAL_ONLY
        if field not in fields
    ]
    return problems


def function_wiring_problems(tf: Terraform) -> list[str]:
    """The function resource really deploys the maps the settings rules read."""
    function = tf.block("google_cloudfunctions2_function.function")
    service = function.first("service_config")
    problems = []
    if service.get("environment_variables") != _ENV_EXPRESSION:
        problems.append(f"{function.address}: environment_variables must be {_ENV_EXPRESSION}")
    secrets = [
        entry["secret_environment_variables"]
        for entry in service.get("dynamic", [])
        if "secret_environment_variables" in entry
    ]
    if not secrets or secrets[0].get("for_each") != "${local.secret_settings}":
        problems.append(
            f"{function.address}: secret_environment_variables must iterate local.secret_settings"
        )
    return problems


class _DeployedSettings(Settings):
    """Settings from the given values only: the test process's own environment (the local
    stack's emulator hosts and key files) must not leak in."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)


def rendered_environment(tf: Terraform, environment: str) -> dict[str, str]:
    """The environment variables of a deployed function, as strings (as Cloud Run sets
    them); values only known at apply time are placeholders."""
    values: dict[str, Any] = dict(tf.evaluate(tf.locals["settings"], environment))
    values.update(tf.evaluate("${var.settings_overrides}", environment))
    for name in deployed_setting_names(tf) - set(values):
        values[name] = APPLY_TIME  # per-function and Secret Manager values
    return {name: _as_env_string(value) for name, value in values.items()}


def _as_env_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def setting_value_problems(tf: Terraform, environment: str) -> list[str]:
    rendered = rendered_environment(tf, environment)
    try:
        values: dict[str, Any] = {name.lower(): value for name, value in rendered.items()}
        settings = _DeployedSettings(**values)
    except (ValidationError, ConfigurationError) as error:
        return [f"{environment}: the deployed settings are refused: {error}"]
    problems = []
    if settings.is_local:
        problems.append(f"{environment}: ENV={settings.env} is a laptop mode")
    if settings.model_provider != "vertex":
        problems.append(f"{environment}: MODEL_PROVIDER={settings.model_provider}")
    return problems


# -- functions ------------------------------------------------------------------------------


_DECORATOR = {"http": "http", "cloudevent": "cloud_event"}


def entry_point_problems(tf: Terraform, functions_dir: Path = FUNCTIONS_DIR) -> list[str]:
    declared: dict[str, dict[str, Any]] = tf.locals["functions"]
    in_code = {path.parent.name for path in functions_dir.glob("*/main.py")}
    problems = [
        f"functions/{name}: no entry in local.functions" for name in sorted(in_code - set(declared))
    ]
    problems += [
        f"local.functions.{name}: no functions/{name}/main.py"
        for name in sorted(set(declared) - in_code)
    ]
    for name in sorted(in_code & set(declared)):
        entry_point = declared[name]["entry_point"]
        wanted = _DECORATOR.get(declared[name]["signature"], "?")
        decorators = _decorators_of(functions_dir / name / "main.py", entry_point)
        if decorators is None:
            problems.append(f"functions/{name}/main.py: no function {entry_point}()")
        elif f"functions_framework.{wanted}" not in decorators:
            problems.append(
                f"functions/{name}/main.py: {entry_point}() is not @functions_framework.{wanted}"
            )
    problems += _function_resource_problems(tf)
    return problems


def _decorators_of(main: Path, function_name: str) -> list[str] | None:
    for node in ast.parse(main.read_text()).body:
        if isinstance(node, ast.FunctionDef) and node.name == function_name:
            return [ast.unparse(decorator) for decorator in node.decorator_list]
    return None


def _function_resource_problems(tf: Terraform) -> list[str]:
    function = tf.block("google_cloudfunctions2_function.function")
    build = function.first("build_config")
    bundle = tf.block("data.archive_file.bundle")
    expected: list[tuple[Block, str, Any]] = [
        (function, "for_each", "${local.functions}"),
        (function, "build_config.entry_point", "${each.value.entry_point}"),
        (bundle, "for_each", "${local.functions}"),
        (bundle, "source_dir", "${path.module}/../build/${each.key}"),
    ]
    actual = {
        (function.address, "for_each"): function.body.get("for_each"),
        (function.address, "build_config.entry_point"): build.get("entry_point"),
        (bundle.address, "for_each"): bundle.body.get("for_each"),
        (bundle.address, "source_dir"): bundle.body.get("source_dir"),
    }
    problems = [
        f"{block.address}: {key} must be {value!r}"
        for block, key, value in expected
        if actual[(block.address, key)] != value
    ]
    python = re.search(r'requires-python = ">=(\d)\.(\d+)', (ROOT / "pyproject.toml").read_text())
    if python and build.get("runtime") != f"python{python.group(1)}{python.group(2)}":
        problems.append(
            f"{function.address}: runtime {build.get('runtime')} is not the project's Python"
        )
    return problems


# -- who may call what, and with which roles ---------------------------------------------------


_IAM_TYPE = re.compile(r"^google_\w+_iam_(member|binding|policy)$")
_PUBLIC = ("allUsers", "allAuthenticatedUsers")
PUBLIC_FOR_EACH = '${{for name, fn in local.functions : name => fn if fn.invoker == "public"}}'
_PRIMITIVE = re.compile(r"\broles/(owner|editor|viewer)\b")


def _grants_public_access(block: Block) -> bool:
    return any(marker in text for text in strings_in(block.body) for marker in _PUBLIC)


def public_functions(tf: Terraform) -> tuple[set[str], list[str]]:
    """Functions anyone may invoke, and the public grants whose target cannot be told (a grant
    outside the one sanctioned pattern is a problem by itself)."""
    declared: dict[str, dict[str, Any]] = tf.locals["functions"]
    public: set[str] = set()
    unattributed = []
    for block in tf.blocks:
        iam = _IAM_TYPE.match(block.type) or block.type == "google_iam_policy"
        if not iam or not _grants_public_access(block):
            continue
        if (
            block.type == "google_cloud_run_v2_service_iam_member"
            and block.body.get("for_each") == PUBLIC_FOR_EACH
        ):
            public |= {name for name, fn in declared.items() if fn["invoker"] == "public"}
        else:
            unattributed.append(f"{block.address} ({block.file}) grants access to everyone")
    return public, unattributed


def public_invocation_problems(
    tf: Terraform, private: Iterable[str] = ("extraction", "agents")
) -> list[str]:
    declared: dict[str, dict[str, Any]] = tf.locals["functions"]
    public, problems = public_functions(tf)
    expected_invoker = {"extraction": "tasks", "agents": "pubsub"}
    for name in private:
        if name in public:
            problems.append(f"{name} is publicly invokable")
        if declared[name]["invoker"] != expected_invoker.get(name, declared[name]["invoker"]):
            problems.append(f"{name} must be invoked by the {expected_invoker[name]} invoker only")
    internal = tf.block("google_cloud_run_v2_service_iam_member.internal_invoker").body
    if (
        internal.get("member")
        != "serviceAccount:${google_service_account.invoker[each.value.invoker].email}"
    ):
        problems.append(
            "internal_invoker must grant each private function to its invoker account only"
        )
    function = tf.block("google_cloudfunctions2_function.function")
    if function.first("service_config").get("ingress_settings") != "${each.value.ingress}":
        problems.append(f"{function.address}: ingress_settings must be each.value.ingress")
    problems += [
        f"{name}: ingress {declared[name]['ingress']}, not ALLOW_INTERNAL_ONLY"
        for name in private
        if declared[name]["ingress"] != "ALLOW_INTERNAL_ONLY"
    ]
    return problems


def primitive_role_problems(tf: Terraform) -> list[str]:
    places: list[tuple[str, Any]] = [(block.address, block.body) for block in tf.blocks]
    places += [(f"local.{name}", value) for name, value in tf.locals.items()]
    places += [(f"envs/{env}.tfvars", values) for env, values in tf.environments.items()]
    return [
        f"{where}: primitive role {match.group(0)}"
        for where, value in places
        for text in strings_in(value)
        for match in _PRIMITIVE.finditer(text)
    ]
