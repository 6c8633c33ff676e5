"""Security across every route and every operation.

Over raw HTTP, every route the sandbox serves refuses a request without credentials, with a
malformed ``Authorization`` header, a badly signed token, an expired token or a token for another
audience (and, for maps, a wrong key or a bad SAS token) with its family's 401 body. Through the
public functions, those refusals become ``AuthenticationError`` with a hint and without the
secret. A token that expires in the middle of a paged read is refreshed from the credential. A
TLS sandbox is never trusted without its certificate.
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
import requests

import toolkit
from tests.reliability.cases import CASES
from toolkit.sandbox.openapi import build_document
from toolkit.sandbox.server import Sandbox

#: The routes, as a sandbox registers them.
ROUTES = [(r.name, r.method, r.pattern, r.family) for r in Sandbox().router.routes
          if r.name != "openapi"]
ROUTE_IDS = [f"{m} {p}" for _, m, p, _ in ROUTES]

ARM_ERROR_CODES = {"AuthenticationFailed", "AuthenticationFailedInvalidHeader",
                   "InvalidAuthenticationToken", "ExpiredAuthenticationToken",
                   "InvalidAuthenticationTokenAudience"}


@pytest.fixture(scope="module")
def urls(sandbox: Sandbox) -> dict[tuple[str, str], str]:
    """A plausible URL for every route: path values from the world (those the sandbox's own
    description gives as examples), the pinned api-version."""
    doc = build_document(sandbox)
    out = {}
    for route in sandbox.router.routes:
        if route.name == "openapi":
            continue
        op = doc["paths"][route.pattern][route.method.lower()]
        path = route.pattern
        for param in op["parameters"]:
            if param["in"] == "path":
                value = param.get("example") or "00000000-0000-0000-0000-000000000001"
                path = path.replace("{" + param["name"] + "}", value)
        query = f"?api-version={route.api_versions[0]}" if route.api_versions else ""
        out[(route.method, route.pattern)] = sandbox.url + path + query
    return out


def _forged(token: str) -> str:
    head, body, sig = token.split(".")
    return f"{head}.{body}.{sig[::-1]}"


def _credentials(sandbox: Sandbox, family: str) -> list[tuple[str, dict[str, str], str]]:
    """(case, headers, the secret that must not come back) for each refused credential."""
    good = sandbox.token(family)
    expired = sandbox.token(family, expires_in=-60)
    other = sandbox.token("arm" if family != "arm" else "graph")
    stranger = sandbox.token(None, audience="https://storage.elsewhere.example")
    prefix = sandbox.header_prefix
    cases = [
        ("none", {}, ""),
        ("basic scheme", {"Authorization": "Basic YW5hbHlzdDpodW50ZXIy"}, "YW5hbHlzdDpodW50ZXIy"),
        ("bearer without token", {"Authorization": "Bearer "}, ""),
        ("not a jwt", {"Authorization": "Bearer not-a-token-at-all"}, "not-a-token-at-all"),
        ("bad signature", {"Authorization": f"Bearer {_forged(good)}"}, _forged(good)),
        ("expired", {"Authorization": f"Bearer {expired}"}, expired),
        ("other family's audience", {"Authorization": f"Bearer {other}"}, other),
        ("unknown audience", {"Authorization": f"Bearer {stranger}"}, stranger),
    ]
    if family == "maps":
        client = {f"{prefix}client-id": sandbox.authority.maps_client_id}
        sas = sandbox.authority.sas_token()
        expired_sas = sandbox.authority.sas_token(expires_in=-60)
        cases = [(name, {**h, **client}, secret) for name, h, secret in cases] + [
            ("wrong key", {"subscription-key": "k" * 43}, "k" * 43),
            ("wrong key in query", {"_query": "subscription-key=" + "q" * 43}, "q" * 43),
            ("forged sas", {"Authorization": f"jwt-sas {_forged(sas)}"}, _forged(sas)),
            ("expired sas", {"Authorization": f"jwt-sas {expired_sas}"}, expired_sas),
            ("sas not a jwt", {"Authorization": "jwt-sas abc.def"}, "abc.def"),
            ("bearer without client id", {"Authorization": f"Bearer {good}"}, good),
        ]
    return cases


#: What a refusal says about why (in its message, or for maps its WWW-Authenticate header).
WHY = {"expired": "expir", "expired sas": "expired", "other family's audience": "audience",
       "unknown audience": "audience", "bad signature": "signature", "forged sas": "signature",
       "bearer without client id": "client-id", "wrong key": "key", "wrong key in query": "key",
       "basic scheme": "invalid", "bearer without token": "invalid"}


def _check_refusal(r: requests.Response, family: str, secret: str, prefix: str,
                   case: str) -> None:
    assert r.status_code in (401, 403), (r.status_code, r.text[:200])
    body = r.json()
    said = (body.get("message") or body.get("error", {}).get("message", "")) + \
        r.headers.get("WWW-Authenticate", "")
    assert WHY.get(case, "") in said.lower()
    if family == "fabric":
        assert set(body) >= {"requestId", "errorCode", "message"}
        assert body["errorCode"] and body["message"] and body["isRetriable"] is False
    else:
        assert set(body) == {"error"}
        err = body["error"]
        assert isinstance(err["code"], str) and err["code"]
        assert isinstance(err["message"], str) and err["message"]
        if family == "graph":
            assert err["innerError"]["request-id"] == r.headers[f"{prefix}request-id"]
            assert err["innerError"]["date"]
        elif family == "maps":
            assert r.headers[f"{prefix}error-code"] == err["code"]
            assert 'realm="' in r.headers["WWW-Authenticate"]
            assert re.search(r'error="\w+"', r.headers["WWW-Authenticate"])
        else:
            assert err["code"] in ARM_ERROR_CODES
            assert r.headers["WWW-Authenticate"].startswith("Bearer")
    if family != "maps":
        assert r.headers["WWW-Authenticate"].startswith("Bearer")
    if secret:
        assert secret not in r.text and secret not in str(dict(r.headers))


@pytest.mark.parametrize("name, method, pattern, family", ROUTES, ids=ROUTE_IDS)
def test_every_route_refuses_bad_credentials(sandbox: Sandbox, urls: dict, name: str,
                                             method: str, pattern: str, family: str) -> None:
    url = urls[(method, pattern)]
    body = {} if method in ("POST", "PUT") else None
    with sandbox.recording() as log:
        for case, headers, secret in _credentials(sandbox, family):
            headers = dict(headers)
            extra = headers.pop("_query", None)
            target = url + (("&" if "?" in url else "?") + extra if extra else "")
            r = requests.request(method, target, headers=headers, json=body, timeout=10)
            try:
                _check_refusal(r, family, secret, sandbox.header_prefix, case)
            except AssertionError as err:
                raise AssertionError(f"{case}: {err}") from err
    # refused before the handler: the route is known, nothing ran
    assert {e.route for e in log} == {name} and {e.status for e in log} <= {401, 403}


@pytest.mark.parametrize("name, method, pattern, family", ROUTES, ids=ROUTE_IDS)
def test_every_route_accepts_a_valid_credential(sandbox: Sandbox, urls: dict, name: str,
                                                method: str, pattern: str, family: str) -> None:
    """The refusals above are about the credential: the same request with a valid one passes
    authentication (whatever the handler then says about the request itself)."""
    headers = {"Authorization": f"Bearer {sandbox.token(family)}"}
    if family == "maps":
        headers = {"subscription-key": sandbox.maps_key.reveal()}
    body = {} if method in ("POST", "PUT") else None
    r = requests.request(method, urls[(method, pattern)], headers=headers, json=body,
                         timeout=10)
    assert r.status_code not in (401, 403), r.text[:200]




# ---------------------------------------------------------------------- public functions
MAPS_CASES = {"autocomplete", "route_directions", "snap_to_roads", "traffic_incidents",
              "air_quality", "air_quality_forecast", "severe_weather_alerts"}


def _bad_connections(sandbox: Sandbox, family: str) -> list[tuple[str, dict[str, Any], str]]:
    """(case, connect() arguments, the secret that must never be shown)."""
    expired = sandbox.token(None, expires_in=-60)
    stranger = sandbox.token(None, audience="https://storage.elsewhere.example")
    forged = _forged(sandbox.token(None))
    client = {"maps_client_id": sandbox.authority.maps_client_id}
    out = [("expired token", {"token": expired, **client}, expired),
           ("other audience", {"token": stranger, **client}, stranger),
           ("bad signature", {"token": forged, **client}, forged)]
    if family == "maps":
        sas = _forged(sandbox.authority.sas_token())
        out += [("wrong maps key", {"maps_key": "w" * 43}, "w" * 43),
                ("bad sas token", {"maps_sas_token": sas}, sas)]
    return out


#: Batches that give each item's refusal as a row (status Failed, the service's code), as their
#: docstrings say, instead of raising.
REFUSALS_AS_ROWS = {"create_eventstreams"}


@pytest.mark.parametrize("case_name", sorted(CASES))
def test_functions_raise_authentication_error_without_the_secret(
        sandbox: Sandbox, catalog: Any, waits: list, case_name: str) -> None:
    case = CASES[case_name]
    family = "maps" if case_name in MAPS_CASES else "other"
    good = toolkit.connect(sandbox=sandbox, progress=False)
    good.sleep = waits
    if case_name == "problem_classifications":
        # its call lists the services first; make that list come from a good connection
        services = toolkit.support_services(connection=good)
        service = services["name"].iloc[0]

        def call(conn: Any, catalog: Any) -> Any:
            return toolkit.problem_classifications(service, connection=conn)
    else:
        call = case.call
    for label, kwargs, secret in _bad_connections(sandbox, family):
        conn = toolkit.connect(base_url=sandbox.url, progress=False, max_retries=1, **kwargs)
        conn.sleep = waits
        if case_name in REFUSALS_AS_ROWS:
            df = call(conn, catalog)
            assert (df["status"] == "Failed").all() and df["error"].str.contains(
                r"HTTP 40[13] ").all(), label
            assert not df["error"].str.contains(secret, regex=False).any(), label
            assert conn.stats.retries == 0, label
            conn.close()
            continue
        with pytest.raises(toolkit.AuthenticationError) as info:
            call(conn, catalog)
        err = info.value
        assert err.status in (401, 403), label
        assert err.hint and ("credential" in err.hint.lower() or "key" in err.hint.lower())
        for text in (str(err), repr(err), str(err.args), repr(conn)):
            assert secret not in text, label
        # one refusal is enough: an authentication failure is never retried
        assert conn.stats.retries == 0, label
        conn.close()
    good.close()


# ---------------------------------------------------------------------- refresh mid-read
class _Clock:
    """``time.time`` that the test moves forward (real time plus an offset)."""

    def __init__(self) -> None:
        self.real = time.time
        self.offset = 0.0

    def __call__(self) -> float:
        return self.real() + self.offset


@pytest.mark.parametrize("route_name, read", [
    ("problem_classifications", "problem_classifications"),
    ("sql_operations", "sql_operations"),
])
def test_token_expiring_between_pages_is_refreshed(monkeypatch: pytest.MonkeyPatch,
                                                   route_name: str, read: str) -> None:
    """After each page the clock moves two hours: the token used for a page has really expired
    (the sandbox would refuse it) before the next one is asked for; the toolkit takes a new one
    from the credential and the read completes with every record, once."""
    with Sandbox(seed=7) as sb:
        clock = _Clock()
        monkeypatch.setattr(time, "time", clock)
        route = next(r for r in sb.router.routes if r.name == route_name)
        handler = route.handler
        seen: list[str] = []

        def then_two_hours_pass(request: Any) -> Any:
            seen.append(request.headers.get("authorization"))
            reply = handler(request)
            clock.offset += 7200
            return reply

        monkeypatch.setattr(route, "handler", then_two_hours_pass)
        credential = sb.credential(expires_in=3600)
        conn = toolkit.connect(base_url=sb.url, credential=credential, progress=False)
        if read == "problem_classifications":
            support = sb.world.section("support")
            service = max(support.services, key=lambda s: len(s.classifications))
            df = toolkit.problem_classifications(service.name, connection=conn)
            expected = [c["name"] for c in service.classifications]
        else:
            df = toolkit.sql_operations(connection=conn)
            expected = [op["name"] for op in sb.world.section("sql").operations]
        assert len(seen) >= 2, "the read must span several pages"
        assert list(df["name"]) == expected
        assert [e.status for e in sb.log if e.route == route_name] == [200] * len(seen)
        # every page was sent with a token of its own, and the first one is now refused
        assert len(set(seen)) == len(seen) and credential.issued >= len(seen)
        r = requests.get(sb.url + "/providers/Vendor.Sql/operations?api-version=2025-01-01",
                         headers={"Authorization": seen[0]}, timeout=10)
        assert r.status_code == 401 and r.json()["error"]["code"] == "ExpiredAuthenticationToken"
        conn.close()


def test_static_token_expiring_mid_read_fails_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same read with a static token (nothing to refresh it from) stops at the page whose
    token has expired, with an AuthenticationError that does not show the token."""
    with Sandbox(seed=7) as sb:
        clock = _Clock()
        monkeypatch.setattr(time, "time", clock)
        route = next(r for r in sb.router.routes if r.name == "problem_classifications")
        handler = route.handler

        def then_two_hours_pass(request: Any) -> Any:
            reply = handler(request)
            clock.offset += 7200
            return reply

        monkeypatch.setattr(route, "handler", then_two_hours_pass)
        token = sb.token("arm")
        conn = toolkit.connect(base_url=sb.url, token=token, progress=False)
        service = max(sb.world.section("support").services,
                      key=lambda s: len(s.classifications))
        with pytest.raises(toolkit.AuthenticationError) as info:
            toolkit.problem_classifications(service.name, connection=conn)
        assert info.value.code == "ExpiredAuthenticationToken"
        assert token not in str(info.value) and token not in repr(info.value)
        assert [e.status for e in sb.log if e.route == "problem_classifications"] == [200, 401]
        conn.close()


