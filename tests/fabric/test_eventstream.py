"""create_eventstream and create_eventstreams: 201, the long-running 202 flow, errors, over HTTP."""

from __future__ import annotations

import base64
import itertools
import json

import pandas as pd
import pytest

import toolkit
from tests.conftest import example
from tests.replay import Answer, replay_server
from toolkit._core.errors import ValidationError
from toolkit._core.frames import build_frame
from toolkit._core.messages import Request
from toolkit._spec.fabric import ITEM_TYPES
from toolkit.fabric.eventstream import EVENTSTREAM, EVENTSTREAMS, encode_definition
from toolkit.sandbox.fabric import eventstream as sandbox_fabric

EX = "17-fabric-create-eventstream"
_names = itertools.count(1)


def fresh(prefix: str = "es") -> str:
    return f"{prefix}-{next(_names):03d}"


@pytest.fixture(autouse=True)
def _fresh_quota(sandbox):
    sandbox_fabric.limits(sandbox).refill()
    yield


@pytest.fixture(scope="module")
def fabric(sandbox):
    return sandbox.world.section("fabric")


@pytest.fixture(scope="module")
def ws(fabric):
    """Workspaces by display name."""
    return {w.name: w for w in fabric.workspaces.values()}


@pytest.fixture(scope="module")
def sales(ws):
    return ws["Sales Analytics"]


def _label(fabric, name):
    return next(i for i, (n, _) in fabric.labels.items() if n == name)


def _eventstreams(workspace):
    return [i for i in workspace.items if i.type == "Eventstream"]


DEFINITION = {
    "eventstream.json": {"sources": [{"name": "orders-hub", "type": "EventHub"}],
                         "destinations": [], "streams": [], "operators": []},
    "eventstreamProperties.json": {"retentionTimeInDays": 1, "eventThroughputLevel": "Low"},
    ".platform": b"platform-bytes",
}


# ---------------------------------------------------------------------------- real examples

def test_shared_201_examples_parse_into_the_item_frame() -> None:
    for name in ("CreateEventstream.json", "CreateEventstreamWithDefinition.json"):
        body = example(EX, name)["responses"]["201"]["body"]
        df = build_frame([body], EVENTSTREAM)
        assert list(df.columns) == EVENTSTREAM.names and len(df) == 1
        row = df.iloc[0]
        assert row["id"] == body["id"] and row["displayName"] == body["displayName"]
        assert row["description"] == body["description"]
        assert row["workspaceId"] == body["workspaceId"]
        assert row["sensitivityLabel.id"] == body["sensitivityLabel"]["id"]
        assert row["type"] == "Eventstream"
        assert list(df["type"].cat.categories) == list(ITEM_TYPES)
        assert pd.isna(row["folderId"]) and pd.isna(row["operation_id"])


def _replay_lro(rp) -> dict:
    """The shared 202, running, completed and result examples, served with their own headers
    (the host swapped for the replay server's, the paths kept exactly)."""
    created = example(EX, "CreateEventstreamWithDefinition.json")
    running = example(EX, "GetLongRunningOperationStateRunning.json")["responses"]["200"]
    done = example(EX, "GetLongRunningOperationStateCompleted.json")["responses"]["200"]
    result = example(EX, "GetLongRunningOperationResult.json")["responses"]["200"]["body"]

    def local(headers):
        return {k: str(v).replace("https://api.fabric.vendor.com", "{url}")
                for k, v in headers.items()}

    rp.add("POST", "/eventstreams$", Answer(202, None, local(created["responses"]["202"]
                                                               ["headers"])))
    rp.add("GET", "/v1/operations/[^/]+$", Answer(200, running["body"],
                                                  local(running["headers"])))
    rp.add("GET", "^/operations/[^/]+$", Answer(200, running["body"], local(running["headers"])),
           Answer(200, done["body"], local(done["headers"])))
    rp.add("GET", "/result$", Answer(200, result))
    return {"created": created, "running": running, "done": done, "result": result}


