"""Polling strategies, one status request at a time, over a replayed service: which strategy a
202 chooses, what each poll reports, the waits the service asks for, and their token state."""

from __future__ import annotations

import math

import pytest
from requests.structures import CaseInsensitiveDict

import toolkit
from tests.replay import Answer, replay_server
from toolkit._core.errors import ProtocolError, ServiceError
from toolkit._core.pipeline import Response
from toolkit._core.poll_strategies import (
    AsyncHeaderPolling,
    ItemStatusPolling,
    LocationPolling,
    OperationLocationPolling,
    restore_strategy,
    retry_after,
)
from toolkit._core.polling import ItemOperation, Operation


@pytest.fixture
def replay():
    with replay_server() as rp:
        conn = toolkit.connect(base_url=rp.url, token="example-token-0123456789",
                               progress=False, max_retries=0)
        rp.pipe = conn.pipeline("arm")
        yield rp
        conn.close()


def _answer(rp, status: int, headers: dict[str, str], method: str = "PUT",
            path: str = "/things/a") -> Response:
    return Response(status, CaseInsensitiveDict({k: v.format(url=rp.url)
                                                 for k, v in headers.items()}),
                    b"", rp.url + path, method)


@pytest.mark.parametrize("value, expected", [
    (None, 7.0), ("3", 3.0), ("2.5", 2.5), ("soon", 7.0), ("nan", 7.0), ("-5", 0.0),
    ("inf", math.inf),
])
def test_retry_after_reads_seconds_with_a_default(value, expected) -> None:
    headers = CaseInsensitiveDict({} if value is None else {"Retry-After": value})
    assert retry_after(Response(202, headers, b"", "http://x/", "GET"), 7.0) == expected


def test_the_async_header_is_chosen_before_location(replay) -> None:
    both = _answer(replay, 202, {"Vendor-AsyncOperation": "{url}/ops/1",
                                 "Location": "{url}/results/1"})
    only_location = _answer(replay, 202, {"Location": "{url}/results/1"})
    nothing = _answer(replay, 202, {})
    operation = _answer(replay, 202, {"Operation-Location": "{url}/status/1",
                                      "Location": "{url}/results/1"})
    choose = [next((s for s in Operation.strategies if s.can_poll(r, replay.pipe)), None)
              for r in (both, only_location, nothing, operation)]
    assert choose == [AsyncHeaderPolling, LocationPolling, None, OperationLocationPolling]
    assert ItemOperation.strategies == (ItemStatusPolling,)
    assert not ItemStatusPolling.can_poll(nothing, replay.pipe)


@pytest.mark.parametrize("method, result_path", [("POST", "/results/1"), ("PUT", "/things/a")])
def test_async_header_reads_the_result_where_the_method_says(replay, method,
                                                             result_path) -> None:
    initial = _answer(replay, 202, {"Vendor-AsyncOperation": "{url}/ops/1",
                                    "Location": "{url}/results/1", "Retry-After": "4"},
                      method=method)
    strategy = AsyncHeaderPolling.from_initial(initial, replay.pipe, 30.0)
    assert strategy.url == replay.url + "/ops/1" and strategy.next_wait == 4.0
    replay.add("GET", r"/ops/1", Answer(200, {"status": "Running"}),
               Answer(200, {"status": "Succeeded"}, {"Retry-After": "1"}))
    replay.add("GET", result_path, Answer(200, {"done": True}))
    first = strategy.poll(replay.pipe, "op")
    assert first.status == "InProgress" and first.final is None and first.failure is None
    assert strategy.next_wait == 30.0  # no Retry-After: the default
    last = strategy.poll(replay.pipe, "op")
    assert last.status == "Succeeded" and last.final is not None
    assert last.final.json() == {"done": True}
    assert replay.seen[-1] == ("GET", result_path)


def test_async_header_canceled_without_an_error_body_is_a_failure(replay) -> None:
    strategy = AsyncHeaderPolling.from_initial(
        _answer(replay, 202, {"Vendor-AsyncOperation": "{url}/ops/2"}), replay.pipe, 1.0)
    replay.add("GET", r"/ops/2", Answer(200, {"status": "Canceled"}))
    outcome = strategy.poll(replay.pipe, "op")
    assert outcome.status == "Canceled" and outcome.final is None
    assert outcome.failure is not None and outcome.failure.code == "Canceled"
    assert outcome.failure.url == replay.url + "/ops/2"


def test_async_status_that_is_not_a_string_is_a_protocol_error(replay) -> None:
    strategy = AsyncHeaderPolling.from_initial(
        _answer(replay, 202, {"Vendor-AsyncOperation": "{url}/ops/3"}), replay.pipe, 1.0)
    replay.add("GET", r"/ops/3", Answer(200, {"status": ["Succeeded"]}))
    with pytest.raises(ProtocolError, match="not a string"):
        strategy.poll(replay.pipe, "op")


