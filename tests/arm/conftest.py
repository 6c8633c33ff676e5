"""Fixtures shared by the policy tests: one resource group of the sandbox tenant and its records,
and a window of the tenant's history."""

from __future__ import annotations

from datetime import timedelta

import pandas as pd
import pytest

import toolkit


def policy_window(world, days_back: float, days: float) -> tuple[pd.Timestamp, pd.Timestamp]:
    """The ``days`` long window ending ``days_back`` days before the world's epoch."""
    end = pd.Timestamp(world.epoch) - timedelta(days=days_back)
    return end - timedelta(days=days), end


@pytest.fixture(scope="module")
def scope(sandbox):
    """The web resource group of the production subscription, and its history."""
    world = sandbox.world
    sub = next(s for s in world.subscriptions if s.name == "retail-prod")
    pw = world.section("policy")
    return sub.id, "rg-web-weu", pw, pw.records(sub.id, "rg-web-weu")


@pytest.fixture(scope="module")
def latest_frame(sandbox, scope):
    """The latest records of the last day of ``scope``, and that window."""
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    sub, rg, _, _ = scope
    start, end = policy_window(sandbox.world, 0, 1)
    df = toolkit.policy_states(sub, rg, start=start, end=end, connection=conn)
    yield df, (start, end)
    conn.close()


@pytest.fixture(scope="module")
def window(world):
    """Two days of the tenant's history ending three hours before its epoch."""
    end = pd.Timestamp(world.epoch) - timedelta(hours=3)
    return end - timedelta(days=2), end


@pytest.fixture(scope="module")
def group(sandbox):
    """The resource group with the longest policy history, and its subscription."""
    world = sandbox.world
    pw = world.section("policy")
    sub_id, rg = max(pw.by_group, key=lambda k: len(pw.records(*k).ts))
    sub = world.subscription(sub_id)
    name = next(g.name for g in sub.resource_groups if g.name.lower() == rg)
    return sub.id, name
