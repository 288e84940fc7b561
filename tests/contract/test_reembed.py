"""Re-embedding after a change of embedding model (PostgreSQL only: an operator's job)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from shared.adapters.keyring_local import LocalKek
from shared.adapters.migrations import apply_migrations
from shared.adapters.postgres import Database, connect
from shared.adapters.postgres_facts import PostgresFactStore
from shared.adapters.postgres_keyring import PostgresKeyRing
from shared.adapters.postgres_reembed import PostgresEmbeddingMigration
from shared.config import Settings
from shared.fakes.scripted_llm import HashEmbedder
from shared.models.memory import ExtractionChanges, FactFilter, SemanticQuery, Supersession
from shared.services.memory.reembed import reembed_all
from tests.contract.conftest import fresh_database
from tests.contract.fact_builders import MODEL, T0, days, draft

pytestmark = [pytest.mark.stack, pytest.mark.usefixtures("stack_env")]
NEW = HashEmbedder(dimension=16)


@pytest.fixture
def stores(
    settings: Settings, local_kek: LocalKek
) -> Iterator[tuple[PostgresFactStore, PostgresEmbeddingMigration]]:
    """An empty database of its own: the job migrates every user's facts."""
    with fresh_database(settings) as fresh:
        conn = connect(fresh)
        apply_migrations(conn)
        conn.close()
        db = Database(fresh)
        keys = PostgresKeyRing(db, local_kek)
        yield PostgresFactStore(db, keys), PostgresEmbeddingMigration(db, keys)
        db.close()


def test_every_fact_moves_to_the_new_model_and_spaces_never_mix(
    stores: tuple[PostgresFactStore, PostgresEmbeddingMigration],
) -> None:
    facts, migration = stores
    for user in ("alice", "bob"):
        new = [draft(f"{user}-a", text=f"{user} likes tea"),
               draft(f"{user}-b", text=f"{user} plays chess")]  # fmt: skip
        assert facts.apply_extraction(f"t-{user}", user, ExtractionChanges(new_facts=new), T0)
    old = next(f for f in facts.list_facts("alice", FactFilter()) if "tea" in f.text)
    replacement = draft("alice-c", text="alice likes green tea")
    change = ExtractionChanges(
        supersessions=[Supersession(old_fact_id=old.id, replacement=replacement)]
    )
    assert facts.apply_extraction("t-alice-2", "alice", change, T0 + days(1))

    def old_space() -> list[object]:
        query = SemanticQuery(embedding=[1.0, 0.0, 0.0], embedding_model=MODEL, min_similarity=-1)
        return list(facts.search("alice", query, T0 + days(1)))

    assert old_space()  # before: the old model's vectors answer the old model's queries
    assert len(migration.stale(NEW.model_name, 100)) == 5  # history too
    assert reembed_all(migration, NEW, batch=2) == 5
    assert migration.stale(NEW.model_name, 100) == []
    assert reembed_all(migration, NEW) == 0  # nothing left: a rerun is a no-op

    history = facts.list_facts("alice", FactFilter(include_history=True))
    assert {(f.embedding_model, f.embedding_dim) for f in history} == {(NEW.model_name, 16)}
    [hit] = facts.search("alice", SemanticQuery(
        embedding=NEW.embed(["alice plays chess"])[0], embedding_model=NEW.model_name,
        limit=1, min_similarity=0.5), T0 + days(1))  # fmt: skip
    assert hit.fact.text == "alice plays chess"
    assert old_space() == []  # after: none of the old space is left to mix in
