"""Build Resource Graph's tables of the sandbox world.

They are ``resources``, ``resourcecontainers`` and ``policyresources``.

``resources`` holds every resource of the policy world that exists now (created, not deleted),
with properties of its type (drawn from its id, so the same world gives the same ones);
``resourcecontainers`` the tenant's management groups, subscriptions and resource groups;
``policyresources`` the newest policy state of each (resource, assignment, definition, reference
id) of the resources that exist.
Types are lower case, as the service writes them; ``subscriptionId`` and ``resourceGroup``
(lower case) are columns of every row, so that a query's scope selects rows by them.

Each table is a pandas frame of flat columns plus dynamic ones (dicts and lists); the policy
states' ``properties`` are built from columns of codes by the engine
(:mod:`~toolkit.sandbox.arm.resourcegraph.engine`), so that a large world's states are not a
million dicts.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from toolkit._spec.arm import (
    MANAGEMENT_GROUP_TYPE,
    POLICY_FIELDS,
    RESOURCE_FIELDS,
    RESOURCE_GRAPH_POLICY_STATES_TYPE,
)
from toolkit.sandbox.arm.policy.results import scope_rows
from toolkit.sandbox.arm.policy.scopes import Scope
from toolkit.sandbox.arm.policy.world import STATES, TYPES

if TYPE_CHECKING:
    from toolkit.sandbox.arm.policy.world import PolicyWorld, Resource
    from toolkit.sandbox.world import World

__all__ = ["COLUMNS", "STATE_WEIGHTS", "Tables", "build_tables"]

#: The columns of ``resources`` and ``resourcecontainers``, in the service's order; the dynamic
#: ones hold dicts, lists or nulls.
COLUMNS = ("id", "name", "type", "tenantId", "kind", "location", "resourceGroup",
           "subscriptionId", "managedBy", "sku", "plan", "properties", "tags", "identity",
           "zones", "extendedLocation")
DYNAMIC = ("sku", "plan", "properties", "tags", "identity", "zones", "extendedLocation")
#: ``properties.stateWeight`` of a policy state, by compliance state (the weights the
#: service's sample queries rank states by).
STATE_WEIGHTS = {"NonCompliant": 300, "Compliant": 200, "Conflict": 100, "Exempt": 50,
                 "Unknown": 0}


@dataclass
class Tables:
    """The world's tables, and the frame of policy states' codes the engine builds them from."""

    resources: pd.DataFrame
    containers: pd.DataFrame
    states: pd.DataFrame  # flat: id, name, type, subscriptionId, resourceGroup, res, pol, ...
    resource_fields: pd.DataFrame  # per resource of the policy world: its state fields
    policy_fields: pd.DataFrame  # per policy: its state fields
    ancestors: dict[str, list[str]]  # subscription id (lower) -> management groups above
    parents: dict[str, str | None]  # management group (lower) -> the group above it (lower)


def _digest(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def _guid(text: str) -> str:
    h = hashlib.sha256(text.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def _properties(res: Resource, ns: str, sub_id: str) -> tuple[dict[str, Any], dict[str, Any] |
                                                              None, str]:
    """Draw the properties, sku and kind of a resource of the policy world, by its type."""
    h = _digest(res.fields["resourceId"])
    flag = [bool((h >> i) & 1) for i in range(16)]
    base = f"/subscriptions/{sub_id}/resourceGroups/{res.group}/providers/{ns}"
    props: dict[str, Any] = {"provisioningState": "Succeeded"}
    sku: dict[str, Any] | None = None
    kind = ""
    if res.kind == "VM":
        nics = [{"id": f"{base}.Network/networkInterfaces/nic-{res.name[3:]}-{i:02d}",
                 "properties": {"primary": i == 0}} for i in range(1 + (h % 3 == 0))]
        props.update(
            hardwareProfile={"vmSize": ("Standard_D2s_v5", "Standard_D4s_v5",
                                        "Standard_B2ms")[h % 3]},
            storageProfile={"osDisk": {"osType": "Windows" if flag[1] else "Linux",
                                       "managedDisk": {"id": f"{base}.Compute/disks/"
                                                             f"osdisk-{res.name}"}}},
            networkProfile={"networkInterfaces": nics})
    elif res.kind == "ST":
        kind = "StorageV2"
        sku = {"name": "Standard_LRS" if flag[2] else "Standard_GRS", "tier": "Standard"}
        props.update(supportsHttpsTrafficOnly=not (flag[3] and flag[4]),
                     allowBlobPublicAccess=flag[5] and flag[6], minimumTlsVersion="TLS1_2")
    elif res.kind == "DISK":
        sku = {"name": "Premium_LRS" if flag[2] else "StandardSSD_LRS"}
        props.update(diskSizeGB=(32, 64, 128, 256)[h % 4],
                     diskState="Attached" if not (flag[7] and flag[8]) else "Unattached",
                     encryption={"type": "EncryptionAtRestWithCustomerKey" if flag[9]
                                 else "EncryptionAtRestWithPlatformKey"})
    elif res.kind == "NIC":
        props.update(ipConfigurations=[{"name": "ipconfig1", "properties": {
            "primary": True, "privateIPAddress": f"10.{h % 250}.{(h >> 8) % 250}.{4 + h % 200}",
            "subnet": {"id": f"{base}.Network/virtualNetworks/vnet-{res.group}/subnets/"
                             "default"}}}])
    elif res.kind == "NSG":
        props.update(securityRules=[{"name": "allow-https", "properties": {
            "access": "Allow", "direction": "Inbound", "destinationPortRange": "443"}}])
    elif res.kind == "PIP":
        sku = {"name": "Standard"}
        props.update(ipAddress=f"20.{h % 250}.{(h >> 8) % 250}.{(h >> 16) % 250}"
                     if flag[10] else None,
                     publicIPAllocationMethod="Static" if flag[11] else "Dynamic")
    elif res.kind == "SITE":
        kind = "app"
        props.update(httpsOnly=not (flag[3] and flag[12]), state="Running",
                     siteConfig={"minTlsVersion": "1.2" if flag[13] else "1.0"})
    elif res.kind == "KV":
        props.update(enableSoftDelete=True, enablePurgeProtection=flag[14],
                     sku={"family": "A", "name": "standard"})
    elif res.kind == "AKS":
        props.update(kubernetesVersion=("1.30.4", "1.31.2")[h % 2], enableRBAC=True)
    elif res.kind == "REDIS":
        props.update(enableNonSslPort=False, sku={"name": "Standard", "family": "C",
                                                  "capacity": 1})
    elif res.kind == "ACR":
        sku = {"name": "Premium" if flag[2] else "Basic"}
        props.update(adminUserEnabled=flag[15])
    elif res.kind == "SQL":
        kind = "v12.0"
        props.update(version="12.0", publicNetworkAccess="Disabled" if flag[4] else "Enabled")
    elif res.kind == "SQLDB":
        sku = {"name": "GP_Gen5", "tier": "GeneralPurpose", "capacity": 2}
        props.update(status="Online", maxSizeBytes=34359738368)
    return props, sku, kind


def _resources(world: World, pw: PolicyWorld) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``resources``, and the state fields of every resource of the policy world."""
    ns = world.namespace
    rows = []
    for res in pw.resources:
        if res.deleted:  # deleted days ago: gone from the graph
            continue
        props, sku, kind = _properties(res, ns, res.subscription_id)
        rid = res.fields["resourceId"]
        rows.append({
            "id": rid, "name": rid.rsplit("/", 1)[-1],
            "type": f"{ns}.{TYPES[res.kind][0]}".lower(), "tenantId": world.tenant_id,
            "kind": kind, "location": res.location, "resourceGroup": res.group.lower(),
            "subscriptionId": res.subscription_id, "managedBy": "", "sku": sku, "plan": None,
            "properties": props, "tags": dict(res.tags),
            "identity": {"type": "SystemAssigned"} if res.kind in ("VM", "SITE", "AKS")
            else None,
            "zones": ["1"] if res.kind in ("VM", "DISK") and res.location != "global" else None,
            "extendedLocation": None})
    fields = pd.DataFrame([{k: res.fields[k] for k in RESOURCE_FIELDS} for res in pw.resources])
    return pd.DataFrame(rows, columns=list(COLUMNS)), fields