def test_shared_long_running_examples_replayed_through_every_state(waits) -> None:
    with replay_server() as rp:
        ex = _replay_lro(rp)
        conn = toolkit.connect(base_url=rp.url, token="example-token-0123456789", progress=False)
        conn.sleep = waits
        params = ex["created"]["parameters"]
        request = params["createEventstreamRequest"]
        df = toolkit.create_eventstream(
            params["workspaceId"], request["displayName"], description=request["description"],
            definition={p["path"]: "{}" for p in request["definition"]["parts"]},
            connection=conn)
        conn.close()
    op_id = "0acd697c-1550-43cd-b998-91bfbfbd47c6"
    state_id = "cfafbeb1-8037-4d0c-896e-a46fb27ff227"
    assert rp.seen == [
        ("POST", f"/v1/workspaces/{params['workspaceId']}/eventstreams"),
        ("GET", f"/v1/operations/{op_id}"),            # Location of the 202, as given
        ("GET", f"/operations/{state_id}"),             # Location of "Running": no /v1
        ("GET", f"/operations/{state_id}"),
        ("GET", f"/operations/{state_id}/result"),      # Location of "Succeeded"
    ]
    assert waits == [30.0, 20.0, 20.0]  # Retry-After of the 202, then of each running state
    row = df.iloc[0]
    body = ex["result"]
    assert (row["id"], row["displayName"], row["description"], row["workspaceId"]) == \
        (body["id"], body["displayName"], body["description"], body["workspaceId"])
    assert row["type"] == "Notebook" and row["operation_id"] == op_id


# ---------------------------------------------------------------------------- 201 and 202

def test_plain_creation_is_immediate(conn, sandbox, sales, fabric) -> None:
    name = fresh()
    with sandbox.recording() as log:
        df = toolkit.create_eventstream(sales.id, name, description="Orders from the shop",
                                        connection=conn)
    assert [(r.method, r.status) for r in log] == [("POST", 201)]
    assert list(df.columns) == EVENTSTREAM.names and len(df) == 1
    row = df.iloc[0]
    created = next(i for i in _eventstreams(sales) if i.display_name == name)
    assert row["id"] == created.id and row["workspaceId"] == sales.id
    assert row["description"] == "Orders from the shop" and row["type"] == "Eventstream"
    assert row["sensitivityLabel.id"] == _label(fabric, "General")  # the workspace default
    assert pd.isna(row["operation_id"]) and pd.isna(row["folderId"])
    assert df.attrs["operation"] == "create_eventstream" and df.attrs["request_ids"]


def test_folder_and_label_are_applied(conn, ws, fabric) -> None:
    iot = ws["IoT Telemetry"]
    folder = next(iter(iot.folders))
    label = _label(fabric, "Confidential")
    df = toolkit.create_eventstream(iot.id, fresh(), folder_id=folder,
                                    sensitivity_label_settings={
                                        "labelId": label,
                                        "sensitivityLabelApplyStrategy": "ApplyOrFail"},
                                    connection=conn)
    assert df["folderId"].iloc[0] == folder and df["sensitivityLabel.id"].iloc[0] == label


def test_definition_creation_is_followed_through_every_status(conn, sandbox, sales,
                                                               waits) -> None:
    name = fresh()
    with sandbox.recording() as log:
        op = toolkit.create_eventstream(sales.id, name, definition=DEFINITION, wait=False,
                                        connection=conn)
        assert isinstance(op, toolkit.ItemOperation) and not isinstance(op, pd.DataFrame)
        assert op.status == "InProgress" and "/v1/operations/" in op.url
        assert op.operation_id in op.url
        df = op.result()
    statuses = [h["status"] for h in op.history]
    assert statuses == ["NotStarted"] + ["Running"] * (op.polls - 2) + ["Succeeded"]
    assert op.polls == max(3, sandbox.lro_polls)
    assert [h["percentComplete"] for h in op.history] == sorted(
        h["percentComplete"] for h in op.history)
    paths = [r.path for r in log]
    assert paths[0] == f"/v1/workspaces/{sales.id}/eventstreams" and log[0].status == 202
    assert paths[1] == f"/v1/operations/{op.operation_id}"
    assert paths[2:-1] == [f"/operations/{op.operation_id}"] * (op.polls - 1)
    assert paths[-1] == f"/operations/{op.operation_id}/result"
    assert waits == [float(sandbox.lro_retry_after)] * op.polls
    assert op.waited == sum(waits)
    assert df["displayName"].iloc[0] == name and df["operation_id"].iloc[0] == op.operation_id
    assert any(i.display_name == name for i in _eventstreams(sales))
    assert op.result() is df and op.done()


