"""The sandbox describes itself: an OpenAPI 3.1 document of every route it serves.

``GET /openapi.json`` answers the document, the one path the sandbox serves without
authentication (a description holds no data). It is built from the sandbox's own router, so it
lists exactly what the sandbox answers: each route's method and path (with the sandbox's
namespace word), its family, the ``api-version`` values it accepts, the query parameters and
request body of the operation, and its responses.

Where the real services' specifications cover an operation, the parameters, request bodies and
success response schemas are theirs: excerpts of them (Swagger 2.0) ship in ``openapi_data/`` and
are converted to OpenAPI 3.1 here. Two rules of the real services are applied while converting
(see the notes beside the shared examples): every optional field may be ``null``, and every error
answer has the family's error body (ARM and maps ``{"error": {...}}``, graph with
``innerError``, fabric the flat ``errorCode``/``requestId``).

Path parameters carry an ``example`` from the sandbox's world (a subscription, gateway,
server... that exists), so a reader, or an API fuzzer, can try a call that finds something.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit._spec.clouds import NEUTRAL_WORDS
from toolkit.sandbox.http import Handler, Reply, Request, Route, Router

if TYPE_CHECKING:
    from toolkit.sandbox.server import Sandbox

__all__ = ["OPENAPI_PATH", "WITHOUT_EXCERPT", "build_document", "register"]

#: Where the sandbox serves its description (without authentication).
OPENAPI_PATH = "/openapi.json"

_DATA = Path(__file__).with_name("openapi_data")


@dataclass(frozen=True)
class _Source:
    """Where a route's operation is described in the shipped specification excerpts."""

    file: str
    path: str
    method: str
    #: success statuses whose schema this route's answers follow (another operation's, for a
    #: route that answers what that operation started)
    statuses: tuple[str, ...] | None = None


_SQL = "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/Vendor.Sql/" \
       "servers/{serverName}/encryptionProtector/{encryptionProtectorName}"
_FABRIC = "17-fabric-create-eventstream"
_MATRIX = "30-maps-route-matrix"

#: Route name -> the specification excerpt that covers it.
_SOURCES: dict[str, _Source] = {
    "backend_health": _Source(
        "01-backend-health", "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}"
        "/providers/Vendor.Network/applicationGateways/{applicationGatewayName}/backendhealth",
        "post"),
    "encryption_protector_update": _Source("02-sql-encryption-protector", _SQL, "put"),
    "encryption_protector_get": _Source("02-sql-encryption-protector", _SQL, "put", ("200",)),
    "check_name": _Source("03-sql-check-name-availability",
                          "/subscriptions/{subscriptionId}/providers/Vendor.Sql/"
                          "checkNameAvailability", "post"),
    "sql_operations": _Source("04-sql-operations-list", "/providers/Vendor.Sql/operations", "get"),
    "policy_states": _Source(
        "05-policy-states", "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}"
        "/providers/Vendor.PolicyInsights/policyStates/{policyStatesResource}/queryResults",
        "post"),
    "problem_classifications": _Source(
        "06-support-problem-classifications",
        "/providers/Vendor.Support/services/{serviceName}/problemClassifications", "get"),
    "cluster_monitoring_credentials": _Source(
        "07-cluster-monitoring-credentials",
        "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/"
        "Vendor.ContainerService/managedClusters/{resourceName}/listClusterMonitoringUserCredential",
        "post"),
    "hosted_cluster_credentials": _Source(
        "08-hosted-cluster-credentials",
        "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/"
        "Vendor.HostedClusterProvider/hostedClusters/{resourceName}/listCredentials", "post"),
    "resource_graph": _Source("22-resource-graph", "/providers/Vendor.ResourceGraph/resources",
                              "post"),
    "autocomplete": _Source("09-maps-geocode-autocomplete", "/geocode:autocomplete", "get"),
    "geocode": _Source("21-maps-geocode", "/geocode", "get"),
    "reverse_geocode": _Source("28-maps-reverse-geocode", "/reverseGeocode", "get"),
    "reverse_geocode_batch": _Source("28-maps-reverse-geocode", "/reverseGeocode:batch", "post"),
    "route_directions_batch": _Source("10-maps-route-directions-batch",
                                      "/route/directions:batch", "post"),
    "snap_to_roads": _Source("11-maps-snap-to-roads", "/route/snapToRoads", "post"),
    "route_matrix": _Source(_MATRIX, "/route/matrix", "post"),
    "route_matrix_async": _Source(_MATRIX, "/route/matrix:async", "post"),
    "route_operation_status": _Source(_MATRIX, "/route/operations/{id}", "get"),
    "route_operation_result": _Source(_MATRIX, "/route/operations/{id}/result", "get"),
    "route_range": _Source("31-maps-route-range", "/route/range", "post"),
    "traffic_incidents": _Source("12-maps-traffic-incident", "/traffic/incident", "get"),
    "air_quality": _Source("13-maps-weather-current-air-quality",
                           "/weather/airQuality/current/{format}", "get"),
    "severe_weather_alerts": _Source("14-maps-weather-severe-alerts",
                                     "/weather/severe/alerts/{format}", "get"),
    "air_quality_forecast": _Source("15-maps-weather-daily-air-quality-forecast",
                                    "/weather/airQuality/forecasts/daily/{format}", "get"),
    "air_quality_hourly_forecast": _Source("29-maps-weather-hourly-air-quality-forecast",
                                           "/weather/airQuality/forecasts/hourly/{format}",
                                           "get"),
    "authentication_strength_usage": _Source(
        "16-graph-authentication-strength-usage",
        "/policies/authenticationStrengthPolicies/{authenticationStrengthPolicyId}/usage", "get"),
    "create_eventstream": _Source(_FABRIC, "/workspaces/{workspaceId}/eventstreams", "post"),
    "fabric_operation_state": _Source(_FABRIC, "/operations/{operationId}", "get"),
    "fabric_operation_result": _Source(_FABRIC, "/operations/{operationId}/result", "get"),
}

