"""One frame from every public function, against the sandbox (exports and accessors use them)."""

from __future__ import annotations

import tempfile
from typing import Any

import pandas as pd

import toolkit

TOWNS = {"Andorra la Vella": (1.5218, 42.5075), "Canillo": (1.5975, 42.5676),
         "Encamp": (1.5804, 42.5345), "Ordino": (1.5331, 42.5560)}
ANDORRA = (1.40, 42.42, 1.80, 42.66)


def every_frame(sandbox: Any, conn: Any, *, history: bool = True) -> dict[str, pd.DataFrame]:
    """``{function name: frame}`` for every public function returning a frame.

    ``history=False`` leaves out the one read of a policy history store (it needs pyarrow).
    """
    cat = sandbox.catalog()

    def first(kind: str) -> Any:
        return cat[cat["kind"] == kind].iloc[0]

    sub = first("subscription").subscription_id
    agw, sql, aks, aro = (first(k) for k in ("application_gateway", "sql_server",
                                             "managed_cluster", "hosted_cluster"))
    key = first("key_vault_key")["name"]
    strength = first("authentication_strength_policy")["name"]
    workspace = first("fabric_workspace")["name"]
    kw = {"connection": conn}
    out: dict[str, pd.DataFrame] = {}
    out["backend_health"] = toolkit.backend_health(agw.subscription_id, agw.resource_group,
                                                   agw["name"], **kw)
    out["check_server_names"] = toolkit.check_server_names(sub, [sql["name"], "fresh-name-1",
                                                                 "Bad_Name"], **kw)
    out["sql_operations"] = toolkit.sql_operations(**kw)
    states = toolkit.policy_states(sub, "rg-web-weu", **kw)
    # nested objects come with expand=, answered at resource scope
    resource = str(states["resourceId"].iloc[0])
    detailed = toolkit.policy_states(scope=resource, expand=["PolicyEvaluationDetails",
                                                             "components"], **kw)
    states = pd.concat([detailed, states], ignore_index=True) if len(detailed) else states
    states.attrs = dict(detailed.attrs)
    out["management_groups"] = toolkit.management_groups(**kw)
    out["management_group_tree"] = toolkit.management_group_tree(**kw)
    out["subscriptions"] = toolkit.subscriptions(**kw)
    out["resource_groups"] = toolkit.resource_groups(sub, **kw)
    out["across_subscriptions"] = toolkit.across_subscriptions(toolkit.resource_groups,
                                                               **kw).frame
    out["sql_servers"] = toolkit.sql_servers(sub, **kw)
    out["application_gateways"] = toolkit.application_gateways(sub, **kw)
    out["managed_clusters"] = toolkit.managed_clusters(sub, **kw)
    out["openshift_clusters"] = toolkit.openshift_clusters(sub, **kw)
    out["fabric_workspaces"] = toolkit.fabric_workspaces(**kw)
    out["policy_summary"] = toolkit.policy_summary(sub, "rg-web-weu", **kw)
    out["policy_states"] = states
    out["compliance_summary"] = toolkit.compliance_summary(states)
    out["compliance_trend"] = toolkit.compliance_trend(states)
    out["evaluated_expressions"] = toolkit.evaluated_expressions(states)
    if history:
        with tempfile.TemporaryDirectory() as store:  # two days of one group, to compare
            scope = f"/subscriptions/{sub}/resourceGroups/rg-web-weu"
            today = pd.Timestamp(sandbox.world.epoch).normalize()
            for back in (2, 1):
                toolkit.snapshot_policy_states(store, scope, **kw,
                                               day=today - pd.Timedelta(days=back))
            out["policy_changes"] = toolkit.policy_changes(store, scope=scope)
    out["encryption_protector"] = toolkit.encryption_protector(
        sql.subscription_id, sql.resource_group, sql["name"], **kw)
    out["update_encryption_protector"] = toolkit.update_encryption_protector(
        sql.subscription_id, sql.resource_group, sql["name"], server_key_type="VendorKeyVault",
        server_key_name=key, **kw)
    services = toolkit.support_services(**kw)
    out["support_services"] = services
    classes = toolkit.problem_classifications(services["name"].iloc[0], **kw)
    out["problem_classifications"] = classes
    out["classification_consents"] = toolkit.classification_consents(classes)
    out["cluster_monitoring_credentials"] = toolkit.cluster_monitoring_credentials(
        aks.subscription_id, aks.resource_group, aks["name"], **kw)
    out["hosted_cluster_credentials"] = toolkit.hosted_cluster_credentials(
        aro.subscription_id, aro.resource_group, aro["name"], **kw)
    out["authentication_strength_usage"] = toolkit.authentication_strength_usage(strength, **kw)
    out["authentication_strength_policies"] = toolkit.authentication_strength_policies(**kw)
    out["authentication_strength_audit"] = toolkit.authentication_strength_audit(**kw)
    out["create_eventstream"] = toolkit.create_eventstream(
        workspace, f"exports-{len(sandbox.log)}", description="round trip", **kw)
    out["create_eventstreams"] = toolkit.create_eventstreams(
        [{"workspace_id": workspace, "display_name": f"exports-b-{len(sandbox.log)}"}], **kw)
    out["autocomplete"] = toolkit.autocomplete("Can", coordinates=TOWNS["Canillo"], **kw)
    out["geocode"] = toolkit.geocode(["Ordino", "Canillo"], top=2, **kw)
    out["route_directions"] = toolkit.route_directions(
        [{"origin": TOWNS["Andorra la Vella"], "destination": TOWNS["Canillo"]}],
        max_route_count=2, **kw)
    out["snap_to_roads"] = toolkit.snap_to_roads(
        [TOWNS["Andorra la Vella"], (1.5300, 42.5100), (1.5400, 42.5150)],
        include_speed_limit=True, **kw)
    out["traffic_incidents"] = toolkit.traffic_incidents(ANDORRA, **kw)
    places = list(TOWNS.values())
    aq = toolkit.air_quality(places, **kw)
    out["air_quality"] = aq
    out["air_quality_pollutants"] = toolkit.air_quality_pollutants(aq)
    out["air_quality_forecast"] = toolkit.air_quality_forecast(places[:2], duration=3, **kw)
    out["severe_weather_alerts"] = toolkit.severe_weather_alerts(places, **kw)
    return out