def test_definition_parts_reach_the_service_as_inline_base64() -> None:
    body = encode_definition(DEFINITION)
    parts = {p["path"]: p for p in body["parts"]}
    assert set(parts) == set(DEFINITION)
    assert all(p["payloadType"] == "InlineBase64" for p in parts.values())
    assert json.loads(base64.b64decode(parts["eventstream.json"]["payload"])) == \
        DEFINITION["eventstream.json"]
    assert base64.b64decode(parts[".platform"]["payload"]) == b"platform-bytes"
    text = encode_definition({"notes.txt": "héllo"})["parts"][0]["payload"]
    assert base64.b64decode(text).decode("utf-8") == "héllo"


def test_failed_operation_raises_its_own_error_and_frees_the_name(conn, sales) -> None:
    name = fresh()
    with pytest.raises(toolkit.OperationFailedError) as info:
        toolkit.create_eventstream(sales.id, name, definition={"eventstream.json": "{not json"},
                                   connection=conn)
    err = info.value
    assert err.code == "InvalidDefinition" and "eventstream.json" in err.message
    assert err.retriable is False and err.request_id
    assert "/operations/" in err.url
    assert not any(i.display_name == name for i in _eventstreams(sales))
    df = toolkit.create_eventstream(sales.id, name, definition=DEFINITION, connection=conn)
    assert df["displayName"].iloc[0] == name


def test_failed_operation_handle_keeps_raising(conn, sales) -> None:
    op = toolkit.create_eventstream(sales.id, fresh(), definition={"eventstream.json": "[1, 2]"},
                                    wait=False, connection=conn)
    with pytest.raises(toolkit.OperationFailedError):
        op.result()
    assert op.status == "Failed"
    with pytest.raises(toolkit.OperationFailedError):
        op.result()


def test_timeout_leaves_an_operation_to_resume(conn, sandbox, sales, waits) -> None:
    name = fresh()
    with pytest.raises(toolkit.OperationTimeoutError) as info:
        toolkit.create_eventstream(sales.id, name, definition=DEFINITION, timeout=1,
                                   connection=conn)
    err = info.value
    assert "/operations/" in err.operation_url and "resume" in str(err)
    df = err.operation.result()
    assert df["displayName"].iloc[0] == name
    assert sum(i.display_name == name for i in _eventstreams(sales)) == 1


# ---------------------------------------------------------------------------- refusals

def test_duplicate_display_name_is_a_conflict_in_the_flat_error_body(conn, sales) -> None:
    with pytest.raises(toolkit.ConflictError) as info:
        toolkit.create_eventstream(sales.id, "ORDERS-stream", connection=conn)
    err = info.value
    assert err.status == 409 and err.code == "ItemDisplayNameAlreadyInUse"
    assert err.retriable is False and len(err.request_id) == 36
    assert err.target == sales.id and err.extra["relatedResource"]["resourceType"] == "Workspace"
    assert "display name" in str(err)


def test_name_of_a_creation_in_progress_is_taken(conn, sales) -> None:
    name = fresh()
    op = toolkit.create_eventstream(sales.id, name, definition=DEFINITION, wait=False,
                                    connection=conn)
    with pytest.raises(toolkit.ConflictError):
        toolkit.create_eventstream(sales.id, name, connection=conn)
    op.result()


@pytest.mark.parametrize("workspace, code, status, error", [
    ("Marketing (shared capacity)", "FeatureNotAvailable", 400, toolkit.ApiError),
    ("Personal: analyst", "FeatureNotAvailable", 400, toolkit.ApiError),
    ("Finance Reporting", "InsufficientWorkspaceRole", 403, toolkit.AuthenticationError),
])
def test_workspaces_that_cannot_take_an_eventstream(conn, sandbox, ws, workspace, code, status,
                                                    error) -> None:
    target = ws[workspace]
    before = len(target.items)
    with sandbox.recording() as log, pytest.raises(error) as info:
        toolkit.create_eventstream(target.id, fresh(), connection=conn)
    err = info.value
    assert (err.status, err.code, err.retriable) == (status, code, False)
    assert err.target == target.id and err.request_id
    assert len(log) == 1 and len(target.items) == before


def test_unknown_workspace_folder_and_label(conn, sales, fabric) -> None:
    unknown = "00000000-1111-2222-3333-444444444444"
    with pytest.raises(toolkit.NotFoundError) as info:
        toolkit.create_eventstream(unknown, fresh(), connection=conn)
    assert info.value.code == "WorkspaceNotFound" and info.value.target == unknown
    with pytest.raises(toolkit.NotFoundError) as info:
        toolkit.create_eventstream(sales.id, fresh(), folder_id=unknown, connection=conn)
    assert info.value.code == "FolderNotFound"
    with pytest.raises(toolkit.ApiError) as info:
        toolkit.create_eventstream(sales.id, fresh(),
                                   sensitivity_label_settings={"labelId": unknown},
                                   connection=conn)
    assert info.value.status == 400 and info.value.code == "InvalidSensitivityLabel"


