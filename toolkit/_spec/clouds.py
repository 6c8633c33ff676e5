"""The vocabularies, hosts and token scopes of the clouds the toolkit speaks to.

The specification writes brand words neutrally (``Vendor.*`` provider namespaces, ``x-vendor-``
headers, ``VendorKeyVault``...). The real services use other words, and one neutral word can stand
for several real ones: the provider namespace is ``Microsoft.*`` while the ARM async-operation
header is ``Azure-AsyncOperation`` and the key type ``AzureKeyVault``. A single namespace setting
cannot map them, so each cloud names every word here, once, for client and sandbox alike.

Clouds
------
``neutral``
    The specification's own words and hosts (``management.vendor.com``...). The sandbox speaks
    it by default, so that what the spec says and what the sandbox answers read the same.
``public``
    The public cloud (``management.azure.com``, ``atlas.microsoft.com``, ``graph.microsoft.com``,
    ``api.fabric.microsoft.com``).
``usgov``
    US Government (``management.usgovcloudapi.net``, maps at ``atlas.azure.us``, Graph at
    ``graph.microsoft.us``). Eventstreams (Fabric) publish no host of their own there: give
    ``fabric_url`` to use one.
``china``
    The cloud operated by 21Vianet (``management.chinacloudapi.cn``, Graph at
    ``microsoftgraph.chinacloudapi.cn``). Maps and eventstreams are not offered there, and the
    authentication-strength usage query is not available in that cloud (spec 3 §4.1).

Sources: the vendors' documentation of national-cloud endpoints (Graph deployments, Azure
Government developer guide, Azure Maps geographic scope, AKS outbound FQDN rules).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TypeVar
from urllib.parse import urlsplit

__all__ = ["CLOUDS", "DEFAULT_CLOUD", "FAMILIES", "NEUTRAL", "NEUTRAL_WORDS", "PUBLIC",
           "REAL_WORDS", "Cloud", "Vocabulary", "get_cloud"]

#: The four service families, in the order the toolkit lists them.
FAMILIES: tuple[str, ...] = ("arm", "maps", "graph", "fabric")


@dataclass(frozen=True)
class Vocabulary:
    """The brand words of one cloud, where the spec writes neutral ones.

    Attributes
    ----------
    namespace : str
        Provider namespace word in paths, ids and ``type`` fields (``Vendor`` / ``Microsoft``).
    header_prefix : str
        Custom header prefix (``x-vendor-`` / ``x-ms-``): client id, error code, request id,
        correlation request id, operation id, rate-limit counters.
    async_header : str
        The ARM async-operation header, the same whatever the provider namespace
        (``Vendor-AsyncOperation`` / ``Azure-AsyncOperation``).
    key_vault_type : str
        The SQL server key type of a vault key (``VendorKeyVault`` / ``AzureKeyVault``).
    key_vault_kind : str
        The ``kind`` a vault-key protector answers with.
    key_disabled_code : str
        The error code of a protector change to a disabled key (HTTP 400).
    load_balancer_tag : str
        The load balancer's service tag in security rules.
    graph_namespace : str
        The OData namespace of Graph types (``vendor.graph`` / ``microsoft.graph``).
    hosted_cluster_provider : str
        The resource provider namespace of hosted clusters.
    hosted_cluster_type : str
        Their resource type (``hostedClusters`` / ``openShiftClusters``).
    """

    namespace: str
    header_prefix: str
    async_header: str
    key_vault_type: str
    key_vault_kind: str
    key_disabled_code: str
    load_balancer_tag: str
    graph_namespace: str
    hosted_cluster_provider: str
    hosted_cluster_type: str

    def provider(self, service: str) -> str:
        """Give the full provider namespace of a service word.

        ``provider("Sql")`` is ``Microsoft.Sql`` in the real vocabulary.
        """
        return f"{self.namespace}.{service}"

    def header(self, name: str) -> str:
        """Give a custom header's full name: ``header("request-id")`` is ``x-ms-request-id``."""
        return f"{self.header_prefix}{name}"


