"""Apply pending database migrations.

Run ``python scripts/migrate.py`` or ``python -m scripts.migrate`` from the repository root.

Reads the same Settings as the functions (DATABASE_URL locally, the Cloud SQL connector
otherwise). Prints each migration it applied; exits 1 when one fails.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run as a plain script from anywhere

from shared.adapters.migrations import apply_migrations  # noqa: E402
from shared.adapters.postgres import connect  # noqa: E402
from shared.config import Settings  # noqa: E402
from shared.errors import AppError  # noqa: E402


def main() -> int:
    try:
        conn = connect(Settings())
    except AppError as exc:
        print(f"migrate: cannot connect: {exc.message}", file=sys.stderr)
        return 1
    try:
        applied = apply_migrations(conn)
    except Exception as exc:  # the edge: report any failure as a non-zero exit
        print(f"migrate: failed: {exc}", file=sys.stderr)
        return 1
    finally:
        conn.close()
    for migration in applied:
        print(f"applied {migration.name}")
    print(f"{len(applied)} migration(s) applied")
    return 0


if __name__ == "__main__":
    sys.exit(main())