#: Routes the toolkit's operations use that no shipped excerpt covers, and why; they are
#: described from the route alone (its path parameters, the family's errors, an open success
#: body). ``tests/test_operation_lists.py`` fails for a route an operation uses that is in
#: neither this table nor :data:`_SOURCES`.
WITHOUT_EXCERPT: dict[str, str] = {
    "arm_operation_status": "an operation URL the service hands out (the async header)",
    "arm_operation_result": "an operation URL the service hands out (Location)",
    "management_groups": "no excerpt of the management-groups API ships",
    "management_group": "no excerpt of the management-groups API ships",
    "subscriptions": "no excerpt of the subscriptions API ships",
    "resource_groups": "no excerpt of the resources API ships",
    "support_services": "no excerpt of the support services listing ships",
    "policy_summary": "no excerpt of the policy states summarize operation ships",
    "policy_states_resource": "the excerpt's resource-scope path takes the resource id as one "
                              "parameter ({resourceId}), where the route names its parts",
    "authentication_strength_policies": "no excerpt of the strength policies listing ships",
    "sql_servers": "no excerpt of the SQL servers listing ships",
    "application_gateways": "no excerpt of the application gateways listing ships",
    "managed_clusters": "no excerpt of the managed clusters listing ships",
    "openshift_clusters": "no excerpt of the OpenShift clusters listing ships",
    "fabric_workspaces": "no excerpt of the Fabric workspaces listing ships",
}

#: Routes whose answer is the result of an operation another route started (none: the result
#: is read from the resource's own URL, as ARM does after a PUT).
_OPERATION_RESULTS: dict[str, tuple[str, ...]] = {
    "arm_operation_result": ("backend_health",),
    "encryption_protector_operation": (),
}

