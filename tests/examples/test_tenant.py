"""The official examples of the tenant operations (management groups list and hierarchy, the
subscriptions list, the compliance summary at several scopes), as published in the public
cloud's words, replayed over HTTP through the public functions of a ``cloud="public"``
connection: the frames hold the examples' values with the declared dtypes."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

import toolkit
from tests.conftest import example
from tests.replay import Answer, replay_server

MG = "18-management-groups"
SUMMARY = "19-policy-states-summarize"
_STATES = ("compliant", "noncompliant", "conflict", "exempt", "unknown")


@pytest.fixture
def replay(waits) -> Any:
    with replay_server() as rp:
        conn = toolkit.connect(base_url=rp.url, cloud="public", token="example-token-0123456789",
                               progress=False)
        conn.sleep = waits
        rp.conn = conn
        yield rp
        conn.close()


def _body(folder: str, name: str) -> Any:
    return example(folder, name)["responses"]["200"]["body"]


def test_management_groups_list_follows_the_examples_next_link(replay) -> None:
    body = _body(MG, "ListManagementGroups.json")
    [next_key] = [k for k in body if k != "value"]  # the key the service names the next page by
    first = {**body, next_key: f"{replay.url}/providers/Microsoft.Management/managementGroups"
                               "?api-version=2023-04-01&$skiptoken=page2"}
    replay.add("GET", r"managementGroups\?api-version=2023-04-01&\$skiptoken=page2",
               Answer(200, body))
    replay.add("GET", r"managementGroups\?api-version=2023-04-01$", Answer(200, first))
    df = toolkit.management_groups(connection=replay.conn)
    items = body["value"] * 2
    assert df["id"].tolist() == [i["id"] for i in items]
    assert df["name"].tolist() == [i["name"] for i in items]
    assert df["displayName"].tolist() == [i["properties"]["displayName"] for i in items]
    assert df["tenantId"].tolist() == [i["properties"]["tenantId"] for i in items]
    assert all(isinstance(df[c].dtype, pd.StringDtype) for c in df.columns)
    assert len(replay.seen) == 2


def _walk(node: dict, parent: str | None, depth: int, above: str) -> list[tuple]:
    path = f"{above}/{node['name']}" if above else node["name"]
    rows = [(node["id"], node["name"], node["type"], node.get("displayName"), parent, depth,
             path)]
    for child in node.get("children") or []:
        rows += _walk(child, node["id"], depth + 1, path)
    return rows


def test_management_group_tree_of_the_expand_and_recurse_example(replay) -> None:
    ex = example(MG, "GetManagementGroupWithExpandAndRecurse.json")
    body = ex["responses"]["200"]["body"]
    group = ex["parameters"]["groupId"]
    replay.add("GET", rf"/managementGroups/{group}\?.*\$expand=children&\$recurse=true",
               Answer(200, body))
    df = toolkit.management_group_tree(group, connection=replay.conn)
    props = body["properties"]
    root = {"id": body["id"], "name": body["name"], "type": body["type"],
            "displayName": props["displayName"], "children": props["children"]}
    want = _walk(root, props["details"]["parent"]["id"], 0, "")
    got = list(zip(df["id"], df["name"], df["type"], df["displayName"], df["parent_id"],
                   df["depth"], df["path"], strict=True))
    assert got == want
    assert set(df["type"]) == {"Microsoft.Management/managementGroups", "/subscriptions"}
    assert str(df["depth"].dtype) == "Int64"
    assert df.attrs["api_version"] == ex["parameters"]["api-version"]


def _counts(results: dict, key: str) -> dict[str, int]:
    found = {d["complianceState"]: d["count"] for d in results.get(key, [])}
    return {s: found.get(s, 0) for s in _STATES}


def _assert_row(row: pd.Series, results: dict) -> None:
    assert row["nonCompliantResources"] == results["nonCompliantResources"]
    if "nonCompliantPolicies" in results:
        assert row["nonCompliantPolicies"] == results["nonCompliantPolicies"]
    else:
        assert pd.isna(row["nonCompliantPolicies"])
    assert row["queryResultsUri"] == results["queryResultsUri"]
    for what, key in (("resources", "resourceDetails"), ("policies", "policyDetails"),
                      ("groups", "policyGroupDetails")):
        assert {s: row[f"{what}_{s}"] for s in _STATES} == _counts(results, key), key


@pytest.mark.parametrize("name, scope", [
    ("PolicyStates_SummarizeManagementGroupScope.json",
     "/providers/Microsoft.Management/managementGroups/{managementGroupName}"),
    ("PolicyStates_SummarizeSubscriptionLevelPolicySetDefinitionScope.json",
     "/subscriptions/{subscriptionId}/providers/Microsoft.Authorization/policySetDefinitions/"
     "{policySetDefinitionName}"),
    ("PolicyStates_SummarizeResourceGroupLevelPolicyAssignmentScope.json",
     "/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}/providers/"
     "Microsoft.Authorization/policyAssignments/{policyAssignmentName}"),
])
def test_policy_summary_of_the_official_examples(replay, name, scope) -> None:
    ex = example(SUMMARY, name)
    params = ex["parameters"]
    body = ex["responses"]["200"]["body"]
    replay.add("POST", r"/providers/Microsoft\.PolicyInsights/policyStates/latest/summarize\?",
               Answer(200, body))
    df = toolkit.policy_summary(scope=scope.format(**params), filter=params.get("$filter"),
                                start=params.get("$from"), end=params.get("$to"),
                                top=params.get("$top"), connection=replay.conn)
    [summary] = body["value"]
    assert df["level"].tolist() == ["scope"] + [
        level for a in summary["policyAssignments"]
        for level in ["assignment"] + ["definition"] * len(a["policyDefinitions"])
        + ["group"] * len(a["policyGroups"])]
    _assert_row(df.iloc[0], summary["results"])
    rows = (row for _, row in df.iloc[1:].iterrows())
    for a in summary["policyAssignments"]:
        row = next(rows)
        assert row["policyAssignmentId"] == a["policyAssignmentId"]
        assert row["policySetDefinitionId"] == (a["policySetDefinitionId"] or None)
        _assert_row(row, a["results"])
        for d in a["policyDefinitions"]:
            row = next(rows)
            assert row["policyDefinitionId"] == d["policyDefinitionId"]
            assert row["effect"] == d["effect"]
            assert row["policyDefinitionGroupNames"] == d.get("policyDefinitionGroupNames")
            _assert_row(row, d["results"])
        for g in a["policyGroups"]:
            row = next(rows)
            assert row["policyGroupName"] == (g["policyGroupName"] or None)
            _assert_row(row, g["results"])
    for col in ("nonCompliantResources", "nonCompliantPolicies", "groups_noncompliant"):
        assert str(df[col].dtype) == "Int64"
    assert isinstance(df["queryResultsUri"].dtype, pd.StringDtype)


def test_subscriptions_list_follows_the_examples_next_link(replay) -> None:
    body = _body("20-subscriptions", "GetSubscriptions.json")
    [next_key] = [k for k in body if k != "value"]
    # the example's link points nowhere reachable: the same page again, at the replay, and then
    # a last page without a link
    first = {**body, next_key: f"{replay.url}/subscriptions?api-version=2022-12-01&page=2"}
    last = {k: v for k, v in body.items() if k != next_key}
    replay.add("GET", r"/subscriptions\?api-version=2022-12-01&page=2", Answer(200, last))
    replay.add("GET", r"/subscriptions\?api-version=2022-12-01$", Answer(200, first))
    df = toolkit.subscriptions(connection=replay.conn)
    items = body["value"] * 2
    assert df["subscriptionId"].tolist() == [i["subscriptionId"] for i in items]
    assert df["displayName"].tolist() == [i["displayName"] for i in items]
    assert df["subscriptionPolicies.quotaId"].tolist() == \
        [i["subscriptionPolicies"]["quotaId"] for i in items]
    assert df["state"].astype(str).tolist() == [i["state"] for i in items]
    assert isinstance(df["state"].dtype, pd.CategoricalDtype)
    assert isinstance(df["subscriptionPolicies.spendingLimit"].dtype, pd.CategoricalDtype)
    assert len(replay.seen) == 2
