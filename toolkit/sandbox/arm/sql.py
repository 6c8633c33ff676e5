"""SQL servers: name availability, the operations catalogue and the encryption protectors.

Name availability (spec 1 §2.6, §4.4), the operations catalogue (§2.7, §4.5) and the servers'
encryption protectors (§2.5, §4.3).

Server names are global: a name is taken when any server of the world has it, or one of the names
other tenants hold. ``checkNameAvailability`` always answers 200 (``reason`` and ``message`` only
when the name is not available). ``operations`` is tenant-level and pages with ``nextLink``.

Encryption protectors: every server has one, service-managed or a key of one of the tenant's key
vaults (pinned to a version or versionless, with or without auto-rotation). The vaults hold keys
with several versions; one key's newest version is disabled and one key was deleted from its
vault. ``PUT .../encryptionProtector/current`` answers 200 with the protector for a
service-managed key, and 202 for a vault key, naming both the async-operation status URL
(``Azure-AsyncOperation`` in a real cloud's words) and ``Location``: the status answers
``InProgress`` then ``Succeeded`` (an ARM client then reads the protector), the Location URL 202
while the change runs and then 200 with the protector, so a client following either ends with
it. A second PUT while a change runs is refused with 409
``EncryptionProtectorChangeInProgress``; a change completes when its operation is polled to the
end, or once its expected duration has passed on the sandbox clock; a change whose operation
ends Failed changes nothing and no longer blocks the next one.
"""

from __future__ import annotations

import copy
import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from toolkit._spec.arm import (
    NEXT_KEY,
    SERVER_NAME_PATTERN,
    SQL_API_VERSIONS,
    VAULT_KEY_NAME_PATTERN,
)
from toolkit._spec.clouds import NEUTRAL_WORDS
from toolkit.sandbox.arm.common import (
    _poll,
    arm_reply,
    find_group,
    find_subscription,
    start_operation,
)
from toolkit.sandbox.http import Reply, Request, Router, SandboxHTTPError, SandboxView

if TYPE_CHECKING:
    from toolkit._spec.clouds import Vocabulary
    from toolkit.sandbox.server import Sandbox
    from toolkit.sandbox.world import World

__all__ = ["API_VERSIONS", "SqlWorld", "build_world", "catalog_rows", "register"]

API_VERSIONS = SQL_API_VERSIONS
#: The service's own name rule (its check is written here, apart from the client's).
SERVER_NAME_RE = re.compile(SERVER_NAME_PATTERN)
OPERATIONS_PAGE_SIZE = 40

INVALID_MESSAGE = (
    "Specified server name contains unsupported characters or is too long. Server name must be "
    "no longer than 63 characters long, contain only lower-case characters or digits, cannot "
    "contain '.' or '_' characters and can't start or end with '-' character."
)
TAKEN_MESSAGE = "Specified server name is already used"

#: Names held by other tenants: taken, but not in this tenant's catalog.
OTHER_TENANTS = ("server1", "test", "demo", "sql", "prod", "dev", "database", "myserver",
                 "sqlserver", "contoso", "fabrikam", "northwind", "adventureworks", "shop",
                 "analytics", "reporting", "orders", "crm", "erp", "warehouse")

# (subscription, resource group, server names)
_SERVERS = (
    ("retail-prod", "rg-data-weu", ("sql-retail-prod-weu-01", "sql-retail-prod-weu-02",
                                    "sql-orders-prod", "sql-inventory-prod")),
    ("retail-prod", "rg-analytics-neu", ("sql-analytics-neu", "sql-dwh-staging-neu")),
    ("retail-prod", "rg-shop-neu", ("sql-shop-neu-01", "sql-shop-sessions")),
    ("retail-prod", "rg-identity", ("sql-identity-audit",)),
    ("retail-dev", "rg-data-dev", ("sql-retail-dev", "sql-orders-dev", "sql-loadtest-01")),
    ("retail-dev", "rg-sandbox-dev", ("sql-sandbox-alice", "sql-sandbox-bob")),
    ("shared-platform", "rg-monitoring", ("sql-monitoring-uks",)),
    ("shared-platform", "rg-security", ("sql-siem-archive", "sql-keyvault-audit")),
)

