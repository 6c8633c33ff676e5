"""How a family's requests are authenticated: the azure-core policies of its credential.

A credential object (azure-core's ``TokenCredential``: anything with ``get_token(*scopes)``, so
azure-identity's credentials) or a static bearer token go through azure-core's bearer-token
policy; the tokens a credential hands out are registered as secrets while they are valid, so they
are masked in every error text and log record. Maps takes a shared key or a SAS token instead
when one is given, and names its account with bearer tokens (which the service requires: a maps
pipeline with a bearer token and no account id is refused before any request).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from azure.core.credentials import AccessToken, TokenCredential
from azure.core.pipeline import PipelineRequest
from azure.core.pipeline.policies import BearerTokenCredentialPolicy, SansIOHTTPPolicy
from azure.core.rest import HttpRequest, HttpResponse

from toolkit._core.config import FamilyConfig
from toolkit._core.errors import ValidationError
from toolkit._core.secrets import Secret

__all__ = ["auth_policies", "sas_token_text"]

_Request = PipelineRequest[HttpRequest]
_Policy = SansIOHTTPPolicy[HttpRequest, HttpResponse]


def header_text(secret: Secret) -> str:
    """Return a credential as header text.

    Parameters
    ----------
    secret : Secret
        The key or token.

    Returns
    -------
    str
        Its value; a bytes value byte for byte, as HTTP headers are Latin-1.
    """
    value = secret.reveal()
    return value.decode("latin-1") if isinstance(value, bytes) else value


class StaticTokenCredential:
    """A fixed bearer token presented as a credential.

    Parameters
    ----------
    token : Secret
        The token.
    """

    def __init__(self, token: Secret) -> None:
        self._token = token

    def get_token(self, *scopes: str, **kw: Any) -> AccessToken:
        """Return the token, valid for a year whatever the scopes.

        Parameters
        ----------
        *scopes : str
            Ignored.
        **kw
            Ignored.

        Returns
        -------
        AccessToken
            The token.
        """
        return AccessToken(header_text(self._token), int(time.time()) + 365 * 24 * 3600)

    def __repr__(self) -> str:
        return "StaticToken(••••••••)"


class RegisteredTokens:
    """A credential whose tokens are registered as secrets while they are valid.

    Registered tokens are masked in every error text and log record; the last few are kept,
    expired ones let go. ``get_token_info`` is offered when the credential offers it.

    Parameters
    ----------
    credential : TokenCredential
        The credential wrapped.
    """

    _KEEP = 16

    def __init__(self, credential: TokenCredential) -> None:
        self._credential = credential
        self._lock = threading.Lock()
        self._live: dict[str, tuple[Secret, float]] = {}
        if hasattr(credential, "get_token_info"):
            self.get_token_info = self._get_token_info

    def _register(self, token: Any) -> Any:
        value = getattr(token, "token", None)
        if isinstance(value, str) and value:
            expires = float(getattr(token, "expires_on", 0) or 0)
            now = time.time()
            with self._lock:
                if value not in self._live:
                    self._live[value] = (Secret(value, "token"), expires)
                for old in [k for k, (_, exp) in self._live.items() if exp and exp < now]:
                    if old != value:
                        del self._live[old]
                while len(self._live) > self._KEEP:
                    del self._live[next(iter(self._live))]
        return token

    def get_token(self, *scopes: str, **kw: Any) -> AccessToken:
        """Return the credential's token, registered as a secret.

        Parameters
        ----------
        *scopes : str
            The scopes asked for.
        **kw
            The credential's own options (``claims``, ``tenant_id``, ...).

        Returns
        -------
        AccessToken
            The credential's token.
        """
        token: AccessToken = self._register(self._credential.get_token(*scopes, **kw))
        return token

    def _get_token_info(self, *scopes: str, **kw: Any) -> Any:
        return self._register(getattr(self._credential, "get_token_info")(*scopes, **kw))  # noqa: B009

    def close(self) -> None:
        """Close the credential, when it can be closed."""
        close = getattr(self._credential, "close", None)
        if callable(close):
            close()

    def __repr__(self) -> str:
        return repr(self._credential)


#: The scheme of a maps SAS token in ``Authorization`` (learn.microsoft.com/azure/azure-maps/
#: azure-maps-authentication: ``Authorization: jwt-sas {SAS token}``).
_SAS_SCHEME = "jwt-sas"


def sas_token_text(secret: Secret) -> str:
    """Give a maps SAS token as header text, without a ``jwt-sas`` pasted before it.

    The portal and the docs show the token with its scheme (``jwt-sas eyJ...``); a value pasted
    so is sent once with the scheme, not as ``jwt-sas jwt-sas eyJ...``.

    Parameters
    ----------
    secret : Secret
        The SAS token, with or without the scheme (any case, any spaces after it).

    Returns
    -------
    str
        The token alone.
    """
    value = header_text(secret).strip()
    scheme, _, rest = value.partition(" ")
    return rest.strip() if scheme.lower() == _SAS_SCHEME and rest.strip() else value


class MapsKeyPolicy(_Policy):
    """Authenticate with the maps shared key or SAS token.

    Parameters
    ----------
    key : Secret, optional
        The shared key, sent as ``subscription-key`` (it wins over the SAS token).
    sas : Secret, optional
        The SAS token, sent as ``Authorization: jwt-sas``.
    """

    def __init__(self, key: Secret | None, sas: Secret | None) -> None:
        self._key = key
        self._sas = sas

    def on_request(self, request: _Request) -> None:
        """Set the key's header.

        Parameters
        ----------
        request : PipelineRequest
            The request about to be sent.
        """
        headers = request.http_request.headers
        if self._key:
            headers["subscription-key"] = header_text(self._key)
        elif self._sas:
            headers["Authorization"] = f"{_SAS_SCHEME} {sas_token_text(self._sas)}"


class ClientIdPolicy(_Policy):
    """Name the maps account that bearer tokens are for.

    Parameters
    ----------
    header : str
        The header (``<header prefix>client-id``).
    client_id : str
        The account's id.
    """

    def __init__(self, header: str, client_id: str) -> None:
        self._header = header
        self._client_id = client_id

    def on_request(self, request: _Request) -> None:
        """Set the header.

        Parameters
        ----------
        request : PipelineRequest
            The request about to be sent.
        """
        request.http_request.headers[self._header] = self._client_id


def auth_policies(config: FamilyConfig) -> list[Any]:
    """Return the policies that authenticate a family's requests (none without credentials).

    Parameters
    ----------
    config : FamilyConfig
        The family, its token scope, header prefix and credentials.

    Returns
    -------
    list
        azure-core policies, in the order they run.
    """
    creds = config.credentials
    credential: TokenCredential | None = None
    if creds.credential is not None:
        credential = RegisteredTokens(creds.credential)
    elif creds.token:
        credential = StaticTokenCredential(creds.token)
    policies: list[Any] = []
    if config.family == "maps":
        if creds.maps_key or creds.maps_sas_token:
            return [MapsKeyPolicy(creds.maps_key, creds.maps_sas_token)]
        if credential is not None and config.scope:
            if not creds.maps_client_id:
                # the service requires the account's id with a bearer token: without it every
                # call is a 401 that says nothing of why (learn.microsoft.com/azure/azure-maps/
                # azure-maps-authentication; the vendor's maps clients send it as x-ms-client-id)
                raise ValidationError(
                    "maps_client_id", None,
                    f"maps needs the account's client id ({config.header_prefix}client-id) "
                    "with a bearer token: pass connect(maps_client_id=...) or "
                    "TOOLKIT_MAPS_CLIENT_ID (the Maps account's uniqueId: az maps account "
                    "show --query properties.uniqueId), or a maps_key or maps_sas_token")
            policies.append(BearerTokenCredentialPolicy(credential, config.scope))
            policies.append(ClientIdPolicy(f"{config.header_prefix}client-id",
                                           creds.maps_client_id))
        return policies
    if credential is not None and config.scope:
        policies.append(BearerTokenCredentialPolicy(credential, config.scope))
    return policies
