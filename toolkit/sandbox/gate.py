"""Admit a request to the sandbox: its api-version and its credentials, checked like the services.

The routes name the api-versions they serve; every route but the sandbox's own description
authenticates, and a refusal is the family's own 400 or 401 body (see :mod:`toolkit.sandbox.auth`
for the tokens and keys themselves).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from toolkit.sandbox.auth import ALL_ROLES
from toolkit.sandbox.http import SandboxHTTPError

if TYPE_CHECKING:
    from toolkit.sandbox.auth import TokenAuthority
    from toolkit.sandbox.http import Request

__all__ = ["authenticate", "check_api_version"]


def check_api_version(request: Request, versions: tuple[str, ...] | None) -> None:
    """Refuse a request without one of its route's api-versions, in its family's words.

    Parameters
    ----------
    request : Request
        The request (its ``api-version`` query parameter).
    versions : tuple of str or None
        The versions the route serves; ``None``: the route takes none.

    Raises
    ------
    SandboxHTTPError
        400 ``MissingApiVersionParameter``/``InvalidApiVersionParameter`` (resource manager) or
        ``MissingApiVersion``/``InvalidApiVersion`` (the other families).
    """
    if versions is None:
        return
    value = request.param("api-version")
    if not value:
        if request.family == "arm":
            raise SandboxHTTPError(400, "MissingApiVersionParameter",
                                   "The api-version query parameter (?api-version=) is "
                                   "required for all requests.")
        raise SandboxHTTPError(400, "MissingApiVersion",
                               "The 'api-version' query parameter is required.")
    if value not in versions:
        if request.family == "arm":
            raise SandboxHTTPError(
                400, "InvalidApiVersionParameter",
                f"The api-version '{value}' is invalid. The supported versions are "
                f"'{','.join(versions)}'.")
        raise SandboxHTTPError(400, "InvalidApiVersion",
                               f"The api-version '{value}' is not supported; supported: "
                               f"{', '.join(versions)}.")

def authenticate(request: Request, authority: TokenAuthority,
                 audiences: Callable[[str], tuple[str, ...]], header_prefix: str) -> dict[str, Any]:
    """Check a request's credentials as its family's service does, and give the token's claims.

    A bearer token must be well formed, signed by ``authority``, unexpired and for one of the
    family's audiences; maps takes a shared key, a SAS token or a bearer token with the
    account's client id, and answers every refusal in its own shape.

    Parameters
    ----------
    request : Request
        The request (its family, headers and query).
    authority : TokenAuthority
        The sandbox's signer of tokens and keeper of the maps key.
    audiences : callable
        The audiences the sandbox accepts for a family.
    header_prefix : str
        The custom header prefix (``x-vendor-``), for the maps client id.

    Returns
    -------
    dict
        The verified claims (``roles`` and ``scheme`` for a maps key).

    Raises
    ------
    SandboxHTTPError
        401 in the family's body shape, with ``WWW-Authenticate``.
    """
    gate = _Gate(authority, audiences, header_prefix)
    try:
        return gate.check(request)
    except SandboxHTTPError as err:
        if request.family == "maps" and err.status == 401 and err.code != "Unauthorized":
            # maps answers every refusal in its own shape, bearer tokens included
            raise gate.maps_refusal("Bearer", "invalid_token", err.message) from err
        raise


class _Gate:
    """The checks of one request's credentials against one sandbox's authority and words."""

    def __init__(self, authority: TokenAuthority, audiences: Callable[[str], tuple[str, ...]],
                 header_prefix: str) -> None:
        self.authority = authority
        self.audiences = audiences
        self.header_prefix = header_prefix

    def maps_refusal(self, realm_scheme: str, error: str, description: str) -> SandboxHTTPError:
        return _maps_unauthorized(realm_scheme, error, description, self.audiences("maps")[0])

    def check(self, request: Request) -> dict[str, Any]:
        family = request.family
        auth = request.headers.get("authorization") or ""
        if family == "maps":
            key = request.headers.get("subscription-key") or request.param("subscription-key")
            if key is not None:
                if key != self.authority.maps_key.reveal():
                    raise self.maps_refusal("SharedKey", "InvalidKey",
                                             "The provided key was incorrect or the account "
                                             "resource does not exist.")
                return {"roles": list(ALL_ROLES), "scheme": "SharedKey"}
            if auth.lower().startswith("jwt-sas "):
                try:
                    claims = self.authority.verify(auth[8:].strip())
                except ValueError as err:
                    raise self.maps_refusal("jwt-sas", "InvalidToken", err.args[1]) from err
                if claims.get("exp", 0) < time.time():
                    raise self.maps_refusal("jwt-sas", "InvalidToken", "The SAS token expired.")
                return claims
        if not auth:
            code, msg = {
                "arm": ("AuthenticationFailed",
                        "Authentication failed. The 'Authorization' header is missing."),
                "maps": ("Unauthorized", "Access denied, please inspect WWW-Authenticate header."),
                "graph": ("InvalidAuthenticationToken", "Access token is empty."),
                "fabric": ("Unauthorized", "The caller is not authenticated to access this "
                                           "resource."),
            }[family]
            if family == "maps":
                raise self.maps_refusal("SharedKey", "InvalidKey",
                                         "No key, SAS token or bearer token was provided.")
            raise SandboxHTTPError(401, code, msg, headers={"WWW-Authenticate": "Bearer"})
        scheme, _, token = auth.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise SandboxHTTPError(401, "AuthenticationFailedInvalidHeader" if family == "arm"
                                   else "InvalidAuthenticationToken",
                                   "Authentication failed. The 'Authorization' header is "
                                   "provided in an invalid format.",
                                   headers={"WWW-Authenticate": "Bearer"})
        try:
            claims = self.authority.verify(token.strip())
        except ValueError as err:
            raise SandboxHTTPError(401, err.args[0], err.args[1],
                                   headers={"WWW-Authenticate": "Bearer"}) from err
        now = time.time()
        if claims.get("exp", 0) < now:
            exp = datetime.fromtimestamp(claims.get("exp", 0), UTC).strftime("%m/%d/%Y %H:%M:%S")
            cur = datetime.fromtimestamp(now, UTC).strftime("%m/%d/%Y %H:%M:%S")
            code = "ExpiredAuthenticationToken" if family == "arm" else (
                "TokenExpired" if family == "fabric" else "InvalidAuthenticationToken")
            raise SandboxHTTPError(401, code, f"The access token expiry UTC time '{exp}' is "
                                   f"earlier than current UTC time '{cur}'.",
                                   headers={"WWW-Authenticate": "Bearer error=\"invalid_token\""})
        audiences = tuple(dict.fromkeys(a.rstrip("/") for a in self.audiences(family)))
        aud = claims.get("aud", "")
        token_auds = {str(a).rstrip("/") for a in (aud if isinstance(aud, list) else [aud])}
        if not token_auds & set(audiences):
            raise SandboxHTTPError(401, "InvalidAuthenticationTokenAudience",
                                   f"The access token has been obtained for wrong audience or "
                                   f"resource '{claims.get('aud')}'. It should exactly match "
                                   f"with one of the allowed audiences "
                                   f"'{', '.join(a + '/' for a in audiences)}'.",
                                   headers={"WWW-Authenticate": "Bearer"})
        if family == "maps":
            client_id = request.headers.get(f"{self.header_prefix}client-id") or \
                request.headers.get("client-id")
            if client_id != self.authority.maps_client_id:
                raise self.maps_refusal("Bearer", "InvalidClientId",
                                         f"The {self.header_prefix}client-id header must name "
                                         "the maps account.")
        return claims


def _maps_unauthorized(realm_scheme: str, error: str, description: str,
                       realm: str) -> SandboxHTTPError:
    return SandboxHTTPError(
        401, "Unauthorized", "Access denied, please inspect WWW-Authenticate header.",
        headers={"WWW-Authenticate": f'{realm_scheme} realm="{realm.rstrip("/")}/", '
                                     f'error="{error}", error_description="{description}"'},
        target=None)
