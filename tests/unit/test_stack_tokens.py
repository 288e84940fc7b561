"""The local stack's signing keys: a key is parsed once per process, and a regenerated key
is used from the next token on (the Cloud Tasks emulator keeps running across key changes)."""

from __future__ import annotations

import json
from pathlib import Path

import jwt
from jwt.algorithms import RSAAlgorithm

from scripts.stacklib import tokens


def _verified(state: Path, token: str) -> dict[str, object]:
    jwk = json.loads(tokens.jwks_path(state, "user").read_text())["keys"][0]
    assert jwt.get_unverified_header(token)["kid"] == jwk["kid"]
    key = RSAAlgorithm.from_jwk(json.dumps(jwk))
    claims: dict[str, object] = jwt.decode(
        token,
        key,
        algorithms=["RS256"],
        audience=tokens.USER_AUDIENCE,  # type: ignore[arg-type]
    )
    return claims


def test_tokens_verify_against_the_published_key(tmp_path: Path) -> None:
    tokens.ensure_keys(tmp_path)
    first = tokens.mint_user_token(tmp_path, "ana")
    second = tokens.mint_user_token(tmp_path, "ben")
    assert _verified(tmp_path, first)["sub"] == "ana"
    assert _verified(tmp_path, second)["sub"] == "ben"


def test_a_regenerated_key_signs_the_next_token(tmp_path: Path) -> None:
    tokens.ensure_keys(tmp_path)
    before = tokens.mint_user_token(tmp_path, "ana")
    (tmp_path / "auth" / "user_key.pem").unlink()
    tokens.ensure_keys(tmp_path)  # a new key, and its JWKS written again
    after = tokens.mint_user_token(tmp_path, "ana")
    assert jwt.get_unverified_header(after)["kid"] != jwt.get_unverified_header(before)["kid"]
    assert _verified(tmp_path, after)["sub"] == "ana"
