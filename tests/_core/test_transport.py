"""The session and its pooled connections, over real HTTP."""

from __future__ import annotations

import logging
import threading

import pytest
import requests

import toolkit
from tests._core.loopback import EmptyPages, serving
from toolkit._core.messages import Request
from toolkit._core.transport import session_for


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

    from toolkit._core.transport import PAGES_IN_FLIGHT

    chains = 8
    at_once = PAGES_IN_FLIGHT * chains
    together = threading.Barrier(at_once, timeout=20)

    class Handler(EmptyPages):
        def before_answer(self) -> None:
            together.wait()  # every request is in flight at once before any is answered

    with serving(Handler, max_partitions=chains, max_concurrency=4) as conn, \
            caplog.at_level(logging.WARNING, logger="urllib3"), \
            ThreadPoolExecutor(max_workers=at_once) as pool:
        pipe = conn.pipeline("arm")
        answers = list(pool.map(lambda i: pipe.send(Request("GET", f"/items/{i}")), range(at_once)))
    assert [a.status for a in answers] == [200] * at_once
    assert not [r for r in caplog.records if "pool is full" in r.getMessage()]


@pytest.mark.parametrize("env", [
    {},
    {"HTTPS_PROXY": "http://proxy.example:3128"},
    {"https_proxy": "http://lower.example:1", "HTTPS_PROXY": "http://upper.example:2"},
    {"HTTP_PROXY": "http://p.example:1", "NO_PROXY": "service.example"},
    {"HTTP_PROXY": "http://p.example:1", "no_proxy": ".example"},
    {"HTTP_PROXY": "http://p.example:1", "REQUEST_METHOD": "GET"},
    {"ALL_PROXY": "socks5://p.example:1080", "NO_PROXY": "*"},
    {"REQUESTS_CA_BUNDLE": "/tmp/bundle.pem"},
])
def test_the_environment_settings_are_requests_own_and_follow_the_environment(
        sandbox, monkeypatch, env: dict[str, str]) -> None:
    # looked up once an origin while the environment stays the same: the same settings as
    # requests' own lookup, before and after the environment changes
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "REQUEST_METHOD",
                 "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    session = session_for(conn.config_for("arm"))
    plain = requests.Session()
    urls = ["http://service.example/a?b=1", "https://service.example:8443/x",
            "https://other.test/y"]

    def both(url: str, proxies: dict[str, str] | None, verify: object) -> tuple[object, ...]:
        ours = session.merge_environment_settings(url, dict(proxies or {}), None, verify, None)
        theirs = plain.merge_environment_settings(url, dict(proxies or {}), None, verify, None)
        return ours, theirs

    for url in urls:
        for proxies, verify in (({}, True), ({"no_proxy": "other.test"}, None),
                                ({"https": "http://given.example:9"}, "/ca.pem")):
            ours, theirs = both(url, proxies, verify)
            assert ours == theirs
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    for url in urls:
        ours, theirs = both(url, {}, True)
        assert ours == theirs
    for name in env:
        monkeypatch.delenv(name)
    for url in urls:
        ours, theirs = both(url, {}, True)
        assert ours == theirs and ours["proxies"] == {}  # type: ignore[index]
    conn.close()
