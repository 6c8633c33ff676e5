"""Application gateways and their backend health (spec 1 §2.1-2.2, §4.2).

``POST .../applicationGateways/{name}/backendhealth`` answers 202 with ``Location`` and
``Retry-After``; the Location URL answers 202 until the probe results are gathered, then 200 with
the ``ApplicationGatewayBackendHealth`` body (final-state-via location). ``$expand`` inlines the
pool and HTTP settings resources.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolkit._spec.arm import NETWORK_API_VERSIONS
from toolkit.sandbox.arm.common import find_group, start_operation
from toolkit.sandbox.http import Reply, Request, Router, SandboxHTTPError

if TYPE_CHECKING:
    from toolkit.sandbox.server import Sandbox
    from toolkit.sandbox.world import World

__all__ = ["API_VERSIONS", "Gateway", "build_world", "catalog_rows", "register"]

API_VERSIONS = NETWORK_API_VERSIONS

PROBE_LOGS = {
    "Up": "Success. Received 200 status code.",
    "Down:502": ("Received invalid status code: 502 in the backend server's HTTP response. As per "
                 "the health probe configuration, 200-399 is the acceptable status code. Either "
                 "modify probe configuration or resolve backend issues."),
    "Down:timeout": ("Time taken by the backend to respond to application gateway's health probe "
                     "is more than the time-out threshold in the probe settings. Either increase "
                     "the time-out threshold in the probe settings or resolve the backend issues."),
    "Down:cert": ("The root certificate of the server certificate used by the backend does not "
                  "match the trusted root certificate added to the application gateway. Ensure "
                  "that you add the correct root certificate to allowlist the backend."),
    "Down:refused": ("Unable to connect to the backend. Check that the backend responds on the "
                     "port used for the probe. Also check whether any NSG/UDR/Firewall is "
                     "blocking access to the Ip and port of this backend."),
    "Partial": ("Partially healthy: the probe to /health succeeded, but the dependency check "
                "/health/dependencies returned 503 on 2 of the last 5 probes."),
    "Draining": ("Connection draining is in progress: the server was removed from the backend "
                 "pool and in-flight requests are completing (drain timeout 60 s)."),
    "Unknown": ("Unknown: the backend health status could not be retrieved. Check that an NSG, "
                "a UDR or DNS settings do not block the gateway from reaching the backend."),
}

# HTTP settings: name -> (protocol, port, path, request timeout, pick host name from backend)
SETTINGS = {
    "https-443": ("Https", 443, "/", 30, True),
    "http-80": ("Http", 80, None, 20, False),
    "https-8443-api": ("Https", 8443, "/api/", 60, False),
    "https-health-deep": ("Https", 443, "/health/dependencies", 10, True),
    "tls-22-sftp": ("Tls", 22, None, 120, False),
}

# health letters: U Up, 2 Down (502), T Down (timeout), C Down (certificate), R Down (refused),
# P Partial, D Draining, K Unknown
_LETTERS = {"U": "Up", "2": "Down:502", "T": "Down:timeout", "C": "Down:cert",
            "R": "Down:refused", "P": "Partial", "D": "Draining", "K": "Unknown"}

# (subscription, resource group, gateway, [(pool, kind, [(settings, health letters)])])
_GATEWAYS: tuple[tuple[str, str, str, list[tuple[str, str, list[tuple[str, str]]]]], ...] = (
    ("retail-prod", "rg-web-weu", "agw-web-prod-weu", [
        ("web-frontend", "vm", [("https-443", "UUUUUT")]),
        ("static-content", "fqdn", [("https-443", "UUU")]),
        ("legacy-cms", "vm", [("http-80", "KK")]),
    ]),
    ("retail-prod", "rg-web-weu", "agw-intranet-weu", [
        ("intranet", "vm", [("https-443", "UUUU")]),
        ("reporting", "vm", [("https-443", "CC")]),
    ]),
    ("retail-prod", "rg-api-weu", "agw-api-prod-weu", [
        ("orders-api", "vm", [("https-8443-api", "UUUUD"), ("https-health-deep", "UUUPU")]),
        ("payments-api", "vm", [("https-8443-api", "UU2T")]),
        ("catalog-api", "vm", [("https-8443-api", "UUUU")]),
    ]),
    ("retail-prod", "rg-shop-neu", "agw-shop-prod-neu", [
        ("checkout", "vm", [("https-443", "UU222U")]),
        ("search", "vm", [("https-443", "UUP")]),
        ("images", "fqdn", [("https-443", "UU")]),
    ]),
    ("retail-dev", "rg-web-dev", "agw-web-dev", [
        ("web-dev", "vm", [("https-443", "UT")]),
        ("api-dev", "vm", [("https-8443-api", "KK"), ("http-80", "RR")]),
    ]),
    ("shared-platform", "rg-network-hub", "agw-hub-ingress", [
        ("hub-services", "vm", [("https-443", "UUUU")]),
        ("partner-sftp", "vm", [("tls-22-sftp", "UD")]),
    ]),
)


@dataclass
class Server:
    """A backend server: its address, NIC ip configuration (VMs only), and health per settings."""

    address: str
    ip_configuration: str | None
    health: dict[str, tuple[str, str]] = field(default_factory=dict)


@dataclass
class Pool:
    """A backend address pool."""

    name: str
    servers: list[Server]
    settings: list[str]


@dataclass
class Gateway:
    """An application gateway."""

    subscription_id: str
    resource_group: str
    name: str
    location: str
    pools: list[Pool]

    def base_id(self, namespace: str) -> str:
        """Give the gateway's resource id in the vocabulary of ``namespace``."""
        return (f"/subscriptions/{self.subscription_id}/resourceGroups/{self.resource_group}"
                f"/providers/{namespace}.Network/applicationGateways/{self.name}")


