"""The providers' resource lists, served from the world.

SQL servers, application gateways, managed clusters and hosted (OpenShift) clusters:
``GET /subscriptions/{s}/providers/{provider}/{type}`` and the same under
``/resourceGroups/{g}``, each paged as the service pages it (``nextLink``, GET), a few items a
page so that the world's lists span pages. The bodies are the providers' tracked-resource
envelopes (``id``, ``name``, ``type``, ``location``, ``tags``, ``properties``) in the sandbox
cloud's words; a subscription that holds none of a type answers an empty ``value``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from toolkit._spec.arm import (
    HOSTED_CLUSTER_API_VERSIONS,
    MANAGED_CLUSTER_API_VERSIONS,
    NETWORK_API_VERSIONS,
    SQL_API_VERSIONS,
    SQL_DNS_SUFFIXES,
)
from toolkit.sandbox.arm.common import find_group, find_subscription
from toolkit.sandbox.arm.tenant import page

if TYPE_CHECKING:
    from toolkit.sandbox.http import Reply, Request, Router
    from toolkit.sandbox.server import Sandbox
    from toolkit.sandbox.world import World

__all__ = ["register"]

#: (subscription id, resource group, name, location) of one resource of the world
Where = tuple[str, str, str, str]


def _tag(*parts: str) -> str:
    return hashlib.sha256(":".join(parts).encode()).hexdigest()


def _envelope(where: Where, rtype: str, properties: dict[str, Any],
              **extra: Any) -> dict[str, Any]:
    sub, rg, name, location = where
    return {"id": f"/subscriptions/{sub}/resourceGroups/{rg}/providers/{rtype}/{name}",
            "name": name, "type": rtype, "location": location,
            "tags": {"owner": "platform-team"}, **extra, "properties": properties}


def _sql(request: Request, world: World) -> Iterable[dict[str, Any]]:
    ns = request.sandbox.namespace
    dns = SQL_DNS_SUFFIXES.get(request.sandbox.cloud.name, SQL_DNS_SUFFIXES["neutral"])
    for s in world.section("sql").servers:
        props: dict[str, Any] = {
            "fullyQualifiedDomainName": f"{s.name}.{dns}", "administratorLogin": "sqladmin",
            "version": "12.0", "state": "Ready",
            "publicNetworkAccess": "Disabled" if "prod" in s.name else "Enabled",
            "minimalTlsVersion": "1.2", "restrictOutboundNetworkAccess": "Disabled",
            "privateEndpointConnections": []}
        yield _envelope((s.subscription_id, s.resource_group, s.name, s.location),
                        f"{ns}.Sql/servers", props, kind="v12.0")


def _gateways(request: Request, world: World) -> Iterable[dict[str, Any]]:
    ns = request.sandbox.namespace
    for gw in world.section("network").values():
        base = gw.base_id(ns)
        pools = [{"name": p.name, "id": f"{base}/backendAddressPools/{p.name}",
                  "properties": {"provisioningState": "Succeeded",
                                 "backendAddresses": [{"ipAddress": s.address}
                                                      if s.ip_configuration is None else {}
                                                      for s in p.servers]}}
                 for p in gw.pools]
        props = {"provisioningState": "Succeeded", "operationalState": "Running",
                 "sku": {"name": "WAF_v2", "tier": "WAF_v2",
                         "capacity": 2 + int(_tag(gw.name)[:2], 16) % 3},
                 "backendAddressPools": pools}
        yield _envelope((gw.subscription_id, gw.resource_group, gw.name, gw.location),
                        f"{ns}.Network/applicationGateways", props)


def _managed(request: Request, world: World) -> Iterable[dict[str, Any]]:
    ns = request.sandbox.namespace
    for c in world.section("clusters").managed:
        version = "1.31.7" if "dev" in c.name.lower() or "sandbox" in c.name.lower() \
            else "1.32.4"
        props: dict[str, Any] = {
            "provisioningState": "Succeeded", "powerState": {"code": "Running"},
            "kubernetesVersion": version[:4], "currentKubernetesVersion": version,
            "dnsPrefix": c.public_host.split(".", 1)[0].rsplit("-", 1)[0],
            "nodeResourceGroup": f"MC_{c.resource_group}_{c.name}_{c.location}",
            "apiServerAccessProfile": {"enablePrivateCluster": c.private},
            "agentPoolProfiles": [{"name": "system", "count": 3, "vmSize": "Standard_D4s_v5",
                                   "osType": "Linux", "mode": "System"}]}
        if c.private:
            props["privateFQDN"] = c.private_host
            if c.public_fqdn:
                props["fqdn"] = c.public_host
        else:
            props["fqdn"] = c.public_host
        yield _envelope((c.subscription_id, c.resource_group, c.name, c.location),
                        f"{ns}.ContainerService/managedClusters", props)


def _hosted(request: Request, world: World) -> Iterable[dict[str, Any]]:
    words = request.sandbox.words
    stamp = world.epoch.replace(day=1).strftime("%Y-%m-%dT%H:%M:%SZ")
    for c in world.section("clusters").hosted:
        domain = f"{c.name}.{c.location}.{request.sandbox.cloud.k8s_suffix}"
        props = {"provisioningState": "Succeeded",
                 "clusterProfile": {"domain": domain, "version": "4.16.30",
                                    "resourceGroupId": f"/subscriptions/{c.subscription_id}/"
                                                       f"resourceGroups/aro-{c.name}"},
                 "consoleProfile": {"url": f"https://console-openshift-console.apps.{domain}/"},
                 "apiserverProfile": {"visibility": "Private",
                                      "url": f"https://api.{domain}:6443/"}}
        system = {"createdBy": "platform-team@contoso.example", "createdByType": "User",
                  "createdAt": stamp, "lastModifiedBy": "platform-team@contoso.example",
                  "lastModifiedByType": "User", "lastModifiedAt": stamp}
        yield _envelope((c.subscription_id, c.resource_group, c.name, c.location),
                        f"{words.hosted_cluster_provider}/{words.hosted_cluster_type}", props,
                        systemData=system)


def _lister(items: Callable[[Request, World], Iterable[dict[str, Any]]],
            by_group: bool) -> Callable[[Request], Reply]:
    """Make the handler listing ``items`` of the subscription (or of the group) in the path."""

    def handler(request: Request) -> Reply:
        if by_group:
            sub, group = find_group(request)
            where = f"/subscriptions/{sub.id}/resourcegroups/{group.name}/".lower()
        else:
            sub = find_subscription(request)
            where = f"/subscriptions/{sub.id}/".lower()
        found = [i for i in items(request, request.sandbox.world)
                 if i["id"].lower().startswith(where)]
        return page(request, found)

    return handler


def register(router: Router, sandbox: Sandbox) -> None:
    """Add each provider's list of a subscription and of a resource group."""
    words = sandbox.words
    kinds = (
        ("sql_servers", "{ns}.Sql/servers", _sql, SQL_API_VERSIONS),
        ("application_gateways", "{ns}.Network/applicationGateways", _gateways,
         NETWORK_API_VERSIONS),
        ("managed_clusters", "{ns}.ContainerService/managedClusters", _managed,
         MANAGED_CLUSTER_API_VERSIONS),
        ("openshift_clusters", f"{words.hosted_cluster_provider}/{words.hosted_cluster_type}",
         _hosted, HOSTED_CLUSTER_API_VERSIONS),
    )
    for name, provider, items, versions in kinds:
        router.add("GET", f"/subscriptions/{{subscriptionId}}/providers/{provider}",
                   _lister(items, False), family="arm", api_versions=versions, name=name)
        router.add("GET", f"/subscriptions/{{subscriptionId}}/resourceGroups/"
                          f"{{resourceGroupName}}/providers/{provider}",
                   _lister(items, True), family="arm", api_versions=versions,
                   name=f"{name}_by_group")
