"""terraform/ checked against the google and google-beta provider schemas, offline.

`terraform validate` needs the provider binaries, which cannot be downloaded here. The schemas
in provider_schema/ come from CDK Terrain's prebuilt provider packages (see
scripts/provider_schema.py): for each resource and data source type, its arguments, nested
blocks and the required ones, for the provider version terraform/versions.tf pins.

What is checked: every google_* resource and data source type exists in the provider the block
uses, every argument and block inside it is known (through dynamic blocks too), every required
one is present, and the provider blocks' arguments. Meta-arguments are terraform's own. A type
of no declared provider (a typo such as gogle_) is refused; the archive provider's types are
not checked further: no schema of theirs is kept.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from tests.terraform.tfconfig import TERRAFORM_DIR, Block, load, load_file

SCHEMA_DIR = Path(__file__).resolve().parent / "provider_schema"
CHECKED_PROVIDERS = ("google", "google-beta")
# Terraform's own arguments of every resource and data source, not the provider's.
META_ARGUMENTS = frozenset(
    {"count", "for_each", "depends_on", "lifecycle", "provider", "provisioner", "connection"}
)
# "= 7.46.1", or a bare "7.46.1", which terraform reads as the same.
# Terraform's own resource types, which no provider declares.
TERRAFORM_BUILTINS = frozenset({"terraform_data", "terraform_remote_state"})
_EXACT_PIN = re.compile(r"^=?\s*(\d+\.\d+\.\d+)$")

Schema = dict[str, Any]  # {"arguments": {name: Schema | None}, "required": [name]}


@cache
def provider_schema(provider: str, version: str) -> dict[str, Any]:
    path = SCHEMA_DIR / f"{provider}-{version}.json.gz"
    if not path.exists():
        raise FileNotFoundError(
            f"{path.name}: no schema of {provider} {version}; regenerate it with"
            " scripts/provider_schema.py and the cdktn package version built from it"
        )
    with gzip.open(path) as handle:
        loaded: dict[str, Any] = json.load(handle)
    return loaded


def required_providers(directory: Path = TERRAFORM_DIR) -> dict[str, tuple[str, dict[str, Any]]]:
    """Each provider of ``required_providers``: the file declaring it and its settings."""
    declared: dict[str, tuple[str, dict[str, Any]]] = {}
    for path in sorted(directory.glob("*.tf")):
        for terraform in load_file(path).get("terraform", []):
            for required in terraform.get("required_providers", []):
                declared.update({name: (path.name, spec) for name, spec in required.items()})
    return declared


def pinned_versions(directory: Path = TERRAFORM_DIR) -> tuple[dict[str, str], list[str]]:
    """The exact version of each checked provider, and the problems of pins that are not
    exact (a range would let `terraform init` take a version whose schema nobody checked)."""
    declared = required_providers(directory)
    pins: dict[str, str] = {}
    problems = [
        f"required_providers: no {name}" for name in CHECKED_PROVIDERS if name not in declared
    ]
    for name in CHECKED_PROVIDERS:
        if name not in declared:
            continue
        file, spec = declared[name]
        exact = _EXACT_PIN.match(str(spec.get("version", "")).strip())
        if exact:
            pins[name] = exact.group(1)
        else:
            problems.append(
                f'{file}: {name} version {spec.get("version")!r} is not an exact pin ("= X.Y.Z")'
            )
    return pins, problems


def schema_problems(directory: Path = TERRAFORM_DIR) -> list[str]:
    pins, problems = pinned_versions(directory)
    if problems:
        return problems
    schemas = {name: provider_schema(name, version) for name, version in pins.items()}
    declared = set(required_providers(directory))
    for block in load(directory).blocks:
        problems += _block_problems(block, schemas, declared)
    problems += _provider_block_problems(directory, schemas)
    return problems


def _block_problems(
    block: Block, schemas: dict[str, dict[str, Any]], declared: set[str]
) -> list[str]:
    where = f"{block.file}: {block.address}"
    # The provider meta-argument (an alias: google-beta.europe), else the type's prefix.
    explicit = str(block.body.get("provider", "")).removeprefix("${").removesuffix("}")
    provider = explicit.split(".")[0] or block.type.split("_")[0]
    if block.type in TERRAFORM_BUILTINS:
        return []
    if provider not in declared:
        return [f"{where}: no provider {provider!r} in required_providers (a typo?)"]
    if provider not in schemas:
        return []  # declared, but no schema of it is kept (archive)
    known = schemas[provider][block.kind]
    if block.type not in known:
        others = [name for name in schemas if block.type in schemas[name][block.kind]]
        hint = f" (only in {others[0]}: set provider = {others[0]})" if others else ""
        return [
            f"{where}: {provider} {schemas[provider]['provider_version']} has no {block.kind}"
            f" {block.type}{hint}"
        ]
    body = {key: value for key, value in block.body.items() if key not in META_ARGUMENTS}
    return list(_body_problems(body, known[block.type], where))


def _body_problems(body: dict[str, Any], schema: Schema, where: str) -> Iterator[str]:
    arguments: dict[str, Schema | None] = schema["arguments"]
    present = set(body)
    for entry in body.get("dynamic", []):
        present |= set(entry)
        yield from _dynamic_problems(entry, arguments, where)
    for name, value in body.items():
        if name == "dynamic":
            continue
        if name not in arguments:
            yield f"{where}: unknown argument or block {name!r}"
            continue
        nested = arguments[name]
        # A block parses as a list of bodies; an object-valued argument as a dict.
        if nested is not None and isinstance(value, list):
            for item in value:
                if isinstance(item, dict):
                    yield from _body_problems(item, nested, f"{where}.{name}")
    yield from (
        f"{where}: missing required {name!r}" for name in schema["required"] if name not in present
    )


def _dynamic_problems(
    entry: dict[str, Any], arguments: dict[str, Schema | None], where: str
) -> Iterator[str]:
    for name, dynamic in entry.items():
        nested = arguments.get(name)
        if name not in arguments:
            yield f"{where}: unknown block {name!r} (dynamic)"
        elif nested is None:
            yield f"{where}: {name!r} is an argument, not a block (dynamic)"
        else:
            for content in dynamic.get("content", []):
                yield from _body_problems(content, nested, f"{where}.{name}")


def _provider_block_problems(directory: Path, schemas: dict[str, dict[str, Any]]) -> list[str]:
    problems: list[str] = []
    for path in sorted(directory.glob("*.tf")):
        for entry in load_file(path).get("provider", []):
            for name, body in entry.items():
                if name in schemas:
                    where = f"{path.name}: provider {name}"
                    settings = {k: v for k, v in body.items() if k != "alias"}
                    problems += _body_problems(settings, schemas[name]["provider"], where)
    return problems
