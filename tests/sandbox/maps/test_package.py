"""The maps family's arrival log: note_arrival records each request per operation and peak_rate
finds the busiest window, optionally after a given time."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import pytest

from toolkit.sandbox.maps import DOCUMENTED_QPS, arrivals, note_arrival, peak_rate


def _box(**arrivals: list[float]) -> SimpleNamespace:
    return SimpleNamespace(state_lock=threading.Lock(),
                           state={"maps.arrivals": {k: list(v) for k, v in arrivals.items()}})


@pytest.mark.parametrize("times, window, want", [
    ([], 1.0, 0),
    ([5.0], 1.0, 1),
    ([0.0, 0.2, 0.4, 0.6, 0.8], 1.0, 5),
    ([0.0, 0.5, 1.0, 1.5], 1.0, 2),     # a request exactly one window later is another window
    ([3.0, 0.0, 2.9, 0.1, 2.95], 1.0, 3),  # order of arrival does not matter
    ([0.0, 0.5, 1.0, 1.5], 2.0, 4),
])
def test_peak_rate_is_the_busiest_window(times, window, want) -> None:
    assert peak_rate(_box(autocomplete=times), "autocomplete", window) == want


def test_peak_rate_after_a_time_and_per_operation() -> None:
    box = _box(autocomplete=[0.0, 0.1, 0.2, 5.0, 5.5], snap_to_roads=[1.0])
    assert peak_rate(box, "autocomplete") == 3
    assert peak_rate(box, "autocomplete", since=1.0) == 2
    assert peak_rate(box, "snap_to_roads") == 1
    assert peak_rate(box, "traffic_incidents") == 0


def test_arrivals_in_order_after_a_time() -> None:
    box = _box(autocomplete=[5.0, 0.1, 0.0, 5.5])
    assert arrivals(box, "autocomplete") == [0.0, 0.1, 5.0, 5.5]
    assert arrivals(box, "autocomplete", since=0.1) == [0.1, 5.0, 5.5]
    assert arrivals(box, "snap_to_roads") == []


def test_note_arrival_records_now_under_the_operation() -> None:
    box = SimpleNamespace(state_lock=threading.Lock(), state={})
    before = time.monotonic()
    note_arrival(SimpleNamespace(sandbox=box), "snap_to_roads")
    note_arrival(SimpleNamespace(sandbox=box), "snap_to_roads")
    log = box.state["maps.arrivals"]
    assert list(log) == ["snap_to_roads"] and len(log["snap_to_roads"]) == 2
    assert before <= log["snap_to_roads"][0] <= log["snap_to_roads"][1] <= time.monotonic()
    assert peak_rate(box, "snap_to_roads", window=3600) == 2


def test_documented_limits_cover_the_noted_operations() -> None:
    assert set(DOCUMENTED_QPS) == {"autocomplete", "route_directions_batch", "snap_to_roads",
                                   "traffic_incidents", "reverse_geocode_batch",
                                   "route_range"}
    assert all(isinstance(v, int) and v > 0 for v in DOCUMENTED_QPS.values())
