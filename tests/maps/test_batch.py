"""The maps batch sender over HTTP: one request per chunk with the items it names, the answers
in order, a 408 split in halves down to one item, an answer of the wrong length refused."""

from __future__ import annotations

import pytest

import toolkit
from tests.replay import Answer, replay_server
from toolkit._core.errors import ApiError, ProtocolError
from toolkit.maps._batch import Batches, chunks


def test_chunks_cut_in_order_without_loss() -> None:
    assert chunks(range(7), 3) == [[0, 1, 2], [3, 4, 5], [6]]
    assert chunks([4, 9], 100) == [[4, 9]]
    assert chunks([], 100) == []


@pytest.fixture
def replay(waits):
    with replay_server() as rp:
        conn = toolkit.connect(base_url=rp.url, maps_key="k" * 24, progress=False,
                               max_retries=0)
        conn.sleep = waits
        rp.batches = Batches(conn.pipeline("maps"), "/thing:batch", "thing",
                             [{"n": i} for i in range(4)], "2025-01-01", None)
        yield rp
        conn.close()


def test_a_chunk_is_one_request_and_its_answers_come_back_in_order(replay) -> None:
    replay.add("POST", r"/thing:batch", Answer(200, {"batchItems": [{"a": 1}, {"a": 3}]},
                                               {"x-vendor-request-id": "r1"}))
    assert replay.batches.send([1, 3]) == [{"a": 1}, {"a": 3}]
    [(method, target)] = replay.seen
    assert method == "POST" and target.startswith("/thing:batch?api-version=2025-01-01")
    assert replay.batches.request_ids == ["r1"]


def test_a_timed_out_batch_is_halved_down_to_single_items(replay) -> None:
    timeout = Answer(408, {"error": {"code": "Timeout", "message": "too long"}})
    replay.add("POST", r"/thing:batch", timeout, timeout,
               Answer(200, {"batchItems": [{"a": 0}]}), timeout,
               Answer(200, {"batchItems": [{"a": 2}, {"a": 3}]}))
    # 0,1,2,3 -> 0,1 (408) -> 0 ok, 1 (408: its error) ; 2,3 ok
    answers = replay.batches.send([0, 1, 2, 3])
    assert answers == [{"a": 0}, {"error": {"code": "Timeout", "message": "too long"}},
                       {"a": 2}, {"a": 3}]
    assert len(replay.seen) == 5


def test_a_wrong_number_of_answers_and_other_errors_are_raised(replay) -> None:
    replay.add("POST", r"/thing:batch", Answer(200, {"batchItems": [{"a": 1}]}),
               Answer(400, {"error": {"code": "BadRequest", "message": "no"}}))
    with pytest.raises(ProtocolError, match="1 batch items for 2 queries"):
        replay.batches.send([0, 1])
    with pytest.raises(ApiError) as info:
        replay.batches.send([0])
    assert info.value.status == 400