# ---------------------------------------------------------------------- TLS
@pytest.fixture(scope="module")
def tls_sandbox() -> Any:
    with Sandbox(tls=True, lro_polls=1) as sb:
        yield sb


def test_tls_sandbox_without_its_certificate_fails_clearly(tls_sandbox: Sandbox,
                                                            waits: list) -> None:
    token = tls_sandbox.token(None)
    conn = toolkit.connect(base_url=tls_sandbox.url, token=token, max_retries=1,
                           progress=False)
    conn.sleep = waits
    assert conn.verify is True  # nothing turned verification off on the way
    with tls_sandbox.recording() as log, pytest.raises(toolkit.TransportError) as info:
        toolkit.sql_operations(connection=conn)
    text = str(info.value)
    assert "certificate could not be verified" in text and "verify=" in text
    assert token not in text and token not in repr(info.value)
    assert log == []  # the handshake failed: no request reached the service


def test_tls_sandbox_with_another_ca_fails(tls_sandbox: Sandbox, waits: list) -> None:
    with Sandbox(tls=True) as other:
        conn = toolkit.connect(base_url=tls_sandbox.url, token=tls_sandbox.token(None),
                               verify=other.ca_file, max_retries=1, progress=False)
        conn.sleep = waits
        with pytest.raises(toolkit.TransportError):
            toolkit.sql_operations(connection=conn)