# (resource path, display resource, [(verb, operation text, description)]) of the catalogue
_RESOURCES = (
    ("servers", "Server", "server"),
    ("servers/databases", "Database", "database"),
    ("servers/elasticPools", "Elastic Pool", "elastic pool"),
    ("servers/firewallRules", "Firewall Rule", "server firewall rule"),
    ("servers/virtualNetworkRules", "Virtual Network Rule", "virtual network rule"),
    ("servers/administrators", "Server Administrator", "Entra administrator of a server"),
    ("servers/keys", "Server Key", "server key"),
    ("servers/encryptionProtector", "Encryption Protector", "server encryption protector"),
    ("servers/auditingSettings", "Server Auditing Settings", "server auditing policy"),
    ("servers/securityAlertPolicies", "Server Threat Detection Policy",
     "server threat detection policy"),
    ("servers/vulnerabilityAssessments", "Server Vulnerability Assessment",
     "server vulnerability assessment"),
    ("servers/failoverGroups", "Failover Group", "failover group"),
    ("servers/privateEndpointConnections", "Private Endpoint Connection",
     "private endpoint connection"),
    ("servers/outboundFirewallRules", "Outbound Firewall Rule", "outbound firewall rule"),
    ("servers/jobAgents", "Job Agent", "elastic job agent"),
    ("servers/jobAgents/jobs", "Job", "elastic job"),
    ("servers/databases/transparentDataEncryption", "Transparent Data Encryption",
     "database transparent data encryption setting"),
    ("servers/databases/backupShortTermRetentionPolicies", "Short Term Retention Policy",
     "short-term backup retention policy"),
    ("servers/databases/backupLongTermRetentionPolicies", "Long Term Retention Policy",
     "long-term backup retention policy"),
    ("servers/databases/auditingSettings", "Database Auditing Settings",
     "database auditing policy"),
    ("servers/databases/securityAlertPolicies", "Database Threat Detection Policy",
     "database threat detection policy"),
    ("servers/databases/vulnerabilityAssessments", "Database Vulnerability Assessment",
     "database vulnerability assessment"),
    ("servers/databases/dataMaskingPolicies", "Data Masking Policy", "dynamic data masking policy"),
    ("servers/databases/syncGroups", "Sync Group", "data sync group"),
    ("servers/databases/geoBackupPolicies", "Geo Backup Policy", "geo-backup policy"),
    ("managedInstances", "Managed Instance", "managed instance"),
    ("managedInstances/databases", "Managed Database", "managed database"),
    ("managedInstances/keys", "Managed Instance Key", "managed instance key"),
    ("managedInstances/encryptionProtector", "Managed Instance Encryption Protector",
     "managed instance encryption protector"),
    ("instancePools", "Instance Pool", "instance pool"),
)

_ACTIONS = (
    ("servers/databases/failover", "Failover Database",
     "Customer initiated database failover.", "Database"),
    ("servers/databases/pause", "Pause Database", "Pauses a database.", "Database"),
    ("servers/databases/resume", "Resume Database", "Resumes a database.", "Database"),
    ("servers/databases/export", "Export Database", "Exports a database to a bacpac file.",
     "Database"),
    ("servers/import", "Import Database", "Imports a bacpac file into a new database.", "Server"),
    ("servers/databases/upgradeDataWarehouse", "Upgrade Data Warehouse",
     "Upgrades a data warehouse to the current generation.", "Database"),
    ("servers/elasticPools/failover", "Failover Elastic Pool",
     "Customer initiated elastic pool failover.", "Elastic Pool"),
    ("servers/failoverGroups/failover", "Planned Failover",
     "Executes a planned failover of a failover group.", "Failover Group"),
    ("servers/failoverGroups/forceFailoverAllowDataLoss", "Forced Failover",
     "Executes a forced failover of a failover group, allowing data loss.", "Failover Group"),
    ("managedInstances/failover", "Failover Managed Instance",
     "Customer initiated managed instance failover.", "Managed Instance"),
    ("managedInstances/start", "Start Managed Instance", "Starts a managed instance.",
     "Managed Instance"),
    ("managedInstances/stop", "Stop Managed Instance", "Stops a managed instance.",
     "Managed Instance"),
    ("servers/keys/rotate", "Rotate Server Key",
     "Rotates the key used as the server's encryption protector.", "Server Key"),
    ("checkNameAvailability", "Verify Server Name Availability",
     "Verify whether a server name is available.", "Server Name Availability"),
)

