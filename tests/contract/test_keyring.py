"""KeyRing contract (in-memory and PostgreSQL + local key file), and the envelope format."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared.adapters.keyring_kms import crc32c
from shared.adapters.keyring_local import LocalKek
from shared.conversation.text import fold
from shared.crypto import DataKeyCipher, DecryptionFailed, new_data_key
from shared.errors import ConfigurationError
from tests.contract.conftest import KeyRingBackend, unique


def test_a_user_cipher_round_trips_and_is_stable(
    keyring_backend: KeyRingBackend, user_id: str
) -> None:
    cipher = keyring_backend.keys.cipher_for(user_id)
    sealed = cipher.encrypt("Zoë's birthday is on 3 May", "facts.text")
    assert b"birthday" not in sealed
    assert cipher.decrypt(sealed, "facts.text") == "Zoë's birthday is on 3 May"
    # the same key later, and from another instance that never saw it (empty cache)
    assert keyring_backend.keys.cipher_for(user_id).decrypt(sealed, "facts.text")
    other_instance = keyring_backend.another()
    assert other_instance.cipher_for(user_id).decrypt(sealed, "facts.text").startswith("Zoë")
    assert other_instance.cipher_for(user_id).name_hash("Zoë") == cipher.name_hash("zoe")


def test_each_encryption_uses_a_fresh_nonce(keyring_backend: KeyRingBackend, user_id: str) -> None:
    cipher = keyring_backend.keys.cipher_for(user_id)
    assert cipher.encrypt("same", "facts.text") != cipher.encrypt("same", "facts.text")


def test_a_ciphertext_is_bound_to_its_user_and_context(
    keyring_backend: KeyRingBackend, user_id: str
) -> None:
    mine = keyring_backend.keys.cipher_for(user_id)
    theirs = keyring_backend.keys.cipher_for(unique("user"))
    sealed = mine.encrypt("secret", "facts.text")
    with pytest.raises(DecryptionFailed):
        theirs.decrypt(sealed, "facts.text")
    with pytest.raises(DecryptionFailed):
        mine.decrypt(sealed, "persons.display_name")
    assert mine.name_hash("Anna") != theirs.name_hash("Anna")


def test_forgetting_a_key_makes_its_ciphertext_unreadable(
    keyring_backend: KeyRingBackend, user_id: str
) -> None:
    keys = keyring_backend.keys
    sealed = keys.cipher_for(user_id).encrypt("gone for good", "facts.text")
    keys.forget(user_id)
    keys.forget(user_id)  # idempotent
    for ring in (keys, keyring_backend.another()):
        with pytest.raises(DecryptionFailed):
            ring.cipher_for(user_id).decrypt(sealed, "facts.text")


def test_racing_instances_agree_on_a_new_users_key(
    keyring_backend: KeyRingBackend, user_id: str
) -> None:
    rings = [keyring_backend.another() for _ in range(4)]
    sealed: list[bytes] = []
    barrier = threading.Barrier(len(rings))

    def first_use(index: int) -> None:
        barrier.wait()
        sealed.append(rings[index].cipher_for(user_id).encrypt(f"from {index}", "facts.text"))

    threads = [threading.Thread(target=first_use, args=(i,)) for i in range(len(rings))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    reader = keyring_backend.another().cipher_for(user_id)
    assert sorted(reader.decrypt(s, "facts.text") for s in sealed) == [
        f"from {i}" for i in range(len(rings))
    ]


# -- the envelope itself (pure) ---------------------------------------------------------------
@pytest.mark.parametrize(
    ("written", "folded"),
    [
        ("  Zoë   MÜLLER ", "zoe muller"),
        ("ﬁona", "fiona"),
        ("Straße", "strasse"),
        ("José\tMaría", "jose maria"),
        ("Ångström", "angstrom"),
    ],
)
def test_names_are_normalised_before_hashing(written: str, folded: str) -> None:
    assert fold(written) == folded
    cipher = DataKeyCipher("u", new_data_key())
    assert cipher.name_hash(written) == cipher.name_hash(folded)


_NAMEISH = st.text(st.sampled_from("aAäÄeÉzZßﬁ .!-'\t"), max_size=8)


@given(_NAMEISH, _NAMEISH)
def test_a_hashed_lookup_and_a_name_comparison_agree(a: str, b: str) -> None:
    """Persons are found by the hash and told apart by ``fold``: the two never disagree."""
    cipher = DataKeyCipher("u", bytes(32))
    assert (cipher.name_hash(a) == cipher.name_hash(b)) == (fold(a) == fold(b))


def test_a_tampered_or_unknown_ciphertext_does_not_decrypt() -> None:
    cipher = DataKeyCipher("u", new_data_key())
    sealed = bytearray(cipher.encrypt("text", "c"))
    assert sealed[0] == 1  # the format version
    for bad in (
        bytes(sealed[:-1]) + bytes([sealed[-1] ^ 1]),  # a flipped tag bit
        b"\x02" + bytes(sealed[1:]),  # a version this code does not know
        bytes(sealed[:10]),  # truncated
    ):
        with pytest.raises(DecryptionFailed):
            cipher.decrypt(bad, "c")
    assert "key" not in repr(cipher).lower().replace("datakeycipher", "")


def test_the_local_kek_binds_a_wrapped_key_to_its_user(tmp_path: Path) -> None:
    path = tmp_path / "kek.key"
    path.write_bytes(new_data_key())
    kek = LocalKek(path)
    data_key = new_data_key()
    wrapped = kek.wrap(data_key, "alice")
    assert data_key not in wrapped
    assert kek.unwrap(wrapped, "alice") == data_key
    with pytest.raises(DecryptionFailed):
        kek.unwrap(wrapped, "bob")
    assert LocalKek(path).kek_id == kek.kek_id


def test_a_local_kek_of_the_wrong_size_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "short.key"
    path.write_bytes(b"too short")
    with pytest.raises(ConfigurationError):
        LocalKek(path)
    with pytest.raises(ConfigurationError):
        LocalKek(tmp_path / "missing.key")


def test_crc32c_is_castagnoli() -> None:
    assert crc32c(b"123456789") == 0xE3069283  # the check value of CRC-32C
    assert crc32c(b"") == 0