#: Query parameters the sandbox reads that the excerpts do not list (its next links, mostly).
_EXTRA_QUERY: dict[str, list[dict[str, Any]]] = {
    "sql_operations": [{"name": "$skiptoken", "in": "query", "required": False,
                        "schema": {"type": "string"}}],
    "problem_classifications": [{"name": "$skiptoken", "in": "query", "required": False,
                                 "schema": {"type": "string"}}],
    "authentication_strength_usage": [
        {"name": "$skiptoken", "in": "query", "required": False, "schema": {"type": "string"}},
        {"name": "$top", "in": "query", "required": False,
         "schema": {"type": "integer", "minimum": 1}}],
    "authentication_strength_policies": [
        {"name": "$skiptoken", "in": "query", "required": False, "schema": {"type": "string"}},
        {"name": "$top", "in": "query", "required": False,
         "schema": {"type": "integer", "minimum": 1}}],
    **{f"{kind}{by}": [{"name": "$skiptoken", "in": "query", "required": False,
                        "schema": {"type": "string"}}]
       for kind in ("sql_servers", "application_gateways", "managed_clusters",
                    "openshift_clusters") for by in ("", "_by_group")},
    "fabric_workspaces": [
        {"name": "roles", "in": "query", "required": False,
         "description": "Only the workspaces where the caller has one of these roles "
                        "(comma-separated: Admin, Member, Contributor, Viewer).",
         "schema": {"type": "string"}},
        {"name": "continuationToken", "in": "query", "required": False,
         "schema": {"type": "string"}}],
}

#: Headers that carry credentials: described as security schemes, not as parameters.
_AUTH_HEADERS = {"authorization", "subscription-key", "client-id", "x-vendor-client-id"}

_SECURITY: dict[str, list[dict[str, list[str]]]] = {
    "arm": [{"bearer": []}],
    "graph": [{"bearer": []}],
    "fabric": [{"bearer": []}],
    "maps": [{"subscriptionKey": []}, {"sas": []}, {"bearer": [], "mapsClientId": []}],
}

_ERROR_DETAIL: dict[str, Any] = {
    "type": "object",
    "required": ["code", "message"],
    "properties": {
        "code": {"type": "string"},
        "message": {"type": "string"},
        "target": {"type": ["string", "null"]},
        "details": {"type": ["array", "null"], "items": {"type": "object"}},
    },
}

#: The error body of each family, as the sandbox (and the real services) answer it.
_ERRORS: dict[str, dict[str, Any]] = {
    "arm": {"type": "object", "required": ["error"],
            "properties": {"error": {"$ref": "#/components/schemas/ErrorDetail"}}},
    "maps": {"type": "object", "required": ["error"],
             "properties": {"error": {"$ref": "#/components/schemas/ErrorDetail"}}},
    "graph": {"type": "object", "required": ["error"], "properties": {"error": {
        "type": "object", "required": ["code", "message", "innerError"],
        "properties": {"code": {"type": "string"}, "message": {"type": "string"},
                       "innerError": {"type": "object",
                                      "required": ["date", "request-id"],
                                      "properties": {"date": {"type": "string"},
                                                     "request-id": {"type": "string"},
                                                     "client-request-id": {"type": "string"}}}}}}},
    "fabric": {"type": "object", "required": ["requestId", "errorCode", "message"],
               "properties": {"requestId": {"type": "string"}, "errorCode": {"type": "string"},
                              "message": {"type": "string"},
                              "isRetriable": {"type": "boolean"},
                              "moreDetails": {"type": "array", "items": {"type": "object"}},
                              "relatedResource": {"type": "object"}}},
}


# ---------------------------------------------------------------------- Swagger 2 -> OpenAPI 3.1
@cache
def _load(stem: str) -> dict[str, Any]:
    return json.loads((_DATA / f"{stem}.json").read_text(encoding="utf-8"))


def _prefix(stem: str) -> str:
    return re.sub(r"^\d+-", "", stem)


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """Make ``schema`` also admit ``null``."""
    t = schema.get("type")
    if isinstance(t, str) and "$ref" not in schema and "allOf" not in schema:
        out = dict(schema, type=[t, "null"])
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
        return out
    if isinstance(t, list):
        return schema if "null" in t else dict(schema, type=[*t, "null"])
    return {"anyOf": [schema, {"type": "null"}]}