_TENANT_LEVEL = (
    ("locations/capabilities", "Capabilities", "Gets the capabilities available for a location."),
    ("locations/usages", "Usages", "Gets the usages of a subscription in a location."),
    ("operations", "Available Operations", "Gets the available operations of the provider."),
    ("locations/operationResults", "Operation Results",
     "Gets the status of a long-running operation."),
    ("locations/encryptionProtectorOperationResults", "Encryption Protector Operation Results",
     "Gets the result of an encryption protector operation."),
    ("locations/encryptionProtector{async}", "Encryption Protector Async Operation",
     "Gets the status of an encryption protector operation."),
)

#: The key type the world stores for vault keys: the neutral word (answered in the sandbox
#: cloud's word).
VAULT = NEUTRAL_WORDS.key_vault_type


@dataclass
class SqlServer:
    """A SQL server of the tenant (``protector``: its encryption protector as first built)."""

    subscription_id: str
    resource_group: str
    name: str
    location: str
    created_at: datetime | None = None
    protector: dict[str, Any] = field(default_factory=dict)


@dataclass
class KeyVersion:
    """One version of a key vault key."""

    version: str
    enabled: bool
    created_at: datetime


@dataclass
class VaultKey:
    """A key of a key vault: its versions, oldest first.

    ``deleted`` keys are gone from the vault (a server key naming one is not found).
    """

    vault: str
    name: str
    versions: list[KeyVersion]
    deleted: bool = False

    def version(self, version: str) -> KeyVersion | None:
        low = version.lower()
        return next((v for v in self.versions if v.version == low), None)

    @property
    def latest(self) -> KeyVersion:
        return self.versions[-1]

    def latest_enabled(self) -> KeyVersion | None:
        return next((v for v in reversed(self.versions) if v.enabled), None)


@dataclass
class SqlWorld:
    """The SQL part of the world."""

    servers: list[SqlServer]
    taken: frozenset[str]
    operations: list[dict[str, Any]]
    keys: dict[tuple[str, str], VaultKey] = field(default_factory=dict)

    def server(self, subscription_id: str, resource_group: str, name: str) -> SqlServer | None:
        """Find the server of that name in that group (case-insensitive)."""
        want = (subscription_id.lower(), resource_group.lower(), name.lower())
        return next((s for s in self.servers if (s.subscription_id.lower(),
                                                 s.resource_group.lower(),
                                                 s.name.lower()) == want), None)


def _operations(words: Vocabulary) -> list[dict[str, Any]]:
    namespace = words.namespace
    provider = f"{namespace} SQL Database"
    ops: list[dict[str, Any]] = []
    verbs = (("read", "List/Get {r}(s)", "Return the list of {d}s or gets the properties of the "
                                          "specified {d}."),
             ("write", "Create/Update {r}", "Creates or updates the specified {d}."),
             ("delete", "Delete {r}", "Deletes the specified {d}."))
    for path, resource, desc in _RESOURCES:
        for verb, op_text, op_desc in verbs:
            ops.append({
                "name": f"{namespace}.Sql/{path}/{verb}",
                "display": {"provider": provider, "resource": f"{namespace} SQL {resource}",
                            "operation": op_text.format(r=resource),
                            "description": op_desc.format(d=desc)},
                "origin": "user,system",
            })
    for path, op_text, op_desc, resource in _ACTIONS:
        ops.append({
            "name": f"{namespace}.Sql/{path}/action",
            "display": {"provider": provider, "resource": f"{namespace} SQL {resource}",
                        "operation": op_text, "description": op_desc},
            "origin": "user",
        })
    for path, resource, op_desc in _TENANT_LEVEL:
        path = path.replace("{async}", words.async_header.replace("-", ""))
        ops.append({
            "name": f"{namespace}.Sql/{path}/read",
            "display": {"provider": provider, "resource": resource, "operation": f"Get {resource}",
                        "description": op_desc},
            "origin": "system",
        })
    return ops


