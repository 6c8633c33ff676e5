"""Tenant scale against the sandbox: policy_states at every scope (each scope's records are the
union of the scopes below it), the per-scope rules, the service's window."""

from __future__ import annotations

from datetime import timedelta

import pandas as pd
import pytest

import toolkit
from toolkit._core.errors import ValidationError
from toolkit.sandbox.arm.policy.handlers import WINDOW_DAYS

KEY = ["timestamp", "resourceId", "policyAssignmentId", "policyDefinitionId",
       "policyDefinitionReferenceId", "complianceState"]


def _keys(df: pd.DataFrame) -> set[tuple]:
    return set(df[KEY].astype(str).itertuples(index=False, name=None))


def _states(conn, window, **scope) -> pd.DataFrame:
    start, end = window
    return toolkit.policy_states(**scope, resource="default", start=start, end=end,
                                 connection=conn)


# ------------------------------------------------------------------------------ lists


# ------------------------------------------------------------------------------ scopes
def test_each_scope_is_the_union_of_the_scopes_below(conn, world, window) -> None:
    by_sub = {}
    for sub in world.subscriptions:
        whole = _states(conn, window, subscription_id=sub.id)
        parts = [_states(conn, window, subscription_id=sub.id, resource_group=g.name)
                 for g in sub.resource_groups]
        assert all(len(p) for p in parts)
        assert sum(len(p) for p in parts) == len(whole)
        assert set().union(*map(_keys, parts)) == _keys(whole)
        by_sub[sub.name] = whole
    for mg in world.management_groups:
        whole = _states(conn, window, scope=f"/providers/Microsoft.Management/managementGroups/"
                                            f"{mg.name}")
        below = [s.name for s in world.subscriptions if mg.name in world.ancestors(s.name)]
        assert sum(len(by_sub[s]) for s in below) == len(whole)
        assert set().union(*(_keys(by_sub[s]) for s in below)) == _keys(whole)
        assert whole["managementGroupIds"].astype(str).str.split(",").map(
            lambda ids, name=mg.name: name in ids).all()


def test_a_resource_scope_holds_that_resources_records(conn, world, window) -> None:
    sub = world.subscriptions[0]
    group = _states(conn, window, subscription_id=sub.id, resource_group="rg-data-weu")
    for rid in group["resourceId"].astype(str).drop_duplicates().iloc[:4]:
        one = _states(conn, window, scope=rid.replace("/providers/Vendor.",
                                                      "/providers/Microsoft."))
        assert _keys(one) == _keys(group[group["resourceId"].astype(str) == rid])


def test_an_assignment_appears_at_every_scope_below_its_own(conn, world, window) -> None:
    retail = [s for s in world.subscriptions if "retail" in world.ancestors(s.name)]
    platform = [s for s in world.subscriptions if "platform" in world.ancestors(s.name)]
    for sub in retail:
        df = _states(conn, window, subscription_id=sub.id)
        assert "tagging-retail" in set(df["policyAssignmentName"].astype(str))
        for g in sub.resource_groups:
            rg = _states(conn, window, subscription_id=sub.id, resource_group=g.name)
            assert "tagging-retail" in set(rg["policyAssignmentName"].astype(str))
            assert "monitoring-baseline" in set(rg["policyAssignmentName"].astype(str))
    for sub in platform:
        df = _states(conn, window, subscription_id=sub.id)
        assert "tagging-retail" not in set(df["policyAssignmentName"].astype(str))


def test_assignment_and_definition_scopes_narrow_to_their_policies(conn, world, window) -> None:
    sub = next(s for s in world.subscriptions if s.name == "retail-prod")
    whole = _states(conn, window, subscription_id=sub.id)
    aid = f"/subscriptions/{sub.id}/providers/Microsoft.Authorization/policyAssignments/" \
          "sec-baseline-prod"
    mine = _states(conn, window, scope=aid)
    expected = whole[whole["policyAssignmentName"].astype(str) == "sec-baseline-prod"]
    assert len(mine) and _keys(mine) == _keys(expected)
    rg_aid = (f"/subscriptions/{sub.id}/resourceGroups/rg-data-weu/providers/"
              "Vendor.Authorization/policyAssignments/sql-auditing-data")
    sql = _states(conn, window, scope=rg_aid)
    assert len(sql) and (sql["policyAssignmentName"].astype(str) == "sql-auditing-data").all()
    definition = str(expected["policyDefinitionName"].iloc[0])
    by_def = _states(conn, window, scope=f"/subscriptions/{sub.id}/providers/Vendor.Authorization/"
                                         f"policyDefinitions/{definition}")
    assert _keys(by_def) == _keys(whole[whole["policyDefinitionName"].astype(str) == definition])
    set_name = str(expected["policySetDefinitionName"].iloc[0])
    by_set = _states(conn, window, scope=f"/subscriptions/{sub.id}/providers/"
                                         f"Microsoft.Authorization/policySetDefinitions/{set_name}")
    assert _keys(by_set) == _keys(whole[whole["policySetDefinitionName"].astype(str) == set_name])


