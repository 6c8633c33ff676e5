"""The sandbox's eventstream service: the workspaces, folders and labels built from the seed, the
creation at once (201) or through the operation flow (202, states, result), every refusal in the
flat error body, names kept unique while a creation runs, the per-caller throttle."""

from __future__ import annotations

import base64
import json
import time
import uuid
from typing import Any

import pytest
import requests

import toolkit
from toolkit._spec.fabric import DESCRIPTION_MAX, DISPLAY_NAME_MAX
from toolkit.sandbox.fabric import eventstream
from toolkit.sandbox.http import SandboxHTTPError
from toolkit.sandbox.server import Sandbox
from toolkit.sandbox.world import World

FLAT = {"requestId", "errorCode", "message", "isRetriable"}


@pytest.fixture(autouse=True)
def _fresh_quota(sandbox: Sandbox) -> None:
    eventstream.limits(sandbox).refill()


@pytest.fixture(scope="module")
def spaces(sandbox: Sandbox) -> dict[str, eventstream.Workspace]:
    """Workspaces by display name."""
    return {w.name: w for w in sandbox.world.section("fabric").workspaces.values()}


@pytest.fixture(scope="module")
def sales(spaces: dict) -> eventstream.Workspace:
    return spaces["Sales Analytics"]


def _name() -> str:
    return f"stream-{uuid.uuid4().hex[:12]}"


def _part(path: str, value: Any) -> dict[str, str]:
    raw = value if isinstance(value, bytes) else json.dumps(value).encode()
    return {"path": path, "payload": base64.b64encode(raw).decode(),
            "payloadType": "InlineBase64"}


def _post(sb: Sandbox, workspace: str, body: Any, *, roles: Any = None,
          headers: dict[str, str] | None = None, raw: bytes | None = None) -> requests.Response:
    token = sb.token("fabric") if roles is None else sb.token("fabric", roles=roles)
    return requests.post(f"{sb.url}/v1/workspaces/{workspace}/eventstreams",
                         headers={"Authorization": f"Bearer {token}", **(headers or {})},
                         timeout=10, **({"data": raw} if raw is not None else {"json": body}))


def _get(sb: Sandbox, url: str) -> requests.Response:
    return requests.get(url if url.startswith("http") else sb.url + url, timeout=10,
                        headers={"Authorization": f"Bearer {sb.token('fabric')}"})


def _refused(r: requests.Response, status: int, code: str) -> dict[str, Any]:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) >= FLAT and body["errorCode"] == code
    assert body["requestId"] == r.headers["x-vendor-request-id"]
    assert body["isRetriable"] is (status == 429)
    return body


# ---------------------------------------------------------------------- the world
def test_same_seed_same_workspaces_other_seed_other_ids() -> None:
    a, b = eventstream.build_world(World(7)), eventstream.build_world(World(7))
    other = eventstream.build_world(World(8))
    assert a == b
    assert [w.name for w in a.workspaces.values()] == [w.name for w in other.workspaces.values()]
    assert set(a.workspaces).isdisjoint(other.workspaces) and set(a.labels) != set(other.labels)


def test_workspace_contents_refer_to_their_workspace_and_labels() -> None:
    fabric = eventstream.build_world(World(7))
    for key, ws in fabric.workspaces.items():
        assert key == ws.id.lower()
        for item in ws.items:
            assert item.workspace_id == ws.id and item.label_id == ws.default_label
        assert ws.default_label is None or ws.default_label in fabric.labels
    assert fabric.label_named("General") in fabric.labels
    assert fabric.label_named("No such label") is None


def test_catalog_rows_list_workspaces_folders_and_labels() -> None:
    fabric = eventstream.build_world(World(7))
    rows = eventstream.catalog_rows(fabric)
    kinds = [r["kind"] for r in rows]
    assert kinds.count("fabric_workspace") == len(fabric.workspaces)
    assert kinds.count("fabric_folder") == sum(len(w.folders) for w in fabric.workspaces.values())
    assert kinds.count("sensitivity_label") == len(fabric.labels)
    unsupported = {w.id for w in fabric.workspaces.values() if not w.supported}
    for row in rows:
        if row["kind"] == "fabric_workspace":
            assert ("not supported" in row["detail"]) is (row["name"] in unsupported)


