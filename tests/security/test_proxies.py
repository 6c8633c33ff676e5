"""Proxies carry requests, never a credential in clear: an endpoint on this machine (a
port-forward, the sandbox in another process) is reached directly whatever proxy is set, by
``connect(proxies=...)`` or by the environment without ``NO_PROXY``; a recording proxy shows
what would have leaked."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import toolkit
from tests.security.hostile import Answer, Forwarder, Hostile, Seen

_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


def _refuse(seen: Seen, server: Hostile) -> Answer:
    return Answer(502, {"error": "a proxy that records what it is sent"})


@pytest.fixture
def proxy(monkeypatch) -> Iterator[Hostile]:
    """A proxy on another loopback address that records every request it receives (and
    answers 502); the environment's proxy settings cleared."""
    for name in _PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    with Hostile(_refuse, host="127.0.0.2") as server:
        yield server


def _read_both(conn: Any) -> None:
    """A read with a bearer token (resource manager) and one with the maps key."""
    try:
        assert len(toolkit.sql_operations(connection=conn)) > 0
        assert len(toolkit.autocomplete("Can", coordinates=(1.6, 42.55), connection=conn)) > 0
    finally:
        conn.close()


def _leaked(proxy: Hostile, secrets: list[str]) -> list[str]:
    return [f"{s.method} {s.path}" for s in proxy.seen
            if any(v in str(s.headers) for v in secrets) or "Authorization" in s.headers
            or "subscription-key" in s.headers]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_a_proxy_given_to_connect_never_sees_a_loopback_endpoints_credentials(
        sandbox, proxy, host) -> None:
    token, key = sandbox.token(None), str(sandbox.maps_key.reveal())
    url = sandbox.url.replace("127.0.0.1", host)
    conn = toolkit.connect(url, token=token, maps_key=key, progress=False,
                           proxies={"http": proxy.url, "https": proxy.url})
    _read_both(conn)
    assert _leaked(proxy, [token, key]) == [] and proxy.seen == []


def test_the_environments_proxy_without_no_proxy_never_sees_a_port_forwards_credentials(
        sandbox, proxy, monkeypatch) -> None:
    host, port = sandbox.url.removeprefix("http://").split(":")
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("ALL_PROXY", proxy.url)
    token, key = sandbox.token(None), str(sandbox.maps_key.reveal())
    with Forwarder((host, int(port))) as forward:
        _read_both(toolkit.connect(forward.url, token=token, maps_key=key, progress=False))
    assert _leaked(proxy, [token, key]) == [] and proxy.seen == []
