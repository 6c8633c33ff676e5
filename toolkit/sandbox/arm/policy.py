"""Policy compliance states (spec 1 §2.8, §4.6) over 60 days of evaluation history.

``POST .../resourceGroups/{rg}/providers/Vendor.PolicyInsights/policyStates/{latest|default}/
queryResults`` with ``$from``/``$to`` (default: the day before the request), ``$filter``,
``$apply``, ``$orderby``, ``$select``, ``$top``, ``$expand`` and ``$skiptoken``. ``default`` returns
every record in the window, ``latest`` the newest per (resource, assignment, definition, reference
id). Pages hold 1000 records; ``@odata.count`` is the number on the page; ``@odata.nextLink`` (a
POST) carries every option plus a ``$skiptoken`` that pins the window, so later pages see the same
records even though the clock moves. Bad expressions answer 400 ``QueryFailure`` naming the
problem.

The world: 24 definitions (real categories and effects), three policy sets with reference ids and
group names, 10 assignments at management-group, subscription and resource-group scope, a couple of
thousand resources of 15 types, and one evaluation a day per (resource, policy) pair for 60 days.
The story: a monitoring remediation campaign (deployIfNotExists) lifts compliance between 40 and 22
days ago; an "allowed locations" assignment made 9 days ago lands non-compliant for the resources
outside Europe; the sandbox resource group of the dev subscription is exempt from the security
baseline since day 30; two ``modify`` assignments fight over the ``env`` tag in ``rg-web-weu``
(Conflict); a manual access-review policy reports Unknown.

Scale: ``TOOLKIT_SANDBOX_POLICY_SCALE`` (default 1) multiplies the resources of every group (up to
about 45,000 records per group at scale 1; 27 gives over a million in a 60-day ``default`` query
of the largest group). Records are generated per group on first query, from the seed; their
JSON is built from pre-serialized fragments, so pages are served fast.
"""

from __future__ import annotations

import base64
import hashlib
import os
import threading
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

import numpy as np
import orjson
import pandas as pd

from toolkit._spec.arm import (
    POLICY_API_VERSIONS,
    POLICY_FIELDS,
    POLICY_STATE_FIELDS,
    RESOURCE_FIELDS,
)
from toolkit.sandbox.arm.common import arm_reply, find_group
from toolkit.sandbox.arm.odata import (
    ODataError,
    Table,
    apply_transformations,
    evaluate_filter,
    order_rows,
    parse_apply,
    parse_filter,
    parse_orderby,
    parse_select,
)
from toolkit.sandbox.http import Reply, Request, Router, SandboxHTTPError

if TYPE_CHECKING:
    from toolkit.sandbox.server import Sandbox
    from toolkit.sandbox.world import World

__all__ = ["API_VERSIONS", "FIELDS", "PAGE_SIZE", "STATES", "PolicyWorld", "build_world",
           "catalog_rows", "register"]

API_VERSIONS = POLICY_API_VERSIONS
PAGE_SIZE = 1000
HISTORY_DAYS = 60
DAY = 86400
STATES = ("Compliant", "NonCompliant", "Conflict", "Exempt", "Unknown")
_C, _NC, _CONFLICT, _EXEMPT, _UNKNOWN = range(5)
SCALE_ENV = "TOOLKIT_SANDBOX_POLICY_SCALE"

# resource type key -> (type under the namespace, name prefix)
TYPES = {
    "ST": ("Storage/storageAccounts", "st"),
    "VM": ("Compute/virtualMachines", "vm"),
    "DISK": ("Compute/disks", "disk"),
    "NIC": ("Network/networkInterfaces", "nic"),
    "NSG": ("Network/networkSecurityGroups", "nsg"),
    "PIP": ("Network/publicIPAddresses", "pip"),
    "SITE": ("Web/sites", "app"),
    "PLAN": ("Web/serverFarms", "plan"),
    "SQL": ("Sql/servers", "sql"),
    "SQLDB": ("Sql/servers/databases", "sqldb"),
    "KV": ("KeyVault/vaults", "kv"),
    "AKS": ("ContainerService/managedClusters", "aks"),
    "APPI": ("Insights/components", "appi"),
    "REDIS": ("Cache/redis", "redis"),
    "ACR": ("ContainerRegistry/registries", "acr"),
}

# resource group purpose -> (resources per group at scale 1, type weights)
_MIX = {
    "web": (190, {"SITE": 18, "PLAN": 8, "APPI": 8, "ST": 14, "KV": 6, "REDIS": 6, "PIP": 10,
                  "NSG": 10, "NIC": 10, "VM": 5, "DISK": 5}),
    "data": (170, {"SQL": 10, "SQLDB": 25, "ST": 25, "KV": 8, "VM": 8, "DISK": 8, "NIC": 8,
                   "NSG": 8}),
    "platform": (150, {"AKS": 8, "ACR": 8, "KV": 15, "ST": 15, "VM": 12, "DISK": 12, "NIC": 12,
                       "NSG": 10, "PIP": 8}),
}

_APPS = ("shop", "orders", "catalog", "pay", "search", "cms", "auth", "report", "etl", "ml",
         "crm", "media", "promo", "stock", "loyalty", "mail")
_TEAMS = ("web-team", "data-team", "platform-team", "payments-team", "sre")
_FAR_LOCATIONS = ("eastus", "westus2", "southeastasia", "centralus")


@dataclass(frozen=True)
class Definition:
    """A policy definition."""

    name: str
    display: str
    category: str
    effect: str
    applies: tuple[str, ...]  # resource type keys, or ("*",)
    path: str  # the field its condition reads
    expected: Any
    base: float  # share of resources non-compliant in a steady state
    builtin: bool = True
    version: str = "1.0.0"


