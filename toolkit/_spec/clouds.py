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
    ``graph.microsoft.us``, or ``dod-graph.microsoft.us`` for DoD tenants). Eventstreams (Fabric)
    publish no host of their own there: give ``fabric_url`` to use one.
``china``
    The cloud operated by 21Vianet (``management.chinacloudapi.cn``, Graph at
    ``microsoftgraph.chinacloudapi.cn``). Maps and eventstreams are not offered there, and the
    authentication-strength usage query is not available in that cloud (spec 3 §4.1).

Sources (the vendors' own; each fact below names its):

* sign-in hosts: azure-identity's ``AzureAuthorityHosts`` (Azure/azure-sdk-for-python,
  sdk/identity/azure-identity/azure/identity/_constants.py: ``login.microsoftonline.com``,
  ``login.microsoftonline.us``, ``login.chinacloudapi.cn``);
* resource-manager hosts and audiences: the Azure CLI's cloud table (Azure/azure-cli,
  src/azure-cli-core/azure/cli/core/cloud.py: ``resource_manager`` and ``management`` of
  ``AzureCloud``, ``AzureUSGovernment``, ``AzureChinaCloud``);
* Graph hosts and scopes: the Graph national-cloud deployments page
  (learn.microsoft.com/graph/deployments: ``graph.microsoft.us`` for L4,
  ``dod-graph.microsoft.us`` for L5 (DoD), ``microsoftgraph.chinacloudapi.cn``; a token's
  resource is its host);
* maps hosts: Azure Maps geographic scope (learn.microsoft.com/azure/azure-maps/
  geographic-scope: ``atlas.microsoft.com``, ``us.atlas.microsoft.com``,
  ``eu.atlas.microsoft.com``) and Azure Government services (``atlas.azure.us``); the maps
  resource is ``https://atlas.microsoft.com/`` in every cloud, only the REST host changing
  (learn.microsoft.com/azure/azure-maps/azure-maps-authentication, the Azure Government row of
  its Microsoft Entra table; and the vendor's maps clients, whose ``credential_scopes`` is
  ``https://atlas.microsoft.com/.default`` whatever the endpoint: Azure/azure-sdk-for-python,
  sdk/maps/azure-maps-route/azure/maps/route/_configuration.py);
* Fabric: ``api.fabric.microsoft.com``, and workspace private links at
  ``<workspace>.z<xx>.w.api.fabric.microsoft.com`` (microsoft/fabric-sdk-go,
  internal/iruntime/private_link_policy.go).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TypeVar
from urllib.parse import urlsplit

__all__ = ["CLOUDS", "DEFAULT_CLOUD", "FAMILIES", "NEUTRAL", "NEUTRAL_WORDS", "PUBLIC",
           "REAL_WORDS", "Cloud", "Vocabulary", "cloud_of_urls", "get_cloud"]

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
    other_hosts : mapping of str to mapping of str to str
        Per family, its other real hosts (base URLs) and the token scope each takes: the maps
        geographies, DoD Graph.
    host_suffixes : mapping of str to tuple of str
        Per family, DNS suffixes whose every host is the family's (workspace private links).
    domains : tuple of str
        DNS domains of the cloud's own services: a host under one of them that the cloud does
        not list is refused rather than taken for a gateway in the neutral words.
    authority_constant : str
        The name of :attr:`authority_host` in azure-identity's ``AzureAuthorityHosts``.
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
    other_hosts: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    host_suffixes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    domains: tuple[str, ...] = ()
    authority_constant: str = ""

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

    def scope_at(self, family: str, url: str) -> str | None:
        """Give the token scope of a family reached at ``url`` (DoD Graph has its own)."""
        host = _host(url)
        for other, scope in self.other_hosts.get(family, {}).items():
            if _host(other) == host:
                return scope
        return self.scope(family)

    def names(self, family: str, url: str) -> bool:
        """Tell whether ``url`` is on one of the family's real hosts in this cloud."""
        host = _host(url)
        listed = [self.hosts.get(family) or "", *self.other_hosts.get(family, {})]
        return bool(host) and (any(_host(h) == host for h in listed if h) or any(
            host.endswith(suffix) for suffix in self.host_suffixes.get(family, ())))

    def owns(self, url: str) -> bool:
        """Tell whether ``url``'s host is under one of the cloud's own DNS domains."""
        host = _host(url)
        return any(host == d or host.endswith("." + d) for d in self.domains)


