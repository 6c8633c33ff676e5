"""Sandbox tokens and keys: minted, signed and checked like the real services check theirs.

Tokens look like JWTs (``header.claims.signature``, HMAC-SHA256 with the sandbox's own secret) and
carry ``aud`` (the family's resource; the audiences each family accepts are its cloud's, from
:mod:`toolkit._spec.clouds`), ``exp``, ``sub`` and ``roles``. Every request is refused
with the family's 401/403 body when its token is missing, malformed, badly signed, expired or for
another audience, or when a maps key is wrong.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import secrets
import time
from collections.abc import Sequence
from typing import Any

import orjson
from azure.core.credentials import AccessToken

from toolkit._core.secrets import Secret

__all__ = ["SandboxCredential", "TokenAuthority"]

ALL_ROLES = ("Policy.Read.All", "Policy.Read.AuthenticationMethod", "Eventstream.ReadWrite.All",
             "Item.ReadWrite.All", "Reader", "Contributor")


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class TokenAuthority:
    """Mints and verifies the sandbox's tokens.

    Parameters
    ----------
    secret : str or bytes, optional
        Derive the signing key and the maps key from this secret (so another process that holds
        it recognises the sandbox's credentials); random when omitted.
    """

    def __init__(self, secret: str | bytes | None = None) -> None:
        if secret:
            seed = secret.encode() if isinstance(secret, str) else secret
            self._key = hmac.new(seed, b"toolkit sandbox: tokens", hashlib.sha256).digest()
            maps_key = _b64(hmac.new(seed, b"toolkit sandbox: maps key", hashlib.sha256).digest())
        else:
            self._key = secrets.token_bytes(32)
            maps_key = secrets.token_urlsafe(32)
        self.maps_key = Secret(maps_key, "maps key")
        self.maps_client_id = "b0c3e7f1-59a2-4d6e-9f3b-7a1c2d3e4f50"

    def mint(self, audience: str | Sequence[str], *, expires_in: float = 3600,
             roles: Sequence[str] = ALL_ROLES, subject: str = "analyst@contoso.example",
             object_id: str | None = None, expires_on: int | None = None) -> str:
        """Sign a token for ``audience`` (a resource URL, with or without ``/.default``).

        A list gives a token several families accept, for a sandbox used from another process.

        The token lives at least ``expires_in`` seconds: its ``exp`` (whole seconds) is rounded
        up, or is ``expires_on`` when given.
        """
        def clean(a: str) -> str:
            return a.removesuffix("/.default").rstrip("/")

        aud: str | list[str] = (clean(audience) if isinstance(audience, str)
                                else [clean(a) for a in audience])
        now = time.time()
        exp = expires_on if expires_on is not None else math.ceil(now + expires_in)
        claims = {"aud": aud, "iat": int(now), "exp": exp, "sub": subject,
                  "oid": object_id or "6f0c7a52-3b1d-4e8a-9c2f-1d5e8b7a9c31",
                  "roles": list(roles), "iss": "https://sandbox.login.example/"}
        head = _b64(b'{"alg":"HS256","typ":"JWT"}')
        body = _b64(orjson.dumps(claims))
        sig = _b64(hmac.new(self._key, f"{head}.{body}".encode(), hashlib.sha256).digest())
        return f"{head}.{body}.{sig}"

    def verify(self, token: str) -> dict[str, Any]:
        """Return the token's claims; raise ValueError(code, message) when it is not valid."""
        parts = token.split(".")
        if len(parts) != 3:
            raise ValueError("InvalidAuthenticationToken", "The access token is invalid: it is "
                             "not a well-formed token.")
        head, body, sig = parts
        want = _b64(hmac.new(self._key, f"{head}.{body}".encode(), hashlib.sha256).digest())
        if not hmac.compare_digest(want, sig):
            raise ValueError("InvalidAuthenticationToken",
                             "The access token is invalid: its signature does not verify.")
        try:
            claims = orjson.loads(_unb64(body))
        except (ValueError, orjson.JSONDecodeError) as err:
            raise ValueError("InvalidAuthenticationToken", "The access token is invalid.") from err
        return claims

    def sas_token(self, expires_in: float = 3600) -> str:
        """Sign a maps SAS token (sent as ``Authorization: jwt-sas <token>``)."""
        return self.mint("maps-sas", expires_in=expires_in, roles=("MapsSas",))


class SandboxCredential:
    """A credential with azure-identity's ``get_token(*scopes)``, minting sandbox tokens.

    Parameters
    ----------
    authority : TokenAuthority
        The sandbox's authority.
    expires_in : float
        Lifetime of each token, seconds.
    roles : sequence of str
        Permissions carried by the tokens.
    """

    def __init__(self, authority: TokenAuthority, *, expires_in: float = 3600,
                 roles: Sequence[str] = ALL_ROLES) -> None:
        self._authority = authority
        self.expires_in = expires_in
        self.roles = tuple(roles)
        self.issued = 0

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        """Give a token for the first scope."""
        if not scopes:
            raise ValueError("get_token needs a scope")
        self.issued += 1
        expires_on = math.ceil(time.time() + self.expires_in)
        token = self._authority.mint(scopes[0], roles=self.roles, expires_on=expires_on)
        return AccessToken(token, expires_on)

    def __repr__(self) -> str:
        """Show the credential without its authority's signing key."""
        return "SandboxCredential()"