def test_label_strategy_apply_or_fail_versus_ignore(conn, sales, fabric) -> None:
    protected = _label(fabric, "Highly Confidential")
    with pytest.raises(toolkit.ApiError) as info:
        toolkit.create_eventstream(sales.id, fresh(), sensitivity_label_settings={
            "labelId": protected}, connection=conn)  # ApplyOrFail is the default
    assert info.value.code == "SensitivityLabelNotApplicable"
    df = toolkit.create_eventstream(sales.id, fresh(), sensitivity_label_settings={
        "labelId": protected, "sensitivityLabelApplyStrategy": "Ignore"}, connection=conn)
    assert df["sensitivityLabel.id"].iloc[0] != protected


def test_token_without_the_scopes_is_refused(sandbox, sales, waits) -> None:
    conn = toolkit.connect(sandbox=sandbox, progress=False,
                           credential=sandbox.credential(roles=["Reader", "Contributor"]))
    conn.sleep = waits
    try:
        with pytest.raises(toolkit.AuthenticationError) as info:
            toolkit.create_eventstream(sales.id, fresh(), connection=conn)
    finally:
        conn.close()
    assert info.value.status == 403 and info.value.code == "InsufficientScopes"


def test_error_details_of_the_flat_body_are_parsed(conn, sales) -> None:
    pipe = conn.pipeline("fabric")
    with pytest.raises(toolkit.ApiError) as info:
        pipe.send(Request("POST", f"/v1/workspaces/{sales.id}/eventstreams",
                          json={"displayName": fresh(), "description": "x" * 300}, idempotent=False,
                          expected=(201, 202)))
    err = info.value
    assert err.status == 400 and err.code == "InvalidInput" and err.retriable is False
    assert err.details[0]["errorCode"] == "InvalidParameter"
    assert err.details[0]["relatedResource"]["resourceId"] == "description"
    with pytest.raises(toolkit.ApiError) as info:
        pipe.send(Request("POST", f"/v1/workspaces/{sales.id}/eventstreams",
                          json={"displayName": fresh(), "definition": {"parts": [
                              {"path": "eventstream.json", "payload": "***", "payloadType":
                               "InlineBase64"}]}}, idempotent=False, expected=(201, 202)))
    assert info.value.code == "CorruptedPayload"


# ---------------------------------------------------------------------------- throttling, retries

def test_429_with_retry_after_is_honoured_and_nothing_is_duplicated(conn, sandbox, sales,
                                                                    waits) -> None:
    name = fresh()
    sandbox.inject("429", path="/eventstreams$", method="POST", count=1, retry_after=7)
    with sandbox.recording() as log:
        df = toolkit.create_eventstream(sales.id, name, connection=conn)
    assert [r.status for r in log] == [429, 201]
    assert waits == [7.0]
    assert sum(i.display_name == name for i in _eventstreams(sales)) == 1
    assert df["displayName"].iloc[0] == name


def test_429_without_retry_after_backs_off(conn, sandbox, sales, waits) -> None:
    sandbox.inject("429", path="/eventstreams$", method="POST", count=1)
    df = toolkit.create_eventstream(sales.id, fresh(), connection=conn)
    assert len(waits) == 1 and 0 < waits[0] <= conn.settings.max_retry_wait
    assert len(df) == 1


def test_creation_is_not_resent_after_a_server_error(conn, sandbox, sales) -> None:
    name = fresh()
    sandbox.inject("503", path="/eventstreams$", method="POST", count=1, retry_after=1)
    with sandbox.recording() as log, pytest.raises(toolkit.ServiceError) as info:
        toolkit.create_eventstream(sales.id, name, connection=conn)
    assert [r.status for r in log] == [503]
    assert info.value.retriable is True  # the service says so; the caller decides
    assert not any(i.display_name == name for i in _eventstreams(sales))


def test_polls_survive_a_throttled_state_read(conn, sandbox, sales, waits) -> None:
    sandbox.inject("429", path="/operations/", count=1, retry_after=4)
    df = toolkit.create_eventstream(sales.id, fresh(), definition=DEFINITION, connection=conn)
    assert 4.0 in waits and len(df) == 1