def build_world(world: World) -> SqlWorld:
    """Build the SQL servers, the taken names and the operations catalogue."""
    subs = {s.name: s for s in world.subscriptions}
    servers: list[SqlServer] = []
    for sub_name, rg_name, names in _SERVERS:
        sub = subs[sub_name]
        group = sub.group(rg_name)
        assert group is not None
        servers.extend(SqlServer(sub.id, rg_name, n, group.location) for n in names)
    taken = frozenset([s.name for s in servers] + list(OTHER_TENANTS))
    sql = SqlWorld(servers, taken, _operations(world.words))
    _build_keys(world, sql)
    return sql


def catalog_rows(sql: SqlWorld) -> list[dict[str, Any]]:
    """One catalog row per SQL server and per key vault key."""
    rows: list[dict[str, Any]] = [{"kind": "sql_server", "subscription_id": s.subscription_id,
             "resource_group": s.resource_group, "name": s.name, "location": s.location,
             "detail": "name taken"} for s in sql.servers]
    for key in sql.keys.values():
        if key.deleted:
            state = "deleted from the vault"
        elif not key.latest.enabled:
            state = "newest version disabled"
        else:
            state = "enabled"
        rows.append({"kind": "key_vault_key", "subscription_id": None, "resource_group": None,
                     "name": f"{key.vault}_{key.name}", "location": None,
                     "detail": f"{len(key.versions)} versions, {state}"})
    return rows


def _check_name(request: Request) -> Reply:
    find_subscription(request)
    body = request.json()
    if not isinstance(body, dict) or not isinstance(body.get("name"), str):
        raise SandboxHTTPError(400, "InvalidRequestContent",
                               "The request body must be {\"name\": string, \"type\": string}.")
    ns = request.sandbox.namespace
    kind = body.get("type")
    if kind != f"{ns}.Sql/servers":
        raise SandboxHTTPError(400, "UnknownNameType",
                               f"The name type '{kind}' is not known; use "
                               f"'{ns}.Sql/servers'.", target="type")
    name = body["name"]
    if not SERVER_NAME_RE.match(name):
        answer = {"name": name, "available": False, "reason": "Invalid",
                  "message": INVALID_MESSAGE}
    elif name in request.sandbox.world.section("sql").taken:
        answer = {"name": name, "available": False, "reason": "AlreadyExists",
                  "message": TAKEN_MESSAGE}
    else:
        answer = {"name": name, "available": True}
    return arm_reply(request, answer)


def _operations_list(request: Request) -> Reply:
    ops = request.sandbox.world.section("sql").operations
    token = request.param("$skiptoken") or "0"
    try:
        start = int(token)
    except ValueError:
        raise SandboxHTTPError(400, "InvalidSkipToken",
                               f"The skip token '{token}' is not valid.") from None
    if not 0 <= start <= len(ops):
        raise SandboxHTTPError(400, "InvalidSkipToken", f"The skip token '{token}' is not valid.")
    page = ops[start:start + OPERATIONS_PAGE_SIZE]
    body: dict[str, Any] = {"value": page}
    if start + OPERATIONS_PAGE_SIZE < len(ops):
        version = request.param("api-version")
        body[NEXT_KEY] = (f"{request.base_url}/providers/{request.sandbox.namespace}.Sql/"
                            f"operations?api-version={version}"
                            f"&$skiptoken={start + OPERATIONS_PAGE_SIZE}")
    return arm_reply(request, body)


# ---------------------------------------------------------------------------------- protectors

#: (vault, key, number of versions, newest version enabled, deleted from the vault)
_KEYS = (
    ("kv-retail-prod-weu", "tde-primary", 3, True, False),
    ("kv-retail-prod-weu", "tde-legacy", 2, False, False),
    ("kv-retail-prod-neu", "tde-analytics", 2, True, False),
    ("kv-retail-prod-neu", "tde-archived", 1, True, True),
    ("kv-retail-dev", "tde-dev", 1, True, False),
    ("kv-platform-sec", "tde-siem", 4, True, False),
)

