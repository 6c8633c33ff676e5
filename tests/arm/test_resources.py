"""management_groups, subscriptions and resource_groups: every page read, the sandbox tenant's
lists in order, declared dtypes."""

from __future__ import annotations

import pandas as pd

import toolkit
from toolkit.sandbox.arm.tenant import PAGE_SIZE


def test_lists_read_every_page_and_match_the_world(conn, sandbox, world) -> None:
    mgs = toolkit.management_groups(connection=conn)
    assert set(mgs["name"]) == {m.name for m in world.management_groups}
    assert mgs["id"].str.startswith("/providers/Vendor.Management/managementGroups/").all()
    subs = toolkit.subscriptions(connection=conn)
    assert list(subs["subscriptionId"]) == [s.id for s in world.subscriptions]
    sub = world.subscriptions[0]
    assert len(sub.resource_groups) > PAGE_SIZE  # more than one page
    with sandbox.recording() as log:
        groups = toolkit.resource_groups(sub.id, connection=conn)
    assert len(log) == -(-len(sub.resource_groups) // PAGE_SIZE)
    assert list(groups["name"]) == [g.name for g in sub.resource_groups]
    assert (groups["subscription_id"] == sub.id).all()
    assert isinstance(groups["location"].dtype, pd.CategoricalDtype)
