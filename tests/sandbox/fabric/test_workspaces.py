"""The workspaces list over HTTP: every workspace of the world, a few a page, each page but the
last carrying ``continuationToken`` and ``continuationUri`` (the same query with the token), the
role filter, and a bad role or token refused with the flat error body."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from toolkit.sandbox.fabric.workspaces import PAGE_SIZE

FLAT = {"requestId", "errorCode", "message"}


def _get(sb, url: str, **params) -> requests.Response:
    return requests.get(url if url.startswith("http") else sb.url + url, params=params or None,
                        headers={"Authorization": f"Bearer {sb.token('fabric')}"}, timeout=10)


def _pages(sb, **params) -> list[dict]:
    pages, url = [], "/v1/workspaces"
    while url:
        r = _get(sb, url, **(params if not pages else {}))
        assert r.status_code == 200, r.text
        pages.append(r.json())
        url = pages[-1].get("continuationUri")
    return pages


@pytest.fixture(scope="module")
def spaces(sandbox) -> list:
    return list(sandbox.world.section("fabric").workspaces.values())


def test_every_workspace_a_few_a_page(sandbox, spaces) -> None:
    pages = _pages(sandbox)
    assert len(pages) == -(-len(spaces) // PAGE_SIZE) > 1
    assert [w["id"] for p in pages for w in p["value"]] == [w.id for w in spaces]
    for page in pages[:-1]:
        link = urlsplit(page["continuationUri"])
        assert f"{link.scheme}://{link.netloc}" == sandbox.url and link.path == "/v1/workspaces"
        assert parse_qs(link.query)["continuationToken"] == [page["continuationToken"]]
    assert "continuationUri" not in pages[-1] and "continuationToken" not in pages[-1]


def test_each_workspace_as_the_service_describes_it(sandbox, spaces) -> None:
    found = {w["id"]: w for p in _pages(sandbox) for w in p["value"]}
    for ws in spaces:
        body = found[ws.id]
        personal = ws.name.startswith("Personal")
        assert body["type"] == ("Personal" if personal else "Workspace")
        assert body["displayName"] == ("My workspace" if personal else ws.name)
        assert isinstance(body["description"], str)
        if ws.capacity == "Pro":  # a shared capacity: no capacity is named
            assert "capacityId" not in body and "capacityRegion" not in body
        else:
            assert len(body["capacityId"]) == 36 and body["capacityRegion"]
    # one capacity, one id: workspaces on the same capacity name the same one
    by_capacity: dict[str, set] = {}
    for ws in spaces:
        if "capacityId" in found[ws.id]:
            by_capacity.setdefault(ws.capacity, set()).add(found[ws.id]["capacityId"])
    assert all(len(ids) == 1 for ids in by_capacity.values())
    assert len({next(iter(i)) for i in by_capacity.values()}) == len(by_capacity)


@pytest.mark.parametrize("roles", ["Admin", "Member,Viewer", "Contributor, Admin"])
def test_the_role_filter_keeps_its_query_on_every_page(sandbox, spaces, roles) -> None:
    wanted = {r.strip() for r in roles.split(",")}
    pages = _pages(sandbox, roles=roles)
    assert [w["id"] for p in pages for w in p["value"]] == \
        [w.id for w in spaces if w.role in wanted]
    for page in pages[:-1]:
        assert parse_qs(urlsplit(page["continuationUri"]).query)["roles"] == [roles]


@pytest.mark.parametrize("params, code", [
    ({"roles": "Owner"}, "InvalidParameter"), ({"roles": ","}, "InvalidParameter"),
    ({"continuationToken": "abc"}, "InvalidContinuationToken"),
    ({"continuationToken": "-1"}, "InvalidContinuationToken"),
])
def test_a_bad_role_or_token_is_refused(sandbox, params, code) -> None:
    r = _get(sandbox, "/v1/workspaces", **params)
    assert r.status_code == 400
    body = r.json()
    assert set(body) >= FLAT and body["errorCode"] == code


def test_a_token_past_the_end_is_an_empty_last_page(sandbox, spaces) -> None:
    r = _get(sandbox, "/v1/workspaces", continuationToken=str(len(spaces) + 5))
    assert r.status_code == 200 and r.json() == {"value": []}