DEFINITIONS = (
    Definition("storage-secure-transfer", "Secure transfer to storage accounts should be enabled",
               "Storage", "audit", ("ST",), "properties.supportsHttpsTrafficOnly", True, 0.12),
    Definition("storage-no-public-blob", "Storage account public access should be disallowed",
               "Storage", "deny", ("ST",), "properties.allowBlobPublicAccess", False, 0.2),
    Definition("storage-private-link", "Storage accounts should use private link", "Storage",
               "auditIfNotExists", ("ST",), "properties.privateEndpointConnections", "[*]", 0.45),
    Definition("vm-managed-disks", "Virtual machines should use managed disks", "Compute",
               "audit", ("VM",), "properties.storageProfile.osDisk.managedDisk", "exists", 0.08),
    Definition("vm-backup", "Backup should be enabled for virtual machines", "Backup",
               "auditIfNotExists", ("VM",), "properties.protectedItems", "[*]", 0.35),
    Definition("disk-encryption-cmk", "Managed disks should be encrypted with customer-managed "
               "keys", "Compute", "audit", ("DISK",), "properties.encryption.type",
               "EncryptionAtRestWithCustomerKey", 0.4, version="2.0.0"),
    Definition("vm-diagnostics", "Deploy diagnostic settings for virtual machines",
               "Monitoring", "deployIfNotExists", ("VM",), "properties.diagnosticSettings",
               "[*]", 0.12),
    Definition("nsg-flow-logs", "Flow logs should be configured for network security groups",
               "Network", "auditIfNotExists", ("NSG",), "properties.flowLogs", "[*]", 0.3),
    Definition("nsg-management-ports", "Management ports should be closed on network security "
               "groups", "Network", "audit", ("NSG",), "properties.securityRules[*].access",
               "Deny", 0.15),
    Definition("pip-ddos-protection", "Public IP addresses should have DDoS protection",
               "Network", "audit", ("PIP",), "properties.ddosSettings.protectionMode", "Enabled",
               0.5),
    Definition("app-https-only", "App Service apps should only be accessible over HTTPS",
               "App Service", "audit", ("SITE",), "properties.httpsOnly", True, 0.1),
    Definition("app-latest-tls", "App Service apps should use the latest TLS version",
               "App Service", "audit", ("SITE",), "properties.siteConfig.minTlsVersion", "1.2",
               0.18, version="2.1.0"),
    Definition("sql-auditing", "Auditing on SQL server should be enabled", "SQL",
               "auditIfNotExists", ("SQL",), "properties.auditingSettings.state", "Enabled",
               0.25),
    Definition("sql-tde", "Transparent data encryption on SQL databases should be enabled", "SQL",
               "auditIfNotExists", ("SQLDB",), "properties.transparentDataEncryption.state",
               "Enabled", 0.05),
    Definition("kv-soft-delete", "Key vaults should have soft delete enabled", "Key Vault",
               "audit", ("KV",), "properties.enableSoftDelete", True, 0.06),
    Definition("kv-purge-protection", "Key vaults should have purge protection enabled",
               "Key Vault", "deny", ("KV",), "properties.enablePurgeProtection", True, 0.25),
    Definition("aks-rbac", "Kubernetes clusters should use role-based access control",
               "Kubernetes", "audit", ("AKS",), "properties.enableRBAC", True, 0.1),
    Definition("acr-admin-disabled", "Container registries should have the admin account "
               "disabled", "Container Registry", "audit", ("ACR",),
               "properties.adminUserEnabled", False, 0.3),
    Definition("redis-ssl-only", "Redis caches should only allow SSL connections", "Cache",
               "deny", ("REDIS",), "properties.enableNonSslPort", False, 0.05),
    Definition("require-tag-costcenter", "Resources should have a costCenter tag", "Tags",
               "audit", ("*",), "tags.costCenter", "exists", 0.22, builtin=False),
    Definition("inherit-tag-env", "Inherit the env tag from the resource group", "Tags",
               "modify", ("*",), "tags.env", "[resourceGroup().tags.env]", 0.15, builtin=False),
    Definition("allowed-locations", "Allowed locations", "General", "deny", ("*",), "location",
               ["westeurope", "northeurope", "francecentral", "swedencentral", "uksouth",
                "global"], 0.0),
    Definition("storage-diagnostics", "Deploy diagnostic settings for storage accounts",
               "Monitoring", "deployIfNotExists", ("ST",), "properties.diagnosticSettings",
               "[*]", 0.12),
    Definition("kv-access-review", "Review key vault access quarterly", "Regulatory Compliance",
               "manual", ("KV",), "properties.accessPolicies", "reviewed", 0.0, builtin=False),
)
_DEF = {d.name: d for d in DEFINITIONS}