def test_location_follows_a_moved_location_then_reads_an_empty_put(replay) -> None:
    strategy = LocationPolling.from_initial(
        _answer(replay, 202, {"Location": "{url}/results/1"}), replay.pipe, 9.0)
    assert strategy.next_wait == 9.0
    replay.add("GET", r"/results/1", Answer(202, None, {"Location": "{url}/results/2",
                                                        "Retry-After": "2"}))
    replay.add("GET", r"/results/2", Answer(204, None))
    replay.add("GET", r"/things/a", Answer(200, {"name": "a"}))
    assert strategy.poll(replay.pipe, "op").status == "InProgress"
    assert strategy.url == replay.url + "/results/2" and strategy.next_wait == 2.0
    assert strategy.state()["location"] == replay.url + "/results/2"
    done = strategy.poll(replay.pipe, "op")
    assert done.status == "Succeeded" and done.final is not None
    assert done.final.json() == {"name": "a"}  # the resource, read after the empty 204


def test_location_error_answer_is_the_operations_failure_but_a_5xx_is_not(replay) -> None:
    strategy = LocationPolling.from_initial(
        _answer(replay, 202, {"Location": "{url}/results/3"}), replay.pipe, 1.0)
    replay.add("GET", r"/results/3", Answer(400, {"error": {"code": "ProbeTimeout",
                                                            "message": "no answer"}}),
               Answer(503, {"error": {"code": "Busy", "message": "later"}}))
    outcome = strategy.poll(replay.pipe, "op")
    assert outcome.status == "Failed" and outcome.failure is not None
    assert outcome.failure.code == "ProbeTimeout" and outcome.failure.status == 400
    with pytest.raises(ServiceError):
        strategy.poll(replay.pipe, "op")


def test_item_status_records_each_state_and_reads_the_result(replay) -> None:
    initial = _answer(replay, 202, {"Location": "{url}/v1/operations/op-1", "Retry-After": "3"},
                      method="post", path="/v1/workspaces/w/eventstreams")
    strategy = ItemStatusPolling.from_initial(initial, replay.pipe, 20.0)
    assert strategy.method == "POST" and strategy.status == "NotStarted"
    replay.add("GET", r"/v1/operations/op-1$",
               Answer(200, {"status": "Running", "percentComplete": 40},
                      {"Location": "{url}/operations/op-1", "Retry-After": "5"}))
    replay.add("GET", r"/operations/op-1$", Answer(200, {"status": "Succeeded",
                                                         "percentComplete": 100}))
    replay.add("GET", r"/operations/op-1/result$", Answer(200, {"id": "item-1"}))
    assert strategy.poll(replay.pipe, "op").status == "InProgress"
    assert strategy.url == replay.url + "/operations/op-1" and strategy.next_wait == 5.0
    done = strategy.poll(replay.pipe, "op")
    assert done.final is not None and done.final.json() == {"id": "item-1"}
    assert strategy.result_url == replay.url + "/operations/op-1/result"
    assert strategy.history == [
        {"status": "Running", "percentComplete": 40, "retry_after": "5"},
        {"status": "Succeeded", "percentComplete": 100, "retry_after": None}]



def test_item_status_keeps_a_percent_only_when_it_is_a_number(replay) -> None:
    initial = _answer(replay, 202, {"Location": "{url}/operations/op-3"}, method="POST")
    strategy = ItemStatusPolling.from_initial(initial, replay.pipe, 1.0)
    replay.add("GET", r"/operations/op-3$",
               Answer(200, {"status": "Running", "percentComplete": 12.5}),
               Answer(200, {"status": "Running", "percentComplete": "half"}),
               Answer(200, {"status": "Running", "percentComplete": True}))
    strategy.poll(replay.pipe, "op")
    assert strategy.percent_complete == 12.5
    strategy.poll(replay.pipe, "op")
    assert strategy.percent_complete is None
    strategy.poll(replay.pipe, "op")
    assert strategy.percent_complete is None
    assert [h["percentComplete"] for h in strategy.history] == [12.5, None, None]

def test_item_failure_carries_the_operations_error_or_says_how_it_ended(replay) -> None:
    initial = _answer(replay, 202, {"Location": "{url}/operations/op-2"}, method="POST")
    strategy = ItemStatusPolling.from_initial(initial, replay.pipe, 1.0)
    replay.add("GET", r"/operations/op-2$", Answer(200, {"status": "Cancelled"}),
               Answer(200, ["not", "an", "object"]))
    outcome = strategy.poll(replay.pipe, "op")
    assert outcome.status == "Cancelled" and outcome.failure is not None
    assert outcome.failure.code == "Cancelled"
    assert outcome.failure.message == "the operation ended Cancelled"
    with pytest.raises(ProtocolError, match="JSON object"):
        strategy.poll(replay.pipe, "op")


