"""The vendors' resource-management clients (azure-mgmt-*) against the sandbox in the public
cloud's words: requests accepted, answers deserialized with known enum values, pollers ending
Succeeded and Failed, errors with their codes, every page read."""

from __future__ import annotations

import base64
import datetime as dt

import pytest

from tests.conformance.conftest import FAIL_OPERATION, NOT_INSTALLED, enum_values, first

pytest.importorskip("azure.mgmt.containerservice", reason=NOT_INSTALLED)
pytest.importorskip("azure.mgmt.network", reason=NOT_INSTALLED)
pytest.importorskip("azure.mgmt.policyinsights", reason=NOT_INSTALLED)
pytest.importorskip("azure.mgmt.redhatopenshift", reason=NOT_INSTALLED)
pytest.importorskip("azure.mgmt.sql", reason=NOT_INSTALLED)
pytest.importorskip("azure.mgmt.support", reason=NOT_INSTALLED)

import yaml
from azure.core.exceptions import HttpResponseError
from azure.mgmt.containerservice import ContainerServiceClient
from azure.mgmt.network import NetworkManagementClient, models as network_models
from azure.mgmt.policyinsights import PolicyInsightsClient
from azure.mgmt.policyinsights.models import QueryOptions
from azure.mgmt.redhatopenshift import AzureRedHatOpenShiftClient
from azure.mgmt.sql import SqlManagementClient, models as sql_models
from azure.mgmt.support import MicrosoftSupport

import toolkit

NETWORK_API = "2025-05-01"  # the client's newest version is later than the spec's
SUPPORT_API = "2026-06-01"
AKS_API = "2026-04-01"


# ------------------------------------------------------------------------------ network

def _gateway(world_catalog):
    return first(world_catalog, "application_gateway")


def test_backend_health_poller_succeeds_with_known_health(credential, client_kwargs,
                                                          world_catalog) -> None:
    gw = _gateway(world_catalog)
    client = NetworkManagementClient(credential, gw.subscription_id, **client_kwargs)
    poller = client.application_gateways.begin_backend_health(
        gw.resource_group, gw["name"], api_version=NETWORK_API, polling_interval=0)
    health = poller.result()
    assert poller.status() == "Succeeded"
    assert isinstance(health, network_models.ApplicationGatewayBackendHealth)
    servers = [s for pool in health.backend_address_pools
               for c in pool.backend_http_settings_collection for s in c.servers]
    assert servers
    known = enum_values(network_models.ApplicationGatewayBackendHealthServerHealth)
    assert {s.health for s in servers} <= known
    assert all(pool.backend_address_pool.id.split("/providers/")[1].startswith(
        "Microsoft.Network/applicationGateways/") for pool in health.backend_address_pools)


def test_backend_health_poller_fails_for_a_failed_operation(credential, client_kwargs,
                                                            world_catalog) -> None:
    gw = _gateway(world_catalog)
    client = NetworkManagementClient(credential, gw.subscription_id, **client_kwargs)
    poller = client.application_gateways.begin_backend_health(
        gw.resource_group, gw["name"], api_version=NETWORK_API, polling_interval=0,
        headers=FAIL_OPERATION)
    with pytest.raises(HttpResponseError) as info:
        poller.result()
    assert poller.status() == "Failed"
    assert "OperationFailed" in str(info.value)


def test_backend_health_of_an_unknown_gateway_is_not_found(credential, client_kwargs,
                                                          world_catalog) -> None:
    gw = _gateway(world_catalog)
    client = NetworkManagementClient(credential, gw.subscription_id, **client_kwargs)
    with pytest.raises(HttpResponseError) as info:
        client.application_gateways.begin_backend_health(
            gw.resource_group, "agw-nowhere", api_version=NETWORK_API, polling_interval=0
        ).result()
    assert info.value.status_code == 404 and info.value.error.code == "ResourceNotFound"


# ------------------------------------------------------------------------------ sql

def _sql(credential, client_kwargs, sub):
    return SqlManagementClient(credential, sub, **client_kwargs)


