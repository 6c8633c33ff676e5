"""The declared schemas of the resource-management operations' frames.

The modules of :mod:`toolkit.arm` share these (the policy states' columns serve the policy read,
the dask engine, the history store and the aggregates), so they sit in the family, apart from
the functions; each function's module declares its operation's record with its schema.
"""

from __future__ import annotations

from toolkit._core.schemas import Col, Schema
from toolkit._spec.arm import COMPLIANCE_STATES, HEALTH_STATES
from toolkit._spec.clouds import NEUTRAL_WORDS, REAL_WORDS

__all__ = [
    "APPLICATION_GATEWAYS",
    "BACKEND_HEALTH",
    "ENCRYPTION_PROTECTOR",
    "EVALUATED_EXPRESSIONS",
    "HEALTH_ORDER",
    "HOSTED_CREDENTIALS",
    "MANAGED_CLUSTERS",
    "MANAGEMENT_GROUPS",
    "MANAGEMENT_GROUP_TREE",
    "MONITORING_CREDENTIALS",
    "NAME_AVAILABILITY",
    "OPENSHIFT_CLUSTERS",
    "POLICY_STATES",
    "POLICY_SUMMARY",
    "PROBLEM_CLASSIFICATIONS",
    "RESOURCE_GROUPS",
    "SERVER_KEY_TYPES",
    "SQL_OPERATIONS",
    "SQL_SERVERS",
    "SUBSCRIPTIONS",
    "SUMMARY_LEVELS",
    "SUPPORT_SERVICES",
    "SYSTEM_DATA",
]

#: SQL server key types: ``ServiceManaged`` or a vault key, in either vocabulary (the
#: connection's cloud's word is sent: ``AzureKeyVault`` in a real cloud, ``VendorKeyVault`` in
#: the neutral one).
SERVER_KEY_TYPES = ("ServiceManaged", NEUTRAL_WORDS.key_vault_type, REAL_WORDS.key_vault_type)


def _id_name(prefix: str) -> tuple[Col, ...]:
    return (Col(f"{prefix}.id", "string"), Col(f"{prefix}.name", "string"))


SYSTEM_DATA = (
    Col("systemData.createdAt", "datetime"),
    Col("systemData.createdBy", "string"),
    Col("systemData.createdByType", "category",
        categories=("User", "Application", "ManagedIdentity", "Key")),
    Col("systemData.lastModifiedAt", "datetime"),
    Col("systemData.lastModifiedBy", "string"),
    Col("systemData.lastModifiedByType", "category",
        categories=("User", "Application", "ManagedIdentity", "Key")),
)

HEALTH_ORDER = HEALTH_STATES

BACKEND_HEALTH = Schema(
    "backend_health",
    (
        *_id_name("backendAddressPool"),
        *_id_name("backendHttpSettings"),
        Col("backendHttpSettings.port", "Int64"),
        Col("backendHttpSettings.protocol", "category", categories=("Http", "Https", "Tcp", "Tls")),
        Col("backendHttpSettings.requestTimeout", "Int64"),
        Col("backendHttpSettings.pickHostNameFromBackendAddress", "boolean"),
        Col("address", "string"),
        Col("health", "category", categories=HEALTH_ORDER, ordered=True),
        Col("healthProbeLog", "string"),
        Col("ipConfiguration.id", "string"),
    ),
)

NAME_AVAILABILITY = Schema(
    "check_server_names",
    (
        Col("name", "string"),
        Col("available", "boolean"),
        Col("reason", "category", categories=("Invalid", "AlreadyExists")),
        Col("message", "string"),
        Col("answered_by", "category", categories=("service", "toolkit")),
        Col("error", "string"),
    ),
)

SQL_OPERATIONS = Schema(
    "sql_operations",
    (
        Col("name", "string"),
        Col("isDataAction", "boolean"),
        Col("display.provider", "string"),
        Col("display.resource", "string"),
        Col("display.operation", "string"),
        Col("display.description", "string"),
        Col("origin", "category", categories=("user", "system", "user,system")),
        Col("properties", "object"),
    ),
)


ENCRYPTION_PROTECTOR = Schema(
    "update_encryption_protector",
    (
        Col("id", "string"),
        Col("name", "string"),
        Col("type", "string"),
        Col("kind", "string"),
        Col("location", "string"),
        Col("autoRotationEnabled", "boolean", path="properties.autoRotationEnabled"),
        Col("keyVersion", "string", path="properties.keyVersion"),
        Col("serverKeyName", "string", path="properties.serverKeyName"),
        Col("serverKeyType", "category", path="properties.serverKeyType",
            categories=SERVER_KEY_TYPES),
        Col("subregion", "string", path="properties.subregion"),
        Col("thumbprint", "string", path="properties.thumbprint"),
        Col("uri", "string", path="properties.uri"),
        *SYSTEM_DATA,
        Col("server", "string"),
    ),
)

