"""One frame from every operation of the registry, against the sandbox (exports, provenance and
the accessor use them).

:data:`CALLS` holds one call per operation, keyed by its name; ``tests/test_operation_lists.py``
fails, naming the operation, when an operation of the registry has no call here.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

import toolkit

TOWNS = {"Andorra la Vella": (1.5218, 42.5075), "Canillo": (1.5975, 42.5676),
         "Encamp": (1.5804, 42.5345), "Ordino": (1.5331, 42.5560)}
ANDORRA = (1.40, 42.42, 1.80, 42.66)


@dataclass
class World:
    """What a call needs: the sandbox, a connection to it, its catalogue, a store folder, and
    the frames made so far (an operation derived from another reads that one's frame)."""

    sandbox: Any
    conn: Any
    store: str
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.catalog = self.sandbox.catalog()
        self.kw = {"connection": self.conn}

    def first(self, kind: str) -> Any:
        """The first thing of a kind in the sandbox's catalogue."""
        return self.catalog[self.catalog["kind"] == kind].iloc[0]

    @property
    def sub(self) -> str:
        return str(self.first("subscription").subscription_id)

    def frame(self, name: str) -> pd.DataFrame:
        """The frame of an operation, made once."""
        if name not in self.frames:
            self.frames[name] = CALLS[name](self)
        return self.frames[name]

    __getitem__ = frame  # world["policy_states"]: read when first asked for


def _policy_states(w: World) -> pd.DataFrame:
    states = toolkit.policy_states(w.sub, "rg-web-weu", **w.kw)
    # nested objects come with expand=, answered at resource scope
    resource = str(states["resourceId"].iloc[0])
    detailed = toolkit.policy_states(scope=resource, expand=["PolicyEvaluationDetails",
                                                             "components"], **w.kw)
    both = pd.concat([detailed, states], ignore_index=True) if len(detailed) else states
    both.attrs = dict(detailed.attrs)
    return both


def _policy_changes(w: World) -> pd.DataFrame:
    # two days of one group in a store of their own, to compare
    store = f"{w.store}/changes"
    scope = f"/subscriptions/{w.sub}/resourceGroups/rg-web-weu"
    today = pd.Timestamp(w.sandbox.world.epoch).normalize()
    for back in (2, 1):
        toolkit.snapshot_policy_states(store, scope, day=today - pd.Timedelta(days=back), **w.kw)
    return toolkit.policy_changes(store, scope=scope)


def _sql(w: World) -> Any:
    return w.first("sql_server")


def _cluster(w: World, kind: str) -> tuple[str, str, str]:
    row = w.first(kind)
    return row.subscription_id, row.resource_group, row["name"]


#: One call of every operation, by name: ``call(world) -> frame``.
CALLS: dict[str, Callable[[World], pd.DataFrame]] = {
    "backend_health": lambda w: toolkit.backend_health(
        *_cluster(w, "application_gateway"), **w.kw),
    "check_server_names": lambda w: toolkit.check_server_names(
        w.sub, [_sql(w)["name"], "fresh-name-1", "Bad_Name"], **w.kw),
    "sql_operations": lambda w: toolkit.sql_operations(**w.kw),
    "management_groups": lambda w: toolkit.management_groups(**w.kw),
    "management_group_tree": lambda w: toolkit.management_group_tree(**w.kw),
    "subscriptions": lambda w: toolkit.subscriptions(**w.kw),
    "resource_groups": lambda w: toolkit.resource_groups(w.sub, **w.kw),
    "sql_servers": lambda w: toolkit.sql_servers(w.sub, **w.kw),
    "application_gateways": lambda w: toolkit.application_gateways(w.sub, **w.kw),
    "managed_clusters": lambda w: toolkit.managed_clusters(w.sub, **w.kw),
    "openshift_clusters": lambda w: toolkit.openshift_clusters(w.sub, **w.kw),
    "fabric_workspaces": lambda w: toolkit.fabric_workspaces(**w.kw),
    "policy_summary": lambda w: toolkit.policy_summary(w.sub, "rg-web-weu", **w.kw),
    "resource_graph": lambda w: toolkit.resource_graph(
        "resources | project id, name, type, location, tags, properties, created = now(), "
        "n = toint(1), ratio = todouble(0.5), on = true", w.sub, **w.kw),
    "resource_graph_policy_states": lambda w: toolkit.resource_graph_policy_states(
        w.sub, "rg-web-weu", **w.kw),
    "policy_states": _policy_states,
    "compliance_summary": lambda w: toolkit.compliance_summary(w.frame("policy_states")),
    "compliance_trend": lambda w: toolkit.compliance_trend(w.frame("policy_states")),
    "evaluated_expressions": lambda w: toolkit.evaluated_expressions(w.frame("policy_states")),
    "snapshot_policy_states": lambda w: toolkit.snapshot_policy_states(
        w.store, f"/subscriptions/{w.sub}/resourceGroups/rg-web-weu", **w.kw),
    "policy_changes": _policy_changes,
    "read_policy_history": lambda w: (w.frame("snapshot_policy_states"),
                                      toolkit.read_policy_history(w.store))[1],
    "encryption_protector": lambda w: toolkit.encryption_protector(
        _sql(w).subscription_id, _sql(w).resource_group, _sql(w)["name"], **w.kw),
    "update_encryption_protector": lambda w: toolkit.update_encryption_protector(
        _sql(w).subscription_id, _sql(w).resource_group, _sql(w)["name"],
        server_key_type="VendorKeyVault", server_key_name=w.first("key_vault_key")["name"],
        **w.kw),
    "support_services": lambda w: toolkit.support_services(**w.kw),
    "problem_classifications": lambda w: toolkit.problem_classifications(
        w.frame("support_services")["name"].iloc[0], **w.kw),
    "classification_consents": lambda w: toolkit.classification_consents(
        w.frame("problem_classifications")),
    "cluster_monitoring_credentials": lambda w: toolkit.cluster_monitoring_credentials(
        *_cluster(w, "managed_cluster"), **w.kw),
    "hosted_cluster_credentials": lambda w: toolkit.hosted_cluster_credentials(
        *_cluster(w, "hosted_cluster"), **w.kw),
    "authentication_strength_usage": lambda w: toolkit.authentication_strength_usage(
        w.first("authentication_strength_policy")["name"], **w.kw),
    "authentication_strength_policies": lambda w: toolkit.authentication_strength_policies(
        **w.kw),
    "authentication_strength_audit": lambda w: toolkit.authentication_strength_audit(**w.kw),
    "create_eventstream": lambda w: toolkit.create_eventstream(
        w.first("fabric_workspace")["name"], f"exports-{len(w.sandbox.log)}",
        description="round trip", **w.kw),
    "create_eventstreams": lambda w: toolkit.create_eventstreams(
        [{"workspace_id": w.first("fabric_workspace")["name"],
          "display_name": f"exports-b-{len(w.sandbox.log)}"}], **w.kw),
    "autocomplete": lambda w: toolkit.autocomplete("Can", coordinates=TOWNS["Canillo"],
                                                   **w.kw),
    "geocode": lambda w: toolkit.geocode(["Ordino", "Canillo"], top=2, **w.kw),
    "reverse_geocode": lambda w: toolkit.reverse_geocode(
        [TOWNS["Ordino"], TOWNS["Canillo"], (-30.0, 30.0)], **w.kw),
    "route_directions": lambda w: toolkit.route_directions(
        [{"origin": TOWNS["Andorra la Vella"], "destination": TOWNS["Canillo"]}],
        max_route_count=2, **w.kw),
    "snap_to_roads": lambda w: toolkit.snap_to_roads(
        [TOWNS["Andorra la Vella"], (1.5300, 42.5100), (1.5400, 42.5150)],
        include_speed_limit=True, **w.kw),
    "route_matrix": lambda w: toolkit.route_matrix(
        [TOWNS["Andorra la Vella"], TOWNS["Encamp"]], ["Canillo", TOWNS["Ordino"]], **w.kw),
    "route_range": lambda w: toolkit.route_range(
        [TOWNS["Andorra la Vella"], "Canillo"], time_budget=[300, 600], **w.kw),
    "traffic_incidents": lambda w: toolkit.traffic_incidents(ANDORRA, **w.kw),
    "air_quality": lambda w: toolkit.air_quality(list(TOWNS.values()), **w.kw),
    "air_quality_pollutants": lambda w: toolkit.air_quality_pollutants(w.frame("air_quality")),
    "air_quality_forecast": lambda w: toolkit.air_quality_forecast(
        list(TOWNS.values())[:2], duration=3, **w.kw),
    "air_quality_hourly_forecast": lambda w: toolkit.air_quality_hourly_forecast(
        list(TOWNS.values())[:2], duration=12, **w.kw),
    "severe_weather_alerts": lambda w: toolkit.severe_weather_alerts(list(TOWNS.values()),
                                                                     **w.kw),
}


#: The operations of the policy history store, which needs the ``parquet`` extra.
NEEDS_PARQUET = ("snapshot_policy_states", "read_policy_history", "policy_changes")


def every_frame(sandbox: Any, conn: Any, *, without: tuple[str, ...] = ()
                ) -> dict[str, pd.DataFrame]:
    """``{operation: frame}`` for every operation of :data:`CALLS` but those ``without`` names
    (the policy history in a store of its own, removed afterwards: the frames are read into
    memory)."""
    with tempfile.TemporaryDirectory(prefix="every-frame-") as store:
        world = World(sandbox, conn, store)
        for name in CALLS:
            if name not in without:
                world.frame(name)
        return dict(world.frames)