#: server -> (vault, key, version index (None: versionless), auto-rotation); absent: service
#: managed
_PROTECTORS: dict[str, tuple[str, str, int | None, bool]] = {
    "sql-retail-prod-weu-01": ("kv-retail-prod-weu", "tde-primary", 1, False),
    "sql-retail-prod-weu-02": ("kv-retail-prod-weu", "tde-primary", None, True),
    "sql-orders-prod": ("kv-retail-prod-weu", "tde-legacy", 0, False),
    "sql-analytics-neu": ("kv-retail-prod-neu", "tde-analytics", 1, True),
    "sql-identity-audit": ("kv-retail-prod-weu", "tde-primary", 2, False),
    "sql-retail-dev": ("kv-retail-dev", "tde-dev", None, True),
    "sql-siem-archive": ("kv-platform-sec", "tde-siem", None, True),
    "sql-keyvault-audit": ("kv-platform-sec", "tde-siem", 0, False),
}

_DISPLAY_LOCATIONS = {"westeurope": "West Europe", "northeurope": "North Europe",
                      "francecentral": "France Central", "swedencentral": "Sweden Central",
                      "uksouth": "UK South"}

KEY_NAME_RE = re.compile(VAULT_KEY_NAME_PATTERN)
ADMINS = ("dba-team@contoso.example", "security-ops@contoso.example",
          "platform-automation@contoso.example")


def _build_keys(world: World, sql: SqlWorld) -> None:
    rng = world.rng("sql-keys")
    for vault, name, n, newest_enabled, deleted in _KEYS:
        versions = []
        for i in range(n):
            created = world.epoch - timedelta(days=400 - 120 * i + rng.randint(0, 20))
            versions.append(KeyVersion(f"{rng.getrandbits(128):032x}",
                                       newest_enabled or i < n - 1, created))
        sql.keys[(vault, name)] = VaultKey(vault, name, versions, deleted)
    for server in sql.servers:
        server.created_at = world.epoch - timedelta(days=rng.randint(450, 1500),
                                                    minutes=rng.randint(0, 1440))
        changed = server.created_at + timedelta(days=rng.randint(1, 400))
        spec = _PROTECTORS.get(server.name)
        if spec is None:
            props: dict[str, Any] = {"serverKeyName": "ServiceManaged",
                                     "serverKeyType": "ServiceManaged",
                                     "autoRotationEnabled": False}
            changed = server.created_at
        else:
            vault, key_name, index, auto = spec
            key = sql.keys[(vault, key_name)]
            name = f"{vault}_{key_name}" if index is None else \
                f"{vault}_{key_name}_{key.versions[index].version}"
            props = {"serverKeyName": name, "serverKeyType": VAULT,
                     "autoRotationEnabled": auto}
        server.protector = {"properties": props, "createdAt": server.created_at,
                            "lastModifiedAt": changed,
                            "lastModifiedBy": ADMINS[rng.randrange(len(ADMINS))]}


def _server_id(server: SqlServer, namespace: str) -> str:
    return (f"/subscriptions/{server.subscription_id}/resourceGroups/{server.resource_group}"
            f"/providers/{namespace}.Sql/servers/{server.name}")


