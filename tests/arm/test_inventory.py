"""sql_servers, application_gateways, managed_clusters, openshift_clusters: each provider's list
of a subscription or of one resource group, every page read, the world's resources with where
they live (from their ids), declared dtypes; an empty frame with every column where there is
none; bad arguments refused before any request; a refusal raised as the service said it."""

from __future__ import annotations

from urllib.parse import parse_qsl

import pandas as pd
import pytest

import toolkit
from tests.replay import Answer, replay_server
from toolkit._core.registry import schema_for
from toolkit._spec.arm import (
    HOSTED_CLUSTER_API_VERSIONS,
    MANAGED_CLUSTER_API_VERSIONS,
    NETWORK_API_VERSIONS,
    SQL_API_VERSIONS,
)
from toolkit.sandbox.arm.tenant import PAGE_SIZE
from toolkit.sandbox.server import Sandbox

LISTS = {
    "sql_servers": (toolkit.sql_servers, SQL_API_VERSIONS[0]),
    "application_gateways": (toolkit.application_gateways, NETWORK_API_VERSIONS[0]),
    "managed_clusters": (toolkit.managed_clusters, MANAGED_CLUSTER_API_VERSIONS[0]),
    "openshift_clusters": (toolkit.openshift_clusters, HOSTED_CLUSTER_API_VERSIONS[0]),
}


def _world(world, which: str) -> list:
    """The world's resources of a kind, in its order (each with subscription, group, name)."""
    return {
        "sql_servers": lambda: list(world.section("sql").servers),
        "application_gateways": lambda: list(world.section("network").values()),
        "managed_clusters": lambda: list(world.section("clusters").managed),
        "openshift_clusters": lambda: list(world.section("clusters").hosted),
    }[which]()


