"""Cluster credentials (spec 1 §2.10, §4.8, §4.9).

Managed clusters' monitoring credentials and hosted clusters' admin credentials.

``POST .../managedClusters/{name}/listClusterMonitoringUserCredential`` answers 200 with
``{"kubeconfigs": [{"name": "clusterMonitoringUser", "value": <Base64 kubeconfig>}]}``. The
kubeconfig is real YAML: the cluster's certificate authority, its API server URL (public or
private FQDN, chosen by ``server-fqdn``: private clusters default to their private FQDN), a context,
and the monitoring user (a bearer token; a client certificate on clusters that use them; a
``kubelogin`` exec block on clusters that sign in through the identity provider).

``POST .../hostedClusters/{name}/listCredentials`` answers 200 with
``{"kubeadminUsername": "kubeadmin", "kubeadminPassword": ...}``; in a real cloud's words the
route is the real provider's, ``Microsoft.RedHatOpenShift/openShiftClusters/{name}/
listCredentials``. API servers are under the cloud's managed-cluster DNS suffix
(``vendork8s.io`` / ``azmk8s.io``).

Unknown clusters are 404 in the ARM error body. The credential values are deterministic from the
world's seed; :func:`secret_values` lists them (tests check that none is ever shown).
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import yaml

from toolkit._spec.arm import (
    CLUSTER_NAME_PATTERN,
    HOSTED_CLUSTER_API_VERSIONS,
    MANAGED_CLUSTER_API_VERSIONS,
)
from toolkit.sandbox.arm.common import arm_reply, find_group
from toolkit.sandbox.http import Reply, Request, Router, SandboxHTTPError

if TYPE_CHECKING:
    from toolkit.sandbox.server import Sandbox
    from toolkit.sandbox.world import World

__all__ = [
    "HOSTED_API_VERSIONS",
    "MANAGED_API_VERSIONS",
    "ClusterWorld",
    "build_world",
    "catalog_rows",
    "kubeconfig",
    "register",
    "secret_values",
]

MANAGED_API_VERSIONS = MANAGED_CLUSTER_API_VERSIONS
HOSTED_API_VERSIONS = HOSTED_CLUSTER_API_VERSIONS
CLUSTER_NAME_RE = re.compile(CLUSTER_NAME_PATTERN)

# (subscription, resource group, name, private cluster, public FQDN too, user auth)
_MANAGED = (
    ("retail-prod", "rg-web-weu", "aks-web-prod-weu", False, False, "token"),
    ("retail-prod", "rg-api-weu", "aks-api-prod-weu", True, True, "token"),
    ("retail-prod", "rg-analytics-neu", "aks_analytics_neu", False, False, "exec"),
    ("retail-dev", "rg-web-dev", "aks-dev-01", False, False, "token"),
    ("retail-dev", "rg-sandbox-dev", "AksSandbox", False, False, "token"),
    ("shared-platform", "rg-monitoring", "aks-observability", True, False, "token"),
    ("shared-platform", "rg-network-hub", "aks-ingress-hub", False, False, "client-certificate"),
)

# (subscription, resource group, name)
_HOSTED = (
    ("retail-prod", "rg-web-weu", "aro-payments-prod"),
    ("retail-dev", "rg-sandbox-dev", "aro-dev"),
    ("shared-platform", "rg-security", "aro-siem"),
)

_PASSWORD_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"


@dataclass
class ManagedCluster:
    """A managed cluster and its monitoring user's material."""

    subscription_id: str
    resource_group: str
    name: str
    location: str
    private: bool
    public_fqdn: bool
    auth: str
    public_host: str
    private_host: str
    ca_data: str
    token: str
    client_cert: str
    client_key: str


@dataclass
class HostedCluster:
    """A hosted cluster and its kubeadmin password."""

    subscription_id: str
    resource_group: str
    name: str
    location: str
    password: str


@dataclass
class ClusterWorld:
    """The cluster part of the world."""

    managed: list[ManagedCluster]
    hosted: list[HostedCluster]

    def find_managed(self, sub: str, rg: str, name: str) -> ManagedCluster | None:
        """Find the managed cluster of that name in that group (case-insensitive)."""
        want = (sub.lower(), rg.lower(), name.lower())
        return next((c for c in self.managed if (c.subscription_id.lower(),
                                                 c.resource_group.lower(),
                                                 c.name.lower()) == want), None)

    def find_hosted(self, sub: str, rg: str, name: str) -> HostedCluster | None:
        """Find the hosted cluster of that name in that group (case-insensitive)."""
        want = (sub.lower(), rg.lower(), name.lower())
        return next((c for c in self.hosted if (c.subscription_id.lower(),
                                                c.resource_group.lower(),
                                                c.name.lower()) == want), None)


