"""Retries, throttling caps, authentication and transport failures, over real HTTP."""

from __future__ import annotations

import logging
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import requests

import toolkit
from toolkit._core.errors import (
    AuthenticationError,
    ProtocolError,
    RateLimitError,
    ServiceError,
    TransportError,
)
from toolkit._spec.arm import WRITE_BUCKET
from toolkit.sandbox.faults import FaultRule


def _ops_path(sandbox) -> str:
    return f"/providers/{sandbox.namespace}.Sql/operations"


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


def test_401_raises_authentication_error_without_the_token(sandbox, waits) -> None:
    expired = sandbox.token("arm", expires_in=-60)
    conn = toolkit.connect(base_url=sandbox.url, token=expired, progress=False)
    conn.sleep = waits
    with pytest.raises(AuthenticationError) as info:
        toolkit.sql_operations(connection=conn)
    assert info.value.status == 401
    assert info.value.code == "ExpiredAuthenticationToken"
    assert expired not in str(info.value) and expired not in repr(info.value)
    assert "credential" in str(info.value)
    assert expired not in repr(conn)


def test_wrong_audience_token_is_refused(sandbox) -> None:
    graph_token = sandbox.token("graph")
    conn = toolkit.connect(base_url=sandbox.url, token=graph_token, progress=False)
    with pytest.raises(AuthenticationError) as info:
        toolkit.sql_operations(connection=conn)
    assert info.value.code == "InvalidAuthenticationTokenAudience"


def test_token_expiring_is_refreshed_from_the_credential(sandbox) -> None:
    credential = sandbox.credential(expires_in=1)
    conn = toolkit.connect(base_url=sandbox.url, credential=credential, progress=False)
    toolkit.sql_operations(connection=conn)
    toolkit.sql_operations(connection=conn)
    # tokens that expire within azure-core's refresh window are fetched again for each request
    assert credential.issued >= 2


def test_connection_dropped_mid_body_is_retried(conn, sandbox) -> None:
    rule = sandbox.inject("drop", path="operations", count=1, skip=1)
    df = toolkit.sql_operations(connection=conn)
    assert rule.fired == 1 and conn.stats.transport_errors == 1
    assert df["name"].is_unique
    assert len(df) == len(sandbox.world.section("sql").operations)


def test_malformed_body_is_asked_for_again_then_fails_clearly(conn, sandbox) -> None:
    rule = sandbox.inject("malformed", path="operations", count=1)
    df = toolkit.sql_operations(connection=conn)
    assert rule.fired == 1
    assert len(df) == len(sandbox.world.section("sql").operations)
    sandbox.inject("truncate", path="operations")
    with pytest.raises(ProtocolError) as info:
        toolkit.sql_operations(connection=conn)
    assert "not valid JSON" in str(info.value)


def test_unreachable_endpoint_raises_transport_error(waits) -> None:
    s = requests.Session()
    s.close()
    conn = toolkit.connect(base_url="http://127.0.0.1:9", token="t" * 20, max_retries=1,
                           progress=False)
    conn.sleep = waits
    with pytest.raises(TransportError) as info:
        toolkit.sql_operations(connection=conn)
    assert "could not complete" in str(info.value)


def test_fault_rule_rejects_unknown_kind() -> None:
    with pytest.raises(ValueError):
        FaultRule("418")


def test_logs_never_show_the_token(sandbox, caplog) -> None:
    token = sandbox.token("arm")
    conn = toolkit.connect(base_url=sandbox.url, token=token, progress=False)
    with caplog.at_level(logging.DEBUG), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        toolkit.sql_operations(connection=conn)
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "operations" in text
    assert token not in text


def test_statuses_the_caller_handles_are_not_retried(waits) -> None:
    from tests.replay import Answer, replay_server

    with replay_server() as rp:
        rp.add("POST", "/route", Answer(408, {"error": {"code": "Timeout", "message": "slow"}}))
        conn = toolkit.connect(base_url=rp.url, maps_key="k" * 20, max_retries=2,
                               progress=False)
        conn.sleep = waits
        pipe = conn.pipeline("maps")
        with pytest.raises(toolkit.ServiceError):
            pipe.send("POST", "/route", json={}, no_retry=frozenset({408}))
        assert len(rp.seen) == 1 and waits == []
        with pytest.raises(toolkit.ServiceError):
            pipe.send("POST", "/route", json={})
        assert len(rp.seen) == 1 + 3