_DROP = {"discriminator", "x-vendor-discriminator-value", "example", "x-vendor-examples",
         "x-nullable", "collectionFormat", "x-vendor-enum", "x-vendor-client-name",
         "x-vendor-parameter-location", "x-vendor-parameter-grouping", "x-vendor-secret",
         "x-vendor-identifiers", "x-vendor-mutability", "x-vendor-client-flatten",
         "x-vendor-azure-resource", "x-vendor-external", "x-vendor-client-default"}


def _schema(node: Any, stem: str, *, optional: bool = False) -> Any:
    """Translate a Swagger 2.0 schema into an OpenAPI 3.1 (JSON Schema 2020-12) one.

    ``#/definitions/X`` becomes ``#/components/schemas/<excerpt>.X``; ``x-nullable`` and
    optional properties admit ``null``; an extensible enumeration (``modelAsString``) lists its
    values without limiting them; ``type: file`` (any body) is left open.
    """
    if isinstance(node, list):
        return [_schema(v, stem) for v in node]
    if not isinstance(node, dict):
        return node
    nullable = bool(node.get("x-nullable")) or optional
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROP:
            continue
        if key == "$ref":
            if value.startswith("#/definitions/"):
                name = value.removeprefix("#/definitions/")
                if name in _load(stem).get("definitions", {}):
                    out["$ref"] = f"#/components/schemas/{_prefix(stem)}.{name}"
                # a model the excerpt leaves out stays open (any value)
            continue
        if key == "properties":
            required = set(node.get("required", []))
            out[key] = {name: _schema(sub, stem, optional=name not in required)
                        for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "not") and isinstance(value, dict):
            out[key] = _schema(value, stem)
        elif key in ("allOf", "anyOf", "oneOf"):
            out[key] = [_schema(v, stem) for v in value]
        elif key == "type" and value == "file":
            continue  # a "file" answer: any body
        else:
            out[key] = copy.deepcopy(value)
    if node.get("x-vendor-enum", {}).get("modelAsString") and "enum" in out:
        # an extensible enumeration: the documented values, not a limit (services add values)
        out["x-extensible-enum"] = out.pop("enum")
    return _nullable(out) if nullable else out


def _definitions(stem: str) -> dict[str, Any]:
    defs = _load(stem).get("definitions", {})
    return {f"{_prefix(stem)}.{name}": _schema(body, stem) for name, body in defs.items()}


def _resolve_parameter(param: dict[str, Any], stem: str) -> dict[str, Any] | None:
    if "$ref" in param:
        ref = param["$ref"]
        if not ref.startswith("#/parameters/"):
            return None  # the common ones (api-version, subscription, group) come from the route
        param = _load(stem).get("parameters", {}).get(ref.removeprefix("#/parameters/"))
        if param is None:
            return None
    return param


def _parameter(param: dict[str, Any], stem: str) -> dict[str, Any]:
    schema_keys = {k: v for k, v in param.items()
                   if k not in ("name", "in", "required", "description", "schema")}
    out: dict[str, Any] = {"name": param["name"], "in": param["in"],
                           "required": bool(param.get("required", False)),
                           "schema": _schema(schema_keys, stem)}
    if param.get("description"):
        out["description"] = param["description"]
    if param.get("type") == "array":
        out["style"], out["explode"] = "form", param.get("collectionFormat") == "multi"
    return out


def _media_types(stem: str, op: dict[str, Any], key: str) -> list[str]:
    """List the media types of an operation's answers (``produces``) or body (``consumes``)."""
    return list(op.get(key) or _load(stem).get(key) or ["application/json"])


def _operation_source(route: Route) -> tuple[str | None, dict[str, Any] | None]:
    src = _SOURCES.get(route.name)
    if src is None:
        return None, None
    op = _load(src.file)["paths"][src.path][src.method]
    return src.file, op


# ---------------------------------------------------------------------- the document
#: Places of the maps world (longitude, latitude): Andorra la Vella and Encamp.
_TOWNS = ((1.5218, 42.5075), (1.5804, 42.5345))

