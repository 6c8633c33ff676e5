"""Hostile responses: the services' real examples, mutated (fields missing, ``null`` everywhere,
wrong types, unknown enumeration values, extra fields, odd pages, bodies that are not the
expected JSON), served over HTTP and read through the public functions.

Each call gives a frame with the declared schema (same columns and dtypes, missing values null,
unknown categories kept) or raises a toolkit error that says what happened: never an exception
from deep inside a dependency."""

from __future__ import annotations

import contextlib
import copy
import json
import math
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import toolkit
from tests.conftest import example
from tests.replay import Answer, Replay, replay_server
from toolkit import ToolkitError
from toolkit._core.registry import schema_for
from toolkit._core.schemas import Schema

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])

SUB = "00000000-1111-2222-3333-444444444444"
WS = "cfafbeb1-8037-4d0c-896e-a46fb27ff229"


def _body(folder: str, name: str, status: str = "200") -> Any:
    return example(folder, name)["responses"][status]["body"]


# ------------------------------------------------------------------------------ scenarios
@dataclass
class Scenario:
    """A public function, the request its answer goes to, and a real answer.

    ``method``/``path`` route the answer under test (``body()``, a real example); ``also`` serves
    the other requests of the same call unchanged; ``call(conn)`` runs the function; ``schema``
    is the schema of its frame (None when the frame's columns depend on the query, as with
    ``$apply``).
    """

    name: str
    method: str
    path: str
    body: Callable[[], Any]
    call: Callable[[Any], Any]
    schema: str | None
    items_key: str | None = None     # where the records are (for paging scenarios)
    next_key: str | None = None
    status: int = 200
    also: tuple[tuple[str, str, Callable[[], Any]], ...] = ()   # other routes of the call
    after: Callable[[Any], Any] | None = None   # a helper run on the frame (no request)
    error_column: str | None = None   # batches: a failed item is a row with this set
    operation: str = ""   # the operation it calls, when the name says more (a second scenario)

    def __post_init__(self) -> None:
        self.operation = self.operation or self.name


def _names_call(conn: Any) -> Any:
    return toolkit.check_server_names(SUB, "server1", connection=conn)


def _route_queries() -> list[dict[str, Any]]:
    return [{"origin": (-122.3368, 47.614988), "destination": (-122.316067, 47.606356)}
            for _ in range(2)]


#: The route matrix example's origins and destinations (its async result is for them too).
_MATRIX = example("30-maps-route-matrix", "PostRouteMatrix.json")["parameters"][
    "routeMatrixRequest"]["features"]
_MATRIX_ID = "bc3f9365-3ee0-4564-aa27-825016325557"


def _matrix(conn: Any, **kw: Any) -> Any:
    # an unknown status is polled again, as the service may add states: the timeout (of waits
    # the connection records, never sleeps) bounds a status that never ends
    (origins, destinations) = (f["geometry"]["coordinates"] for f in _MATRIX)
    return toolkit.route_matrix(origins, destinations, timeout=60, connection=conn, **kw)


def _matrix_status() -> dict[str, Any]:
    """The status example without its ``resultUrl`` (it names the public cloud's host): the
    result is then read at the status URL's ``/result``."""
    body = _body("30-maps-route-matrix", "GetRouteOperationStatusCompleted.json")
    return {k: v for k, v in body.items() if k != "result"}


#: The answers of an asynchronous matrix but the one under test: the 202 and the status.
_ACCEPTED = ("POST", r"/route/matrix:async", lambda: Answer(202, None, {
    "Operation-Location": "{url}/route/operations/" + _MATRIX_ID + "?api-version=2025-01-01"}))
_STATUS = ("GET", r"/route/operations/[0-9a-f-]+\?", _matrix_status)
_RESULT = ("GET", r"/route/operations/[0-9a-f-]+/result",
           lambda: _body("30-maps-route-matrix", "GetRouteMatrixAsyncResult.json"))


def _eventstreams(conn: Any) -> Any:
    return toolkit.create_eventstreams([{"workspace_id": WS, "display_name": "Eventstream_1"}],
                                       connection=conn)


