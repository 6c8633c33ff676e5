"""The sandbox over raw HTTP: routing, faults, catalog, settings, the families' middleware and
the sandboxes running in the process (api-version and credentials: test_gate.py)."""

from __future__ import annotations

from collections import deque

import pytest
import requests

import toolkit
from tests.sandbox.conftest import ops_path as _ops
from toolkit.sandbox.http import SandboxHTTPError
from toolkit.sandbox.server import Sandbox, latest_running


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


def test_a_family_middleware_runs_before_its_handlers_only() -> None:
    with Sandbox(lro_polls=1) as sb:
        seen = []

        def refuse(request) -> None:
            seen.append(request.path)
            raise SandboxHTTPError(418, "Teapot", "No tea here.")

        sb.add_middleware("arm", refuse)
        token = sb.token("arm")
        r = requests.get(sb.url + _ops(sb) + "?api-version=2025-01-01",
                         headers={"Authorization": f"Bearer {token}"}, timeout=10)
        assert r.status_code == 418 and r.json()["error"]["code"] == "Teapot"
        assert seen == [_ops(sb)]
        # refused before it: no credentials, a wrong api-version; another family: not run
        assert requests.get(sb.url + _ops(sb) + "?api-version=2025-01-01",
                            timeout=10).status_code == 401
        assert requests.get(sb.url + _ops(sb) + "?api-version=1999-01-01",
                            headers={"Authorization": f"Bearer {token}"},
                            timeout=10).status_code == 400
        key = sb.maps_key.reveal()
        maps = requests.get(sb.url + "/geocode:autocomplete?api-version=2026-01-01&query=an",
                            headers={"subscription-key": key}, timeout=10)
        assert maps.status_code != 418
        assert seen == [_ops(sb)]


def test_the_resource_managers_refusals_and_throttling_are_its_middleware() -> None:
    sb = Sandbox(arm_limits=True)
    # a scope the caller may not read is refused first, then the request meets its bucket
    assert [(family, check.__name__) for family, check in sb.middleware] == [
        ("arm", "refuse_denied"), ("arm", "throttle")]


def test_latest_running_follows_start_and_stop() -> None:
    before = latest_running()
    first, second = Sandbox(), Sandbox()
    with first:
        assert latest_running() is first
        with second:
            assert latest_running() is second
        assert latest_running() is first
        second.stop()  # stopping twice changes nothing
        assert latest_running() is first
    assert latest_running() is before


def test_a_recording_holds_the_requests_of_its_block_when_the_log_is_full() -> None:
    """The log keeps the latest requests only: a block still gets its own, in order."""
    with Sandbox() as sb:
        sb.log = deque(maxlen=3)
        url = sb.url + _ops(sb)
        headers = {"Authorization": f"Bearer {sb.token('arm')}"}
        for _ in range(4):
            requests.get(url + "?api-version=2025-01-01", headers=headers, timeout=10)
        with sb.recording() as log:
            for version in ("2023-08-01", "2021-11-01"):
                requests.get(url + f"?api-version={version}", headers=headers, timeout=10)
        with sb.recording() as nothing:
            pass
    assert [entry.query for entry in log] == ["api-version=2023-08-01", "api-version=2021-11-01"]
    assert nothing == []
