"""A key-encryption key read from a local file (dev and tests; Cloud KMS in production).

``scripts/stack up`` writes 32 random bytes to ``LOCAL_KEK_FILE``. Data keys are wrapped with
AES-256-GCM under it, the user id bound as associated data. Settings refuse a local key file
outside dev/test.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from shared.crypto import DATA_KEY_BYTES, DecryptionFailed, bound_to, open_sealed, seal
from shared.errors import ConfigurationError

_CONTEXT = "user_keys.wrapped_key"


class LocalKek:
    def __init__(self, path: str | Path) -> None:
        try:
            key = Path(path).read_bytes()
        except OSError as exc:
            raise ConfigurationError(f"cannot read the local key-encryption key: {exc}") from exc
        if len(key) != DATA_KEY_BYTES:
            raise ConfigurationError("the local key-encryption key must be 32 bytes")
        self._key = key
        # Names the key without revealing it: a truncated hash of 256 random bits.
        self.kek_id = "local:" + hashlib.sha256(b"kek-id|" + key).hexdigest()[:16]

    def __repr__(self) -> str:
        return f"LocalKek({self.kek_id})"

    def wrap(self, data_key: bytes, user_id: str) -> bytes:
        return seal(self._key, data_key, bound_to(user_id, _CONTEXT))

    def unwrap(self, wrapped: bytes, user_id: str) -> bytes:
        data_key = open_sealed(self._key, bytes(wrapped), bound_to(user_id, _CONTEXT))
        if len(data_key) != DATA_KEY_BYTES:
            raise DecryptionFailed("an unwrapped data key has 32 bytes")
        return data_key
