"""The world as Resource Graph's tables: the resources that exist, the tenant's containers and
the latest policy states, each row carrying the subscription and resource group it is in."""

from __future__ import annotations

from typing import Any

import pytest

from toolkit.sandbox.arm.resourcegraph.tables import COLUMNS, STATE_WEIGHTS, build_tables


@pytest.fixture(scope="module")
def tables(sandbox: Any) -> Any:
    return build_tables(sandbox.world)


def test_resources_are_those_that_exist(tables: Any, sandbox: Any) -> None:
    pw = sandbox.world.section("policy")
    live = {r.fields["resourceId"] for r in pw.resources if not r.deleted}
    gone = {r.fields["resourceId"] for r in pw.resources if r.deleted}
    assert set(tables.resources["id"]) == live and gone and not gone & live
    assert list(tables.resources.columns) == list(COLUMNS)
    assert (tables.resources["type"] == tables.resources["type"].str.lower()).all()
    assert (tables.resources["resourceGroup"] == tables.resources["resourceGroup"].str.lower()
            ).all()
    vm = tables.resources[tables.resources["type"] == "vendor.compute/virtualmachines"].iloc[0]
    assert vm["properties"]["storageProfile"]["osDisk"]["osType"] in ("Linux", "Windows")
    assert vm["name"] == vm["id"].rsplit("/", 1)[-1]


def test_resources_are_the_same_for_the_same_world(tables: Any, sandbox: Any) -> None:
    again = build_tables(sandbox.world)
    assert again.resources["properties"].tolist() == tables.resources["properties"].tolist()


def test_containers_are_groups_subscriptions_and_resource_groups(tables: Any,
                                                                  sandbox: Any) -> None:
    world = sandbox.world
    kinds = tables.containers["type"].value_counts().to_dict()
    assert kinds == {"vendor.management/managementgroups": len(world.management_groups),
                     "vendor.resources/subscriptions": len(world.subscriptions),
                     "vendor.resources/subscriptions/resourcegroups":
                         len(world.resource_groups())}
    sub = tables.containers[tables.containers["type"] == "vendor.resources/subscriptions"].iloc[0]
    chain = [g["name"] for g in sub["properties"]["managementGroupAncestorsChain"]]
    assert chain == world.ancestors(sub["name"])
    assert tables.parents[world.tenant_id.lower()] is None
    assert tables.parents["stores"] == "retail"


def test_policy_states_are_the_newest_of_each_pair_of_what_exists(tables: Any,
                                                                    sandbox: Any) -> None:
    states = tables.states
    pw = sandbox.world.section("policy")
    assert not states.duplicated(["res", "pol"]).any()
    assert states["id"].is_unique
    assert set(states["complianceState"]) <= set(STATE_WEIGHTS)
    assert not any(pw.resources[r].deleted for r in states["res"])
    assert (states["timestamp"] == sorted(states["timestamp"], reverse=True)).all()
    assert states["timestamp"].str.endswith("Z").all()
    assert set(tables.policy_fields.columns) >= {"policyAssignmentId", "policyDefinitionGroupNames"}