def test_per_caller_rate_limit_answers_429_with_retry_after(conn, sandbox, sales) -> None:
    quota = sandbox_fabric.limits(sandbox)
    quota.configure(rate=1 / 120, burst=1)
    name = fresh()
    try:
        toolkit.create_eventstream(sales.id, fresh(), connection=conn)
        with sandbox.recording() as log, pytest.raises(toolkit.RateLimitError) as info, \
                pytest.warns(toolkit.RetryWaitWarning, match="not waiting"):
            toolkit.create_eventstream(sales.id, name, connection=conn)
    finally:
        quota.configure(rate=sandbox_fabric.RATE, burst=sandbox_fabric.BURST)
    err = info.value
    assert err.code == "RequestBlocked" and err.retriable is True
    assert err.retry_after == 120 and "wait 120 s" in str(err)
    assert [r.status for r in log] == [429]  # longer than max_retry_wait: not waited
    assert not any(i.display_name == name for i in _eventstreams(sales))






# ---------------------------------------------------------------------------- client-side rules

GOOD_WS = "0b5b8f44-6a43-4d6b-9c6e-3f1f2a8f9d10"


@pytest.mark.parametrize("kwargs, parameter", [
    ({"workspace_id": "not-a-uuid"}, "workspace_id"),
    ({"workspace_id": 12}, "workspace_id"),
    ({"display_name": ""}, "display_name"),
    ({"display_name": "   "}, "display_name"),
    ({"display_name": " leading"}, "display_name"),
    ({"display_name": "trailing."}, "display_name"),
    ({"display_name": "a/b"}, "display_name"),
    ({"display_name": "tab\there"}, "display_name"),
    ({"display_name": "x" * 257}, "display_name"),
    ({"display_name": None}, "display_name"),
    ({"description": "d" * 257}, "description"),
    ({"description": 5}, "description"),
    ({"folder_id": "folder-1"}, "folder_id"),
    ({"definition": {}}, "definition"),
    ({"definition": "eventstream.json"}, "definition"),
    ({"definition": {"eventstream.json": object()}}, "definition['eventstream.json']"),
    ({"definition": {"/abs.json": "{}"}}, "definition key"),
    ({"definition": {"parts": [{"path": "a", "payload": "***"}]}},
     "definition['parts'][0]['payload']"),
    ({"definition": {"parts": [{"path": "a", "payload": "e30=", "payloadType": "Inline"}]}},
     "definition['parts'][0]['payloadType']"),
    ({"sensitivity_label_settings": "label"}, "sensitivity_label_settings"),
    ({"sensitivity_label_settings": {}}, "sensitivity_label_settings['labelId']"),
    ({"sensitivity_label_settings": {"labelId": "x"}}, "sensitivity_label_settings['labelId']"),
    ({"sensitivity_label_settings": {"labelId": GOOD_WS,
                                     "sensitivityLabelApplyStrategy": "Force"}},
     "sensitivity_label_settings['sensitivityLabelApplyStrategy']"),
    ({"sensitivity_label_settings": {"labelId": GOOD_WS, "strategy": "Ignore"}},
     "sensitivity_label_settings"),
    ({"timeout": -1}, "timeout"),
    ({"wait": "yes"}, "wait"),
    ({"api_version": "1"}, "api_version"),
])
def test_bad_inputs_fail_before_any_request(conn, sandbox, kwargs, parameter) -> None:
    args = {"workspace_id": GOOD_WS, "display_name": "ok-name", **kwargs}
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        toolkit.create_eventstream(args.pop("workspace_id"), args.pop("display_name"),
                                   connection=conn, **args)
    assert info.value.parameter == parameter and info.value.rule
    assert log == []


def test_limits_themselves_are_accepted(conn, sales) -> None:
    name = "N" * 256
    df = toolkit.create_eventstream(sales.id, name, description="d" * 256, connection=conn)
    assert df["displayName"].iloc[0] == name and len(df["description"].iloc[0]) == 256


# ---------------------------------------------------------------------------- many at once

