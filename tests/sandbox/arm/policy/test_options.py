"""The window of a policy-states query: the service's days, the sandbox clock, and the pages of
one query keeping the window of the first."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.sandbox.arm.policy.conftest import (
    NS,
    all_pages,
    post,
    record_key,
    record_keys,
    records_of,
    rg_scope,
    url_of,
)
from toolkit.sandbox.arm.policy.options import WINDOW_DAYS, read_skiptoken, skiptoken
from toolkit.sandbox.http import SandboxHTTPError


def test_the_pages_of_one_query_keep_the_window_of_the_first_while_the_clock_moves(
        sandbox, world) -> None:
    # a window that starts before the service's: its start is where the service's window
    # begins, which moves with the clock; the pages after the first must not shift with it
    sub = world.subscriptions[0]
    url = (f"{sandbox.url}/subscriptions/{sub.id}/resourceGroups/rg-web-weu/providers/{NS}/"
           "policyStates/default/queryResults?api-version=2024-10-01"
           "&$from=2020-01-01T00:00:00Z&$to=2030-01-01T00:00:00Z")
    now = sandbox.now()
    sandbox.hold_clock(now)
    try:
        still = all_pages(sandbox, url)
        moving = all_pages(sandbox, url, move_clock_by=timedelta(days=45))
    finally:
        sandbox.hold_clock(None)
    assert len(still) > 2000  # several pages
    assert [record_key(r) for r in moving] == [record_key(r) for r in still]


def test_a_query_before_the_services_window_answers_no_records(sandbox, world) -> None:
    sub = world.subscriptions[0]
    end = sandbox.now() - timedelta(days=WINDOW_DAYS + 1)
    r = post(sandbox, url_of(sandbox, rg_scope(sub.id, "rg-web-weu"),
                            window=(end - timedelta(days=3), end)))
    assert r.status_code == 200
    body = r.json()
    assert body["value"] == [] and body["@odata.count"] == 0 and not body["@odata.nextLink"]


def test_a_window_reaching_before_the_services_starts_where_it_does(sandbox, world) -> None:
    sub = world.subscriptions[0]
    # a clock forty days on: the service's window then starts inside the world's history
    now = world.epoch + timedelta(days=40)
    sandbox.hold_clock(now)
    try:
        edge = now - timedelta(days=WINDOW_DAYS)
        got = records_of(sandbox, rg_scope(sub.id, "rg-web-weu"),
                         (edge - timedelta(days=5), edge + timedelta(days=1)))
        inside = records_of(sandbox, rg_scope(sub.id, "rg-web-weu"),
                            (edge, edge + timedelta(days=1)))
        sandbox.hold_clock(world.epoch)  # the same window, all of it kept
        whole = records_of(sandbox, rg_scope(sub.id, "rg-web-weu"),
                         (edge - timedelta(days=5), edge + timedelta(days=1)))
    finally:
        sandbox.hold_clock(None)
    assert len(got) and record_keys(got) == record_keys(inside)
    assert record_keys(got) < record_keys(whole)  # the part before the service's window is gone


def test_a_held_clock_answers_as_of_that_day(sandbox, world) -> None:
    sub = world.subscriptions[0]
    day = world.epoch - timedelta(days=10)
    sandbox.hold_clock(day)
    try:
        records = all_pages(sandbox, url_of(sandbox, rg_scope(sub.id, "rg-web-weu")))
    finally:
        sandbox.hold_clock(None)
    stamps = [datetime.fromisoformat(r["timestamp"]) for r in records]
    assert stamps and max(stamps) <= day and min(stamps) >= day - timedelta(days=1)


def test_a_skiptoken_carries_the_offset_and_the_window() -> None:
    start, end = datetime(2026, 11, 1, tzinfo=UTC), datetime(2026, 11, 2, 3, tzinfo=UTC)
    token = skiptoken(2000, start, end)
    assert "=" not in token and read_skiptoken(token) == (2000, start, end)
    with pytest.raises(SandboxHTTPError) as err:
        read_skiptoken("not-a-token")
    assert (err.value.status, err.value.code) == (400, "InvalidSkipToken")