def test_check_name_availability_answers_with_known_reasons(credential, client_kwargs,
                                                            world_catalog) -> None:
    sub = first(world_catalog, "subscription").subscription_id
    client = _sql(credential, client_kwargs, sub)
    taken = client.servers.check_name_availability(sql_models.CheckNameAvailabilityRequest(
        name="sql-orders-prod", type="Microsoft.Sql/servers"))
    free = client.servers.check_name_availability(sql_models.CheckNameAvailabilityRequest(
        name="conformance-free-name", type="Microsoft.Sql/servers"))
    assert (taken.available, free.available) == (False, True)
    assert taken.reason in enum_values(sql_models.CheckNameAvailabilityReason)
    with pytest.raises(HttpResponseError) as info:
        client.servers.check_name_availability(sql_models.CheckNameAvailabilityRequest(
            name="x", type="Microsoft.Sql/managedInstances"))
    assert info.value.status_code == 400 and info.value.error.code == "UnknownNameType"


def test_sql_operations_pager_reads_every_page(cloud_sandbox, credential, client_kwargs,
                                               world_catalog) -> None:
    sub = first(world_catalog, "subscription").subscription_id
    with cloud_sandbox.recording() as log:
        ops = list(_sql(credential, client_kwargs, sub).operations.list())
    want = cloud_sandbox.world.section("sql").operations
    assert [o.name for o in ops] == [o["name"] for o in want]
    assert len([r for r in log if r.route == "sql_operations"]) > 1
    assert all(o.name.startswith("Microsoft.Sql/") for o in ops)


def _server(world_catalog, name):
    return first(world_catalog, "sql_server", name)


def test_protector_poller_ends_with_the_protector(credential, client_kwargs,
                                                  world_catalog) -> None:
    srv = _server(world_catalog, "sql-dwh-staging-neu")
    client = _sql(credential, client_kwargs, srv.subscription_id)
    poller = client.encryption_protectors.begin_create_or_update(
        srv.resource_group, srv["name"], "current", sql_models.EncryptionProtector(
            server_key_type="AzureKeyVault", server_key_name="kv-retail-prod-neu_tde-analytics"),
        polling_interval=0)
    protector = poller.result()
    assert poller.status() == "Succeeded"
    assert protector is not None and protector.server_key_type == "AzureKeyVault"
    assert protector.server_key_type in enum_values(sql_models.ServerKeyType)
    assert protector.kind == "azurekeyvault"
    assert protector.uri.startswith("https://kv-retail-prod-neu.vault.azure.net/keys/")
    again = client.encryption_protectors.get(srv.resource_group, srv["name"], "current")
    assert again.server_key_name == "kv-retail-prod-neu_tde-analytics"


def test_protector_poller_fails_for_a_failed_operation(credential, client_kwargs,
                                                       world_catalog) -> None:
    srv = _server(world_catalog, "sql-retail-dev")
    client = _sql(credential, client_kwargs, srv.subscription_id)
    before = client.encryption_protectors.get(srv.resource_group, srv["name"], "current")
    poller = client.encryption_protectors.begin_create_or_update(
        srv.resource_group, srv["name"], "current", sql_models.EncryptionProtector(
            server_key_type="AzureKeyVault", server_key_name="kv-retail-dev_tde-dev"),
        polling_interval=0, headers=FAIL_OPERATION)
    with pytest.raises(HttpResponseError):
        poller.result()
    assert poller.status() == "Failed"
    after = client.encryption_protectors.get(srv.resource_group, srv["name"], "current")
    assert after.server_key_name == before.server_key_name  # nothing changed


def test_a_disabled_key_is_refused_with_its_code(credential, client_kwargs,
                                                 world_catalog) -> None:
    srv = _server(world_catalog, "sql-identity-audit")
    client = _sql(credential, client_kwargs, srv.subscription_id)
    with pytest.raises(HttpResponseError) as info:
        client.encryption_protectors.begin_create_or_update(
            srv.resource_group, srv["name"], "current", sql_models.EncryptionProtector(
                server_key_type="AzureKeyVault",
                server_key_name="kv-retail-prod-weu_tde-legacy"), polling_interval=0).result()
    assert info.value.status_code == 400 and info.value.error.code == "AkvKeyDisabled"


# ------------------------------------------------------------------------------ policy insights