def _pem(rng: Any, label: str, size: int) -> str:
    """Base64 of a PEM block of random bytes (what kubeconfig ``*-data`` fields hold)."""
    body = base64.b64encode(rng.randbytes(size)).decode()
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    pem = f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----\n"
    return base64.b64encode(pem.encode()).decode()


def build_world(world: World) -> ClusterWorld:
    """Build the managed and hosted clusters with their credentials, deterministic from the seed."""
    rng = world.rng("clusters")
    suffix = world.cloud.k8s_suffix
    subs = {s.name: s for s in world.subscriptions}
    managed = []
    for sub_name, rg_name, name, private, public_fqdn, auth in _MANAGED:
        sub = subs[sub_name]
        group = sub.group(rg_name)
        assert group is not None
        prefix = re.sub(r"[^a-z0-9-]", "-", name.lower())[:40]
        tag = f"{rng.getrandbits(32):08x}"
        region = group.location
        managed.append(ManagedCluster(
            sub.id, rg_name, name, region, private, public_fqdn, auth,
            public_host=f"{prefix}-{tag}.hcp.{region}.{suffix}",
            private_host=f"{prefix}-{tag}.{rng.getrandbits(64):016x}.privatelink.{region}"
                         f".{suffix}",
            ca_data=_pem(rng, "CERTIFICATE", 720),
            token=f"{rng.getrandbits(256):064x}",
            client_cert=_pem(rng, "CERTIFICATE", 900),
            client_key=_pem(rng, "RSA PRIVATE KEY", 1190),
        ))
    hosted = []
    for sub_name, rg_name, name in _HOSTED:
        sub = subs[sub_name]
        group = sub.group(rg_name)
        assert group is not None
        password = "-".join("".join(rng.choice(_PASSWORD_ALPHABET) for _ in range(5))
                            for _ in range(4))
        hosted.append(HostedCluster(sub.id, rg_name, name, group.location, password))
    return ClusterWorld(managed, hosted)


def catalog_rows(clusters: ClusterWorld) -> list[dict[str, Any]]:
    """One catalog row per cluster (never a credential)."""
    rows = []
    for c in clusters.managed:
        access = "private cluster" + (", public FQDN enabled" if c.public_fqdn else "") \
            if c.private else "public API server"
        rows.append({"kind": "managed_cluster", "subscription_id": c.subscription_id,
                     "resource_group": c.resource_group, "name": c.name,
                     "location": c.location, "detail": f"{access}; monitoring user: {c.auth}"})
    for h in clusters.hosted:
        rows.append({"kind": "hosted_cluster", "subscription_id": h.subscription_id,
                     "resource_group": h.resource_group, "name": h.name,
                     "location": h.location, "detail": "kubeadmin credentials"})
    return rows


def kubeconfig(cluster: ManagedCluster, host: str, environment: str) -> str:
    """Write the monitoring user's kubeconfig (YAML text) for the API server at ``host``.

    It signs in (``kubelogin``) to the cloud ``environment``.
    """
    user_name = f"clusterMonitoringUser_{cluster.resource_group}_{cluster.name}"
    user: dict[str, Any]
    if cluster.auth == "exec":
        user = {"exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "kubelogin",
            "args": ["get-token", "--login", "devicecode", "--server-id",
                     "6dae42f8-4368-4678-94ff-3960e28e3630", "--environment", environment],
            "env": None, "interactiveMode": "IfAvailable", "provideClusterInfo": False}}
    elif cluster.auth == "client-certificate":
        user = {"client-certificate-data": cluster.client_cert,
                "client-key-data": cluster.client_key, "token": cluster.token}
    else:
        user = {"token": cluster.token}
    config = {
        "apiVersion": "v1",
        "clusters": [{"cluster": {"certificate-authority-data": cluster.ca_data,
                                  "server": f"https://{host}:443"},
                      "name": cluster.name}],
        "contexts": [{"context": {"cluster": cluster.name, "user": user_name},
                      "name": cluster.name}],
        "current-context": cluster.name,
        "kind": "Config",
        "preferences": {},
        "users": [{"name": user_name, "user": user}],
    }
    return yaml.safe_dump(config, sort_keys=False, default_flow_style=False)