#: Example query values (OpenAPI ``example``) that find something in the world.
_QUERY_EXAMPLES: dict[str, dict[str, Any]] = {
    "autocomplete": {"query": "Can", "coordinates": list(_TOWNS[1]), "top": 5},
    "geocode": {"query": "Ordino", "top": 5},
    "reverse_geocode": {"coordinates": list(_TOWNS[1])},
    "traffic_incidents": {"bbox": [1.40, 42.42, 1.79, 42.66]},
    "air_quality": {"query": [_TOWNS[0][1], _TOWNS[0][0]]},
    "air_quality_forecast": {"query": [_TOWNS[0][1], _TOWNS[0][0]], "duration": 3},
    "air_quality_hourly_forecast": {"query": [_TOWNS[0][1], _TOWNS[0][0]], "duration": 24},
    "severe_weather_alerts": {"query": [42.5676, 1.5975]},
    "policy_states": {"$top": 10},
}


def _point(lon: float, lat: float, **props: Any) -> dict[str, Any]:
    return {"type": "Feature", "geometry": {"type": "Point", "coordinates": [lon, lat]},
            "properties": props}


def _body_examples(sandbox: Sandbox) -> dict[str, Any]:
    """Give example request bodies that the sandbox accepts."""
    ns = sandbox.namespace
    (lon0, lat0), (lon1, lat1) = _TOWNS
    trace = [_point(lon0 + (lon1 - lon0) * i / 20, lat0 + (lat1 - lat0) * i / 20)
             for i in range(21)]
    matrix = {"type": "FeatureCollection", "features": [
        {"type": "Feature", "geometry": {"type": "MultiPoint", "coordinates": [list(t)]},
         "properties": {"pointType": side}} for side, t in (("origins", _TOWNS[0]),
                                                           ("destinations", _TOWNS[1]))]}
    return {
        "check_name": {"name": "sql-sales-reporting-01", "type": f"{ns}.Sql/servers"},
        "encryption_protector_update": {"properties": {"serverKeyType": "ServiceManaged",
                                                       "serverKeyName": "ServiceManaged"}},
        "route_directions_batch": {"batchItems": [{
            "type": "FeatureCollection", "optionalId": "a",
            "features": [_point(lon0, lat0, pointIndex=0, pointType="waypoint"),
                         _point(lon1, lat1, pointIndex=1, pointType="waypoint")]}]},
        "snap_to_roads": {"type": "FeatureCollection", "features": trace,
                          "includeSpeedLimit": True},
        "reverse_geocode_batch": {"batchItems": [
            {"coordinates": [lon0, lat0], "optionalId": "a"},
            {"coordinates": [lon1, lat1], "resultTypes": ["PopulatedPlace"]}]},
        "route_matrix": matrix,
        "route_matrix_async": {**matrix, "optimizeRoute": "shortest"},
        "route_range": _point(lon0, lat0, timeBudgetInSec=600),
        "create_eventstream": {"displayName": "described-stream",
                               "description": "Made from the sandbox's description."},
        "resource_graph": {"query": "resources | project id, name, type, location",
                           "options": {"$top": 10}},
    }


def _examples(sandbox: Sandbox) -> dict[str, dict[str, Any]]:
    """Give example path values, per route, of things that exist in the sandbox's world."""
    cat = sandbox.catalog()

    def first(kind: str) -> dict[str, Any]:
        rows = cat[cat["kind"] == kind]
        return {} if not len(rows) else {str(k): v for k, v in rows.iloc[0].items()}

    def where(kind: str) -> dict[str, Any]:
        row = first(kind)
        return {"subscriptionId": row["subscription_id"],
                "resourceGroupName": row["resource_group"]} if row else {}

    def scoped(kind: str, name: str) -> dict[str, Any]:
        row = first(kind)
        if not row:
            return {}
        return {"subscriptionId": row["subscription_id"],
                "resourceGroupName": row["resource_group"], name: row["name"]}

    sub = first("subscription").get("subscription_id")
    common = {"subscriptionId": sub, "format": "json", "provider": f"{sandbox.namespace}.Network",
              "location": "westeurope"}
    group = first("resource_group")
    services = getattr(sandbox.world.section("support"), "services", None)
    server = {**scoped("sql_server", "serverName"), "encryptionProtectorName": "current"}
    return {
        "*": common,
        "backend_health": scoped("application_gateway", "applicationGatewayName"),
        "encryption_protector_update": server,
        "encryption_protector_get": server,
        "policy_states": {"resourceGroupName": group.get("resource_group"),
                          "policyStatesResource": "latest"},
        "problem_classifications": {"serviceName": services[0].name} if services else {},
        "cluster_monitoring_credentials": scoped("managed_cluster", "resourceName"),
        "hosted_cluster_credentials": scoped("hosted_cluster", "resourceName"),
        "authentication_strength_usage": {
            "authenticationStrengthPolicyId":
                first("authentication_strength_policy").get("name")},
        "create_eventstream": {"workspaceId": first("fabric_workspace").get("name")},
        "management_group": {"groupId": sandbox.world.tenant_id},
        **{f"{route}_by_group": where(kind) for route, kind in (
            ("sql_servers", "sql_server"), ("application_gateways", "application_gateway"),
            ("managed_clusters", "managed_cluster"), ("openshift_clusters", "hosted_cluster"))},
        **_policy_examples(sandbox),
    }


