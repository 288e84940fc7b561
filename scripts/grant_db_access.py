"""Give the deployed functions' database users their privileges (once per environment).

Cloud SQL creates the functions' IAM database users (terraform/data.tf) without any
privilege. This grants an ``assistant_app`` role read and write access to every table of the
schema, present and future (the migrations' owner runs it, so the default privileges cover
the tables later migrations create), and grants that role to each user::

    DATABASE_URL=postgresql://postgres:PASSWORD@127.0.0.1:5432/assistant \\
        .venv/bin/python scripts/grant_db_access.py [USER ...]

Without users it grants the ones ``terraform -chdir=terraform output -json db_iam_users``
lists. Safe to repeat. See docs/deploy.md, "Migrations".
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run as a plain script from anywhere

from shared.adapters.postgres import connect  # noqa: E402
from shared.config import Settings  # noqa: E402
from shared.errors import AppError  # noqa: E402

ROLE = "assistant_app"
# A service account's IAM database user: its email without ".gserviceaccount.com".
_IAM_USER = re.compile(r"^[a-z][a-z0-9-]{4,28}[a-z0-9]@[a-z][a-z0-9-]{4,28}[a-z0-9]\.iam$")


def grant_statements(users: list[str]) -> list[str]:
    """The statements, in order; refuses anything that is not a service-account user name."""
    for user in users:
        if not _IAM_USER.match(user):
            raise ValueError(f"not an IAM database user of a service account: {user!r}")
    statements = [
        f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{ROLE}') THEN"
        f" CREATE ROLE {ROLE} NOLOGIN; END IF; END $$",
        f"GRANT USAGE ON SCHEMA public TO {ROLE}",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {ROLE}",
        f"GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO {ROLE}",
        "ALTER DEFAULT PRIVILEGES IN SCHEMA public"
        f" GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {ROLE}",
        "ALTER DEFAULT PRIVILEGES IN SCHEMA public"
        f" GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO {ROLE}",
    ]
    statements += [f'GRANT {ROLE} TO "{user}"' for user in users]
    return statements


def terraform_users() -> list[str]:
    output = subprocess.run(
        ["terraform", f"-chdir={ROOT / 'terraform'}", "output", "-json", "db_iam_users"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [str(user) for user in json.loads(output)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "users", nargs="*", help="IAM database users (default: terraform output db_iam_users)"
    )
    users: list[str] = parser.parse_args().users
    try:
        users = users or terraform_users()
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"grant_db_access: no users given and none from terraform: {exc}", file=sys.stderr)
        return 2
    try:
        statements = grant_statements(users)
    except ValueError as exc:
        print(f"grant_db_access: {exc}", file=sys.stderr)
        return 2
    try:
        conn = connect(Settings())
    except AppError as exc:
        print(f"grant_db_access: cannot connect: {exc.message}", file=sys.stderr)
        return 1
    try:
        cur = conn.cursor()
        for statement in statements:
            cur.execute(statement)
        conn.commit()
    except Exception as exc:  # the edge: report any failure as a non-zero exit
        conn.rollback()
        print(f"grant_db_access: failed: {exc}", file=sys.stderr)
        return 1
    finally:
        conn.close()
    print(f"{ROLE} granted to {len(users)} user(s): {', '.join(users)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
