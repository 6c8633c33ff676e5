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
"""

from __future__ import annotations

import importlib
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from toolkit._core.errors import ValidationError
from toolkit._spec.clouds import Cloud

if TYPE_CHECKING:
    from azure.core.credentials import TokenCredential

__all__ = ["CREDENTIAL_WORDS", "credential_for", "credential_word", "default_credential"]

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