# set name -> (display, category, version, [(reference id, definition, group names)])
SETS = {
    "security-baseline": ("Security baseline", "Security Center", "3.1.0", [
        ("secureTransferStorage", "storage-secure-transfer", ["DP-3"]),
        ("storagePublicAccess", "storage-no-public-blob", ["NS-2", "PA-1"]),
        ("storagePrivateLink", "storage-private-link", ["NS-2"]),
        ("vmManagedDisks", "vm-managed-disks", ["DP-5"]),
        ("diskEncryptionCmk", "disk-encryption-cmk", ["DP-5"]),
        ("nsgManagementPorts", "nsg-management-ports", ["NS-1"]),
        ("nsgFlowLogs", "nsg-flow-logs", ["LT-4"]),
        ("pipDdosProtection", "pip-ddos-protection", ["NS-5"]),
        ("appHttpsOnly", "app-https-only", ["DP-3"]),
        ("appLatestTls", "app-latest-tls", ["DP-3"]),
        ("sqlAuditing", "sql-auditing", ["LT-3"]),
        ("sqlTde", "sql-tde", ["DP-4"]),
        ("kvSoftDelete", "kv-soft-delete", ["BR-1"]),
        ("kvPurgeProtection", "kv-purge-protection", ["DP-8"]),
        ("aksRbac", "aks-rbac", ["PA-7"]),
        ("acrAdminDisabled", "acr-admin-disabled", ["IM-1"]),
        ("redisSslOnly", "redis-ssl-only", ["DP-3"]),
    ]),
    "tagging-governance": ("Tagging governance", "Tags", "1.2.0", [
        ("requireCostCenter", "require-tag-costcenter", ["cost-management"]),
        ("inheritEnvTag", "inherit-tag-env", ["tag-hygiene"]),
    ]),
    "monitoring-baseline": ("Monitoring baseline", "Monitoring", "1.0.1", [
        ("vmDiagnostics", "vm-diagnostics", ["diagnostics"]),
        ("storageDiagnostics", "storage-diagnostics", ["diagnostics"]),
        ("vmBackup", "vm-backup", ["backup"]),
    ]),
}


@dataclass(frozen=True)
class Assignment:
    """A policy assignment: a set or one definition, at a scope, since ``since`` days ago."""

    name: str
    display: str
    target: str  # a set name or a definition name
    scope: tuple[str, ...]  # ("mg", name) | ("sub", sub name) | ("rg", sub name, rg name)
    since: int  # days before the world's now
    parameters: dict[str, Any] = field(default_factory=dict)
    version: str = "1.0.0"


ASSIGNMENTS = (
    Assignment("sec-baseline-prod", "Security baseline (production)", "security-baseline",
               ("sub", "retail-prod"), 400, {"effect": {"value": "AuditIfNotExists"}}),
    Assignment("sec-baseline-dev", "Security baseline (development)", "security-baseline",
               ("sub", "retail-dev"), 400, {"effect": {"value": "Audit"}}),
    Assignment("sec-baseline-platform", "Security baseline (platform)", "security-baseline",
               ("sub", "shared-platform"), 400, {"effect": {"value": "AuditIfNotExists"}}),
    Assignment("tagging-retail", "Tagging governance for retail", "tagging-governance",
               ("mg", "retail"), 300, {"tagName": {"value": "costCenter"}}),
    Assignment("set-env-tag-web", "Set env=web on web resources", "inherit-tag-env",
               ("rg", "retail-prod", "rg-web-weu"), 45, {"tagValue": {"value": "web"}}),
    Assignment("monitoring-baseline", "Monitoring baseline", "monitoring-baseline",
               ("mg", "root"), 200, {"logAnalytics": {"value": "law-central-weu"}}, "1.1.0"),
    Assignment("allowed-locations-eu", "Allowed locations: Europe", "allowed-locations",
               ("mg", "root"), 9, {"listOfAllowedLocations": {"value": [
                   "westeurope", "northeurope", "francecentral", "swedencentral", "uksouth"]}}),
    Assignment("kv-purge-protection", "Key vault purge protection (platform)",
               "kv-purge-protection", ("sub", "shared-platform"), 120),
    Assignment("sql-auditing-data", "SQL auditing for data", "sql-auditing",
               ("rg", "retail-prod", "rg-data-weu"), 150),
    Assignment("kv-access-review", "Quarterly key vault access review", "kv-access-review",
               ("mg", "root"), 90),
)

_SUB_MG = {"retail-prod": "retail", "retail-dev": "retail", "shared-platform": "platform"}


@dataclass
class Policy:
    """One (assignment, definition, reference id): the unit a state record is about."""

    index: int
    assignment: Assignment
    definition: Definition
    reference_id: str | None
    groups: list[str]
    set_name: str | None
    fields: dict[str, Any]


@dataclass
class Resource:
    """A resource of the world."""

    index: int
    subscription: str
    subscription_id: str
    group: str
    kind: str
    name: str
    location: str
    tags: dict[str, str]
    created: int  # days before now (exists for day <= created)
    deleted: int  # exists for day >= deleted (0: still exists)
    fields: dict[str, Any]


@dataclass
class GroupRecords:
    """The evaluation history of one resource group, column-wise; records are ordered by pair
    then time."""

    pair_resource: np.ndarray
    pair_policy: np.ndarray
    pair: np.ndarray
    ts: np.ndarray  # seconds since 1970, UTC
    state: np.ndarray


