"""The services' official examples, in the public cloud's words, replayed over HTTP through the
public functions of a connection with ``cloud="public"``: the replay answers only at the real
paths (``Microsoft.*``, ``openShiftClusters``, ``usage``), names ``Azure-AsyncOperation`` and
``x-ms-request-id``, and the frames carry the real words."""

from __future__ import annotations

from typing import Any

import pytest

import toolkit
from tests.conftest import example
from tests.replay import Answer, in_words, replay_server
from toolkit._spec.clouds import PUBLIC

SUB = "00000000-1111-2222-3333-444444444444"
RG = "rg1"
IDS = {"x-ms-request-id": "11111111-2222-3333-4444-555555555555"}


def _ex(folder: str, name: str) -> dict[str, Any]:
    return in_words(example(folder, name), PUBLIC)


@pytest.fixture
def replay(waits) -> Any:
    with replay_server() as rp:
        conn = toolkit.connect(base_url=rp.url, cloud="public", token="example-token-0123456789",
                               maps_key="k" * 24, progress=False)
        conn.sleep = waits
        rp.conn = conn
        yield rp
        conn.close()
        # every resource-management path the toolkit built names the real provider namespace
        for _, target in rp.seen:
            if "/providers/" in target:
                assert "/providers/Microsoft." in target, target


def test_backend_health_at_the_real_provider(replay) -> None:
    ex = _ex("01-backend-health", "ApplicationGatewayBackendHealthGet.json")
    location = ex["responses"]["202"]["headers"]["location"]
    poll = location.split(PUBLIC.host("arm"), 1)[1]
    replay.add("POST", r"/providers/Microsoft\.Network/applicationGateways/gw/backendhealth\?",
               Answer(202, None, {"Location": "{url}" + poll, "Retry-After": "1"}))
    replay.add("GET", r"/providers/Microsoft\.Network/locations/",
               Answer(200, ex["responses"]["200"]["body"], IDS))
    df = toolkit.backend_health(SUB, RG, "gw", connection=replay.conn)
    pools = ex["responses"]["200"]["body"]["backendAddressPools"]
    assert df["backendAddressPool.id"].tolist() == [
        p["backendAddressPool"]["id"] for p in pools
        for c in p["backendHttpSettingsCollection"] for _ in c["servers"]]
    assert df["backendAddressPool.id"].str.contains("/Microsoft.Network/").all()
    assert df.attrs["request_ids"] == [IDS["x-ms-request-id"]]


def test_protector_change_follows_the_async_header_then_reads_the_resource(replay) -> None:
    ex = _ex("02-sql-encryption-protector", "EncryptionProtectorCreateOrUpdateKeyVault.json")
    body = ex["responses"]["200"]["body"]
    key = ex["parameters"]["parameters"]["properties"]
    status = "/subscriptions/s/providers/Microsoft.Sql/locations/westus/operations/op1"
    path = r"/providers/Microsoft\.Sql/servers/sql1/encryptionProtector/current\?"
    replay.add("PUT", path, Answer(202, None, {
        "Azure-AsyncOperation": "{url}" + status + "?api-version=2025-01-01",
        "Location": "{url}/subscriptions/s/providers/Microsoft.Sql/locations/westus/"
                    "encryptionProtectorOperationResults/op1?api-version=2025-01-01",
        "Retry-After": "1"}))
    replay.add("GET", status, Answer(200, {"status": "InProgress"}, {"Retry-After": "1"}),
               Answer(200, {"status": "Succeeded"}))
    replay.add("GET", path, Answer(200, body, IDS))
    df = toolkit.update_encryption_protector(
        SUB, RG, "sql1", server_key_type=key["serverKeyType"],
        server_key_name=key["serverKeyName"], connection=replay.conn)
    assert [m for m, _ in replay.seen] == ["PUT", "GET", "GET", "GET"]
    assert "/operations/op1" in replay.seen[1][1]  # the async header, not Location
    row = df.iloc[0]
    assert (row["serverKeyType"], row["kind"], row["type"]) == (
        "AzureKeyVault", "azurekeyvault", "Microsoft.Sql/servers/encryptionProtector")


def test_name_availability_and_operations(replay) -> None:
    ex = _ex("03-sql-check-name-availability", "CheckNameAvailabilityServerAlreadyExists.json")
    replay.add("POST", r"/providers/Microsoft\.Sql/checkNameAvailability\?",
               Answer(200, ex["responses"]["200"]["body"], IDS))
    df = toolkit.check_server_names(SUB, ex["parameters"]["parameters"]["name"],
                                    connection=replay.conn)
    assert df["reason"].iloc[0] == ex["responses"]["200"]["body"]["reason"]
    ops = _ex("04-sql-operations-list", "ListOperations.json")["responses"]["200"]["body"]
    replay.add("GET", r"^/providers/Microsoft\.Sql/operations\?", Answer(200, ops, IDS))
    df = toolkit.sql_operations(connection=replay.conn)
    assert df["name"].tolist() == [o["name"] for o in ops["value"]]
    assert df["name"].str.startswith("Microsoft.Sql/").all()


def test_cluster_credentials_at_the_real_providers(replay) -> None:
    mc = _ex("07-cluster-monitoring-credentials",
             "ManagedClustersListClusterMonitoringUserCredentials.json")
    replay.add("POST", r"/providers/Microsoft\.ContainerService/managedClusters/aks1/"
               r"listClusterMonitoringUserCredential\?",
               Answer(200, mc["responses"]["200"]["body"]))
    df = toolkit.cluster_monitoring_credentials(SUB, RG, "aks1", connection=replay.conn)
    assert df["name"].tolist() == ["credentialName1"]
    hc = _ex("08-hosted-cluster-credentials", "OpenShiftClusters_ListCredentials.json")
    replay.add("POST", r"/providers/Microsoft\.RedHatOpenShift/openShiftClusters/aro1/"
               r"listCredentials\?api-version=2025-07-25$",
               Answer(200, hc["responses"]["200"]["body"]))
    df = toolkit.hosted_cluster_credentials(SUB, RG, "aro1", connection=replay.conn)
    assert df["kubeadminUsername"].iloc[0] == "kubeadmin"
    assert df["kubeadminPassword"].iloc[0].reveal() == "password"


def test_strength_usage_example(replay) -> None:
    ex = _ex("16-graph-authentication-strength-usage", "authenticationstrengthpolicy-usage.json")
    pid = "00000000-0000-0000-0000-000000000003"
    replay.add("GET", rf"^/beta/policies/authenticationStrengthPolicies/{pid}/usage$",
               Answer(200, ex["responses"]["200"]["body"], {"request-id": "r1"}))
    df = toolkit.authentication_strength_usage(pid, connection=replay.conn)
    body = ex["responses"]["200"]["body"]
    assert sorted(df["id"]) == sorted(p["id"] for k in ("mfa", "none") for p in body[k])


def test_create_eventstream_example(replay) -> None:
    ex = _ex("17-fabric-create-eventstream", "CreateEventstream.json")
    ws = ex["parameters"]["workspaceId"]
    replay.add("POST", rf"^/v1/workspaces/{ws}/eventstreams$",
               Answer(201, ex["responses"]["201"]["body"], {"x-ms-request-id": "r2"}))
    req = ex["parameters"]["createEventstreamRequest"]
    df = toolkit.create_eventstream(ws, req["displayName"], description=req["description"],
                                    connection=replay.conn)
    assert df["id"].iloc[0] == ex["responses"]["201"]["body"]["id"]
    assert df.attrs["request_ids"] == ["r2"]
