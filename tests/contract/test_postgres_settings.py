"""How ``connect`` reads its settings; no database needed."""

from __future__ import annotations

import pytest

from shared.adapters.postgres import connect, parse_database_url
from shared.config import Settings
from shared.errors import ConfigurationError


def test_database_url_parsing() -> None:
    assert parse_database_url("postgresql://us%40r:p%2Fw@db.local:6543/app") == {
        "user": "us@r",
        "password": "p/w",
        "host": "db.local",
        "port": 6543,
        "database": "app",
    }
    assert parse_database_url("postgres://me@localhost/db")["port"] == 5432


@pytest.mark.parametrize("url", ["mysql://u@h/db", "postgresql://host-only/db"])
def test_a_malformed_database_url_is_a_configuration_error(url: str) -> None:
    with pytest.raises(ConfigurationError):
        parse_database_url(url)


def test_without_a_url_the_cloud_sql_settings_are_required() -> None:
    settings = Settings(database_url=None, cloud_sql_instance=None, db_iam_user=None)
    with pytest.raises(ConfigurationError):
        connect(settings)
