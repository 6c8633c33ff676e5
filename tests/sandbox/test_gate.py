"""Admission of a request: the api-version a route serves and the credentials of each family,
refused in the family's own 400 and 401 bodies."""

from __future__ import annotations

import pytest
import requests

from tests.sandbox.conftest import ops_path as _ops
from toolkit.sandbox.auth import TokenAuthority
from toolkit.sandbox.gate import authenticate, check_api_version
from toolkit.sandbox.http import Request, SandboxHTTPError, _Headers

AUDIENCES = {"arm": ("https://management.vendor.test/",), "maps": ("https://maps.vendor.test/",),
             "graph": ("https://graph.vendor.test/",), "fabric": ("https://fabric.vendor.test/",)}


def _request(family: str, target: str = "/x", **headers: str) -> Request:
    request = Request("GET", target, _Headers(headers), b"", "http://127.0.0.1", None)
    request.family = family
    return request


@pytest.mark.parametrize(("family", "missing", "invalid"), [
    ("arm", "MissingApiVersionParameter", "InvalidApiVersionParameter"),
    ("graph", "MissingApiVersion", "InvalidApiVersion"),
])
def test_the_api_version_is_checked_in_the_familys_words(family, missing, invalid) -> None:
    check_api_version(_request(family), None)
    check_api_version(_request(family, "/x?api-version=2025-01-01"), ("2025-01-01",))
    with pytest.raises(SandboxHTTPError) as err:
        check_api_version(_request(family), ("2025-01-01",))
    assert (err.value.status, err.value.code) == (400, missing)
    with pytest.raises(SandboxHTTPError) as err:
        check_api_version(_request(family, "/x?API-Version=2020-01-01"), ("2025-01-01",))
    assert (err.value.status, err.value.code) == (400, invalid)
    assert "2025-01-01" in err.value.message


def test_a_token_for_the_family_gives_its_claims() -> None:
    authority = TokenAuthority("a secret")
    token = authority.mint(AUDIENCES["arm"][0], expires_in=60)
    claims = authenticate(_request("arm", authorization=f"Bearer {token}"), authority,
                          AUDIENCES.__getitem__, "x-vendor-")
    assert claims["aud"].rstrip("/") == AUDIENCES["arm"][0].rstrip("/")
    with pytest.raises(SandboxHTTPError) as err:
        authenticate(_request("graph", authorization=f"Bearer {token}"), authority,
                     AUDIENCES.__getitem__, "x-vendor-")
    assert err.value.code == "InvalidAuthenticationTokenAudience"


def test_maps_answers_every_refusal_in_its_own_shape() -> None:
    authority = TokenAuthority("a secret")
    token = authority.mint(AUDIENCES["maps"][0], expires_in=60)
    with pytest.raises(SandboxHTTPError) as err:  # a bearer token without the client id
        authenticate(_request("maps", authorization=f"Bearer {token}"), authority,
                     AUDIENCES.__getitem__, "x-vendor-")
    assert (err.value.status, err.value.code) == (401, "Unauthorized")
    assert 'realm="https://maps.vendor.test/"' in err.value.headers["WWW-Authenticate"]
    key = authority.maps_key.reveal()
    claims = authenticate(_request("maps", **{"subscription-key": key}), authority,
                          AUDIENCES.__getitem__, "x-vendor-")
    assert claims["scheme"] == "SharedKey"


def test_missing_api_version_is_400_in_arm_body(arm, sandbox) -> None:
    r = arm("GET", _ops(sandbox))
    assert r.status_code == 400
    assert r.json()["error"]["code"] == "MissingApiVersionParameter"
    assert r.headers["x-vendor-request-id"]


def test_unsupported_api_version_names_the_supported_ones(arm, sandbox) -> None:
    r = arm("GET", _ops(sandbox) + "?api-version=1999-01-01")
    assert r.status_code == 400
    err = r.json()["error"]
    assert err["code"] == "InvalidApiVersionParameter" and "2025-01-01" in err["message"]


@pytest.mark.parametrize("auth, code", [
    (None, "AuthenticationFailed"),
    ("Basic abc", "AuthenticationFailedInvalidHeader"),
    ("Bearer not-a-token", "InvalidAuthenticationToken"),
])
def test_arm_refuses_missing_and_malformed_tokens(sandbox, auth, code) -> None:
    headers = {"Authorization": auth} if auth else {}
    r = requests.get(sandbox.url + _ops(sandbox) + "?api-version=2025-01-01", headers=headers,
                     timeout=10)
    assert r.status_code == 401 and r.json()["error"]["code"] == code
    assert "Bearer" in r.headers["WWW-Authenticate"]


def test_forged_signature_is_refused(sandbox) -> None:
    head, body, _ = sandbox.token("arm").split(".")
    r = requests.get(sandbox.url + _ops(sandbox) + "?api-version=2025-01-01",
                     headers={"Authorization": f"Bearer {head}.{body}.AAAA"}, timeout=10)
    assert r.status_code == 401 and "signature" in r.json()["error"]["message"]


def test_maps_key_errors_use_the_maps_body(sandbox) -> None:
    r = requests.get(sandbox.url + "/geocode:autocomplete?api-version=2026-01-01&query=an",
                     headers={"subscription-key": "wrong-key"}, timeout=10)
    assert r.status_code == 401
    assert r.json()["error"]["code"] == "Unauthorized"
    assert r.headers["x-vendor-error-code"] == "Unauthorized"
    assert 'error="InvalidKey"' in r.headers["WWW-Authenticate"]
