"""Facts of the resource-management services (spec 1).

Api-versions, names' patterns, policy record fields and the enumerations the answers use.

Data only: the client (``toolkit.arm`` and its schemas, ``toolkit._core.validate``)
and the sandbox (``toolkit.sandbox.arm``) both read these; each compiles its own patterns and
writes its own checks, so a check that drifts on one side is caught by the other.
"""

from __future__ import annotations

__all__ = [
    "CLUSTER_NAME_PATTERN",
    "COMPLIANCE_STATES",
    "GROUP_API_VERSIONS",
    "HEALTH_STATES",
    "HIERARCHY_MAX_DEPTH",
    "HOSTED_CLUSTER_API_VERSIONS",
    "MANAGED_CLUSTER_API_VERSIONS",
    "MANAGEMENT_GROUP_API_VERSIONS",
    "MANAGEMENT_GROUP_NAME_PATTERN",
    "MANAGEMENT_GROUP_NEXT_KEY",
    "MANAGEMENT_GROUP_TYPE",
    "NETWORK_API_VERSIONS",
    "NEXT_KEY",
    "ODATA_NEXT_KEY",
    "POLICY_API_VERSIONS",
    "POLICY_FIELDS",
    "POLICY_INSIGHTS_BUCKET",
    "POLICY_INSIGHTS_REFILL_PER_SECOND",
    "POLICY_STATE_FIELDS",
    "PROVIDER_QUOTAS",
    "READ_BUCKET",
    "READ_REFILL_PER_SECOND",
    "RESOURCE_FIELDS",
    "RESOURCE_GRAPH_API_VERSIONS",
    "RESOURCE_GRAPH_COLUMN_TYPES",
    "RESOURCE_GRAPH_PAGE_MAX",
    "RESOURCE_GRAPH_PATH",
    "RESOURCE_GRAPH_POLICY_STATES_TYPE",
    "RESOURCE_GRAPH_QUOTA",
    "RESOURCE_GRAPH_QUOTA_HEADERS",
    "RESOURCE_GRAPH_QUOTA_WINDOW_SECONDS",
    "RESOURCE_GRAPH_RESULT_FORMATS",
    "RESOURCE_GRAPH_SCOPE_FILTERS",
    "RESOURCE_GRAPH_SKIP_TOKEN_KEY",
    "RESOURCE_GRAPH_SUBSCRIPTION_BATCH",
    "RESOURCE_GRAPH_TABLES",
    "RESOURCE_GROUP_MAX",
    "RESOURCE_GROUP_PATTERN",
    "SERVER_NAME_PATTERN",
    "SQL_API_VERSIONS",
    "SQL_DNS_SUFFIXES",
    "SUBSCRIPTION_API_VERSIONS",
    "SUBSCRIPTION_TYPE",
    "SUPPORT_API_VERSIONS",
    "VAULT_KEY_NAME_PATTERN",
    "WRITE_BUCKET",
    "WRITE_REFILL_PER_SECOND",
]

# -------------------------------------------------------------------------------- api-versions
# Each tuple lists the versions a service accepts, the newest first: the client sends the first
# by default, the sandbox accepts them all.

NETWORK_API_VERSIONS = ("2025-05-01", "2024-05-01", "2023-09-01")
SQL_API_VERSIONS = ("2025-01-01", "2023-08-01", "2021-11-01")
#: DNS suffix of SQL servers (``<server>.<suffix>``, their ``fullyQualifiedDomainName``) per
#: cloud name; the neutral vocabulary's is invented.
SQL_DNS_SUFFIXES = {"public": "database.windows.net", "usgov": "database.usgovcloudapi.net",
                    "china": "database.chinacloudapi.cn", "neutral": "database.vendor.net"}
POLICY_API_VERSIONS = ("2024-10-01", "2019-10-01")
SUPPORT_API_VERSIONS = ("2026-06-01", "2024-04-01", "2020-04-01")
MANAGED_CLUSTER_API_VERSIONS = ("2026-04-01", "2025-10-01", "2025-07-01")
HOSTED_CLUSTER_API_VERSIONS = ("2025-07-25", "2023-11-22")
#: Management groups (list, and get with ``$expand=children&$recurse=true``): 2023-04-01 is the
#: newest stable version and azure-mgmt-managementgroups 2.0's default.
MANAGEMENT_GROUP_API_VERSIONS = ("2023-04-01", "2021-04-01", "2020-05-01")
#: Subscriptions list: 2022-12-01 is the newest version (azure-mgmt-resource-subscriptions 1.0).
SUBSCRIPTION_API_VERSIONS = ("2022-12-01", "2021-01-01", "2020-01-01")
#: Resource groups list (Microsoft.Resources): 2025-04-01 is azure-mgmt-resource 26's default.
#: Resource Graph (``Microsoft.ResourceGraph/resources``): 2024-04-01 is the newest stable version
#: of the REST specification; azure-mgmt-resourcegraph 8.0.1 sends 2021-03-01.
RESOURCE_GRAPH_API_VERSIONS = ("2024-04-01", "2022-10-01", "2021-03-01")
GROUP_API_VERSIONS = ("2025-04-01", "2024-11-01", "2024-07-01", "2024-03-01", "2022-09-01",
                      "2021-04-01")

