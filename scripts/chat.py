"""Terminal chat against the local turn endpoint: streams replies, answers interrupts.

    .venv/bin/python scripts/chat.py [--profile dev] [--user dev-user]

It uses the same path as a real client: a minted ID token, POST to the turn URL with
``stream: true``. A question (an interrupt) streams with numbered options; the next
message answers it (a number, the option's words) or moves on to something else.
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.serve import read_env, state_dir  # noqa: E402
from scripts.stacklib.tokens import mint_user_token  # noqa: E402


def sse_events(response: httpx.Response) -> Iterator[tuple[str, dict[str, Any]]]:
    event, data = "message", ""
    for line in response.iter_lines():
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data += line[5:].strip()
        elif not line and data:
            yield event, json.loads(data)
            event, data = "message", ""


def print_error(body: dict[str, Any]) -> None:
    error = body.get("error", body)
    print(f"\n[error {error.get('code')}] {error.get('message')}")


def chat(turn_url: str, headers: dict[str, str]) -> None:
    chat_id: str | None = None
    with httpx.Client(timeout=300, headers=headers) as client:
        while True:
            try:
                message = input("\nyou > ").strip()
            except EOFError:
                return
            if not message:
                continue
            body = {
                "chat_id": chat_id,
                "message": message,
                "client_message_id": uuid.uuid4().hex,
                "stream": True,
            }
            print("assistant > ", end="", flush=True)
            with client.stream("POST", turn_url, json=body) as response:
                if response.status_code != 200:
                    response.read()
                    print_error(response.json())
                    continue
                for event, data in sse_events(response):
                    if event == "chunk":
                        print(data["text"], end="", flush=True)
                    elif event in ("done", "interrupt"):
                        chat_id = data["chat_id"]
                        if data.get("interrupt"):
                            print("\n(answer with a number or in your own words)", end="")
                    elif event == "error":
                        print_error(data)
            print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--profile", default="dev")
    parser.add_argument("--user", default="dev-user")
    args = parser.parse_args()
    env = read_env(args.profile)
    token = mint_user_token(state_dir(args.profile), args.user, ttl=12 * 3600)
    print(f"chatting as {args.user!r} (offline local model; Ctrl-D to quit)")
    chat(env["TURN_URL"], {"Authorization": f"Bearer {token}"})


if __name__ == "__main__":
    main()
