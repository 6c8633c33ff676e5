"""The sandbox's policy-state handlers over HTTP: what the service answers at every scope (each
scope the union of the scopes below it, an assignment or a definition narrowing to its policies),
page by page, in the service's window and as of its clock; the summary's counts; the refusals."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote, unquote

import pytest
import requests

from toolkit.sandbox.arm.policy.handlers import PAGE_SIZE, WINDOW_DAYS

NS = "Vendor.PolicyInsights"


def _pages(sandbox: Any, url: str, *, move_clock_by: timedelta | None = None
           ) -> list[dict[str, Any]]:
    """Every record of a query, following next links; the clock moves on after the first page
    when ``move_clock_by`` is given."""
    headers = {"Authorization": f"Bearer {sandbox.token('arm')}"}
    records: list[dict[str, Any]] = []
    first = True
    while url:
        r = requests.post(url, headers=headers, timeout=30)
        assert r.status_code == 200, r.text[:300]
        body = r.json()
        records.extend(body["value"])
        url = body.get("@odata.nextLink")
        if first and move_clock_by is not None:
            sandbox.hold_clock(sandbox.now() + move_clock_by)
        first = False
    return records


def _key(r: dict[str, Any]) -> tuple[str, ...]:
    return (r["resourceId"], r["policyAssignmentId"], r["policyDefinitionReferenceId"] or "",
            r["timestamp"])


def test_the_pages_of_one_query_keep_the_window_of_the_first_while_the_clock_moves(
        sandbox, world) -> None:
    # a window that starts before the service's: its start is where the service's window
    # begins, which moves with the clock; the pages after the first must not shift with it
    sub = world.subscriptions[0]
    url = (f"{sandbox.url}/subscriptions/{sub.id}/resourceGroups/rg-web-weu/providers/{NS}/"
           "policyStates/default/queryResults?api-version=2024-10-01"
           "&$from=2020-01-01T00:00:00Z&$to=2030-01-01T00:00:00Z")
    now = sandbox.now()
    sandbox.hold_clock(now)
    try:
        still = _pages(sandbox, url)
        moving = _pages(sandbox, url, move_clock_by=timedelta(days=45))
    finally:
        sandbox.hold_clock(None)
    assert len(still) > 2000  # several pages
    assert [_key(r) for r in moving] == [_key(r) for r in still]


# ------------------------------------------------------------------------------ helpers
API = "api-version=2024-10-01"


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture(scope="module")
def window(world) -> tuple[datetime, datetime]:
    """Half a day of the tenant's history ending three hours before its epoch."""
    end = world.epoch - timedelta(hours=3)
    return end - timedelta(hours=12), end


def _url(sandbox: Any, scope: str, *, resource: str = "default", action: str = "queryResults",
         window: tuple[datetime, datetime] | None = None, **options: str) -> str:
    url = (f"{sandbox.url}{scope}/providers/{NS}/policyStates/{resource}/{action}?{API}")
    if window is not None:
        url += f"&$from={_iso(window[0])}&$to={_iso(window[1])}"
    for name, value in options.items():
        url += f"&${name}={quote(value, safe='')}"
    return url


def _records(sandbox: Any, scope: str, window: tuple[datetime, datetime], *,
             resource: str = "default", **options: str) -> list[dict[str, Any]]:
    return _pages(sandbox, _url(sandbox, scope, resource=resource, window=window, **options))


def _keys(records: list[dict[str, Any]]) -> set[tuple[str, ...]]:
    return {(*_key(r), r["policyDefinitionId"], r["complianceState"]) for r in records}


def _post(sandbox: Any, url: str) -> requests.Response:
    return requests.post(url, headers={"Authorization": f"Bearer {sandbox.token('arm')}"},
                         timeout=30)


def _error(r: requests.Response) -> tuple[int, str]:
    return r.status_code, r.json()["error"]["code"]


def _mg(name: str) -> str:
    return f"/providers/Vendor.Management/managementGroups/{name}"


def _rg(sub_id: str, group: str) -> str:
    return f"/subscriptions/{sub_id}/resourceGroups/{group}"


