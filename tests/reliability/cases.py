"""One valid call of every operation that sends a request (``registry.requesting()``, checked
by tests/test_operation_lists.py) against a sandbox world, with what identifies its result, so
faults can be injected around the same call and the results compared."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

import toolkit
from toolkit._core.secrets import Secret

_counter = itertools.count()


@dataclass(frozen=True)
class Case:
    """A public operation called the way an analyst would.

    Attributes
    ----------
    name : str
        The public function.
    path : str
        Regex matching the paths of its requests (where faults are injected).
    call : callable
        ``call(conn, catalog, **kw) -> frame``; ``kw`` may carry ``timeout``/``wait`` for
        long-running operations.
    paged : str or None
        Regex matching its next-page requests, for the fault "a middle page fails once".
    lro : bool
        It is a long-running operation.
    idempotent : bool
        Sending it again is harmless (creations are not).
    volatile : tuple of str
        Columns that legitimately differ between two calls (ids of created items, times).
    start_method : str
        HTTP method of the request that starts a long-running operation.
    key : str or None
        For operations over many inputs whose failed items come back as rows with an error: the
        column that identifies an input.
    """

    name: str
    path: str
    call: Callable[..., Any]
    paged: str | None = None
    lro: bool = False
    idempotent: bool = True
    volatile: tuple[str, ...] = field(default_factory=tuple)
    start_method: str = "POST"
    key: str | None = None


def _row(catalog: pd.DataFrame, kind: str, name: str | None = None) -> pd.Series:
    rows = catalog[catalog["kind"] == kind]
    if name is not None:
        rows = rows[rows["name"] == name]
    return rows.iloc[0]


def _sub(catalog: pd.DataFrame) -> str:
    return _row(catalog, "subscription", "retail-prod")["subscription_id"]


def _backend_health(conn, catalog, **kw):
    gw = _row(catalog, "application_gateway", "agw-api-prod-weu")
    return toolkit.backend_health(gw.subscription_id, gw.resource_group, gw["name"],
                                  connection=conn, **kw)


def _check_names(conn, catalog, **kw):
    names = [f"reliability-{i:02d}" for i in range(10)] + ["sql-orders-prod", "Bad_Name"]
    return toolkit.check_server_names(_sub(catalog), names, connection=conn)


def _sql_operations(conn, catalog, **kw):
    return toolkit.sql_operations(connection=conn)


def _protector(conn, catalog, **kw):
    server = _row(catalog, "sql_server", "sql-retail-prod-weu-02")
    return toolkit.update_encryption_protector(
        server.subscription_id, server.resource_group, server["name"],
        server_key_type="VendorKeyVault", server_key_name="kv-retail-prod-weu_tde-primary",
        connection=conn, **kw)


def _resource_graph(conn, catalog, **kw):
    # every resource of the tenant: several pages of 500 rows, each a query of its own
    return toolkit.resource_graph("resources | project id, name, type, location | order by id asc",
                                  page_size=500, connection=conn)


def _graph_policy_states(conn, catalog, **kw):
    # the latest states of a subscription through policyresources: three pages of 1000 rows
    # (the development subscription's: the production one's are six)
    sub = _row(catalog, "subscription", "retail-dev").subscription_id
    return toolkit.resource_graph_policy_states(sub, reconcile=False, connection=conn)


def _policy_states(conn, catalog, **kw):
    # three days of every evaluation in one resource group: several pages of 1000 records
    end = pd.Timestamp("2026-11-20T09:00:00Z")
    return toolkit.policy_states(_sub(catalog), "rg-web-weu", resource="default",
                                 start=end - pd.Timedelta(days=3), end=end, connection=conn)


def _classifications(conn, catalog, **kw):
    services = toolkit.support_services(connection=conn)
    return toolkit.problem_classifications(services["name"].iloc[0], connection=conn)


def _monitoring(conn, catalog, **kw):
    cluster = _row(catalog, "managed_cluster")
    return toolkit.cluster_monitoring_credentials(cluster.subscription_id, cluster.resource_group,
                                                  cluster["name"], connection=conn)


def _hosted(conn, catalog, **kw):
    cluster = _row(catalog, "hosted_cluster")
    return toolkit.hosted_cluster_credentials(cluster.subscription_id, cluster.resource_group,
                                              cluster["name"], connection=conn)


def _strength_usage(conn, catalog, **kw):
    policy = _row(catalog, "authentication_strength_policy")
    return toolkit.authentication_strength_usage(policy["name"], connection=conn)


def _eventstream(conn, catalog, **kw):
    workspace = catalog[(catalog["kind"] == "fabric_workspace")
                        & catalog["detail"].str.startswith("IoT Telemetry")].iloc[0]
    name = f"reliability-stream-{next(_counter):04d}"
    definition = {"eventstream.json": {"sources": [], "destinations": [], "streams": []}}
    return toolkit.create_eventstream(workspace["name"], name, definition=definition,
                                      connection=conn, **kw)


def _sql_servers(conn, catalog, **kw):
    return toolkit.sql_servers(_sub(catalog), connection=conn)


def _gateways(conn, catalog, **kw):
    return toolkit.application_gateways(_sub(catalog), connection=conn)


def _managed(conn, catalog, **kw):
    return toolkit.managed_clusters(_sub(catalog), connection=conn)


def _openshift(conn, catalog, **kw):
    return toolkit.openshift_clusters(_sub(catalog), connection=conn)


def _workspaces(conn, catalog, **kw):
    return toolkit.fabric_workspaces(connection=conn)


#: Town centres (lon, lat) of the maps world.
TOWNS = {
    "Andorra la Vella": (1.5218, 42.5075), "Canillo": (1.5975, 42.5676),
    "Sant Julià de Lòria": (1.4906, 42.4636), "Ordino": (1.5331, 42.5560),
    "La Massana": (1.5148, 42.5450), "Encamp": (1.5804, 42.5345), "Soldeu": (1.6675, 42.5766),
}
ANDORRA_BBOX = (1.40, 42.42, 1.79, 42.66)


def _autocomplete(conn, catalog, **kw):
    return toolkit.autocomplete(["Can", "Carrer de", "Sant"], coordinates=TOWNS["Encamp"],
                                top=10, connection=conn)


def _routes(conn, catalog, **kw):
    towns = list(TOWNS.values())
    queries = [{"origin": towns[i % 7], "destination": towns[(i * 3 + 1) % 7],
                "optionalId": f"r{i}"}
               for i in range(120) if i % 7 != (i * 3 + 1) % 7]
    return toolkit.route_directions(queries, connection=conn)


def _snap(conn, catalog, **kw):
    from tests.maps.conftest import drive

    trace = drive([TOWNS["Sant Julià de Lòria"], TOWNS["Andorra la Vella"], TOWNS["Encamp"]],
                  spacing_m=25.0)
    return toolkit.snap_to_roads([tuple(p) for p in trace], include_speed_limit=True,
                                 connection=conn)


def _matrix(conn, catalog, **kw):
    # the shortest routes: the asynchronous matrix (202, its status polled, then its result)
    towns = list(TOWNS.values())
    return toolkit.route_matrix(towns, towns, optimize_route="shortest", connection=conn, **kw)


def _ranges(conn, catalog, **kw):
    towns = [TOWNS[t] for t in ("Andorra la Vella", "Canillo", "Soldeu")]
    # (budgets of five and ten minutes: fifteen would reach most of the valley's roads, which
    # the sandbox walks for every polygon under every fault)
    return toolkit.route_range(towns, time_budget=[300, 600], connection=conn)


def _incidents(conn, catalog, **kw):
    return toolkit.traffic_incidents(ANDORRA_BBOX, connection=conn)


def _places() -> list[tuple[float, float]]:
    return list(TOWNS.values())  # (lon, lat), as everywhere


def _air(conn, catalog, **kw):
    return toolkit.air_quality(_places(), connection=conn)


def _forecast(conn, catalog, **kw):
    return toolkit.air_quality_forecast(_places(), duration=3, connection=conn)


def _hourly(conn, catalog, **kw):
    return toolkit.air_quality_hourly_forecast(_places(), duration=12, connection=conn)


def _reverse(conn, catalog, **kw):
    # the towns, points along the valley road and one far out at sea (a row with no match)
    points = [*_places(), *[(1.50 + 0.004 * i, 42.46 + 0.006 * i) for i in range(12)],
              (-30.0, 30.0)]
    return toolkit.reverse_geocode(points, connection=conn)


def _alerts(conn, catalog, **kw):
    return toolkit.severe_weather_alerts(_places(), connection=conn)


def _protector_read(conn, catalog, **kw):
    server = _row(catalog, "sql_server", "sql-retail-prod-weu-02")
    return toolkit.encryption_protector(server.subscription_id, server.resource_group,
                                        server["name"], connection=conn)


def _eventstreams(conn, catalog, **kw):
    workspace = catalog[(catalog["kind"] == "fabric_workspace")
                        & catalog["detail"].str.startswith("IoT Telemetry")].iloc[0]
    n = next(_counter)
    return toolkit.create_eventstreams(
        [{"workspace_id": workspace["name"], "display_name": f"reliability-batch-{n:04d}-{i}"}
         for i in range(3)], connection=conn)


def _summary(conn, catalog, **kw):
    end = pd.Timestamp("2026-11-20T09:00:00Z")
    return toolkit.policy_summary(_sub(catalog), "rg-web-weu", start=end - pd.Timedelta(days=3),
                                  end=end, connection=conn)


def _snapshot(conn, catalog, **kw):
    # a store in memory (fsspec), one of its own per call: nothing written on disk; what is
    # judged is what the store holds afterwards, every record of the day
    store = f"memory://reliability-history-{next(_counter):04d}"
    toolkit.snapshot_policy_states(store, f"/subscriptions/{_sub(catalog)}/resourceGroups/"
                                          "rg-web-weu", day="2026-11-19", connection=conn)
    return toolkit.read_policy_history(store)


def _audit(conn, catalog, **kw):
    # two strength policies: the tenant's throttle (about a request a second) is not slept
    # through while waits are recorded
    ids = catalog[catalog["kind"] == "authentication_strength_policy"]["name"].head(2).tolist()
    return toolkit.authentication_strength_audit(ids, connection=conn)


def _geocode(conn, catalog, **kw):
    return toolkit.geocode(["Ordino", "Canillo", "Encamp", "Carrer de la Unió"], top=3,
                           connection=conn)


CASES: dict[str, Case] = {c.name: c for c in (
    Case("backend_health", r"backendhealth|/operation", _backend_health, lro=True),
    Case("check_server_names", r"checkNameAvailability", _check_names, key="name"),
    Case("sql_operations", r"Sql/operations", _sql_operations, paged=r"Sql/operations.*skiptoken"),
    Case("update_encryption_protector", r"encryptionProtector|/operations/", _protector,
         lro=True, volatile=("systemData.lastModifiedAt", "systemData.createdAt"),
         start_method="PUT"),
    Case("policy_states", r"policyStates", _policy_states, paged=r"policyStates.*skiptoken"),
    # (every page is a POST to the same URL, the continuation token in its body: no page to
    # single out by its path)
    Case("resource_graph", r"ResourceGraph/resources", _resource_graph),
    Case("resource_graph_policy_states", r"ResourceGraph/resources", _graph_policy_states),
    Case("problem_classifications", r"problemClassifications", _classifications,
         paged=r"problemClassifications.*skiptoken"),
    Case("cluster_monitoring_credentials", r"listClusterMonitoringUserCredential", _monitoring),
    Case("hosted_cluster_credentials", r"listCredentials", _hosted),
    Case("authentication_strength_usage", r"/usage", _strength_usage),
    Case("create_eventstream", r"/eventstreams|/operations/", _eventstream, lro=True,
         idempotent=False, volatile=("id", "displayName", "operation_id")),
    Case("sql_servers", r"providers/Vendor\.Sql/servers\?", _sql_servers,
         paged=r"Sql/servers\?.*skiptoken"),
    Case("application_gateways", r"providers/Vendor\.Network/applicationGateways\?",
         _gateways),
    Case("managed_clusters", r"ContainerService/managedClusters\?", _managed),
    Case("openshift_clusters", r"hostedClusters\?", _openshift),
    Case("fabric_workspaces", r"/v1/workspaces(\?|$)", _workspaces,
         paged=r"/v1/workspaces\?.*continuationToken"),
    Case("autocomplete", r"geocode:autocomplete", _autocomplete),
    Case("route_directions", r"directions:batch", _routes, key="query_index"),
    Case("snap_to_roads", r"snapToRoads", _snap),
    Case("route_matrix", r"/route/matrix|/route/operations/", _matrix, lro=True),
    Case("route_range", r"/route/range", _ranges, key="origin_index"),
    Case("traffic_incidents", r"traffic/incident", _incidents),
    Case("air_quality", r"airQuality/current", _air, key="location_index"),
    Case("air_quality_forecast", r"forecasts/daily", _forecast, key="location_index"),
    Case("air_quality_hourly_forecast", r"forecasts/hourly", _hourly, key="location_index"),
    Case("severe_weather_alerts", r"severe/alerts", _alerts, key="location_index"),
    Case("encryption_protector", r"encryptionProtector/current\?", _protector_read,
         volatile=("systemData.lastModifiedAt", "systemData.createdAt")),
    # the batch's creations are create_eventstream's long-running ones (whose case meets the
    # operation's faults); the batch reports an item that failed as a row with its error
    Case("create_eventstreams", r"/eventstreams|/operations/", _eventstreams, idempotent=False,
         volatile=("id", "displayName", "operation_id"), key="input_index"),
    Case("management_groups", r"Management/managementGroups\?", lambda conn, catalog, **kw:
         toolkit.management_groups(connection=conn)),
    Case("management_group_tree", r"Management/managementGroups", lambda conn, catalog, **kw:
         toolkit.management_group_tree(connection=conn)),
    Case("subscriptions", r"^/subscriptions\?", lambda conn, catalog, **kw:
         toolkit.subscriptions(connection=conn)),
    Case("resource_groups", r"/resourcegroups", lambda conn, catalog, **kw:
         toolkit.resource_groups(_sub(catalog), connection=conn)),
    Case("policy_summary", r"policyStates/latest/summarize", _summary),
    Case("snapshot_policy_states", r"policyStates", _snapshot),
    Case("support_services", r"Support/services\?", lambda conn, catalog, **kw:
         toolkit.support_services(connection=conn)),
    Case("authentication_strength_policies", r"authenticationStrengthPolicies\?",
         lambda conn, catalog, **kw: toolkit.authentication_strength_policies(connection=conn)),
    Case("authentication_strength_audit", r"authenticationStrengthPolicies", _audit,
         key="policy_id"),
    Case("geocode", r"/geocode\?", _geocode),
    Case("reverse_geocode", r"reverseGeocode:batch", _reverse, key="input_index"),
)}


def canonical(df: pd.DataFrame, case: Case) -> list[tuple[Any, ...]]:
    """The rows of a result as comparable tuples (secrets revealed, volatile columns out)."""
    keep = [c for c in df.columns if c not in case.volatile]

    def value(v: Any) -> Any:
        # the common kinds first (a frame of thousands of rows is judged under every fault)
        if isinstance(v, str):
            return v
        if isinstance(v, float):
            return None if v != v else v  # NaN
        if isinstance(v, int):  # bool among them
            return v
        if isinstance(v, Secret):
            return ("secret", v.reveal())
        if isinstance(v, list | dict):
            return repr(v)
        if v is None or (pd.api.types.is_scalar(v) and pd.isna(v)):
            return None
        return str(v)

    return [tuple(value(v) for v in row) for row in df[keep].itertuples(index=False)]


ERROR_COLUMNS = ("error", "error.code")


def failed_items(df: pd.DataFrame, case: Case) -> tuple[pd.DataFrame, set[Any]]:
    """The rows that carry no per-item error, and the keys of the items that failed (kept as
    rows with their error: a clear failure, not a loss)."""
    if case.key is None:
        return df, set()
    errors = [c for c in ERROR_COLUMNS if c in df.columns]
    if not errors:
        return df, set()
    bad = df[errors].notna().any(axis=1)
    return df[~bad], set(df.loc[bad, case.key])


def judge(df: pd.DataFrame, case: Case, baseline_df: pd.DataFrame) -> tuple[int, int, int, bool]:
    """(lost, duplicated, failed items, order kept) of a result against the fault-free one."""
    ok, failed = failed_items(df, case)
    if not failed and list(df.columns) == list(baseline_df.columns):
        keep = [c for c in df.columns if c not in case.volatile]
        if df[keep].equals(baseline_df[keep]):  # the same values in the same places: the
            return 0, 0, 0, True                 # same rows, in the same order
    base = baseline_df if not failed else baseline_df[~baseline_df[case.key].isin(failed)]
    want, got = canonical(base, case), canonical(ok, case)
    lost, duplicated = compare(want, got)
    return lost, duplicated, len(failed), want == got


def compare(baseline: list[tuple[Any, ...]], got: list[tuple[Any, ...]]) -> tuple[int, int]:
    """(lost, duplicated): rows of the baseline missing from ``got``, rows of ``got`` beyond the
    baseline (as multisets)."""
    from collections import Counter

    want, have = Counter(baseline), Counter(got)
    lost = sum((want - have).values())
    extra = sum((have - want).values())
    return lost, extra
