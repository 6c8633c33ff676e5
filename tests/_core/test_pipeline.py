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
# proxies=: every request to a service elsewhere goes through the proxy (azure-core's
# ProxyPolicy, or the environment's), its credential inside the TLS tunnel; an endpoint on this
# machine is reached directly (tests/security/test_proxies.py)

#: A name no resolver knows (RFC 6761): only a proxy can reach it, so a request that reaches the
#: service went through one.
REMOTE = "service.invalid"


class _TlsService:
    """A service over TLS on loopback, with a certificate for :data:`REMOTE`, answering one
    page of operations (one request a connection) and recording the requests' headers."""

    def __init__(self) -> None:
        import http.server
        import json
        import ssl

        import trustme

        self.ca = trustme.CA()
        self.headers: list[dict[str, str]] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                outer.headers.append(dict(self.headers.items()))
                body = json.dumps({"value": [{"name": "Vendor.Sql/servers/read",
                                              "isDataAction": False}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Connection", "close")  # a tunnel carries one request
                self.end_headers()
                self.wfile.write(body)
                self.close_connection = True

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ca.issue_cert(REMOTE).configure_cert(ctx)
        self.server.socket = ctx.wrap_socket(self.server.socket, server_side=True)
        self.port = int(self.server.server_address[1])
        self.url = f"https://{REMOTE}:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def ca_file(self, folder) -> str:
        path = folder / "ca.pem"
        self.ca.cert_pem.write_to_path(str(path))
        return str(path)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


def test_proxies_carry_every_request_to_a_service_elsewhere_its_credential_tunnelled(
        tmp_path) -> None:
    service, proxy = _TlsService(), _TunnelProxy()
    try:
        conn = toolkit.connect(arm_url=service.url, token="tok-" + "s" * 20,
                               verify=service.ca_file(tmp_path), progress=False,
                               proxies={"https": proxy.url})
        df = toolkit.sql_operations(connection=conn)
        conn.close()
    finally:
        proxy.stop()
        service.stop()
    assert len(df) == 1 and len(service.headers) == 1
    assert proxy.seen and all(s == f"CONNECT {REMOTE}:{service.port}" for s in proxy.seen)
    assert service.headers[0]["Authorization"] == "Bearer tok-" + "s" * 20  # in the tunnel
    assert not [h for h in proxy.headers if "Authorization" in h or "tok-" in str(h)]


def test_a_proxy_set_changed_or_removed_in_the_environment_applies_to_the_next_request(
        monkeypatch, tmp_path) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "REQUEST_METHOD"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    service, first, second = _TlsService(), _TunnelProxy(), _TunnelProxy()
    try:
        conn = toolkit.connect(arm_url=service.url, token="t" * 20, max_retries=0,
                               verify=service.ca_file(tmp_path), progress=False)
        seen = []
        for env in ({"HTTPS_PROXY": first.url}, {"https_proxy": second.url},
                    {"HTTPS_PROXY": first.url, "NO_PROXY": REMOTE}, {},
                    {"all_proxy": second.url}):
            for name in ("HTTPS_PROXY", "https_proxy", "NO_PROXY", "all_proxy"):
                monkeypatch.delenv(name, raising=False)
            for name, value in env.items():
                monkeypatch.setenv(name, value)
            before = (len(first.seen), len(second.seen))
            try:
                toolkit.sql_operations(connection=conn)
                reached = True
            except TransportError:  # straight to a name no resolver knows
                reached = False
            seen.append((len(first.seen) - before[0], len(second.seen) - before[1], reached))
        conn.close()
    finally:
        for server in (first, second, service):
            server.stop()
    assert seen == [(1, 0, True), (0, 1, True), (0, 0, False), (0, 0, False), (0, 1, True)]


class _TunnelProxy:
    """A tiny CONNECT proxy on loopback: opens a tunnel to the TLS service for each CONNECT
    and records what it is told in clear (the request line and headers)."""

    def __init__(self) -> None:
        import http.server
        import socket

        seen: list[str] = []
        headers: list[dict[str, str]] = []
        self.seen, self.headers = seen, headers

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_CONNECT(self) -> None:
                seen.append(f"CONNECT {self.path}")
                headers.append(dict(self.headers.items()))
                port = int(self.path.rsplit(":", 1)[1])
                upstream = socket.create_connection(("127.0.0.1", port), timeout=30)
                self.send_response(200, "Connection established")
                self.end_headers()
                pumps = [threading.Thread(target=_pump, args=pair, daemon=True) for pair in
                         ((self.connection, upstream), (upstream, self.connection))]
                for t in pumps:
                    t.start()
                for t in pumps:
                    t.join(30)
                self.close_connection = True

            def _other(self) -> None:  # a plain request in clear: recorded, refused
                seen.append(f"{self.command} {self.path}")
                headers.append(dict(self.headers.items()))
                self.send_error(502)

            do_GET = do_POST = do_PUT = _other

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


def _pump(src, dst) -> None:
    import contextlib
    import socket

    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)


def test_bad_proxies_are_refused_before_any_request(sandbox) -> None:
    for bad in ("http://proxy:8080", {"https": "proxy:8080"}, {"https": 8080}):
        with sandbox.recording() as log, pytest.raises(toolkit.ValidationError) as info:
            toolkit.connect(sandbox=sandbox, proxies=bad, progress=False)
        assert info.value.parameter == "proxies" and log == []
