"""``KeyRing`` on PostgreSQL: one wrapped data key per user in ``user_keys``.

- **First use**: a random data key is wrapped by the key-encryption key (Cloud KMS, or a
  local key file in dev) and inserted with ``ON CONFLICT DO NOTHING``; the row is then read
  back, so two instances racing on a new user both end up with the key that won.
- **Cache**: unwrapped keys stay in a bounded LRU for ``ttl_seconds`` (one KMS decrypt per
  user per instance and period, not per request). The TTL bounds how long another instance
  keeps using a key after ``forget``; a write it attempts after that fails on the foreign
  keys to ``user_keys`` (the row is gone) instead of leaving unreadable ciphertext behind.
- **forget** deletes the row: crypto-shredding. Every table holding the user's ciphertext
  references ``user_keys`` ON DELETE CASCADE, so the rows go with it.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from shared.adapters.postgres import Database
from shared.crypto import DataKeyCipher, KeyEncryptionKey, new_data_key
from shared.errors import ConfigurationError, DependencyUnavailable


class PostgresKeyRing:
    def __init__(
        self,
        db: Database,
        kek: KeyEncryptionKey,
        *,
        max_cached: int = 1024,
        ttl_seconds: float = 300.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._db = db
        self._kek = kek
        self._max_cached = max_cached
        self._ttl = ttl_seconds
        self._monotonic = monotonic
        self._cache: OrderedDict[str, tuple[DataKeyCipher, float]] = OrderedDict()
        self._lock = threading.Lock()

    def cipher_for(self, user_id: str) -> DataKeyCipher:
        cached = self._cached(user_id)
        if cached is not None:
            return cached
        wrapped, kek_id = self._load_or_create(user_id)
        if kek_id != self._kek.kek_id:
            raise ConfigurationError(
                f"the data key of this user is wrapped by {kek_id}, not {self._kek.kek_id}"
            )
        cipher = DataKeyCipher(user_id, self._kek.unwrap(wrapped, user_id))
        with self._lock:
            self._cache[user_id] = (cipher, self._monotonic() + self._ttl)
            self._cache.move_to_end(user_id)
            while len(self._cache) > self._max_cached:
                self._cache.popitem(last=False)
        return cipher

    def forget(self, user_id: str) -> None:
        with self._lock:
            self._cache.pop(user_id, None)
        with self._db.transaction() as cur:
            cur.execute("DELETE FROM user_keys WHERE user_id = %s", (user_id,))

    def _cached(self, user_id: str) -> DataKeyCipher | None:
        with self._lock:
            entry = self._cache.get(user_id)
            if entry is None:
                return None
            cipher, expires = entry
            if self._monotonic() >= expires:
                del self._cache[user_id]
                return None
            self._cache.move_to_end(user_id)
            return cipher

    def _load_or_create(self, user_id: str) -> tuple[bytes, str]:
        found = self._select(user_id)
        if found is not None:
            return found
        # Wrapped outside the transaction: a KMS call must not hold a database connection.
        wrapped = self._kek.wrap(new_data_key(), user_id)
        with self._db.transaction() as cur:
            cur.execute(
                "INSERT INTO user_keys (user_id, wrapped_key, kek_id) VALUES (%s, %s, %s)"
                " ON CONFLICT (user_id) DO NOTHING",
                (user_id, wrapped, self._kek.kek_id),
            )
        found = self._select(user_id)  # ours, or the key of whoever inserted first
        if found is None:  # forgotten between the insert and the read: a deletion won
            raise DependencyUnavailable("the user's data key was deleted while being created")
        return found

    def _select(self, user_id: str) -> tuple[bytes, str] | None:
        with self._db.transaction() as cur:
            cur.execute("SELECT wrapped_key, kek_id FROM user_keys WHERE user_id = %s", (user_id,))
            row = cur.fetchone()
        return None if row is None else (bytes(row[0]), str(row[1]))
