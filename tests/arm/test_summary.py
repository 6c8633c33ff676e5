"""policy_summary against the sandbox tenant: agreement with compliance_summary at every scope,
top, filter and dtypes."""

from __future__ import annotations

import pandas as pd
import pytest

import toolkit


@pytest.mark.parametrize("where", ["mg", "sub", "rg"])
def test_policy_summary_agrees_with_compliance_summary_on_every_assignment(
        conn, world, window, where) -> None:
    start, end = window
    sub = world.subscriptions[0]
    scope = {"mg": {"scope": f"/providers/Vendor.Management/managementGroups/{world.tenant_id}"},
             "sub": {"subscription_id": sub.id},
             "rg": {"subscription_id": sub.id, "resource_group": "rg-web-weu"}}[where]
    states = toolkit.policy_states(**scope, start=start, end=end, connection=conn)
    summary = toolkit.policy_summary(**scope, start=start, end=end, connection=conn)
    mine = toolkit.compliance_summary(states, by="policyAssignmentId").set_index(
        "policyAssignmentId")
    rows = summary[summary["level"] == "assignment"].set_index("policyAssignmentId")
    assert set(rows.index.astype(str)) == set(mine.index.astype(str))
    for aid, row in rows.iterrows():
        theirs = mine.loc[aid]
        assert row["nonCompliantResources"] == theirs["non_compliant"]
        assert row["resources_compliant"] == theirs["compliant"]
        assert row["resources_conflict"] == theirs["conflict"]
        assert row["resources_exempt"] == theirs["exempt"]
        assert row["resources_unknown"] == theirs["unknown"]
    overall = toolkit.compliance_summary(states, by=None).iloc[0]
    top = summary[summary["level"] == "scope"].iloc[0]
    assert top["nonCompliantResources"] == overall["non_compliant"]
    assert sum(top[f"resources_{s}"] for s in ("compliant", "noncompliant", "conflict", "exempt",
                                                 "unknown")) == overall["resources"]


def test_policy_summary_top_keeps_the_most_non_compliant_assignments(conn, world) -> None:
    sub = world.subscriptions[0]
    full = toolkit.policy_summary(sub.id, connection=conn)
    top = toolkit.policy_summary(sub.id, top=2, connection=conn)
    ranked = full[full["level"] == "assignment"].sort_values("nonCompliantResources",
                                                             ascending=False)
    kept = top[top["level"] == "assignment"]
    assert len(kept) == 2
    assert list(kept["nonCompliantResources"]) == list(ranked["nonCompliantResources"].iloc[:2])


def test_policy_summary_filter_and_dtypes(conn, world) -> None:
    sub = world.subscriptions[0]
    df = toolkit.policy_summary(sub.id, filter="policyDefinitionAction eq 'deny'",
                                connection=conn)
    defs = df[df["level"] == "definition"]
    assert len(defs) and set(defs["effect"].astype(str)) == {"deny"}
    assert str(df["nonCompliantResources"].dtype) == "Int64"
    assert isinstance(df["level"].dtype, pd.CategoricalDtype) and df["level"].dtype.ordered


def test_policy_summary_counts_policy_groups_at_every_level(conn, world, window) -> None:
    start, end = window
    sub = world.subscriptions[0]
    df = toolkit.policy_summary(sub.id, start=start, end=end, connection=conn)
    groups = [f"groups_{s}" for s in ("compliant", "noncompliant", "conflict", "exempt",
                                      "unknown")]
    assert set(df["level"].astype(str)) == {"scope", "assignment", "definition", "group"}
    assert df[groups].notna().all().all() and (df[groups].sum(axis=1) > 0).all()
    assert all(str(df[c].dtype) == "Int64" for c in groups)
    # a group row counts the one group it is about
    assert (df.loc[df["level"] == "group", groups].sum(axis=1) == 1).all()
    # non-compliant policies are counted at the scope and for each assignment only
    inner = df["level"].isin(["definition", "group"])
    assert df.loc[inner, "nonCompliantPolicies"].isna().all()
    assert df.loc[~inner, "nonCompliantPolicies"].notna().all()


def test_policy_summary_an_assignment_of_one_definition_has_no_set(conn, world) -> None:
    pw = world.section("policy")
    single = {p.fields["policyAssignmentId"].lower() for p in pw.policies if not p.set_name}
    df = toolkit.policy_summary(world.subscriptions[0].id, connection=conn)
    mine = df[df["policyAssignmentId"].astype(str).str.lower().isin(single)]
    assert len(mine) and mine["policySetDefinitionId"].isna().all()
    assert mine["policyDefinitionReferenceId"].isna().all()
    assert mine.loc[mine["level"] == "group", "policyGroupName"].isna().all()
