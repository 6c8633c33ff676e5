"""The sandbox's Resource Graph route over HTTP, as the service answers: pages of at most 1,000
rows, a skip token only for results with ``id``, ``resultTruncated`` otherwise, both result
formats, facets, its errors and its quota."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from tests.sandbox.arm.conftest import arm_caller
from toolkit.sandbox.arm.resourcegraph.quota import quota_of
from toolkit.sandbox.server import Sandbox

PATH = "/providers/Vendor.ResourceGraph/resources"
V = {"api-version": "2024-04-01"}


def post(arm: Any, body: Any, **params: str) -> requests.Response:
    return arm("POST", PATH, params={**V, **params}, json=body)


def live(sandbox: Any) -> int:
    return sum(1 for r in sandbox.world.section("policy").resources if not r.deleted)


def test_pages_follow_the_skip_token_when_the_result_has_id(arm: Any, sandbox: Any) -> None:
    total = live(sandbox)
    body: dict[str, Any] = {"query": "resources | project id, name",
                            "options": {"$top": 700, "resultFormat": "table"}}
    seen: list[str] = []
    pages = 0
    while True:
        r = post(arm, body)
        assert r.status_code == 200, r.text
        page = r.json()
        assert page["totalRecords"] == total and page["resultTruncated"] == "false"
        assert [c["name"] for c in page["data"]["columns"]] == ["id", "name"]
        assert page["count"] == len(page["data"]["rows"]) <= 700
        seen += [row[0] for row in page["data"]["rows"]]
        pages += 1
        token = page.get("$skipToken")
        if not token:
            break
        body = {"query": body["query"], "options": {"$skipToken": token,
                                                     "resultFormat": "table"}}
    assert pages == -(-total // 700) and len(seen) == len(set(seen)) == total


def test_a_result_without_id_is_cut_at_the_page_and_says_so(arm: Any, sandbox: Any) -> None:
    r = post(arm, {"query": "resources | project name"})
    page = r.json()
    assert page["totalRecords"] == live(sandbox) > 1000
    assert page["count"] == 1000 and "$skipToken" not in page
    assert page["resultTruncated"] == "true"
    assert isinstance(page["data"], list) and set(page["data"][0]) == {"name"}  # objectArray


def test_a_small_result_without_id_is_whole(arm: Any) -> None:
    page = post(arm, {"query": "resources | summarize count() by location"}).json()
    assert page["resultTruncated"] == "false" and page["count"] == page["totalRecords"]


def test_skip_and_top_pick_a_random_page(arm: Any) -> None:
    query = "resources | project id | order by id asc"
    whole = post(arm, {"query": query, "options": {"$top": 30}}).json()["data"]
    page = post(arm, {"query": query, "options": {"$top": 2, "$skip": 10}}).json()
    assert page["data"] == whole[10:12] and page["count"] == 2 and page["$skipToken"]


def test_a_token_of_another_query_is_refused(arm: Any) -> None:
    token = post(arm, {"query": "resources | project id", "options": {"$top": 5}}).json()[
        "$skipToken"]
    r = post(arm, {"query": "resources | project id, name", "options": {"$skipToken": token}})
    assert r.status_code == 400
    assert r.json()["error"]["details"][0]["code"] == "InvalidSkipToken"
    bad = post(arm, {"query": "resources | project id", "options": {"$skipToken": "@@"}})
    assert bad.status_code == 400


def test_facets_count_rows_per_value(arm: Any, sandbox: Any) -> None:
    body = {"query": "resources | where type =~ 'vendor.compute/virtualmachines' | project id, "
                     "location, resourceGroup",
            "facets": [{"expression": "location", "options": {"sortOrder": "desc", "$top": 3}},
                       {"expression": "nonExistingColumn"}]}
    page = post(arm, body).json()
    location, missing = page["facets"]
    assert location["resultType"] == "FacetResult" and location["count"] <= 3
    counts = [row["count"] for row in location["data"]]
    assert counts == sorted(counts, reverse=True)
    vms = [r for r in sandbox.world.section("policy").resources
           if r.kind == "VM" and not r.deleted]
    assert location["totalRecords"] == len({r.location for r in vms})
    assert missing["resultType"] == "FacetError" and missing["errors"]


@pytest.mark.parametrize(("body", "status", "detail"), [
    ({}, 400, "InvalidQuery"),
    ({"query": "  "}, 400, "InvalidQuery"),
    ([1, 2], 400, "InvalidRequestContent"),
    ({"query": "resources", "options": {"$top": 0}}, 400, "InvalidRequestContent"),
    ({"query": "resources", "options": {"$top": 1001}}, 400, "InvalidRequestContent"),
    ({"query": "resources", "options": {"resultFormat": "csv"}}, 400, "InvalidRequestContent"),
    ({"query": "resources", "subscriptions": ["nope"]}, 400, "InvalidSubscriptionId"),
    ({"query": "resources", "subscriptions": []}, 400, "InvalidRequestContent"),
    ({"query": "resources", "subscriptions": ["fa45cb68-4748-4b16-94b6-0ce33d13187c"],
      "managementGroups": ["retail"]}, 400, "InvalidRequestContent"),
    ({"query": "resources", "managementGroups": ["no-such-group"]}, 403, "AuthorizationFailed"),
    ({"query": "resources | wherex"}, 400, "InvalidQuery"),
])
def test_requests_the_service_refuses(arm: Any, body: Any, status: int, detail: str) -> None:
    r = post(arm, body)
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert error["details"][0]["code"] == detail and error["message"]


def test_an_unknown_version_is_refused(arm: Any) -> None:
    r = arm("POST", PATH, params={"api-version": "2000-01-01"}, json={"query": "resources"})
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "InvalidApiVersionParameter"


def test_the_quota_refuses_with_retry_after_when_enforced() -> None:
    with Sandbox(seed=7, arm_limits=True) as sb:
        quota_of(sb).configure(limit=2, window=30.0)
        call = arm_caller(sb)
        answers = [post(call, {"query": "resources | project id | take 1"}) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert [a.headers["x-vendor-user-quota-remaining"] for a in answers] == ["1", "0", "0"]
    refused = answers[2]
    assert refused.json()["error"]["code"] == "RateLimiting"
    assert 1 <= int(refused.headers["Retry-After"]) <= 30
    assert refused.headers["x-vendor-user-quota-resets-after"].startswith("00:00:")
