"""The scopes of the policy-states routes: each scope the union of the scopes below it, an
assignment or a definition narrowing to its policies, a resource to its records; unknown scopes
answer 404 with their own codes."""

from __future__ import annotations

from tests.sandbox.arm.policy.conftest import (
    error_of,
    mg_scope,
    post,
    record_keys,
    records_of,
    rg_scope,
    url_of,
)


def test_each_scope_is_the_union_of_the_scopes_below(sandbox, world, window) -> None:
    by_sub = {}
    for sub in world.subscriptions:
        whole = records_of(sandbox, f"/subscriptions/{sub.id}", window)
        parts = [records_of(sandbox, rg_scope(sub.id, g.name), window) for g in sub.resource_groups]
        assert all(len(p) for p in parts)
        assert sum(len(p) for p in parts) == len(whole)
        assert set().union(*map(record_keys, parts)) == record_keys(whole)
        by_sub[sub.name] = whole
    for mg in world.management_groups:
        whole = records_of(sandbox, mg_scope(mg.name), window)
        below = [s.name for s in world.subscriptions if mg.name in world.ancestors(s.name)]
        assert sum(len(by_sub[s]) for s in below) == len(whole)
        assert set().union(*(record_keys(by_sub[s]) for s in below)) == record_keys(whole)
        assert all(mg.name in r["managementGroupIds"].split(",") for r in whole)


def test_a_resource_scope_holds_that_resources_records(sandbox, world, window) -> None:
    sub = world.subscriptions[0]
    group = records_of(sandbox, rg_scope(sub.id, "rg-data-weu"), window)
    ids = list(dict.fromkeys(r["resourceId"] for r in group))[:4]
    for rid in ids:
        one = records_of(sandbox, rid, window)
        assert len(one) and record_keys(one) == record_keys(
            [r for r in group if r["resourceId"] == rid])
    # the resource id is matched without regard to case
    upper = ids[0].upper().replace("/PROVIDERS/VENDOR.POLICYINSIGHTS", "")
    assert record_keys(records_of(sandbox, upper, window)) == record_keys(
        [r for r in group if r["resourceId"] == ids[0]])


def test_an_assignment_appears_at_every_scope_below_its_own(sandbox, world, window) -> None:
    def names(scope: str) -> set[str]:
        return {r["policyAssignmentName"] for r in records_of(sandbox, scope, window)}

    retail = [s for s in world.subscriptions if "retail" in world.ancestors(s.name)]
    platform = [s for s in world.subscriptions if "platform" in world.ancestors(s.name)]
    assert retail and platform
    for sub in retail:
        assert "tagging-retail" in names(f"/subscriptions/{sub.id}")
        for g in sub.resource_groups:
            assert {"tagging-retail", "monitoring-baseline"} <= names(rg_scope(sub.id, g.name))
    for sub in platform:
        assert "tagging-retail" not in names(f"/subscriptions/{sub.id}")


def test_assignment_and_definition_scopes_narrow_to_their_policies(sandbox, world,
                                                                   window) -> None:
    sub = next(s for s in world.subscriptions if s.name == "retail-prod")
    whole = records_of(sandbox, f"/subscriptions/{sub.id}", window)
    auth = f"/subscriptions/{sub.id}/providers/Vendor.Authorization"
    mine = records_of(sandbox, f"{auth}/policyAssignments/sec-baseline-prod", window)
    expected = [r for r in whole if r["policyAssignmentName"] == "sec-baseline-prod"]
    assert len(mine) and record_keys(mine) == record_keys(expected)
    sql = records_of(sandbox, f"{rg_scope(sub.id, 'rg-data-weu')}/providers/Vendor.Authorization/"
                            "policyAssignments/sql-auditing-data", window)
    assert len(sql) and {r["policyAssignmentName"] for r in sql} == {"sql-auditing-data"}
    definition = expected[0]["policyDefinitionName"]
    by_def = records_of(sandbox, f"{auth}/policyDefinitions/{definition}", window)
    assert record_keys(by_def) == record_keys(
        [r for r in whole if r["policyDefinitionName"] == definition])
    set_name = expected[0]["policySetDefinitionName"]
    by_set = records_of(sandbox, f"{auth}/policySetDefinitions/{set_name}", window)
    assert record_keys(by_set) == record_keys([r for r in whole
                                   if r["policySetDefinitionName"] == set_name])


def test_unknown_scopes_are_404_with_their_own_codes(sandbox, world) -> None:
    sub = world.subscriptions[0]
    auth = f"/subscriptions/{sub.id}/providers/Vendor.Authorization"
    for scope, code in [
        (mg_scope("no-such-group"), "ManagementGroupNotFound"),
        (f"{auth}/policyAssignments/no-such-assignment", "PolicyAssignmentNotFound"),
        (f"{rg_scope(sub.id, 'rg-web-weu')}/providers/Vendor.Authorization/policyAssignments/"
         "sec-baseline-prod", "PolicyAssignmentNotFound"),  # assigned at the subscription
        (f"{auth}/policyDefinitions/no-such-definition", "PolicyDefinitionNotFound"),
        (f"{auth}/policySetDefinitions/no-such-set", "PolicySetDefinitionNotFound"),
        (f"{rg_scope(sub.id, 'rg-web-weu')}/providers/Vendor.Web/sites/no-such-site",
         "ResourceNotFound"),
        (rg_scope(sub.id, "rg-missing"), "ResourceGroupNotFound"),
        ("/subscriptions/00000000-0000-4000-8000-000000000000", "SubscriptionNotFound"),
    ]:
        r = post(sandbox, url_of(sandbox, scope))
        assert error_of(r) == (404, code), scope
