"""scripts/grant_db_access.py accepts exactly the database users terraform creates."""

from __future__ import annotations

import pytest

from scripts.grant_db_access import ROLE, grant_statements
from tests.terraform.tfconfig import load


@pytest.mark.parametrize("environment", sorted(load().environments))
def test_every_function_database_user_is_accepted(environment: str) -> None:
    tf = load()
    prefix = tf.evaluate("${var.name_prefix}", environment)
    project = tf.evaluate("${var.project_id}", environment)
    # google_sql_user.function: the service account's email without ".gserviceaccount.com"
    users = [f"{prefix}-{name}@{project}.iam" for name in tf.locals["functions"]]
    statements = grant_statements(users)
    assert statements[-len(users) :] == [f'GRANT {ROLE} TO "{user}"' for user in users]


@pytest.mark.parametrize(
    "user", ['x"; DROP TABLE facts; --', "someone@example.com", "assistant-turn@proj.iam "]
)
def test_anything_else_is_refused(user: str) -> None:
    with pytest.raises(ValueError, match="not an IAM database user"):
        grant_statements([user])