SCENARIOS: list[Scenario] = [
    Scenario("backend_health", "POST", r"/backendhealth",
             lambda: _body("01-backend-health", "ApplicationGatewayBackendHealthGet.json"),
             lambda c: toolkit.backend_health(SUB, "rg", "appgw", connection=c),
             "backend_health"),
    Scenario("check_server_names", "POST", r"/checkNameAvailability",
             lambda: _body("03-sql-check-name-availability",
                           "CheckNameAvailabilityServerAlreadyExists.json"),
             _names_call, "check_server_names", error_column="error"),
    Scenario("sql_operations", "GET", r"/providers/Vendor\.Sql/operations",
             lambda: _body("04-sql-operations-list", "ListOperations.json"),
             lambda c: toolkit.sql_operations(connection=c), "sql_operations",
             items_key="value", next_key="nextLink"),
    Scenario("update_encryption_protector", "PUT", r"/encryptionProtector/current",
             lambda: _body("02-sql-encryption-protector",
                           "EncryptionProtectorCreateOrUpdateKeyVault.json"),
             lambda c: toolkit.update_encryption_protector(
                 SUB, "rg", "sqlcrudtest-4645", server_key_type="VendorKeyVault",
                 server_key_name="someVault_someKey_01234567890123456789012345678901",
                 connection=c), "update_encryption_protector"),
    Scenario("encryption_protector", "GET", r"/encryptionProtector/current",
             lambda: _body("02-sql-encryption-protector",
                           "EncryptionProtectorCreateOrUpdateKeyVault.json"),
             lambda c: toolkit.encryption_protector(SUB, "rg", "sqlcrudtest-4645",
                                                    connection=c),
             "update_encryption_protector"),
    Scenario("policy_states", "POST", r"/policyStates/latest/queryResults",
             lambda: {k: v for k, v in _body("05-policy-states",
                                             "PolicyStates_QueryResourceGroupScope.json").items()
                      if k != "@odata.nextLink"},
             lambda c: toolkit.policy_states(SUB, "rg", connection=c), "policy_states",
             items_key="value", next_key="@odata.nextLink",
             after=lambda df: (toolkit.compliance_summary(df), toolkit.compliance_trend(df),
                               toolkit.evaluated_expressions(df))),
    Scenario("policy_states_apply", "POST", r"/policyStates/latest/queryResults",
             lambda: _body("05-policy-states", "PolicyStates_FilterAndGroupByWithAggregate.json"),
             lambda c: toolkit.policy_states(
                 SUB, "rg", apply="groupby((policyAssignmentId, policyDefinitionId), "
                 "aggregate($count as numRecords))", connection=c), None,
             items_key="value", next_key="@odata.nextLink", operation="policy_states"),
    Scenario("support_services", "GET", r"\.Support/services\?",
             lambda: {"value": [{"id": "/providers/Vendor.Support/services/svc-1", "name":
                                 "svc-1", "type": "Vendor.Support/services",
                                 "properties": {"displayName": "Virtual Machines",
                                                "resourceTypes": ["Vendor.Compute/vms"]}}]},
             lambda c: toolkit.support_services(connection=c), "support_services",
             items_key="value", next_key="nextLink"),
    Scenario("problem_classifications", "GET", r"/problemClassifications",
             lambda: _body("06-support-problem-classifications",
                           "ListProblemClassifications.json"),
             lambda c: toolkit.problem_classifications("svc-1", connection=c),
             "problem_classifications", items_key="value", next_key="nextLink",
             after=lambda df: toolkit.classification_consents(df, keep_empty=True)),
    Scenario("cluster_monitoring_credentials", "POST", r"/listClusterMonitoringUserCredential",
             lambda: _body("07-cluster-monitoring-credentials",
                           "ManagedClustersListClusterMonitoringUserCredentials.json"),
             lambda c: toolkit.cluster_monitoring_credentials(SUB, "rg", "aks1", connection=c),
             "cluster_monitoring_credentials"),
    Scenario("hosted_cluster_credentials", "POST", r"/listCredentials",
             lambda: _body("08-hosted-cluster-credentials",
                           "OpenShiftClusters_ListCredentials.json"),
             lambda c: toolkit.hosted_cluster_credentials(SUB, "rg", "aro1", connection=c),
             "hosted_cluster_credentials"),
    Scenario("autocomplete", "GET", r"/geocode:autocomplete",
             lambda: _body("09-maps-geocode-autocomplete", "AutocompleteDefault.json"),
             lambda c: toolkit.autocomplete("Mun", coordinates=(-122.33, 47.6), top=20,
                                            connection=c), "autocomplete",
             items_key="features", next_key="nextLink"),
    Scenario("route_directions", "POST", r"/route/directions:batch",
             lambda: _body("10-maps-route-directions-batch", "PostRouteDirectionsBatch.json"),
             lambda c: toolkit.route_directions(_route_queries(), connection=c),
             "route_directions", error_column="error.code"),
    Scenario("snap_to_roads", "POST", r"/route/snapToRoads",
             lambda: _body("11-maps-snap-to-roads", "PostSnapToRoads.json"),
             lambda c: toolkit.snap_to_roads([(-122.336729, 47.590868),
                                              (-122.336042, 47.601604)], connection=c),
             "snap_to_roads"),
    Scenario("route_matrix", "POST", r"/route/matrix\?",
             lambda: _body("30-maps-route-matrix", "PostRouteMatrix.json"),
             lambda c: _matrix(c, travel_mode="truck", avoid="unpavedRoads",
                               depart_at="2022-12-19T16:39:57+01:00"), "route_matrix"),
    Scenario("route_matrix_result", *_RESULT,
             lambda c: _matrix(c, optimize_route="shortest"), "route_matrix",
             also=(_ACCEPTED, _STATUS), operation="route_matrix"),
    Scenario("route_matrix_status", *_STATUS,
             lambda c: _matrix(c, optimize_route="shortest"), "route_matrix",
             also=(_ACCEPTED, _RESULT), operation="route_matrix"),
    Scenario("route_range", "POST", r"/route/range\?",
             lambda: _body("31-maps-route-range", "PostRouteRange.json"),
             lambda c: toolkit.route_range((5.86605, 50.9745), time_budget=6000, connection=c),
             "route_range"),
    Scenario("traffic_incidents", "GET", r"/traffic/incident",
             lambda: _body("12-maps-traffic-incident", "GetTrafficIncident.json"),
             lambda c: toolkit.traffic_incidents((-122.4, 47.5, -122.2, 47.7), connection=c),
             "traffic_incidents"),
    Scenario("air_quality", "GET", r"/weather/airQuality/current",
             lambda: _body("13-maps-weather-current-air-quality", "GetCurrentAirQuality.json"),
             lambda c: toolkit.air_quality([(-122.3, 47.6), (-122.2, 47.7)], connection=c),
             "air_quality", items_key="results", next_key="nextLink",
             after=toolkit.air_quality_pollutants),
    Scenario("air_quality_forecast", "GET", r"/weather/airQuality/forecasts/daily",
             lambda: _body("15-maps-weather-daily-air-quality-forecast",
                           "GetDailyAirQuality.json"),
             lambda c: toolkit.air_quality_forecast((-122.3, 47.6), duration=2, connection=c),
             "air_quality_forecast", items_key="results", next_key="nextLink"),
    Scenario("air_quality_hourly_forecast", "GET", r"/weather/airQuality/forecasts/hourly",
             lambda: _body("29-maps-weather-hourly-air-quality-forecast",
                           "GetHourlyAirQuality.json"),
             lambda c: toolkit.air_quality_hourly_forecast([(-122.1, 47.6), (-122.2, 47.7)],
                                                           duration=12, connection=c),
             "air_quality_hourly_forecast", items_key="results", next_key="nextLink",
             after=toolkit.air_quality_pollutants),
    Scenario("severe_weather_alerts", "GET", r"/weather/severe/alerts",
             lambda: _body("14-maps-weather-severe-alerts", "GetSevereWeatherAlerts.json"),
             lambda c: toolkit.severe_weather_alerts((-122.3, 47.6), connection=c),
             "severe_weather_alerts", items_key="results", next_key="nextLink"),
    Scenario("authentication_strength_usage", "GET", r"/usage",
             lambda: _body("16-graph-authentication-strength-usage",
                           "authenticationstrengthpolicy-usage.json"),
             lambda c: toolkit.authentication_strength_usage(
                 "00000000-0000-0000-0000-000000000003", connection=c),
             "authentication_strength_usage"),
    Scenario("authentication_strength_policies", "GET", r"/authenticationStrengthPolicies",
             lambda: {"value": [{"id": "00000000-0000-0000-0000-000000000002",
                                 "displayName": "Multifactor authentication",
                                 "description": "Combinations of methods that satisfy strong "
                                                "authentication",
                                 "policyType": "builtIn", "requirementsSatisfied": "mfa",
                                 "allowedCombinations": ["password,sms", "fido2"],
                                 "createdDateTime": "2021-12-01T00:00:00Z",
                                 "modifiedDateTime": "2021-12-01T00:00:00Z"}]},
             lambda c: toolkit.authentication_strength_policies(connection=c),
             "authentication_strength_policies", items_key="value",
             next_key="@odata.nextLink"),
    Scenario("authentication_strength_audit", "GET", r"/usage",
             lambda: _body("16-graph-authentication-strength-usage",
                           "authenticationstrengthpolicy-usage.json"),
             lambda c: toolkit.authentication_strength_audit(connection=c),
             "authentication_strength_audit",
             also=(("GET", r"/authenticationStrengthPolicies(\?|$)", lambda: {"value": [
                 {"id": "00000000-0000-0000-0000-000000000003", "displayName": "Passwordless",
                  "policyType": "builtIn", "requirementsSatisfied": "mfa"}]}),)),
    Scenario("create_eventstream", "POST", r"/workspaces/[^/]+/eventstreams",
             lambda: _body("17-fabric-create-eventstream", "CreateEventstream.json", "201"),
             lambda c: toolkit.create_eventstream(WS, "Eventstream_1", connection=c),
             "create_eventstream", status=201),
    Scenario("management_groups", "GET", r"/managementGroups\?",
             lambda: _body("18-management-groups", "ListManagementGroups.json"),
             lambda c: toolkit.management_groups(connection=c), "management_groups",
             items_key="value", next_key="@nextLink"),
    Scenario("management_group_tree", "GET", r"/managementGroups/Child\?",
             lambda: _body("18-management-groups", "GetManagementGroupWithExpandAndRecurse.json"),
             lambda c: toolkit.management_group_tree("Child", connection=c),
             "management_group_tree"),
    Scenario("resource_graph", "POST", r"/providers/Vendor\.ResourceGraph/resources",
             lambda: _body("22-resource-graph", "2019-04-01/ResourcesBasicQuery.json"),
             lambda c: toolkit.resource_graph("resources | project id, name, type, location, "
                                              "tags", connection=c), None),
    Scenario("resource_graph_objects", "POST", r"/providers/Vendor\.ResourceGraph/resources",
             lambda: _body("22-resource-graph", "ResourcesBasicQuery.json"),
             lambda c: toolkit.resource_graph("resources | project id, name, type, location, "
                                              "tags", expand=True, connection=c), None,
             operation="resource_graph"),
    Scenario("resource_graph_policy_states", "POST",
             r"/providers/Vendor\.ResourceGraph/resources",
             lambda: _body("22-resource-graph", "ResourcesBasicQuery.json"),
             lambda c: toolkit.resource_graph_policy_states(SUB, reconcile=False, connection=c),
             None),
    Scenario("sql_servers", "GET", r"/providers/Vendor\.Sql/servers\?",
             lambda: _body("23-sql-servers-list", "ServerList.json"),
             lambda c: toolkit.sql_servers(SUB, connection=c), "sql_servers",
             items_key="value", next_key="nextLink"),
    Scenario("application_gateways", "GET", r"/applicationGateways\?",
             lambda: _body("24-application-gateways-list", "ApplicationGatewayListAll.json"),
             lambda c: toolkit.application_gateways(SUB, connection=c), "application_gateways",
             items_key="value", next_key="nextLink"),
    Scenario("managed_clusters", "GET", r"/managedClusters\?",
             lambda: _body("25-managed-clusters-list", "ManagedClustersList.json"),
             lambda c: toolkit.managed_clusters(SUB, "rg1", connection=c), "managed_clusters",
             items_key="value", next_key="nextLink"),
    Scenario("openshift_clusters", "GET", r"/hostedClusters\?",
             lambda: _body("26-openshift-clusters-list", "OpenShiftClusters_List.json"),
             lambda c: toolkit.openshift_clusters(SUB, connection=c), "openshift_clusters",
             items_key="value", next_key="nextLink"),
    Scenario("fabric_workspaces", "GET", r"/v1/workspaces($|\?)",
             lambda: _body("27-fabric-workspaces-list", "ListWorkspaces.json"),
             lambda c: toolkit.fabric_workspaces(connection=c), "fabric_workspaces",
             items_key="value", next_key="continuationUri"),
    Scenario("create_eventstreams", "POST", r"/workspaces/[^/]+/eventstreams",
             lambda: _body("17-fabric-create-eventstream", "CreateEventstream.json", "201"),
             _eventstreams, "create_eventstreams", status=201, error_column="error"),
    Scenario("subscriptions", "GET", r"^/subscriptions\?",
             lambda: {k: v for k, v in _body("20-subscriptions", "GetSubscriptions.json").items()
                      if k != "nextLink"},
             lambda c: toolkit.subscriptions(connection=c), "subscriptions",
             items_key="value", next_key="nextLink"),
    Scenario("resource_groups", "GET", r"/resourcegroups",
             lambda: {"value": [{"id": f"/subscriptions/{SUB}/resourceGroups/rg-web",
                                 "name": "rg-web", "type": "Vendor.Resources/resourceGroups",
                                 "location": "westeurope", "tags": {"env": "prod"},
                                 "properties": {"provisioningState": "Succeeded"}}]},
             lambda c: toolkit.resource_groups(SUB, connection=c), "resource_groups",
             items_key="value", next_key="nextLink"),
    Scenario("policy_summary", "POST", r"/policyStates/latest/summarize",
             lambda: _body("19-policy-states-summarize",
                           "PolicyStates_SummarizeResourceGroupLevelPolicyAssignmentScope.json"),
             lambda c: toolkit.policy_summary(SUB, "rg", connection=c), "policy_summary"),
    Scenario("geocode", "GET", r"/geocode\?",
             lambda: _body("21-maps-geocode", "ForwardGeocodingByQuery.json"),
             lambda c: toolkit.geocode("15127 NE 24th Street Redmond WA", connection=c),
             "geocode", items_key="features", next_key="nextLink"),
    Scenario("reverse_geocode", "POST", r"/reverseGeocode:batch",
             lambda: _body("28-maps-reverse-geocode", "ReverseGeocodingBatch.json"),
             lambda c: toolkit.reverse_geocode([(-122.138681, 47.630358), (-122.1, 47.6)],
                                               connection=c),
             "reverse_geocode", error_column="error.code"),
]
#: Operations that send requests but have no scenario of their own here, and why.
ELSEWHERE = {
    "snapshot_policy_states": "its answers are policy_states' (read through policy_states, "
                              "whose scenarios cover them) and it writes them to a store",
}
BY_NAME = {s.name: s for s in SCENARIOS}
PAGED = [s for s in SCENARIOS if s.next_key]