def _policy_examples(sandbox: Sandbox) -> dict[str, dict[str, Any]]:
    """Path values of the policy routes at every scope: things of the policy world."""
    from toolkit.sandbox.arm.policy.world import PolicyWorld

    world = sandbox.world
    pw: PolicyWorld = world.section("policy")
    sub = world.subscriptions[0]

    def policy(assignment_scope: str) -> Any:
        return next(p for p in pw.policies
                    if p.fields["policyAssignmentScope"].lower() == assignment_scope.lower())

    at_sub = policy(f"/subscriptions/{sub.id}")
    groups = {g.name.lower() for g in sub.resource_groups}
    at_rg = next(p for p in pw.policies if p.assignment.scope[0] == "rg"
                 and p.assignment.scope[2].lower() in groups
                 and p.fields["policyAssignmentScope"].lower().startswith(
                     f"/subscriptions/{sub.id}".lower()))
    in_set = next(p for p in pw.policies if p.set_name and p.assignment is at_sub.assignment)
    resource = pw.resources[pw.by_group[(sub.id.lower(), at_rg.assignment.scope[2].lower())][0]]
    provider, _, rest = resource.fields["resourceId"].split("/providers/", 1)[1].partition("/")
    out: dict[str, dict[str, Any]] = {}
    for prefix, word in (("policy_states", "latest"), ("policy_summary", "latest")):
        out[f"{prefix}_management_group"] = {"managementGroupId": world.tenant_id,
                                             "policyStatesResource": word}
        out[f"{prefix}_subscription"] = {"policyStatesResource": word}
        out[prefix if prefix == "policy_summary" else "_unused"] = {
            "resourceGroupName": at_rg.assignment.scope[2], "policyStatesResource": word}
        out[f"{prefix}_subscription_assignment"] = {
            "policyAssignmentName": at_sub.assignment.name, "policyStatesResource": word}
        out[f"{prefix}_resource_group_assignment"] = {
            "resourceGroupName": at_rg.assignment.scope[2],
            "policyAssignmentName": at_rg.assignment.name, "policyStatesResource": word}
        out[f"{prefix}_definition"] = {"definitionName": in_set.fields["policyDefinitionName"],
                                       "policyStatesResource": word}
        out[f"{prefix}_set_definition"] = {
            "definitionName": in_set.fields["policySetDefinitionName"],
            "policyStatesResource": word}
        out[f"{prefix}_resource"] = {"resourceGroupName": resource.group,
                                     "resourceProvider": provider, "resourcePath": rest,
                                     "policyStatesResource": word}
    out.pop("_unused", None)
    return out


def _path_parameters(route: Route, examples: dict[str, dict[str, Any]]
                     ) -> list[dict[str, Any]]:
    examples = {**examples["*"], **examples.get(route.name, {})}
    out = []
    for name in re.findall(r"\{(\w+)\}", route.pattern):
        schema: dict[str, Any] = {"type": "string", "minLength": 1}
        if name == "format":
            schema = {"type": "string", "enum": ["json"]}
        param: dict[str, Any] = {"name": name, "in": "path", "required": True, "schema": schema}
        if examples.get(name) is not None:
            param["example"] = str(examples[name])
        out.append(param)
    return out