# ---------------------------------------------------------------------- pure checks
@pytest.mark.parametrize("name, problem", [
    ("orders", None),
    ("a" * DISPLAY_NAME_MAX, None),
    ("a" * (DISPLAY_NAME_MAX + 1), "must be 1 to"),
    ("   ", "must be 1 to"),
    (" lead", "starts or ends"),
    ("trail.", "starts or ends"),
    ("a/b", "'/'"),
    ("tab\there", "'\\t'"),
    (7, "must be a string"),
])
def test_display_name_rules(name: Any, problem: str | None) -> None:
    said = eventstream._display_name_problem(name)
    assert (said is None) if problem is None else (problem in said)


def test_definition_parts_are_decoded_and_checked() -> None:
    parts = eventstream._decode_parts({"parts": [_part("eventstream.json", {"sources": []}),
                                                 _part(".platform", b"\x00\x01")]})
    assert parts == {"eventstream.json": b'{"sources": []}', ".platform": b"\x00\x01"}
    assert eventstream._definition_problem(parts) is None
    assert eventstream._definition_problem({".platform": b"x"}) is None  # nothing to check
    assert "JSON object" in eventstream._definition_problem({"eventstream.json": b"[1]"})
    assert "not valid JSON" in eventstream._definition_problem({"eventstream.json": b"{"})


@pytest.mark.parametrize("definition, code, said", [
    ({}, "InvalidInput", "non-empty 'parts'"),
    ({"parts": []}, "InvalidInput", "non-empty 'parts'"),
    ({"parts": [{"path": "a"}]}, "InvalidInput", "'path' and 'payload'"),
    ({"parts": [{"path": "a", "payload": "eA==", "payloadType": "Url"}]}, "InvalidInput",
     "Unsupported payloadType"),
    ({"parts": [{"path": "a", "payload": "not base64!"}]}, "CorruptedPayload", "base64"),
    ({"parts": [{"path": "a", "payload": "eA=="}, {"path": "a", "payload": "eA=="}]},
     "CorruptedPayload", "twice"),
])
def test_bad_definitions_are_refused(definition: Any, code: str, said: str) -> None:
    with pytest.raises(SandboxHTTPError) as info:
        eventstream._decode_parts(definition)
    assert info.value.status == 400 and info.value.code == code
    details = info.value.extra.get("moreDetails")
    assert said in (details[0]["message"] if details else info.value.message)


# ---------------------------------------------------------------------- creation
def test_creation_without_definition_is_immediate(sandbox: Sandbox, sales: Any) -> None:
    name = _name()
    folder = next(iter(sales.folders))
    r = _post(sandbox, sales.id, {"displayName": name, "description": "d", "folderId": folder})
    assert r.status_code == 201
    item = r.json()
    assert item["displayName"] == name and item["type"] == "Eventstream"
    assert item["workspaceId"] == sales.id and item["folderId"] == folder
    assert item["sensitivityLabel"] == {"id": sales.default_label}  # the workspace's default
    uuid.UUID(item["id"])
    assert any(i.id == item["id"] for i in sales.items)
    # the name is taken now, whatever its case
    _refused(_post(sandbox, sales.id, {"displayName": name.upper()}), 409,
             "ItemDisplayNameAlreadyInUse")


def test_creation_with_a_definition_goes_through_every_state(sandbox: Sandbox,
                                                            sales: Any) -> None:
    name = _name()
    body = {"displayName": name, "definition": {"parts": [_part("eventstream.json", {})]}}
    first = _post(sandbox, sales.id, body)
    assert first.status_code == 202 and first.content == b""
    op = first.headers["x-vendor-operation-id"]
    assert first.headers["Location"] == f"{sandbox.url}/v1/operations/{op}"
    assert first.headers["Retry-After"] == str(sandbox.lro_retry_after)
    # while it runs, the name is taken
    _refused(_post(sandbox, sales.id, {"displayName": name}), 409, "ItemDisplayNameAlreadyInUse")
    _refused(_get(sandbox, f"/v1/operations/{op}/result"), 400, "OperationNotSucceeded")
    states, url = [], first.headers["Location"]
    for _ in range(10):
        r = _get(sandbox, url)
        assert r.status_code == 200
        states.append(r.json())
        url = r.headers["Location"]
        if r.json()["status"] == "Succeeded":
            break
        assert url == f"{sandbox.url}/operations/{op}" and r.headers["Retry-After"]
    assert [s["status"] for s in states] == ["NotStarted"] + ["Running"] * (
        len(states) - 2) + ["Succeeded"]
    percents = [s["percentComplete"] for s in states]
    assert percents == sorted(percents) and percents[0] == 0 and percents[-1] == 100
    assert url == f"{sandbox.url}/operations/{op}/result"
    result = _get(sandbox, url)
    assert result.status_code == 200 and result.json()["displayName"] == name
    assert any(i.id == result.json()["id"] for i in sales.items)
    # a finished operation stays finished, at both spellings of its URL
    again = _get(sandbox, f"/v1/operations/{op}")
    assert again.json()["status"] == "Succeeded"
    assert again.json()["lastUpdatedTimeUtc"] == states[-1]["lastUpdatedTimeUtc"]