# ------------------------------------------------------------------------------- paging keys
# Where each collection names its next page (the ``x-ms-pageable`` ``nextLinkName`` of the
# service's REST specification, and its official examples).

#: Most resource-management lists (subscriptions, resource groups, SQL operations, support).
NEXT_KEY = "nextLink"
#: Management groups list (``ManagementGroupListResult``): ``@nextLink``, as in the official
#: ``ListManagementGroups`` example.
MANAGEMENT_GROUP_NEXT_KEY = "@nextLink"
#: Policy states (OData), and the Graph collections.
ODATA_NEXT_KEY = "@odata.nextLink"

# -------------------------------------------------------------------------------- type words
#: The ``type`` of a management group, after the provider namespace word (``{ns}.Management``).
MANAGEMENT_GROUP_TYPE = "Management/managementGroups"
#: The ``type`` a subscription has as a child in the management-group hierarchy.
SUBSCRIPTION_TYPE = "/subscriptions"
#: How many levels of management groups the service allows below the tenant root group.
HIERARCHY_MAX_DEPTH = 6

# ------------------------------------------------------------------------------------ patterns

#: SQL server names: 1 to 63 lower-case letters, digits and hyphens, no leading/trailing hyphen.
SERVER_NAME_PATTERN = r"^[0-9a-z]([-0-9a-z]{0,61}[0-9a-z])?$"
#: Resource group names: letters, digits, ``_ - . ( )``; 1 to 90 characters, not ending in ``.``.
RESOURCE_GROUP_PATTERN = r"^[-\w.()]{1,90}$"
RESOURCE_GROUP_MAX = 90
#: Management group ids: up to 90 letters, digits, ``-``, ``_``, ``(``, ``)`` and ``.``, not
#: ending in ``.`` (the tenant root group's id is the tenant id, a GUID).
MANAGEMENT_GROUP_NAME_PATTERN = r"^[-a-zA-Z0-9_().]{0,89}[-a-zA-Z0-9_()]$"
#: Managed cluster names: 1 to 63 characters, letters, digits, ``-`` and ``_``, alphanumeric ends.
CLUSTER_NAME_PATTERN = r"^[a-zA-Z0-9]$|^[a-zA-Z0-9][-_a-zA-Z0-9]{0,61}[a-zA-Z0-9]$"
#: A vault-key protector's server key name: ``{vault}_{key}[_{version}]``.
VAULT_KEY_NAME_PATTERN = (r"^(?P<vault>[A-Za-z][-A-Za-z0-9]{1,22}[A-Za-z0-9])_"
                          r"(?P<key>[-A-Za-z0-9]{1,127})(?:_(?P<version>[0-9A-Fa-f]{32}))?$")

# -------------------------------------------------------------------------------- enumerations

#: Backend health states, best first.
HEALTH_STATES = ("Up", "Partial", "Draining", "Down", "Unknown")
#: Policy compliance states, in the order of a roll-up's rank (worst last): a resource's state
#: over several policies is the highest one (notes §4).
COMPLIANCE_STATES = ("Unknown", "Exempt", "Conflict", "Compliant", "NonCompliant")
#: The fields of a policy state record that describe the resource evaluated.
RESOURCE_FIELDS = ("resourceId", "subscriptionId", "resourceType", "resourceLocation",
                   "resourceGroup", "resourceTags", "managementGroupIds")
#: The fields of a policy state record that describe the policy (assignment, definition, set).
POLICY_FIELDS = ("policyAssignmentId", "policyDefinitionId", "effectiveParameters",
                 "policyAssignmentName", "policyAssignmentOwner", "policyAssignmentParameters",
                 "policyAssignmentScope", "policyDefinitionName", "policyDefinitionAction",
                 "policyDefinitionCategory", "policySetDefinitionId", "policySetDefinitionName",
                 "policySetDefinitionOwner", "policySetDefinitionCategory",
                 "policySetDefinitionParameters", "policyDefinitionReferenceId",
                 "policyDefinitionGroupNames", "policyDefinitionVersion",
                 "policySetDefinitionVersion", "policyAssignmentVersion")
#: Every field of a policy state record, in the order the service sends them.
POLICY_STATE_FIELDS = ("timestamp", "resourceId", "policyAssignmentId", "policyDefinitionId",
                       "effectiveParameters", "isCompliant", "subscriptionId", "resourceType",
                       "resourceLocation", "resourceGroup", "resourceTags",
                       "policyAssignmentName", "policyAssignmentOwner",
                       "policyAssignmentParameters", "policyAssignmentScope",
                       "policyDefinitionName", "policyDefinitionAction",
                       "policyDefinitionCategory", "policySetDefinitionId",
                       "policySetDefinitionName", "policySetDefinitionOwner",
                       "policySetDefinitionCategory", "policySetDefinitionParameters",
                       "managementGroupIds", "policyDefinitionReferenceId", "complianceState",
                       "policyDefinitionGroupNames", "policyDefinitionVersion",
                       "policySetDefinitionVersion", "policyAssignmentVersion")

