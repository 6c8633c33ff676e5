"""The sandbox's fidelity in both vocabularies, as a vendor's client sees it over plain HTTP:
failed operations fail at every URL, the protector change ends with the protector whichever URL
is followed, check-name's error code, the hosted-cluster provider path."""

from __future__ import annotations

from typing import Any

import pytest
import requests

import toolkit
from toolkit._core.errors import OperationFailedError
from toolkit.sandbox.server import Sandbox


@pytest.fixture(scope="module", params=["neutral", "public"])
def sb(request) -> Any:
    with Sandbox(cloud=request.param, lro_polls=2, lro_retry_after=0) as sandbox:
        yield sandbox


def _http(sb: Sandbox, method: str, url: str, *, family: str = "arm", **kw: Any):
    headers = {"Authorization": f"Bearer {sb.token(family)}", **kw.pop("headers", {})}
    return requests.request(method, url if url.startswith("http") else sb.url + url,
                            headers=headers, timeout=10, **kw)


def _row(sb: Sandbox, kind: str, name: str | None = None) -> Any:
    cat = sb.catalog()
    rows = cat[cat["kind"] == kind]
    return (rows[rows["name"] == name] if name else rows).iloc[0]


def _gateway_path(sb: Sandbox) -> str:
    gw = _row(sb, "application_gateway")
    return (f"/subscriptions/{gw.subscription_id}/resourceGroups/{gw.resource_group}/providers/"
            f"{sb.namespace}.Network/applicationGateways/{gw['name']}/backendhealth"
            "?api-version=2025-05-01")


def test_a_failed_operation_fails_at_every_url(sb) -> None:
    first = _http(sb, "POST", _gateway_path(sb), headers={
        f"{sb.header_prefix}sandbox-fault": "lro_fail"})
    assert first.status_code == 202
    status_url = first.headers[sb.words.async_header]
    location = first.headers["Location"]
    polls = [_http(sb, "GET", location) for _ in range(3)]
    assert [p.status_code for p in polls] == [202, 400, 400]  # never 200 with a result
    assert polls[-1].json()["error"]["code"] == "OperationFailed"
    status = _http(sb, "GET", status_url).json()
    assert status["status"] == "Failed" and status["error"]["code"] == "OperationFailed"


def test_the_toolkit_reports_a_failed_operation_it_follows_by_location(sb, waits) -> None:
    conn = toolkit.connect(sandbox=sb, progress=False)
    conn.sleep = waits  # the polls' waits recorded, not slept
    gw = _row(sb, "application_gateway")
    sb.inject("lro_fail", path="backendhealth", method="POST", count=1)
    try:
        with pytest.raises(OperationFailedError) as info:
            toolkit.backend_health(gw.subscription_id, gw.resource_group, gw["name"],
                                   connection=conn)
        assert info.value.code == "OperationFailed"
        assert waits  # the operation was followed: polled, not failed at once
    finally:
        sb.clear_faults()
        conn.close()


@pytest.mark.parametrize("follow", ["async", "location"])
def test_the_protector_change_ends_with_the_protector_either_way(sb, follow) -> None:
    server = _row(sb, "sql_server", "sql-dwh-staging-neu" if follow == "async"
                  else "sql-shop-neu-01")
    path = (f"/subscriptions/{server.subscription_id}/resourceGroups/{server.resource_group}/"
            f"providers/{sb.namespace}.Sql/servers/{server['name']}/encryptionProtector/current"
            "?api-version=2025-01-01")
    body = {"properties": {"serverKeyType": sb.words.key_vault_type,
                           "serverKeyName": "kv-retail-prod-neu_tde-analytics"}}
    first = _http(sb, "PUT", path, json=body)
    assert first.status_code == 202
    assert sb.words.async_header in first.headers and "Location" in first.headers
    if follow == "async":
        statuses = [_http(sb, "GET", first.headers[sb.words.async_header]).json()["status"]
                    for _ in range(2)]
        assert statuses == ["InProgress", "Succeeded"]
        final = _http(sb, "GET", path)  # an ARM client reads the resource after a PUT
    else:
        assert _http(sb, "GET", first.headers["Location"]).status_code == 202
        final = _http(sb, "GET", first.headers["Location"])
    assert final.status_code == 200
    props = final.json()["properties"]
    assert props["serverKeyType"] == sb.words.key_vault_type
    assert props["uri"].startswith(f"https://kv-retail-prod-neu.{sb.cloud.vault_suffix}/keys/")
    assert final.json()["kind"] == sb.words.key_vault_kind


def test_a_disabled_key_answers_the_clouds_code(sb) -> None:
    server = _row(sb, "sql_server", "sql-retail-dev")
    path = (f"/subscriptions/{server.subscription_id}/resourceGroups/{server.resource_group}/"
            f"providers/{sb.namespace}.Sql/servers/{server['name']}/encryptionProtector/current"
            "?api-version=2025-01-01")
    body = {"properties": {"serverKeyType": sb.words.key_vault_type,
                           "serverKeyName": "kv-retail-prod-weu_tde-legacy"}}
    r = _http(sb, "PUT", path, json=body)
    assert r.status_code == 400 and r.json()["error"]["code"] == sb.words.key_disabled_code


def test_check_name_with_another_type_is_unknown_name_type(sb) -> None:
    sub = _row(sb, "subscription").subscription_id
    r = _http(sb, "POST", f"/subscriptions/{sub}/providers/{sb.namespace}.Sql/"
              "checkNameAvailability?api-version=2025-01-01",
              json={"name": "anything", "type": f"{sb.namespace}.Sql/managedInstances"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "UnknownNameType"




def test_hosted_cluster_credentials_at_the_clouds_provider_path(sb) -> None:
    c = _row(sb, "hosted_cluster")
    where = f"/subscriptions/{c.subscription_id}/resourceGroups/{c.resource_group}/providers/"
    own = f"{sb.words.hosted_cluster_provider}/{sb.words.hosted_cluster_type}"
    other = ("Microsoft.RedHatOpenShift/openShiftClusters" if sb.cloud.name == "neutral"
             else "Vendor.HostedClusterProvider/hostedClusters")
    r = _http(sb, "POST", f"{where}{own}/{c['name']}/listCredentials?api-version=2025-07-25")
    assert r.status_code == 200 and set(r.json()) == {"kubeadminUsername", "kubeadminPassword"}
    r = _http(sb, "POST", f"{where}{other}/{c['name']}/listCredentials?api-version=2025-07-25")
    assert r.status_code == 404


def test_managed_cluster_api_servers_under_the_clouds_suffix(sb) -> None:
    conn = toolkit.connect(sandbox=sb, progress=False)
    c = _row(sb, "managed_cluster")
    df = toolkit.cluster_monitoring_credentials(c.subscription_id, c.resource_group, c["name"],
                                                connection=conn)
    assert df["server_url"].str.contains(f".{sb.cloud.k8s_suffix}:", regex=False).all()
    conn.close()