@pytest.mark.parametrize("payload, code", [
    ([1, 2], "InvalidDefinition"),
    (b"{not json", "InvalidDefinition"),
])
def test_a_bad_definition_fails_its_operation_and_frees_the_name(sandbox: Sandbox, sales: Any,
                                                                 payload: Any,
                                                                 code: str) -> None:
    name = _name()
    first = _post(sandbox, sales.id, {"displayName": name, "definition": {
        "parts": [_part("eventstream.json", payload)]}})
    assert first.status_code == 202
    url = first.headers["Location"]
    for _ in range(10):
        state = _get(sandbox, url)
        if state.json()["status"] == "Failed":
            break
    body = state.json()
    assert body["status"] == "Failed" and "Location" not in state.headers
    assert body["error"]["errorCode"] == code and body["error"]["isRetriable"] is False
    assert not any(i.display_name == name for i in sales.items)
    _refused(_get(sandbox, url + "/result"), 400, "OperationNotSucceeded")
    assert _post(sandbox, sales.id, {"displayName": name}).status_code == 201


def test_an_injected_failure_fails_the_operation(sandbox: Sandbox, sales: Any) -> None:
    first = _post(sandbox, sales.id, {"displayName": _name(), "definition": {
        "parts": [_part("eventstream.json", {})]}},
        headers={"x-vendor-sandbox-fault": "lro_fail"})
    url = first.headers["Location"]
    for _ in range(10):
        state = _get(sandbox, url).json()
        if state["status"] in ("Failed", "Succeeded"):
            break
    assert state["status"] == "Failed" and state["error"]["errorCode"] == "OperationFailed"


def test_an_unknown_operation_is_404(sandbox: Sandbox) -> None:
    missing = str(uuid.uuid4())
    for path in (f"/v1/operations/{missing}", f"/operations/{missing}/result"):
        body = _refused(_get(sandbox, path), 404, "OperationNotFound")
        assert body["relatedResource"] == {"resourceId": missing, "resourceType": "Operation"}


# ---------------------------------------------------------------------- refusals
@pytest.mark.parametrize("body, status, code, where", [
    ({}, 400, "InvalidInput", "displayName"),
    ([], 400, "InvalidInput", "createEventstreamRequest"),
    ({"displayName": "bad|name"}, 400, "InvalidDisplayName", None),
    ({"displayName": "x" * (DISPLAY_NAME_MAX + 1)}, 400, "InvalidDisplayName", None),
    ({"displayName": "NAME", "description": "d" * (DESCRIPTION_MAX + 1)}, 400, "InvalidInput",
     "description"),
    ({"displayName": "NAME", "description": 5}, 400, "InvalidInput", "description"),
    ({"displayName": "NAME", "folderId": str(uuid.UUID(int=1))}, 404, "FolderNotFound", None),
    ({"displayName": "NAME", "sensitivityLabelSettings": {"labelId": str(uuid.UUID(int=2))}},
     400, "InvalidSensitivityLabel", None),
    ({"displayName": "NAME", "sensitivityLabelSettings": {
        "labelId": "x", "sensitivityLabelApplyStrategy": "Sometimes"}}, 400, "InvalidInput",
     "sensitivityLabelApplyStrategy"),
])
def test_bad_requests_are_refused_in_the_flat_body(sandbox: Sandbox, sales: Any, body: Any,
                                                   status: int, code: str,
                                                   where: str | None) -> None:
    if isinstance(body, dict) and body.get("displayName") == "NAME":
        body = {**body, "displayName": _name()}
    before = len(sales.items)
    answer = _refused(_post(sandbox, sales.id, body), status, code)
    if where is not None:
        detail = answer["moreDetails"][0]
        assert detail["relatedResource"] == {"resourceId": where, "resourceType": "Parameter"}
    assert len(sales.items) == before


def test_a_body_that_is_not_json_is_refused(sandbox: Sandbox, sales: Any) -> None:
    r = _post(sandbox, sales.id, None, raw=b"{displayName",
              headers={"Content-Type": "application/json"})
    _refused(r, 400, "InvalidRequestContent")


