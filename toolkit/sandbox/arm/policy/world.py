"""The sandbox's policy world (spec 1 §2.8, §4.6).

Definitions, sets, assignments, resources and their evaluation history. The HTTP side is
:mod:`toolkit.sandbox.arm.policy.handlers`.

The world: 24 definitions (real categories and effects), three policy sets with reference ids and
group names, 10 assignments placed at the scopes they live at (the tenant root and ``retail``
management groups, subscriptions, resource groups; an assignment covers every resource below its
scope), a couple of thousand resources of 15 types, and one evaluation a day per (resource,
policy) pair for 60 days.
``TOOLKIT_SANDBOX_POLICY_HISTORY_DAYS`` (60 to 400) asks for a longer past: beyond 60 days each pair
is evaluated on about one day in seven (daily evaluations at a lower density), so a year of
history stays small.
The story: a monitoring remediation campaign (deployIfNotExists) lifts compliance between 40 and 22
days ago; an "allowed locations" assignment made 9 days ago lands non-compliant for the resources
outside Europe; the sandbox resource group of the dev subscription is exempt from the security
baseline since day 30; two ``modify`` assignments fight over the ``env`` tag in ``rg-web-weu``
(Conflict); a manual access-review policy reports Unknown.

The management groups (tenant root > retail > stores, tenant root > platform) come from the core
world (:class:`toolkit.sandbox.world.World`), as do the extra store subscriptions of
``TOOLKIT_SANDBOX_SUBSCRIPTIONS``.

Scale: ``TOOLKIT_SANDBOX_POLICY_SCALE`` (default 1) multiplies the resources of every group (up to
about 45,000 records per group at scale 1; 27 gives over a million in a 60-day ``default`` query
of the largest group). Records are generated per group on first query, from the seed; their
JSON is built from pre-serialized fragments, so pages are served fast.
"""

from __future__ import annotations

import hashlib
import os
import threading
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
import pandas as pd

from toolkit._spec.arm import POLICY_FIELDS, POLICY_STATE_FIELDS, RESOURCE_FIELDS

if TYPE_CHECKING:
    from toolkit.sandbox.world import World

__all__ = ["FIELDS", "POLICY_FIELDS", "RESOURCE_FIELDS", "STATES", "GroupRecords", "PolicyWorld",
           "build_world", "catalog_rows"]

HISTORY_DAYS = 60
HISTORY_ENV = "TOOLKIT_SANDBOX_POLICY_HISTORY_DAYS"
MAX_HISTORY_DAYS = 400
#: Older than this many days, a pair is evaluated on about one day in SPARSE_EVERY.
DENSE_DAYS = 60
SPARSE_EVERY = 7
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
    groups: frozenset[str] = frozenset()  # management groups above it ("root" for the root)


