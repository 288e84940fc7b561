"""Embed the understanding router's examples into shared/understanding/route_vectors.npz.

Run after changing shared/understanding/examples.py:
``.venv/bin/python scripts/understanding_vectors.py``
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from shared.adapters.local_embedder import LocalEmbedder
from shared.understanding.router import VECTORS_FILE, write_vectors


def main() -> None:
    write_vectors(LocalEmbedder())
    print(f"wrote {VECTORS_FILE} ({VECTORS_FILE.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