def test_operation_location_follows_the_status_then_reads_the_result_it_names(replay) -> None:
    initial = _answer(replay, 202, {"Operation-Location": "{url}/route/operations/7?v=1",
                                    "Retry-After": "3"}, method="POST", path="/route/matrix")
    strategy = OperationLocationPolling.from_initial(initial, replay.pipe, 20.0)
    assert strategy.url == replay.url + "/route/operations/7?v=1" and strategy.next_wait == 3.0
    replay.add("GET", r"/route/operations/7\?", Answer(200, {"status": "NotStarted"}),
               Answer(200, {"status": "Running"}, {"Retry-After": "5"}),
               Answer(200, {"status": "Completed", "result": {
                   "resultUrl": replay.url + "/elsewhere/7/result?v=2"}}))
    replay.add("GET", r"/elsewhere/7/result", Answer(200, {"kind": "RouteMatrix"}))
    assert strategy.poll(replay.pipe, "op").status == "InProgress"
    assert strategy.status == "NotStarted" and strategy.next_wait == 20.0
    assert strategy.poll(replay.pipe, "op").status == "InProgress"
    assert strategy.next_wait == 5.0
    done = strategy.poll(replay.pipe, "op")
    assert done.status == "Succeeded" and done.final.json() == {"kind": "RouteMatrix"}
    assert strategy.result_url == replay.url + "/elsewhere/7/result?v=2"
    assert strategy.state() == {"method": "POST", "resource_url": replay.url + "/route/matrix",
                                "url": replay.url + "/route/operations/7?v=1"}


@pytest.mark.parametrize("status", ["Completed", "Succeeded", "succeeded"])
def test_operation_location_without_a_result_url_reads_the_status_urls_result(
        replay, status) -> None:
    strategy = OperationLocationPolling.from_initial(
        _answer(replay, 202, {"Operation-Location": "{url}/ops/8?api-version=1"}), replay.pipe,
        1.0)
    replay.add("GET", r"/ops/8\?", Answer(200, {"status": status, "result": {"resultUrl": 7}}))
    replay.add("GET", r"/ops/8/result\?api-version=1$", Answer(200, {"done": True}))
    assert strategy.poll(replay.pipe, "op").final.json() == {"done": True}


def test_operation_location_failure_and_answers_without_a_status(replay) -> None:
    strategy = OperationLocationPolling.from_initial(
        _answer(replay, 202, {"Operation-Location": "{url}/ops/9"}), replay.pipe, 1.0)
    replay.add("GET", r"/ops/9$", Answer(200, {"status": "Failed", "error": {
        "code": "InternalServerError", "message": "try again"}}),
        Answer(200, {"status": "Failed"}), Answer(200, {"kind": "RouteMatrix"}),
        Answer(200, {"status": 3}), Answer(200, {"status": "Paused"}))
    failed = strategy.poll(replay.pipe, "op")
    assert failed.status == "Failed" and failed.failure.code == "InternalServerError"
    assert failed.failure.message == "try again"
    bare = strategy.poll(replay.pipe, "op").failure
    assert bare.code == "Failed" and bare.message == "the operation ended Failed"
    for _ in range(2):  # no status, or one that is not a word: the answer is not a status
        with pytest.raises(ProtocolError, match="no status"):
            strategy.poll(replay.pipe, "op")
    assert strategy.poll(replay.pipe, "op").status == "InProgress"  # a state to come


def test_each_strategy_is_restored_from_its_state_ready_to_poll(replay) -> None:
    made = [
        AsyncHeaderPolling.from_initial(_answer(replay, 202, {
            "Vendor-AsyncOperation": "{url}/ops/1", "Location": "{url}/r/1",
            "Retry-After": "8"}), replay.pipe, 1.0),
        LocationPolling.from_initial(_answer(replay, 202, {"Location": "{url}/r/2",
                                                           "Retry-After": "8"}),
                                     replay.pipe, 1.0),
        ItemStatusPolling.from_initial(_answer(replay, 202, {"Location": "{url}/o/3"},
                                               method="POST"), replay.pipe, 1.0),
        OperationLocationPolling.from_initial(_answer(replay, 202, {
            "Operation-Location": "{url}/s/4", "Retry-After": "8"}, method="POST"),
            replay.pipe, 1.0),
    ]
    for strategy in made:
        state = {"kind": strategy.kind, **strategy.state()}
        again = restore_strategy(state, 30.0)
        assert type(again) is type(strategy)
        assert again.state() == strategy.state() and again.url == strategy.url
        assert again.next_wait == 0.0 and again.default_wait == 30.0
    assert [s.kind for s in made] == ["arm", "arm", "item", "status"]
    item = restore_strategy({"kind": "item", **made[2].state()}, 1.0)
    assert isinstance(item, ItemStatusPolling) and item.status == "Running"
