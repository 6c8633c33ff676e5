"""The sandbox's policy-state handlers over HTTP: what the service answers, page by page."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import requests

NS = "Vendor.PolicyInsights"


def _pages(sandbox: Any, url: str, *, move_clock_by: timedelta | None = None
           ) -> list[dict[str, Any]]:
    """Every record of a query, following next links; the clock moves on after the first page
    when ``move_clock_by`` is given."""
    headers = {"Authorization": f"Bearer {sandbox.token('arm')}"}
    records: list[dict[str, Any]] = []
    first = True
    while url:
        r = requests.post(url, headers=headers, timeout=30)
        assert r.status_code == 200, r.text[:300]
        body = r.json()
        records.extend(body["value"])
        url = body.get("@odata.nextLink")
        if first and move_clock_by is not None:
            sandbox.hold_clock(sandbox.now() + move_clock_by)
        first = False
    return records


def _key(r: dict[str, Any]) -> tuple[str, ...]:
    return (r["resourceId"], r["policyAssignmentId"], r["policyDefinitionReferenceId"] or "",
            r["timestamp"])


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
        still = _pages(sandbox, url)
        moving = _pages(sandbox, url, move_clock_by=timedelta(days=45))
    finally:
        sandbox.hold_clock(None)
    assert len(still) > 2000  # several pages
    assert [_key(r) for r in moving] == [_key(r) for r in still]
