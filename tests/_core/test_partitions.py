"""Independent chains read at once: frames joined in chain order with their declared dtypes,
and the first failure stops the others."""

from __future__ import annotations

import threading

import pandas as pd
import pytest

from toolkit._core.columns import InterningBuilder
from toolkit._core.errors import ServiceError
from toolkit._core.frames import FrameBuilder
from toolkit._core.partitions import read_chains
from toolkit._core.schemas import Col, Schema

COLUMNS = (Col("state", "category", categories=("Low", "High"), ordered=True),
           Col("name", "category"), Col("n", "Int64"))


class _Response:
    def __init__(self, n: int) -> None:
        self.url = f"http://127.0.0.1/page/{n}"
        self.request_id = f"req-{n}"


class _Page:
    def __init__(self, items: list, n: int) -> None:
        self.items = items
        self.response = _Response(n)

    def release(self) -> None:
        self.items.clear()


def _chain(rows: list[dict], first: int):
    def pages():
        for k in range(0, len(rows), 2):
            yield _Page(rows[k:k + 2], first + k)
    return pages


def test_frames_are_joined_in_chain_order_with_the_one_category_rule() -> None:
    parts = [[{"state": "High", "name": "b", "n": 1}, {"state": "Odd", "name": "a", "n": 2}],
             [{"state": "Low", "name": "c", "n": None}],
             [{"state": "Zed", "name": "a", "n": 4}, {"state": "High", "name": "d", "n": 5},
              {"state": None, "name": None, "n": 6}]]
    df = read_chains([_chain(p, 10 * i) for i, p in enumerate(parts)],
                     lambda: InterningBuilder(COLUMNS), operation="things", workers=3)
    reference = FrameBuilder(Schema("things", COLUMNS))
    for p in parts:
        reference.add(p)
    pd.testing.assert_frame_equal(df, reference.build())
    assert list(df["state"].cat.categories) == ["Low", "High", "Odd", "Zed"]
    assert df.attrs["request_ids"] == ["req-0", "req-10", "req-20", "req-22"]


def test_the_first_failure_stops_the_other_chains() -> None:
    started = threading.Event()
    pages_after_failure: list[int] = []

    def failing():
        started.wait(5)
        raise ServiceError("boom")
        yield  # pragma: no cover

    def endless():
        n = 0
        while True:
            started.set()
            n += 1
            if n > 10_000:  # bounded even if the stop were never seen
                pages_after_failure.append(n)
                return
            yield _Page([{"state": "Low", "name": "x", "n": n}], n)

    with pytest.raises(ServiceError, match="boom"):
        read_chains([endless, failing], lambda: InterningBuilder(COLUMNS),
                    operation="things", workers=2)
    assert pages_after_failure == []


def test_a_failure_keeps_every_record_the_chains_read() -> None:
    # one part finishes, one fails after two pages, one is stopped: every record read comes
    # back in err.partial, in part order, and no link invites resuming one part as if it
    # were the query
    whole = [{"state": "Low", "name": f"w{k}", "n": k} for k in range(4)]
    gate = threading.Event()

    def finishes():
        yield from _chain(whole, 0)()
        gate.set()

    def fails():
        gate.wait(5)
        yield _Page([{"state": "High", "name": "f0", "n": 100}], 100)
        yield _Page([{"state": "High", "name": "f1", "n": 101}], 101)
        err = ServiceError("boom")
        err.next_link = "http://127.0.0.1/page/102"
        raise err

    with pytest.raises(ServiceError, match="boom") as info:
        read_chains([finishes, fails], lambda: InterningBuilder(COLUMNS),
                    operation="things", workers=2)
    err = info.value
    assert err.partial["name"].tolist() == ["w0", "w1", "w2", "w3", "f0", "f1"]
    assert err.partial["n"].tolist() == [0, 1, 2, 3, 100, 101]
    assert err.next_link is None
    assert "6 records were read before the failure (err.partial)" in str(err)