# ------------------------------------------------------------------------------ checks
def assert_schema(df: Any, schema: Schema | None) -> None:
    """The frame has the schema's columns, in order, with the declared dtypes."""
    assert isinstance(df, pd.DataFrame)
    if schema is None:
        return
    assert list(df.columns) == schema.names
    for col in schema.columns:
        dtype = df[col.name].dtype
        kind = col.kind
        if kind == "category":
            assert isinstance(dtype, pd.CategoricalDtype), (col.name, dtype)
            assert list(dtype.categories[:len(col.categories)]) == list(col.categories), col.name
            assert dtype.ordered == col.ordered, col.name
        elif kind == "exactint":
            assert str(dtype) in ("Int64", "UInt64"), (col.name, dtype)
        elif kind == "geometry":
            assert str(dtype) in ("geometry", "object"), (col.name, dtype)
        else:
            assert dtype == col.dtype(), (col.name, dtype, col.dtype())
    if schema.geometry:
        import geopandas as gpd

        assert isinstance(df, gpd.GeoDataFrame) and df.crs.to_epsg() == 4326


def run(scenario: Scenario, conn: Any) -> tuple[pd.DataFrame | None, ToolkitError | None]:
    """Call the function: its frame (checked against the schema) or its toolkit error (checked
    to say something). Anything else fails the test, with its traceback."""
    try:
        result = scenario.call(conn)
    except ToolkitError as err:
        text = str(err)
        assert len(text) > 15, text
        assert "Traceback" not in text
        return None, err
    schema = schema_for(scenario.schema) if scenario.schema else None
    assert_schema(result, schema)
    if scenario.after is not None:
        scenario.after(result)
    return result, None


