"""One declared schema per public function: columns, dtypes, categories.

Column names are the service's field names, nested objects flattened with ``.`` and the resource
envelope's ``properties.`` prefix dropped; columns the toolkit adds are snake_case. Code builds
frames from these schemas and tests check frames against them.

Column kinds: ``string``, ``category`` (documented values first, undocumented ones kept after
them), ``datetime`` (UTC), ``Int64``, ``exactint`` (64-bit identifiers, never floats), ``float``,
``boolean``, ``timedelta`` (seconds in the body), ``list``, ``object`` (nested JSON kept as is),
``secret`` (masked :class:`~toolkit._core.secrets.Secret`), ``geometry``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from pandas.api.extensions import ExtensionDtype

from toolkit._core.secretarray import SecretDtype
from toolkit._spec.arm import COMPLIANCE_STATES, HEALTH_STATES
from toolkit._spec.clouds import NEUTRAL_WORDS, REAL_WORDS
from toolkit._spec.fabric import ITEM_TYPES, PRINCIPAL_TYPES
from toolkit._spec.graph import CA_POLICY_STATES, STRENGTH_POLICY_TYPES, STRENGTH_REQUIREMENTS
from toolkit._spec.maps import (
    AIR_QUALITY_CATEGORIES,
    ALERT_STATUSES,
    AUTOCOMPLETE_TYPE_GROUPS,
    AUTOCOMPLETE_TYPES,
    DOMINANT_POLLUTANTS,
    GEOCODE_CONFIDENCE,
    GEOCODE_TYPES,
    INCIDENT_SEVERITIES,
    INCIDENT_TYPES,
    POLLUTANT_TYPES,
    TRAFFIC_CONGESTION,
)

#: SQL server key types, in the neutral and the real clouds' words.
SERVER_KEY_TYPES = ("ServiceManaged", NEUTRAL_WORDS.key_vault_type, REAL_WORDS.key_vault_type)

__all__ = ["SCHEMAS", "Col", "Schema", "schema_for"]


@dataclass(frozen=True)
class Col:
    """A declared column.

    Parameters
    ----------
    name : str
        Column name in the frame.
    kind : str
        One of the kinds listed in the module docstring.
    path : str, optional
        Dotted path of the field in a record, when it differs from ``name``.
    categories : tuple of str
        The documented values of a ``category`` column, in order.
    ordered : bool
        Whether the categories have an order.
    secret_label : str
        What a ``secret`` column holds.
    """

    name: str
    kind: str
    path: str | None = None
    categories: tuple[str, ...] = ()
    ordered: bool = False
    secret_label: str = "secret"

    @property
    def source(self) -> tuple[str, ...]:
        """The path of keys to the value inside a record."""
        return tuple((self.path or self.name).split("."))

    def dtype(self) -> ExtensionDtype | str:
        """The pandas dtype this column has in a frame."""
        dtypes: dict[str, ExtensionDtype | str] = {
            "string": pd.StringDtype(),
            "category": pd.CategoricalDtype(list(self.categories), ordered=self.ordered),
            "datetime": pd.DatetimeTZDtype("ns", "UTC"),
            "Int64": pd.Int64Dtype(),
            "exactint": pd.Int64Dtype(),
            "float": "float64",
            "boolean": pd.BooleanDtype(),
            "timedelta": "timedelta64[ns]",
            "secret": SecretDtype(),
        }
        return dtypes.get(self.kind, "object")


@dataclass(frozen=True)
class Schema:
    """The columns of one function's frame."""

    name: str
    columns: tuple[Col, ...]
    geometry: str | None = None

    @property
    def names(self) -> list[str]:
        """Column names in order."""
        return [c.name for c in self.columns]

    def __getitem__(self, name: str) -> Col:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)


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

SCHEMAS: dict[str, Schema] = {
    s.name: s for s in (BACKEND_HEALTH, NAME_AVAILABILITY, SQL_OPERATIONS)
}


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

SCHEMAS.update({s.name: s for s in (ENCRYPTION_PROTECTOR, PROBLEM_CLASSIFICATIONS,
                                    SUPPORT_SERVICES, MONITORING_CREDENTIALS,
                                    HOSTED_CREDENTIALS)})



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

SCHEMAS.update({s.name: s for s in (POLICY_STATES, EVALUATED_EXPRESSIONS)})

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

SCHEMAS.update({s.name: s for s in (MANAGEMENT_GROUPS, MANAGEMENT_GROUP_TREE, SUBSCRIPTIONS,
                                    RESOURCE_GROUPS, POLICY_SUMMARY)})




