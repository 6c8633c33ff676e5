"""The policy-states summary over HTTP: its counts, its levels and members as the service's, the
links to the records behind each row, and its refusals."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import unquote

import pytest

from tests.sandbox.arm.policy.conftest import (
    all_pages,
    error_of,
    mg_scope,
    post,
    records_of,
    rg_scope,
    url_of,
)


def test_the_summary_counts_the_latest_records_of_the_scope(sandbox, world, window) -> None:
    scope = rg_scope(world.subscriptions[0].id, "rg-web-weu")
    latest = records_of(sandbox, scope, window, resource="latest")
    r = post(sandbox, url_of(sandbox, scope, resource="latest", action="summarize",
                            window=window))
    assert r.status_code == 200
    [summary] = r.json()["value"]

    def non_compliant(records: list[dict[str, Any]]) -> int:
        return len({x["resourceId"] for x in records if x["complianceState"] == "NonCompliant"})

    results = summary["results"]
    assert results["nonCompliantResources"] == non_compliant(latest)
    assert sum(d["count"] for d in results["resourceDetails"]) == \
        len({x["resourceId"] for x in latest})
    assignments = summary["policyAssignments"]
    assert {a["policyAssignmentId"] for a in assignments} == \
        {x["policyAssignmentId"] for x in latest}
    for a in assignments:
        mine = [x for x in latest if x["policyAssignmentId"] == a["policyAssignmentId"]]
        assert a["results"]["nonCompliantResources"] == non_compliant(mine)
        assert sum(d["count"] for d in a["results"]["resourceDetails"]) == \
            len({x["resourceId"] for x in mine})
    ranked = [a["results"]["nonCompliantResources"] for a in assignments]
    assert ranked == sorted(ranked, reverse=True)
    top = post(sandbox, url_of(sandbox, scope, resource="latest", action="summarize",
                              window=window, top="2")).json()["value"][0]
    assert [a["policyAssignmentId"] for a in top["policyAssignments"]] == \
        [a["policyAssignmentId"] for a in assignments[:2]]


def test_summarize_refuses_default_and_expand(sandbox, world) -> None:
    scope = rg_scope(world.subscriptions[0].id, "rg-web-weu")
    r = post(sandbox, url_of(sandbox, scope, resource="default", action="summarize"))
    assert error_of(r) == (400, "InvalidPolicyStatesResource")
    r = post(sandbox, url_of(sandbox, scope, resource="latest", action="summarize",
                            expand="components"))
    assert error_of(r) == (400, "InvalidQueryParameterValue")


def _official_levels() -> dict[str, set[str]]:
    """The keys of each level of the official summarize example (an assignment of a set with
    a policy group): the sandbox answers every level with the same members."""
    from tests.conftest import example

    ex = example("19-policy-states-summarize",
                 "PolicyStates_SummarizeResourceGroupLevelPolicyAssignmentScope.json")
    [summary] = ex["responses"]["200"]["body"]["value"]
    [a] = summary["policyAssignments"]
    [d] = a["policyDefinitions"]
    [g] = a["policyGroups"]
    return {"summary": set(summary), "scope": set(summary["results"]), "assignment": set(a),
            "assignment results": set(a["results"]), "definition": set(d),
            "definition results": set(d["results"]), "group": set(g),
            "group results": set(g["results"])}


def _summary_scopes(world) -> dict[str, str]:
    pw = world.section("policy")
    sub = world.subscriptions[0]
    in_set = next(p for p in pw.policies if p.set_name and sub.id in
                  p.fields["policyAssignmentId"])
    single = next(p for p in pw.policies if not p.set_name)
    auth = f"/subscriptions/{sub.id}/providers/Vendor.Authorization"
    return {
        "management group": mg_scope(world.tenant_id),
        "subscription": f"/subscriptions/{sub.id}",
        "resource group": rg_scope(sub.id, "rg-web-weu"),
        "set assignment": in_set.fields["policyAssignmentId"],
        "single assignment": single.fields["policyAssignmentId"],
        "definition": f"{auth}/policyDefinitions/{single.fields['policyDefinitionName']}",
        "set definition": f"{auth}/policySetDefinitions/{in_set.fields['policySetDefinitionName']}",
    }


def _summary(sandbox: Any, scope: str, window: tuple[datetime, datetime],
             **options: str) -> dict[str, Any]:
    r = post(sandbox, url_of(sandbox, scope, resource="latest", action="summarize",
                            window=window, **options))
    assert r.status_code == 200, r.text[:300]
    [summary] = r.json()["value"]
    return summary


@pytest.mark.parametrize("where", ["management group", "subscription", "resource group",
                                   "set assignment", "single assignment", "definition",
                                   "set definition"])
def test_every_level_of_the_summary_has_the_official_members(sandbox, world, window,
                                                             where) -> None:
    official = _official_levels()
    summary = _summary(sandbox, _summary_scopes(world)[where], window)
    assert set(summary) == official["summary"]
    assert set(summary["results"]) == official["scope"]
    assert summary["policyAssignments"]
    for a in summary["policyAssignments"]:
        assert set(a) == official["assignment"]
        assert set(a["results"]) == official["assignment results"]
        for d in a["policyDefinitions"]:
            # the group names are left out for a definition in no group (as officially)
            assert set(d) | {"policyDefinitionGroupNames"} == official["definition"]
            assert set(d["results"]) == official["definition results"]
        assert a["policyGroups"]
        for g in a["policyGroups"]:
            assert set(g) == official["group"]
            assert set(g["results"]) == official["group results"]


def test_a_single_definition_assignment_names_no_set_with_an_empty_string(sandbox, world,
                                                                          window) -> None:
    # the official subscription-scope summarize example: "policySetDefinitionId": "" and
    # "policyDefinitionReferenceId": "" for an assignment of one definition, whose policies
    # count in one group named ""
    [a] = _summary(sandbox, _summary_scopes(world)["single assignment"],
                   window)["policyAssignments"]
    assert a["policySetDefinitionId"] == ""
    assert [d["policyDefinitionReferenceId"] for d in a["policyDefinitions"]] == [""]
    assert [g["policyGroupName"] for g in a["policyGroups"]] == [""]


def _rows_with_links(summary: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    rows = [("scope", summary["results"])]
    for a in summary["policyAssignments"]:
        rows.append(("assignment", a["results"]))
        rows += [("definition", d["results"]) for d in a["policyDefinitions"]]
        rows += [(f"group {g['policyGroupName']}", g["results"]) for g in a["policyGroups"]]
    return rows


@pytest.mark.parametrize("where, options", [
    ("subscription", {}),
    ("set assignment", {}),
    ("resource group", {"filter": "policyDefinitionAction eq 'audit'"}),
])
def test_each_rows_link_lists_the_records_that_are_not_compliant_behind_it(
        sandbox, world, window, where, options) -> None:
    summary = _summary(sandbox, _summary_scopes(world)[where], window, **options)
    assert summary["results"]["nonCompliantResources"] > 0
    for level, results in _rows_with_links(summary):
        link = results["queryResultsUri"]
        assert "IsCompliant%20eq%20false" in link, link
        group = level.removeprefix("group ")
        if level.startswith("group ") and group:  # named as the official links name a group
            assert f"'{group}' IN PolicyDefinitionGroupNames" in unquote(link), link
        records = all_pages(sandbox, link)
        # the records that are not compliant (the official links' IsCompliant eq false), among
        # them every non-compliant resource the row counts
        assert not any(r["isCompliant"] for r in records), level
        assert "Compliant" not in {r["complianceState"] for r in records}
        assert len({r["resourceId"] for r in records if r["complianceState"] == "NonCompliant"}
                   ) == results["nonCompliantResources"], (level, link)
        if options:
            assert {r["policyDefinitionAction"] for r in records} <= {"audit"}
