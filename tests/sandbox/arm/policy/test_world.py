"""The sandbox tenant: management groups above the subscriptions, extra store subscriptions, an
assignment's records under every scope below it, the long past and its density, determinism."""

from __future__ import annotations

import numpy as np
import pytest

from toolkit.sandbox.arm.policy.world import DENSE_DAYS, SPARSE_EVERY
from toolkit.sandbox.world import World

DAY = 86400


@pytest.fixture(scope="module")
def tenant():
    mp = pytest.MonkeyPatch()
    mp.setenv("TOOLKIT_SANDBOX_SUBSCRIPTIONS", "3")
    mp.setenv("TOOLKIT_SANDBOX_POLICY_HISTORY_DAYS", "200")
    world = World(7)
    pw = world.section("policy")
    mp.undo()
    return world, pw


def test_store_subscriptions_sit_under_stores_under_retail(tenant) -> None:
    world, _ = tenant
    assert len(world.subscriptions) == 6
    stores = world.management_group("stores")
    assert stores.parent == "retail" and len(stores.subscriptions) == 3
    for name in stores.subscriptions:
        assert world.ancestors(name) == ["stores", "retail", world.tenant_id]
    assert world.ancestors("shared-platform") == ["platform", world.tenant_id]


def test_a_management_group_assignment_reaches_every_resource_below(tenant) -> None:
    world, pw = tenant
    tagging = {p.index for p in pw.policies if p.assignment.name == "tagging-retail"}
    for sub in world.subscriptions:
        below = "retail" in world.ancestors(sub.name)
        for g in sub.resource_groups:
            rec = pw.records(sub.id, g.name)
            assert bool(np.isin(rec.pair_policy, list(tagging)).any()) == below


def test_scope_records_are_the_union_of_their_groups(tenant) -> None:
    world, pw = tenant
    sub = world.subscriptions[-1]
    keys = [(sub.id, g.name) for g in sub.resource_groups]
    joined = pw.scope_records(keys)
    parts = [pw.records(*k) for k in keys]
    assert len(joined.ts) == sum(len(p.ts) for p in parts)
    assert np.array_equal(np.sort(joined.ts), np.sort(np.concatenate([p.ts for p in parts])))
    # pairs stay apart: each joined pair has one resource and one policy
    assert joined.pair.max() + 1 == sum(len(p.pair_resource) for p in parts)


def test_the_long_past_is_daily_at_a_lower_density(tenant) -> None:
    world, pw = tenant
    sub = world.subscriptions[0]
    rec = pw.records(sub.id, "rg-web-weu")
    now = world.epoch.timestamp()
    age = ((now - rec.ts) // DAY).astype(int)
    per_day = np.bincount(age)
    assert len(per_day) >= 190  # a long past
    recent = per_day[1:DENSE_DAYS - 1].mean()
    old = per_day[DENSE_DAYS + 1:180]
    assert (old > 0).all()  # every old day has evaluations
    assert 0.5 < old.mean() * SPARSE_EVERY / recent < 1.5


def test_the_world_is_deterministic_and_big_enough() -> None:
    a, b, c = World(7).section("policy"), World(7).section("policy"), World(8).section("policy")
    assert len(a.policies) >= 20 and len({p.assignment.name for p in a.policies}) >= 8
    assert len({p.definition.name for p in a.policies}) >= 20
    assert len(a.resources) >= 2000
    assert len({r.kind for r in a.resources}) >= 12
    key = next(iter(a.by_group))
    ra, rb, rc = a.records(*key), b.records(*key), c.records(*key)
    assert np.array_equal(ra.ts, rb.ts) and np.array_equal(ra.state, rb.state)
    assert len(ra.ts) != len(rc.ts) or not np.array_equal(ra.state, rc.state)
    assert ra.ts.max() - ra.ts.min() > 58 * 86400
    effects = {p.definition.effect for p in a.policies}
    assert {"audit", "deny", "auditIfNotExists", "deployIfNotExists", "modify"} <= effects