STRENGTH_USAGE = Schema(
    "authentication_strength_usage",
    (
        Col("policy_id", "string"),
        Col("requirement", "category", categories=STRENGTH_REQUIREMENTS),
        Col("displayName", "string"),
        Col("id", "string"),
        Col("state", "category", categories=CA_POLICY_STATES),
        Col("grantControls.operator", "category", categories=("AND", "OR")),
        Col("grantControls.authenticationStrength.id", "string"),
        Col("grantControls.controls", "list"),
        Col("grantControls.builtInControls", "list"),
        Col("error", "string"),
    ),
)

STRENGTH_POLICIES = Schema(
    "authentication_strength_policies",
    (
        Col("id", "string"),
        Col("displayName", "string"),
        Col("description", "string"),
        Col("policyType", "category", categories=STRENGTH_POLICY_TYPES),
        Col("requirementsSatisfied", "category", categories=STRENGTH_REQUIREMENTS),
        Col("allowedCombinations", "list"),
        Col("createdDateTime", "datetime"),
        Col("modifiedDateTime", "datetime"),
    ),
)

STRENGTH_AUDIT = Schema(
    "authentication_strength_audit",
    (
        Col("policy_id", "string"),
        Col("policy_name", "string"),
        Col("policy_type", "category", categories=STRENGTH_POLICY_TYPES),
        Col("requirement", "category", categories=STRENGTH_REQUIREMENTS),
        Col("displayName", "string"),
        Col("id", "string"),
        Col("state", "category", categories=CA_POLICY_STATES),
        Col("grantControls.controls", "list"),
        Col("blocks_mfa_weakening", "boolean"),
        Col("error", "string"),
    ),
)


EVENTSTREAM = Schema(
    "create_eventstream",
    (
        Col("id", "string"),
        Col("displayName", "string"),
        Col("description", "string"),
        Col("type", "category", categories=ITEM_TYPES),
        Col("workspaceId", "string"),
        Col("folderId", "string"),
        Col("sensitivityLabel.id", "string"),
        Col("tags", "object"),
        Col("defaultIdentity.id", "string"),
        Col("defaultIdentity.displayName", "string"),
        Col("defaultIdentity.type", "category", categories=PRINCIPAL_TYPES),
        Col("operation_id", "string"),
    ),
)

EVENTSTREAMS = Schema(
    "create_eventstreams",
    (
        Col("input_index", "Int64"),
        *EVENTSTREAM.columns,
        Col("status", "category", categories=("Succeeded", "Running", "Failed", "Invalid")),
        Col("error_code", "string"),
        Col("error", "string"),
    ),
)

SCHEMAS.update({s.name: s for s in (STRENGTH_USAGE, STRENGTH_POLICIES, STRENGTH_AUDIT,
                                    EVENTSTREAM, EVENTSTREAMS)})


_ADDRESS = (
    Col("address.formattedAddress", "string"),
    Col("address.addressLine", "string"),
    Col("address.streetName", "string"),
    Col("address.streetNumber", "string"),
    Col("address.neighborhood", "string"),
    Col("address.locality", "string"),
    Col("address.postalCode", "string"),
    Col("address.adminDistricts", "list"),
    Col("admin_district_1", "string"),
    Col("admin_district_2", "string"),
    Col("address.countryRegion.ISO", "string"),
    Col("address.countryRegion.name", "string"),
    Col("address.intersection", "object"),
)

AUTOCOMPLETE = Schema(
    "autocomplete",
    (
        Col("query", "string"),
        Col("rank", "Int64"),
        Col("typeGroup", "category", categories=AUTOCOMPLETE_TYPE_GROUPS),
        Col("type", "category", categories=AUTOCOMPLETE_TYPES),
        Col("name", "string"),
        *_ADDRESS,
        Col("geometry", "geometry"),
    ),
    geometry="geometry",
)

GEOCODE = Schema(
    "geocode",
    (
        Col("query", "string"),
        Col("rank", "Int64"),
        Col("type", "category", categories=GEOCODE_TYPES),
        Col("confidence", "category", categories=GEOCODE_CONFIDENCE, ordered=True),
        Col("matchCodes", "list"),
        *_ADDRESS,
        Col("geocodePoints", "list"),
        Col("bbox", "list"),
        Col("geometry", "geometry"),
    ),
    geometry="geometry",
)

#: What a location given by name resolved to (added to the frames of the functions that take
#: locations): the name asked and the formatted address of geocode's top match.
_PLACE = (Col("place", "string"), Col("place_address", "string"))

ROUTE_DIRECTIONS = Schema(
    "route_directions",
    (
        Col("query_index", "Int64"),
        Col("optionalId", "string"),
        Col("origin_place", "string"),
        Col("destination_place", "string"),
        Col("route_index", "Int64"),
        Col("type", "string"),
        Col("resourceId", "string"),
        Col("distanceInMeters", "float"),
        Col("durationInSeconds", "Int64"),
        Col("durationTrafficInSeconds", "Int64"),
        Col("departureAt", "datetime"),
        Col("arrivalAt", "datetime"),
        Col("trafficCongestion", "category", categories=TRAFFIC_CONGESTION),
        Col("leg_count", "Int64"),
        Col("legs", "list"),
        Col("error.code", "string"),
        Col("error.message", "string"),
        Col("geometry", "geometry"),
    ),
    geometry="geometry",
)

