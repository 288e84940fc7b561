"""The production key-encryption key: Cloud KMS encrypts and decrypts the per-user data keys.

``KmsKek(client, key_name)`` receives a ``google.cloud.kms.KeyManagementServiceClient`` (built
by ``build_kms_client``, which imports the library only when called: local runs never load
it). The key never leaves KMS; each call sends one 32-byte data key. The user id is bound as
additional authenticated data, and CRC32C checksums guard both directions against corruption
in transit, as Google recommends for Encrypt/Decrypt.

A decrypt happens once per user per instance (``PostgresKeyRing`` caches unwrapped keys).
"""

from __future__ import annotations

from typing import Any

from shared.adapters.gcp_errors import transient_as_unavailable
from shared.crypto import DATA_KEY_BYTES, DecryptionFailed, bound_to

_CONTEXT = "user_keys.wrapped_key"


def build_kms_client() -> Any:
    from google.cloud import kms

    return kms.KeyManagementServiceClient()


class KmsKek:
    def __init__(self, client: Any, key_name: str) -> None:
        self._client = client
        self._key_name = key_name
        # The CryptoKey, not a version: KMS decrypts with whichever version encrypted, so
        # rotating the key needs no rewrapping.
        self.kek_id = f"kms:{key_name}"

    def __repr__(self) -> str:
        return f"KmsKek({self._key_name})"

    def wrap(self, data_key: bytes, user_id: str) -> bytes:
        aad = bound_to(user_id, _CONTEXT)
        with transient_as_unavailable("cloud kms"):
            response = self._client.encrypt(
                request={
                    "name": self._key_name,
                    "plaintext": data_key,
                    "plaintext_crc32c": crc32c(data_key),
                    "additional_authenticated_data": aad,
                    "additional_authenticated_data_crc32c": crc32c(aad),
                }
            )
        ciphertext = bytes(response.ciphertext)
        verified = (
            response.verified_plaintext_crc32c
            and response.verified_additional_authenticated_data_crc32c
            and _checksum(response.ciphertext_crc32c) == crc32c(ciphertext)
        )
        if not verified:
            raise DecryptionFailed("cloud kms encrypt: checksum mismatch in transit")
        return ciphertext

    def unwrap(self, wrapped: bytes, user_id: str) -> bytes:
        aad = bound_to(user_id, _CONTEXT)
        ciphertext = bytes(wrapped)
        with transient_as_unavailable("cloud kms"):
            response = self._client.decrypt(
                request={
                    "name": self._key_name,
                    "ciphertext": ciphertext,
                    "ciphertext_crc32c": crc32c(ciphertext),
                    "additional_authenticated_data": aad,
                    "additional_authenticated_data_crc32c": crc32c(aad),
                }
            )
        data_key = bytes(response.plaintext)
        if _checksum(response.plaintext_crc32c) != crc32c(data_key):
            raise DecryptionFailed("cloud kms decrypt: checksum mismatch in transit")
        if len(data_key) != DATA_KEY_BYTES:
            raise DecryptionFailed("an unwrapped data key has 32 bytes")
        return data_key


def _checksum(value: Any) -> int | None:
    """KMS returns checksums as ``Int64Value`` wrappers, or plain ints in proto-plus."""
    if value is None:
        return None
    return int(getattr(value, "value", value))


def _crc32c_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli), as KMS computes it; the inputs here are a few dozen bytes."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF
