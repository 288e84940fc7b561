"""Re-embed every stored fact with the configured embedding model (run after changing it).

    .venv/bin/python scripts/reembed.py [--batch 64]

Resumable: it migrates whatever is still of another model, so it can be stopped and rerun.
In production run it where the Cloud SQL connector and the model provider are reachable,
with the same settings as the functions.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from shared.deps import get_deps
from shared.services.memory.reembed import reembed_all


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--batch", type=int, default=64)
    args = parser.parse_args()
    deps = get_deps()
    done = reembed_all(deps.embedding_migration, deps.embedder, args.batch)
    print(f"re-embedded {done} facts with {deps.embedder.model_name}")


if __name__ == "__main__":
    main()