@pytest.mark.parametrize("which", list(LISTS))
def test_a_subscriptions_list_is_the_worlds_read_page_by_page(conn, sandbox, world,
                                                               which) -> None:
    function, version = LISTS[which]
    sub = max(world.subscriptions, key=lambda s: sum(
        r.subscription_id == s.id for r in _world(world, which)))
    expected = [r for r in _world(world, which) if r.subscription_id == sub.id]
    with sandbox.recording() as log:
        df = function(sub.id, connection=conn)
    assert df["name"].tolist() == [r.name for r in expected]
    assert df["resource_group"].tolist() == [r.resource_group for r in expected]
    assert (df["subscription_id"] == sub.id).all()
    assert df["location"].astype(str).tolist() == [r.location for r in expected]
    # every page: the sandbox answers a few items a page
    assert len(log) == max(1, -(-len(expected) // PAGE_SIZE))
    assert {dict(parse_qsl(e.query))["api-version"] for e in log} == {version}
    assert {e.route for e in log} == {which}
    assert list(df.columns) == schema_for(which).names
    assert df.attrs["operation"] == which and df.attrs["sandbox"] is True
    for col in ("id", "name", "subscription_id", "resource_group"):
        assert isinstance(df[col].dtype, pd.StringDtype), col
    assert isinstance(df["location"].dtype, pd.CategoricalDtype)


@pytest.mark.parametrize("which", list(LISTS))
def test_a_resource_groups_list_holds_only_that_group(conn, sandbox, world, which) -> None:
    function, _ = LISTS[which]
    first = _world(world, which)[0]
    expected = [r.name for r in _world(world, which)
                if (r.subscription_id, r.resource_group) ==
                (first.subscription_id, first.resource_group)]
    with sandbox.recording() as log:
        df = function(first.subscription_id, first.resource_group.upper(), connection=conn)
    assert df["name"].tolist() == expected
    assert {e.route for e in log} == {f"{which}_by_group"}
    assert set(df["resource_group"].str.lower()) == {first.resource_group.lower()}


def test_a_group_without_the_resource_gives_an_empty_frame_with_every_column(conn,
                                                                            world) -> None:
    servers = world.section("sql").servers
    sub = world.subscriptions[0]
    bare = next(g.name for g in sub.resource_groups
                if not any(s.subscription_id == sub.id and s.resource_group == g.name
                           for s in servers))
    df = toolkit.sql_servers(sub.id, bare, connection=conn)
    assert len(df) == 0 and list(df.columns) == schema_for("sql_servers").names
    assert isinstance(df["publicNetworkAccess"].dtype, pd.CategoricalDtype)


def test_the_columns_hold_the_providers_fields(conn, world) -> None:
    sub = world.subscriptions[0]
    servers = toolkit.sql_servers(sub.id, connection=conn)
    assert servers["fullyQualifiedDomainName"].str.endswith(".database.vendor.net").all()
    assert set(servers["publicNetworkAccess"].astype(str)) <= {"Enabled", "Disabled"}
    gateways = toolkit.application_gateways(sub.id, connection=conn)
    assert str(gateways["sku.capacity"].dtype) == "Int64"
    assert all(isinstance(p, list) and p for p in gateways["backendAddressPools"])
    clusters = toolkit.managed_clusters(sub.id, connection=conn)
    by_name = {c.name: c for c in world.section("clusters").managed}
    assert clusters["apiServerAccessProfile.enablePrivateCluster"].tolist() == \
        [by_name[n].private for n in clusters["name"]]
    assert str(clusters["apiServerAccessProfile.enablePrivateCluster"].dtype) == "boolean"
    hosted = toolkit.openshift_clusters(sub.id, connection=conn)
    assert (hosted["type"] == "Vendor.HostedClusterProvider/hostedClusters").all()
    assert isinstance(hosted["systemData.createdAt"].dtype, pd.DatetimeTZDtype)


def test_in_a_real_clouds_words_the_hosted_clusters_are_openshifts() -> None:
    with Sandbox(seed=7, cloud="public") as sb:
        c = toolkit.connect(sandbox=sb, progress=False)
        try:
            sub = sb.world.subscriptions[0]
            with sb.recording() as log:
                hosted = toolkit.openshift_clusters(sub.id, connection=c)
        finally:
            c.close()
    assert log[0].path == f"/subscriptions/{sub.id}/providers/Microsoft.RedHatOpenShift/" \
                          "openShiftClusters"
    assert hosted["id"].str.contains("/providers/Microsoft.RedHatOpenShift/").all()
    assert len(hosted) == sum(c.subscription_id == sub.id
                              for c in sb.world.section("clusters").hosted)


@pytest.mark.parametrize("which", list(LISTS))
@pytest.mark.parametrize("arguments, parameter", [
    (("not-a-uuid",), "subscription_id"),
    ((None,), "subscription_id"),
    (("fa45cb68-4748-4b16-94b6-0ce33d13187c", "bad name?"), "resource_group"),
    (("fa45cb68-4748-4b16-94b6-0ce33d13187c", "r" * 91), "resource_group"),
    (("fa45cb68-4748-4b16-94b6-0ce33d13187c", "ends."), "resource_group"),
    (("fa45cb68-4748-4b16-94b6-0ce33d13187c", 7), "resource_group"),
])
def test_bad_ids_are_refused_before_any_request(conn, sandbox, which, arguments,
                                                parameter) -> None:
    function, _ = LISTS[which]
    with sandbox.recording() as log, pytest.raises(toolkit.ValidationError) as info:
        function(*arguments, connection=conn)
    assert info.value.parameter == parameter and log == []


@pytest.mark.parametrize("keywords, parameter", [
    ({"max_items": -1}, "max_items"), ({"max_items": 1.5}, "max_items"),
    ({"api_version": " "}, "api_version"), ({"api_version": 2025}, "api_version"),
])
def test_bad_options_are_refused_before_any_request(conn, sandbox, world, keywords,
                                                    parameter) -> None:
    with sandbox.recording() as log, pytest.raises(toolkit.ValidationError) as info:
        toolkit.managed_clusters(world.subscriptions[0].id, connection=conn, **keywords)
    assert info.value.parameter == parameter and log == []


def test_max_items_stops_early_and_says_so(conn, sandbox, world) -> None:
    sub = world.subscriptions[0]
    total = sum(s.subscription_id == sub.id for s in world.section("sql").servers)
    assert total > PAGE_SIZE + 1
    with sandbox.recording() as log, \
            pytest.warns(toolkit.TruncatedResultWarning, match="max_items=3"):
        df = toolkit.sql_servers(sub.id, max_items=3, connection=conn)
    assert len(df) == 3 and df.attrs["truncated"]
    assert len(log) == 2  # two pages of two hold the three asked for


def test_a_subscription_the_caller_may_not_read_is_an_authentication_error() -> None:
    with Sandbox(seed=7, deny_subscriptions=["retail-dev"]) as sb:
        c = toolkit.connect(sandbox=sb, progress=False)
        dev = next(s for s in sb.world.subscriptions if s.name == "retail-dev")
        try:
            with pytest.raises(toolkit.AuthenticationError) as info:
                toolkit.sql_servers(dev.id, connection=c)
            readable = toolkit.sql_servers(sb.world.subscriptions[0].id, connection=c)
        finally:
            c.close()
    assert info.value.status == 403 and info.value.code == "AuthorizationFailed"
    assert len(readable) > 0


def test_an_id_that_names_no_group_leaves_where_empty() -> None:
    items = [{"id": "/subscriptions/s1/resourcegroups/RG-1/providers/P.T/x/a", "name": "a"},
             {"id": "/providers/P.T/x/b", "name": "b"}, {"id": None, "name": "c"},
             {"id": 7, "name": "d"}]
    with replay_server() as rp:
        rp.add("GET", r"/servers\?", Answer(200, {"value": items}))
        c = toolkit.connect(base_url=rp.url, token="example-token-0123456789", progress=False)
        try:
            df = toolkit.sql_servers("00000000-0000-0000-0000-000000000000", connection=c)
        finally:
            c.close()
    assert df["subscription_id"].tolist()[0] == "s1"
    assert df["resource_group"].tolist()[0] == "RG-1"
    assert df["subscription_id"].iloc[1:].isna().all()
    assert df["resource_group"].iloc[1:].isna().all()