def _iso(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _protector_state(sandbox: SandboxView, server: SqlServer) -> dict[str, Any]:
    """Return the server's live protector state (under ``sandbox.state``).

    A change whose time has come is applied first. Call with ``state_lock`` held.
    """
    states = sandbox.state.setdefault("sql_protectors", {})
    key = (server.subscription_id.lower(), server.resource_group.lower(), server.name.lower())
    state = states.get(key)
    if state is None:
        state = states[key] = {**copy.deepcopy(server.protector), "pending": None}
    pending = state["pending"]
    if pending is not None and sandbox.now() >= pending["due"]:
        if pending["fail"]:  # an operation that ends Failed changes nothing
            state["pending"] = None
        else:
            _apply(state, pending)
    return state


def _apply(state: dict[str, Any], pending: dict[str, Any]) -> None:
    state["properties"] = pending["properties"]
    state["lastModifiedAt"] = pending["at"]
    state["lastModifiedBy"] = pending["by"]
    state["pending"] = None


def protector_body(sql: SqlWorld, server: SqlServer, state: dict[str, Any],
                   sandbox: SandboxView) -> dict[str, Any]:
    """Build the EncryptionProtector resource of a server in a given state.

    In the sandbox cloud's words (key type, ``kind``, vault host).
    """
    namespace = sandbox.namespace
    props = dict(state["properties"])
    key_type = sandbox.words.key_vault_type if props["serverKeyType"] == VAULT \
        else props["serverKeyType"]
    out_props: dict[str, Any] = {"serverKeyName": props["serverKeyName"],
                                 "serverKeyType": key_type,
                                 "autoRotationEnabled": bool(props.get("autoRotationEnabled")),
                                 "subregion": f"{server.location}-2"}
    if props["serverKeyType"] == VAULT:
        m = KEY_NAME_RE.match(props["serverKeyName"])
        assert m is not None
        key = sql.keys[(m["vault"], m["key"])]
        pinned = key.version(m["version"]) if m["version"] else None
        in_use = pinned if pinned is not None and not out_props["autoRotationEnabled"] \
            else key.latest_enabled()
        assert in_use is not None
        base = f"https://{key.vault}.{sandbox.cloud.vault_suffix}/keys/{key.name}"
        out_props["uri"] = base if m["version"] is None else f"{base}/{in_use.version}"
        out_props["thumbprint"] = hashlib.sha1(in_use.version.encode()).hexdigest().upper()
        if m["version"] is None or in_use is not pinned:
            out_props["keyVersion"] = in_use.version
    return {
        "id": f"{_server_id(server, namespace)}/encryptionProtector/current",
        "name": "current",
        "type": f"{namespace}.Sql/servers/encryptionProtector",
        "kind": sandbox.words.key_vault_kind if props["serverKeyType"] == VAULT
        else key_type.lower(),
        "location": _DISPLAY_LOCATIONS.get(server.location, server.location),
        "properties": out_props,
        "systemData": {"createdBy": ADMINS[0], "createdByType": "User",
                       "createdAt": _iso(state["createdAt"]),
                       "lastModifiedBy": state["lastModifiedBy"], "lastModifiedByType": "User",
                       "lastModifiedAt": _iso(state["lastModifiedAt"])},
    }


def _find_server(request: Request) -> tuple[SqlWorld, SqlServer]:
    sub, group = find_group(request)
    sql = request.sandbox.world.section("sql")
    name = request.path_params["serverName"]
    server = sql.server(sub.id, group.name, name)
    if server is None:
        raise SandboxHTTPError(404, "ServerNotInSubscriptionResourceGroup",
                               f"Specified server '{name}' does not exist in resource group "
                               f"'{group.name}' in subscription '{sub.id}'.")
    protector_name = request.path_params["encryptionProtectorName"]
    if protector_name != "current":
        raise SandboxHTTPError(400, "InvalidEncryptionProtectorName",
                               f"The encryption protector name '{protector_name}' is not "
                               "valid; the only name is 'current'.")
    return sql, server


def _check_key(sql: SqlWorld, body: Any, words: Vocabulary) -> dict[str, Any]:
    """Read the new protector properties a PUT body asks for, or raise the service's 400/404."""
    props = body.get("properties") if isinstance(body, dict) else None
    if not isinstance(props, dict):
        raise SandboxHTTPError(400, "InvalidKeyUpsertRequest",
                               "The request body must carry 'properties' with a "
                               "'serverKeyType'.")
    key_type = props.get("serverKeyType")
    if key_type not in ("ServiceManaged", words.key_vault_type):
        raise SandboxHTTPError(400, "InvalidKeyType",
                               f"The server key type '{key_type}' is not valid; use "
                               f"'ServiceManaged' or '{words.key_vault_type}'.",
                               target="serverKeyType")
    name = props.get("serverKeyName")
    auto = props.get("autoRotationEnabled")
    if auto is not None and not isinstance(auto, bool):
        raise SandboxHTTPError(400, "InvalidKeyUpsertRequest",
                               "'autoRotationEnabled' must be true or false.",
                               target="autoRotationEnabled")
    if key_type == "ServiceManaged":
        if name not in (None, "ServiceManaged"):
            raise SandboxHTTPError(400, "InvalidKeyName",
                                   f"The server key name '{name}' is not valid for a "
                                   "ServiceManaged key; it must be 'ServiceManaged'.",
                                   target="serverKeyName")
        return {"serverKeyName": "ServiceManaged", "serverKeyType": key_type,
                "autoRotationEnabled": False}
    m = KEY_NAME_RE.match(name) if isinstance(name, str) else None
    if m is None:
        raise SandboxHTTPError(400, "InvalidKeyName",
                               f"The server key name '{name}' is not valid; it must be "
                               "'<vault>_<key>_<version>' or '<vault>_<key>'.",
                               target="serverKeyName")
    key = sql.keys.get((m["vault"], m["key"]))
    version = key.version(m["version"]) if key is not None and m["version"] else None
    if key is None or key.deleted or (m["version"] and version is None):
        raise SandboxHTTPError(404, "ServerKeyNotFound",
                               f"The server key '{name}' was not found: the key vault "
                               f"'{m['vault']}' has no key '{m['key']}'"
                               + (f" with version '{m['version']}'." if m["version"] else "."))
    in_use = version if version is not None else key.latest
    if not in_use.enabled:
        raise SandboxHTTPError(400, words.key_disabled_code,
                               f"The key vault key '{key.vault}/{key.name}/{in_use.version}' "
                               "is disabled. Enable the key version or choose another key.",
                               target="serverKeyName")
    return {"serverKeyName": name, "serverKeyType": VAULT, "autoRotationEnabled": bool(auto)}


def _get_protector(request: Request) -> Reply:
    sql, server = _find_server(request)
    sandbox = request.sandbox
    with sandbox.state_lock:
        state = _protector_state(sandbox, server)
        body = protector_body(sql, server, state, sandbox)
    return arm_reply(request, body)


def _put_protector(request: Request) -> Reply:
    sql, server = _find_server(request)
    sandbox = request.sandbox
    new = _check_key(sql, request.json(), sandbox.words)
    by = str(request.claims.get("sub") or "analyst@contoso.example")
    with sandbox.state_lock:
        state = _protector_state(sandbox, server)
        if state["pending"] is not None:
            raise SandboxHTTPError(409, "EncryptionProtectorChangeInProgress",
                                   f"An encryption protector change is already in progress on "
                                   f"server '{server.name}'. Wait for it to complete and try "
                                   "again.")
        now = sandbox.now()
        pending = {"properties": new, "at": now, "by": by, "fail": request.fail_operation,
                   "due": now + timedelta(seconds=sandbox.lro_polls * sandbox.lro_retry_after)}
        if new["serverKeyType"] == "ServiceManaged":
            _apply(state, pending)
            body = protector_body(sql, server, state, sandbox)
            return arm_reply(request, body)
        state["pending"] = pending

    def finish() -> Reply:
        # the final Location answer carries the protector, as a client following Location
        # alone ends with it
        with sandbox.state_lock:
            if state["pending"] is pending:
                _apply(state, pending)
            return arm_reply(request, protector_body(sql, server, state, sandbox))

    def abandon() -> None:
        with sandbox.state_lock:
            if state["pending"] is pending:
                state["pending"] = None

    # names both the async-operation status (which ARM clients follow first, then read the
    # resource) and Location (whose last answer is the protector)
    reply = start_operation(request, f"{sandbox.namespace}.Sql", server.location, finish,
                            abandon=abandon, async_status=True)
    reply.headers["Location"] = reply.headers["Location"].replace(
        "/operationResults/", "/encryptionProtectorOperationResults/")
    return reply


def register(router: Router, sandbox: Sandbox) -> None:
    """Add the name availability, operations and encryption protector routes."""
    router.add("POST", "/subscriptions/{subscriptionId}/providers/{ns}.Sql/checkNameAvailability",
               _check_name, family="arm", api_versions=API_VERSIONS, name="check_name")
    router.add("GET", "/providers/{ns}.Sql/operations", _operations_list, family="arm",
               api_versions=API_VERSIONS, name="sql_operations")
    protector = ("/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/"
                 "{ns}.Sql/servers/{serverName}/encryptionProtector/{encryptionProtectorName}")
    router.add("PUT", protector, _put_protector, family="arm", api_versions=API_VERSIONS,
               name="encryption_protector_update")
    router.add("GET", protector, _get_protector, family="arm", api_versions=API_VERSIONS,
               name="encryption_protector_get")
    router.add("GET", "/subscriptions/{subscriptionId}/providers/{ns}.Sql/locations/{location}/"
               "encryptionProtectorOperationResults/{operationId}", _poll, family="arm",
               api_versions=None, name="encryption_protector_operation")