def test_policy_states_pager_reads_every_page(cloud_sandbox, credential, client_kwargs,
                                              world_catalog) -> None:
    sub = first(world_catalog, "subscription", "retail-prod").subscription_id
    end = dt.datetime(2026, 11, 20, 9, tzinfo=dt.UTC)
    start = end - dt.timedelta(days=2)
    client = PolicyInsightsClient(credential, sub, **client_kwargs)
    with cloud_sandbox.recording() as log:
        records = list(client.policy_states.list_query_results_for_resource_group(
            "default", sub, "rg-web-weu",
            query_options=QueryOptions(from_property=start, to=end)))
    pages = [r for r in log if "queryResults" in r.path]
    assert len(pages) > 1 and all(r.method == "POST" for r in pages)  # next pages are POSTs
    conn = toolkit.connect(sandbox=cloud_sandbox, progress=False)
    frame = toolkit.policy_states(sub, "rg-web-weu", resource="default", start=start, end=end,
                                  connection=conn)
    conn.close()
    assert len(records) == len(frame) > 1000
    assert {r.compliance_state for r in records} <= {"Compliant", "NonCompliant", "Exempt",
                                                     "Unknown", "Conflict", "Error"}
    assert all(r.policy_assignment_id.lower().startswith(f"/subscriptions/{sub}".lower())
               or "/providers/Microsoft.Management/" in r.policy_assignment_id
               for r in records)


def test_policy_states_of_an_unknown_group_is_an_error(credential, client_kwargs,
                                                       world_catalog) -> None:
    sub = first(world_catalog, "subscription", "retail-prod").subscription_id
    client = PolicyInsightsClient(credential, sub, **client_kwargs)
    with pytest.raises(HttpResponseError) as info:
        list(client.policy_states.list_query_results_for_resource_group(
            "latest", sub, "rg-nowhere"))
    assert info.value.status_code == 404 and info.value.error.code == "ResourceGroupNotFound"


# ------------------------------------------------------------------------------ support

def test_support_services_and_classifications_read_every_page(cloud_sandbox, credential,
                                                               client_kwargs,
                                                               world_catalog) -> None:
    sub = first(world_catalog, "subscription").subscription_id
    client = MicrosoftSupport(credential, sub, api_version=SUPPORT_API, **client_kwargs)
    services = list(client.services.list())
    support = cloud_sandbox.world.section("support")
    assert [s.name for s in services] == [s.name for s in support.services]
    assert any("MICROSOFT.REDHATOPENSHIFT/OPENSHIFTCLUSTERS" in (s.resource_types or [])
               for s in services)
    with_many = max(support.services, key=lambda s: len(s.classifications))
    # The client (the newest published, for api-version 2024-04-01) models no nextLink on
    # classification lists, so its pager stops after the first page; the remaining pages are
    # read through the client's own pipeline and models (a paging hook of our own).
    first_page = list(client.problem_classifications.list(with_many.name))
    with cloud_sandbox.recording() as log:
        classes = _every_classification(client, with_many.name)
    assert [c.name for c in classes[:len(first_page)]] == [c.name for c in first_page]
    assert len(classes) == len(with_many.classifications) > len(first_page)
    assert len([r for r in log if "problemClassifications" in r.path]) > 1
    consents = [c for pc in classes for c in (pc.secondary_consent_enabled or [])]
    assert all("Microsoft" in c.description for c in consents)
    with pytest.raises(HttpResponseError) as info:
        list(client.problem_classifications.list("no-such-service"))
    assert info.value.status_code == 404 and info.value.error.code == "ResourceNotFound"


def _every_classification(client, service):
    from azure.core.rest import HttpRequest
    from azure.mgmt.support.models import ProblemClassification

    url = (f"/providers/Microsoft.Support/services/{service}/problemClassifications"
           f"?api-version={SUPPORT_API}")
    out = []
    for _ in range(100):
        response = client._send_request(HttpRequest("GET", url))
        response.raise_for_status()
        page = response.json()
        out.extend(ProblemClassification.deserialize(v) for v in page["value"])
        url = page.get("nextLink")
        if not url:
            return out
    raise AssertionError("more than 100 pages")


# ------------------------------------------------------------------------------ clusters

def test_managed_cluster_monitoring_credentials(credential, client_kwargs,
                                                world_catalog) -> None:
    mc = first(world_catalog, "managed_cluster")
    client = ContainerServiceClient(credential, mc.subscription_id, api_version=AKS_API,
                                    **client_kwargs)
    result = client.managed_clusters.list_cluster_monitoring_user_credentials(
        mc.resource_group, mc["name"])
    assert [k.name for k in result.kubeconfigs] == ["clusterMonitoringUser"]
    value = result.kubeconfigs[0].value
    text = (value if isinstance(value, bytes) else base64.b64decode(value)).decode()
    server = yaml.safe_load(text)["clusters"][0]["cluster"]["server"]
    assert server.endswith(".azmk8s.io:443")
    with pytest.raises(HttpResponseError) as info:
        client.managed_clusters.list_cluster_monitoring_user_credentials(
            mc.resource_group, "aks-nowhere")
    assert info.value.status_code == 404 and info.value.error.code == "ResourceNotFound"