@pytest.mark.parametrize(("kwargs", "parameter", "rule"), [
    ({"scope": "/subscriptions/nope"}, "scope", "ARM scope"),
    ({"scope": "/providers/Microsoft.Management/managementGroups/"}, "scope", "ARM scope"),
    ({"scope": "/subscriptions/00000000-0000-4000-8000-000000000000/resourceGroups/bad name"},
     "scope", "ARM scope"),
    ({"subscription_id": "00000000-0000-4000-8000-000000000000",
      "scope": "/subscriptions/00000000-0000-4000-8000-000000000000"}, "scope", "not with"),
    ({}, "subscription_id", "scope="),
    ({"subscription_id": "00000000-0000-4000-8000-000000000000", "expand": "components"},
     "expand", "resource scope"),
    ({"scope": "/providers/Vendor.Management/managementGroups/retail",
      "expand": "PolicyEvaluationDetails"}, "expand", "resource scope"),
    ({"scope": "/subscriptions/00000000-0000-4000-8000-000000000000/resourceGroups/rg/providers/"
               "Vendor.KeyVault/vaults/kv", "expand": "components($top=3)"}, "expand", "$filter"),
    ({"subscription_id": "00000000-0000-4000-8000-000000000000", "engine": "spark"}, "engine",
     "dask"),
])
def test_scope_rules_are_refused_before_any_request(conn, sandbox, kwargs, parameter,
                                                    rule) -> None:
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        toolkit.policy_states(**kwargs, connection=conn)
    assert info.value.parameter == parameter
    assert rule in str(info.value)
    assert log == []


def test_components_filter_and_apply_at_resource_scope(conn, world) -> None:
    sub = world.subscriptions[0]
    rg = toolkit.policy_states(sub.id, "rg-web-weu", connection=conn)
    vault = str(rg.loc[rg["resourceType"].astype(str).str.endswith("vaults"),
                       "resourceId"].iloc[0])
    plain = toolkit.policy_states(scope=vault, expand="components", connection=conn)
    grouped = toolkit.policy_states(
        scope=vault, expand="components($filter=type eq 'Key';$apply=groupby((complianceState),"
                            "aggregate($count as n)))", connection=conn)
    for full, agg in zip(plain["components"], grouped["components"], strict=True):
        keys = [c for c in full if c["type"] == "Key"]
        assert sum(c["n"] for c in agg) == len(keys)


# ------------------------------------------------------------------------------ window, clock
def test_a_query_before_the_services_window_answers_no_records(conn, sandbox, world) -> None:
    sub = world.subscriptions[0]
    end = pd.Timestamp(sandbox.now()) - timedelta(days=WINDOW_DAYS + 1)
    old = toolkit.policy_states(sub.id, "rg-web-weu", resource="default",
                                start=end - timedelta(days=3), end=end, connection=conn)
    assert len(old) == 0 and list(old.columns) == list(
        toolkit.policy_states(sub.id, "rg-web-weu", top=1, connection=conn).columns)


def test_a_held_clock_answers_as_of_that_day(conn, sandbox, world) -> None:
    sub = world.subscriptions[0]
    day = pd.Timestamp(world.epoch) - timedelta(days=10)
    sandbox.hold_clock(day.to_pydatetime())
    try:
        df = toolkit.policy_states(sub.id, "rg-web-weu", connection=conn)
    finally:
        sandbox.hold_clock(None)
    assert len(df) and df["timestamp"].max() <= day
    assert df["timestamp"].min() >= day - timedelta(days=1)


# ------------------------------------------------------------------------------ summary