# ------------------------------------------------------------------------------ scopes
def test_each_scope_is_the_union_of_the_scopes_below(sandbox, world, window) -> None:
    by_sub = {}
    for sub in world.subscriptions:
        whole = _records(sandbox, f"/subscriptions/{sub.id}", window)
        parts = [_records(sandbox, _rg(sub.id, g.name), window) for g in sub.resource_groups]
        assert all(len(p) for p in parts)
        assert sum(len(p) for p in parts) == len(whole)
        assert set().union(*map(_keys, parts)) == _keys(whole)
        by_sub[sub.name] = whole
    for mg in world.management_groups:
        whole = _records(sandbox, _mg(mg.name), window)
        below = [s.name for s in world.subscriptions if mg.name in world.ancestors(s.name)]
        assert sum(len(by_sub[s]) for s in below) == len(whole)
        assert set().union(*(_keys(by_sub[s]) for s in below)) == _keys(whole)
        assert all(mg.name in r["managementGroupIds"].split(",") for r in whole)


def test_a_resource_scope_holds_that_resources_records(sandbox, world, window) -> None:
    sub = world.subscriptions[0]
    group = _records(sandbox, _rg(sub.id, "rg-data-weu"), window)
    ids = list(dict.fromkeys(r["resourceId"] for r in group))[:4]
    for rid in ids:
        one = _records(sandbox, rid, window)
        assert len(one) and _keys(one) == _keys([r for r in group if r["resourceId"] == rid])
    # the resource id is matched without regard to case
    assert _keys(_records(sandbox, ids[0].upper().replace("/PROVIDERS/VENDOR.POLICYINSIGHTS",
                                                          ""), window)) == _keys(
        [r for r in group if r["resourceId"] == ids[0]])


def test_an_assignment_appears_at_every_scope_below_its_own(sandbox, world, window) -> None:
    def names(scope: str) -> set[str]:
        return {r["policyAssignmentName"] for r in _records(sandbox, scope, window)}

    retail = [s for s in world.subscriptions if "retail" in world.ancestors(s.name)]
    platform = [s for s in world.subscriptions if "platform" in world.ancestors(s.name)]
    assert retail and platform
    for sub in retail:
        assert "tagging-retail" in names(f"/subscriptions/{sub.id}")
        for g in sub.resource_groups:
            assert {"tagging-retail", "monitoring-baseline"} <= names(_rg(sub.id, g.name))
    for sub in platform:
        assert "tagging-retail" not in names(f"/subscriptions/{sub.id}")


def test_assignment_and_definition_scopes_narrow_to_their_policies(sandbox, world,
                                                                   window) -> None:
    sub = next(s for s in world.subscriptions if s.name == "retail-prod")
    whole = _records(sandbox, f"/subscriptions/{sub.id}", window)
    auth = f"/subscriptions/{sub.id}/providers/Vendor.Authorization"
    mine = _records(sandbox, f"{auth}/policyAssignments/sec-baseline-prod", window)
    expected = [r for r in whole if r["policyAssignmentName"] == "sec-baseline-prod"]
    assert len(mine) and _keys(mine) == _keys(expected)
    sql = _records(sandbox, f"{_rg(sub.id, 'rg-data-weu')}/providers/Vendor.Authorization/"
                            "policyAssignments/sql-auditing-data", window)
    assert len(sql) and {r["policyAssignmentName"] for r in sql} == {"sql-auditing-data"}
    definition = expected[0]["policyDefinitionName"]
    by_def = _records(sandbox, f"{auth}/policyDefinitions/{definition}", window)
    assert _keys(by_def) == _keys([r for r in whole if r["policyDefinitionName"] == definition])
    set_name = expected[0]["policySetDefinitionName"]
    by_set = _records(sandbox, f"{auth}/policySetDefinitions/{set_name}", window)
    assert _keys(by_set) == _keys([r for r in whole
                                   if r["policySetDefinitionName"] == set_name])


def test_components_filter_and_apply_at_resource_scope(sandbox, world, window) -> None:
    sub = world.subscriptions[0]
    rg = _records(sandbox, _rg(sub.id, "rg-web-weu"), window)
    vault = next(r["resourceId"] for r in rg if r["resourceType"].endswith("vaults"))
    plain = _records(sandbox, vault, window, expand="components")
    grouped = _records(sandbox, vault, window, expand=(
        "components($filter=type eq 'Key';$apply=groupby((complianceState),"
        "aggregate($count as n)))"))
    assert any(r["components"] for r in plain)
    for full, agg in zip(plain, grouped, strict=True):
        keys = [c for c in full["components"] if c["type"] == "Key"]
        assert sum(c["n"] for c in agg["components"]) == len(keys)
        assert {c["complianceState"] for c in agg["components"]} == \
            {c["complianceState"] for c in keys}