def test_openshift_cluster_credentials(credential, client_kwargs, world_catalog) -> None:
    hc = first(world_catalog, "hosted_cluster")
    client = AzureRedHatOpenShiftClient(credential, hc.subscription_id, **client_kwargs)
    creds = client.open_shift_clusters.list_credentials(hc.resource_group, hc["name"])
    assert creds.kubeadmin_username == "kubeadmin" and creds.kubeadmin_password
    with pytest.raises(HttpResponseError) as info:
        client.open_shift_clusters.list_credentials(hc.resource_group, "aro-nowhere")
    assert info.value.status_code == 404 and info.value.error.code == "ResourceNotFound"


# ------------------------------------------------------------------------------ the lists a
# report finds its names with: each pager reads every page of the subscription's list and of a
# resource group's, into the client's own models

def _in_world(world_catalog, kind: str) -> tuple[str, str, list[str], list[str]]:
    """A subscription with several of the kind, one of its groups, and their names."""
    rows = world_catalog[world_catalog["kind"] == kind]
    sub = rows["subscription_id"].value_counts().index[0]
    mine = rows[rows["subscription_id"] == sub]
    group = mine["resource_group"].iloc[0]
    return (sub, group, mine["name"].tolist(),
            mine.loc[mine["resource_group"] == group, "name"].tolist())


def _pages(log, route: str) -> int:
    return len([r for r in log if r.route == route])


def test_sql_servers_pagers(cloud_sandbox, credential, client_kwargs, world_catalog) -> None:
    sub, group, names, in_group = _in_world(world_catalog, "sql_server")
    client = _sql(credential, client_kwargs, sub)
    with cloud_sandbox.recording() as log:
        servers = list(client.servers.list())
        grouped = list(client.servers.list_by_resource_group(group))
    assert [s.name for s in servers] == names and [s.name for s in grouped] == in_group
    assert _pages(log, "sql_servers") > 1
    assert all(isinstance(s, sql_models.Server) for s in servers)
    assert {s.public_network_access for s in servers} <= \
        enum_values(sql_models.ServerNetworkAccessFlag)
    assert all(s.fully_qualified_domain_name.endswith(".database.windows.net")
               for s in servers)


def test_application_gateways_pagers(cloud_sandbox, credential, client_kwargs,
                                     world_catalog) -> None:
    sub, group, names, in_group = _in_world(world_catalog, "application_gateway")
    client = NetworkManagementClient(credential, sub, **client_kwargs)
    gateways = list(client.application_gateways.list_all(api_version=NETWORK_API))
    grouped = list(client.application_gateways.list(group, api_version=NETWORK_API))
    assert [g.name for g in gateways] == names and [g.name for g in grouped] == in_group
    assert {g.operational_state for g in gateways} <= \
        enum_values(network_models.ApplicationGatewayOperationalState)
    assert all(g.sku.capacity >= 1 and g.backend_address_pools for g in gateways)


def test_managed_clusters_pagers(cloud_sandbox, credential, client_kwargs,
                                 world_catalog) -> None:
    sub, group, names, in_group = _in_world(world_catalog, "managed_cluster")
    client = ContainerServiceClient(credential, sub, api_version=AKS_API, **client_kwargs)
    clusters = list(client.managed_clusters.list())
    grouped = list(client.managed_clusters.list_by_resource_group(group))
    assert [c.name for c in clusters] == names and [c.name for c in grouped] == in_group
    assert all(c.power_state.code == "Running" and c.agent_pool_profiles for c in clusters)
    assert all((c.private_fqdn is not None) == bool(c.api_server_access_profile
                                                    .enable_private_cluster)
               for c in clusters)


def test_openshift_clusters_pagers(cloud_sandbox, credential, client_kwargs,
                                   world_catalog) -> None:
    sub, group, names, in_group = _in_world(world_catalog, "hosted_cluster")
    client = AzureRedHatOpenShiftClient(credential, sub, **client_kwargs)
    clusters = list(client.open_shift_clusters.list())
    grouped = list(client.open_shift_clusters.list_by_resource_group(group))
    assert [c.name for c in clusters] == names and [c.name for c in grouped] == in_group
    assert all(c.cluster_profile.domain and c.console_profile.url.startswith("https://")
               for c in clusters)
    assert all(c.system_data.created_at is not None for c in clusters)