def _api_version(route: Route) -> dict[str, Any]:
    if route.api_versions is None:
        return {"name": "api-version", "in": "query", "required": False,
                "description": "Echoed from the URL the operation handed out.",
                "schema": {"type": "string"}}
    return {"name": "api-version", "in": "query", "required": True,
            "description": f"The API version ({route.family}); the first is the pinned one.",
            "schema": {"type": "string", "enum": list(route.api_versions)},
            "example": route.api_versions[0]}


def _error_responses(family: str) -> dict[str, Any]:
    content = {"application/json": {"schema": {"$ref": f"#/components/schemas/{family}.Error"}}}
    headers: dict[str, Any] = {}
    if family == "maps":
        headers["x-vendor-error-code"] = {"schema": {"type": "string"}, "required": True}
    default: dict[str, Any] = {"description": f"An error in the {family} family's body shape.",
                               "content": content}
    if headers:
        default["headers"] = headers
    auth = dict(default, description="Missing, malformed, expired or wrong-audience "
                                     "credentials.")
    return {"401": auth, "default": default}


def _success_responses(route: Route, file: str | None, op: dict[str, Any] | None,
                       statuses: tuple[str, ...] | None = None) -> dict[str, Any]:
    if file is None or op is None:
        if route.name in _OPERATION_RESULTS:
            schemas = []
            for name in _OPERATION_RESULTS[route.name]:
                src = _SOURCES[name]
                sub = _load(src.file)["paths"][src.path][src.method]["responses"].get("200", {})
                if "schema" in sub:
                    schemas.append(_schema(sub["schema"], src.file))
            done: dict[str, Any] = {"description": "Done: read the resource at its own URL."}
            if schemas:
                done = {"description": "The operation's result.",
                        "content": {"application/json": {"schema": {"anyOf": schemas}}}}
            return {
                "200": done,
                "202": {"description": "Still running: poll the Location again after "
                                       "Retry-After seconds."},
            }
        return {"200": {"description": "Success.",
                        "content": {"application/json": {"schema": {"type": "object"}}}}}
    out: dict[str, Any] = {}
    for status, resp in op.get("responses", {}).items():
        if not status.startswith("2") or (statuses and status not in statuses):
            continue
        entry: dict[str, Any] = {"description": resp.get("description") or "Success."}
        if "schema" in resp:
            schema = _schema(resp["schema"], file)
            entry["content"] = {media: {"schema": schema}
                                for media in _media_types(file, op, "produces")}
        out[status] = entry
    return out


def _operation(route: Route, examples: dict[str, dict[str, Any]],
               bodies: dict[str, Any]) -> dict[str, Any]:
    file, op = _operation_source(route)
    src = _SOURCES.get(route.name)
    params = _path_parameters(route, examples)
    params.append(_api_version(route))
    body: dict[str, Any] | None = None
    if file is not None and op is not None:
        for raw in op.get("parameters", []):
            param = _resolve_parameter(raw, file)
            if param is None or param.get("name", "").lower() in _AUTH_HEADERS:
                continue
            if param["in"] == "body" and route.method != "GET":
                schema = _schema(param.get("schema", {}), file)
                body = {"required": bool(param.get("required")),
                        "content": {media: {"schema": schema}
                                    for media in _media_types(file, op, "consumes")}}
            elif param["in"] in ("query", "header") and param["name"] != "api-version":
                params.append(_parameter(param, file))
    params.extend(copy.deepcopy(_EXTRA_QUERY.get(route.name, [])))
    for param in params:
        value = _QUERY_EXAMPLES.get(route.name, {}).get(param["name"])
        if value is not None and param["in"] == "query":
            param["example"] = value
    if body is not None and route.name in bodies:
        for media in body["content"].values():
            media["example"] = bodies[route.name]
    out: dict[str, Any] = {
        # a function's call spelling (``usage()``) is the same operation under its own id
        "operationId": route.name + ("_" + route.pattern.split("/")[1]
                                     if route.pattern.startswith(("/beta", "/v1.0", "/v1/"))
                                     else "") + ("_call" if route.pattern.endswith("()") else ""),
        "tags": [route.family],
        "summary": (op or {}).get("summary") or (op or {}).get("description", "")[:200]
        or route.name.replace("_", " "),
        "parameters": params,
        "responses": {**_success_responses(route, file, op, src.statuses if src else None),
                      **_error_responses(route.family)},
        "security": _SECURITY[route.family],
        "x-family": route.family,
        "x-api-versions": list(route.api_versions or ()),
    }
    if body is not None:
        out["requestBody"] = body
    return out


