"""Regenerate tests/terraform/provider_schema/<provider>-<version>.json.gz, the google and
google-beta provider schemas that tests/terraform/schema.py checks terraform/ against.

`terraform validate` needs the provider binaries, which this project cannot download. CDK
Terrain's prebuilt provider packages on PyPI (cdktn-provider-google, -google-beta) carry a jsii
assembly generated from one provider version's schema: every resource and data source with
its arguments, nested blocks and which of them are required. The wheels are 65-70 MB each
(about 230 MB installed), too much to install for one test, so this keeps only what the
checker reads (a few hundred KB, gzipped).

    python scripts/provider_schema.py 20.3.1   # the package version; it names its provider

The package version must be one generated from the provider version pinned in
terraform/versions.tf (the package's README says which; 20.3.1 is google 7.46.1).
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path
from typing import Any

OUT_DIR = Path(__file__).resolve().parents[1] / "tests" / "terraform" / "provider_schema"
PACKAGES = {"google": "cdktn-provider-google", "google-beta": "cdktn-provider-google-beta"}

# "Represents a {@link https://registry.terraform.io/providers/hashicorp/google/7.46.1/docs/
# resources/compute_url_map google_compute_url_map}."
_REPRESENTS = re.compile(
    r"\{@link https://registry\.terraform\.io/providers/hashicorp/([\w-]+)/([\d.]+)/docs/"
    r"(resources|data-sources)/\w+ (\w+)\}"
)
# Each argument's docs link to its anchor, which is its terraform name: "...#match_rules".
_ANCHOR = re.compile(r"#(\w+) \w+#\w+\}")
_KIND = {"resources": "resource", "data-sources": "data"}


def _wheel(package: str, version: str, directory: Path) -> Path:
    pip = [sys.executable, "-m", "pip"] if shutil.which("pip") is None else ["pip"]
    subprocess.run(
        [*pip, "download", "--quiet", "--no-deps", "-d", str(directory), f"{package}=={version}"],
        check=True,
    )
    return next(directory.glob("*.whl"))


def _assembly(wheel: Path) -> dict[str, Any]:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".jsii.tgz"))
        tarball = archive.read(name)
    with tarfile.open(fileobj=io.BytesIO(tarball)) as tar:
        member = tar.extractfile("package/.jsii")
        assert member is not None
        assembly: dict[str, Any] = json.load(member)
    return assembly


def _snake(camel: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", camel).lower()


def _fqns(type_ref: dict[str, Any]) -> list[str]:
    """Struct types a property's type refers to, through unions and collections."""
    if "fqn" in type_ref:
        return [type_ref["fqn"]]
    if "union" in type_ref:
        return [fqn for member in type_ref["union"]["types"] for fqn in _fqns(member)]
    if "collection" in type_ref:
        return _fqns(type_ref["collection"]["elementtype"])
    return []


def _schema(types: dict[str, Any], fqn: str) -> dict[str, Any]:
    """{"arguments": {name: nested schema or None}, "required": [names]}."""
    arguments: dict[str, Any] = {}
    required = []
    for prop in types[fqn].get("properties", []):
        anchor = _ANCHOR.search(prop.get("docs", {}).get("remarks", ""))
        name = anchor.group(1) if anchor else _snake(prop["name"])
        structs = [f for f in _fqns(prop["type"]) if types.get(f, {}).get("datatype")]
        arguments[name] = _schema(types, structs[0]) if structs else None
        if not prop.get("optional"):
            required.append(name)
    return {"arguments": arguments, "required": sorted(required)}


def extract(assembly: dict[str, Any]) -> dict[str, Any]:
    types: dict[str, Any] = assembly["types"]
    schema: dict[str, Any] = {"resource": {}, "data": {}}
    provider_version = None
    for spec in types.values():
        if spec.get("base") == "cdktn.TerraformProvider":  # the provider block's arguments
            schema["provider"] = _schema(
                types, spec["initializer"]["parameters"][-1]["type"]["fqn"]
            )
            continue
        if spec.get("base") not in ("cdktn.TerraformResource", "cdktn.TerraformDataSource"):
            continue
        represents = _REPRESENTS.search(spec["docs"]["summary"])
        if represents is None:
            raise ValueError(f"{spec['fqn']}: no terraform type in its docs")
        _, provider_version, kind, type_name = represents.groups()
        config = spec["initializer"]["parameters"][-1]["type"]["fqn"]
        schema[_KIND[kind]][type_name] = _schema(types, config)
    return {"provider_version": provider_version, **schema}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("version", help="the cdktn-provider-google(-beta) package version")
    args = parser.parse_args()
    for provider, package in PACKAGES.items():
        with tempfile.TemporaryDirectory() as scratch:
            extracted = extract(_assembly(_wheel(package, args.version, Path(scratch))))
        extracted["source"] = f"{package}=={args.version}"
        target = OUT_DIR / f"{provider}-{extracted['provider_version']}.json.gz"
        OUT_DIR.mkdir(parents=True, exist_ok=True)
        text = json.dumps(extracted, sort_keys=True, separators=(",", ":"))
        # mtime=0: the same package gives the same bytes, so a regeneration shows no diff.
        with target.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
            out.write(text.encode())
        print(f"{target.relative_to(OUT_DIR.parents[2])}: {target.stat().st_size} bytes")


if __name__ == "__main__":
    main()