def test_resource_manager_requests_draw_from_the_bucket_of_their_subscription(conn) -> None:
    from toolkit._spec.arm import READ_BUCKET, WRITE_BUCKET

    arm = conn.pipeline("arm")
    base = arm.base_url
    one = arm.limiter(f"{base}/subscriptions/AAA/resourceGroups/x?api-version=1")
    assert one is not None and one.burst == READ_BUCKET
    assert arm.limiter(f"{base}/subscriptions/aaa/providers/y") is one  # any case, any path
    assert arm.limiter(f"{base}/subscriptions/bbb/x") is not one
    tenant = arm.limiter(f"{base}/providers/Vendor.Management/managementGroups")
    assert tenant is not None and tenant is not one
    assert arm.limiter(f"{base}/subscriptions?api-version=1") is tenant
    write = arm.limiter(f"{base}/subscriptions/aaa/x", "PUT")
    assert write is not None and write is not one and write.burst == WRITE_BUCKET
    # a POST (a query or an action) is a write, as the service counts it
    assert arm.limiter(f"{base}/subscriptions/aaa/x/queryResults", "POST") is write
    assert arm.limiter(f"{base}/subscriptions/aaa/x", "HEAD") is one
    assert conn.pipeline("maps").limiter(f"{conn.pipeline('maps').base_url}/x") is None


def _learning(monkeypatch, *, count: bool) -> tuple[list[int], list[float]]:
    """Another client of the caller leaves one read in the service's bucket (which refills only
    while this connection waits); this connection, its own bucket full, then reads three times:
    the statuses the service answered, and the waits the connection asked for."""
    from toolkit._core import pipeline
    from toolkit.sandbox.arm.common import limits
    from toolkit.sandbox.server import Sandbox

    if not count:
        monkeypatch.setattr(pipeline, "_remaining", lambda value: None)
    with Sandbox(seed=7, arm_limits=True) as sb:
        reads = limits(sb)["reads"]
        reads.configure(rate=0.0, burst=3)
        other = toolkit.connect(sandbox=sb, progress=False, max_retries=0)
        ours = toolkit.connect(sandbox=sb, progress=False, max_retries=0)
        waits: list[float] = []

        def wait(seconds: float) -> None:  # the service's bucket refills meanwhile
            waits.append(seconds)
            reads.refill()

        ours.sleep = wait
        path = f"/subscriptions/{sb.world.subscriptions[0].id}/resourcegroups"
        params = {"api-version": "2022-09-01"}
        try:
            for _ in range(2):
                other.pipeline("arm").send("GET", path, params=params)
            sb.log.clear()
            for _ in range(3):
                try:
                    ours.pipeline("arm").send("GET", path, params=params)
                except RateLimitError:
                    break
        finally:
            other.close()
            ours.close()
        return [r.status for r in sb.log], waits


def test_a_connection_learns_from_the_services_count_what_others_used(monkeypatch) -> None:
    # the first answer says the bucket is empty, so the connection waits for the refill before
    # its next read instead of being refused, though its own bucket (of the documented size)
    # still held plenty
    statuses, waits = _learning(monkeypatch, count=True)
    assert statuses == [200, 200, 200] and len(waits) >= 1
    # without the count the next read goes at once, and the service refuses it
    statuses, waits = _learning(monkeypatch, count=False)
    assert statuses == [200, 429] and waits == []


def test_a_service_with_room_to_spare_is_not_held_to_the_documented_bucket(
        conn, sandbox, waits) -> None:
    # the sandbox, not enforcing limits, says every time that the bucket is full: past the
    # documented bucket of reads the connection does not wait
    sub = sandbox.world.subscriptions[0]
    arm = conn.pipeline("arm")
    bucket = arm.limiter(f"{arm.base_url}/subscriptions/{sub.id}")
    assert bucket is not None and bucket.follows_service
    for _ in range(bucket.burst):  # the documented bucket, used up by others of this caller
        bucket.acquire()
    for _ in range(5):
        toolkit.resource_groups(sub.id, connection=conn)
    assert len(waits) == 1  # the first request only, before any answer