def _containers(world: World) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    """``resourcecontainers``: management groups, subscriptions and resource groups."""
    ns = world.namespace
    tenant = world.tenant_id
    mg_path = f"/providers/{ns}.Management/managementGroups"
    by_name = {mg.name: mg for mg in world.management_groups}
    rows = []
    ancestors: dict[str, list[str]] = {}
    for mg in world.management_groups:
        parent = by_name.get(mg.parent) if mg.parent else None
        rows.append({
            "id": f"{mg_path}/{mg.name}", "name": mg.name,
            "type": f"{ns}.{MANAGEMENT_GROUP_TYPE}".lower(), "tenantId": tenant,
            "properties": {"displayName": mg.display_name, "details": {
                "parent": {"id": f"{mg_path}/{parent.name}", "name": parent.name,
                           "displayName": parent.display_name} if parent else None}},
            "tags": {}})
    for sub in world.subscriptions:
        above = world.ancestors(sub.name)
        ancestors[sub.id.lower()] = above
        chain = [{"name": name, "displayName": by_name[name].display_name} for name in above]
        rows.append({
            "id": f"/subscriptions/{sub.id}", "name": sub.name,
            "type": f"{ns}.Resources/subscriptions".lower(), "tenantId": tenant,
            "subscriptionId": sub.id,
            "properties": {"state": "Enabled", "managementGroupAncestorsChain": chain,
                           "subscriptionPolicies": {
                               "locationPlacementId": "Public_2014-09-01",
                               "quotaId": "EnterpriseAgreement_2014-09-01",
                               "spendingLimit": "Off"}},
            "tags": {}})
        for g in sub.resource_groups:
            rows.append({
                "id": f"/subscriptions/{sub.id}/resourceGroups/{g.name}", "name": g.name,
                "type": f"{ns}.Resources/subscriptions/resourceGroups".lower(),
                "tenantId": tenant, "location": g.location,
                "resourceGroup": g.name.lower(), "subscriptionId": sub.id,
                "properties": {"provisioningState": "Succeeded"},
                "tags": {"purpose": g.purpose}})
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    for col in ("kind", "location", "resourceGroup", "subscriptionId", "managedBy"):
        frame[col] = [v if isinstance(v, str) else "" for v in frame[col]]
    return frame, ancestors