NEUTRAL_WORDS = Vocabulary(
    namespace="Vendor",
    header_prefix="x-vendor-",
    async_header="Vendor-AsyncOperation",
    key_vault_type="VendorKeyVault",
    key_vault_kind="vendorkeyvault",
    key_disabled_code="VendorKeyVaultKeyDisabled",
    load_balancer_tag="VendorLoadBalancer",
    graph_namespace="vendor.graph",
    hosted_cluster_provider="Vendor.HostedClusterProvider",
    hosted_cluster_type="hostedClusters",
)

REAL_WORDS = Vocabulary(
    namespace="Microsoft",
    header_prefix="x-ms-",
    async_header="Azure-AsyncOperation",
    key_vault_type="AzureKeyVault",
    key_vault_kind="azurekeyvault",
    key_disabled_code="AkvKeyDisabled",
    load_balancer_tag="AzureLoadBalancer",
    graph_namespace="microsoft.graph",
    hosted_cluster_provider="Microsoft.RedHatOpenShift",
    hosted_cluster_type="openShiftClusters",
)


_V = TypeVar("_V")


def _frozen(mapping: Mapping[str, _V]) -> Mapping[str, _V]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class Cloud:
    """One cloud: its words, hosts, token scopes and the audiences its services accept.

    Attributes
    ----------
    name : str
        ``neutral``, ``public``, ``usgov`` or ``china``.
    words : Vocabulary
        Its brand words.
    hosts : mapping of str to str or None
        Base URL per family; ``None`` where the service is not offered in this cloud.
    scopes : mapping of str to str or None
        Token scope per family (``<resource>/.default``).
    audiences : mapping of str to tuple of str
        Token audiences each family's service accepts (with or without the trailing slash).
    authority : str
        The identity provider that issues the tokens.
    vault_suffix : str
        DNS suffix of key vaults (key URIs are ``https://<vault>.<vault_suffix>/keys/...``).
    k8s_suffix : str
        DNS suffix of managed-cluster API servers (``<name>.hcp.<region>.<k8s_suffix>``).
    unavailable : frozenset of str
        Public functions whose operation the cloud does not offer (refused before any request).
    environment : str
        The cloud's environment name as sign-in helpers know it (``kubelogin --environment``
        in managed-cluster kubeconfigs).
    authority_host : str or None
        The sign-in host azure-identity credentials are given (``authority=``), as
        ``azure.identity.AzureAuthorityHosts`` names it; ``None`` in the neutral cloud, whose
        authority is the specification's invented one (azure-identity's default is used).
    aliases : tuple of str
        Other names of the cloud: the Azure CLI's (``az cloud list``: ``AzureCloud``,
        ``AzureUSGovernment``, ``AzureChinaCloud``), accepted wherever a cloud is named.
    """

    name: str
    words: Vocabulary
    hosts: Mapping[str, str | None]
    scopes: Mapping[str, str | None]
    audiences: Mapping[str, tuple[str, ...]]
    authority: str
    vault_suffix: str
    k8s_suffix: str
    unavailable: frozenset[str] = field(default_factory=frozenset)
    environment: str = ""
    authority_host: str | None = None
    aliases: tuple[str, ...] = ()

    @property
    def real(self) -> bool:
        """Whether this is a real cloud (not the specification's neutral one)."""
        return self.authority_host is not None

    def host(self, family: str) -> str | None:
        """Give the base URL of a family in this cloud (``None`` where not offered)."""
        return self.hosts.get(family)

    def scope(self, family: str) -> str | None:
        """Give the token scope of a family in this cloud."""
        return self.scopes.get(family)


