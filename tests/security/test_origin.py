"""A credential goes only to its own service's origin.

Every link or operation URL a hostile service hands out (ARM ``nextLink``, ``@odata.nextLink``,
an LRO ``Location`` or async-operation header, an eventstream operation ``Location``, a redirect)
that names another origin is refused before anything is sent: the foreign host receives no request
at all, and the user gets an ``UntrustedOriginError`` naming the host. ``trusted_hosts`` opens the
rule for the hosts the user names, and ``verify`` holds per request.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from typing import Any

import pytest

import toolkit
from tests.security.conftest import MAPS_KEY, TOKEN, connect_to
from tests.security.hostile import Answer, Forwarder, Hostile, Seen, json_answer
from toolkit._core.config import Credentials, FamilyConfig, Origin, Settings
from toolkit._core.errors import UntrustedOriginError, ValidationError
from toolkit._core.messages import Request
from toolkit._core.pipeline import Pipeline
from toolkit._core.policies import Stats

SUB = "00000000-0000-0000-0000-000000000001"
WORKSPACE = "11111111-2222-3333-4444-555555555555"


def _ops_page(next_link: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {"value": [{"name": "Vendor.Sql/servers/read",
                                       "display": {"provider": "p"}}]}
    if next_link:
        body["nextLink"] = next_link
    return body


def _assert_refused(err: pytest.ExceptionInfo[UntrustedOriginError], foreign: Hostile) -> None:
    assert err.value.host == "127.0.0.2"
    assert "127.0.0.2" in str(err.value)
    assert TOKEN not in str(err.value) and MAPS_KEY not in str(err.value)
    assert foreign.count() == 0


def test_arm_next_link_to_another_host_is_refused(foreign: Hostile) -> None:
    def script(seen: Seen, server: Hostile) -> Answer:
        return json_answer(_ops_page(f"{foreign.url}/providers/Vendor.Sql/operations?page=2"))

    with Hostile(script) as service:
        conn = connect_to(service)
        with pytest.raises(UntrustedOriginError) as err:
            toolkit.sql_operations(connection=conn)
    _assert_refused(err, foreign)
    assert err.value.next_link is not None  # where the remaining pages start


def test_next_link_to_another_port_of_the_same_host_is_refused() -> None:
    with Hostile(lambda s, h: Answer(200, {"value": []})) as other:
        def script(seen: Seen, server: Hostile) -> Answer:
            return json_answer(_ops_page(f"{other.url}/next"))

        with Hostile(script) as service:
            conn = connect_to(service)
            with pytest.raises(UntrustedOriginError, match=str(other.port)):
                toolkit.sql_operations(connection=conn)
        assert other.count() == 0


def test_odata_next_link_to_another_host_is_refused(foreign: Hostile) -> None:
    def script(seen: Seen, server: Hostile) -> Answer:
        return json_answer({"value": [], "@odata.nextLink": f"{foreign.url}/beta/next"})

    with Hostile(script) as service:
        conn = connect_to(service)
        with pytest.raises(UntrustedOriginError) as err:
            toolkit.authentication_strength_policies(connection=conn)
    _assert_refused(err, foreign)


@pytest.mark.parametrize("header", ["Location", "Vendor-AsyncOperation"])
def test_lro_operation_url_to_another_host_is_refused(foreign: Hostile, header: str) -> None:
    def script(seen: Seen, server: Hostile) -> Answer:
        headers = {"Location": f"{server.url}/op", "Retry-After": "1"}
        headers[header] = f"{foreign.url}/operations/1"
        return Answer(202, b"", headers)

    with Hostile(script) as service:
        conn = connect_to(service)
        with pytest.raises(UntrustedOriginError) as err:
            toolkit.backend_health(SUB, "rg", "agw", connection=conn)
        assert service.count() == 1
    _assert_refused(err, foreign)


def test_eventstream_operation_location_on_another_host_is_followed_at_home(
        foreign: Hostile) -> None:
    # the real service names a cluster host (wabi-...-redirect.analysis.windows.net) in
    # Location: its path is asked at the Fabric endpoint, as Microsoft's clients do
    item = {"id": "00000000-0000-0000-0000-0000000000e5", "type": "Eventstream",
            "displayName": "stream", "workspaceId": WORKSPACE}

    def script(seen: Seen, server: Hostile) -> Answer:
        if seen.method == "POST":
            return Answer(202, b"", {"Location": f"{foreign.url}/v1/operations/1",
                                     "x-vendor-operation-id": "1", "Retry-After": "1"})
        if seen.path == "/v1/operations/1":
            return Answer(200, {"status": "Succeeded"},
                          {"Location": f"{foreign.url}/v1/operations/1/result"})
        return json_answer(item) if seen.path == "/v1/operations/1/result" else Answer(404, {})

    with Hostile(script) as service:
        conn = connect_to(service)
        df = toolkit.create_eventstream(WORKSPACE, "stream", definition={"eventstream.json": {}},
                                        connection=conn)
        paths = [(s.method, s.path) for s in service.seen]
    assert df["id"].tolist() == [item["id"]]
    assert paths[1:] == [("GET", "/v1/operations/1"), ("GET", "/v1/operations/1/result")]
    assert all(s.headers.get("Authorization") == f"Bearer {TOKEN}" for s in service.seen)
    assert foreign.count() == 0


def test_eventstream_operation_location_without_a_clear_origin_is_refused_with_the_handle(
        foreign: Hostile) -> None:
    # a Location that cannot be read as an origin is never asked; the accepted creation is
    # handed back to resume, not sent again
    def script(seen: Seen, server: Hostile) -> Answer:
        return Answer(202, b"", {"Location": f"http://user@{foreign.host}:{foreign.port}/op",
                                 "x-vendor-operation-id": "1", "Retry-After": "1"})

    with Hostile(script) as service:
        conn = connect_to(service)
        with pytest.raises(UntrustedOriginError) as err:
            toolkit.create_eventstream(WORKSPACE, "stream", definition={"eventstream.json": {}},
                                       connection=conn)
        assert [s.method for s in service.seen] == ["POST"]
    assert err.value.accepted is not None and err.value.continuation_token
    assert "do not create it again" in str(err.value).lower()
    assert foreign.count() == 0


def test_redirects_are_not_followed(foreign: Hostile) -> None:
    def script(seen: Seen, server: Hostile) -> Answer:
        return Answer(302, b"", {"Location": f"{foreign.url}/providers/Vendor.Sql/operations"})

    with Hostile(script) as service:
        conn = connect_to(service)
        with pytest.raises(toolkit.ApiError) as err:
            toolkit.sql_operations(connection=conn)
    assert err.value.status == 302
    assert foreign.count() == 0


def _maps_pipeline(base: str, **settings: Any) -> Pipeline:
    return Pipeline(FamilyConfig(
        family="maps", base_url=base, settings=Settings(**settings).validated(),
        credentials=Credentials(maps_key=toolkit.Secret(MAPS_KEY, "maps key")), stats=Stats(),
        sleep=lambda s: None))


def test_maps_key_goes_to_its_own_origin_only(foreign: Hostile) -> None:
    with Hostile(lambda s, h: json_answer({"ok": True})) as service:
        pipe = _maps_pipeline(service.url)
        pipe.send(Request("GET", "/search", operation="probe"))
        with pytest.raises(UntrustedOriginError):
            pipe.send(Request("GET", f"{foreign.url}/search", operation="probe"))
        pipe.close()
    assert service.seen[0].headers.get("subscription-key") == MAPS_KEY
    assert foreign.count() == 0


def test_plain_http_after_https_is_refused() -> None:
    # the family's endpoint is https on this port; the same host and port over http is another
    # origin, refused without a connection being made
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    accepted: list[Any] = []
    listener.settimeout(0.5)

    def accept() -> None:
        with contextlib.suppress(OSError):
            accepted.append(listener.accept())

    thread = threading.Thread(target=accept)
    thread.start()
    pipe = _maps_pipeline(f"https://127.0.0.1:{port}")
    try:
        with pytest.raises(UntrustedOriginError, match="over http"):
            pipe.send(Request("GET", f"http://127.0.0.1:{port}/search", operation="probe"))
    finally:
        thread.join()
        listener.close()
        pipe.close()
    assert accepted == []


def test_trusted_hosts_open_the_rule_for_the_named_host() -> None:
    with Hostile(lambda s, h: json_answer(_ops_page(None)), host="127.0.0.2") as private:
        def script(seen: Seen, server: Hostile) -> Answer:
            return json_answer(_ops_page(f"{private.url}/providers/Vendor.Sql/operations?p=2"))

        with Hostile(script) as service:
            conn = connect_to(service, trusted_hosts=[f"127.0.0.2:{private.port}"])
            df = toolkit.sql_operations(connection=conn)
        assert len(df) == 2
        assert private.count() == 1
        assert private.seen[0].headers["Authorization"] == f"Bearer {TOKEN}"


def test_trusted_hosts_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLKIT_TRUSTED_HOSTS", "a.privatelink.vendor.com, b.vendor.com:8443")
    conn = toolkit.connect(base_url="https://management.vendor.com", token=TOKEN)
    config = conn.config_for("arm")
    assert config.trusts(Origin("https", "a.privatelink.vendor.com", 443))
    assert config.trusts(Origin("https", "b.vendor.com", 8443))
    assert not config.trusts(Origin("https", "b.vendor.com", 443))
    assert not config.trusts(Origin("http", "a.privatelink.vendor.com", 80))
    assert not config.trusts(Origin("https", "evil.example", 443))


@pytest.mark.parametrize("entry", ["https://a.example", "a.example/path", "user@a.example",
                                   "a.example:port", ""])
def test_bad_trusted_host_entries_are_refused(entry: str) -> None:
    with pytest.raises(ValidationError, match="trusted_hosts"):
        toolkit.connect(base_url="https://management.vendor.com", token=TOKEN,
                        trusted_hosts=[entry])


@pytest.mark.parametrize("verify", [0, "", None, 1, 1.0, "  ", [], "/no/such/ca.pem"])
def test_verify_accepts_only_true_a_ca_path_or_false_on_loopback(verify: Any) -> None:
    with pytest.raises(ValidationError, match="verify"):
        toolkit.connect(base_url="https://management.vendor.com", token=TOKEN, verify=verify)


def test_verify_false_is_refused_for_a_remote_address() -> None:
    with pytest.raises(ValidationError, match="loopback"):
        toolkit.connect(base_url="https://management.vendor.com", token=TOKEN, verify=False)


def test_verify_false_holds_per_request() -> None:
    # a loopback endpoint with verification off, and a trusted remote host: a link to that host
    # is refused before any connection, because verification is off
    with Hostile(lambda s, h: json_answer({})) as service:
        conn = connect_to(service, verify=False, trusted_hosts=["management.vendor.com"])
        pipe = conn.pipeline("arm")
        with pytest.raises(UntrustedOriginError, match="TLS verification is turned off"):
            pipe.send(Request("GET", "https://management.vendor.com/providers", operation="probe"))
        assert service.count() == 0


def test_the_sandbox_builds_links_from_the_host_it_was_reached_at(sandbox: Any) -> None:
    # reached as "localhost" rather than 127.0.0.1, the sandbox's next links and operation URLs
    # name localhost, so the origin rule lets them through
    conn = toolkit.connect(base_url=f"http://localhost:{sandbox.port}",
                           credential=sandbox.credential(), maps_key=sandbox.maps_key,
                           progress=False)
    conn.sleep = lambda s: None
    with sandbox.recording() as log:
        ops = toolkit.sql_operations(connection=conn)
    assert len(log) > 1  # several pages
    assert len(ops) > 0


def test_the_sandbox_works_behind_a_port_forward(sandbox: Any) -> None:
    # paged reads and a long-running operation through a forwarded port: every link the sandbox
    # hands out names the forward, so the origin rule lets the whole read through
    with Forwarder(("127.0.0.1", sandbox.port)) as forward:
        conn = toolkit.connect(base_url=forward.url, credential=sandbox.credential(),
                               maps_key=sandbox.maps_key, progress=False)
        conn.sleep = lambda s: None
        with sandbox.recording() as log:
            ops = toolkit.sql_operations(connection=conn)
            gw = sandbox.catalog().query("kind == 'application_gateway'").iloc[0]
            health = toolkit.backend_health(gw.subscription_id, gw.resource_group, gw["name"],
                                            connection=conn)
        conn.close()
    assert len(ops) > 0 and len(health) > 0
    assert sum("operationResults" in r.path for r in log) >= 1


@pytest.mark.parametrize("trick", [
    "http://127.0.0.2:{foreign}\\@127.0.0.1:{service}/next",  # read apart by two URL parsers
    "http://127.0.0.1:{service}@127.0.0.2:{foreign}/next",  # user information
    "http://127.0.0.1:{service} @127.0.0.2:{foreign}/next",
])
def test_ambiguous_links_are_refused(foreign: Hostile, trick: str) -> None:
    def script(seen: Seen, server: Hostile) -> Answer:
        return json_answer(_ops_page(trick.format(foreign=foreign.port, service=server.port)))

    with Hostile(script) as service:
        conn = connect_to(service)
        with pytest.raises(UntrustedOriginError):
            toolkit.sql_operations(connection=conn)
        assert service.count() == 1
    assert foreign.count() == 0


REMOTE_HTTP = "http://atlas.vendor.example"


@pytest.mark.parametrize("how", ["maps_url", "base_url", "environment", "Connection"])
def test_plain_http_to_a_remote_host_is_refused_before_any_request(
        monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    with Hostile(lambda s, h: json_answer({})) as service:
        with pytest.raises(ValidationError) as err:
            if how == "maps_url":
                toolkit.connect(base_url=service.url, maps_url=REMOTE_HTTP, token=TOKEN,
                                maps_key=MAPS_KEY)
            elif how == "base_url":
                toolkit.connect(base_url=REMOTE_HTTP, token=TOKEN, maps_key=MAPS_KEY)
            elif how == "environment":
                monkeypatch.setenv("TOOLKIT_MAPS_URL", REMOTE_HTTP)
                toolkit.connect(base_url=service.url, token=TOKEN, maps_key=MAPS_KEY)
            else:
                toolkit.Connection(arm_url=service.url, maps_url=REMOTE_HTTP,
                                   graph_url=service.url, fabric_url=service.url,
                                   maps_key=MAPS_KEY)
        assert service.count() == 0
    assert err.value.parameter == ("base_url" if how == "base_url" else "maps_url")
    assert "loopback" in str(err.value) and "https" in str(err.value)
    assert MAPS_KEY not in str(err.value) and TOKEN not in str(err.value)


def test_the_own_origin_rule_refuses_plain_http_to_a_remote_host() -> None:
    config = FamilyConfig(family="maps", base_url=REMOTE_HTTP, scope=None, settings=Settings(),
                          credentials=Credentials(maps_key=toolkit.Secret(MAPS_KEY, "maps key")),
                          stats=Stats())
    assert not config.trusts(Origin("http", "atlas.vendor.example", 80))
    with pytest.raises(ValidationError, match="maps_url"):
        Pipeline(config)
    # a remote https endpoint may not hand out a link to itself over http
    secure = FamilyConfig(family="maps", base_url="https://atlas.vendor.example",
                          settings=Settings(trusted_hosts=("atlas.vendor.example",)))
    assert not secure.trusts(Origin("http", "atlas.vendor.example", 443))
    assert not secure.trusts(Origin("http", "atlas.vendor.example", 80))


def test_a_connection_built_directly_holds_the_verify_rule() -> None:
    remote = "https://management.vendor.example"
    with pytest.raises(ValidationError) as err:
        toolkit.Connection(arm_url=remote, maps_url=remote, graph_url=remote, fabric_url=remote,
                           token=toolkit.Secret(TOKEN, "token"), verify=False)
    assert err.value.parameter == "verify" and "loopback" in str(err.value)
    config = FamilyConfig(family="arm", base_url=remote, verify=False)
    with pytest.raises(ValidationError, match="verify"):
        Pipeline(config)