PROBLEM_CLASSIFICATIONS = Schema(
    "problem_classifications",
    (
        Col("id", "string"),
        Col("name", "string"),
        Col("type", "string"),
        Col("displayName", "string", path="properties.displayName"),
        Col("secondaryConsentEnabled", "list", path="properties.secondaryConsentEnabled"),
        *SYSTEM_DATA,
        Col("service_name", "string"),
    ),
)

SUPPORT_SERVICES = Schema(
    "support_services",
    (
        Col("id", "string"),
        Col("name", "string"),
        Col("type", "string"),
        Col("displayName", "string", path="properties.displayName"),
        Col("resourceTypes", "list", path="properties.resourceTypes"),
    ),
)

MONITORING_CREDENTIALS = Schema(
    "cluster_monitoring_credentials",
    (
        Col("name", "string"),
        Col("value", "secret", secret_label="kubeconfig"),
        Col("cluster_name", "string"),
        Col("server_url", "string"),
        Col("context", "string"),
        Col("user_name", "string"),
        Col("auth_kind", "category",
            categories=("token", "client-certificate", "exec", "basic", "auth-provider")),
    ),
)

HOSTED_CREDENTIALS = Schema(
    "hosted_cluster_credentials",
    (
        Col("kubeadminUsername", "string"),
        Col("kubeadminPassword", "secret", secret_label="password"),
    ),
)


POLICY_STATES = Schema(
    "policy_states",
    (
        Col("timestamp", "datetime"),
        Col("resourceId", "category"),
        Col("policyAssignmentId", "category"),
        Col("policyDefinitionId", "category"),
        Col("effectiveParameters", "category"),
        Col("isCompliant", "boolean"),
        Col("subscriptionId", "category"),
        Col("resourceType", "category"),
        Col("resourceLocation", "category"),
        Col("resourceGroup", "category"),
        Col("resourceTags", "category"),
        Col("policyAssignmentName", "category"),
        Col("policyAssignmentOwner", "category"),
        Col("policyAssignmentParameters", "category"),
        Col("policyAssignmentScope", "category"),
        Col("policyDefinitionName", "category"),
        Col("policyDefinitionAction", "category"),
        Col("policyDefinitionCategory", "category"),
        Col("policySetDefinitionId", "category"),
        Col("policySetDefinitionName", "category"),
        Col("policySetDefinitionOwner", "category"),
        Col("policySetDefinitionCategory", "category"),
        Col("policySetDefinitionParameters", "category"),
        Col("managementGroupIds", "category"),
        Col("policyDefinitionReferenceId", "category"),
        Col("complianceState", "category", categories=COMPLIANCE_STATES, ordered=True),
        Col("policyDefinitionGroupNames", "list"),
        Col("policyDefinitionVersion", "category"),
        Col("policySetDefinitionVersion", "category"),
        Col("policyAssignmentVersion", "category"),
        Col("components", "object"),
        Col("policyEvaluationDetails", "object"),
    ),
)

EVALUATED_EXPRESSIONS = Schema(
    "evaluated_expressions",
    (
        Col("record", "Int64"),
        Col("timestamp", "datetime"),
        Col("resourceId", "category"),
        Col("policyAssignmentName", "category"),
        Col("policyDefinitionName", "category"),
        Col("policyDefinitionReferenceId", "category"),
        Col("complianceState", "category", categories=COMPLIANCE_STATES, ordered=True),
        Col("result", "category", categories=("True", "False", "NotApplicable")),
        Col("expressionKind", "category", categories=("Field", "Value", "Count")),
        Col("expression", "string"),
        Col("path", "string"),
        Col("operator", "category"),
        Col("expressionValue", "object"),
        Col("targetValue", "object"),
    ),
)


MANAGEMENT_GROUPS = Schema(
    "management_groups",
    (
        Col("id", "string"),
        Col("name", "string"),
        Col("type", "string"),
        Col("displayName", "string", path="properties.displayName"),
        Col("tenantId", "string", path="properties.tenantId"),
    ),
)

SUBSCRIPTIONS = Schema(
    "subscriptions",
    (
        Col("id", "string"),
        Col("subscriptionId", "string"),
        Col("displayName", "string"),
        Col("state", "category", categories=("Enabled", "Warned", "PastDue", "Disabled",
                                              "Deleted")),
        Col("tenantId", "string"),
        Col("authorizationSource", "string"),
        Col("subscriptionPolicies.quotaId", "string"),
        Col("subscriptionPolicies.spendingLimit", "category",
            categories=("On", "Off", "CurrentPeriodOff")),
    ),
)

RESOURCE_GROUPS = Schema(
    "resource_groups",
    (
        Col("id", "string"),
        Col("name", "string"),
        Col("type", "string"),
        Col("location", "category"),
        Col("tags", "object"),
        Col("provisioningState", "string", path="properties.provisioningState"),
        Col("managedBy", "string"),
        Col("subscription_id", "string"),
    ),
)

