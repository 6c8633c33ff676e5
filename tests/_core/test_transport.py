"""The session and its pooled connections, over real HTTP."""

from __future__ import annotations

import logging
import threading

import pytest
import requests

import toolkit
from tests._core.loopback import EmptyPages, serving
from toolkit._core.messages import Request


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


def _prepared(url: str, **headers: str) -> requests.PreparedRequest:
    return requests.Request("GET", url, headers=headers).prepare()


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/a", "https://127.0.0.5/a",
                                 "http://localhost:1/a", "http://[::1]:9/a"])
def test_an_endpoint_on_this_machine_is_reached_directly(url: str) -> None:
    from toolkit._core.transport import proxies_for

    given = {"http": "http://proxy.example:3128", "https": "http://proxy.example:3128"}
    assert proxies_for(_prepared(url, Authorization="Bearer t"), given) is None


def test_a_plain_http_credential_is_never_handed_to_a_proxy() -> None:
    from toolkit._core.errors import ValidationError
    from toolkit._core.transport import proxies_for

    given = {"http": "http://user:pw@proxy.example:3128"}
    for header in ("Authorization", "subscription-key"):
        with pytest.raises(ValidationError, match="proxies") as info:
            proxies_for(_prepared("http://service.example/a", **{header: "secret"}), given)
        assert "pw" not in str(info.value) and "secret" not in str(info.value)
    # without a credential, over https (a tunnel) or with no proxy for http: as requests chose
    assert proxies_for(_prepared("http://service.example/a"), given) == given
    assert proxies_for(_prepared("https://service.example/a", Authorization="Bearer t"),
                       given) == given
    assert proxies_for(_prepared("http://service.example/a", Authorization="Bearer t"),
                       {"https": "http://proxy.example:1"}) == {"https": "http://proxy.example:1"}
    assert proxies_for(_prepared("http://service.example/a", Authorization="Bearer t"), {}) == {}
