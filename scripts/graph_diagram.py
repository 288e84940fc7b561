"""Write docs/graph.md: the Mermaid diagram of the compiled turn graph (``make graph``).

    .venv/bin/python scripts/graph_diagram.py [--check]

``--check`` exits 1 when the file differs from the graph (tests/unit/test_graph_diagram.py
runs the same comparison).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGET = ROOT / "docs" / "graph.md"
HEADER = """# The turn graph (Global Supervisor)

Generated from the compiled graph by `make graph`; a test fails when this file is stale.
Each box is a stage subgraph (`shared/graph/nodes/<stage>.py`); dotted edges are the
routing functions of `shared/graph/routing.py`.

```mermaid
"""


def render() -> str:
    from shared.graph.builder import wire

    mermaid = wire(stage_checkpointer=None).get_graph(xray=True).draw_mermaid()
    return HEADER + mermaid.rstrip() + "\n```\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = render()
    if args.check:
        stale = not TARGET.exists() or TARGET.read_text() != text
        if stale:
            print("docs/graph.md is stale: run `make graph`", file=sys.stderr)
        return 1 if stale else 0
    TARGET.write_text(text)
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
