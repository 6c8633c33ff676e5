"""toolkit.resource_graph_policy_states: the latest states of a scope read through Resource Graph
into policy_states' columns, reconciled with the summary at the same scope."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

import toolkit
from toolkit.arm import graphpolicy
from toolkit.arm._schemas import POLICY_STATES
from toolkit.sandbox.server import Sandbox


@pytest.fixture(scope="module")
def sandbox() -> Any:
    # a clock that stands still: both reads see the same last day, however long the first takes
    with Sandbox(seed=7, frozen_clock=True) as sb:
        yield sb


def test_the_states_are_those_of_policy_states_latest(conn: Any, sandbox: Any) -> None:
    sub = next(s for s in sandbox.world.subscriptions if s.name == "retail-prod").id
    graph = toolkit.resource_graph_policy_states(sub, "rg-web-weu", connection=conn)
    latest = toolkit.policy_states(sub, "rg-web-weu", connection=conn)
    key = ["resourceId", "policyAssignmentId", "policyDefinitionId",
           "policyDefinitionReferenceId"]

    def pairs(df: pd.DataFrame) -> set[tuple[Any, ...]]:
        return {tuple(r) for r in df[[*key, "complianceState"]].astype(object)
                .where(df[[*key, "complianceState"]].notna(), None).itertuples(index=False)}

    assert len(graph) == len(latest)
    assert pairs(graph) == pairs(latest)
    for col in graph.columns.drop("id"):
        assert graph[col].dtype == POLICY_STATES[col].dtype() or \
            isinstance(graph[col].dtype, pd.CategoricalDtype), col
    assert graph["complianceState"].cat.ordered
    assert str(graph["timestamp"].dtype) == "datetime64[ns, UTC]"
    assert isinstance(graph["policyDefinitionGroupNames"].dropna().iloc[0], list)
    assert graph.attrs["operation"] == "resource_graph_policy_states"


def test_the_counts_are_reconciled_with_the_summary(conn: Any, sandbox: Any) -> None:
    root = sandbox.world.tenant_id
    scope = f"/providers/Vendor.Management/managementGroups/{root}"
    df = toolkit.resource_graph_policy_states(scope=scope, connection=conn)
    rec = df.attrs["reconciliation"]
    assert rec["matches"] is True and rec["differences"] == []
    summary = toolkit.policy_summary(scope=scope, connection=conn)
    top = summary[summary["level"] == "scope"].iloc[0]
    for name, counts in rec["counts"].items():
        assert counts["policy_summary"] == int(top[name]), name
    # the frame's own count: resources by their worst state
    worst = df.groupby("resourceId", observed=True)["complianceState"].max()
    assert rec["counts"]["resources_noncompliant"]["resource_graph"] == int(
        (worst == "NonCompliant").sum())
    assert df["subscriptionId"].nunique() == len(sandbox.world.subscriptions)


def test_a_difference_is_recorded_and_warned(conn: Any, sandbox: Any,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    sub = sandbox.world.subscriptions[0].id
    real = graphpolicy.policy_summary

    def one_more(*args: Any, **kwargs: Any) -> pd.DataFrame:
        df = real(*args, **kwargs)
        df.loc[df["level"] == "scope", "resources_noncompliant"] += 1
        return df

    monkeypatch.setattr(graphpolicy, "policy_summary", one_more)
    with pytest.warns(toolkit.ReconciliationWarning, match="resources_noncompliant"):
        df = toolkit.resource_graph_policy_states(sub, connection=conn)
    rec = df.attrs["reconciliation"]
    assert rec["matches"] is False and rec["differences"] == ["resources_noncompliant"]
    counts = rec["counts"]["resources_noncompliant"]
    assert counts["policy_summary"] == counts["resource_graph"] + 1


def test_without_reconciliation_no_summary_is_asked(conn: Any, sandbox: Any) -> None:
    sub = sandbox.world.subscriptions[2].id
    with sandbox.recording() as log:
        df = toolkit.resource_graph_policy_states(sub, reconcile=False, connection=conn)
    assert "reconciliation" not in df.attrs and len(df)
    assert {r.route for r in log} == {"resource_graph"}


@pytest.mark.parametrize(("kwargs", "parameter"), [
    ({}, "subscription_id"),
    ({"scope": "/subscriptions/fa45cb68-4748-4b16-94b6-0ce33d13187c/providers/"
               "Vendor.Authorization/policyAssignments/a"}, "scope"),
    ({"subscription_id": "x"}, "subscription_id"),
    ({"subscription_id": "fa45cb68-4748-4b16-94b6-0ce33d13187c", "reconcile": "yes"},
     "reconcile"),
    ({"subscription_id": "fa45cb68-4748-4b16-94b6-0ce33d13187c", "max_items": -2},
     "max_items"),
])
def test_bad_input_is_refused_before_any_request(kwargs: dict[str, Any], parameter: str,
                                                 conn: Any, sandbox: Any) -> None:
    with sandbox.recording() as log, pytest.raises(toolkit.ValidationError) as info:
        toolkit.resource_graph_policy_states(**kwargs, connection=conn)
    assert log == [] and info.value.parameter == parameter
