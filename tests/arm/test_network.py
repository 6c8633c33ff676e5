"""backend_health: the long-running POST polled to its end, over HTTP."""

from __future__ import annotations

import pandas as pd
import pytest

import toolkit
from toolkit._core.errors import OperationTimeoutError, ValidationError
from toolkit.arm._schemas import HEALTH_ORDER


@pytest.fixture(scope="module")
def gateways(catalog):
    return catalog.query("kind == 'application_gateway'")


def _count_servers(sandbox, gw) -> int:
    gateways = sandbox.world.section("network")
    g = gateways[(gw.subscription_id.lower(), gw.resource_group.lower(), gw["name"].lower())]
    return sum(len(p.servers) * len(p.settings) for p in g.pools)


def test_202_is_polled_honouring_retry_after(conn, sandbox, gateways, waits) -> None:
    gw = gateways.iloc[0]
    with sandbox.recording() as log:
        df = toolkit.backend_health(gw.subscription_id, gw.resource_group, gw["name"],
                                    connection=conn)
    statuses = [r.status for r in log]
    assert statuses == [202] + [202] * (sandbox.lro_polls - 1) + [200]
    assert waits == [float(sandbox.lro_retry_after)] * sandbox.lro_polls
    assert len(df) == _count_servers(sandbox, gw)
    assert isinstance(df["health"].dtype, pd.CategoricalDtype) and df["health"].cat.ordered
    assert list(df["health"].cat.categories) == list(HEALTH_ORDER)
    assert df["backendAddressPool.name"].notna().all()
    assert (df["backendAddressPool.id"].str.rsplit("/", n=1).str[-1]
            == df["backendAddressPool.name"]).all()


def test_every_health_state_occurs_in_the_world(conn, gateways) -> None:
    frames = [toolkit.backend_health(g.subscription_id, g.resource_group, g.name,
                                     connection=conn) for g in gateways.itertuples()]
    states = set(pd.concat(frames)["health"].astype(str))
    assert states == set(HEALTH_ORDER)
    down = pd.concat(frames).query("health == 'Down'")
    assert down["healthProbeLog"].str.len().gt(20).all()


def test_expand_inlines_pools_and_settings(conn, gateways) -> None:
    gw = gateways.iloc[2]
    df = toolkit.backend_health(gw.subscription_id, gw.resource_group, gw["name"],
                                expand="backendAddressPool,backendHttpSettings", connection=conn)
    assert df["backendHttpSettings.port"].notna().all()
    assert df["backendHttpSettings.port"].dtype == "Int64"
    assert set(df["backendHttpSettings.protocol"].astype(str)) <= {"Http", "Https", "Tcp", "Tls"}
    plain = toolkit.backend_health(gw.subscription_id, gw.resource_group, gw["name"],
                                   connection=conn)
    assert plain["backendHttpSettings.port"].isna().all()


def test_wait_false_returns_the_operation(conn, gateways) -> None:
    gw = gateways.iloc[1]
    op = toolkit.backend_health(gw.subscription_id, gw.resource_group, gw["name"], wait=False,
                                connection=conn)
    assert isinstance(op, toolkit.Operation) and op.status == "InProgress"
    df = op.result()
    assert op.status == "Succeeded" and len(df) > 0
    assert op.result() is df


def test_timeout_leaves_an_operation_to_resume(conn, sandbox, gateways, waits) -> None:
    gw = gateways.iloc[1]
    with pytest.raises(OperationTimeoutError) as info:
        toolkit.backend_health(gw.subscription_id, gw.resource_group, gw["name"], timeout=1,
                               connection=conn)
    err = info.value
    assert "operationResults" in err.operation_url and "resume" in str(err)
    df = err.operation.result()
    assert len(df) == _count_servers(sandbox, gw)


def test_unknown_gateway_and_group_are_not_found(conn, gateways) -> None:
    gw = gateways.iloc[0]
    with pytest.raises(toolkit.NotFoundError, match="ResourceNotFound"):
        toolkit.backend_health(gw.subscription_id, gw.resource_group, "agw-missing",
                               connection=conn)
    with pytest.raises(toolkit.NotFoundError, match="ResourceGroupNotFound"):
        toolkit.backend_health(gw.subscription_id, "rg-missing", gw["name"], connection=conn)


@pytest.mark.parametrize("rg, gateway, param", [
    ("", "agw", "resource_group"),
    ("r" * 91, "agw", "resource_group"),
    ("rg/with/slash", "agw", "resource_group"),
    ("rg-ok", "", "gateway"),
    ("rg-ok", "-agw", "gateway"),
    ("rg-ok", "a" * 81, "gateway"),
])
def test_bad_inputs_fail_before_any_request(conn, sandbox, gateways, rg, gateway, param) -> None:
    gw = gateways.iloc[0]
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        toolkit.backend_health(gw.subscription_id, rg, gateway, connection=conn)
    assert info.value.parameter == param and log == []


def test_resource_group_of_90_characters_reaches_the_service(conn, gateways) -> None:
    gw = gateways.iloc[0]
    with pytest.raises(toolkit.NotFoundError, match="ResourceGroupNotFound"):
        toolkit.backend_health(gw.subscription_id, "r" * 90, "agw", connection=conn)


def test_polling_survives_a_503_on_a_poll(conn, sandbox, gateways) -> None:
    gw = gateways.iloc[3]
    sandbox.inject("503", path="operationResults", count=1, retry_after=1)
    df = toolkit.backend_health(gw.subscription_id, gw.resource_group, gw["name"],
                                connection=conn)
    assert len(df) == _count_servers(sandbox, gw)


def test_a_failed_async_operation_raises_again_on_every_result(waits) -> None:
    from tests.replay import Answer, replay_server

    with replay_server() as rp:
        conn = toolkit.connect(base_url=rp.url, token="t" * 24, progress=False)
        conn.sleep = waits
        rp.add("POST", "/backendhealth", Answer(202, None, {
            "Vendor-AsyncOperation": "{url}/subscriptions/s/providers/Vendor.Network/locations/"
                                     "weu/operations/op1", "Retry-After": "3"}))
        rp.add("GET", "/operations/op1",
               Answer(200, {"status": "InProgress"}, {"Retry-After": "5"}),
               Answer(200, {"status": "Failed", "error": {"code": "ProbeTimeout",
                                                          "message": "probes timed out"}}))
        op = toolkit.backend_health("00000000-0000-4000-8000-000000000000", "rg", "agw",
                                    wait=False, connection=conn)
        for _ in range(2):
            with pytest.raises(toolkit.OperationFailedError, match="ProbeTimeout"):
                op.result()
        with pytest.raises(toolkit.OperationFailedError):
            op.done()
        assert op.status == "Failed" and op.polls == 2 and waits == [3.0, 5.0]