@dataclass
class PolicyWorld:
    """The policy part of the world."""

    namespace: str
    tenant_id: str
    epoch: datetime
    scale: float
    policies: list[Policy]
    resources: list[Resource]
    by_group: dict[tuple[str, str], list[int]]
    seed: int
    _records: dict[tuple[str, str], GroupRecords] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _columns: dict[str, tuple[np.ndarray, pd.Index]] = field(default_factory=dict)
    _res_frag: dict[int, bytes] = field(default_factory=dict)
    _pol_frag: dict[int, bytes] = field(default_factory=dict)

    # --------------------------------------------------------------------- records
    def records(self, subscription_id: str, group: str) -> GroupRecords:
        """The history of a group (built on first use)."""
        key = (subscription_id.lower(), group.lower())
        with self._lock:
            if key not in self._records:
                self._records[key] = self._build_records(key)
            return self._records[key]

    def _build_records(self, key: tuple[str, str]) -> GroupRecords:
        members = self.by_group.get(key, [])
        pr, pp = [], []
        for r in members:
            res = self.resources[r]
            for pol in self.policies:
                if _applies(pol, res):
                    pr.append(r)
                    pp.append(pol.index)
        pair_resource = np.array(pr, dtype=np.int32)
        pair_policy = np.array(pp, dtype=np.int32)
        n = len(pr)
        rng = np.random.default_rng([self.seed, zlib.crc32("|".join(key).encode())])
        latent = rng.random(n)
        offset = rng.integers(0, DAY, n)
        first = np.empty(n, dtype=np.int64)
        last = np.empty(n, dtype=np.int64)
        for i, (r, p) in enumerate(zip(pr, pp, strict=True)):
            res = self.resources[r]
            first[i] = min(res.created, self.policies[p].assignment.since, HISTORY_DAYS - 1)
            last[i] = res.deleted
        counts = np.maximum(first - last + 1, 0)
        pair = np.repeat(np.arange(n, dtype=np.int32), counts)
        starts = np.repeat(first, counts)
        within = np.arange(len(pair)) - np.repeat(np.cumsum(counts) - counts, counts)
        day = starts - within  # days before now, descending within each pair: oldest first
        now = int(self.epoch.timestamp())
        ts = now - day * DAY - offset[pair]
        state = self._states(pair, day, latent, pair_resource, pair_policy, rng)
        return GroupRecords(pair_resource, pair_policy, pair, ts.astype(np.int64),
                            state.astype(np.int8))

    def _states(self, pair: np.ndarray, day: np.ndarray, latent: np.ndarray,
                pair_resource: np.ndarray, pair_policy: np.ndarray,
                rng: np.random.Generator) -> np.ndarray:
        n = len(pair_resource)
        base = np.empty(n)
        kind = np.zeros(n, dtype=np.int8)  # 0 steady, 1 campaign, 2 location, 3 manual, 4 conflict
        exempt_since = np.full(n, -1)
        for i in range(n):
            pol = self.policies[pair_policy[i]]
            res = self.resources[pair_resource[i]]
            d = pol.definition
            b = d.base * (1.5 if res.subscription == "retail-dev" else 1.0)
            base[i] = min(b, 0.9)
            if d.effect == "deployIfNotExists":
                kind[i] = 1
            elif d.name == "allowed-locations":
                kind[i] = 2
                base[i] = 1.0 if res.location not in d.expected else 0.0
            elif d.effect == "manual":
                kind[i] = 3
            elif d.effect == "modify" and res.group == "rg-web-weu" and \
                    res.subscription == "retail-prod":
                kind[i] = 4
            if pol.assignment.name == "sec-baseline-dev" and res.group == "rg-sandbox-dev":
                exempt_since[i] = 30
            elif d.name == "vm-backup" and res.group == "rg-data-weu" and latent[i] < 0.2:
                exempt_since[i] = 50
        p_kind = kind[pair]
        threshold = base[pair].copy()
        # the remediation campaign: 65% missing before day 40, down to 12% by day 22
        campaign = p_kind == 1
        d = day[campaign].astype(float)
        threshold[campaign] = np.where(d >= 40, 0.65,
                                       np.where(d <= 22, 0.12, 0.12 + (d - 22) / 18 * 0.53))
        u = latent[pair]
        noisy = rng.random(len(pair)) < 0.015
        state = np.where(u < threshold, _NC, _C)
        state = np.where(noisy & (p_kind != 2), 1 - state, state)
        state[p_kind == 3] = _UNKNOWN
        state[p_kind == 4] = _CONFLICT
        ex = exempt_since[pair]
        state[(ex >= 0) & (day <= ex)] = _EXEMPT
        return state

    # --------------------------------------------------------------------- columns
    def column_codes(self, name: str) -> tuple[np.ndarray, pd.Index]:
        """Codes per resource (resource fields) or per policy (policy fields), and the values."""
        with self._lock:
            if name not in self._columns:
                source = (self.resources if name in RESOURCE_FIELDS else self.policies)
                values = [_text(item.fields.get(name)) for item in source]
                codes, uniques = pd.factorize(pd.Series(values, dtype=object), sort=True)
                self._columns[name] = (codes.astype(np.int32), pd.Index(uniques, dtype=object))
            return self._columns[name]

    def resource_fragment(self, r: int) -> bytes:
        """The resource fields of a record, serialized (without braces)."""
        frag = self._res_frag.get(r)
        if frag is None:
            frag = orjson.dumps({k: self.resources[r].fields[k] for k in RESOURCE_FIELDS})[1:-1]
            self._res_frag[r] = frag
        return frag

    def policy_fragment(self, p: int) -> bytes:
        """The policy fields of a record, serialized (without braces)."""
        frag = self._pol_frag.get(p)
        if frag is None:
            frag = orjson.dumps({k: self.policies[p].fields[k] for k in POLICY_FIELDS})[1:-1]
            self._pol_frag[p] = frag
        return frag


FIELDS = POLICY_STATE_FIELDS
_EXPANDS = ("components", "policyEvaluationDetails")


def _text(value: Any) -> Any:
    if isinstance(value, list):
        return ",".join(value)
    return value


def _applies(pol: Policy, res: Resource) -> bool:
    d = pol.definition
    if d.applies != ("*",) and res.kind not in d.applies:
        return False
    scope = pol.assignment.scope
    if scope[0] == "mg":
        return scope[1] == "root" or _SUB_MG.get(res.subscription) == scope[1]
    if scope[0] == "sub":
        return res.subscription == scope[1]
    return res.subscription == scope[1] and res.group == scope[2]


