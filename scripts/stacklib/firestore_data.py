"""The dev stack's Firestore documents kept across restarts.

The emulator holds documents in memory only, while PostgreSQL keeps its files: without
this, a restarted ``make dev`` would remember the user's people and facts but not their
chats, reminders and expenses. ``save`` asks the running emulator for an export (its HTTP
export endpoint; the JAR's own ``--export-on-exit`` writes nothing on a signal) before the
stack stops it; ``latest`` is the export the next start imports (``--import-data``).
"""

from __future__ import annotations

import json
import shutil
import urllib.request
from pathlib import Path

from .profile import HOST, PROJECT

EXPORTS = "firestore-export"
TIMEOUT = 60.0


def save(port: int, exports: Path) -> Path | None:
    """Export every document into a new folder of ``exports``, then drop the older ones;
    None when no emulator answers (nothing was running, nothing is lost)."""
    exports.mkdir(parents=True, exist_ok=True)
    before = {path.name for path in exports.iterdir()}
    body = {
        "database": f"projects/{PROJECT}/databases/(default)",
        "export_directory": str(exports.resolve()),
    }
    request = urllib.request.Request(
        f"http://{HOST}:{port}/emulator/v1/projects/{PROJECT}:export",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback only
    try:
        with opener.open(request, timeout=TIMEOUT):
            pass
    except OSError:
        return None
    made = latest(exports)
    if made is not None and made.parent.name not in before:
        for old in before:
            shutil.rmtree(exports / old, ignore_errors=True)
    return made


def latest(exports: Path) -> Path | None:
    """The newest export's metadata file, which ``--import-data`` takes."""
    found = sorted(exports.glob("*/*.overall_export_metadata"), key=lambda p: p.stat().st_mtime)
    return found[-1] if found else None