def test_tls_sandbox_with_its_certificate_works_for_every_family(tls_sandbox: Sandbox,
                                                                 catalog: Any) -> None:
    conn = toolkit.connect(base_url=tls_sandbox.url, token=tls_sandbox.token(None),
                           maps_key=tls_sandbox.maps_key.reveal(), verify=tls_sandbox.ca_file,
                           progress=False)
    assert len(toolkit.sql_operations(connection=conn)) > 0
    assert len(toolkit.traffic_incidents((1.40, 42.42, 1.79, 42.66), connection=conn)) >= 0
    policy = catalog.query("kind == 'authentication_strength_policy'").iloc[0]
    assert len(toolkit.authentication_strength_usage(policy["name"], connection=conn)) > 0


@pytest.mark.parametrize("how", ["argument", "environment"])
def test_verification_is_never_turned_off_for_remote_hosts(monkeypatch: pytest.MonkeyPatch,
                                                           how: str) -> None:
    kwargs: dict[str, Any] = {"token": "t" * 40, "progress": False}
    if how == "argument":
        kwargs["verify"] = False
    else:
        monkeypatch.setenv("TOOLKIT_VERIFY", "false")
    with pytest.raises(toolkit.ValidationError) as info:
        toolkit.connect("https://management.example.com", **kwargs)
    assert info.value.parameter == "verify"
    # loopback only: a remote family among loopback ones is refused too
    with pytest.raises(toolkit.ValidationError):
        toolkit.connect("https://127.0.0.1:1", maps_url="https://atlas.example.com",
                        **kwargs)