def serve(rp: Replay, scenario: Scenario, *answers: Answer) -> None:
    rp.routes.clear()
    rp.add(scenario.method, scenario.path, *answers)
    for method, path, body in scenario.also:
        answer = body()  # a body, or a whole answer (an accepted operation's 202 and headers)
        rp.add(method, path, answer if isinstance(answer, Answer) else Answer(200, answer))


@pytest.fixture(scope="module")
def replay() -> Iterator[Replay]:
    with replay_server() as rp:
        yield rp


@pytest.fixture
def rconn(replay: Replay, waits: Any) -> Any:
    connection = toolkit.connect(base_url=replay.url, token="example-token-0123456789",
                                 maps_key="example-maps-key-0123456789", progress=False,
                                 max_retries=1)
    connection.sleep = waits
    yield connection
    connection.close()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_the_unchanged_example_gives_the_declared_frame(scenario: Scenario, replay: Replay,
                                                       rconn: Any) -> None:
    serve(replay, scenario, Answer(scenario.status, scenario.body()))
    df, err = run(scenario, rconn)
    assert err is None, err
    assert (df is not None and len(df) > 0) or scenario.name == "severe_weather_alerts"


# ------------------------------------------------------------------------------ mutations
JUNK: list[Any] = [None, "", "Zz-unknown", 0, -1, 1.5, 2**70, -(2**65), 1e308, "1e400", True,
                   [], {}, [None], {"zz": None}, "NaN", "2026-99-99T25:61:00Z", "\u0000\ud7ff",
                   -1e300, 1e300]