def build_world(world: World) -> dict[tuple[str, str, str], Gateway]:
    """Build the gateways of the world, keyed by (subscription id, resource group, name).

    The keys are lower case.
    """
    rng = world.rng("network")
    subs = {s.name: s for s in world.subscriptions}
    out: dict[tuple[str, str, str], Gateway] = {}
    for sub_name, rg_name, gw_name, pools in _GATEWAYS:
        sub = subs[sub_name]
        group = sub.group(rg_name)
        assert group is not None
        built = []
        site = rng.randint(10, 60)
        for p_index, (pool_name, kind, settings) in enumerate(pools):
            subnet = 10 * (p_index + 1)
            n = len(settings[0][1])
            servers = []
            host = 3
            for i in range(n):
                if kind == "fqdn":
                    addr = f"{pool_name}-{i + 1:02d}.{gw_name.removeprefix('agw-')}.contoso.example"
                    ipc = None
                else:
                    host += rng.randint(1, 9)
                    addr = f"10.{site}.{subnet}.{host}"
                    vm = f"vm-{pool_name}-{i + 1:02d}"
                    ipc = (f"/subscriptions/{sub.id}/resourceGroups/{rg_name}/providers/"
                           f"{world.namespace}.Network/networkInterfaces/{vm}-nic/"
                           "ipConfigurations/ipconfig1")
                server = Server(addr, ipc)
                for settings_name, letters in settings:
                    key = _LETTERS[letters[i]]
                    server.health[settings_name] = (key.split(":")[0], PROBE_LOGS[key])
                servers.append(server)
            built.append(Pool(pool_name, servers, [s for s, _ in settings]))
        gw = Gateway(sub.id, rg_name, gw_name, group.location, built)
        out[(sub.id.lower(), rg_name.lower(), gw_name.lower())] = gw
    return out


def catalog_rows(gateways: dict[tuple[str, str, str], Gateway]) -> list[dict[str, Any]]:
    """One catalog row per gateway."""
    rows = []
    for gw in gateways.values():
        servers = sum(len(p.servers) for p in gw.pools)
        rows.append({"kind": "application_gateway", "subscription_id": gw.subscription_id,
                     "resource_group": gw.resource_group, "name": gw.name,
                     "location": gw.location,
                     "detail": f"{len(gw.pools)} pools, {servers} backend servers"})
    return rows


def _settings_resource(gw_id: str, name: str, namespace: str, expand: bool) -> dict[str, Any]:
    ref: dict[str, Any] = {"id": f"{gw_id}/backendHttpSettingsCollection/{name}"}
    if not expand:
        return ref
    protocol, port, path, timeout, pick = SETTINGS[name]
    ref.update({
        "name": name, "etag": f'W/"{zlib.crc32(f"{gw_id}/{name}".encode()):08x}"',
        "type": f"{namespace}.Network/applicationGateways/backendHttpSettingsCollection",
        "properties": {"port": port, "protocol": protocol, "cookieBasedAffinity": "Disabled",
                       "requestTimeout": timeout, "path": path,
                       "pickHostNameFromBackendAddress": pick,
                       "provisioningState": "Succeeded",
                       "probe": {"id": f"{gw_id}/probes/probe-{name}"}},
    })
    return ref


def backend_health_body(gw: Gateway, namespace: str, expand: bool) -> dict[str, Any]:
    """Build the ApplicationGatewayBackendHealth body of a gateway."""
    gw_id = gw.base_id(namespace)
    pools = []
    for pool in gw.pools:
        pool_ref: dict[str, Any] = {"id": f"{gw_id}/backendAddressPools/{pool.name}"}
        if expand:
            pool_ref.update({
                "name": pool.name,
                "type": f"{namespace}.Network/applicationGateways/backendAddressPools",
                "properties": {
                    "backendAddresses": [
                        {"fqdn": s.address} if s.ip_configuration is None
                        else {"ipAddress": s.address} for s in pool.servers],
                    "provisioningState": "Succeeded",
                },
            })
        collection = []
        for settings_name in pool.settings:
            servers = []
            for s in pool.servers:
                health, log = s.health[settings_name]
                entry: dict[str, Any] = {"address": s.address, "health": health,
                                         "healthProbeLog": log}
                if s.ip_configuration:
                    entry["ipConfiguration"] = {"id": s.ip_configuration}
                servers.append(entry)
            collection.append({
                "backendHttpSettings": _settings_resource(gw_id, settings_name, namespace, expand),
                "servers": servers,
            })
        pools.append({"backendAddressPool": pool_ref, "backendHttpSettingsCollection": collection})
    return {"backendAddressPools": pools}


def _backend_health(request: Request) -> Reply:
    sub, group = find_group(request)
    sandbox = request.sandbox
    name = request.path_params["applicationGatewayName"]
    gateways = sandbox.world.section("network")
    gw = gateways.get((sub.id.lower(), group.name.lower(), name.lower()))
    if gw is None:
        raise SandboxHTTPError(
            404, "ResourceNotFound",
            f"The Resource '{sandbox.namespace}.Network/applicationGateways/{name}' under "
            f"resource group '{group.name}' was not found. For more details please go to "
            "https://aka.ms/ARMResourceNotFoundFix")
    expand = request.param("$expand")
    body = backend_health_body(gw, sandbox.namespace, bool(expand))
    return start_operation(request, f"{sandbox.namespace}.Network", gw.location,
                           lambda: Reply(200, body))


def register(router: Router, sandbox: Sandbox) -> None:
    """Add the backend health route."""
    router.add("POST", "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/"
               "providers/{ns}.Network/applicationGateways/{applicationGatewayName}/backendhealth",
               _backend_health, family="arm", api_versions=API_VERSIONS, name="backend_health")
