"""management_groups, subscriptions and resource_groups: every page read, the sandbox tenant's
lists in order, declared dtypes."""

from __future__ import annotations

from urllib.parse import parse_qsl

import pandas as pd

import toolkit
from toolkit.sandbox.arm.tenant import PAGE_SIZE


def test_lists_read_every_page_and_match_the_world(conn, sandbox, world) -> None:
    with sandbox.recording() as log:
        mgs = toolkit.management_groups(connection=conn)
    assert len(world.management_groups) > PAGE_SIZE  # more than one page, linked by @nextLink
    assert len(log) == -(-len(world.management_groups) // PAGE_SIZE)
    assert list(mgs["name"]) == [m.name for m in world.management_groups]
    assert mgs["id"].str.startswith("/providers/Vendor.Management/managementGroups/").all()
    subs = toolkit.subscriptions(connection=conn)
    assert len(world.subscriptions) > PAGE_SIZE
    assert list(subs["subscriptionId"]) == [s.id for s in world.subscriptions]
    sub = world.subscriptions[0]
    assert len(sub.resource_groups) > PAGE_SIZE  # more than one page
    with sandbox.recording() as log:
        groups = toolkit.resource_groups(sub.id, connection=conn)
    assert len(log) == -(-len(sub.resource_groups) // PAGE_SIZE)
    assert list(groups["name"]) == [g.name for g in sub.resource_groups]
    assert (groups["subscription_id"] == sub.id).all()
    assert isinstance(groups["location"].dtype, pd.CategoricalDtype)


def test_the_lists_ask_the_current_api_versions(conn, sandbox, world) -> None:
    # the versions the vendors' current clients send by default (azure-mgmt-managementgroups 2.0,
    # azure-mgmt-resource-subscriptions 1.0, azure-mgmt-resource 26)
    with sandbox.recording() as log:
        toolkit.management_groups(connection=conn)
        toolkit.subscriptions(connection=conn)
        toolkit.resource_groups(world.subscriptions[0].id, connection=conn)
    versions = {e.path.rsplit("/", 1)[-1].lower(): dict(parse_qsl(e.query))["api-version"]
                for e in log}
    assert versions == {"managementgroups": "2023-04-01", "subscriptions": "2022-12-01",
                        "resourcegroups": "2025-04-01"}
