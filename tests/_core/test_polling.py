"""Long-running ARM operations over a replayed service: the async-operation header followed to
the end, the waits the service asks for honoured (recorded, not slept), failures and timeouts."""

from __future__ import annotations

import pytest

import toolkit
from tests.replay import Answer, replay_server
from toolkit._core.continuation import decode_token
from toolkit._core.errors import (
    OperationFailedError,
    OperationTimeoutError,
    ProtocolError,
    ValidationError,
)
from toolkit._core.polling import ItemOperation, Operation, restore_operation


@pytest.fixture
def replay(waits):
    with replay_server() as rp:
        conn = toolkit.connect(base_url=rp.url, token="example-token-0123456789",
                               progress=False, max_retries=0)
        conn.sleep = waits
        rp.conn = conn
        yield rp


def _start(replay, wait=True, timeout=None):
    op = Operation.start(replay.conn.pipeline("arm"), "PUT", "/things/a", name="put_thing",
                         parse=lambda r: r.json(), json={"x": 1})
    return op.result(timeout) if wait else op


def test_the_async_header_is_polled_to_the_end_then_the_resource_read(replay, waits) -> None:
    replay.add("PUT", r"/things/a", Answer(202, None, {
        "Vendor-AsyncOperation": "{url}/ops/1", "Retry-After": "3"}))
    replay.add("GET", r"/ops/1", Answer(200, {"status": "InProgress"}, {"Retry-After": "2"}),
               Answer(200, {"status": "Succeeded"}))
    replay.add("GET", r"/things/a", Answer(200, {"name": "a", "done": True}))
    assert _start(replay) == {"name": "a", "done": True}
    assert waits == [3.0, 2.0]
    assert [p for m, p in replay.seen if m == "GET"][:2] == ["/ops/1", "/ops/1"]


def test_a_failed_operation_raises_with_the_service_error(replay) -> None:
    replay.add("PUT", r"/things/a", Answer(202, None, {"Vendor-AsyncOperation": "{url}/ops/2"}))
    replay.add("GET", r"/ops/2", Answer(200, {"status": "Failed", "error": {
        "code": "KeyVaultAccessDenied", "message": "no access to the key"}}))
    with pytest.raises(OperationFailedError, match="KeyVaultAccessDenied"):
        _start(replay)


def test_a_timeout_hands_back_the_operation_to_resume(replay, waits) -> None:
    replay.add("PUT", r"/things/a", Answer(202, None, {
        "Vendor-AsyncOperation": "{url}/ops/3", "Retry-After": "10"}))
    replay.add("GET", r"/ops/3", Answer(200, {"status": "InProgress"}, {"Retry-After": "10"}),
               Answer(200, {"status": "Succeeded"}))
    replay.add("GET", r"/things/a", Answer(200, {"name": "a"}))
    with pytest.raises(OperationTimeoutError) as info:
        _start(replay, timeout=15)
    op = info.value.operation
    assert isinstance(op, Operation) and op.status == "InProgress" and op.polls == 1
    assert op.result() == {"name": "a"}
    assert op.polls == 2


def test_a_202_without_anything_to_follow_is_a_protocol_error(replay) -> None:
    replay.add("PUT", r"/things/a", Answer(202, None))
    with pytest.raises(ProtocolError, match="Location"):
        _start(replay)


def test_wait_false_returns_the_handle(replay) -> None:
    replay.add("PUT", r"/things/a", Answer(200, {"name": "a"}))
    op = _start(replay, wait=False)
    assert isinstance(op, Operation) and op.done() and op.result() == {"name": "a"}


def test_wait_polls_to_the_end_and_result_parses_once(replay, waits) -> None:
    replay.add("PUT", r"/things/a", Answer(202, None, {"Location": "{url}/results/1"}))
    replay.add("GET", r"/results/1", Answer(202, None, {"Retry-After": "4"}),
               Answer(200, {"name": "a"}))
    parsed = []
    op = Operation.start(replay.conn.pipeline("arm"), "PUT", "/things/a", name="put_thing",
                         parse=lambda r: parsed.append(r.json()) or len(parsed))
    assert op.url == replay.url + "/results/1" and op.status == "InProgress"
    op.wait()
    assert parsed == [] and op.status == "Succeeded" and op.polls == 2
    assert waits == [replay.conn.settings.poll_interval, 4.0] and op.waited == sum(waits)
    assert op.result() == 1 and op.result() == 1 and parsed == [{"name": "a"}]