def _guid(text: str) -> str:
    h = hashlib.sha256(text.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


def _resource_id(sub_id: str, group: str, ns: str, kind: str, name: str) -> str:
    type_path = TYPES[kind][0]
    provider, *types = type_path.split("/")
    names = name.split("/")
    tail = "/".join(f"{t}/{n}" for t, n in zip(types, names, strict=True))
    return f"/subscriptions/{sub_id}/resourceGroups/{group}/providers/{ns}.{provider}/{tail}"


def _scale() -> float:
    raw = os.environ.get(SCALE_ENV, "").strip()
    if not raw:
        return 1.0
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{SCALE_ENV} must be a number, not {raw!r}") from None
    if not 0 < value <= 1000:
        raise ValueError(f"{SCALE_ENV} must be between 0 and 1000, not {raw!r}")
    return value


def build_world(world: World) -> PolicyWorld:
    """Definitions, sets, assignments and resources (records are built per group on demand)."""
    ns = world.namespace
    tenant = world.tenant_id
    scale = _scale()
    subs = {s.name: s for s in world.subscriptions}
    auth = f"{ns}.Authorization"
    mg_path = f"/providers/{ns}.Management/managementGroups"

    def scope_id(scope: tuple[str, ...]) -> str:
        if scope[0] == "mg":
            return f"{mg_path}/{tenant if scope[1] == 'root' else scope[1]}"
        sub = subs[scope[1]]
        if scope[0] == "sub":
            return f"/subscriptions/{sub.id}"
        return f"/subscriptions/{sub.id}/resourceGroups/{scope[2]}"

    def def_id(d: Definition) -> tuple[str, str]:
        if d.builtin:
            name = _guid(f"definition:{d.name}")
            return f"/providers/{auth}/policyDefinitions/{name}", name
        return f"{mg_path}/{tenant}/providers/{auth}/policyDefinitions/{d.name}", d.name

    policies: list[Policy] = []
    for a in ASSIGNMENTS:
        a_scope = scope_id(a.scope)
        parameters = dict(a.parameters)
        if a.target in SETS:
            platform = subs["shared-platform"].id
            parameters["logAnalyticsWorkspaceId"] = {
                "value": f"/subscriptions/{platform}/resourceGroups/rg-monitoring/providers/"
                         f"{ns}.OperationalInsights/workspaces/law-central-weu"}
        params = orjson.dumps(parameters).decode()
        common = {
            "policyAssignmentId": f"{a_scope}/providers/{auth}/policyAssignments/{a.name}",
            "policyAssignmentName": a.name,
            "policyAssignmentOwner": "tbd",
            "policyAssignmentParameters": params,
            "policyAssignmentScope": a_scope,
            "policyAssignmentVersion": a.version,
            "effectiveParameters": params if parameters else None,
        }
        if a.target in SETS:
            _display, category, version, members = SETS[a.target]
            set_name = _guid(f"set:{a.target}")
            set_fields = {
                "policySetDefinitionId": f"/providers/{auth}/policySetDefinitions/{set_name}",
                "policySetDefinitionName": set_name,
                "policySetDefinitionOwner": "tbd",
                "policySetDefinitionCategory": category,
                "policySetDefinitionParameters": orjson.dumps(
                    {"effect": {"type": "String", "defaultValue": "Audit",
                                "allowedValues": ["Audit", "AuditIfNotExists", "Deny",
                                                  "Disabled"]},
                     "excludedResourceTypes": {"type": "Array", "defaultValue": []}}).decode(),
                "policySetDefinitionVersion": version,
            }
            entries = [(ref, _DEF[d], groups, a.target) for ref, d, groups in members]
        else:
            set_fields = {k: None for k in (
                "policySetDefinitionId", "policySetDefinitionName", "policySetDefinitionOwner",
                "policySetDefinitionCategory", "policySetDefinitionParameters",
                "policySetDefinitionVersion")}
            entries = [(None, _DEF[a.target], [], None)]
        for ref, d, groups, set_name_ in entries:
            did, dname = def_id(d)
            fields = {**common, **set_fields,
                      "policyDefinitionId": did, "policyDefinitionName": dname,
                      "policyDefinitionAction": d.effect,
                      "policyDefinitionCategory": d.category,
                      "policyDefinitionReferenceId": ref,
                      "policyDefinitionGroupNames": list(groups),
                      "policyDefinitionVersion": d.version}
            policies.append(Policy(len(policies), a, d, ref, list(groups), set_name_, fields))

    rng = world.rng("policy-resources")
    resources: list[Resource] = []
    by_group: dict[tuple[str, str], list[int]] = {}
    for sub in world.subscriptions:
        for g in sub.resource_groups:
            count, weights = _MIX[g.purpose]
            count = max(1, round(count * scale * (0.8 + 0.4 * rng.random())))
            kinds = rng.choices(list(weights), weights=list(weights.values()), k=count)
            members = by_group.setdefault((sub.id.lower(), g.name.lower()), [])
            env = "dev" if sub.name == "retail-dev" else "prod"
            far = g.name in ("rg-analytics-neu", "rg-sandbox-dev", "rg-api-weu")
            servers: list[str] = []
            for i, kind in enumerate(kinds):
                app = _APPS[rng.randrange(len(_APPS))]
                prefix = TYPES[kind][1]
                if kind == "ST":
                    name = f"st{app}{env}{i:05d}"
                elif kind == "SQLDB":
                    server = servers[rng.randrange(len(servers))] if servers else \
                        f"sql-{app}-{env}-{i:05d}"
                    name = f"{server}/db-{app}-{i:05d}"
                else:
                    name = f"{prefix}-{app}-{env}-{i:05d}"
                    if kind == "SQL":
                        servers.append(name)
                location = g.location
                roll = rng.random()
                if far and roll < 0.18:
                    location = _FAR_LOCATIONS[rng.randrange(len(_FAR_LOCATIONS))]
                elif kind in ("PIP", "APPI") and roll < 0.1:
                    location = "global"
                team = _TEAMS[rng.randrange(len(_TEAMS))]
                tags = {"env": env, "owner": team, "app": app,
                        "department": "retail-it" if sub.name != "shared-platform" else
                        "platform-engineering",
                        "createdBy": f"{team.split('-')[0]}.deploy@retail.example",
                        "dataClassification": ("confidential" if g.purpose == "data" else
                                               "internal"),
                        "project": f"{app}-{2024 + rng.randrange(3)}"}
                if rng.random() > 0.25:
                    tags["costCenter"] = f"cc-{1000 + rng.randrange(60)}"
                created = HISTORY_DAYS + 30 if rng.random() < 0.8 else rng.randrange(HISTORY_DAYS)
                deleted = 0 if rng.random() < 0.95 else rng.randrange(0, max(1, created))
                rid = _resource_id(sub.id, g.name, ns, kind, name)
                fields = {
                    "resourceId": rid,
                    "subscriptionId": sub.id,
                    "resourceType": f"/{ns}.{TYPES[kind][0]}",
                    "resourceLocation": location,
                    "resourceGroup": g.name,
                    "resourceTags": orjson.dumps(tags).decode(),
                    "managementGroupIds": f"{_SUB_MG[sub.name]},{tenant}",
                }
                res = Resource(len(resources), sub.name, sub.id, g.name, kind, name, location,
                               tags, created, deleted, fields)
                members.append(res.index)
                resources.append(res)
    return PolicyWorld(ns, tenant, world.epoch, scale, policies, resources, by_group,
                       world.seed)


def catalog_rows(pw: PolicyWorld) -> list[dict[str, Any]]:
    """One catalog row per policy assignment."""
    rows = []
    seen = set()
    for pol in pw.policies:
        a = pol.assignment
        if a.name in seen:
            continue
        seen.add(a.name)
        n = sum(1 for p in pw.policies if p.assignment.name == a.name)
        kind = f"policy set {a.target}" if a.target in SETS else f"definition {a.target}"
        rows.append({"kind": "policy_assignment", "subscription_id": None,
                     "resource_group": None, "name": a.name, "location": None,
                     "detail": f"{a.display}: {kind} ({n} policies) at "
                               f"{pol.fields['policyAssignmentScope']}"})
    return rows


# ------------------------------------------------------------------------- the query table
def _record_table(pw: PolicyWorld, rec: GroupRecords, rows: np.ndarray) -> Table:
    def fetch(name: str, at: np.ndarray) -> Any:
        if name == "timestamp":
            return pd.Series(pd.to_datetime(rec.ts[at], unit="s", utc=True))
        if name == "complianceState":
            return pd.Series(pd.Categorical.from_codes(rec.state[at], STATES))
        if name == "isCompliant":
            return pd.Series(rec.state[at] == _C)
        if name in RESOURCE_FIELDS:
            owner = rec.pair_resource[rec.pair[at]]
        else:
            owner = rec.pair_policy[rec.pair[at]]
        codes, values = pw.column_codes(name)
        return pd.Series(pd.Categorical.from_codes(codes[owner], values))

    return Table(FIELDS, fetch, rows)


@dataclass
class _Result:
    rows: np.ndarray | None  # record positions, or
    frame: pd.DataFrame | None  # aggregated rows


def _parse_time(request: Request, name: str) -> datetime | None:
    raw = request.param(name)
    if raw is None or raw == "":
        return None
    try:
        ts = pd.Timestamp(raw)
    except ValueError:
        raise SandboxHTTPError(400, "InvalidQueryParameterValue",
                               f"The value '{raw}' of query parameter '{name}' is not a valid "
                               "ISO 8601 date-time.") from None
    ts = ts.tz_localize("UTC") if ts.tz is None else ts.tz_convert("UTC")
    return ts.to_pydatetime()


def _token(offset: int, start: datetime, end: datetime) -> str:
    raw = orjson.dumps({"o": offset, "f": start.isoformat(), "t": end.isoformat()})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _untoken(token: str) -> tuple[int, datetime, datetime]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = orjson.loads(raw)
        return (int(data["o"]), datetime.fromisoformat(data["f"]),
                datetime.fromisoformat(data["t"]))
    except (ValueError, KeyError, TypeError, orjson.JSONDecodeError):
        raise SandboxHTTPError(400, "InvalidSkipToken",
                               f"The $skiptoken '{token[:40]}' is not valid.") from None


def _query(request: Request) -> Reply:
    sandbox = request.sandbox
    sub, group = find_group(request)
    resource = request.path_params["policyStatesResource"]
    if resource.lower() not in ("latest", "default"):
        raise SandboxHTTPError(400, "InvalidPolicyStatesResource",
                               f"The policy states resource '{resource}' is not supported; use "
                               "'latest' or 'default'.")
    resource = resource.lower()
    token = request.param("$skiptoken")
    if token:
        offset, start, end = _untoken(token)
    else:
        offset = 0
        end = _parse_time(request, "$to") or sandbox.now()
        start = _parse_time(request, "$from") or end - timedelta(days=1)
    if start > end:
        raise SandboxHTTPError(400, "InvalidQueryParameterValue",
                               f"The interval is empty: $from ({start.isoformat()}) is after $to "
                               f"({end.isoformat()}).")
    top_raw = request.param("$top")
    top = None
    if top_raw not in (None, ""):
        try:
            top = int(top_raw)
        except ValueError:
            top = -1
        if top < 0:
            raise SandboxHTTPError(400, "InvalidQueryParameterValue",
                                   f"The value '{top_raw}' of query parameter '$top' must be an "
                                   "integer of at least 0.")
    expand = [e.strip() for e in (request.param("$expand") or "").split(",") if e.strip()]
    by_lower = {e.lower(): e for e in _EXPANDS}
    for e in expand:
        if e.lower() not in by_lower:
            raise SandboxHTTPError(400, "InvalidQueryParameterValue",
                                   f"The $expand value '{e}' is not supported; use "
                                   f"{' or '.join(_EXPANDS)}.")
    expand = [by_lower[e.lower()] for e in expand]
    options = {k: request.param(k) for k in ("$filter", "$apply", "$orderby", "$select")}
    pw: PolicyWorld = sandbox.world.section("policy")
    try:
        result = _cached_result(sandbox, pw, sub.id, group.name, resource, start, end, options)
        select = parse_select(options["$select"]) if options["$select"] else None
    except ODataError as err:
        raise SandboxHTTPError(400, "InvalidQueryParameterValue", err.message) from None
    total = len(result.rows) if result.rows is not None else len(result.frame)  # type: ignore
    limit = total if top is None else min(total, top)
    stop = min(offset + PAGE_SIZE, limit)
    base = (f"{request.base_url}/subscriptions/{sub.id}/resourcegroups/{group.name}/providers/"
            f"{sandbox.namespace}.PolicyInsights/policyStates")
    context = f"{base}/$metadata#{resource}"
    next_link = None
    if stop < limit:
        params = [(k, v) for k, v in request.query if k.lower() != "$skiptoken"]
        params.append(("$skiptoken", _token(stop, start, end)))
        query = urlencode(params, quote_via=quote, safe="$,:")
        next_link = f"{request.base_url}{request.path}?{query}"
    head = orjson.dumps({"@odata.nextLink": next_link, "@odata.context": context,
                         "@odata.count": max(0, stop - offset)})[:-1]
    entity_ctx = orjson.dumps(f"{context}/$entity")
    if result.frame is not None:
        page = result.frame.iloc[offset:stop]
        if select:
            cols = _resolve_select(select, list(result.frame.columns))
            page = page[cols]
        values = [{"@odata.id": None, "@odata.context": f"{context}/$entity",
                   **{k: _plain(v) for k, v in row.items()}}
                  for row in page.to_dict("records")]
        body = head + b',"value":' + orjson.dumps(values) + b"}"
    else:
        rows = result.rows[offset:stop]  # type: ignore[index]
        rec = pw.records(sub.id, group.name)
        if select or expand:
            items = _generic_records(pw, rec, rows, select, expand, entity_ctx)
        else:
            items = _fast_records(pw, rec, rows, entity_ctx)
        body = head + b',"value":[' + b",".join(items) + b"]}"
    reply = arm_reply(request, None)
    reply.raw = body
    return reply


def _plain(v: Any) -> Any:
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return None if np.isnan(v) else float(v)
    if isinstance(v, pd.Timestamp):
        return v.strftime("%Y-%m-%dT%H:%M:%SZ")
    if v is pd.NA or (isinstance(v, float) and np.isnan(v)):
        return None
    return v


def _resolve_select(select: list[str], names: list[str]) -> list[str]:
    by_lower = {n.lower(): n for n in names}
    out = []
    for s in select:
        if s.lower() not in by_lower:
            raise SandboxHTTPError(400, "InvalidQueryParameterValue",
                                   f"Invalid $select expression: unknown column '{s}'; known "
                                   f"columns: {', '.join(names)}")
        out.append(by_lower[s.lower()])
    return out


_RESULTS_KEY = "policy_results"


def _cached_result(sandbox: Sandbox, pw: PolicyWorld, sub_id: str, group: str, resource: str,
                   start: datetime, end: datetime, options: dict[str, str | None]) -> _Result:
    key = (sub_id.lower(), group.lower(), resource, start.isoformat(), end.isoformat(),
           tuple(sorted((k, v or "") for k, v in options.items())))
    with sandbox.state_lock:
        cache: OrderedDict[Any, _Result] = sandbox.state.setdefault(_RESULTS_KEY, OrderedDict())
        hit = cache.get(key)
        if hit is not None:
            cache.move_to_end(key)
            return hit
    result = _evaluate(pw, sub_id, group, resource, start, end, options)
    with sandbox.state_lock:
        cache[key] = result
        while len(cache) > 6:
            cache.popitem(last=False)
    return result


def _evaluate(pw: PolicyWorld, sub_id: str, group: str, resource: str, start: datetime,
              end: datetime, options: dict[str, str | None]) -> _Result:
    rec = pw.records(sub_id, group)
    lo, hi = start.timestamp(), end.timestamp()
    rows = np.flatnonzero((rec.ts >= lo) & (rec.ts <= hi))
    if resource == "latest" and len(rows):
        pairs = rec.pair[rows]
        # records are ordered by pair then time: the last of each pair is the newest
        is_last = np.append(pairs[1:] != pairs[:-1], True)
        rows = rows[is_last]
    # newest first, then by resource id, as the service lists states
    rows = rows[np.argsort(-rec.ts[rows], kind="stable")]
    table = _record_table(pw, rec, rows)
    if options["$filter"]:
        mask = evaluate_filter(parse_filter(options["$filter"]), table)
        table = table.take(np.flatnonzero(mask))
    if options["$apply"]:
        out = apply_transformations(parse_apply(options["$apply"]), table)
        if options["$orderby"]:
            out = out.take(order_rows(out, parse_orderby(options["$orderby"])))
        if isinstance(out, Table) and out.names == list(FIELDS):
            frame = out.frame()
            frame["timestamp"] = frame["timestamp"].dt.strftime("%Y-%m-%dT%H:%M:%SZ")
            return _Result(None, frame.astype(object).where(frame.notna(), None))
        return _Result(None, out.frame())
    if options["$orderby"]:
        table = table.take(order_rows(table, parse_orderby(options["$orderby"])))
    return _Result(table.rows, None)


_STATE_BYTES = [orjson.dumps({"complianceState": s, "isCompliant": s == "Compliant"})[1:-1]
                for s in STATES]


def _timestamps(ts: np.ndarray) -> list[bytes]:
    text = np.datetime_as_string(ts.astype("datetime64[s]"), unit="s")
    return [f'"timestamp":"{t}Z",'.encode() for t in text.tolist()]


def _fast_records(pw: PolicyWorld, rec: GroupRecords, rows: np.ndarray,
                  entity_ctx: bytes) -> list[bytes]:
    prefix = b'{"@odata.id":null,"@odata.context":' + entity_ctx + b","
    stamps = _timestamps(rec.ts[rows])
    pairs = rec.pair[rows]
    res = rec.pair_resource[pairs].tolist()
    pol = rec.pair_policy[pairs].tolist()
    states = rec.state[rows].tolist()
    rfrag = pw.resource_fragment
    pfrag = pw.policy_fragment
    sbytes = _STATE_BYTES
    return [b"".join((prefix, t, rfrag(r), b",", pfrag(p), b",", sbytes[s], b"}"))
            for t, r, p, s in zip(stamps, res, pol, states, strict=True)]


def _generic_records(pw: PolicyWorld, rec: GroupRecords, rows: np.ndarray,
                     select: list[str] | None, expand: list[str],
                     entity_ctx: bytes) -> list[bytes]:
    names = _resolve_select(select, list(FIELDS)) if select else list(FIELDS)
    pairs = rec.pair[rows]
    res_idx = rec.pair_resource[pairs]
    pol_idx = rec.pair_policy[pairs]
    stamps = [f"{t}Z" for t in np.datetime_as_string(rec.ts[rows].astype("datetime64[s]"),
                                                      unit="s").tolist()]
    ctx = orjson.loads(entity_ctx)
    out = []
    for i in range(len(rows)):
        r = pw.resources[res_idx[i]]
        p = pw.policies[pol_idx[i]]
        state = STATES[rec.state[rows[i]]]
        full = {"timestamp": stamps[i], "complianceState": state,
                "isCompliant": state == "Compliant", **r.fields, **p.fields}
        item: dict[str, Any] = {"@odata.id": None, "@odata.context": ctx}
        item.update({n: full[n] for n in names})
        if "components" in expand:
            item["components"] = _components(r, p, state, stamps[i])
        if "policyEvaluationDetails" in expand:
            item["policyEvaluationDetails"] = _evaluation(pw, r, p, state, int(rows[i]))
        out.append(orjson.dumps(item))
    return out


def _components(r: Resource, p: Policy, state: str, stamp: str) -> list[dict[str, Any]]:
    if r.kind != "KV" or p.definition.name not in ("kv-soft-delete", "kv-purge-protection"):
        return []
    vault = r.name
    out = []
    for kind, n in (("Key", 2), ("Secret", 3)):
        for i in range(n):
            name = f"{kind.lower()}-{vault.split('-')[1]}-{i + 1}"
            comp_state = state if state != "NonCompliant" or i == 0 else "Compliant"
            out.append({"id": f"https://{vault}.vault.vendor.net/{kind.lower()}s/{name}",
                        "type": kind, "name": name, "timestamp": stamp,
                        "complianceState": comp_state})
    return out


def _evaluation(pw: PolicyWorld, r: Resource, p: Policy, state: str,
                row: int) -> dict[str, Any] | None:
    if state not in ("Compliant", "NonCompliant"):
        return None
    d = p.definition
    ns = pw.namespace
    type_name = f"{ns}.{TYPES[r.kind][0]}"
    expressions: list[dict[str, Any]] = [
        {"result": "True", "expressionKind": "Field", "expression": "type", "path": "type",
         "expressionValue": type_name, "targetValue": type_name, "operator": "Equals"},
    ] if d.applies != ("*",) else []
    ok = state == "Compliant"
    if d.name == "allowed-locations":
        expressions.append({"result": "False" if ok else "True", "expressionKind": "Field",
                            "expression": "location", "path": "location",
                            "expressionValue": r.location, "targetValue": d.expected,
                            "operator": "NotIn"})
    elif isinstance(d.expected, bool):
        expressions.append({"result": "False" if ok else "True", "expressionKind": "Field",
                            "expression": f"{type_name}/{d.path.split('.')[-1]}",
                            "path": d.path, "expressionValue": d.expected if ok else
                            (not d.expected), "targetValue": d.expected,
                            "operator": "NotEquals"})
    elif d.expected == "exists":
        expressions.append({"result": "False" if ok else "True", "expressionKind": "Field",
                            "expression": d.path, "path": d.path,
                            "expressionValue": r.tags.get("costCenter") if ok else None,
                            "targetValue": False, "operator": "Exists"})
    else:
        expressions.append({"result": "False" if ok else "True", "expressionKind": "Field",
                            "expression": d.path, "path": d.path,
                            "expressionValue": d.expected if ok else "",
                            "targetValue": d.expected, "operator": "NotEquals"})
    details: dict[str, Any] = {"evaluatedExpressions": expressions}
    if d.effect in ("auditIfNotExists", "deployIfNotExists"):
        details["ifNotExistsDetails"] = {
            "resourceId": f"{r.fields['resourceId']}/providers/{ns}.Insights/"
                          f"diagnosticSettings/setByPolicy" if ok else None,
            "totalResources": 1 if ok else 0}
    return details


def register(router: Router, sandbox: Sandbox) -> None:
    """Add the policy states query route."""
    router.add("POST", "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/"
               "providers/{ns}.PolicyInsights/policyStates/{policyStatesResource}/queryResults",
               _query, family="arm", api_versions=API_VERSIONS, name="policy_states")
