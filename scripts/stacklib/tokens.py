"""The stack's local signing keys and the tokens signed with them.

Two RSA keys live in ``<state>/auth/``: ``user`` plays Firebase Authentication (end-user ID
tokens) and ``internal`` plays Google's OIDC signer (Cloud Tasks and Pub/Sub push). Their public
halves are written as JWKS files that the functions read through AUTH_JWKS_FILE and
INTERNAL_JWKS_FILE. ``model_token`` holds the local model service's static bearer token. Also
imported inside the Cloud Tasks emulator's own venv, so this module needs only pyjwt and
cryptography.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import time
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import RSAAlgorithm

from .profile import PROJECT

USER_ISSUER = f"https://securetoken.google.com/{PROJECT}"
USER_AUDIENCE = PROJECT
INTERNAL_ISSUER = "https://accounts.google.com"
KEY_NAMES = ("user", "internal")


def auth_dir(state_dir: str | os.PathLike[str]) -> Path:
    return Path(state_dir) / "auth"


def jwks_path(state_dir: str | os.PathLike[str], name: str) -> Path:
    return auth_dir(state_dir) / f"{name}_jwks.json"


def _key_path(state_dir: str | os.PathLike[str], name: str) -> Path:
    return auth_dir(state_dir) / f"{name}_key.pem"


def _kid(public_jwk: dict[str, Any]) -> str:
    # RFC 7638 thumbprint: stable for a key, changes when the key is regenerated.
    canonical = json.dumps({k: public_jwk[k] for k in ("e", "kty", "n")}, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _write_private(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    tmp.replace(path)


def ensure_keys(state_dir: str | os.PathLike[str]) -> None:
    """Create both keys, their JWKS files and the local key-encryption key once."""
    auth_dir(state_dir).mkdir(parents=True, exist_ok=True)
    kek = auth_dir(state_dir) / "kek.key"
    if not kek.exists():  # 256 random bits: wraps the per-user data keys, as KMS does in prod
        _write_private(kek, os.urandom(32))
    if not model_token_path(state_dir).exists():
        _write_private(model_token_path(state_dir), secrets.token_urlsafe(32).encode())
    if not vapid_key_path(state_dir).exists():  # Web Push's VAPID key (prod: Secret Manager)
        vapid = ec.generate_private_key(ec.SECP256R1())
        pem = vapid.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        _write_private(vapid_key_path(state_dir), pem)
    for name in KEY_NAMES:
        key_path = _key_path(state_dir, name)
        if not key_path.exists():
            key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            pem = key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
            _write_private(key_path, pem)
            jwks_path(state_dir, name).unlink(missing_ok=True)
        if not jwks_path(state_dir, name).exists():
            private = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
            assert isinstance(private, rsa.RSAPrivateKey)
            jwk: dict[str, Any] = RSAAlgorithm.to_jwk(private.public_key(), as_dict=True)
            jwk.update(kid=_kid(jwk), alg="RS256", use="sig")
            jwks_path(state_dir, name).write_text(json.dumps({"keys": [jwk]}, indent=2) + "\n")


def vapid_key_path(state_dir: str | os.PathLike[str]) -> Path:
    return auth_dir(state_dir) / "vapid.pem"


def model_token_path(state_dir: str | os.PathLike[str]) -> Path:
    return auth_dir(state_dir) / "model_token"


def model_token(state_dir: str | os.PathLike[str]) -> str:
    """The bearer token the local model service accepts (``ensure_keys`` creates it)."""
    return model_token_path(state_dir).read_text().strip()


# Parsed signing keys, by key file, with the versions of the files they were read from.
# Loading an RSA key from PEM checks it (about 25 ms of CPU, ten times the signature): the
# Cloud Tasks emulator spent 80% of its CPU there, once per dispatched task.
_loaded: dict[Path, tuple[tuple[int, ...], str, rsa.RSAPrivateKey]] = {}


def _signing_key(state_dir: str | os.PathLike[str], name: str) -> tuple[str, rsa.RSAPrivateKey]:
    """The key's id and the key, read again only when ``ensure_keys`` rewrote the files."""
    key_path, keys_path = _key_path(state_dir, name).resolve(), jwks_path(state_dir, name)
    # Both files are written to a temporary name and moved in place: a new inode each time.
    key_stat, keys_stat = key_path.stat(), keys_path.stat()
    version = (key_stat.st_ino, key_stat.st_mtime_ns, keys_stat.st_ino, keys_stat.st_mtime_ns)
    known = _loaded.get(key_path)
    if known is None or known[0] != version:
        private = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
        assert isinstance(private, rsa.RSAPrivateKey)
        kid = json.loads(keys_path.read_text())["keys"][0]["kid"]
        known = _loaded[key_path] = (version, kid, private)
    return known[1], known[2]


def _sign(state_dir: str | os.PathLike[str], name: str, claims: dict[str, Any]) -> str:
    kid, key = _signing_key(state_dir, name)
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": kid})


def mint_user_token(state_dir: str | os.PathLike[str], user_id: str, ttl: int = 3600) -> str:
    """A Firebase-style ID token for ``user_id``, as the client app would send it."""
    now = int(time.time())
    claims = {
        "iss": USER_ISSUER,
        "aud": USER_AUDIENCE,
        "sub": user_id,
        "user_id": user_id,
        "auth_time": now,
        "iat": now,
        "exp": now + ttl,
        "firebase": {"identities": {}, "sign_in_provider": "custom"},
    }
    return _sign(state_dir, "user", claims)


def mint_internal_token(
    state_dir: str | os.PathLike[str], audience: str, email: str, ttl: int = 3600
) -> str:
    """A Google-style OIDC token for a service account, as Cloud Tasks or Pub/Sub push send."""
    now = int(time.time())
    # Google puts the service account's numeric unique id in sub; derive a stable stand-in.
    subject = str(int(hashlib.sha256(email.encode()).hexdigest()[:15], 16))
    claims = {
        "iss": INTERNAL_ISSUER,
        "aud": audience,
        "azp": subject,
        "sub": subject,
        "email": email,
        "email_verified": True,
        "iat": now,
        "exp": now + ttl,
    }
    return _sign(state_dir, "internal", claims)