def _states(world: World, pw: PolicyWorld) -> pd.DataFrame:
    """Give the newest state of every policy of every resource that exists.

    The states of a deleted resource are gone, as the service removes them; every resource that
    exists was evaluated in the day before the world's epoch.
    """
    tenant = Scope("/", list(pw.by_group), kind="managementGroup")
    rec, rows = scope_rows(pw, tenant, "latest", 0.0, float(int(world.epoch.timestamp())))
    alive = np.array([not r.deleted for r in pw.resources], dtype=bool)
    rows = rows[alive[rec.pair_resource[rec.pair[rows]]]]
    pairs = rec.pair[rows]
    res = rec.pair_resource[pairs]
    pol = rec.pair_policy[pairs]
    ns = world.namespace.lower()
    rtype = f"{ns}.{RESOURCE_GRAPH_POLICY_STATES_TYPE}"
    subs = np.array([r.subscription_id for r in pw.resources], dtype=object)[res]
    groups = np.array([r.group.lower() for r in pw.resources], dtype=object)[res]
    names = [_guid(f"{r}|{p}") for r, p in zip(res.tolist(), pol.tolist(), strict=True)]
    ids = [f"/subscriptions/{s}/resourcegroups/{g}/providers/{rtype}/{n}"
           for s, g, n in zip(subs.tolist(), groups.tolist(), names, strict=True)]
    return pd.DataFrame({
        "id": ids, "name": names, "type": rtype, "tenantId": world.tenant_id,
        "subscriptionId": subs, "resourceGroup": groups,
        "res": res.astype(np.int64), "pol": pol.astype(np.int64),
        "complianceState": np.array(STATES, dtype=object)[rec.state[rows]],
        "timestamp": pd.to_datetime(rec.ts[rows], unit="s", utc=True).strftime(
            "%Y-%m-%dT%H:%M:%SZ")})


def _policy_fields(pw: PolicyWorld) -> pd.DataFrame:
    names = [f for f in POLICY_FIELDS if f != "policyDefinitionGroupNames"]
    frame = pd.DataFrame([{k: p.fields[k] for k in names} for p in pw.policies])
    frame["policyDefinitionGroupNames"] = [list(p.fields["policyDefinitionGroupNames"])
                                           for p in pw.policies]
    return frame


def build_tables(world: World) -> Tables:
    """Build the world's tables."""
    pw = world.section("policy")
    resources, fields = _resources(world, pw)
    containers, ancestors = _containers(world)
    parents = {mg.name.lower(): mg.parent.lower() if mg.parent else None
               for mg in world.management_groups}
    return Tables(resources, containers, _states(world, pw), fields, _policy_fields(pw),
                  ancestors, parents)
