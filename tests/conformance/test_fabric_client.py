"""The vendor's eventstream client (microsoft-fabric-api) against the sandbox in the public
cloud's words: creation at once and through the operation flow, a failed operation, an error."""

from __future__ import annotations

import base64
import json
from types import SimpleNamespace
from typing import Any

import pytest

from tests.conformance.conftest import FAIL_OPERATION, NOT_INSTALLED

pytest.importorskip("microsoft_fabric_api", reason=NOT_INSTALLED)

from azure.core.exceptions import HttpResponseError
from microsoft_fabric_api.extensions.eventstream import FabricEventstreamClient
from microsoft_fabric_api.generated.eventstream import models

from toolkit.sandbox.fabric.eventstream import limits


@pytest.fixture(scope="module")
def fabric(cloud_sandbox, credential) -> Any:
    # the client appends "v1/" to its base URL
    return FabricEventstreamClient(credential, base_url=cloud_sandbox.url + "/",
                                   connection_verify=cloud_sandbox.ca_file)


@pytest.fixture(autouse=True)
def _prompt_result(monkeypatch) -> None:
    # create_eventstream waits for its poller (in a thread of its own, its waits recorded: see
    # conftest.py) by looking for the result every 5 s; here it looks every 20 ms: the same
    # flow, without the idle seconds
    import time

    from microsoft_fabric_api.extensions.eventstream.operations import _operations

    monkeypatch.setattr(_operations, "time",
                        SimpleNamespace(sleep=lambda seconds: time.sleep(min(seconds, 0.02))))


@pytest.fixture(autouse=True)
def _quota(cloud_sandbox) -> None:
    # each test starts with the caller's creation quota full (its throttling is tested with
    # the toolkit's own tests)
    limits(cloud_sandbox).refill()


@pytest.fixture(scope="module")
def workspace(world_catalog) -> str:
    rows = world_catalog[(world_catalog["kind"] == "fabric_workspace")
                         & world_catalog["detail"].str.startswith("IoT Telemetry")]
    return rows.iloc[0]["name"]


def _definition() -> Any:
    payload = base64.b64encode(json.dumps(
        {"sources": [], "destinations": [], "streams": []}).encode()).decode()
    return models.EventstreamDefinition(parts=[models.EventstreamDefinitionPart(
        path="eventstream.json", payload=payload, payload_type="InlineBase64")])


def test_create_without_definition_answers_the_item(fabric, workspace) -> None:
    item = fabric.items.create_eventstream(
        workspace, models.CreateEventstreamRequest(display_name="conformance-plain"))
    assert isinstance(item, models.Eventstream)
    assert (item.display_name, item.type, item.workspace_id) == (
        "conformance-plain", "Eventstream", workspace)


def test_create_with_definition_follows_the_operation_to_the_item(fabric, workspace,
                                                                  cloud_sandbox,
                                                                  poller_waits) -> None:
    with cloud_sandbox.recording() as log:
        item = fabric.items.create_eventstream(
            workspace, models.CreateEventstreamRequest(display_name="conformance-flow",
                                                       definition=_definition()),
            polling_interval=0)
    assert log[0].status == 202
    # between its polls the client waited what the sandbox's Retry-After said (1 s)
    assert poller_waits and set(poller_waits) == {1}
    assert log[-1].route == "fabric_operation_result"
    assert item.display_name == "conformance-flow" and item.type == "Eventstream"
    assert item.id and item.workspace_id == workspace


def test_a_failed_operation_ends_failed(fabric, workspace) -> None:
    # this client does not raise for a failed operation: it hands back the operation state
    state = fabric.items.create_eventstream(
        workspace, models.CreateEventstreamRequest(display_name="conformance-failed",
                                                   definition=_definition()),
        polling_interval=0, headers=FAIL_OPERATION)
    assert state.id is None
    assert state.additional_properties["status"] == "Failed"
    assert state.additional_properties["error"]["errorCode"] == "OperationFailed"


def test_an_unknown_workspace_is_not_found(fabric) -> None:
    with pytest.raises(HttpResponseError) as info:
        fabric.items.create_eventstream("00000000-0000-0000-0000-00000000dead",
                                        models.CreateEventstreamRequest(display_name="x"))
    assert info.value.status_code == 404
    assert info.value.response.json()["errorCode"] == "WorkspaceNotFound"


def test_the_workspaces_pager_reads_every_page(cloud_sandbox, credential) -> None:
    from microsoft_fabric_api.extensions.core import FabricCoreClient

    core = FabricCoreClient(credential, base_url=cloud_sandbox.url + "/",
                            connection_verify=cloud_sandbox.ca_file)
    spaces = list(cloud_sandbox.world.section("fabric").workspaces.values())
    with cloud_sandbox.recording() as log:
        found = list(core.workspaces.list_workspaces())
        admin = list(core.workspaces.list_workspaces(roles="Admin,Viewer"))
    assert [w.id for w in found] == [w.id for w in spaces]
    assert len([r for r in log if r.route == "fabric_workspaces"]) > 2
    assert {w.type for w in found} <= {"Personal", "Workspace", "AdminWorkspace"}
    assert [w.id for w in admin] == [w.id for w in spaces if w.role in ("Admin", "Viewer")]
