"""Verification of bearer tokens: end users (Firebase ID tokens) and internal callers.

End users: RS256 ID tokens whose issuer, audience and signing keys come from Settings
(Firebase's public key set in production, the stack's generated key set locally), so the
local chat and the tests go through the same code as production.

Internal callers (Cloud Tasks -> extraction, Pub/Sub push -> agents): Google-signed OIDC
tokens whose audience is the function's URL and whose email is the invoker service account.
Locally the stack's Tasks emulator and push relay sign the same claims with a local key.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt

from shared.config import Settings
from shared.errors import DependencyUnavailable, Unauthenticated

# Firebase uids are at most 128 characters; they become Firestore path segments.
_USER_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_GOOGLE_CERTS = "https://www.googleapis.com/oauth2/v3/certs"
_LEEWAY_SECONDS = 30


def bearer_token(authorization: str | None) -> str:
    if not authorization:
        raise Unauthenticated("missing Authorization header")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("Authorization must be 'Bearer <token>'")
    return token.strip()


class _KeySet:
    """Signing keys from a local JWKS file or a remote JWKS URL (cached by PyJWT)."""

    def __init__(self, jwks_file: str | None, jwks_url: str) -> None:
        self._file = jwks_file
        self._url = jwks_url
        self._client: jwt.PyJWKClient | None = None
        self._local: jwt.PyJWKSet | None = None

    def key_for(self, token: str) -> Any:
        try:
            kid = jwt.get_unverified_header(token).get("kid")
        except jwt.PyJWTError as exc:
            raise Unauthenticated("malformed token") from exc
        if self._file:
            return self._local_key(kid)
        if self._client is None:
            self._client = jwt.PyJWKClient(self._url, cache_keys=True, lifespan=3600)
        if not kid:
            raise Unauthenticated("token has no key id")
        try:
            return self._client.get_signing_key(kid).key
        except jwt.PyJWKClientConnectionError as exc:
            raise DependencyUnavailable("cannot fetch token signing keys") from exc
        except jwt.PyJWKClientError as exc:
            raise Unauthenticated("unknown signing key") from exc

    def _local_key(self, kid: str | None) -> Any:
        if self._local is None:
            assert self._file is not None
            self._local = jwt.PyJWKSet.from_dict(json.loads(Path(self._file).read_text()))
        for key in self._local.keys:
            if key.key_id == kid:
                return key.key
        raise Unauthenticated("unknown signing key")


def _decode(keys: _KeySet, token: str, issuer: str, audience: str) -> dict[str, Any]:
    try:
        claims: dict[str, Any] = jwt.decode(
            token,
            keys.key_for(token),
            algorithms=["RS256"],
            audience=audience,
            issuer=issuer,
            leeway=_LEEWAY_SECONDS,
            options={"require": ["exp", "iat", "iss", "aud", "sub"]},
        )
    except jwt.PyJWTError as exc:
        raise Unauthenticated(f"invalid token: {exc}") from exc
    return claims


class UserTokenVerifier:
    def __init__(self, settings: Settings) -> None:
        self._issuer = settings.auth_issuer
        self._audience = settings.auth_audience
        self._keys = _KeySet(settings.auth_jwks_file, settings.auth_jwks_url)

    def user_id(self, authorization: str | None) -> str:
        claims = _decode(self._keys, bearer_token(authorization), self._issuer, self._audience)
        user_id = str(claims["sub"])
        if not _USER_ID.match(user_id):
            raise Unauthenticated("token subject is not a valid user id")
        return user_id


@dataclass(frozen=True)
class InternalCaller:
    audience: str  # the function's URL
    email: str  # the only service account allowed to call it


class InternalTokenVerifier:
    def __init__(self, settings: Settings) -> None:
        self._issuer = settings.internal_issuer
        self._keys = _KeySet(settings.internal_jwks_file, _GOOGLE_CERTS)

    def verify(self, authorization: str | None, caller: InternalCaller) -> None:
        token = bearer_token(authorization)
        # Google issues OIDC tokens with either form of its issuer.
        issuers = {self._issuer, self._issuer.removeprefix("https://")}
        last_error: Unauthenticated | None = None
        for issuer in issuers:
            try:
                claims = _decode(self._keys, token, issuer, caller.audience)
                break
            except Unauthenticated as exc:
                last_error = exc
        else:
            raise last_error or Unauthenticated("invalid token")
        if claims.get("email") != caller.email or not claims.get("email_verified"):
            raise Unauthenticated("caller is not this function's invoker")
