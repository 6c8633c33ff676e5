"""The tenant's lists over HTTP: management groups, subscriptions and the resource groups of a
subscription, each the world's list in order, paged with ``$skiptoken`` under the next-link key the
official examples use (``@nextLink`` for management groups, ``nextLink`` for the others)."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import pytest

from tests.conftest import example
from toolkit.sandbox.arm.tenant import (
    GROUP_API_VERSIONS,
    MG_API_VERSIONS,
    PAGE_SIZE,
    SUBSCRIPTION_API_VERSIONS,
)

#: The management groups list's next-link key, as the official example names it.
MG_NEXT = next(k for k in example("18-management-groups", "ListManagementGroups.json")
               ["responses"]["200"]["body"] if k != "value")
NEXT = {"management groups": MG_NEXT, "subscriptions": "nextLink",
        "resource groups": "nextLink"}


def _lists(sandbox) -> dict[str, tuple[str, tuple[str, ...], list[str]]]:
    """list -> (path, api versions, the world's names in order)."""
    world = sandbox.world
    sub = world.subscriptions[0]
    return {
        "management groups": (f"/providers/{sandbox.namespace}.Management/managementGroups",
                              MG_API_VERSIONS, [m.name for m in world.management_groups]),
        "subscriptions": ("/subscriptions", SUBSCRIPTION_API_VERSIONS,
                          [s.id for s in world.subscriptions]),
        "resource groups": (f"/subscriptions/{sub.id}/resourcegroups", GROUP_API_VERSIONS,
                            [g.name for g in sub.resource_groups]),
    }


def _read(arm, url: str, key: str = "nextLink") -> list[dict]:
    pages = []
    while url:
        r = arm("GET", url)
        assert r.status_code == 200, r.text[:300]
        pages.append(r.json())
        other = {"nextLink", MG_NEXT} - {key}
        assert not other & set(pages[-1]), pages[-1].keys()  # only the list's own key
        url = pages[-1].get(key)
    return pages


def _name(item: dict) -> str:
    return item.get("subscriptionId") or item["name"]


@pytest.mark.parametrize("which", ["management groups", "subscriptions", "resource groups"])
def test_each_list_is_the_worlds_in_order_page_by_page(arm, sandbox, which) -> None:
    path, versions, names = _lists(sandbox)[which]
    pages = _read(arm, f"{path}?api-version={versions[0]}", NEXT[which])
    assert len(pages) == max(1, -(-len(names) // PAGE_SIZE)) > 1  # the world spans pages
    assert all(len(p["value"]) == PAGE_SIZE for p in pages[:-1])
    assert 0 < len(pages[-1]["value"]) <= PAGE_SIZE and NEXT[which] not in pages[-1]
    assert [_name(i) for p in pages for i in p["value"]] == names


def test_the_resource_groups_are_more_than_a_page(sandbox) -> None:
    # so that the paging above is exercised
    assert len(sandbox.world.subscriptions[0].resource_groups) > PAGE_SIZE


def test_next_links_keep_the_query_and_replace_the_skip_token(arm, sandbox) -> None:
    path, versions, _ = _lists(sandbox)["resource groups"]
    first = arm("GET", f"{path}?api-version={versions[1]}&$skiptoken=0").json()
    link = urlsplit(first["nextLink"])
    assert link.path == path
    query = parse_qsl(link.query)
    assert query == [("api-version", versions[1]), ("$skiptoken", str(PAGE_SIZE))]


@pytest.mark.parametrize("which", ["management groups", "subscriptions", "resource groups"])
def test_every_listed_api_version_is_answered(arm, sandbox, which) -> None:
    path, versions, _ = _lists(sandbox)[which]
    for version in versions:
        assert arm("GET", f"{path}?api-version={version}").status_code == 200
    r = arm("GET", f"{path}?api-version=2000-01-01")
    assert r.status_code == 400 and r.json()["error"]["code"] == "InvalidApiVersionParameter"


@pytest.mark.parametrize("token", ["abc", "-1", "1.5", " 2"])
def test_a_bad_skip_token_is_400(arm, sandbox, token) -> None:
    path, versions, _ = _lists(sandbox)["subscriptions"]
    r = arm("GET", path, params={"api-version": versions[0], "$skiptoken": token})
    assert r.status_code == 400 and r.json()["error"]["code"] == "InvalidSkipToken"


def test_a_skip_token_past_the_end_is_an_empty_last_page(arm, sandbox) -> None:
    path, versions, names = _lists(sandbox)["resource groups"]
    r = arm("GET", path, params={"api-version": versions[0], "$skiptoken": str(len(names) + 7)})
    assert r.status_code == 200 and r.json() == {"value": []}


def test_items_carry_the_tenant_and_the_world_facts(arm, sandbox) -> None:
    world = sandbox.world
    ns = sandbox.namespace
    lists = _lists(sandbox)
    mgs = [i for p in _read(arm, lists["management groups"][0] + "?api-version=2023-04-01",
                             MG_NEXT) for i in p["value"]]
    for item, mg in zip(mgs, world.management_groups, strict=True):
        assert item["id"] == f"/providers/{ns}.Management/managementGroups/{mg.name}"
        assert item["type"] == f"{ns}.Management/managementGroups"
        assert item["properties"] == {"tenantId": world.tenant_id,
                                      "displayName": mg.display_name}
    subs = [i for p in _read(arm, "/subscriptions?api-version=2022-12-01") for i in p["value"]]
    for item, sub in zip(subs, world.subscriptions, strict=True):
        assert item["id"] == f"/subscriptions/{sub.id}" and item["displayName"] == sub.name
        assert item["tenantId"] == world.tenant_id and item["state"] == "Enabled"
    sub = world.subscriptions[0]
    groups = [i for p in _read(arm, lists["resource groups"][0] + "?api-version=2021-04-01")
              for i in p["value"]]
    for item, group in zip(groups, sub.resource_groups, strict=True):
        assert item["id"] == f"/subscriptions/{sub.id}/resourceGroups/{group.name}"
        assert item["location"] == group.location and item["tags"] == {"purpose": group.purpose}
        assert item["type"] == f"{ns}.Resources/resourceGroups"


def test_the_groups_of_a_bad_or_unknown_subscription_are_refused(arm) -> None:
    r = arm("GET", "/subscriptions/nope/resourcegroups?api-version=2021-04-01")
    assert r.status_code == 400 and r.json()["error"]["code"] == "InvalidSubscriptionId"
    r = arm("GET", "/subscriptions/00000000-0000-4000-8000-000000000000/resourcegroups"
                   "?api-version=2021-04-01")
    assert r.status_code == 404 and r.json()["error"]["code"] == "SubscriptionNotFound"



# ------------------------------------------------------------------ one group, its hierarchy
def _official_hierarchy() -> dict:
    return example("18-management-groups", "GetManagementGroupWithExpandAndRecurse.json"
                   )["responses"]["200"]["body"]


def _walk(node: dict) -> list[dict]:
    out = [node]
    for child in node.get("children") or []:
        out += _walk(child)
    return out


def test_the_hierarchy_has_the_official_shape_and_type_words(arm, sandbox, world) -> None:
    ns = sandbox.namespace
    official = _official_hierarchy()
    off_children = [n for c in official["properties"]["children"] for n in _walk(c)]
    off_group = next(n for n in off_children if "children" in n)
    off_sub = next(n for n in off_children if n["type"] == "/subscriptions")
    r = arm("GET", f"/providers/{ns}.Management/managementGroups/{world.tenant_id}",
            params={"api-version": "2023-04-01", "$expand": "children", "$recurse": "true"})
    assert r.status_code == 200, r.text[:300]
    body = r.json()
    assert set(body) == set(official)
    assert set(body["properties"]) == set(official["properties"])
    assert set(body["properties"]["details"]) == set(official["properties"]["details"])
    assert body["name"] == world.tenant_id and body["properties"]["details"]["parent"] is None
    nodes = [n for c in body["properties"]["children"] for n in _walk(c)]
    groups = [n for n in nodes if n["type"] != off_sub["type"]]
    subs = [n for n in nodes if n["type"] == off_sub["type"]]
    # the official words in the public cloud, the same words in the sandbox's own namespace
    assert {n["type"] for n in groups} == {off_group["type"].replace("Microsoft", ns)}
    assert all(set(n) == set(off_group) for n in groups if "children" in n)
    assert all(set(n) == set(off_sub) for n in subs)
    assert {n["name"] for n in groups} == {m.name for m in world.management_groups} - \
        {world.tenant_id}
    assert {n["name"]: n["displayName"] for n in subs} == \
        {s.id: s.name for s in world.subscriptions}


def test_the_hierarchy_without_recurse_or_expand(arm, sandbox, world) -> None:
    path = f"/providers/{sandbox.namespace}.Management/managementGroups/retail"
    one = arm("GET", path, params={"api-version": "2023-04-01", "$expand": "children"}).json()
    below = [m.name for m in world.management_groups if m.parent == "retail"] + \
        [s.id for s in world.subscriptions if world.group_of(s.name) == "retail"]
    assert [c["name"] for c in one["properties"]["children"]] == below
    assert not any("children" in c for c in one["properties"]["children"])
    bare = arm("GET", path, params={"api-version": "2023-04-01"}).json()
    assert bare["properties"]["children"] is None
    assert bare["properties"]["details"]["parent"]["name"] == world.tenant_id
    up = arm("GET", f"{path.rsplit('/', 1)[0]}/stores",
             params={"api-version": "2023-04-01", "$expand": "ancestors"}).json()
    assert up["properties"]["details"]["managementGroupAncestors"] == ["retail", world.tenant_id]


@pytest.mark.parametrize("group, params, status", [
    ("retail", {"$recurse": "true"}, 400),
    ("retail", {"$expand": "everything"}, 400),
    ("retail", {"$expand": "children", "$recurse": "maybe"}, 400),
    ("no-such-group", {}, 404),
    ("root", {}, 404),  # the root group's id is the tenant id; "root" names nothing
])
def test_the_hierarchy_refusals(arm, sandbox, group, params, status) -> None:
    r = arm("GET", f"/providers/{sandbox.namespace}.Management/managementGroups/{group}",
            params={"api-version": "2023-04-01", **params})
    assert r.status_code == status and r.json()["error"]["code"]