def _routes(sandbox: Sandbox) -> Iterator[Route]:
    for route in sandbox.router.routes:
        if route.pattern != OPENAPI_PATH:
            yield route


def build_document(sandbox: Sandbox) -> dict[str, Any]:
    """Build the OpenAPI 3.1 document of every route ``sandbox`` serves (see the module docstring).

    Parameters
    ----------
    sandbox : Sandbox
        The sandbox to describe (its router, namespace, header prefix and world).

    Returns
    -------
    dict
        The document, ready for ``json.dumps``.
    """
    examples = _examples(sandbox)
    bodies = _body_examples(sandbox)
    paths: dict[str, dict[str, Any]] = {}
    for route in _routes(sandbox):
        item = paths.setdefault(route.pattern, {})
        item[route.method.lower()] = _operation(route, examples, bodies)
    schemas: dict[str, Any] = {"ErrorDetail": _ERROR_DETAIL}
    for family, body in _ERRORS.items():
        schemas[f"{family}.Error"] = body
    for stem in sorted({s.file for s in _SOURCES.values()}):
        schemas.update(_definitions(stem))
    text = json.dumps({"paths": paths, "schemas": schemas})
    neutral = NEUTRAL_WORDS
    words = sandbox.words
    text = text.replace(f"{neutral.hosted_cluster_provider}/{neutral.hosted_cluster_type}",
                        f"{words.hosted_cluster_provider}/{words.hosted_cluster_type}")
    text = text.replace(neutral.key_vault_type, words.key_vault_type)
    if sandbox.namespace != "Vendor":
        text = text.replace("Vendor.", f"{sandbox.namespace}.")
    if sandbox.header_prefix != "x-vendor-":
        text = text.replace("x-vendor-error-code", f"{sandbox.header_prefix}error-code")
    parts = json.loads(text)
    return {
        "openapi": "3.1.0",
        "info": {"title": "toolkit sandbox",
                 "version": "1",
                 "description": "Every route the embedded sandbox serves: resource management "
                                "(arm), maps, graph and fabric. Response schemas follow the "
                                "real services' specifications where those cover the "
                                "operation."},
        "servers": [{"url": sandbox.url}],
        "paths": parts["paths"],
        "components": {
            "schemas": parts["schemas"],
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"},
                "subscriptionKey": {"type": "apiKey", "in": "header", "name": "subscription-key"},
                "sas": {"type": "apiKey", "in": "header", "name": "Authorization",
                        "description": "jwt-sas <token>"},
                "mapsClientId": {"type": "apiKey", "in": "header",
                                 "name": f"{sandbox.header_prefix}client-id"},
            },
        },
    }


def _serve(sandbox: Sandbox) -> Handler:
    """Make the handler of the description of ``sandbox`` (built once, on first use)."""

    def serve(request: Request) -> Reply:
        with sandbox.state_lock:
            doc = sandbox.state.get("openapi")
            if doc is None:
                doc = sandbox.state["openapi"] = json.dumps(build_document(sandbox)).encode()
        return Reply(200, raw=doc)

    return serve


def register(router: Router, sandbox: Sandbox) -> None:
    """Serve the description at ``/openapi.json`` (no authentication: see ``Sandbox.handle``)."""
    router.add("GET", OPENAPI_PATH, _serve(sandbox), family="arm", api_versions=None,
               name="openapi")
