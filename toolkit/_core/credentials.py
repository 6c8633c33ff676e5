"""Credential shortcuts: the words ``connect(credential=...)`` and ``TOOLKIT_CREDENTIAL`` accept.

Each word builds one azure-identity credential, given the cloud's sign-in authority
(``azure.identity.AzureAuthorityHosts``) where the class takes one:

======================  ===============================  =========================================
word                    class                            authority
======================  ===============================  =========================================
``default``             ``DefaultAzureCredential``       the cloud's
``cli``                 ``AzureCliCredential``           the Azure CLI's own (``az cloud set``)
``managed_identity``    ``ManagedIdentityCredential``    none (the host's identity endpoint)
``interactive``         ``InteractiveBrowserCredential`` the cloud's
``device_code``         ``DeviceCodeCredential``         the cloud's
======================  ===============================  =========================================

azure-identity is an optional dependency (``pip install "cloudops-frames[identity]"``); without it a
shortcut raises :class:`~toolkit._core.errors.ValidationError` saying what to install or pass.

A credential *object* is built by its owner, with the sign-in host it was given (azure-identity's
default is the public cloud's, or ``AZURE_AUTHORITY_HOST``); the toolkit cannot give it another.
:func:`check_authority` reads the hosts an azure-identity credential signs in at (its own, and
those of the credentials it chains or wraps) and refuses, before any request, one that signs in
elsewhere than the cloud's authority: a service principal, workload identity or browser sign-in
of the public cloud fails in US Government or China.
"""

from __future__ import annotations

import importlib
from types import MappingProxyType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from toolkit._core.errors import ValidationError
from toolkit._spec.clouds import Cloud

if TYPE_CHECKING:
    from azure.core.credentials import TokenCredential

__all__ = ["CREDENTIAL_WORDS", "authority_hosts", "check_authority", "credential_for",
           "credential_word", "default_credential"]

#: Shortcut word -> (azure-identity class, whether it takes ``authority=``).
CREDENTIAL_WORDS = MappingProxyType({
    "default": ("DefaultAzureCredential", True),
    "cli": ("AzureCliCredential", False),
    "managed_identity": ("ManagedIdentityCredential", False),
    "interactive": ("InteractiveBrowserCredential", True),
    "device_code": ("DeviceCodeCredential", True),
})

_INSTALL = ('needs azure-identity: pip install "cloudops-frames[identity]", or pass credential= '
            "(any object with get_token) or token= (a bearer token)")


def credential_word(word: str, parameter: str = "credential") -> str:
    """Normalize the shortcut word (lower case, ``-`` read as ``_``).

    Raises
    ------
    ValidationError
        Not one of :data:`CREDENTIAL_WORDS` (naming ``parameter`` and listing the words).
    """
    key = word.strip().lower().replace("-", "_")
    if key not in CREDENTIAL_WORDS:
        raise ValidationError(parameter, word, "must be a credential object (with get_token) "
                              "or one of " + ", ".join(repr(w) for w in CREDENTIAL_WORDS))
    return key


def credential_for(word: str, cloud: Cloud, parameter: str = "credential") -> TokenCredential:
    """Build the azure-identity credential a shortcut word names, for ``cloud``.

    Parameters
    ----------
    word : str
        One of :data:`CREDENTIAL_WORDS` (case-insensitive, ``-`` read as ``_``).
    cloud : Cloud
        The cloud whose authority the credential signs in at (azure-identity's default, the
        public cloud, for the neutral one).
    parameter : str
        The name the value came under, for errors (``credential`` or ``TOOLKIT_CREDENTIAL``).

    Raises
    ------
    ValidationError
        An unknown word (naming ``parameter`` and listing the words), or azure-identity is not
        installed.
    """
    name, takes_authority = CREDENTIAL_WORDS[credential_word(word, parameter)]
    try:
        identity = importlib.import_module("azure.identity")
    except ImportError as err:
        raise ValidationError(parameter, word, _INSTALL) from err
    kwargs: dict[str, Any] = {}
    if takes_authority and cloud.authority_host:
        kwargs["authority"] = cloud.authority_host
    credential: TokenCredential = getattr(identity, name)(**kwargs)
    return credential


def default_credential(cloud: Cloud) -> TokenCredential:
    """azure-identity's default credential chain for a real cloud named without a credential.

    Raises
    ------
    ValidationError
        azure-identity is not installed: the message says what to configure instead.
    """
    try:
        return credential_for("default", cloud)
    except ValidationError as err:
        raise ValidationError(
            "credential", None,
            f"the {cloud.name} cloud was named without a credential, and its default "
            f"credential chain {_INSTALL}; or leave the cloud unset to use the sandbox"
        ) from err


#: How deep :func:`authority_hosts` looks into credentials that chain or wrap others.
_DEPTH = 4


def authority_hosts(credential: Any, depth: int = 0) -> set[str]:
    """Read the sign-in hosts an azure-identity credential uses.

    Parameters
    ----------
    credential : object
        The credential; those it chains (``credentials``: ``DefaultAzureCredential``,
        ``ChainedTokenCredential``) or wraps (``_credential``: ``EnvironmentCredential``;
        ``_client``: workload identity, client assertions) are looked at too.
    depth : int
        How deep this one is (the search stops at a few levels).

    Returns
    -------
    set of str
        The hosts (lower case) named by their ``_authority`` (azure-identity keeps the
        authority there); empty for credentials that name none (the Azure CLI's, managed
        identity, a credential of one's own).
    """
    found: set[str] = set()
    if credential is None or depth > _DEPTH:
        return found
    authority = getattr(credential, "_authority", None)
    if isinstance(authority, str) and authority:
        host = urlsplit(authority if "//" in authority else f"https://{authority}").hostname
        if host:
            found.add(host.lower())
    chained = getattr(credential, "credentials", None)
    if isinstance(chained, list | tuple):
        for each in chained:
            found |= authority_hosts(each, depth + 1)
    for inner in ("_credential", "_client"):
        found |= authority_hosts(getattr(credential, inner, None), depth + 1)
    return found


def check_authority(credential: Any, cloud: Cloud, parameter: str = "credential") -> None:
    """Refuse a credential object that signs in elsewhere than the cloud's authority.

    Parameters
    ----------
    credential : object
        The credential given to ``connect()``.
    cloud : Cloud
        The connection's cloud (nothing is checked in the neutral one).
    parameter : str
        The name it came under, for the error.

    Raises
    ------
    ValidationError
        Naming ``parameter``, the host it signs in at, the cloud's, and how to build it for the
        cloud (the toolkit cannot change the sign-in host of a credential already built).
    """
    if not cloud.real or cloud.authority_host is None:
        return
    wrong = sorted(h for h in authority_hosts(credential) if h != cloud.authority_host)
    if not wrong:
        return
    raise ValidationError(
        parameter, type(credential).__name__,
        f"it signs in at {', '.join(wrong)}, but tokens of the {cloud.name} cloud come from "
        f"{cloud.authority_host}, and a credential cannot be given another sign-in host once "
        f"built: build it with authority=AzureAuthorityHosts.{cloud.authority_constant} (for "
        f"example DefaultAzureCredential(authority=AzureAuthorityHosts."
        f"{cloud.authority_constant})), or set AZURE_AUTHORITY_HOST={cloud.authority_host} "
        "before building it, or pass credential='default' (or 'cli', 'managed_identity', "
        "'interactive', 'device_code') and the toolkit builds it for the cloud")