def _retype(value: Any, rnd: random.Random) -> Any:
    """A value of another JSON type than ``value``."""
    if isinstance(value, bool):
        return rnd.choice(["true", 1, [value], None])
    if isinstance(value, int | float):
        return rnd.choice([str(value), [value], {"value": value}, True, "", 2**70, -(2**65),
                           1e300, -1e300, "1e400"])
    if isinstance(value, str):
        return rnd.choice([len(value), 3.25, True, [value], {"value": value}, 2**70, -1])
    if isinstance(value, list):
        return rnd.choice([{"0": value[0] if value else None}, "list", 0, {}, True])
    if isinstance(value, dict):
        return rnd.choice([[value], "object", 7, [], True])
    return rnd.choice(JUNK)


def mutate(body: Any, kind: str, rate: float, rnd: random.Random) -> Any:
    """``body`` with a share ``rate`` of its nodes changed the way ``kind`` says."""

    def hit() -> bool:
        return rnd.random() < rate

    def walk(node: Any) -> Any:
        how = rnd.choice(["drop", "null", "retype", "enum", "extra", "junk"]) \
            if kind == "mixed" else kind
        if isinstance(node, dict):
            out: dict[str, Any] = {}
            for key, value in node.items():
                if how == "drop" and hit():
                    continue
                out[key] = walk(value)
            if how == "extra" and hit():
                for n in range(rnd.randint(1, 3)):
                    out[f"zzExtra{n}"] = rnd.choice(JUNK)
            if how in ("null", "retype", "junk") and hit():
                return None if how == "null" else (_retype(out, rnd) if how == "retype"
                                                   else rnd.choice(JUNK))
            return out
        if isinstance(node, list):
            out_list = [walk(v) for v in node if not (how == "drop" and hit())]
            if how in ("null", "retype", "junk") and hit():
                return None if how == "null" else (_retype(out_list, rnd) if how == "retype"
                                                   else rnd.choice(JUNK))
            return out_list
        if how == "null" and hit():
            return None
        if how == "retype" and hit():
            return _retype(node, rnd)
        if how == "junk" and hit():
            return rnd.choice(JUNK)
        if how == "enum" and isinstance(node, str) and hit():
            return "ZzUnknownValue"
        return node

    return walk(copy.deepcopy(body))


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
@SETTINGS
@given(kind=st.sampled_from(["drop", "null", "retype", "enum", "extra", "junk", "mixed"]),
       rate=st.sampled_from([0.05, 0.2, 0.5, 1.0]), seed=st.integers(0, 2**32 - 1))
# a frame whose mutated rows were left out, with a warning saying which, is a right answer here
@pytest.mark.filterwarnings("ignore::toolkit._core.errors.ToolkitWarning")
def test_a_mutated_answer_gives_the_declared_frame_or_a_toolkit_error(
        scenario: Scenario, kind: str, rate: float, seed: int, replay: Replay,
        rconn: Any) -> None:
    body = mutate(scenario.body(), kind, rate, random.Random(seed))
    serve(replay, scenario, Answer(scenario.status, body))
    run(scenario, rconn)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_null_everywhere(scenario: Scenario, replay: Replay, rconn: Any) -> None:
    """Every value in the records null: the frame keeps its schema, values are missing."""
    body = mutate(scenario.body(), "null", 1.0, random.Random(0))
    serve(replay, scenario, Answer(scenario.status, body))
    run(scenario, rconn)

    def leaves_null(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: leaves_null(v) for k, v in node.items()}
        if isinstance(node, list):
            return [leaves_null(v) for v in node]
        return None

    serve(replay, scenario, Answer(scenario.status, leaves_null(scenario.body())))
    df, _ = run(scenario, rconn)
    if df is not None and scenario.schema:
        service_columns = [c for c in schema_for(scenario.schema).columns
                           if c.kind in ("float", "datetime", "boolean", "timedelta")]
        for col in service_columns:
            if not (col.name.islower() and "_" in col.name):  # toolkit-added columns derive
                assert df[col.name].isna().all(), col.name


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_extra_fields_change_nothing(scenario: Scenario, replay: Replay, rconn: Any) -> None:
    serve(replay, scenario, Answer(scenario.status, scenario.body()))
    baseline, err = run(scenario, rconn)
    assert err is None
    body = mutate(scenario.body(), "extra", 1.0, random.Random(1))
    serve(replay, scenario, Answer(scenario.status, body))
    df, err = run(scenario, rconn)
    assert err is None, err
    # nested objects and lists are kept as the service sent them (extra fields included)
    nested = {c.name for c in schema_for(scenario.schema).columns
              if c.kind in ("object", "list")} if scenario.schema else set()
    # a frame typed from the answer's own column metadata: its dynamic columns
    nested |= {c["name"] for c in baseline.attrs.get("columns", []) if c["type"] == "object"}
    keep = [c for c in baseline.columns if c not in nested and c != "operation_id"]
    pd.testing.assert_frame_equal(df[keep], baseline[keep])


