"""In-memory ``KeyRing`` for unit tests: the same ciphers as production, keys in a dict."""

from __future__ import annotations

import threading

from shared.crypto import DataKeyCipher, new_data_key


class FakeKeyRing:
    def __init__(self) -> None:
        self._ciphers: dict[str, DataKeyCipher] = {}
        self._lock = threading.Lock()

    def cipher_for(self, user_id: str) -> DataKeyCipher:
        with self._lock:
            cipher = self._ciphers.get(user_id)
            if cipher is None:
                cipher = self._ciphers[user_id] = DataKeyCipher(user_id, new_data_key())
            return cipher

    def forget(self, user_id: str) -> None:
        with self._lock:
            self._ciphers.pop(user_id, None)

    def has_key(self, user_id: str) -> bool:
        return user_id in self._ciphers
