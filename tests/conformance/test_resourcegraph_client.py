"""The vendor's Resource Graph client (azure-mgmt-resourcegraph) against the sandbox in the
public cloud's words: queries at its default api-version and the newest, every page through its
skip token, both result formats, management-group scope, facets as its models type them, the
user quota's headers and its errors; and the toolkit reads the same rows."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conformance.conftest import NOT_INSTALLED

pytest.importorskip("azure.mgmt.resourcegraph", reason=NOT_INSTALLED)

from azure.core.exceptions import HttpResponseError
from azure.mgmt.resourcegraph import ResourceGraphClient
from azure.mgmt.resourcegraph.models import (
    FacetError,
    FacetRequest,
    FacetRequestOptions,
    FacetResult,
    QueryRequest,
    QueryRequestOptions,
)

import toolkit
from toolkit._spec.arm import RESOURCE_GRAPH_API_VERSIONS


def _live(sandbox: Any, subs: set[str] | None = None) -> set[str]:
    return {r.fields["resourceId"] for r in sandbox.world.section("policy").resources
            if not r.deleted and (subs is None or r.subscription_id in subs)}


@pytest.mark.parametrize("version", [None, RESOURCE_GRAPH_API_VERSIONS[0]])
def test_every_page_through_the_clients_skip_token(cloud_sandbox, credential, client_kwargs,
                                                   version: str | None) -> None:
    kwargs = dict(client_kwargs) if version is None else {**client_kwargs,
                                                          "api_version": version}
    client = ResourceGraphClient(credential, **kwargs)
    subs = [s.id for s in cloud_sandbox.world.subscriptions]
    request = QueryRequest(subscriptions=subs, query="Resources | project id, name, type",
                           options=QueryRequestOptions(top=600))
    ids: list[str] = []
    while True:
        page = client.resources(request)
        assert page.result_truncated == "false"
        assert page.count == len(page.data) <= 600
        ids += [row["id"] for row in page.data]
        if not page.skip_token:
            break
        request = QueryRequest(subscriptions=subs, query=request.query,
                               options=QueryRequestOptions(skip_token=page.skip_token))
    assert set(ids) == _live(cloud_sandbox) and len(ids) == page.total_records
    conn = toolkit.connect(sandbox=cloud_sandbox, progress=False)
    try:
        df = toolkit.resource_graph("Resources | project id, name, type", subs, connection=conn)
    finally:
        conn.close()
    assert sorted(df["id"]) == sorted(ids)
    assert {t.split("/")[0] for t in df["type"]} >= {"microsoft.compute"}


def test_the_table_format_types_its_columns(cloud_sandbox, credential, client_kwargs) -> None:
    client = ResourceGraphClient(credential, **client_kwargs)
    page = client.resources(QueryRequest(
        query="Resources | where type =~ 'Microsoft.Compute/virtualMachines' "
              "| summarize count() by tostring(properties.storageProfile.osDisk.osType)",
        options=QueryRequestOptions(result_format="table")))
    assert [c["type"] for c in page.data["columns"]] == ["string", "integer"]
    assert sum(row[1] for row in page.data["rows"]) == sum(
        1 for r in cloud_sandbox.world.section("policy").resources
        if r.kind == "VM" and not r.deleted)


def test_a_result_without_id_is_truncated_without_a_token(cloud_sandbox, credential,
                                                          client_kwargs) -> None:
    client = ResourceGraphClient(credential, **client_kwargs)
    page = client.resources(QueryRequest(query="Resources | project name"))
    assert page.result_truncated == "true" and page.skip_token is None
    assert page.count == 1000 < page.total_records


def test_a_management_group_scope(cloud_sandbox, credential, client_kwargs) -> None:
    world = cloud_sandbox.world
    client = ResourceGraphClient(credential, **client_kwargs)
    below = {s.id for s in world.subscriptions if "platform" in world.ancestors(s.name)}
    page = client.resources(QueryRequest(management_groups=["platform"],
                                         query="Resources | summarize count() by subscriptionId"))
    assert {row["subscriptionId"] for row in page.data} == below
    assert sum(row["count_"] for row in page.data) == len(_live(cloud_sandbox, below))


def test_facets_are_the_clients_models(cloud_sandbox, credential, client_kwargs) -> None:
    client = ResourceGraphClient(credential, **client_kwargs)
    page = client.resources(QueryRequest(
        query="Resources | where type =~ 'Microsoft.Compute/virtualMachines' "
              "| project id, location, resourceGroup | limit 5",
        facets=[FacetRequest(expression="location",
                             options=FacetRequestOptions(sort_order="desc", top=3)),
                FacetRequest(expression="nonExistingColumn")]))
    found, failed = page.facets
    assert isinstance(found, FacetResult) and found.count <= 3 and found.data
    assert isinstance(failed, FacetError) and failed.errors[0].code


def test_the_quota_headers_come_with_every_answer(cloud_sandbox, credential,
                                                  client_kwargs) -> None:
    client = ResourceGraphClient(credential, **client_kwargs)
    headers = client.resources(QueryRequest(query="Resources | project id | limit 1"),
                               cls=lambda response, body, hdrs: response.http_response.headers)
    assert int(headers["x-ms-user-quota-remaining"]) >= 0
    assert headers["x-ms-user-quota-resets-after"].count(":") == 2


def test_a_query_the_service_cannot_run(cloud_sandbox, credential, client_kwargs) -> None:
    client = ResourceGraphClient(credential, **client_kwargs)
    with pytest.raises(HttpResponseError) as info:
        client.resources(QueryRequest(query="Resources | wherex"))
    assert info.value.status_code == 400
    assert info.value.error.code == "BadRequest"
    assert [d.code for d in info.value.error.details][:1] == ["InvalidQuery"]