def _category_keys(schema: Schema) -> set[str]:
    return {c.source[-1] for c in schema.columns if c.kind == "category"}


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s.schema], ids=lambda s: s.name)
def test_unknown_enumeration_values_are_kept(scenario: Scenario, replay: Replay,
                                             rconn: Any) -> None:
    schema = schema_for(scenario.schema)  # type: ignore[arg-type]
    keys = _category_keys(schema)

    def rename(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: ("ZzNewValue" if k in keys and isinstance(v, str) else rename(v))
                    for k, v in node.items()}
        if isinstance(node, list):
            return [rename(v) for v in node]
        return node

    serve(replay, scenario, Answer(scenario.status, scenario.body()))
    baseline, _ = run(scenario, rconn)
    serve(replay, scenario, Answer(scenario.status, rename(scenario.body())))
    df, err = run(scenario, rconn)
    assert err is None, err
    assert len(df) == len(baseline)
    changed = [c.name for c in schema.columns if c.kind == "category"
               and "ZzNewValue" in set(df[c.name].dropna().astype(str))]
    was_set = [c.name for c in schema.columns if c.kind == "category"
               and baseline[c.name].notna().any() and c.source[-1] in
               json.dumps(scenario.body())]
    for name in was_set:
        if baseline[name].astype(str).isin(["ZzNewValue"]).any():  # pragma: no cover
            continue
        documented = dict((c.name, c) for c in schema.columns)[name]
        if documented.categories and name in changed:
            assert list(df[name].cat.categories[:len(documented.categories)]) == \
                list(documented.categories)
    assert changed or not was_set, (was_set, changed)


# ------------------------------------------------------------------------------ whole bodies
WHOLE_BODIES = {
    "empty": b"",
    "array": b"[]",
    "array of the body": None,   # filled in per scenario
    "string": b'"hello"',
    "number": b"42",
    "null": b"null",
    "truncated": b'{"value": [{"name": ',
    "not json": b"<html><body>Service Unavailable</body></html>",
    "not utf-8": b"\xff\xfe\x00{",
    "deep": b"[" * 100_000 + b"]" * 100_000,
}


@pytest.mark.parametrize("what", list(WHOLE_BODIES))
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_an_answer_that_is_not_the_expected_object(scenario: Scenario, what: str,
                                                   replay: Replay, rconn: Any) -> None:
    """Not a JSON object at all: a ProtocolError that says what came instead (a batch keeps
    going: its failed items are rows with the error)."""
    payload = WHOLE_BODIES[what]
    body = [scenario.body()] if payload is None else payload
    serve(replay, scenario, Answer(scenario.status, body))
    df, err = run(scenario, rconn)
    if scenario.error_column is not None and df is not None:
        assert df[scenario.error_column].notna().all(), df[scenario.error_column]
        return
    assert isinstance(err, toolkit.ProtocolError), (df, err)
    assert re.search(r"JSON|empty body", str(err)), str(err)


# ------------------------------------------------------------------------------ paging
def _serve_pages(rp: Replay, scenario: Scenario, pages: list[Any]) -> None:
    """Serve ``pages`` in turn: the first at the function's path, the next ones at the links
    the previous pages give."""
    rp.routes.clear()
    # policy states POST to their next links; the other collections GET theirs
    method = "POST" if scenario.next_key == "@odata.nextLink" and not scenario.name.startswith(
        "authentication") else "GET"
    for n in range(len(pages) - 1, 0, -1):
        rp.add(method, rf"zzpage={n}(&|$)", Answer(200, pages[n]))
    rp.add(scenario.method, scenario.path, Answer(200, pages[0]))


def _link(rp: Replay, scenario: Scenario, n: int) -> str:
    return rp.url + "/paging/next?zzpage=" + str(n)


@pytest.mark.parametrize("scenario", PAGED, ids=lambda s: s.name)
def test_empty_pages_with_a_next_link_are_followed(scenario: Scenario, replay: Replay,
                                                   rconn: Any) -> None:
    serve(replay, scenario, Answer(200, scenario.body()))
    baseline, err = run(scenario, rconn)
    assert err is None
    last = scenario.body()
    pages = [{scenario.items_key: [], scenario.next_key: _link(replay, scenario, 1)},
             {scenario.items_key: [], scenario.next_key: _link(replay, scenario, 2)},
             last]
    _serve_pages(replay, scenario, pages)
    df, err = run(scenario, rconn)
    assert err is None, err
    keep = [c for c in df.columns if c not in ("geometry",)]
    pd.testing.assert_frame_equal(df[keep], baseline[keep])


