"""across_subscriptions: a read run in every subscription of a scope, the frames joined in the
subscriptions' order, each refusal (403, a throttled answer, a name no listed subscription has)
named in one sentence instead of raised; bad arguments refused before any request."""

from __future__ import annotations

import pandas as pd
import pytest

import toolkit
from toolkit._core.registry import schema_for
from toolkit.sandbox.server import Sandbox


@pytest.fixture(scope="module")
def partial():
    """A sandbox where the caller may not read ``retail-dev``."""
    with Sandbox(seed=7, deny_subscriptions=["retail-dev"]) as sb:
        yield sb


@pytest.fixture
def pconn(partial, waits):
    c = toolkit.connect(sandbox=partial, progress=False)
    c.sleep = waits
    yield c
    c.close()


def _servers_by_subscription(world) -> dict[str, list[str]]:
    """The SQL servers of each subscription, from the world's definition."""
    out: dict[str, list[str]] = {s.id: [] for s in world.subscriptions}
    for server in world.section("sql").servers:
        out[server.subscription_id].append(server.name)
    return out


def test_every_readable_subscription_is_read_and_the_refused_one_named(partial, pconn) -> None:
    world = partial.world
    subs = world.subscriptions
    denied = next(s for s in subs if s.name == "retail-dev")
    servers, refused = toolkit.across_subscriptions(toolkit.sql_servers, connection=pconn)
    expected = _servers_by_subscription(world)
    readable = [s for s in subs if s is not denied]
    assert sorted(servers["name"]) == sorted(n for s in readable for n in expected[s.id])
    # the subscriptions' order, each row saying whose it is
    order = [s.name for s in readable if expected[s.id]]
    assert list(dict.fromkeys(servers["subscription"])) == order
    by_id = {s.id: s.name for s in subs}
    assert (servers["subscription_id"].map(by_id) == servers["subscription"]).all()
    assert refused == f"1 of {len(subs)} subscriptions could not be read: retail-dev " \
                      "(AuthorizationFailed)."
    [why] = servers.attrs["refused"]
    assert (why["subscriptionId"], why["displayName"], why["status"], why["code"]) == \
        (denied.id, "retail-dev", 403, "AuthorizationFailed")
    assert "Sql/servers/read" in why["message"]
    assert servers.attrs["subscriptions"] == [s.id for s in readable]
    assert servers.attrs["operation"] == "sql_servers" and servers.attrs["sandbox"] is True
    assert isinstance(servers["subscription"].dtype, pd.StringDtype)
    assert isinstance(servers["publicNetworkAccess"].dtype, pd.CategoricalDtype)


def test_the_scope_named_by_name_or_id_in_any_case_each_once(conn, world) -> None:
    prod, dev, shared = world.subscriptions
    frame, refused = toolkit.across_subscriptions(
        toolkit.resource_groups, [shared.name.upper(), prod.id, prod.name, "no-such-sub"],
        connection=conn)
    # the order asked, each subscription once, and the unknown name refused
    assert frame.attrs["subscriptions"] == [shared.id, prod.id]
    want = [g.name for g in shared.resource_groups] + [g.name for g in prod.resource_groups]
    assert frame["name"].tolist() == want
    assert refused == "1 of 3 subscriptions could not be read: no-such-sub " \
                      "(SubscriptionNotFound)."
    assert dev.id not in set(frame["subscription_id"])


def test_arguments_reach_the_read(conn, world, sandbox) -> None:
    sub = world.subscriptions[0]
    group = sub.resource_groups[0].name
    with sandbox.recording() as log:
        frame, refused = toolkit.across_subscriptions(toolkit.sql_servers, sub.name,
                                                      resource_group=group, connection=conn)
    assert refused == ""
    expected = [s.name for s in world.section("sql").servers
                if s.subscription_id == sub.id and s.resource_group.lower() == group.lower()]
    assert frame["name"].tolist() == expected
    routes = [e.route for e in log]  # the subscriptions listed (every page), then the read
    listed = routes.count("subscriptions")
    assert listed >= 1 and set(routes[listed:]) == {"sql_servers_by_group"}


def test_a_throttled_subscription_is_named_and_the_others_read(conn, world, sandbox) -> None:
    first = world.subscriptions[0]
    sandbox.inject("429", path=f"{first.id}/providers/Vendor.Network", retry_after=3600)
    with pytest.warns(toolkit.RetryWaitWarning, match="3600 s"):
        gateways, refused = toolkit.across_subscriptions(toolkit.application_gateways,
                                                         connection=conn)
    assert refused.startswith(f"1 of {len(world.subscriptions)} subscriptions could not be "
                              f"read: {first.name} (")
    assert gateways.attrs["refused"][0]["status"] == 429
    assert set(gateways["subscription_id"]) == {
        g.subscription_id for g in world.section("network").values()} - {first.id}


def test_nothing_read_is_an_empty_frame_with_the_reads_columns(partial, pconn) -> None:
    frame, refused = toolkit.across_subscriptions(toolkit.managed_clusters, "retail-dev",
                                                  connection=pconn)
    assert len(frame) == 0 and refused.startswith("1 of 1 subscription could not be read")
    assert list(frame.columns) == [*schema_for("managed_clusters").names, "subscription"]
    assert frame.attrs["operation"] == "managed_clusters" and frame.attrs["sandbox"] is True


def test_a_read_of_ones_own_is_joined_too(conn, world) -> None:
    def names(subscription_id: str, *, connection=None) -> pd.DataFrame:
        return pd.DataFrame({"n": [len(subscription_id)]})

    frame, refused = toolkit.across_subscriptions(names, connection=conn)
    assert refused == "" and frame["n"].tolist() == [36] * len(world.subscriptions)
    assert frame["subscription_id"].tolist() == [s.id for s in world.subscriptions]


@pytest.mark.parametrize("read, subscriptions, parameter", [
    ("sql_servers", None, "read"),
    (None, None, "read"),
    (toolkit.sql_servers, 7, "subscriptions"),
    (toolkit.sql_servers, [], "subscriptions"),
    (toolkit.sql_servers, [""], "subscriptions"),
    (toolkit.sql_servers, ["retail-prod", None], "subscriptions"),
    (toolkit.sql_servers, b"retail-prod", "subscriptions"),
    (toolkit.sql_servers, {"retail-prod": 1}, "subscriptions"),
])
def test_bad_arguments_are_refused_before_any_request(conn, sandbox, read, subscriptions,
                                                      parameter) -> None:
    with sandbox.recording() as log, pytest.raises(toolkit.ValidationError) as info:
        toolkit.across_subscriptions(read, subscriptions, connection=conn)
    assert info.value.parameter == parameter
    assert log == []


def test_a_bad_argument_of_the_read_is_raised_not_counted_as_a_refusal(conn) -> None:
    with pytest.raises(toolkit.ValidationError) as info:
        toolkit.across_subscriptions(toolkit.sql_servers, resource_group="bad name?",
                                     connection=conn)
    assert info.value.parameter == "resource_group"
