"""World: a tenant deterministic from its seed, management groups above the subscriptions,
lookups, sections built once on first use, extra store subscriptions bounded.

The sandbox's clock: its world follows the real date by default (the same day, the same
world), ``now=`` / ``TOOLKIT_SANDBOX_NOW`` / ``--now`` pin it, and answers carry it as ``Date``."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from email.utils import parsedate_to_datetime

import pandas as pd
import pytest
import requests

import toolkit
from toolkit.sandbox.__main__ import main
from toolkit.sandbox.server import Sandbox
from toolkit.sandbox.world import (
    DAY_START_HOUR,
    MAX_EXTRA_SUBSCRIPTIONS,
    NOW_ENV,
    SECTIONS,
    SUBSCRIPTIONS_ENV,
    World,
    world_epoch,
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


def test_the_default_world_follows_todays_date(monkeypatch) -> None:
    monkeypatch.delenv(NOW_ENV, raising=False)
    before = datetime.now(UTC).date()
    sb = Sandbox()
    after = datetime.now(UTC).date()
    assert sb.epoch.date() in (before, after)
    assert (sb.epoch.hour, sb.epoch.minute, sb.epoch.tzinfo) == (DAY_START_HOUR, 0, UTC)
    assert sb.world.epoch == sb.epoch
    # the same day gives the same world
    assert Sandbox(now=sb.epoch.date()).epoch == sb.epoch


@pytest.mark.parametrize("now, expected", [
    ("2026-11-20", datetime(2026, 11, 20, DAY_START_HOUR, tzinfo=UTC)),
    (date(2027, 2, 1), datetime(2027, 2, 1, DAY_START_HOUR, tzinfo=UTC)),
    ("2026-11-20T13:30:00Z", datetime(2026, 11, 20, 13, 30, tzinfo=UTC)),
    ("2026-11-20T13:30:00+02:00", datetime(2026, 11, 20, 11, 30, tzinfo=UTC)),
    (datetime(2026, 11, 20, 6), datetime(2026, 11, 20, 6, tzinfo=UTC)),
    (pd.Timestamp("2026-11-21T00:00Z"), datetime(2026, 11, 21, tzinfo=UTC)),
])
def test_now_pins_the_clock(now, expected) -> None:
    sb = Sandbox(now=now, frozen_clock=True)
    assert sb.epoch == expected and sb.now() == expected


def test_bad_settings_are_refused_naming_them(monkeypatch) -> None:
    with pytest.raises(ValueError, match="now='yesterday'"):
        Sandbox(now="yesterday")
    with pytest.raises(ValueError, match="now=3"):
        Sandbox(now=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not both"):
        Sandbox(now="2026-11-20", epoch=datetime(2026, 11, 20, tzinfo=UTC))
    monkeypatch.setenv(NOW_ENV, "20/11/2026")
    with pytest.raises(ValueError, match=f"{NOW_ENV}='20/11/2026'"):
        world_epoch()
    with pytest.raises(SystemExit):
        main(["--now", "soon"])


def test_the_environment_variable_pins_the_sandbox_connect_starts(monkeypatch) -> None:
    for name in ("TOOLKIT_BASE_URL", "TOOLKIT_ARM_URL", "TOOLKIT_MAPS_URL", "TOOLKIT_TOKEN",
                 "TOOLKIT_MAPS_KEY", "TOOLKIT_CREDENTIAL", "TOOLKIT_CLOUD"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(NOW_ENV, "2027-03-04")
    with pytest.warns(toolkit.SandboxWarning, match="invented data"):
        conn = toolkit.connect(progress=False)
    try:
        assert conn.sandbox is not None
        assert conn.sandbox.epoch == datetime(2027, 3, 4, DAY_START_HOUR, tzinfo=UTC)
    finally:
        conn.close()


def test_answers_carry_the_sandbox_clock_as_their_date() -> None:
    with Sandbox(now="2026-11-20T09:00:00Z", frozen_clock=True) as sb:
        r = requests.get(f"{sb.url}/subscriptions?api-version=2022-12-01", timeout=10)
    assert parsedate_to_datetime(r.headers["Date"]) == datetime(2026, 11, 20, 9, tzinfo=UTC)


def test_two_days_a_day_apart_give_windows_a_day_apart() -> None:
    frames = []
    for day in ("2026-11-20", "2026-11-21"):
        with Sandbox(now=day, frozen_clock=True) as sb:
            conn = toolkit.connect(sandbox=sb, progress=False)
            sub = sb.world.subscriptions[0]
            df = toolkit.policy_states(sub.id, "rg-web-weu", resource="default",
                                       connection=conn)  # the service's last 24 hours
            conn.close()
            assert len(df) > 0
            assert df["timestamp"].max() <= pd.Timestamp(sb.now())
            assert df["timestamp"].min() >= pd.Timestamp(sb.now()) - timedelta(days=1)
            frames.append(df)
    first, second = frames
    assert sorted(second["timestamp"]) == sorted(first["timestamp"] + timedelta(days=1))
    assert sorted(second["resourceId"].astype(str)) == sorted(first["resourceId"].astype(str))