#: The resource manager's read bucket for one principal in one subscription (its token-bucket
#: throttling model): this many reads at once, refilled at :data:`READ_REFILL_PER_SECOND`.
READ_BUCKET = 250
READ_REFILL_PER_SECOND = 25.0
#: The same for writes (PUT, PATCH, DELETE).
WRITE_BUCKET = 200
WRITE_REFILL_PER_SECOND = 10.0

#: The quotas resource providers keep of their own, besides the resource manager's buckets: the
#: name their answers count it under (``x-ms-ratelimit-remaining-policy-insights-requests``, or
#: with ``subscription-`` or ``tenant-`` before the name) -> the provider's service word (its
#: requests are those under ``/providers/<namespace>.<word>/``).
PROVIDER_QUOTAS = {"policy-insights": "PolicyInsights"}
#: The policy-insights provider's quota per caller, in its bucket: the provider publishes no
#: numbers. 150 is the fullest bucket its answers report: 149 left after a first request, in
#: recorded answers of 2021 and 2022 (Azure/azure-cli,
#: src/azure-cli/azure/cli/command_modules/policyinsights/tests/latest/recordings/
#: test_policy_insights.yaml and test_policy_insights_triggerscan.yaml).
POLICY_INSIGHTS_BUCKET = 150
#: Its refill, a choice: in the 2022 recording the count climbs back 3 to 4 in 30 s while the
#: same caller's other tests drew on it, so the refill is at least about 0.13 a second and no
#: more is known. One a second keeps a long read bound by this quota before the resource
#: manager's writes (10 a second), as users of other tools meet its 429s first. The client
#: starts from these numbers and follows the count each answer reports.
POLICY_INSIGHTS_REFILL_PER_SECOND = 1.0

# ------------------------------------------------------------------------------ Resource Graph
# The REST specification of ``POST /providers/{ns}.ResourceGraph/resources`` (2024-04-01:
# ``QueryRequest``, ``QueryRequestOptions``, ``QueryResponse``, ``Table``, ``ColumnDataType``)
# and the service's documentation of its limits and quota.

#: The query's path below the resource manager, after the provider namespace word.
RESOURCE_GRAPH_PATH = "ResourceGraph/resources"
#: ``options.$top``: 1 to this many rows a page (``minimum``/``maximum`` of the schema); a
#: page holds this many by default.
RESOURCE_GRAPH_PAGE_MAX = 1000
#: Where an answer names the next page (``QueryResponse.$skipToken``), and the request takes it
#: back (``QueryRequestOptions.$skipToken``): only when the query projects ``id``.
RESOURCE_GRAPH_SKIP_TOKEN_KEY = "$skipToken"
#: ``options.resultFormat`` (``ResultFormat``): ``objectArray`` is the default; ``table`` gives
#: ``data.columns`` (name and type) with ``data.rows``.
RESOURCE_GRAPH_RESULT_FORMATS = ("objectArray", "table")
#: ``ColumnDataType``: the types of ``data.columns`` in the ``table`` format.
RESOURCE_GRAPH_COLUMN_TYPES = ("string", "integer", "number", "boolean", "object", "datetime")
#: ``options.authorizationScopeFilter`` (``AuthorizationScopeFilter``), the default first.
RESOURCE_GRAPH_SCOPE_FILTERS = ("AtScopeAndBelow", "AtScopeAndAbove", "AtScopeExact",
                                "AtScopeAboveAndBelow")
#: The most subscriptions the vendor's command-line tools send in one request; the toolkit sends
#: no more in one batch.
RESOURCE_GRAPH_SUBSCRIPTION_BATCH = 1000
#: The tables the toolkit's documentation and the sandbox cover (the service has more).
RESOURCE_GRAPH_TABLES = ("resources", "resourcecontainers", "policyresources")
#: The ``type`` of a policy state in ``policyresources``, after the namespace word (lower case,
#: as the table writes types).
RESOURCE_GRAPH_POLICY_STATES_TYPE = "policyinsights/policystates"
#: The user quota: this many queries in each window of
#: :data:`RESOURCE_GRAPH_QUOTA_WINDOW_SECONDS` seconds, per user.
RESOURCE_GRAPH_QUOTA = 15
RESOURCE_GRAPH_QUOTA_WINDOW_SECONDS = 5.0
#: The quota's headers, after the cloud's header prefix: what is left of the window, and when
#: it starts again (``hh:mm:ss``).
RESOURCE_GRAPH_QUOTA_HEADERS = ("user-quota-remaining", "user-quota-resets-after")