# ------------------------------------------------------------------------------ window, clock
def test_a_query_before_the_services_window_answers_no_records(sandbox, world) -> None:
    sub = world.subscriptions[0]
    end = sandbox.now() - timedelta(days=WINDOW_DAYS + 1)
    r = _post(sandbox, _url(sandbox, _rg(sub.id, "rg-web-weu"),
                            window=(end - timedelta(days=3), end)))
    assert r.status_code == 200
    body = r.json()
    assert body["value"] == [] and body["@odata.count"] == 0 and not body["@odata.nextLink"]


def test_a_window_reaching_before_the_services_starts_where_it_does(sandbox, world) -> None:
    sub = world.subscriptions[0]
    # a clock forty days on: the service's window then starts inside the world's history
    now = world.epoch + timedelta(days=40)
    sandbox.hold_clock(now)
    try:
        edge = now - timedelta(days=WINDOW_DAYS)
        got = _records(sandbox, _rg(sub.id, "rg-web-weu"),
                       (edge - timedelta(days=5), edge + timedelta(days=1)))
        inside = _records(sandbox, _rg(sub.id, "rg-web-weu"), (edge, edge + timedelta(days=1)))
        sandbox.hold_clock(world.epoch)  # the same window, all of it kept
        whole = _records(sandbox, _rg(sub.id, "rg-web-weu"),
                         (edge - timedelta(days=5), edge + timedelta(days=1)))
    finally:
        sandbox.hold_clock(None)
    assert len(got) and _keys(got) == _keys(inside)
    assert _keys(got) < _keys(whole)  # the part before the service's window is gone


def test_a_held_clock_answers_as_of_that_day(sandbox, world) -> None:
    sub = world.subscriptions[0]
    day = world.epoch - timedelta(days=10)
    sandbox.hold_clock(day)
    try:
        records = _pages(sandbox, _url(sandbox, _rg(sub.id, "rg-web-weu")))
    finally:
        sandbox.hold_clock(None)
    stamps = [datetime.fromisoformat(r["timestamp"]) for r in records]
    assert stamps and max(stamps) <= day and min(stamps) >= day - timedelta(days=1)


# ------------------------------------------------------------------------------ pages, latest
def test_pages_hold_a_thousand_records_newest_first_up_to_top(sandbox, world, window) -> None:
    sub = world.subscriptions[0]
    url = _url(sandbox, f"/subscriptions/{sub.id}", window=window, top="2500")
    counts, stamps = [], []
    while url:
        body = _post(sandbox, url).json()
        assert body["@odata.count"] == len(body["value"])
        counts.append(len(body["value"]))
        stamps += [r["timestamp"] for r in body["value"]]
        url = body["@odata.nextLink"]
    assert counts == [PAGE_SIZE, PAGE_SIZE, 500]
    assert stamps == sorted(stamps, reverse=True)


def test_latest_is_the_newest_record_of_each_policy_on_each_resource(sandbox, world,
                                                                      window) -> None:
    scope = _rg(world.subscriptions[0].id, "rg-api-weu")
    days = (window[1] - timedelta(days=3), window[1])  # long enough for pairs seen many times
    every = _records(sandbox, scope, days)
    latest = _records(sandbox, scope, days, resource="latest")

    def pair(r: dict[str, Any]) -> tuple[str, ...]:
        return (r["resourceId"], r["policyAssignmentId"], r["policyDefinitionId"],
                r["policyDefinitionReferenceId"] or "")

    newest: dict[tuple[str, ...], dict[str, Any]] = {}
    for r in every:
        if pair(r) not in newest or r["timestamp"] > newest[pair(r)]["timestamp"]:
            newest[pair(r)] = r
    assert len(latest) == len(newest) < len(every)
    assert _keys(latest) == _keys(list(newest.values()))


def test_select_keeps_the_named_columns_in_their_own_case(sandbox, world, window) -> None:
    scope = _rg(world.subscriptions[0].id, "rg-web-weu")
    records = _records(sandbox, scope, window, select="ResourceId,complianceState", top="5")
    assert len(records) == 5
    assert all(set(r) == {"@odata.id", "@odata.context", "resourceId", "complianceState"}
               for r in records)


def test_apply_answers_aggregated_rows(sandbox, world, window) -> None:
    scope = _rg(world.subscriptions[0].id, "rg-web-weu")
    every = _records(sandbox, scope, window)
    rows = _records(sandbox, scope, window,
                    apply="groupby((complianceState),aggregate($count as n))")
    counts: dict[str, int] = {}
    for r in every:
        counts[r["complianceState"]] = counts.get(r["complianceState"], 0) + 1
    assert {r["complianceState"]: r["n"] for r in rows} == counts


