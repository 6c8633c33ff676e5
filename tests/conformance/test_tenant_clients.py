"""The vendors' clients for the tenant against the sandbox in the public cloud's words: the
management groups list (``@nextLink`` pages) and hierarchy (azure-mgmt-managementgroups), the
subscriptions list (azure-mgmt-resource-subscriptions), the resource groups list at the client's
default api-version (azure-mgmt-resource), each across several pages, and the compliance summary
at every scope (azure-mgmt-policyinsights)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from tests.conformance.conftest import NOT_INSTALLED, enum_values

pytest.importorskip("azure.mgmt.managementgroups", reason=NOT_INSTALLED)
pytest.importorskip("azure.mgmt.policyinsights", reason=NOT_INSTALLED)
pytest.importorskip("azure.mgmt.resource.resources", reason=NOT_INSTALLED)
pytest.importorskip("azure.mgmt.resource.subscriptions", reason=NOT_INSTALLED)

from azure.mgmt.managementgroups import ManagementGroupsMgmtClient
from azure.mgmt.managementgroups.models import ManagementGroupChildType
from azure.mgmt.policyinsights import PolicyInsightsClient
from azure.mgmt.policyinsights.models import QueryOptions
from azure.mgmt.resource.resources import ResourceManagementClient
from azure.mgmt.resource.subscriptions import SubscriptionClient

import toolkit


def _routes(log: list[Any], route: str) -> list[Any]:
    return [r for r in log if r.route == route]


# ------------------------------------------------------------------------------ tenant lists

def test_management_groups_pager_follows_at_next_link(cloud_sandbox, credential,
                                                     client_kwargs) -> None:
    world = cloud_sandbox.world
    client = ManagementGroupsMgmtClient(credential, **client_kwargs)
    with cloud_sandbox.recording() as log:
        groups = list(client.management_groups.list())
    assert len(_routes(log, "management_groups")) > 1  # several pages
    assert [g.name for g in groups] == [m.name for m in world.management_groups]
    assert {g.type for g in groups} == {"Microsoft.Management/managementGroups"}
    assert {g.properties.tenant_id for g in groups} == {world.tenant_id}


def test_management_group_hierarchy_with_expand_and_recurse(cloud_sandbox, credential,
                                                            client_kwargs) -> None:
    world = cloud_sandbox.world
    client = ManagementGroupsMgmtClient(credential, **client_kwargs)
    root = client.management_groups.get(world.tenant_id, expand="children", recurse=True)
    assert root.name == world.tenant_id and root.properties.display_name == "Tenant Root Group"
    assert root.properties.details.parent is None
    assert isinstance(root.properties.details.updated_time, dt.datetime)
    nodes, stack = [], list(root.properties.children)
    while stack:
        node = stack.pop()
        nodes.append(node)
        stack.extend(node.children or [])
    assert {n.type for n in nodes} == enum_values(ManagementGroupChildType)
    subs = {n.name: n.display_name for n in nodes if n.type == "/subscriptions"}
    assert subs == {s.id: s.name for s in world.subscriptions}
    assert {n.name for n in nodes if n.type != "/subscriptions"} == \
        {m.name for m in world.management_groups} - {world.tenant_id}
    # the toolkit reads the same hierarchy
    conn = toolkit.connect(sandbox=cloud_sandbox, progress=False)
    tree = toolkit.management_group_tree(connection=conn)
    conn.close()
    assert sorted(tree["id"].iloc[1:]) == sorted(n.id for n in nodes)


def test_subscriptions_pager_reads_every_page(cloud_sandbox, credential, client_kwargs) -> None:
    client = SubscriptionClient(credential, **client_kwargs)
    with cloud_sandbox.recording() as log:
        subs = list(client.subscriptions.list())
    assert len(_routes(log, "subscriptions")) > 1
    assert [s.subscription_id for s in subs] == [s.id for s in cloud_sandbox.world.subscriptions]
    assert {s.state for s in subs} == {"Enabled"}


def test_resource_groups_pager_at_the_clients_default_version(cloud_sandbox, credential,
                                                             client_kwargs) -> None:
    sub = cloud_sandbox.world.subscriptions[0]
    client = ResourceManagementClient(credential, sub.id, **client_kwargs)
    with cloud_sandbox.recording() as log:
        groups = list(client.resource_groups.list())
    pages = _routes(log, "resource_groups")
    assert len(pages) > 1 and all("api-version=2025-04-01" in r.query for r in pages)
    assert [g.name for g in groups] == [g.name for g in sub.resource_groups]
    assert {g.type for g in groups} == {"Microsoft.Resources/resourceGroups"}
    assert all(g.properties.provisioning_state == "Succeeded" for g in groups)


# ------------------------------------------------------------------------------ summarize

def _scopes(world) -> dict[str, tuple[str, tuple[Any, ...]]]:
    """scope -> (the client's summarize_for_* suffix, its arguments after the resource word)."""
    pw = world.section("policy")
    sub = world.subscriptions[0]
    at_sub = next(p for p in pw.policies if p.set_name and
                  p.fields["policyAssignmentScope"].lower() == f"/subscriptions/{sub.id}")
    at_rg = next(p for p in pw.policies if p.assignment.scope[0] == "rg"
                 and p.fields["policyAssignmentScope"].lower().startswith(
                     f"/subscriptions/{sub.id}/"))
    single = next(p for p in pw.policies if not p.set_name)
    resource = pw.resources[pw.by_group[(sub.id.lower(), "rg-web-weu")][0]]
    return {
        "management group": ("management_group", (world.tenant_id,)),
        "subscription": ("subscription", (sub.id,)),
        "resource group": ("resource_group", (sub.id, "rg-web-weu")),
        "resource": ("resource", (resource.fields["resourceId"],)),
        "definition": ("policy_definition", (sub.id, single.fields["policyDefinitionName"])),
        "set definition": ("policy_set_definition",
                           (sub.id, at_sub.fields["policySetDefinitionName"])),
        "subscription assignment": ("subscription_level_policy_assignment",
                                    (sub.id, at_sub.assignment.name)),
        "resource group assignment": ("resource_group_level_policy_assignment",
                                      (sub.id, at_rg.assignment.scope[2], at_rg.assignment.name)),
    }


@pytest.mark.parametrize("where", ["management group", "subscription", "resource group",
                                   "resource", "definition", "set definition",
                                   "subscription assignment", "resource group assignment"])
def test_summarize_at_every_scope(cloud_sandbox, credential, client_kwargs, where) -> None:
    world = cloud_sandbox.world
    suffix, args = _scopes(world)[where]
    end = dt.datetime(2026, 11, 20, 6, tzinfo=dt.UTC)
    client = PolicyInsightsClient(credential, world.subscriptions[0].id, **client_kwargs)
    summarize = getattr(client.policy_states, f"summarize_for_{suffix}")
    result = summarize("latest", *args, query_options=QueryOptions(
        from_property=end - dt.timedelta(days=1), to=end))
    [summary] = result.value
    levels = [summary.results]
    for a in summary.policy_assignments:
        assert a.policy_assignment_id.startswith(("/subscriptions/", "/providers/"))
        assert a.policy_set_definition_id is not None  # "" for one definition, not null
        levels.append(a.results)
        for d in a.policy_definitions:
            assert d.policy_definition_reference_id is not None and d.effect
            levels.append(d.results)
        assert a.policy_groups
        levels += [g.results for g in a.policy_groups]
    assert len(levels) > 1 or where == "resource"
    for results in levels:
        # every level in the official shape: group details and a link to the records behind it
        assert results.policy_group_details and results.resource_details
        assert "/providers/Microsoft.PolicyInsights/policyStates/latest/queryResults?" in \
            results.query_results_uri
        assert "IsCompliant%20eq%20false" in results.query_results_uri
        states = {d.compliance_state for d in results.resource_details}
        assert states <= {"compliant", "noncompliant", "conflict", "exempt", "unknown"}
    # the toolkit's frame of the same scope counts the same
    conn = toolkit.connect(sandbox=cloud_sandbox, progress=False)
    scope = {"management group": f"/providers/Microsoft.Management/managementGroups/{args[0]}",
             "resource": args[0]}.get(where)
    if scope is not None:
        frame = toolkit.policy_summary(scope=scope, start=end - dt.timedelta(days=1), end=end,
                                       connection=conn)
        top = frame[frame["level"] == "scope"].iloc[0]
        assert top["nonCompliantResources"] == summary.results.non_compliant_resources
        assert top["groups_noncompliant"] == sum(
            d.count for d in summary.results.policy_group_details
            if d.compliance_state == "noncompliant")
    conn.close()