def _posts_after_writes_used_up(sandbox, conn, waits, monkeypatch, *, header: bool
                                ) -> tuple[list[int], list[float], Any, Any]:
    """The service counts POST queries as reads (the sandbox made to); the connection's bucket
    of writes is used up by others of the caller: five POST queries, their statuses, the waits,
    and the connection's buckets for POSTs and for GETs afterwards."""
    from toolkit._core import pipeline

    if not header:
        monkeypatch.setattr(pipeline, "_remaining", lambda value: None)
    monkeypatch.setattr(sandbox, "arm_read_methods", frozenset({"GET", "HEAD", "POST"}))
    sub = sandbox.world.subscriptions[0]
    arm = conn.pipeline("arm")
    path = (f"/subscriptions/{sub.id}/providers/{sandbox.namespace}.PolicyInsights/"
            "policyStates/latest/queryResults")
    writes = arm.limiter(arm.url(path), "POST")
    assert writes is not None and writes.burst == WRITE_BUCKET
    for _ in range(writes.burst):
        writes.acquire()
    with sandbox.recording() as log:
        for _ in range(5):
            arm.send("POST", path, params={"api-version": "2024-10-01", "$top": 1})
    return ([r.status for r in log], list(waits), arm.limiter(arm.url(path), "POST"),
            arm.limiter(arm.url(path), "GET"))


def test_a_method_the_service_counts_otherwise_follows_its_header(
        sandbox, conn, waits, monkeypatch) -> None:
    # the first POST waits for a write token; its answer names the bucket of reads, which has
    # room: the other four go at once, counted where the service counts them
    statuses, waited, posts, reads = _posts_after_writes_used_up(sandbox, conn, waits,
                                                                monkeypatch, header=True)
    assert statuses == [200] * 5 and len(waited) == 1
    assert posts is reads


def test_without_the_header_a_post_waits_for_the_bucket_of_writes(
        sandbox, conn, waits, monkeypatch) -> None:
    statuses, waited, posts, reads = _posts_after_writes_used_up(sandbox, conn, waits,
                                                                monkeypatch, header=False)
    assert statuses == [200] * 5 and len(waited) >= 5
    assert posts is not reads and posts.burst == WRITE_BUCKET


@pytest.mark.xdist_group("real-time")  # measures real time: see tests/conftest.py
def test_every_resource_manager_request_takes_a_token(conn, sandbox, waits) -> None:
    sub = sandbox.world.subscriptions[0]
    arm = conn.pipeline("arm")
    arm.limiter(f"{arm.base_url}/subscriptions/{sub.id}").configure(4.0, 1)
    import time

    began = time.monotonic()
    for _ in range(3):
        toolkit.resource_groups(sub.id, connection=conn)
    elapsed = time.monotonic() - began  # the bucket refills with real time as well
    # three starts at 4 a second from a bucket of one: two waits of about a quarter second
    assert len(waits) >= 2 and sum(waits) + elapsed >= 0.5 - 1e-9


TOKEN = "example-token-0123456789"


def test_a_body_reads_the_same_without_urllib3s_own_buffer_access(monkeypatch) -> None:
    # a body of declared length is read into one buffer through urllib3's answer; where that
    # is not available it is read in chunks, to the same bytes
    from tests.replay import Answer, replay_server
    from toolkit._core import pipeline

    body = {"value": [{"id": f"/x/{i}", "name": "n" * (i % 50)} for i in range(3000)]}
    exact: list[int] = []
    read_exact = pipeline._BoundedBodyAdapter._read_exact

    def counted(self, *args, **kw):
        exact.append(1)
        return read_exact(self, *args, **kw)

    monkeypatch.setattr(pipeline._BoundedBodyAdapter, "_read_exact", counted)
    with replay_server() as rp:
        rp.add("GET", r"/items", Answer(200, body))
        conn = toolkit.connect(base_url=rp.url, token=TOKEN, progress=False)
        try:
            one = conn.pipeline("arm").send("GET", "/items").content
            monkeypatch.setattr(pipeline, "_exact_reads", lambda raw: False)
            two = conn.pipeline("arm").send("GET", "/items").content
        finally:
            conn.close()
    assert exact == [1]  # the first read took the one-buffer path, the second did not
    assert one == two and len(one) > 100_000


class _EmptyPages(BaseHTTPRequestHandler):
    """Answers every GET with an empty page (``before_answer`` runs first)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def before_answer(self) -> None:
        pass

    def do_GET(self) -> None:
        self.before_answer()
        body = b'{"value": []}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def _serving(handler: type[BaseHTTPRequestHandler], **settings: Any) -> Iterator[Any]:
    """A connection to a loopback server of ``handler`` for the block."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    conn = toolkit.connect(base_url=f"http://127.0.0.1:{server.server_address[1]}",
                           token=TOKEN, progress=False, max_retries=0, **settings)
    try:
        yield conn
    finally:
        conn.close()
        server.shutdown()
        server.server_close()


