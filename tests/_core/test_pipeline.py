"""The send: its checks of the answer, its errors, its proxies, over real HTTP."""

from __future__ import annotations

import threading

import pytest
import requests

import toolkit
from toolkit._core.errors import (
    ProtocolError,
    TransportError,
)
from toolkit.sandbox.faults import FaultRule


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


# --------------------------------------------------------------------------------------------
# proxies=: every request goes through the proxy given (azure-core's ProxyPolicy)


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



def test_a_proxy_set_changed_or_removed_in_the_environment_applies_to_the_next_request(
        sandbox, monkeypatch) -> None:
    # the session keeps the environment's proxies per origin while the variables that decide
    # them keep their values; any change to them is seen by the next request
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "REQUEST_METHOD"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    proxy = _CountingProxy()
    try:
        conn = toolkit.connect(sandbox=sandbox, progress=False)
        seen = []
        for env in ({}, {"HTTP_PROXY": proxy.url}, {"HTTP_PROXY": proxy.url},
                    {"http_proxy": proxy.url, "NO_PROXY": "127.0.0.1"},
                    {"all_proxy": proxy.url}, {}):
            for name in ("HTTP_PROXY", "http_proxy", "NO_PROXY", "all_proxy"):
                monkeypatch.delenv(name, raising=False)
            for name, value in env.items():
                monkeypatch.setenv(name, value)
            before = len(proxy.seen)
            with sandbox.recording() as log:
                toolkit.sql_operations(connection=conn)
            seen.append((len(proxy.seen) - before, len(log)))
        conn.close()
    finally:
        proxy.stop()
    assert [through == sent for through, sent in seen] == [False, True, True, False, True,
                                                           False]
    assert [through for through, _ in seen][0::3] == [0, 0]


class _CountingProxy:
    """A tiny forwarding proxy for plain http on loopback: counts what it forwards."""

    def __init__(self) -> None:
        import http.client
        import http.server
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


def test_bad_proxies_are_refused_before_any_request(sandbox) -> None:
    for bad in ("http://proxy:8080", {"https": "proxy:8080"}, {"https": 8080}):
        with sandbox.recording() as log, pytest.raises(toolkit.ValidationError) as info:
            toolkit.connect(sandbox=sandbox, proxies=bad, progress=False)
        assert info.value.parameter == "proxies" and log == []