def test_labels_the_service_cannot_apply(sandbox: Sandbox, sales: Any) -> None:
    fabric = sandbox.world.section("fabric")
    locked = fabric.label_named("Highly Confidential")
    usable = fabric.label_named("Public")
    body = _refused(_post(sandbox, sales.id, {"displayName": _name(),
                                              "sensitivityLabelSettings": {"labelId": locked}}),
                    400, "SensitivityLabelNotApplicable")
    assert body["relatedResource"]["resourceId"] == locked
    ignored = _post(sandbox, sales.id, {"displayName": _name(), "sensitivityLabelSettings": {
        "labelId": locked, "sensitivityLabelApplyStrategy": "Ignore"}})
    assert ignored.status_code == 201
    assert ignored.json()["sensitivityLabel"] == {"id": sales.default_label}
    applied = _post(sandbox, sales.id, {"displayName": _name(), "sensitivityLabelSettings": {
        "labelId": usable.upper()}})
    assert applied.json()["sensitivityLabel"] == {"id": usable}


@pytest.mark.parametrize("workspace, status, code", [
    ("not-a-uuid", 400, "InvalidInput"),
    (str(uuid.UUID(int=3)), 404, "WorkspaceNotFound"),
    ("Marketing (shared capacity)", 400, "FeatureNotAvailable"),
    ("Finance Reporting", 403, "InsufficientWorkspaceRole"),
])
def test_workspaces_that_cannot_take_an_eventstream(sandbox: Sandbox, spaces: dict,
                                                    workspace: str, status: int,
                                                    code: str) -> None:
    ws_id = spaces[workspace].id if workspace in spaces else workspace
    _refused(_post(sandbox, ws_id, {"displayName": _name()}), status, code)


@pytest.mark.parametrize("roles, code", [
    (["Contributor"], "InsufficientScopes"),
    (["Eventstream.ReadWrite.All", "Reader"], "InsufficientWorkspaceRole"),
])
def test_the_caller_needs_the_scopes_and_the_role(sandbox: Sandbox, sales: Any, roles: list,
                                                  code: str) -> None:
    _refused(_post(sandbox, sales.id, {"displayName": _name()}, roles=roles), 403, code)
    assert _post(sandbox, sales.id, {"displayName": _name()},
                 roles=["Item.ReadWrite.All", "Contributor"]).status_code == 201


def test_creation_is_throttled_with_retry_after(sandbox: Sandbox, sales: Any) -> None:
    quota = eventstream.limits(sandbox)
    quota.configure(rate=0.001, burst=1)
    try:
        assert _post(sandbox, sales.id, {"displayName": _name()}).status_code == 201
        name = _name()
        blocked = _post(sandbox, sales.id, {"displayName": name})
    finally:
        quota.configure(rate=eventstream.RATE, burst=eventstream.BURST)
    body = _refused(blocked, 429, "RequestBlocked")
    assert int(blocked.headers["Retry-After"]) >= 1 and "blocked" in body["message"]
    assert not any(i.display_name == name for i in sales.items)


class _Caller:
    """A credential for another principal (its own object id), minted by the sandbox."""

    def __init__(self, sandbox, object_id):
        self.sandbox, self.object_id = sandbox, object_id

    def get_token(self, *scopes, **kw):
        from azure.core.credentials import AccessToken

        token = self.sandbox.authority.mint(scopes[0], object_id=self.object_id)
        return AccessToken(token, int(time.time()) + 3600)


def test_rate_limit_is_per_caller(conn, sandbox, sales) -> None:
    quota = eventstream.limits(sandbox)
    quota.configure(rate=1 / 120, burst=1)
    other = toolkit.connect(sandbox=sandbox, progress=False,
                            credential=_Caller(sandbox, "3a1e9c52-0b7d-4f3e-8a2c-5d6e7f809a1b"))
    other.sleep = conn.sleep
    try:
        toolkit.create_eventstream(sales.id, _name(), connection=conn)
        with pytest.raises(toolkit.RateLimitError), \
                pytest.warns(toolkit.RetryWaitWarning, match="not waiting"):
            toolkit.create_eventstream(sales.id, _name(), connection=conn)
        df = toolkit.create_eventstream(sales.id, _name(), connection=other)
    finally:
        quota.configure(rate=eventstream.RATE, burst=eventstream.BURST)
        other.close()
    assert len(df) == 1