SNAP_TO_ROADS = Schema(
    "snap_to_roads",
    (
        Col("inputIndex", "Int64"),
        Col("isInterpolated", "boolean"),
        Col("name", "string"),
        Col("speedLimitInKilometersPerHour", "float"),
        Col("geometry", "geometry"),
    ),
    geometry="geometry",
)

TRAFFIC_INCIDENTS = Schema(
    "traffic_incidents",
    (
        Col("id", "exactint"),
        Col("incidentType", "category", categories=INCIDENT_TYPES),
        Col("severity", "category", categories=INCIDENT_SEVERITIES, ordered=True),
        Col("severity_level", "Int64"),
        Col("title", "string"),
        Col("description", "string"),
        Col("delay", "timedelta"),
        Col("startTime", "datetime"),
        Col("endTime", "datetime"),
        Col("lastModifiedTime", "datetime"),
        Col("isRoadClosed", "boolean"),
        Col("isTrafficJam", "boolean"),
        Col("endPoint", "geometry"),
        Col("geometry", "geometry"),
    ),
    geometry="geometry",
)

SCHEMAS.update({s.name: s for s in (AUTOCOMPLETE, GEOCODE, ROUTE_DIRECTIONS, SNAP_TO_ROADS,
                                    TRAFFIC_INCIDENTS)})



_AQ_COMMON = (
    Col("dateTime", "datetime"),
    Col("globalIndex", "float"),
    Col("index", "float"),
    Col("category", "category", categories=AIR_QUALITY_CATEGORIES, ordered=True),
    Col("categoryColor", "string"),
    Col("dominantPollutant", "category", categories=DOMINANT_POLLUTANTS),
    Col("description", "string"),
)
_LOCATION_ERROR = (Col("error.code", "string"), Col("error.message", "string"))

AIR_QUALITY = Schema(
    "air_quality",
    (Col("location_index", "Int64"), *_PLACE, *_AQ_COMMON, Col("pollutants", "list"),
     *_LOCATION_ERROR, Col("geometry", "geometry")),
    geometry="geometry",
)

AIR_QUALITY_POLLUTANTS = Schema(
    "air_quality_pollutants",
    (
        Col("location_index", "Int64"),
        Col("dateTime", "datetime"),
        Col("type", "category", categories=POLLUTANT_TYPES),
        Col("name", "string"),
        Col("concentration.value", "float"),
        Col("concentration.unit", "string"),
        Col("concentration.unitType", "Int64"),
        Col("unit_type_name", "string"),
        Col("index", "float"),
        Col("globalIndex", "float"),
        Col("is_dominant", "boolean"),
        Col("geometry", "geometry"),
    ),
    geometry="geometry",
)

AIR_QUALITY_FORECAST = Schema(
    "air_quality_forecast",
    (Col("location_index", "Int64"), *_PLACE, Col("day", "Int64"), *_AQ_COMMON,
     *_LOCATION_ERROR, Col("geometry", "geometry")),
    geometry="geometry",
)

SEVERE_WEATHER_ALERTS = Schema(
    "severe_weather_alerts",
    (
        Col("location_index", "Int64"),
        *_PLACE,
        Col("alert_rank", "Int64"),
        Col("countryCode", "string"),
        Col("alertId", "Int64"),
        Col("description.english", "string"),
        Col("description.localized", "string"),
        Col("category", "string"),
        Col("priority", "Int64"),
        Col("class", "string"),
        Col("level", "string"),
        Col("source", "string"),
        Col("sourceId", "Int64"),
        Col("disclaimer", "string"),
        Col("area_index", "Int64"),
        Col("name", "string"),
        Col("summary", "string"),
        Col("startTime", "datetime"),
        Col("start_offset", "timedelta"),
        Col("endTime", "datetime"),
        Col("end_offset", "timedelta"),
        Col("latestStatus.english", "category", categories=ALERT_STATUSES),
        Col("latestStatus.localized", "string"),
        Col("alertDetails", "string"),
        Col("alertDetailsLanguageCode", "string"),
        *_LOCATION_ERROR,
        Col("geometry", "geometry"),
    ),
    geometry="geometry",
)

SCHEMAS.update({s.name: s for s in (AIR_QUALITY, AIR_QUALITY_POLLUTANTS, AIR_QUALITY_FORECAST,
                                    SEVERE_WEATHER_ALERTS)})

def schema_for(function: str) -> Schema:
    """The declared schema of a public function's frame."""
    return SCHEMAS[function]
