"""The sandbox's request and reply types, its router, and the error body of each family."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from toolkit.sandbox.http import (
    Reply,
    Request,
    Router,
    SandboxHTTPError,
    _Headers,
    error_reply,
    family_of,
)
from toolkit.sandbox.server import Sandbox


@pytest.fixture(scope="module")
def idle() -> Sandbox:
    """A sandbox that is not serving: requests are built and answered in the test."""
    return Sandbox()


def _request(sb: Sandbox, target: str = "/x", *, method: str = "GET", body: bytes = b"",
             family: str = "arm", **headers: str) -> Request:
    request = Request(method, target, _Headers(headers), body, sb.url, sb)
    request.family = family
    return request


# ---------------------------------------------------------------------- headers and requests
def test_headers_are_case_insensitive() -> None:
    h = _Headers({"Content-Type": "a", "X-Vendor-Client-Request-Id": "b"})
    assert h["content-type"] == h["CONTENT-TYPE"] == "a"
    assert h.get("x-vendor-client-request-id") == "b" and h.get("missing", "d") == "d"
    assert "CONTENT-type" in h and "other" not in h and 5 not in h
    h["content-TYPE"] = "c"
    assert dict(h) == {"content-type": "c", "x-vendor-client-request-id": "b"}


def test_query_parameters_first_value_wins_and_names_match_in_any_case(idle: Sandbox) -> None:
    r = _request(idle, "/p?api-version=1&api-version=2&Top=5&top=6&empty=&esc=a%20b%2Cc")
    assert r.path == "/p"
    assert r.param("api-version") == "1"  # the first of a repeated name
    assert r.param("API-Version") == "1"  # any case
    # the name as asked wins over another spelling of it, else the first spelling given
    assert r.param("top") == "6" and r.param("Top") == "5" and r.param("TOP") == "5"
    assert r.param("empty") == "" and r.param("missing") is None
    assert r.param("missing", "d") == "d"
    assert r.param("esc") == "a b,c"
    assert ("top", "6") in r.query  # every pair is kept in order


def test_each_request_has_its_own_id(idle: Sandbox) -> None:
    a, b = _request(idle), _request(idle)
    assert a.request_id != b.request_id


def test_json_body(idle: Sandbox) -> None:
    assert _request(idle).json() is None
    assert _request(idle, body=b'{"a": [1, 2]}').json() == {"a": [1, 2]}
    with pytest.raises(SandboxHTTPError) as info:
        _request(idle, body=b'{"a": ').json()
    err = info.value
    assert err.status == 400 and err.code == "InvalidRequestContent"
    assert "could not be deserialized" in err.message


@pytest.mark.parametrize("value, language", [
    (None, None),
    ("", None),
    ("fr-FR,fr;q=0.9,en;q=0.8", "fr-FR"),
    ("ca;q=0.5", "ca"),
    (" , en", None),
])
def test_language_is_the_first_of_accept_language(idle: Sandbox, value: str | None,
                                                  language: str | None) -> None:
    headers = {} if value is None else {"Accept-Language": value}
    assert _request(idle, **headers).language == language


def test_reply_payload() -> None:
    assert Reply(204).payload() == b""
    assert Reply(200, {"a": 1}).payload() == b'{"a":1}'
    assert Reply(200, {"a": 1}, raw=b"raw wins").payload() == b"raw wins"
    assert Reply().content_type.startswith("application/json")


# ---------------------------------------------------------------------- error bodies
def test_arm_error_body(idle: Sandbox) -> None:
    request = _request(idle)
    reply = error_reply(request, 409, "Conflict", "taken", target="name",
                        details=[{"code": "X"}], additionalInfo=[])
    assert reply.status == 409
    assert reply.body == {"error": {"code": "Conflict", "message": "taken", "target": "name",
                                    "details": [{"code": "X"}], "additionalInfo": []}}
    plain = error_reply(request, 400, "Bad", "no")
    assert plain.body == {"error": {"code": "Bad", "message": "no"}} and plain.headers == {}


def test_maps_error_body_and_header(idle: Sandbox) -> None:
    reply = error_reply(_request(idle, family="maps"), 400, "BadRequest", "why",
                        headers={"Retry-After": "3"})
    assert reply.body == {"error": {"code": "BadRequest", "message": "why", "target": None,
                                    "details": []}}
    assert reply.headers == {"Retry-After": "3", "x-vendor-error-code": "BadRequest"}


def test_graph_error_body_carries_the_request_ids(idle: Sandbox) -> None:
    request = _request(idle, family="graph")
    inner = error_reply(request, 404, "NotFound", "gone").body["error"]["innerError"]
    assert inner["request-id"] == inner["client-request-id"] == request.request_id
    assert len(inner["date"]) == 19 and inner["date"][10] == "T"
    for header in ("client-request-id", "x-vendor-client-request-id"):
        asked = _request(idle, family="graph", **{header: "mine"})
        body = error_reply(asked, 404, "NotFound", "gone").body
        assert body["error"]["innerError"]["client-request-id"] == "mine"


@pytest.mark.parametrize("status, retriable", [(400, False), (404, False), (429, True),
                                               (500, True), (503, True)])
def test_fabric_error_body_is_flat(idle: Sandbox, status: int, retriable: bool) -> None:
    request = _request(idle, family="fabric")
    body = error_reply(request, status, "Code", "message",
                       moreDetails=[{"errorCode": "X"}],
                       relatedResource={"resourceId": "r"}).body
    assert body == {"requestId": request.request_id, "errorCode": "Code", "message": "message",
                    "isRetriable": retriable, "moreDetails": [{"errorCode": "X"}],
                    "relatedResource": {"resourceId": "r"}}
    forced = error_reply(request, 400, "Code", "m", isRetriable=True).body
    assert forced["isRetriable"] is True


def test_error_header_follows_the_sandboxs_prefix() -> None:
    sb = Sandbox(header_prefix="x-contoso-")
    reply = error_reply(_request(sb, family="maps"), 400, "BadRequest", "why")
    assert reply.headers == {"x-contoso-error-code": "BadRequest"}


def test_an_error_raised_by_a_handler_reaches_the_client_in_the_family_shape(
        sandbox: Sandbox) -> None:
    r = requests.get(f"{sandbox.url}/v1.0/policies/authenticationStrengthPolicies/nope/usage",
                     headers={"Authorization": f"Bearer {sandbox.token('graph')}"}, timeout=10)
    assert r.status_code == 404
    inner = r.json()["error"]["innerError"]
    assert inner["request-id"] == r.headers["x-vendor-request-id"]


# ---------------------------------------------------------------------- routing
def _handler(reply: Reply) -> Any:
    return lambda request: reply


def test_router_fills_the_namespace_and_matches_parameters() -> None:
    router = Router("Contoso")
    ok = Reply(200, {"ok": True})
    router.add("get", "/providers/{ns}.Sql/servers/{name}", _handler(ok), family="arm",
               api_versions=("1",), name="server")
    route, params, exists = router.match("GET", "/providers/Contoso.Sql/servers/a%20b")
    assert route is not None and route.name == "server" and route.method == "GET"
    assert route.pattern == "/providers/Contoso.Sql/servers/{name}"
    assert params == {"name": "a b"} and exists
    assert route.handler(None) is ok  # type: ignore[arg-type]
    # paths match in any case, as the services' do
    assert router.match("GET", "/PROVIDERS/contoso.sql/Servers/x")[1] == {"name": "x"}


def test_router_tells_a_wrong_method_from_an_unknown_path() -> None:
    router = Router("Vendor")
    router.add("POST", "/things/{id}", _handler(Reply()), family="arm", api_versions=None,
               name="make")
    assert router.match("GET", "/things/1") == (None, {}, True)
    assert router.match("GET", "/other/1") == (None, {}, False)
    # a parameter is one path segment: it never spans a slash, nor matches nothing after it
    assert router.match("POST", "/things/1/more") == (None, {}, False)
    assert router.match("POST", "/things/1")[1] == {"id": "1"}


def test_the_first_route_that_matches_wins() -> None:
    router = Router("Vendor")
    router.add("GET", "/a/{x}", _handler(Reply(200)), family="arm", api_versions=None,
               name="general")
    router.add("GET", "/a/special", _handler(Reply(201)), family="arm", api_versions=None,
               name="special")
    assert router.match("GET", "/a/special")[0].name == "general"  # type: ignore[union-attr]


def test_regex_characters_in_a_pattern_are_literal() -> None:
    router = Router("Vendor")
    router.add("POST", "/route/directions:batch", _handler(Reply()), family="maps",
               api_versions=None, name="batch")
    router.add("GET", "/usage()", _handler(Reply()), family="graph", api_versions=None,
               name="call")
    assert router.match("POST", "/route/directions:batch")[0] is not None
    assert router.match("POST", "/route/directionsXbatch")[0] is None
    assert router.match("GET", "/usage()")[0] is not None
    assert router.match("GET", "/usage")[0] is None


@pytest.mark.parametrize("path, family", [
    ("/subscriptions/x/resourceGroups/y", "arm"),
    ("/providers/Vendor.Sql/operations", "arm"),
    ("/SUBSCRIPTIONS/x", "arm"),
    ("/beta/policies/x", "graph"),
    ("/v1.0/me", "graph"),
    ("/v1/workspaces/x/eventstreams", "fabric"),
    ("/v1/operations/1", "fabric"),
    ("/operations/1/result", "fabric"),
    ("/geocode:autocomplete", "maps"),
    ("/nothing/known", "maps"),
])
def test_family_of_an_unrouted_path(path: str, family: str) -> None:
    assert family_of(path) == family


@pytest.mark.parametrize("path, family, code", [
    ("/subscriptions/00000000-0000-0000-0000-000000000000/nothing?api-version=1", "arm",
     "InvalidResourceType"),
    ("/beta/nothing", "graph", "ResourceNotFound"),
    ("/v1/workspaces/x/nothing", "fabric", "EntityNotFound"),
])
def test_an_unknown_path_answers_in_its_familys_body(sandbox: Sandbox, path: str, family: str,
                                                     code: str) -> None:
    r = requests.get(sandbox.url + path, timeout=10,
                     headers={"Authorization": f"Bearer {sandbox.token(family)}"})
    assert r.status_code == 404
    body = r.json()
    assert (body["errorCode"] if family == "fabric" else body["error"]["code"]) == code
    assert r.headers["Content-Type"] == "application/json; charset=utf-8"


def test_a_path_no_route_knows_is_named_in_the_familys_code() -> None:
    from toolkit.sandbox.http import not_found_code

    assert [not_found_code(f) for f in ("arm", "fabric", "graph", "maps")] == [
        "InvalidResourceType", "EntityNotFound", "ResourceNotFound", "NotFound"]
