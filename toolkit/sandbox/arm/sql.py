"""SQL servers: name availability (spec 1 §2.6, §4.4) and the operations catalogue (§2.7, §4.5).

Server names are global: a name is taken when any server of the world has it, or one of the names
other tenants hold. ``checkNameAvailability`` always answers 200 (``reason`` and ``message`` only
when the name is not available). ``operations`` is tenant-level and pages with ``nextLink``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolkit._core.validate import SERVER_NAME_RE
from toolkit.sandbox.arm.common import arm_reply, find_subscription
from toolkit.sandbox.http import Reply, Request, Router, SandboxHTTPError

if TYPE_CHECKING:
    from toolkit.sandbox.server import Sandbox
    from toolkit.sandbox.world import World

__all__ = ["API_VERSIONS", "SqlWorld", "build_world", "catalog_rows", "register"]

API_VERSIONS = ("2025-01-01", "2023-08-01", "2021-11-01")
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
    ("locations/encryptionProtectorVendorAsyncOperation", "Encryption Protector Async Operation",
     "Gets the status of an encryption protector operation."),
)


@dataclass
class SqlServer:
    """A SQL server of the tenant."""

    subscription_id: str
    resource_group: str
    name: str
    location: str


@dataclass
class SqlWorld:
    """The SQL part of the world."""

    servers: list[SqlServer]
    taken: frozenset[str]
    operations: list[dict[str, Any]]


def _operations(namespace: str) -> list[dict[str, Any]]:
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
        ops.append({
            "name": f"{namespace}.Sql/{path}/read",
            "display": {"provider": provider, "resource": resource, "operation": f"Get {resource}",
                        "description": op_desc},
            "origin": "system",
        })
    return ops


def build_world(world: World) -> SqlWorld:
    """The SQL servers, the taken names and the operations catalogue."""
    subs = {s.name: s for s in world.subscriptions}
    servers = []
    for sub_name, rg_name, names in _SERVERS:
        sub = subs[sub_name]
        group = sub.group(rg_name)
        assert group is not None
        servers.extend(SqlServer(sub.id, rg_name, n, group.location) for n in names)
    taken = frozenset([s.name for s in servers] + list(OTHER_TENANTS))
    return SqlWorld(servers, taken, _operations(world.namespace))


def catalog_rows(sql: SqlWorld) -> list[dict[str, Any]]:
    """One catalog row per SQL server."""
    return [{"kind": "sql_server", "subscription_id": s.subscription_id,
             "resource_group": s.resource_group, "name": s.name, "location": s.location,
             "detail": "name taken"} for s in sql.servers]


def _check_name(request: Request) -> Reply:
    find_subscription(request)
    body = request.json()
    if not isinstance(body, dict) or not isinstance(body.get("name"), str):
        raise SandboxHTTPError(400, "InvalidRequestContent",
                               "The request body must be {\"name\": string, \"type\": string}.")
    ns = request.sandbox.namespace
    kind = body.get("type")
    if kind != f"{ns}.Sql/servers":
        raise SandboxHTTPError(400, "InvalidResourceType",
                               f"The resource type '{kind}' is not supported; use "
                               f"'{ns}.Sql/servers'.")
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
        body["nextLink"] = (f"{request.sandbox.url}/providers/{request.sandbox.namespace}.Sql/"
                            f"operations?api-version={version}"
                            f"&$skiptoken={start + OPERATIONS_PAGE_SIZE}")
    return arm_reply(request, body, tenant=True)


def register(router: Router, sandbox: Sandbox) -> None:
    """Add the name availability and operations routes."""
    router.add("POST", "/subscriptions/{subscriptionId}/providers/{ns}.Sql/checkNameAvailability",
               _check_name, family="arm", api_versions=API_VERSIONS, name="check_name")
    router.add("GET", "/providers/{ns}.Sql/operations", _operations_list, family="arm",
               api_versions=API_VERSIONS, name="sql_operations")