def _cloud(name: str, words: Vocabulary, hosts: Mapping[str, str | None],
           extra_audiences: Mapping[str, tuple[str, ...]], authority: str, vault_suffix: str,
           k8s_suffix: str, environment: str,
           unavailable: frozenset[str] = frozenset(), aliases: tuple[str, ...] = (),
           real: bool = True) -> Cloud:
    scopes = {fam: (f"{host}/.default" if host else None) for fam, host in hosts.items()}
    audiences: dict[str, tuple[str, ...]] = {}
    for fam, host in hosts.items():
        own = (host, f"{host}/") if host else ()
        audiences[fam] = own + extra_audiences.get(fam, ())
    return Cloud(name=name, words=words, hosts=_frozen(hosts), scopes=_frozen(scopes),
                 audiences=_frozen(audiences),
                 authority=authority, vault_suffix=vault_suffix, k8s_suffix=k8s_suffix,
                 unavailable=unavailable, environment=environment,
                 authority_host=urlsplit(authority).hostname if real else None,
                 aliases=aliases)


NEUTRAL = _cloud(
    "neutral", NEUTRAL_WORDS,
    {"arm": "https://management.vendor.com", "maps": "https://atlas.vendor.com",
     "graph": "https://graph.vendor.com", "fabric": "https://api.fabric.vendor.com"},
    {"arm": ("https://management.core.windows.net", "https://management.core.windows.net/"),
     "fabric": ("https://analysis.windows.net/powerbi/api",)},
    authority="https://login.vendor.com", vault_suffix="vault.vendor.net",
    k8s_suffix="vendork8s.io", environment="VendorPublicCloud", real=False,
)

PUBLIC = _cloud(
    "public", REAL_WORDS,
    {"arm": "https://management.azure.com", "maps": "https://atlas.microsoft.com",
     "graph": "https://graph.microsoft.com", "fabric": "https://api.fabric.microsoft.com"},
    {"arm": ("https://management.core.windows.net", "https://management.core.windows.net/"),
     "fabric": ("https://analysis.windows.net/powerbi/api",)},
    authority="https://login.microsoftonline.com", vault_suffix="vault.azure.net",
    k8s_suffix="azmk8s.io", environment="AzurePublicCloud", aliases=("AzureCloud",),
)

USGOV = _cloud(
    "usgov", REAL_WORDS,
    {"arm": "https://management.usgovcloudapi.net", "maps": "https://atlas.azure.us",
     "graph": "https://graph.microsoft.us", "fabric": None},
    {"arm": ("https://management.core.usgovcloudapi.net",
             "https://management.core.usgovcloudapi.net/")},
    authority="https://login.microsoftonline.us", vault_suffix="vault.usgovcloudapi.net",
    k8s_suffix="cx.aks.containerservice.azure.us", environment="AzureUSGovernmentCloud",
    aliases=("AzureUSGovernment",),
)

CHINA = _cloud(
    "china", REAL_WORDS,
    {"arm": "https://management.chinacloudapi.cn", "maps": None,
     "graph": "https://microsoftgraph.chinacloudapi.cn", "fabric": None},
    {"arm": ("https://management.core.chinacloudapi.cn",
             "https://management.core.chinacloudapi.cn/")},
    authority="https://login.chinacloudapi.cn", vault_suffix="vault.azure.cn",
    k8s_suffix="cx.prod.service.azk8s.cn", environment="AzureChinaCloud",
    unavailable=frozenset({"authentication_strength_usage"}), aliases=("AzureChinaCloud",),
)

#: Every cloud by name.
CLOUDS: Mapping[str, Cloud] = MappingProxyType(
    {c.name: c for c in (NEUTRAL, PUBLIC, USGOV, CHINA)})

#: The cloud meant when a credential is given without endpoints.
DEFAULT_CLOUD = "public"


#: Every name a cloud answers to, lower-cased: its own and the Azure CLI's.
_BY_NAME: Mapping[str, Cloud] = MappingProxyType(
    {n.lower(): c for c in CLOUDS.values() for n in (c.name, *c.aliases)})


def get_cloud(name: str) -> Cloud:
    """Look up the cloud of that name, or of the Azure CLI's name for it, in any case.

    The names are ``neutral``, ``public``, ``usgov`` and ``china``; the Azure CLI's are
    ``AzureCloud``, ``AzureUSGovernment`` and ``AzureChinaCloud``.

    Raises
    ------
    KeyError
        For any other name (callers turn it into their own ValidationError).
    """
    return _BY_NAME[name.strip().lower()]
