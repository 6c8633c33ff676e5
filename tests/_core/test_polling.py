"""Long-running ARM operations over a replayed service: the async-operation header followed to
the end, the waits the service asks for honoured (recorded, not slept), failures and timeouts."""

from __future__ import annotations

import pytest

import toolkit
from tests.replay import Answer, replay_server
from toolkit._core.errors import OperationFailedError, OperationTimeoutError, ProtocolError
from toolkit._core.polling import Operation


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
