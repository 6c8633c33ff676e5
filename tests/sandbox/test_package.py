"""The sandbox package's own functions: start serves on loopback, catalog describes a sandbox or
the world of a seed, Sandbox is loaded on first use."""

from __future__ import annotations

import pandas as pd
import pytest
import requests

import toolkit.sandbox
from toolkit.sandbox.server import Sandbox, latest_running
from toolkit.sandbox.world import World

COLUMNS = ["kind", "subscription_id", "resource_group", "name", "location", "detail"]


def test_start_serves_on_loopback_until_stopped() -> None:
    box = toolkit.sandbox.start(port=0)
    try:
        assert isinstance(box, Sandbox) and box.running
        assert box.host == "127.0.0.1" and box.port > 0
        answer = requests.get(f"{box.url}/no/such/path", timeout=10)
        assert answer.status_code == 401  # a real answer: no token, no service
    finally:
        box.stop()
    assert not box.running


def test_catalog_of_a_sandbox_is_its_world(sandbox) -> None:
    df = toolkit.sandbox.catalog(sandbox)
    assert list(df.columns) == COLUMNS
    pd.testing.assert_frame_equal(df, sandbox.catalog())
    assert {"subscription", "sql_server", "application_gateway"} <= set(df["kind"])


def test_catalog_of_a_seed_is_that_worlds() -> None:
    seven = toolkit.sandbox.catalog(seed=7)
    pd.testing.assert_frame_equal(seven, World(7).catalog())
    assert not seven.equals(toolkit.sandbox.catalog(seed=8))


def test_only_sandbox_is_loaded_lazily() -> None:
    assert toolkit.sandbox.Sandbox is Sandbox
    with pytest.raises(AttributeError):
        toolkit.sandbox.NoSuchThing  # noqa: B018


def test_the_catalog_describes_the_sandbox_started_last_and_starts_none() -> None:
    before = latest_running()
    with Sandbox(seed=8) as sb:
        assert latest_running() is sb
        pd.testing.assert_frame_equal(toolkit.sandbox.catalog(), sb.catalog())
    assert latest_running() is before and not sb.running
    if before is None:
        pd.testing.assert_frame_equal(toolkit.sandbox.catalog(), World(7).catalog())
    else:
        pd.testing.assert_frame_equal(toolkit.sandbox.catalog(), before.catalog())
    assert latest_running() is before
