"""The sandbox over raw HTTP: api-version, authentication per family, routing, faults, catalog."""

from __future__ import annotations

import pytest
import requests

import toolkit
from toolkit.sandbox.server import Sandbox


@pytest.fixture
def arm(sandbox):
    token = sandbox.token("arm")

    def call(method: str, path: str, *, headers=None, **kw):
        h = {"Authorization": f"Bearer {token}", **(headers or {})}
        return requests.request(method, sandbox.url + path, headers=h, timeout=10, **kw)

    return call


def _ops(sandbox) -> str:
    return f"/providers/{sandbox.namespace}.Sql/operations"


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


def test_unknown_path_and_wrong_method(arm, sandbox) -> None:
    assert arm("GET", "/providers/Nope/things?api-version=1").status_code == 404
    r = arm("POST", _ops(sandbox) + "?api-version=2025-01-01")
    assert r.status_code == 405


def test_fault_header_for_one_request(arm, sandbox) -> None:
    path = _ops(sandbox) + "?api-version=2025-01-01"
    r = arm("GET", path, headers={"x-vendor-sandbox-fault": "503; retry-after=4"})
    assert r.status_code == 503 and r.headers["Retry-After"] == "4"
    assert arm("GET", path).status_code == 200


def test_fault_rules_skip_count_and_log(arm, sandbox) -> None:
    rule = sandbox.inject("500", path="operations", skip=1, count=1)
    path = _ops(sandbox) + "?api-version=2025-01-01"
    with sandbox.recording() as log:
        codes = [arm("GET", path).status_code for _ in range(3)]
    assert codes == [200, 500, 200] and rule.fired == 1
    assert [entry.fault for entry in log] == [None, "500", None]


def test_catalog_lists_the_world(sandbox) -> None:
    cat = toolkit.sandbox.catalog(sandbox)
    assert list(cat.columns[:4]) == ["kind", "subscription_id", "resource_group", "name"]
    kinds = set(cat["kind"])
    assert {"subscription", "resource_group", "application_gateway", "sql_server"} <= kinds
    gw = cat.query("kind == 'application_gateway'").iloc[0]
    assert gw.subscription_id in set(cat.query("kind == 'subscription'").subscription_id)


def test_same_seed_same_world_other_seed_other_ids() -> None:
    a = toolkit.sandbox.catalog(seed=7)
    b = toolkit.sandbox.catalog(seed=7)
    c = toolkit.sandbox.catalog(seed=8)
    assert a.equals(b)
    assert set(a["subscription_id"].dropna()) != set(c["subscription_id"].dropna())


def test_namespace_and_header_prefix_are_settings() -> None:
    with Sandbox(namespace="Contoso", header_prefix="x-contoso-", lro_polls=1) as sb:
        conn = toolkit.connect(sandbox=sb, namespace="Contoso", header_prefix="x-contoso-",
                               progress=False)
        df = toolkit.sql_operations(connection=conn)
        assert df["name"].str.startswith("Contoso.Sql/").all()
        r = requests.get(sb.url + "/providers/Contoso.Sql/operations", timeout=10)
        assert "x-contoso-request-id" in r.headers


def test_https_sandbox_is_verified_with_its_certificate() -> None:
    with Sandbox(tls=True, lro_polls=1) as sb:
        assert sb.url.startswith("https://") and sb.ca_file
        conn = toolkit.connect(sandbox=sb, progress=False)
        assert conn.verify == sb.ca_file
        assert len(toolkit.sql_operations(connection=conn)) > 0
        with pytest.raises(requests.exceptions.SSLError):
            requests.get(sb.url + "/providers/Vendor.Sql/operations", timeout=10)




def test_lro_polls_header_sets_the_length_of_one_operation(arm, sandbox, catalog) -> None:
    gw = catalog.query("kind == 'application_gateway'").iloc[0]
    path = (f"/subscriptions/{gw.subscription_id}/resourceGroups/{gw.resource_group}/providers/"
            f"{sandbox.namespace}.Network/applicationGateways/{gw['name']}/backendhealth"
            "?api-version=2025-05-01")
    r = arm("POST", path, headers={"x-vendor-sandbox-lro-polls": "5"})
    assert r.status_code == 202 and r.headers["Retry-After"] == str(sandbox.lro_retry_after)
    location = r.headers["Location"].removeprefix(sandbox.url)
    codes = [arm("GET", location).status_code for _ in range(5)]
    assert codes == [202, 202, 202, 202, 200]
