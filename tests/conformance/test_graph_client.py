"""The vendor's Graph client (msgraph-beta-sdk) against the sandbox in the public cloud's words:
the usage function as the client addresses it (``usage()``), the strength policies page by page,
known enum values, an unknown policy's error."""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

import httpx
import pytest

from tests.conformance.conftest import NOT_INSTALLED, first

pytest.importorskip("kiota_authentication_azure", reason=NOT_INSTALLED)
pytest.importorskip("msgraph_beta", reason=NOT_INSTALLED)
pytest.importorskip("msgraph_core", reason=NOT_INSTALLED)

from kiota_authentication_azure.azure_identity_authentication_provider import (
    AzureIdentityAuthenticationProvider,
)
from msgraph_beta import GraphRequestAdapter, GraphServiceClient
from msgraph_beta.generated.models.o_data_errors.o_data_error import ODataError
from msgraph_core import GraphClientFactory

SCOPE = "https://graph.microsoft.com/.default"

# the client's request builders warn about their own deprecated configuration classes
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:msgraph_beta")


def _run(cloud_sandbox, credential, work) -> Any:
    async def main() -> Any:
        auth = AzureIdentityAuthenticationProvider(credential, scopes=[SCOPE],
                                                   allowed_hosts=["127.0.0.1"])
        tls = ssl.create_default_context(cafile=cloud_sandbox.ca_file)
        async with httpx.AsyncClient(verify=tls) as http:
            adapter = GraphRequestAdapter(
                auth, client=GraphClientFactory.create_with_default_middleware(client=http))
            adapter.base_url = cloud_sandbox.url + "/beta"
            return await work(GraphServiceClient(request_adapter=adapter))

    return asyncio.run(main())


def test_usage_deserializes_with_known_values(cloud_sandbox, credential, world_catalog) -> None:
    pid = first(world_catalog, "authentication_strength_policy")["name"]

    async def work(client: GraphServiceClient) -> Any:
        return await client.policies.authentication_strength_policies \
            .by_authentication_strength_policy_id(pid).usage.get()

    with cloud_sandbox.recording() as log:
        usage = _run(cloud_sandbox, credential, work)
    assert [(r.path.rsplit("/", 1)[1], r.status) for r in log] == [("usage()", 200)]
    assert usage.additional_data["@odata.context"].endswith(
        "$metadata#microsoft.graph.authenticationStrengthUsage")
    policies = (usage.mfa or []) + (usage.none_ or [])
    tenant = cloud_sandbox.world.section("identity")
    assert len(policies) == len(tenant.users_of(pid)) > 0
    for p in policies:
        assert p.state is not None  # an enum value the client knows
        assert p.grant_controls.authentication_strength.id == pid
        assert p.odata_type == "#microsoft.graph.conditionalAccessPolicy"
        assert None not in (p.grant_controls.built_in_controls or [])


def test_strength_policies_read_every_page(cloud_sandbox, credential) -> None:
    async def work(client: GraphServiceClient) -> list[Any]:
        builder = client.policies.authentication_strength_policies
        page = await builder.get()
        out = list(page.value)
        for _ in range(50):
            if not page.odata_next_link:
                return out
            page = await builder.with_url(page.odata_next_link).get()
            out.extend(page.value)
        raise AssertionError("more than 50 pages")

    policies = _run(cloud_sandbox, credential, work)
    tenant = cloud_sandbox.world.section("identity")
    assert [p.id for p in policies] == [s.id for s in tenant.strengths]
    assert all(p.policy_type is not None for p in policies)
    assert all(None not in (p.requirements_satisfied or []) for p in policies)


def test_an_unknown_policy_surfaces_its_error(cloud_sandbox, credential) -> None:
    async def work(client: GraphServiceClient) -> Any:
        return await client.policies.authentication_strength_policies \
            .by_authentication_strength_policy_id("00000000-0000-0000-0000-0000000000ff") \
            .usage.get()

    with pytest.raises(ODataError) as info:
        _run(cloud_sandbox, credential, work)
    assert info.value.response_status_code == 404
    assert info.value.error.code == "NotFound"
