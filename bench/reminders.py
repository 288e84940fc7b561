"""1,000 reminders due in the same minute, on the local stack: how late they ring, and that
each rings exactly once on every channel.

The five functions are served on the test profile's ports (as the e2e suite serves them),
with the loopback push stand-ins (``testkit/push_services.py``): every user has a browser
(Web Push, decrypted by the mock push service) and a phone (the fake FCM). The reminders
are set through the API (``POST /v1/reminders``) for the next whole minute at least
``--lead`` seconds ahead, all at its first second (the worst case: "at 9:00"); the Cloud
Tasks emulator delivers each at its ``schedule_time`` to the resume function, in real time.

Printed: the delay from ``due_at`` to the ringing (the inbox notification's ``created_at``,
the handler's clock) p50, p95 and max; how many rang, how many rang twice (duplicates in
the inbox, at the push service, at FCM) and how many never rang (misses).

    .venv/bin/python -m bench.reminders [--users 50] [--per-user 20] [--lead 45]

Needs ``scripts/stack up --profile test`` and the test profile's function ports free.
"""

from __future__ import annotations

import argparse
import os
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from bench.turn_report import pct
from scripts import serve
from scripts.stacklib import tokens
from scripts.stacklib.profile import Profile
from shared.config import Settings
from testkit.model_rules import reply_for
from testkit.push_services import FakeFcm, MockPushService
from testkit.stack_env import load_stack_env
from testkit.vertex_server import FakeVertexServer

PROFILE = "test"


def serve_functions(push: MockPushService, fcm: FakeFcm, model: FakeVertexServer) -> None:
    extra = {
        "MODEL_PROVIDER": "vertex",
        "VERTEX_BASE_URL": model.base_url,
        "VERTEX_ACCESS_TOKEN": model.token,
        "UNDERSTANDING_TIER": "false",
        "LOG_LEVEL": "WARNING",
        "RATE_LIMIT_PER_MINUTE": "100000",
        "WEB_PUSH_HOSTS": f"{Settings().web_push_hosts},{push.host}",
        "WEB_PUSH_CA_FILE": str(push.ca_file),
        "FCM_ENABLED": "true",
        "FCM_BASE_URL": fcm.base_url,
        "FCM_ACCESS_TOKEN": fcm.token,
    }
    serve.down(PROFILE)
    serve.up(PROFILE, extra_env=extra)


class User:
    def __init__(self, origin: str, push: MockPushService, fcm: FakeFcm) -> None:
        self.id = f"bench-rem-{uuid.uuid4().hex[:10]}"
        token = tokens.mint_user_token(Profile(PROFILE).state, self.id, ttl=3600)
        self.client = httpx.Client(base_url=origin, timeout=60,
                                   headers={"Authorization": f"Bearer {token}"})  # fmt: skip
        self.browser = push.subscribe()
        self.phone = fcm.register()
        for body in ({"kind": "web_push", "web_push": self.browser},
                     {"kind": "fcm", "fcm_token": self.phone}):  # fmt: skip
            answer = self.client.post("/v1/devices", json=body)
            assert answer.status_code == 200, answer.text
        self.reminders: list[str] = []

    def set(self, due: datetime, count: int) -> None:
        for n in range(count):
            body = {"text": f"bench {n}", "due_at": due.isoformat()}
            answer = self.client.post("/v1/reminders", json=body)
            assert answer.status_code == 200, answer.text
            self.reminders.append(answer.json()["id"])

    def inbox(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        params: dict[str, Any] = {"page_size": 200}
        while True:
            page = self.client.get("/v1/notifications", params=params).json()
            found += page["notifications"]
            if not page["next_page_token"]:
                return found
            params["page_token"] = page["next_page_token"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--per-user", type=int, default=20)
    parser.add_argument("--lead", type=float, default=45.0, help="seconds to set them up")
    parser.add_argument("--wait", type=float, default=300.0, help="seconds to wait for them")
    args = parser.parse_args()
    if not load_stack_env():
        raise SystemExit("the test stack is not up: scripts/stack up --profile test")
    os.environ["ENV"] = "test"
    push, fcm = MockPushService(), FakeFcm(project=Settings().gcp_project)
    model = FakeVertexServer(token="bench-static-token", fallback=reply_for).start()
    serve_functions(push, fcm, model)
    origin = Profile(PROFILE).url("web").rstrip("/")
    try:
        run(args, origin, push, fcm)
    finally:
        serve.down(PROFILE)
        push.stop()
        fcm.stop()
        model.stop()


def run(args: argparse.Namespace, origin: str, push: MockPushService, fcm: FakeFcm) -> None:
    total = args.users * args.per_user
    start = datetime.now(UTC) + timedelta(seconds=args.lead)
    due = start.replace(second=0, microsecond=0) + timedelta(minutes=1)
    with ThreadPoolExecutor(max_workers=16) as pool:
        users = list(pool.map(lambda _: User(origin, push, fcm), range(args.users)))
        set_at = time.monotonic()
        list(pool.map(lambda user: user.set(due, args.per_user), users))
    print(f"{total} reminders set in {time.monotonic() - set_at:.1f} s for {due:%H:%M:%S} UTC")
    if datetime.now(UTC) >= due:
        raise SystemExit("setting them up took past their due time: raise --lead")
    deadline = time.monotonic() + (due - datetime.now(UTC)).total_seconds() + args.wait
    while time.monotonic() < deadline:
        if sum(len(b.received) for b in push.browsers.values()) >= total:
            break
        time.sleep(1.0)
    time.sleep(2.0)  # any duplicate still in flight lands too
    report(users, due, push, fcm, total)


def report(users: list[User], due: datetime, push: MockPushService, fcm: FakeFcm,
           total: int) -> None:  # fmt: skip
    notes = [n for user in users for n in user.inbox()]
    delays = [(datetime.fromisoformat(n["created_at"]) - due).total_seconds() for n in notes]
    by_reminder = Counter(n["target"]["reminder_id"] for n in notes)
    pushed = Counter(p["id"] for b in push.browsers.values() for p in b.received)
    phoned = Counter(m["data"]["id"] for m in fcm.sent)
    set_ids = {r for user in users for r in user.reminders}
    print(f"rang: {len(by_reminder)} of {total}; misses: {len(set_ids - set(by_reminder))}")
    print(f"duplicates: inbox {sum(c - 1 for c in by_reminder.values())}, "
          f"web push {sum(c - 1 for c in pushed.values())}, "
          f"fcm {sum(c - 1 for c in phoned.values())}")  # fmt: skip
    print(f"pushes: web push {sum(pushed.values())}, fcm {sum(phoned.values())}; "
          f"refused by the push service: {len(push.refused)}")  # fmt: skip
    if delays:
        print(f"delay after due_at (s): p50 {pct(delays, 50):.2f}  p95 {pct(delays, 95):.2f}"
              f"  max {max(delays):.2f}  min {min(delays):.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
