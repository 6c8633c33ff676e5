"""World: a tenant deterministic from its seed, management groups above the subscriptions,
lookups, sections built once on first use, extra store subscriptions bounded."""

from __future__ import annotations

import pytest

from toolkit.sandbox.world import (
    MAX_EXTRA_SUBSCRIPTIONS,
    SECTIONS,
    SUBSCRIPTIONS_ENV,
    World,
)


def test_the_tenant_is_deterministic_from_the_seed() -> None:
    a, b, c = World(7), World(7), World(8)
    assert a.tenant_id == b.tenant_id != c.tenant_id
    assert [s.id for s in a.subscriptions] == [s.id for s in b.subscriptions]
    assert [s.id for s in a.subscriptions] != [s.id for s in c.subscriptions]
    assert a.rng("x").random() == b.rng("x").random() != a.rng("y").random()


def test_lookups_and_the_group_tree() -> None:
    world = World(7)
    sub = world.subscriptions[0]
    assert world.subscription(sub.id.upper()) is sub and world.subscription("nope") is None
    chain = world.ancestors(sub.name)
    assert chain[-1] == world.tenant_id and chain[0] == world.group_of(sub.name)
    assert world.management_group("root").name == world.tenant_id
    for parent, child in zip(chain[1:], chain, strict=False):
        assert world.management_group(child).parent == parent
    assert sub.name in world.management_group(chain[0]).subscriptions
    with pytest.raises(KeyError):
        world.management_group("no-such-group")
    groups = world.resource_groups()
    assert len(groups) == sum(len(s.resource_groups) for s in world.subscriptions)
    assert {g.location for g in groups} <= set(World.locations())


def test_sections_are_built_once_on_first_use() -> None:
    world = World(7)
    first = world.section("support")
    assert world.section("support") is first
    with pytest.raises(KeyError):
        world.section("no-such-section")
    assert set(SECTIONS) >= {"policy", "sql", "maps", "weather"}


def test_extra_store_subscriptions_come_from_the_environment_and_are_bounded(monkeypatch) -> None:
    base = len(World(7).subscriptions)
    monkeypatch.setenv(SUBSCRIPTIONS_ENV, "3")
    world = World(7)
    extra = world.subscriptions[base:]
    assert [s.name for s in extra] == ["retail-store-001", "retail-store-002", "retail-store-003"]
    assert {s.name for s in extra} <= set(world.management_group("stores").subscriptions)
    for bad in (str(MAX_EXTRA_SUBSCRIPTIONS + 1), "-1", "many"):
        monkeypatch.setenv(SUBSCRIPTIONS_ENV, bad)
        with pytest.raises(ValueError, match=SUBSCRIPTIONS_ENV):
            World(7)
