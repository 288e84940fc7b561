"""Close every fact whose durability ran out (the scheduled expiry job, run by hand).

    .venv/bin/python scripts/expire_facts.py [--now 2026-07-01T00:00:00+00:00] [--batch 500]

With the settings of the functions (the stack's env file locally). ``--now`` pretends the
job runs at another moment (a test, or catching up); without it, the configured clock.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from shared.app.expiry import BATCH, expire_facts
from shared.deps import get_deps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--now", type=datetime.fromisoformat)
    parser.add_argument("--batch", type=int, default=BATCH)
    args = parser.parse_args()
    if args.now is not None and args.now.tzinfo is None:
        parser.error("--now needs a time zone, e.g. 2026-07-01T00:00:00+00:00")
    deps = get_deps()
    outcome = expire_facts(deps, args.now or deps.clock.now(), batch=args.batch)
    print(json.dumps(outcome.as_body()))


if __name__ == "__main__":
    main()