MANAGEMENT_GROUP_TREE = Schema(
    "management_group_tree",
    (
        Col("id", "string"),
        Col("name", "string"),
        Col("type", "string"),
        Col("displayName", "string"),
        Col("parent_id", "string"),
        Col("depth", "Int64"),
        Col("path", "string"),
    ),
)

#: Levels of a policy summary, outermost first.
SUMMARY_LEVELS = ("scope", "assignment", "definition", "group")
_SUMMARY_COUNTS = tuple(
    Col(f"{what}_{state}", "Int64")
    for what in ("resources", "policies", "groups")
    for state in ("compliant", "noncompliant", "conflict", "exempt", "unknown"))

POLICY_SUMMARY = Schema(
    "policy_summary",
    (
        Col("level", "category", categories=SUMMARY_LEVELS, ordered=True),
        Col("policyAssignmentId", "category"),
        Col("policyAssignmentName", "category"),
        Col("policySetDefinitionId", "category"),
        Col("policyDefinitionId", "category"),
        Col("policyDefinitionReferenceId", "category"),
        Col("policyDefinitionGroupNames", "list"),
        Col("policyGroupName", "category"),
        Col("effect", "category"),
        Col("nonCompliantResources", "Int64"),
        Col("nonCompliantPolicies", "Int64"),
        *_SUMMARY_COUNTS,
        Col("queryResultsUri", "string"),
    ),
)


#: The provisioning states of a tracked resource (the providers' common values; others kept).
PROVISIONING_STATES = ("Succeeded", "Updating", "Creating", "Deleting", "Failed", "Canceled")


def _tracked(*columns: Col) -> tuple[Col, ...]:
    """Give a tracked resource's envelope, its own columns, then where it lives (its id's)."""
    return (Col("id", "string"), Col("name", "string"), Col("type", "string"),
            Col("location", "category"), Col("tags", "object"), *columns,
            Col("subscription_id", "string"), Col("resource_group", "string"))


SQL_SERVERS = Schema(
    "sql_servers",
    _tracked(
        Col("kind", "string"),
        Col("fullyQualifiedDomainName", "string", path="properties.fullyQualifiedDomainName"),
        Col("version", "string", path="properties.version"),
        Col("state", "string", path="properties.state"),
        Col("administratorLogin", "string", path="properties.administratorLogin"),
        Col("publicNetworkAccess", "category", path="properties.publicNetworkAccess",
            categories=("Enabled", "Disabled", "SecuredByPerimeter")),
        Col("minimalTlsVersion", "string", path="properties.minimalTlsVersion"),
    ),
)

APPLICATION_GATEWAYS = Schema(
    "application_gateways",
    _tracked(
        Col("provisioningState", "category", path="properties.provisioningState",
            categories=PROVISIONING_STATES),
        Col("operationalState", "category", path="properties.operationalState",
            categories=("Stopped", "Starting", "Running", "Stopping")),
        Col("sku.name", "string", path="properties.sku.name"),
        Col("sku.tier", "string", path="properties.sku.tier"),
        Col("sku.capacity", "Int64", path="properties.sku.capacity"),
        Col("backendAddressPools", "list", path="properties.backendAddressPools"),
    ),
)

MANAGED_CLUSTERS = Schema(
    "managed_clusters",
    _tracked(
        Col("provisioningState", "category", path="properties.provisioningState",
            categories=PROVISIONING_STATES),
        Col("powerState.code", "category", path="properties.powerState.code",
            categories=("Running", "Stopped")),
        Col("kubernetesVersion", "string", path="properties.kubernetesVersion"),
        Col("currentKubernetesVersion", "string", path="properties.currentKubernetesVersion"),
        Col("dnsPrefix", "string", path="properties.dnsPrefix"),
        Col("fqdn", "string", path="properties.fqdn"),
        Col("privateFQDN", "string", path="properties.privateFQDN"),
        Col("apiServerAccessProfile.enablePrivateCluster", "boolean",
            path="properties.apiServerAccessProfile.enablePrivateCluster"),
        Col("nodeResourceGroup", "string", path="properties.nodeResourceGroup"),
        Col("agentPoolProfiles", "list", path="properties.agentPoolProfiles"),
    ),
)

OPENSHIFT_CLUSTERS = Schema(
    "openshift_clusters",
    _tracked(
        Col("provisioningState", "category", path="properties.provisioningState",
            categories=("AdminUpdating", "Canceled", "Creating", "Deleting", "Failed",
                        "Succeeded", "Updating")),
        Col("clusterProfile.version", "string", path="properties.clusterProfile.version"),
        Col("clusterProfile.domain", "string", path="properties.clusterProfile.domain"),
        Col("consoleProfile.url", "string", path="properties.consoleProfile.url"),
        Col("apiserverProfile.visibility", "category",
            path="properties.apiserverProfile.visibility", categories=("Private", "Public")),
        Col("apiserverProfile.url", "string", path="properties.apiserverProfile.url"),
        *SYSTEM_DATA,
    ),
)
