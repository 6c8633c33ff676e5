"""The providers' resource lists over HTTP: SQL servers, application gateways, managed and
hosted clusters of a subscription or of one resource group, each the world's in order, a few a
page linked by ``nextLink``, tracked-resource envelopes in the sandbox cloud's words; an unknown
subscription or group is not found, a version the provider does not have is refused."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from tests.sandbox.arm.conftest import arm_caller
from toolkit._spec.arm import (
    HOSTED_CLUSTER_API_VERSIONS,
    MANAGED_CLUSTER_API_VERSIONS,
    NETWORK_API_VERSIONS,
    SQL_API_VERSIONS,
)
from toolkit.sandbox.arm.tenant import PAGE_SIZE
from toolkit.sandbox.server import Sandbox


def _kinds(sb) -> dict[str, tuple[str, str, list]]:
    """list -> (provider type in the sandbox's words, api-version, the world's resources)."""
    world, words, ns = sb.world, sb.words, sb.namespace
    return {
        "sql": (f"{ns}.Sql/servers", SQL_API_VERSIONS[0], list(world.section("sql").servers)),
        "gateways": (f"{ns}.Network/applicationGateways", NETWORK_API_VERSIONS[0],
                     list(world.section("network").values())),
        "managed": (f"{ns}.ContainerService/managedClusters", MANAGED_CLUSTER_API_VERSIONS[0],
                    list(world.section("clusters").managed)),
        "hosted": (f"{words.hosted_cluster_provider}/{words.hosted_cluster_type}",
                   HOSTED_CLUSTER_API_VERSIONS[0], list(world.section("clusters").hosted)),
    }


def _read(arm, url: str) -> list[dict]:
    pages = []
    while url:
        r = arm("GET", url)
        assert r.status_code == 200, r.text[:300]
        pages.append(r.json())
        assert set(pages[-1]) <= {"value", "nextLink"}
        url = pages[-1].get("nextLink")
    return pages


@pytest.mark.parametrize("kind", ["sql", "gateways", "managed", "hosted"])
def test_a_subscriptions_list_page_by_page(arm, sandbox, kind) -> None:
    rtype, version, items = _kinds(sandbox)[kind]
    for sub in sandbox.world.subscriptions:
        mine = [r for r in items if r.subscription_id == sub.id]
        pages = _read(arm, f"/subscriptions/{sub.id}/providers/{rtype}?api-version={version}")
        assert len(pages) == max(1, -(-len(mine) // PAGE_SIZE))
        for page in pages[:-1]:  # the link keeps the version and carries the offset
            query = parse_qs(urlsplit(page["nextLink"]).query)
            assert query["api-version"] == [version] and "$skiptoken" in query
        got = [v for p in pages for v in p["value"]]
        assert [v["name"] for v in got] == [r.name for r in mine]
        for v, r in zip(got, mine, strict=True):
            assert v["id"] == (f"/subscriptions/{sub.id}/resourceGroups/{r.resource_group}/"
                               f"providers/{rtype}/{r.name}")
            assert (v["type"], v["location"]) == (rtype, r.location)
            assert isinstance(v["tags"], dict) and isinstance(v["properties"], dict)
            if kind != "sql":  # SQL servers say ``state`` instead
                assert v["properties"]["provisioningState"] == "Succeeded"


@pytest.mark.parametrize("kind", ["sql", "gateways", "managed", "hosted"])
def test_a_resource_groups_list_holds_that_group_only(arm, sandbox, kind) -> None:
    rtype, version, items = _kinds(sandbox)[kind]
    first = items[0]
    pages = _read(arm, f"/subscriptions/{first.subscription_id}/resourceGroups/"
                       f"{first.resource_group.upper()}/providers/{rtype}?api-version={version}")
    assert [v["name"] for p in pages for v in p["value"]] == [
        r.name for r in items
        if (r.subscription_id, r.resource_group) == (first.subscription_id, first.resource_group)]


def test_a_group_without_the_type_answers_an_empty_list(arm, sandbox) -> None:
    sub = sandbox.world.subscriptions[0]
    servers = sandbox.world.section("sql").servers
    bare = next(g.name for g in sub.resource_groups
                if not any(s.resource_group == g.name for s in servers))
    r = arm("GET", f"/subscriptions/{sub.id}/resourceGroups/{bare}/providers/"
                   f"{sandbox.namespace}.Sql/servers?api-version={SQL_API_VERSIONS[0]}")
    assert r.status_code == 200 and r.json() == {"value": []}


def test_the_clusters_addresses_follow_their_privacy(arm, sandbox) -> None:
    rtype, version, items = _kinds(sandbox)["managed"]
    got = {v["name"]: v["properties"] for sub in sandbox.world.subscriptions
           for p in _read(arm, f"/subscriptions/{sub.id}/providers/{rtype}?api-version={version}")
           for v in p["value"]}
    for c in items:
        props = got[c.name]
        assert props["apiServerAccessProfile"]["enablePrivateCluster"] is c.private
        assert ("privateFQDN" in props) is c.private
        assert ("fqdn" in props) is (not c.private or c.public_fqdn)


@pytest.mark.parametrize("path, status, code", [
    ("/subscriptions/00000000-0000-0000-0000-000000000000/providers/{ns}.Sql/servers", 404,
     "SubscriptionNotFound"),
    ("/subscriptions/{sub}/resourceGroups/rg-nowhere/providers/{ns}.Sql/servers", 404,
     "ResourceGroupNotFound"),
])
def test_unknown_scopes_are_not_found(arm, sandbox, path, status, code) -> None:
    sub = sandbox.world.subscriptions[0].id
    r = arm("GET", path.format(ns=sandbox.namespace, sub=sub) +
            f"?api-version={SQL_API_VERSIONS[0]}")
    assert r.status_code == status and r.json()["error"]["code"] == code


def test_a_version_the_provider_lacks_is_refused(arm, sandbox) -> None:
    sub = sandbox.world.subscriptions[0].id
    r = arm("GET", f"/subscriptions/{sub}/providers/{sandbox.namespace}.ContainerService/"
                   "managedClusters?api-version=2019-01-01")
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "InvalidApiVersionParameter"


def test_in_the_public_clouds_words() -> None:
    with Sandbox(seed=7, cloud="public") as sb:
        arm = arm_caller(sb)
        sub = sb.world.subscriptions[0]
        hosted = _read(arm, f"/subscriptions/{sub.id}/providers/Microsoft.RedHatOpenShift/"
                            f"openShiftClusters?api-version={HOSTED_CLUSTER_API_VERSIONS[0]}")
        servers = _read(arm, f"/subscriptions/{sub.id}/providers/Microsoft.Sql/servers"
                             f"?api-version={SQL_API_VERSIONS[0]}")
    assert {v["type"] for p in hosted for v in p["value"]} == \
        {"Microsoft.RedHatOpenShift/openShiftClusters"}
    fqdns = [v["properties"]["fullyQualifiedDomainName"] for p in servers for v in p["value"]]
    assert fqdns and all(f.endswith(".database.windows.net") for f in fqdns)
