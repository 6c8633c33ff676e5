"""Retries, throttling caps and the redacted log, over real HTTP."""

from __future__ import annotations

import logging
import warnings

import pytest

import toolkit
from toolkit._core.errors import (
    RateLimitError,
    ServiceError,
)
from toolkit._core.messages import Request


def test_throttled_requests_wait_the_retry_after(conn, sandbox, waits) -> None:
    sandbox.inject("429", path="operations", count=2, retry_after=3)
    df = toolkit.sql_operations(connection=conn)
    assert len(df) == len(sandbox.world.section("sql").operations)
    assert waits == [3.0, 3.0]
    assert conn.stats.throttled == 2 and conn.stats.retries == 2


def test_retry_after_above_the_cap_raises_rate_limit_error(sandbox, waits) -> None:
    conn = toolkit.connect(sandbox=sandbox, max_retry_wait=30, progress=False)
    conn.sleep = waits
    sandbox.inject("429", path="operations", count=1, retry_after=300)
    with pytest.raises(RateLimitError) as info, \
            pytest.warns(toolkit.RetryWaitWarning, match="wait 300 s .*max_retry_wait=30 s"):
        toolkit.sql_operations(connection=conn)
    assert info.value.retry_after == 300
    assert "wait 300 s" in str(info.value)
    assert waits == []


def test_429_without_retry_after_backs_off_and_logs(conn, sandbox, waits, caplog) -> None:
    sandbox.inject("429", path="operations", count=2)
    with caplog.at_level(logging.INFO, logger="toolkit"):
        toolkit.sql_operations(connection=conn)
    assert len(waits) == 2 and all(w > 0 for w in waits)
    assert any("without Retry-After" in r.getMessage() for r in caplog.records)


def test_server_errors_exhaust_retries_into_service_error(sandbox, waits) -> None:
    conn = toolkit.connect(sandbox=sandbox, max_retries=2, progress=False)
    conn.sleep = waits
    sandbox.inject("500", path="operations")
    with pytest.raises(ServiceError) as info:
        toolkit.sql_operations(connection=conn)
    assert info.value.status == 500
    assert conn.stats.attempts == 3


def test_other_4xx_with_retry_after_is_not_retried(conn, sandbox, catalog, waits) -> None:
    sub = catalog.query("kind == 'subscription'").iloc[0]
    with pytest.raises(toolkit.NotFoundError):
        toolkit.backend_health(sub.subscription_id, "rg-web-weu", "no-such-gateway",
                               connection=conn)
    assert conn.stats.attempts == 1 and waits == []


def test_connection_dropped_mid_body_is_retried(conn, sandbox) -> None:
    rule = sandbox.inject("drop", path="operations", count=1, skip=1)
    df = toolkit.sql_operations(connection=conn)
    assert rule.fired == 1 and conn.stats.transport_errors == 1
    assert df["name"].is_unique
    assert len(df) == len(sandbox.world.section("sql").operations)


def test_statuses_the_caller_handles_are_not_retried(waits) -> None:
    from tests.replay import Answer, replay_server

    with replay_server() as rp:
        rp.add("POST", "/route", Answer(408, {"error": {"code": "Timeout", "message": "slow"}}))
        conn = toolkit.connect(base_url=rp.url, maps_key="k" * 20, max_retries=2,
                               progress=False)
        conn.sleep = waits
        pipe = conn.pipeline("maps")
        with pytest.raises(toolkit.ServiceError):
            pipe.send(Request("POST", "/route", json={}, no_retry=frozenset({408})))
        assert len(rp.seen) == 1 and waits == []
        with pytest.raises(toolkit.ServiceError):
            pipe.send(Request("POST", "/route", json={}))
        assert len(rp.seen) == 1 + 3


def test_logs_never_show_the_token(sandbox, caplog) -> None:
    token = sandbox.token("arm")
    conn = toolkit.connect(base_url=sandbox.url, token=token, progress=False)
    with caplog.at_level(logging.DEBUG), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        toolkit.sql_operations(connection=conn)
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "operations" in text
    assert token not in text


def test_the_origin_guard_checks_every_url_but_the_one_send_checked(sandbox) -> None:
    # send() names the URL it checked; the guard reads any other URL itself, so a request
    # reaching the pipeline another way (or claiming a check of a different URL) is refused
    from azure.core.rest import HttpRequest

    from toolkit._core.errors import UntrustedOriginError

    conn = toolkit.connect(sandbox=sandbox, progress=False)
    pipe = conn.pipeline("arm")
    good = pipe.url("/subscriptions", {"api-version": "2022-12-01"})
    try:
        with sandbox.recording() as log:
            for claimed in (None, good):
                options: dict[str, object] = {"enforce_https": False}  # loopback http
                if claimed is not None:
                    options["toolkit_origin_checked"] = claimed
                with pytest.raises(UntrustedOriginError):
                    pipe._client.send_request(HttpRequest("GET", "https://evil.example/x"),
                                              **options)
            assert log == []
            answer = pipe._client.send_request(HttpRequest("GET", good), enforce_https=False,
                                               toolkit_origin_checked=good)
        assert answer.status_code == 200 and len(log) == 1
    finally:
        conn.close()