def _host(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower().rstrip(".")
    except ValueError:
        return ""


def _cloud(name: str, words: Vocabulary, hosts: Mapping[str, str | None],
           extra_audiences: Mapping[str, tuple[str, ...]], authority: str, vault_suffix: str,
           k8s_suffix: str, environment: str,
           unavailable: frozenset[str] = frozenset(), aliases: tuple[str, ...] = (),
           real: bool = True, resources: Mapping[str, str] | None = None,
           other_hosts: Mapping[str, tuple[str, ...]] | None = None,
           host_suffixes: Mapping[str, tuple[str, ...]] | None = None,
           domains: tuple[str, ...] = (), authority_constant: str = "") -> Cloud:
    """Make a cloud from its hosts and the facts that differ from them.

    A family's token resource is its host unless ``resources`` names another; an other host of
    a family takes its own scope when it is a resource of its own (:data:`_OWN_RESOURCE`), else
    the family's.
    """
    resource = {fam: (resources or {}).get(fam, host) for fam, host in hosts.items()}
    scopes = {fam: (f"{res}/.default" if res else None) for fam, res in resource.items()}
    others = {fam: _frozen({url: (f"{url}/.default" if url in _OWN_RESOURCE
                                  else str(scopes[fam])) for url in urls})
              for fam, urls in (other_hosts or {}).items()}
    audiences: dict[str, tuple[str, ...]] = {}
    for fam, res in resource.items():
        own = (res, f"{res}/") if res else ()
        extra = tuple(a for url in (other_hosts or {}).get(fam, ()) if url in _OWN_RESOURCE
                      for a in (url, f"{url}/"))
        audiences[fam] = own + extra + extra_audiences.get(fam, ())
    return Cloud(name=name, words=words, hosts=_frozen(hosts), scopes=_frozen(scopes),
                 audiences=_frozen(audiences),
                 authority=authority, vault_suffix=vault_suffix, k8s_suffix=k8s_suffix,
                 unavailable=unavailable, environment=environment,
                 authority_host=urlsplit(authority).hostname if real else None,
                 aliases=aliases, other_hosts=_frozen(others),
                 host_suffixes=_frozen(host_suffixes or {}), domains=domains,
                 authority_constant=authority_constant)


#: Other hosts whose token resource is the host itself (DoD Graph: learn.microsoft.com/graph/
#: deployments names ``https://dod-graph.microsoft.us`` as the L5 service root and resource).
_OWN_RESOURCE = frozenset({"https://dod-graph.microsoft.us"})


NEUTRAL = _cloud(
    "neutral", NEUTRAL_WORDS,
    {"arm": "https://management.vendor.com", "maps": "https://atlas.vendor.com",
     "graph": "https://graph.vendor.com", "fabric": "https://api.fabric.vendor.com"},
    {"arm": ("https://management.core.windows.net", "https://management.core.windows.net/"),
     "fabric": ("https://analysis.windows.net/powerbi/api",)},
    authority="https://login.vendor.com", vault_suffix="vault.vendor.net",
    k8s_suffix="vendork8s.io", environment="VendorPublicCloud", real=False,
)

#: The maps resource in every cloud (only the REST host changes): see the module's sources.
_MAPS_RESOURCE = "https://atlas.microsoft.com"

PUBLIC = _cloud(
    "public", REAL_WORDS,
    {"arm": "https://management.azure.com", "maps": _MAPS_RESOURCE,
     "graph": "https://graph.microsoft.com", "fabric": "https://api.fabric.microsoft.com"},
    {"arm": ("https://management.core.windows.net", "https://management.core.windows.net/"),
     "fabric": ("https://analysis.windows.net/powerbi/api",)},
    authority="https://login.microsoftonline.com", vault_suffix="vault.azure.net",
    k8s_suffix="azmk8s.io", environment="AzurePublicCloud", aliases=("AzureCloud",),
    other_hosts={"maps": ("https://us.atlas.microsoft.com", "https://eu.atlas.microsoft.com")},
    host_suffixes={"fabric": (".w.api.fabric.microsoft.com",)},
    domains=("azure.com", "microsoft.com", "windows.net"),
    authority_constant="AZURE_PUBLIC_CLOUD",
)

USGOV = _cloud(
    "usgov", REAL_WORDS,
    {"arm": "https://management.usgovcloudapi.net", "maps": "https://atlas.azure.us",
     "graph": "https://graph.microsoft.us", "fabric": None},
    {"arm": ("https://management.core.usgovcloudapi.net",
             "https://management.core.usgovcloudapi.net/")},
    authority="https://login.microsoftonline.us", vault_suffix="vault.usgovcloudapi.net",
    k8s_suffix="cx.aks.containerservice.azure.us", environment="AzureUSGovernmentCloud",
    aliases=("AzureUSGovernment",), resources={"maps": _MAPS_RESOURCE},
    other_hosts={"graph": ("https://dod-graph.microsoft.us",)},
    domains=("usgovcloudapi.net", "azure.us", "microsoft.us"),
    authority_constant="AZURE_GOVERNMENT",
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
    domains=("chinacloudapi.cn", "azure.cn"), authority_constant="AZURE_CHINA",
)

#: Every cloud by name.
CLOUDS: Mapping[str, Cloud] = MappingProxyType(
    {c.name: c for c in (NEUTRAL, PUBLIC, USGOV, CHINA)})

#: The cloud meant when a credential is given without endpoints.
DEFAULT_CLOUD = "public"


#: Every name a cloud answers to, lower-cased: its own and the Azure CLI's.
_BY_NAME: Mapping[str, Cloud] = MappingProxyType(
    {n.lower(): c for c in CLOUDS.values() for n in (c.name, *c.aliases)})


def cloud_of_urls(urls: Mapping[str, str]) -> Cloud | None:
    """Recognise the real cloud the URLs given for the families name.

    Parameters
    ----------
    urls : mapping of str to str
        Family (or ``base``, for all of them) -> the URL given.

    Returns
    -------
    Cloud or None
        The one real cloud whose hosts they name (any of its real hosts: the maps geographies,
        DoD Graph, workspace private links...), or ``None`` when none does (a gateway or a
        sandbox in another process: the neutral words).

    Raises
    ------
    ValueError
        A URL's host is under a real cloud's own domains but is not one of its hosts the
        toolkit lists (say which cloud is meant), or the URLs name two clouds; the message says
        which URL and clouds.
    """
    found: dict[str, str] = {}
    for family, url in urls.items():
        if not url:
            continue
        families = FAMILIES if family == "base" else (family,)
        named = [c for c in CLOUDS.values() if c.real and any(c.names(f, url) for f in families)]
        if named:
            found[named[0].name] = url
            continue
        owner = next((c for c in CLOUDS.values() if c.real and c.owns(url)), None)
        if owner is not None:
            raise ValueError(
                f"{url} is a host of the {owner.name} cloud's domains that the toolkit does not "
                f"list for {'any family' if family == 'base' else family}: pass "
                f"cloud={owner.name!r} (or the cloud meant), so that every family takes that "
                "cloud's hosts, token scopes and words")
    if len(found) > 1:
        raise ValueError("the URLs name hosts of several clouds (" + ", ".join(
            f"{url}: {name}" for name, url in found.items()) + "); pass cloud= to say which")
    return CLOUDS[next(iter(found))] if found else None


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
