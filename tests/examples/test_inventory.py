"""The official examples of the list operations a report finds its names with (SQL servers,
application gateways, managed clusters, OpenShift clusters of a subscription; the workspaces),
as published in the public cloud's words, replayed over HTTP through the public functions of a
``cloud="public"`` connection, each followed to a second page: the frames hold the examples'
values, where each resource lives read from its id, with the declared dtypes."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

import toolkit
from tests.conftest import example
from tests.replay import Answer, replay_server

SUB = "00000000-1111-2222-3333-444444444444"


@pytest.fixture
def replay(waits) -> Any:
    with replay_server() as rp:
        conn = toolkit.connect(base_url=rp.url, cloud="public", token="example-token-0123456789",
                               progress=False)
        conn.sleep = waits
        rp.conn = conn
        yield rp
        conn.close()


def _get(props: dict, dotted: str) -> Any:
    for part in dotted.split("."):
        props = props.get(part) if isinstance(props, dict) else None
    return props


# (function, example folder and file, path the list is asked at, the example's property
#  fields and the columns that hold them)
ARM = {
    "sql_servers": (toolkit.sql_servers, "23-sql-servers-list", "ServerList.json",
                    "/providers/Microsoft.Sql/servers",
                    ["fullyQualifiedDomainName", "version", "state", "administratorLogin"]),
    "application_gateways": (toolkit.application_gateways, "24-application-gateways-list",
                             "ApplicationGatewayListAll.json",
                             "/providers/Microsoft.Network/applicationGateways",
                             ["sku.name", "sku.tier"]),
    "managed_clusters": (toolkit.managed_clusters, "25-managed-clusters-list",
                         "ManagedClustersList.json",
                         "/providers/Microsoft.ContainerService/managedClusters",
                         ["kubernetesVersion", "currentKubernetesVersion", "dnsPrefix", "fqdn",
                          "nodeResourceGroup"]),
    "openshift_clusters": (toolkit.openshift_clusters, "26-openshift-clusters-list",
                           "OpenShiftClusters_List.json",
                           "/providers/Microsoft.RedHatOpenShift/openShiftClusters",
                           ["clusterProfile.version", "clusterProfile.domain",
                            "consoleProfile.url", "apiserverProfile.url"]),
}


@pytest.mark.parametrize("name", list(ARM))
def test_a_subscriptions_list_example_through_two_pages(replay, name) -> None:
    function, folder, file, provider, fields = ARM[name]
    ex = example(folder, file)
    body = ex["responses"]["200"]["body"]
    version = ex["parameters"]["api-version"]
    path = f"/subscriptions/{SUB}{provider}"
    first = {**body, "nextLink": f"{replay.url}{path}?api-version={version}&$skiptoken=2"}
    replay.add("GET", rf"{provider}\?api-version={version}&\$skiptoken=2$", Answer(200, body))
    replay.add("GET", rf"{provider}\?api-version={version}$", Answer(200, first))
    df = function(SUB, api_version=version, connection=replay.conn)
    items = body["value"] * 2
    assert [s[1] for s in replay.seen] == [f"{path}?api-version={version}",
                                          f"{path}?api-version={version}&$skiptoken=2"]
    assert df["id"].tolist() == [i["id"] for i in items]
    assert df["name"].tolist() == [i["name"] for i in items]
    assert df["type"].tolist() == [i["type"] for i in items]
    assert df["location"].astype(str).tolist() == [i["location"] for i in items]
    assert df["tags"].tolist() == [i.get("tags") for i in items]
    for field in fields:
        assert df[field].tolist() == [_get(i["properties"], field) for i in items], field
    # where it lives: the id's own segments (the providers spell resourceGroups either way)
    assert df["subscription_id"].tolist() == [i["id"].split("/")[2] for i in items]
    assert df["resource_group"].tolist() == [i["id"].split("/")[4] for i in items]
    assert df.attrs["operation"] == name and df.attrs["api_version"] == version
    assert isinstance(df["location"].dtype, pd.CategoricalDtype)


def test_the_sql_servers_columns(replay) -> None:
    body = example("23-sql-servers-list", "ServerList.json")["responses"]["200"]["body"]
    replay.add("GET", r"/servers\?", Answer(200, body))
    df = toolkit.sql_servers(SUB, connection=replay.conn)
    assert df["kind"].tolist() == [i["kind"] for i in body["value"]]
    assert df["publicNetworkAccess"].astype(str).tolist() == \
        [i["properties"]["publicNetworkAccess"] for i in body["value"]]
    assert list(df["publicNetworkAccess"].dtype.categories[:3]) == \
        ["Enabled", "Disabled", "SecuredByPerimeter"]
    assert df["minimalTlsVersion"].isna().all()  # the example has none


def test_the_gateways_columns(replay) -> None:
    body = example("24-application-gateways-list",
                   "ApplicationGatewayListAll.json")["responses"]["200"]["body"]
    replay.add("GET", r"/applicationGateways\?", Answer(200, body))
    df = toolkit.application_gateways(SUB, connection=replay.conn)
    [gw] = body["value"]
    assert df["sku.capacity"].tolist() == [gw["properties"]["sku"]["capacity"]]
    assert str(df["sku.capacity"].dtype) == "Int64"
    assert df["operationalState"].astype(str).tolist() == [gw["properties"]["operationalState"]]
    assert df["backendAddressPools"].iloc[0] == gw["properties"]["backendAddressPools"]


def test_the_managed_clusters_columns(replay) -> None:
    body = example("25-managed-clusters-list",
                   "ManagedClustersList.json")["responses"]["200"]["body"]
    replay.add("GET", r"/managedClusters\?", Answer(200, body))
    df = toolkit.managed_clusters(SUB, connection=replay.conn)
    [mc] = body["value"]
    assert df["agentPoolProfiles"].iloc[0] == mc["properties"]["agentPoolProfiles"]
    assert df["provisioningState"].astype(str).tolist() == [mc["properties"]["provisioningState"]]
    # fields the example leaves out are missing values of the declared dtype
    assert df["apiServerAccessProfile.enablePrivateCluster"].isna().all()
    assert str(df["apiServerAccessProfile.enablePrivateCluster"].dtype) == "boolean"
    assert df["privateFQDN"].isna().all()


def test_the_openshift_clusters_columns(replay) -> None:
    ex = example("26-openshift-clusters-list", "OpenShiftClusters_List.json")
    body = ex["responses"]["200"]["body"]
    replay.add("GET", r"/openShiftClusters\?", Answer(200, body))
    df = toolkit.openshift_clusters(SUB, connection=replay.conn)
    [aro] = body["value"]
    assert df["apiserverProfile.visibility"].astype(str).tolist() == \
        [aro["properties"]["apiserverProfile"]["visibility"]]
    assert df["systemData.createdAt"].tolist() == \
        [pd.Timestamp(aro["systemData"]["createdAt"])]
    assert isinstance(df["systemData.createdAt"].dtype, pd.DatetimeTZDtype)
    assert df["systemData.createdBy"].tolist() == [aro["systemData"]["createdBy"]]


def test_the_workspaces_examples_as_two_pages(replay) -> None:
    folder = "27-fabric-workspaces-list"
    first = example(folder, "ListWorkspacesWithContinuation.json")["responses"]["200"]["body"]
    last = example(folder, "ListWorkspaces.json")["responses"]["200"]["body"]
    token = first["continuationToken"]
    # the example's next page is at the service's host: here, at the replay's
    link = first["continuationUri"].replace("https://api.fabric.microsoft.com", replay.url)
    replay.add("GET", rf"/v1/workspaces\?continuationToken={token}$", Answer(200, last))
    replay.add("GET", r"/v1/workspaces$", Answer(200, {**first, "continuationUri": link}))
    df = toolkit.fabric_workspaces(connection=replay.conn)
    items = first["value"] + last["value"]
    assert len(replay.seen) == 2
    for col in ("id", "displayName", "description"):
        assert df[col].tolist() == [i[col] for i in items], col
    assert df["type"].astype(str).tolist() == [i["type"] for i in items]
    for col in ("capacityId", "capacityRegion", "domainId"):
        assert [None if pd.isna(v) else v for v in df[col]] == [i.get(col) for i in items], col
    assert df["tags"].tolist() == [i.get("tags") for i in items]
    assert isinstance(df["type"].dtype, pd.CategoricalDtype)
