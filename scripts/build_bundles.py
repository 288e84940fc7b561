"""Build each function's deploy bundle: ``build/<name>/`` = main.py + shared/ + requirements.txt.

Cloud Functions gen2 deploys only what is in the source folder, so the shared package is
copied in, and the pinned, hashed requirements come from the lock file (production never
installs the offline model extra or the dev tools).

    .venv/bin/python scripts/build_bundles.py [--out build]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FUNCTIONS = ("turn", "extraction", "resume", "agents", "memory")
_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".mypy_cache")


def _uv() -> str:
    for candidate in (ROOT / ".tools" / "bin" / "uv", shutil.which("uv")):
        if candidate and Path(candidate).exists():
            return str(candidate)
    raise SystemExit("uv not found: run scripts/bootstrap.sh")


def requirements() -> str:
    return subprocess.run(
        [
            _uv(),
            "export",
            "--frozen",
            "--no-dev",
            "--no-emit-project",
            "--no-header",
            "--format",
            "requirements-txt",
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def build(out: Path) -> list[Path]:
    pinned = requirements()
    bundles = []
    for name in FUNCTIONS:
        bundle = out / name
        shutil.rmtree(bundle, ignore_errors=True)
        bundle.mkdir(parents=True)
        shutil.copy2(ROOT / "functions" / name / "main.py", bundle / "main.py")
        shutil.copytree(ROOT / "shared", bundle / "shared", ignore=_IGNORE)
        (bundle / "requirements.txt").write_text(pinned)
        bundles.append(bundle)
    return bundles


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "build")
    for bundle in build(parser.parse_args().out):
        print(bundle)


if __name__ == "__main__":
    main()