# ------------------------------------------------------------------------------ refusals
def _refusals(sub_id: str) -> list[tuple[str, str, dict[str, str], str]]:
    rg = _rg(sub_id, "rg-web-weu")
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
        r = _post(sandbox, _url(sandbox, scope, resource=resource, **options))
        assert _error(r) == (400, code), (options, r.text[:300])
        assert r.json()["error"]["message"]


@pytest.mark.parametrize("expand", ["nothing", "components($top=3)",
                                    "policyEvaluationDetails($filter=type eq 'Key')"])
def test_bad_expands_at_resource_scope_are_400(sandbox, world, window, expand) -> None:
    sub = world.subscriptions[0]
    rid = _records(sandbox, _rg(sub.id, "rg-web-weu"), window, top="1")[0]["resourceId"]
    r = _post(sandbox, _url(sandbox, rid, window=window, expand=expand))
    assert _error(r) == (400, "InvalidQueryParameterValue")


def test_unknown_scopes_are_404_with_their_own_codes(sandbox, world) -> None:
    sub = world.subscriptions[0]
    auth = f"/subscriptions/{sub.id}/providers/Vendor.Authorization"
    for scope, code in [
        (_mg("no-such-group"), "ManagementGroupNotFound"),
        (f"{auth}/policyAssignments/no-such-assignment", "PolicyAssignmentNotFound"),
        (f"{_rg(sub.id, 'rg-web-weu')}/providers/Vendor.Authorization/policyAssignments/"
         "sec-baseline-prod", "PolicyAssignmentNotFound"),  # assigned at the subscription
        (f"{auth}/policyDefinitions/no-such-definition", "PolicyDefinitionNotFound"),
        (f"{auth}/policySetDefinitions/no-such-set", "PolicySetDefinitionNotFound"),
        (f"{_rg(sub.id, 'rg-web-weu')}/providers/Vendor.Web/sites/no-such-site",
         "ResourceNotFound"),
        (_rg(sub.id, "rg-missing"), "ResourceGroupNotFound"),
        ("/subscriptions/00000000-0000-4000-8000-000000000000", "SubscriptionNotFound"),
    ]:
        r = _post(sandbox, _url(sandbox, scope))
        assert _error(r) == (404, code), scope


# ------------------------------------------------------------------------------ summarize
def test_the_summary_counts_the_latest_records_of_the_scope(sandbox, world, window) -> None:
    scope = _rg(world.subscriptions[0].id, "rg-web-weu")
    latest = _records(sandbox, scope, window, resource="latest")
    r = _post(sandbox, _url(sandbox, scope, resource="latest", action="summarize",
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
    top = _post(sandbox, _url(sandbox, scope, resource="latest", action="summarize",
                              window=window, top="2")).json()["value"][0]
    assert [a["policyAssignmentId"] for a in top["policyAssignments"]] == \
        [a["policyAssignmentId"] for a in assignments[:2]]


def test_summarize_refuses_default_and_expand(sandbox, world) -> None:
    scope = _rg(world.subscriptions[0].id, "rg-web-weu")
    r = _post(sandbox, _url(sandbox, scope, resource="default", action="summarize"))
    assert _error(r) == (400, "InvalidPolicyStatesResource")
    r = _post(sandbox, _url(sandbox, scope, resource="latest", action="summarize",
                            expand="components"))
    assert _error(r) == (400, "InvalidQueryParameterValue")


# ------------------------------------------------------------- summarize: the official shape
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
        "management group": _mg(world.tenant_id),
        "subscription": f"/subscriptions/{sub.id}",
        "resource group": _rg(sub.id, "rg-web-weu"),
        "set assignment": in_set.fields["policyAssignmentId"],
        "single assignment": single.fields["policyAssignmentId"],
        "definition": f"{auth}/policyDefinitions/{single.fields['policyDefinitionName']}",
        "set definition": f"{auth}/policySetDefinitions/{in_set.fields['policySetDefinitionName']}",
    }


def _summary(sandbox: Any, scope: str, window: tuple[datetime, datetime],
             **options: str) -> dict[str, Any]:
    r = _post(sandbox, _url(sandbox, scope, resource="latest", action="summarize",
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
        records = _pages(sandbox, link)
        # the records that are not compliant (the official links' IsCompliant eq false), among
        # them every non-compliant resource the row counts
        assert not any(r["isCompliant"] for r in records), level
        assert "Compliant" not in {r["complianceState"] for r in records}
        assert len({r["resourceId"] for r in records if r["complianceState"] == "NonCompliant"}
                   ) == results["nonCompliantResources"], (level, link)
        if options:
            assert {r["policyDefinitionAction"] for r in records} <= {"audit"}