def test_an_operation_done_at_once_has_nothing_to_follow(replay) -> None:
    replay.add("POST", r"/items$", Answer(201, {"id": "i"}, {"x-vendor-operation-id": "op-9"}))
    op = ItemOperation.start(replay.conn.pipeline("fabric"), "POST", "/items", name="make",
                             parse=lambda r: r.json()["id"], idempotent=False)
    assert isinstance(op, ItemOperation) and op.done() and op.polls == 0
    assert (op.status, op.state, op.history, op.percent_complete) == ("Succeeded", "Succeeded",
                                                                      [], None)
    assert op.operation_id == "op-9" and op.url == replay.url + "/items"
    assert op.continuation_token is None and op.result() == "i"
    assert "ItemOperation make Succeeded" in repr(op)


def test_a_token_restores_the_operation_of_its_kind_on_a_trusted_pipeline(replay) -> None:
    replay.add("POST", r"/items$", Answer(202, None, {"Location": "{url}/operations/op-1",
                                                      "x-vendor-operation-id": "op-1"}))
    replay.add("GET", r"/operations/op-1$", Answer(200, {"status": "Succeeded"}))
    replay.add("GET", r"/operations/op-1/result$", Answer(200, {"id": "i"}))
    pipe = replay.conn.pipeline("fabric")
    op = ItemOperation.start(pipe, "POST", "/items", name="create_eventstream",
                             parse=lambda r: r.json(), resume={"api_version": "v1"})
    state = decode_token(op.continuation_token)
    assert (state["kind"], state["operation_id"], state["args"]) == ("item", "op-1",
                                                                     {"api_version": "v1"})
    seen = []
    again = restore_operation(pipe, state, lambda o: seen.append(o) or (lambda r: r.json()))
    assert isinstance(again, ItemOperation) and seen == [again]
    assert again.operation_id == "op-1" and again.state == "Running"
    assert again.url == op.url and again.result() == {"id": "i"}
    assert again.result_url == replay.url + "/operations/op-1/result"
    foreign = {**state, "url": "https://elsewhere.example/operations/op-1",
               "_urls": ["https://elsewhere.example/operations/op-1"]}
    with pytest.raises(ValidationError, match="address outside"):
        restore_operation(pipe, foreign, lambda o: lambda r: None)
    with pytest.raises(ValidationError, match="do not fit"):
        restore_operation(pipe, state, lambda o: (_ for _ in ()).throw(TypeError("args")))


def test_a_poll_that_fails_carries_the_accepted_operation_and_nothing_is_sent_again(
        replay) -> None:
    # a 5xx on the status URL (retries off): the PUT is not repeated, the error resumes it
    replay.add("PUT", r"/things/a", Answer(202, None, {"Vendor-AsyncOperation": "{url}/ops/9"}))
    replay.add("GET", r"/ops/9", Answer(503, {"error": {"code": "Busy", "message": "later"}}),
               Answer(200, {"status": "Succeeded"}))
    replay.add("GET", r"/things/a$", Answer(200, {"name": "a"}))
    with pytest.raises(toolkit.ServiceError) as info:
        _start(replay)
    err = info.value
    assert isinstance(err.accepted, Operation) and err.accepted.status == "InProgress"
    assert "accepted the operation" in str(err) and "resume_operation" in str(err)
    assert err.continuation_token.startswith("tkop1.") and err.accepted.url.endswith("/ops/9")
    assert err.accepted.result() == {"name": "a"}
    assert [m for m, _ in replay.seen].count("PUT") == 1


def test_an_item_operation_without_location_is_followed_by_its_operation_id(replay) -> None:
    # semantic-link's rule: the state at /{version}/operations/{id} of the configured endpoint
    replay.add("POST", r"/v1/workspaces/w/items", Answer(202, None, {
        "x-vendor-operation-id": "op-7", "Retry-After": "1"}))
    replay.add("GET", r"/v1/operations/op-7$", Answer(200, {"status": "Succeeded"}))
    replay.add("GET", r"/v1/operations/op-7/result$", Answer(200, {"id": "item-7"}))
    op = ItemOperation.start(replay.conn.pipeline("fabric"), "POST", "/v1/workspaces/w/items",
                             name="create_eventstream", parse=lambda r: r.json(), json={},
                             idempotent=False)
    assert op.operation_id == "op-7" and op.url == f"{replay.url}/v1/operations/op-7"
    assert op.result() == {"id": "item-7"}
    assert [p for _, p in replay.seen] == ["/v1/workspaces/w/items", "/v1/operations/op-7",
                                           "/v1/operations/op-7/result"]


def test_an_item_202_naming_nothing_says_the_item_may_exist(replay) -> None:
    replay.add("POST", r"/v1/workspaces/w/items", Answer(202, None))
    with pytest.raises(ProtocolError) as info:
        ItemOperation.start(replay.conn.pipeline("fabric"), "POST", "/v1/workspaces/w/items",
                            name="create_eventstream", parse=lambda r: r.json(), json={},
                            idempotent=False)
    assert "Do not create it again" in str(info.value)
