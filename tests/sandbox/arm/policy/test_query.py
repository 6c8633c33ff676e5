"""The policy-states query over HTTP: pages of a thousand records newest first, ``latest``,
``$select``, ``$apply``, ``$expand`` and the refusals of bad options."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from tests.sandbox.arm.policy.conftest import (
    error_of,
    post,
    record_keys,
    records_of,
    rg_scope,
    url_of,
)
from toolkit.sandbox.arm.policy.query import PAGE_SIZE, split_top


def test_components_filter_and_apply_at_resource_scope(sandbox, world, window) -> None:
    sub = world.subscriptions[0]
    rg = records_of(sandbox, rg_scope(sub.id, "rg-web-weu"), window)
    vault = next(r["resourceId"] for r in rg if r["resourceType"].endswith("vaults"))
    plain = records_of(sandbox, vault, window, expand="components")
    grouped = records_of(sandbox, vault, window, expand=(
        "components($filter=type eq 'Key';$apply=groupby((complianceState),"
        "aggregate($count as n)))"))
    assert any(r["components"] for r in plain)
    for full, agg in zip(plain, grouped, strict=True):
        keys = [c for c in full["components"] if c["type"] == "Key"]
        assert sum(c["n"] for c in agg["components"]) == len(keys)
        assert {c["complianceState"] for c in agg["components"]} == \
            {c["complianceState"] for c in keys}


def test_pages_hold_a_thousand_records_newest_first_up_to_top(sandbox, world, window) -> None:
    sub = world.subscriptions[0]
    url = url_of(sandbox, f"/subscriptions/{sub.id}", window=window, top="2500")
    counts, stamps = [], []
    while url:
        body = post(sandbox, url).json()
        assert body["@odata.count"] == len(body["value"])
        counts.append(len(body["value"]))
        stamps += [r["timestamp"] for r in body["value"]]
        url = body["@odata.nextLink"]
    assert counts == [PAGE_SIZE, PAGE_SIZE, 500]
    assert stamps == sorted(stamps, reverse=True)


def test_latest_is_the_newest_record_of_each_policy_on_each_resource(sandbox, world,
                                                                      window) -> None:
    scope = rg_scope(world.subscriptions[0].id, "rg-api-weu")
    days = (window[1] - timedelta(days=3), window[1])  # long enough for pairs seen many times
    every = records_of(sandbox, scope, days)
    latest = records_of(sandbox, scope, days, resource="latest")

    def pair(r: dict[str, Any]) -> tuple[str, ...]:
        return (r["resourceId"], r["policyAssignmentId"], r["policyDefinitionId"],
                r["policyDefinitionReferenceId"] or "")

    newest: dict[tuple[str, ...], dict[str, Any]] = {}
    for r in every:
        if pair(r) not in newest or r["timestamp"] > newest[pair(r)]["timestamp"]:
            newest[pair(r)] = r
    assert len(latest) == len(newest) < len(every)
    assert record_keys(latest) == record_keys(list(newest.values()))


def test_select_keeps_the_named_columns_in_their_own_case(sandbox, world, window) -> None:
    scope = rg_scope(world.subscriptions[0].id, "rg-web-weu")
    records = records_of(sandbox, scope, window, select="ResourceId,complianceState", top="5")
    assert len(records) == 5
    assert all(set(r) == {"@odata.id", "@odata.context", "resourceId", "complianceState"}
               for r in records)


def test_apply_answers_aggregated_rows(sandbox, world, window) -> None:
    scope = rg_scope(world.subscriptions[0].id, "rg-web-weu")
    every = records_of(sandbox, scope, window)
    rows = records_of(sandbox, scope, window,
                    apply="groupby((complianceState),aggregate($count as n))")
    counts: dict[str, int] = {}
    for r in every:
        counts[r["complianceState"]] = counts.get(r["complianceState"], 0) + 1
    assert {r["complianceState"]: r["n"] for r in rows} == counts


def _refusals(sub_id: str) -> list[tuple[str, str, dict[str, str], str]]:
    rg = rg_scope(sub_id, "rg-web-weu")
    return [
        (rg, "other", {}, "InvalidPolicyStatesResource"),
        (rg, "default", {"from": "2026-11-20T00:00:00Z", "to": "2026-11-19T00:00:00Z"},
         "InvalidQueryParameterValue"),
        (rg, "default", {"from": "yesterday"}, "InvalidQueryParameterValue"),
        (rg, "default", {"top": "-1"}, "InvalidQueryParameterValue"),
        (rg, "default", {"top": "ten"}, "InvalidQueryParameterValue"),
        (rg, "default", {"skiptoken": "not-a-token"}, "InvalidSkipToken"),
        (rg, "default", {"filter": "nosuch eq 'x'"}, "InvalidQueryParameterValue"),
        (rg, "default", {"apply": "groupby(("}, "InvalidQueryParameterValue"),
        (rg, "default", {"orderby": "timestamp sideways"}, "InvalidQueryParameterValue"),
        (rg, "default", {"select": "nosuch"}, "InvalidQueryParameterValue"),
        (rg, "latest", {"expand": "components"}, "InvalidQueryParameterValue"),
    ]


def test_bad_query_options_are_400_naming_the_problem(sandbox, world) -> None:
    for scope, resource, options, code in _refusals(world.subscriptions[0].id):
        r = post(sandbox, url_of(sandbox, scope, resource=resource, **options))
        assert error_of(r) == (400, code), (options, r.text[:300])
        assert r.json()["error"]["message"]


@pytest.mark.parametrize("expand", ["nothing", "components($top=3)",
                                    "policyEvaluationDetails($filter=type eq 'Key')"])
def test_bad_expands_at_resource_scope_are_400(sandbox, world, window, expand) -> None:
    sub = world.subscriptions[0]
    rid = records_of(sandbox, rg_scope(sub.id, "rg-web-weu"), window, top="1")[0]["resourceId"]
    r = post(sandbox, url_of(sandbox, rid, window=window, expand=expand))
    assert error_of(r) == (400, "InvalidQueryParameterValue")


def test_expand_items_split_outside_parentheses_and_quotes() -> None:
    assert split_top("components($filter=a eq 'x,y';$apply=b), policyEvaluationDetails", ",") == [
        "components($filter=a eq 'x,y';$apply=b)", "policyEvaluationDetails"]
    assert split_top(" , ", ",") == []