@dataclass
class GroupRecords:
    """The evaluation history of one resource group, column-wise.

    Records are ordered by pair then time.
    """

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
    history_days: int = HISTORY_DAYS
    _records: dict[tuple[str, str], GroupRecords] = field(default_factory=dict)
    _scopes: OrderedDict[tuple[tuple[str, str], ...], GroupRecords] = field(
        default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _columns: dict[str, tuple[np.ndarray, pd.Index]] = field(default_factory=dict)
    _res_frag: dict[int, bytes] = field(default_factory=dict)
    _pol_frag: dict[int, bytes] = field(default_factory=dict)

    # --------------------------------------------------------------------- records
    def records(self, subscription_id: str, group: str) -> GroupRecords:
        """Return the history of a group (built on first use)."""
        key = (subscription_id.lower(), group.lower())
        with self._lock:
            if key not in self._records:
                self._records[key] = self._build_records(key)
            return self._records[key]

    def scope_records(self, keys: list[tuple[str, str]]) -> GroupRecords:
        """Join the histories of several groups (pairs numbered on; kept for a few scopes)."""
        keys = [(s.lower(), g.lower()) for s, g in keys]
        if len(keys) == 1:
            return self.records(*keys[0])
        parts = [self.records(s, g) for s, g in keys]
        cache_key = tuple(keys)
        with self._lock:
            hit = self._scopes.get(cache_key)
            if hit is not None:
                self._scopes.move_to_end(cache_key)
                return hit
        offsets = np.cumsum([0] + [len(p.pair_resource) for p in parts])[:len(parts)]
        joined = GroupRecords(
            np.concatenate([p.pair_resource for p in parts] or [np.empty(0, np.int32)]),
            np.concatenate([p.pair_policy for p in parts] or [np.empty(0, np.int32)]),
            np.concatenate([p.pair + o for p, o in zip(parts, offsets, strict=True)]
                           or [np.empty(0, np.int32)]).astype(np.int32),
            np.concatenate([p.ts for p in parts] or [np.empty(0, np.int64)]),
            np.concatenate([p.state for p in parts] or [np.empty(0, np.int8)]))
        with self._lock:
            self._scopes[cache_key] = joined
            while len(self._scopes) > 3:
                self._scopes.popitem(last=False)
        return joined

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
            first[i] = min(res.created, self.policies[p].assignment.since,
                           self.history_days - 1)
            last[i] = res.deleted
        counts = np.maximum(first - last + 1, 0)
        pair = np.repeat(np.arange(n, dtype=np.int32), counts)
        starts = np.repeat(first, counts)
        within = np.arange(len(pair)) - np.repeat(np.cumsum(counts) - counts, counts)
        day = starts - within  # days before now, descending within each pair: oldest first
        if self.history_days > DENSE_DAYS:  # the long past: about one day in SPARSE_EVERY per pair
            # which pairs a past day evaluated: spread by a hash, so days a week apart see
            # different pairs
            mixed = (pair.astype(np.int64) * 0x9E3779B1 + day * 0x85EBCA77) & 0xFFFFFFFF
            keep = (day < DENSE_DAYS) | ((mixed >> 7) % SPARSE_EVERY == 0)
            pair, day = pair[keep], day[keep]
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
        """Serialize the resource fields of a record (without braces)."""
        frag = self._res_frag.get(r)
        if frag is None:
            frag = orjson.dumps({k: self.resources[r].fields[k] for k in RESOURCE_FIELDS})[1:-1]
            self._res_frag[r] = frag
        return frag

    def policy_fragment(self, p: int) -> bytes:
        """Serialize the policy fields of a record (without braces)."""
        frag = self._pol_frag.get(p)
        if frag is None:
            frag = orjson.dumps({k: self.policies[p].fields[k] for k in POLICY_FIELDS})[1:-1]
            self._pol_frag[p] = frag
        return frag


FIELDS = POLICY_STATE_FIELDS


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
        return scope[1] in res.groups
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


def _history_days() -> int:
    raw = os.environ.get(HISTORY_ENV, "").strip()
    if not raw:
        return HISTORY_DAYS
    if not raw.isdigit() or not HISTORY_DAYS <= int(raw) <= MAX_HISTORY_DAYS:
        raise ValueError(f"{HISTORY_ENV} must be a whole number of days from {HISTORY_DAYS} to "
                         f"{MAX_HISTORY_DAYS}, not {raw!r}")
    return int(raw)


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
    scale = _scale()
    history = _history_days()
    resources, by_group = _resources(world, scale, history)
    return PolicyWorld(world.namespace, world.tenant_id, world.epoch, scale, _policies(world),
                       resources, by_group, world.seed, history)


def _policies(world: World) -> list[Policy]:
    """Make one policy per (assignment, definition): a set's assignment gives one per member."""
    ns = world.namespace
    tenant = world.tenant_id
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
            set_fields: dict[str, Any] = {
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
            entries: list[tuple[str | None, Definition, list[str], str | None]] = [
                (ref, _DEF[d], groups, a.target) for ref, d, groups in members]
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

    return policies


def _resources(world: World, scale: float, history: int
               ) -> tuple[list[Resource], dict[tuple[str, str], list[int]]]:
    """Make the resources of every resource group, and their indexes by group.

    Their number, kinds, places and tags are drawn from the world's seed; the indexes are keyed
    by (subscription id, group name), lower case.
    """
    ns = world.namespace
    rng = world.rng("policy-resources")
    resources: list[Resource] = []
    by_group: dict[tuple[str, str], list[int]] = {}
    for sub in world.subscriptions:
        ancestors = world.ancestors(sub.name)
        above = frozenset(["root", *ancestors])
        for g in sub.resource_groups:
            count, weights = _MIX[g.purpose]
            count = max(1, round(count * scale * (0.8 + 0.4 * rng.random())))
            kinds = rng.choices(list(weights), weights=list(weights.values()), k=count)
            group_members = by_group.setdefault((sub.id.lower(), g.name.lower()), [])
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
                created = history + 30 if rng.random() < 0.8 else rng.randrange(HISTORY_DAYS)
                deleted = 0 if rng.random() < 0.95 else rng.randrange(0, max(1, created))
                rid = _resource_id(sub.id, g.name, ns, kind, name)
                fields = {
                    "resourceId": rid,
                    "subscriptionId": sub.id,
                    "resourceType": f"/{ns}.{TYPES[kind][0]}",
                    "resourceLocation": location,
                    "resourceGroup": g.name,
                    "resourceTags": orjson.dumps(tags).decode(),
                    "managementGroupIds": ",".join(ancestors),
                }
                res = Resource(len(resources), sub.name, sub.id, g.name, kind, name, location,
                               tags, created, deleted, fields, above)
                group_members.append(res.index)
                resources.append(res)
    return resources, by_group


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