@pytest.mark.parametrize("scenario", PAGED, ids=lambda s: s.name)
def test_a_next_link_that_loops_ends(scenario: Scenario, replay: Replay, rconn: Any) -> None:
    first = scenario.body()
    first[scenario.next_key] = _link(replay, scenario, 1)
    second = scenario.body()
    second[scenario.next_key] = _link(replay, scenario, 1)     # itself, again and again
    _serve_pages(replay, scenario, [first, second])
    with replay_seen(replay) as seen:
        run(scenario, rconn)
    assert len(seen) < 20


LINKS = [7, ["x"], {"href": "y"}, True, "", "not a url at all", "http://127.0.0.1:1/elsewhere"]


@pytest.mark.parametrize(("scenario", "link"), [
    pytest.param(s, link, id=f"{s.name}-{link!r}") for s in PAGED for link in LINKS])
def test_a_next_link_that_is_not_a_link(scenario: Scenario, link: Any, replay: Replay,
                                        rconn: Any) -> None:
    body = scenario.body()
    body[scenario.next_key] = link
    serve(replay, scenario, Answer(200, body))
    run(scenario, rconn)


@pytest.mark.parametrize("scenario", PAGED, ids=lambda s: s.name)
def test_a_next_page_that_is_hostile(scenario: Scenario, replay: Replay, rconn: Any) -> None:
    for second in ([], {scenario.items_key: {"a": 1}}, {scenario.items_key: "x"},
                   {scenario.items_key: [None, 3, "x", []]}, None):
        first = scenario.body()
        first[scenario.next_key] = _link(replay, scenario, 1)
        _serve_pages(replay, scenario, [first, second])
        run(scenario, rconn)


class replay_seen:
    """The requests the replay server saw inside the block."""

    def __init__(self, rp: Replay) -> None:
        self.rp = rp
        self.seen: list[tuple[str, str]] = []

    def __enter__(self) -> list[tuple[str, str]]:
        self.start = len(self.rp.seen)
        return self.seen

    def __exit__(self, *exc: Any) -> None:
        self.seen.extend(self.rp.seen[self.start:])


# ------------------------------------------------------------------------------ long-running
@pytest.mark.parametrize("state", [
    {}, None, [], {"status": None}, {"status": 7}, {"status": "Teleporting"},
    {"status": "Failed"}, {"status": "Failed", "error": "broken"},
    {"status": "Failed", "error": {"errorCode": None, "message": 3}},
    {"status": "Succeeded", "percentComplete": "all"},
])
def test_an_eventstream_operation_state_that_is_hostile(state: Any, replay: Replay,
                                                        rconn: Any, waits: Any) -> None:
    replay.routes.clear()
    op = "0acd697c-1550-43cd-b998-91bfbfbd47c6"
    replay.add("POST", r"/workspaces/[^/]+/eventstreams", Answer(202, None, {
        "Location": "{url}/v1/operations/" + op, "x-vendor-operation-id": op,
        "Retry-After": "5"}))
    replay.add("GET", rf"/v1/operations/{op}/result",
               Answer(200, _body("17-fabric-create-eventstream",
                                 "GetLongRunningOperationResult.json")))
    replay.add("GET", rf"/v1/operations/{op}$", Answer(200, state, {
        "Location": "{url}/v1/operations/" + op + "/result", "Retry-After": "inf"}))
    try:
        df = toolkit.create_eventstream(WS, "Eventstream_1", timeout=60, connection=rconn)
    except ToolkitError as err:
        assert len(str(err)) > 15
    else:
        assert_schema(df, schema_for("create_eventstream"))
    assert all(math.isfinite(w) and w >= 0 for w in waits) and sum(waits) <= 120, waits


@pytest.mark.parametrize("scenario", [BY_NAME["backend_health"],
                                      BY_NAME["update_encryption_protector"]],
                         ids=lambda s: s.name)
@pytest.mark.parametrize("headers", [
    {}, {"Location": "not a url"}, {"Location": "{url}/poll/1", "Retry-After": "soon"},
    {"Location": "{url}/poll/1", "Retry-After": "-5"},
    {"Location": "{url}/poll/1", "Retry-After": "1e9"},
    {"Location": "{url}/poll/1", "Retry-After": "inf"},
    {"Location": "{url}/poll/1", "Retry-After": "NaN"},
    {"Azure-AsyncOperation": "{url}/poll/1"},
])
def test_a_long_running_answer_with_hostile_headers(scenario: Scenario, headers: dict[str, str],
                                                    replay: Replay, rconn: Any,
                                                    waits: Any) -> None:
    replay.routes.clear()
    replay.add(scenario.method, scenario.path, Answer(202, None, headers))
    replay.add("GET", r"/poll/1", Answer(200, scenario.body()))
    try:
        result = scenario.call(rconn)
    except ToolkitError as err:
        assert len(str(err)) > 15
    else:
        assert_schema(result, schema_for(scenario.schema))  # type: ignore[arg-type]
    assert all(math.isfinite(w) and w >= 0 for w in waits), waits