def test_an_answer_to_head_has_no_body_whatever_its_length_says() -> None:
    class Handler(_EmptyPages):
        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "12345")
            self.end_headers()

    with _serving(Handler) as conn:
        pipe = conn.pipeline("arm")
        assert pipe.send("HEAD", "/x", check_json=False).content == b""
        assert pipe.send("GET", "/x").json() == {"value": []}  # the connection serves on


@pytest.mark.parametrize("cached", [False, True])
def test_a_netrc_password_never_replaces_the_token(sandbox, waits, tmp_path, monkeypatch,
                                                   cached: bool) -> None:
    # a ``default`` entry matches every host: requests would send it as Basic auth instead of
    # the bearer token, and the service would refuse the call
    netrc = tmp_path / "netrc"
    netrc.write_text("default login someone password netrc-password-0123\n")
    netrc.chmod(0o600)
    monkeypatch.setenv("NETRC", str(netrc))
    assert requests.utils.get_netrc_auth(sandbox.url) == ("someone", "netrc-password-0123")
    conn = toolkit.connect(sandbox=sandbox, progress=False,
                           cache=tmp_path / "c.sqlite" if cached else None)
    conn.sleep = waits
    sandbox.log.clear()
    try:
        df = toolkit.sql_operations(connection=conn)
    finally:
        conn.close()
    assert len(df) == len(sandbox.world.section("sql").operations)
    assert sandbox.log and {r.status for r in sandbox.log} == {200}


def test_the_pool_keeps_a_connection_for_every_page_a_wide_read_has_in_flight(caplog) -> None:
    # a partitioned read keeps up to PAGES_IN_FLIGHT requests of each of its chains in flight;
    # a pool smaller than that opens connections only to discard them (one round trip each,
    # and a urllib3 warning in the user's log)
    from concurrent.futures import ThreadPoolExecutor

    from toolkit._core.pipeline import PAGES_IN_FLIGHT

    chains = 8
    at_once = PAGES_IN_FLIGHT * chains
    together = threading.Barrier(at_once, timeout=20)

    class Handler(_EmptyPages):
        def before_answer(self) -> None:
            together.wait()  # every request is in flight at once before any is answered

    with _serving(Handler, max_partitions=chains, max_concurrency=4) as conn, \
            caplog.at_level(logging.WARNING, logger="urllib3"), \
            ThreadPoolExecutor(max_workers=at_once) as pool:
        pipe = conn.pipeline("arm")
        answers = list(pool.map(lambda i: pipe.send("GET", f"/items/{i}"), range(at_once)))
    assert [a.status for a in answers] == [200] * at_once
    assert not [r for r in caplog.records if "pool is full" in r.getMessage()]


# --------------------------------------------------------------------------------------------
# proxies=: every request goes through the proxy given (azure-core's ProxyPolicy)


class _CountingProxy:
    """A tiny forwarding proxy for plain http on loopback: counts what it forwards."""

    def __init__(self) -> None:
        import http.client
        import http.server
        import threading
        from urllib.parse import urlsplit

        seen: list[str] = []
        self.seen = seen

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _forward(self) -> None:
                seen.append(f"{self.command} {self.path}")
                target = urlsplit(self.path)  # absolute form: http://host:port/path?query
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                upstream = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in ("proxy-connection", "connection")}
                upstream.request(self.command, target.path + (f"?{target.query}"
                                                              if target.query else ""),
                                 body=body, headers=headers)
                answer = upstream.getresponse()
                data = answer.read()
                self.send_response(answer.status)
                for k, v in answer.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                upstream.close()

            do_GET = do_POST = do_PUT = _forward

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


def test_proxies_carry_every_request(sandbox) -> None:
    proxy = _CountingProxy()
    try:
        conn = toolkit.connect(sandbox=sandbox, proxies={"http": proxy.url}, progress=False)
        with sandbox.recording() as log:
            df = toolkit.sql_operations(connection=conn)
        conn.close()
    finally:
        proxy.stop()
    assert len(df) > 0 and len(log) >= 1
    assert len(proxy.seen) == len(log)  # each request the sandbox saw came through the proxy
    assert all(s.startswith(f"GET {sandbox.url}/") for s in proxy.seen)


def test_bad_proxies_are_refused_before_any_request(sandbox) -> None:
    for bad in ("http://proxy:8080", {"https": "proxy:8080"}, {"https": 8080}):
        with sandbox.recording() as log, pytest.raises(toolkit.ValidationError) as info:
            toolkit.connect(sandbox=sandbox, proxies=bad, progress=False)
        assert info.value.parameter == "proxies" and log == []
