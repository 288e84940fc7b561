"""terraform/ read offline with python-hcl2: no provider download, no ``terraform init``.

python-hcl2 returns expressions as strings (``"${var.region}"``). ``evaluate`` computes the
little of HCL these tests need: literals, ``var.*`` from an environment's tfvars or the
variable's default, ``local.*``, and string templates over those. Anything else (a resource
attribute, a function call, a ``for`` expression) is only known at apply time and evaluates
to ``APPLY_TIME``.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import hcl2
from hcl2 import SerializationOptions

ROOT = Path(__file__).resolve().parents[2]
TERRAFORM_DIR = ROOT / "terraform"
APPLY_TIME = "<known after apply>"

_OPTIONS = SerializationOptions(
    strip_string_quotes=True, with_comments=False, explicit_blocks=False
)
_ONE_INTERPOLATION = re.compile(r"\$\{([^{}]*)\}")
_REFERENCE = re.compile(r"^(var|local)\.([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z_][A-Za-z0-9_]*)*)$")


class MissingValue(LookupError):
    """A variable with neither a value in the environment's tfvars nor a default."""


@dataclass(frozen=True)
class Block:
    kind: str  # "resource" or "data"
    type: str
    name: str
    body: dict[str, Any]
    file: str

    @property
    def address(self) -> str:
        prefix = "data." if self.kind == "data" else ""
        return f"{prefix}{self.type}.{self.name}"

    def first(self, key: str) -> dict[str, Any]:
        """The first (usually only) nested block ``key``."""
        nested = self.body[key]
        block: dict[str, Any] = nested[0] if isinstance(nested, list) else nested
        return block


@dataclass(frozen=True)
class Terraform:
    directory: Path
    blocks: tuple[Block, ...]
    locals: dict[str, Any]
    variables: dict[str, dict[str, Any]]
    environments: dict[str, dict[str, Any]]  # envs/<name>.tfvars

    def block(self, address: str) -> Block:
        for block in self.blocks:
            if block.address == address:
                return block
        raise KeyError(address)

    def of_type(self, block_type: str) -> list[Block]:
        return [block for block in self.blocks if block.type == block_type]

    def evaluate(self, value: Any, environment: str) -> Any:
        return _Evaluator(self, environment).evaluate(value)


def load_file(path: Path) -> dict[str, Any]:
    with path.open() as handle:
        loaded: dict[str, Any] = hcl2.load(handle, serialization_options=_OPTIONS)
    return loaded


def _blocks(kind: str, entries: list[dict[str, Any]], file: str) -> Iterator[Block]:
    for entry in entries:
        for block_type, named in entry.items():
            for name, body in named.items():
                yield Block(kind, block_type, name, body, file)


def load(directory: Path = TERRAFORM_DIR) -> Terraform:
    return _load(directory.resolve())


@cache
def _load(directory: Path) -> Terraform:
    blocks: list[Block] = []
    local_values: dict[str, Any] = {}
    variables: dict[str, dict[str, Any]] = {}
    for path in sorted(directory.glob("*.tf")):
        parsed = load_file(path)
        for kind in ("resource", "data"):
            blocks.extend(_blocks(kind, parsed.get(kind, []), path.name))
        for entry in parsed.get("locals", []):
            local_values.update(entry)
        for entry in parsed.get("variable", []):
            variables.update(entry)
    environments = {
        path.name.removesuffix(".tfvars"): load_file(path)
        for path in sorted((directory / "envs").glob("*.tfvars"))
    }
    return Terraform(directory, tuple(blocks), local_values, variables, environments)


def copy_of_terraform(destination: Path) -> Path:
    """A scratch copy of terraform/ for tests that break it on purpose."""
    target = destination / "terraform"
    ignore = shutil.ignore_patterns(".terraform", ".build", "*.tfplan")
    shutil.copytree(TERRAFORM_DIR, target, ignore=ignore)
    return target


class _Evaluator:
    def __init__(self, terraform: Terraform, environment: str) -> None:
        self._tf = terraform
        self._tfvars = terraform.environments[environment]

    def evaluate(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {key: self.evaluate(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self.evaluate(item) for item in value]
        if not isinstance(value, str) or "${" not in value:
            return value
        whole = _ONE_INTERPOLATION.fullmatch(value)
        if whole:
            return self._expression(whole.group(1).strip())
        if "${{" in value or "${[" in value:  # an object or tuple expression
            return APPLY_TIME
        return _ONE_INTERPOLATION.sub(lambda m: str(self._expression(m.group(1).strip())), value)

    def _expression(self, expression: str) -> Any:
        reference = _REFERENCE.match(expression)
        if not reference:
            return APPLY_TIME
        kind, name, path = reference.groups()
        if kind == "var":
            value = self._variable(name)
        elif name in self._tf.locals:
            value = self.evaluate(self._tf.locals[name])
        else:
            raise KeyError(f"local.{name} is not defined")
        for key in filter(None, path.split(".")):
            if value == APPLY_TIME:
                return APPLY_TIME
            value = self.evaluate(value[key])
        return value

    def _variable(self, name: str) -> Any:
        if name in self._tfvars:
            return self._tfvars[name]
        declared = self._tf.variables.get(name)
        if declared is None:
            raise KeyError(f"var.{name} is not declared")
        if "default" not in declared:
            raise MissingValue(f"var.{name} has no default and no value")
        return declared["default"]


def strings_in(value: Any) -> Iterator[str]:
    """Every string anywhere inside a parsed HCL value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)