def test_a_route_batch_that_answers_too_few_items(replay: Replay, rconn: Any) -> None:
    body = _body("10-maps-route-directions-batch", "PostRouteDirectionsBatch.json")
    body["batchItems"] = body["batchItems"][:1]
    serve(replay, BY_NAME["route_directions"], Answer(200, body))
    df, err = run(BY_NAME["route_directions"], rconn)
    assert err is not None or df["error.code"].notna().all()
    if df is not None:
        assert re.search("batch item", " ".join(df["error.message"].dropna()))


#: Fields that say where a record belongs, not what it holds: without them the record cannot be
#: placed (a snapped point without the input point it stands for is left out, as the service
#: leaves out points it cannot snap).
STRUCTURAL = {("snap_to_roads", "inputIndex"),
              *((name, key) for name in ("route_matrix", "route_matrix_result")
                for key in ("originIndex", "destinationIndex"))}
#: Columns the toolkit fills from the request when the service leaves them out.
FILLED = {("check_server_names", "name")}


def _without(node: Any, key: str) -> Any:
    if isinstance(node, dict):
        return {k: _without(v, key) for k, v in node.items() if k != key}
    if isinstance(node, list):
        return [_without(v, key) for v in node]
    return node


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if s.schema], ids=lambda s: s.name)
def test_a_field_missing_from_every_record_is_a_null_column(scenario: Scenario, replay: Replay,
                                                            rconn: Any) -> None:
    schema = schema_for(scenario.schema)  # type: ignore[arg-type]
    serve(replay, scenario, Answer(scenario.status, scenario.body()))
    baseline, _ = run(scenario, rconn)
    text = json.dumps(scenario.body())
    tried = 0
    for col in schema.columns:
        key = col.source[-1]
        if col.kind in ("geometry", "secret") or f'"{key}"' not in text or \
                baseline[col.name].isna().all() or (scenario.name, key) in STRUCTURAL | FILLED:
            continue
        serve(replay, scenario, Answer(scenario.status, _without(scenario.body(), key)))
        df, err = run(scenario, rconn)
        assert err is None, (key, err)
        assert len(df) == len(baseline), key
        assert df[col.name].isna().all(), (key, df[col.name])
        tried += 1
    # an operation's status holds no column of the frame (its result does)
    assert tried or scenario.name in ("hosted_cluster_credentials", "route_matrix_status")


@pytest.mark.parametrize("value", [[["a"], ["b"]], [{"a": 1}], [[1, [2]]]])
def test_policy_records_with_nested_lists(value: Any, replay: Replay, rconn: Any) -> None:
    scenario = BY_NAME["policy_states"]
    body = scenario.body()
    for record in body["value"]:
        record["resourceId"] = value
        record["policyDefinitionGroupNames"] = value
    serve(replay, scenario, Answer(200, body))
    df, err = run(scenario, rconn)
    assert err is None and len(df) == len(body["value"])


ERROR_BODIES = [None, b"", b"<html>Bad Gateway</html>", [], "text", {}, {"error": None},
                {"error": "went wrong"}, {"error": []}, {"error": {"code": 5, "message": ["x"]}},
                {"error": {"code": None, "details": "x", "innererror": 7}},
                {"errorCode": None, "message": {"a": 1}, "moreDetails": "x",
                 "isRetriable": "yes"}, {"code": 12, "message": None}]


@pytest.mark.parametrize("status", [400, 401, 404, 409, 429, 503])
@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_an_error_answer_with_a_hostile_body(scenario: Scenario, status: int, replay: Replay,
                                             rconn: Any) -> None:
    """Whatever the error body, the caller gets the toolkit's error for the status (or, in a
    batch, rows with the error)."""
    for body in ERROR_BODIES:
        serve(replay, scenario, Answer(status, body, {"Retry-After": "1"}
                                       if status in (429, 503) else {}))
        df, err = run(scenario, rconn)
        if err is None:
            assert scenario.error_column is not None, scenario.name
            assert df[scenario.error_column].notna().all()
            continue
        assert isinstance(err, toolkit.ApiError), (body, err)
        assert err.status == status


@pytest.mark.parametrize("retry_after", ["soon", "-1", "1e9", "", "NaN", "inf", "3.5",
                                         "Wed, 21 Oct 2015 07:28:00 GMT", "99999999999999999999"])
@pytest.mark.parametrize("scenario", [BY_NAME[n] for n in (
    "sql_operations", "autocomplete", "authentication_strength_usage", "create_eventstream",
    "air_quality")], ids=lambda s: s.name)
def test_a_throttling_answer_with_a_hostile_retry_after(scenario: Scenario, retry_after: str,
                                                        replay: Replay, rconn: Any,
                                                        waits: Any) -> None:
    """Throttled, then answered: the call either goes through after a sane wait or raises the
    rate-limit error; a Retry-After it cannot read never becomes a crash or an endless wait."""
    serve(replay, scenario, Answer(429, {"error": {"code": "TooManyRequests", "message": "slow"}},
                                   {"Retry-After": retry_after}),
          Answer(scenario.status, scenario.body()))
    # a wait longer than max_retry_wait (60 s) is not waited, and a warning says so
    too_long = retry_after in ("1e9", "99999999999999999999")
    with pytest.warns(toolkit.RetryWaitWarning) if too_long else contextlib.nullcontext():
        _, err = run(scenario, rconn)
    assert err is None or isinstance(err, toolkit.RateLimitError), err
    assert all(0 <= w <= 3600 for w in waits), waits