def secret_values(world: World) -> list[str]:
    """Every credential value the sandbox can hand out (for checks that none is ever shown)."""
    clusters: ClusterWorld = world.section("clusters")
    out: list[str] = []
    for c in clusters.managed:
        out += [c.token, c.client_key]
        for host in (c.public_host, c.private_host):
            text = kubeconfig(c, host, world.cloud.environment)
            out += [text, base64.b64encode(text.encode()).decode()]
    out += [h.password for h in clusters.hosted]
    return out


def _monitoring_credentials(request: Request) -> Reply:
    sub, group = find_group(request)
    ns = request.sandbox.namespace
    name = request.path_params["resourceName"]
    if not CLUSTER_NAME_RE.match(name):
        raise SandboxHTTPError(400, "InvalidParameter",
                               f"The resource name '{name}' is invalid: 1 to 63 letters, digits, "
                               "'-' and '_', starting and ending with a letter or digit.",
                               target="resourceName")
    clusters: ClusterWorld = request.sandbox.world.section("clusters")
    cluster = clusters.find_managed(sub.id, group.name, name)
    if cluster is None:
        raise SandboxHTTPError(
            404, "ResourceNotFound",
            f"The Resource '{ns}.ContainerService/managedClusters/{name}' under resource group "
            f"'{group.name}' was not found. For more details please go to "
            "https://aka.ms/ARMResourceNotFoundFix")
    kind = request.param("server-fqdn")
    if kind is None or kind == "":
        host = cluster.private_host if cluster.private else cluster.public_host
    elif kind.lower() == "public":
        if cluster.private and not cluster.public_fqdn:
            raise SandboxHTTPError(400, "PublicFQDNNotEnabled",
                                   f"The private cluster '{name}' has no public FQDN; enable "
                                   "the public FQDN or ask for the private one.",
                                   target="server-fqdn")
        host = cluster.public_host
    elif kind.lower() == "private":
        if not cluster.private:
            raise SandboxHTTPError(400, "PrivateFQDNNotAvailable",
                                   f"The cluster '{name}' is not a private cluster and has no "
                                   "private FQDN.", target="server-fqdn")
        host = cluster.private_host
    else:
        raise SandboxHTTPError(400, "InvalidParameter",
                               f"The server FQDN type '{kind}' is not valid; use 'public' or "
                               "'private'.", target="server-fqdn")
    text = kubeconfig(cluster, host, request.sandbox.cloud.environment)
    value = base64.b64encode(text.encode()).decode()
    return arm_reply(request, {"kubeconfigs": [{"name": "clusterMonitoringUser",
                                                "value": value}]})


def _hosted_credentials(request: Request) -> Reply:
    sub, group = find_group(request)
    words = request.sandbox.words
    name = request.path_params["resourceName"]
    clusters: ClusterWorld = request.sandbox.world.section("clusters")
    cluster = clusters.find_hosted(sub.id, group.name, name)
    if cluster is None:
        raise SandboxHTTPError(
            404, "ResourceNotFound",
            f"The Resource '{words.hosted_cluster_provider}/{words.hosted_cluster_type}/{name}' "
            "under resource "
            f"group '{group.name}' was not found. For more details please go to "
            "https://aka.ms/ARMResourceNotFoundFix")
    return arm_reply(request, {"kubeadminPassword": cluster.password,
                               "kubeadminUsername": "kubeadmin"})


def register(router: Router, sandbox: Sandbox) -> None:
    """Add the two credential routes."""
    router.add("POST", "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/"
               "providers/{ns}.ContainerService/managedClusters/{resourceName}/"
               "listClusterMonitoringUserCredential", _monitoring_credentials, family="arm",
               api_versions=MANAGED_API_VERSIONS, name="cluster_monitoring_credentials")
    words = sandbox.words
    router.add("POST", "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/"
               f"providers/{words.hosted_cluster_provider}/{words.hosted_cluster_type}/"
               "{resourceName}/listCredentials", _hosted_credentials, family="arm",
               api_versions=HOSTED_API_VERSIONS, name="hosted_cluster_credentials")
