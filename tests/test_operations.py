"""Long-running operations survive a restart: a continuation token finishes them in another
process; polling shows progress."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import toolkit
from toolkit._core.polling import Operation
from toolkit.operations import resume_operation

ROOT = Path(__file__).resolve().parents[2]
DEFINITION = {
    "eventstream.json": {"sources": [], "destinations": [], "streams": [], "operators": []},
    ".platform": b"platform-bytes",
}

# the new process: its own connection to the same service, waits not slept
_RESUME = textwrap.dedent("""
    import sys, toolkit
    conn = toolkit.connect(progress=False)
    conn.sleep = lambda seconds: None
    df = toolkit.resume_operation(sys.stdin.read().strip())
    print(df.drop(columns=[c for c in df.columns if df[c].dtype == object]).to_json(
        orient="records", date_format="iso"))
    print(df.attrs["operation"])
""")


def _in_new_process(sandbox, token: str) -> tuple[list[dict], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLKIT_")}
    env.update(PYTHONPATH=str(ROOT), TOOLKIT_BASE_URL=sandbox.url,
               TOOLKIT_TOKEN=sandbox.token(None), TOOLKIT_MAPS_KEY=str(sandbox.maps_key.reveal()))
    run = subprocess.run([sys.executable, "-c", _RESUME], input=token, env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    records, operation = run.stdout.strip().splitlines()[-2:]
    return json.loads(records), operation


def _server(catalog):
    return catalog.query("kind == 'sql_server'").iloc[0]


def _key(catalog) -> str:
    return catalog.query("kind == 'key_vault_key'")["name"].iloc[0]


def test_arm_operation_started_here_finishes_in_another_process(conn, sandbox, catalog) -> None:
    s = _server(catalog)
    op = toolkit.update_encryption_protector(
        s.subscription_id, s.resource_group, s["name"], server_key_type="VendorKeyVault",
        server_key_name=_key(catalog), wait=False, connection=conn)
    token = op.continuation_token
    assert isinstance(token, str) and op.status == "InProgress"
    with sandbox.recording() as log:
        records, operation = _in_new_process(sandbox, token)
    assert operation == "update_encryption_protector"
    assert len(records) == 1 and records[0]["server"] == s["name"]
    assert records[0]["serverKeyName"] == _key(catalog)
    assert len(log) >= 2  # polled to the end there, not here
    assert all(r.method == "GET" for r in log)  # the change was not sent again
    # and the operation really ended: the protector reads as the new key here too
    now = toolkit.encryption_protector(s.subscription_id, s.resource_group, s["name"],
                                       connection=conn)
    assert now["serverKeyName"].iloc[0] == _key(catalog)


def test_eventstream_creation_finishes_in_another_process(conn, sandbox, catalog) -> None:
    workspace = catalog.query("kind == 'fabric_workspace'")["name"].iloc[0]
    name = f"resumed-{len(sandbox.log)}"
    op = toolkit.create_eventstream(workspace, name, definition=DEFINITION, wait=False,
                                    connection=conn)
    assert isinstance(op, toolkit.ItemOperation) and not op.done()
    with sandbox.recording() as log:
        records, operation = _in_new_process(sandbox, op.continuation_token)
    assert operation == "create_eventstream"
    assert records[0]["displayName"] == name
    assert records[0]["operation_id"] == op.operation_id
    assert not any(r.method == "POST" for r in log)  # created once


def test_token_holds_no_secret_and_is_checked(conn, sandbox, catalog) -> None:
    s = _server(catalog)
    op = toolkit.update_encryption_protector(
        s.subscription_id, s.resource_group, s["name"], server_key_type="VendorKeyVault",
        server_key_name=_key(catalog), wait=False, connection=conn)
    token = op.continuation_token
    decoded = base64.urlsafe_b64decode(token.split(".", 1)[1] + "===").decode()
    bearer = conn.credential.get_token(conn.scope_for("arm")).token
    for secret in (bearer, bearer.split(".")[2], str(sandbox.maps_key.reveal())):
        assert secret not in token and secret not in decoded
    assert "Authorization" not in decoded
    op.result()  # leave the server idle for the next test
    for bad in (None, "", "tkop1.!!!", "tkop1." + base64.urlsafe_b64encode(b"[]").decode(),
                token[:-12]):
        with pytest.raises(toolkit.ValidationError, match="token"):
            resume_operation(bad, connection=conn)


def test_a_token_naming_another_address_is_refused(conn, sandbox, catalog) -> None:
    s = _server(catalog)
    op2 = toolkit.update_encryption_protector(
        s.subscription_id, s.resource_group, s["name"], server_key_type="VendorKeyVault",
        server_key_name=_key(catalog), wait=False, connection=conn)
    state = json.loads(base64.urlsafe_b64decode(op2.continuation_token[6:] + "==="))
    state["location"] = "https://elsewhere.example/operations/1"
    forged = "tkop1." + base64.urlsafe_b64encode(json.dumps(state).encode()).decode()
    with sandbox.recording() as log, pytest.raises(toolkit.ValidationError, match="address"):
        resume_operation(forged, connection=conn)
    assert log == []
    op2.result()


def test_an_operation_done_at_once_has_no_token(conn, catalog) -> None:
    s = _server(catalog)
    op = toolkit.update_encryption_protector(
        s.subscription_id, s.resource_group, s["name"], server_key_type="ServiceManaged",
        wait=False, connection=conn)
    assert op.done() and op.polls == 0
    assert op.continuation_token is None


def test_resumed_in_the_same_process_and_timeout_token(conn, sandbox, catalog, waits) -> None:
    s = _server(catalog)
    op = toolkit.update_encryption_protector(
        s.subscription_id, s.resource_group, s["name"], server_key_type="VendorKeyVault",
        server_key_name=_key(catalog), wait=False, connection=conn)
    with pytest.raises(toolkit.OperationTimeoutError) as info:
        op.result(timeout=0.5)
    again = resume_operation(info.value.operation.continuation_token, wait=False,
                             connection=conn)
    assert isinstance(again, Operation)
    df = again.result()
    assert df["serverKeyName"].iloc[0] == _key(catalog)
    assert waits  # the service's Retry-After was honoured, through the recorder


def test_polling_shows_progress(sandbox, catalog, waits, monkeypatch) -> None:
    import toolkit._core.progress as progress

    made: list[dict] = []

    class Bar:
        def __init__(self, **kw):
            made.append(kw)
            self.n = 0

        def update(self, n=1):
            self.n += n

        def close(self):
            made.append({"closed_at": self.n})

    monkeypatch.setattr(progress, "bar_kind", lambda: "terminal")
    monkeypatch.setattr(progress, "_tqdm_class", lambda kind: Bar)
    conn = toolkit.connect(sandbox=sandbox, progress=True, progress_min=2)
    conn.sleep = waits
    s = _server(catalog)
    try:
        toolkit.update_encryption_protector(
            s.subscription_id, s.resource_group, s["name"], server_key_type="VendorKeyVault",
            server_key_name=_key(catalog), connection=conn)
    finally:
        conn.close()
    assert progress is not None
    assert made and "polling" in made[0]["desc"] and made[0]["unit"] == "poll"
    assert made[-1]["closed_at"] >= 2


def _edited(token: str, **changes) -> str:
    state = json.loads(base64.urlsafe_b64decode(token[6:] + "==="))
    state.update(changes)
    return "tkop1." + base64.urlsafe_b64encode(json.dumps(state).encode()).decode().rstrip("=")


@pytest.mark.parametrize("args", [
    {"server": "prod-payments-db"},
    {"server": {"name": "prod-payments-db"}},  # not even a name
    {"api_version": "1999-01-01"},
    {"endpoint": "https://management.example/subscriptions/x/servers/prod-payments-db"},
])
def test_a_token_edited_to_say_what_the_result_is_is_refused(conn, sandbox, catalog,
                                                             args) -> None:
    s = _server(catalog)
    op = toolkit.update_encryption_protector(
        s.subscription_id, s.resource_group, s["name"], server_key_type="VendorKeyVault",
        server_key_name=_key(catalog), wait=False, connection=conn)
    state = json.loads(base64.urlsafe_b64decode(op.continuation_token[6:] + "==="))
    forged = _edited(op.continuation_token, args={**state["args"], **args})
    try:
        with sandbox.recording() as log, pytest.raises(toolkit.ValidationError, match="token"):
            resume_operation(forged, connection=conn)
        assert log == []  # refused before any request
    finally:
        op.result()


def test_a_resumed_frame_names_what_the_service_answered(conn, sandbox, catalog) -> None:
    s = _server(catalog)
    op = toolkit.update_encryption_protector(
        s.subscription_id, s.resource_group, s["name"], server_key_type="VendorKeyVault",
        server_key_name=_key(catalog), wait=False, connection=conn)
    token = op.continuation_token
    assert json.loads(base64.urlsafe_b64decode(token[6:] + "==="))["args"] == {}
    with sandbox.recording() as log:
        df = resume_operation(token, connection=conn)
    last = log[-1]  # the request whose answer is the result
    assert df["server"].tolist() == [s["name"]]
    assert df.attrs["endpoint"] == f"{sandbox.url}{last.path}"
    assert f"api-version={df.attrs['api_version']}" in last.query
    # the eventstream's: the operation id is the one its URL polls, the version the path's
    workspace = catalog.query("kind == 'fabric_workspace'")["name"].iloc[0]
    item = toolkit.create_eventstream(workspace, f"named-{len(sandbox.log)}",
                                      definition=DEFINITION, wait=False, connection=conn)
    with sandbox.recording() as log:
        created = resume_operation(item.continuation_token, connection=conn)
    assert created["operation_id"].tolist() == [item.operation_id]
    assert created.attrs["endpoint"] == f"{sandbox.url}{log[-1].path}"
    first = log[-1].path.split("/")[1]  # the version the answering request's path names
    assert created.attrs["api_version"] == (first if first in ("v1", "v2") else None)
    with pytest.raises(toolkit.ValidationError, match="operation its URL polls"):
        resume_operation(_edited(item.continuation_token, operation_id="someone-elses"),
                         connection=conn)
