"""Print a Firebase-style ID token for a local user, signed with the stack's user key.

    scripts/mint_token --user alice [--profile dev|test] [--ttl 3600]

The stack must have been up once (it creates the keys). Use the token as
`Authorization: Bearer <token>` against the local functions.
"""

from __future__ import annotations

import argparse
import sys

from stacklib.profile import STATE_DIRS, Profile
from stacklib.tokens import jwks_path, mint_user_token


def main() -> int:
    parser = argparse.ArgumentParser(prog="scripts/mint_token", description=__doc__.split("\n")[0])
    parser.add_argument("--user", required=True, help="the user id (token sub and user_id)")
    parser.add_argument("--profile", choices=sorted(STATE_DIRS), default="dev")
    parser.add_argument("--ttl", type=int, default=3600, help="lifetime in seconds")
    args = parser.parse_args()
    state = Profile(args.profile).state
    if not jwks_path(state, "user").exists():
        hint = f"run `scripts/stack up --profile {args.profile}`"
        print(f"no keys in {state}: {hint}", file=sys.stderr)
        return 1
    print(mint_user_token(state, args.user, ttl=args.ttl))
    return 0


if __name__ == "__main__":
    sys.exit(main())
