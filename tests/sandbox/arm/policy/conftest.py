"""Helpers of the policy handlers' tests: queries over HTTP, page by page, and their scopes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import pytest
import requests

NS = "Vendor.PolicyInsights"


def all_pages(sandbox: Any, url: str, *, move_clock_by: timedelta | None = None
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


def record_key(r: dict[str, Any]) -> tuple[str, ...]:
    return (r["resourceId"], r["policyAssignmentId"], r["policyDefinitionReferenceId"] or "",
            r["timestamp"])


API = "api-version=2024-10-01"


def iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture(scope="module")
def window(world) -> tuple[datetime, datetime]:
    """Half a day of the tenant's history ending three hours before its epoch."""
    end = world.epoch - timedelta(hours=3)
    return end - timedelta(hours=12), end


def url_of(sandbox: Any, scope: str, *, resource: str = "default", action: str = "queryResults",
         window: tuple[datetime, datetime] | None = None, **options: str) -> str:
    url = (f"{sandbox.url}{scope}/providers/{NS}/policyStates/{resource}/{action}?{API}")
    if window is not None:
        url += f"&$from={iso(window[0])}&$to={iso(window[1])}"
    for name, value in options.items():
        url += f"&${name}={quote(value, safe='')}"
    return url


def records_of(sandbox: Any, scope: str, window: tuple[datetime, datetime], *,
             resource: str = "default", **options: str) -> list[dict[str, Any]]:
    return all_pages(sandbox, url_of(sandbox, scope, resource=resource, window=window, **options))


def record_keys(records: list[dict[str, Any]]) -> set[tuple[str, ...]]:
    return {(*record_key(r), r["policyDefinitionId"], r["complianceState"]) for r in records}


def post(sandbox: Any, url: str) -> requests.Response:
    return requests.post(url, headers={"Authorization": f"Bearer {sandbox.token('arm')}"},
                         timeout=30)


def error_of(r: requests.Response) -> tuple[int, str]:
    return r.status_code, r.json()["error"]["code"]


def mg_scope(name: str) -> str:
    return f"/providers/Vendor.Management/managementGroups/{name}"


def rg_scope(sub_id: str, group: str) -> str:
    return f"/subscriptions/{sub_id}/resourceGroups/{group}"