def test_many_at_once_one_row_each_errors_as_rows(conn, sandbox, ws, sales) -> None:
    items = pd.DataFrame([
        {"workspace_id": sales.id, "display_name": fresh("batch"), "description": "plain"},
        {"workspace_id": sales.id, "display_name": fresh("batch"), "definition": DEFINITION},
        {"workspace_id": sales.id, "display_name": "orders-stream"},
        {"workspace_id": ws["Marketing (shared capacity)"].id, "display_name": fresh("batch")},
        {"workspace_id": "bad-id", "display_name": fresh("batch")},
    ])
    with sandbox.recording() as log:
        df = toolkit.create_eventstreams(items, connection=conn)
    assert list(df.columns) == EVENTSTREAMS.names
    assert df["input_index"].tolist() == [0, 1, 2, 3, 4]
    assert df["displayName"].tolist() == items["display_name"].tolist()
    assert df["status"].astype(str).tolist() == ["Succeeded", "Succeeded", "Failed", "Failed",
                                                 "Invalid"]
    assert df["error_code"].tolist()[2:] == ["ItemDisplayNameAlreadyInUse",
                                            "FeatureNotAvailable", "ValidationError"]
    assert df["error"].iloc[:2].isna().all() and df["error"].iloc[2:].notna().all()
    assert df["operation_id"].iloc[1] and pd.isna(df["operation_id"].iloc[0])
    assert df["id"].iloc[:2].notna().all() and df["id"].iloc[2:].isna().all()
    posts = [r for r in log if r.method == "POST"]
    assert len(posts) == 4  # the invalid row was never sent
    for name in df["displayName"].iloc[:2]:
        assert sum(i.display_name == name for i in _eventstreams(sales)) == 1


def test_many_accepts_service_field_names_and_a_timeout(conn, sales) -> None:
    items = [{"workspaceId": sales.id, "displayName": fresh("batch"), "definition": DEFINITION}]
    df = toolkit.create_eventstreams(items, timeout=0, connection=conn)
    row = df.iloc[0]
    assert row["status"] == "Running" and row["error_code"] == "OperationTimeout"
    assert row["operation_id"] and "/operations/" in row["error"]
    # the row's token finishes the creation it started, which is never sent again
    done = toolkit.resume_operation(row["continuation_token"], connection=conn)
    assert done["displayName"].tolist() == [row["displayName"]]
    assert done["operation_id"].tolist() == [row["operation_id"]]
    assert sum(i.display_name == row["displayName"] for i in _eventstreams(sales)) == 1


@pytest.mark.parametrize("items, parameter", [
    ([], "items"),
    ("es-1", "items"),
    ({"workspace_id": GOOD_WS}, "items"),
    ([{"workspace_id": GOOD_WS, "display_name": "a", "colour": "red"}], "items[0]"),
    ([5], "items[0]"),
])
def test_many_rejects_malformed_tables_before_any_request(conn, sandbox, items,
                                                          parameter) -> None:
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        toolkit.create_eventstreams(items, connection=conn)
    assert info.value.parameter == parameter and log == []


# ---------------------------------------------------------------------------- protocol edges

def test_undefined_state_keeps_polling_and_result_url_defaults(waits) -> None:
    ws_id = "cfafbeb1-8037-4d0c-896e-a46fb27ff229"
    item = example(EX, "CreateEventstream.json")["responses"]["201"]["body"]
    with replay_server() as rp:
        rp.add("POST", "/eventstreams$", Answer(202, None, {
            "Location": "{url}/v1/operations/op-1", "x-vendor-operation-id": "op-1"}))
        rp.add("GET", "/v1/operations/op-1$",
               Answer(200, {"status": "Undefined", "percentComplete": 0}),
               Answer(200, {"status": "SomethingNew"}, {"Retry-After": "5"}),
               Answer(200, {"status": "Succeeded", "percentComplete": 100}))
        rp.add("GET", "/v1/operations/op-1/result$", Answer(200, item))
        conn = toolkit.connect(base_url=rp.url, token="example-token-0123456789",
                               progress=False, poll_interval=9)
        conn.sleep = waits
        df = toolkit.create_eventstream(ws_id, "Eventstream_1", connection=conn)
        conn.close()
    assert rp.seen[-1] == ("GET", "/v1/operations/op-1/result")
    assert waits == [9.0, 9.0, 5.0]  # no Retry-After: the poll_interval setting
    assert df["id"].iloc[0] == item["id"] and df["operation_id"].iloc[0] == "op-1"


def test_202_without_location_is_a_protocol_error(waits) -> None:
    with replay_server() as rp:
        rp.add("POST", "/eventstreams$", Answer(202, None, {"Retry-After": "1"}))
        conn = toolkit.connect(base_url=rp.url, token="example-token-0123456789",
                               progress=False)
        with pytest.raises(toolkit.ProtocolError, match="Location"):
            toolkit.create_eventstream("cfafbeb1-8037-4d0c-896e-a46fb27ff229", "x",
                                       connection=conn)
        conn.close()
