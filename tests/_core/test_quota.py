"""A quota of requests per fixed window: a request waits for room in the window, the service's
count and reset time set what the window holds, and one quota is shared per connection."""

from __future__ import annotations

import gc
import threading

import pytest

from toolkit._core.quota import (
    MAX_RESET_SECONDS,
    QuotaWindow,
    read_resets_after,
    shared_quota,
)

REMAINING, RESETS = "x-ms-user-quota-remaining", "x-ms-user-quota-resets-after"


class Clock:
    """A clock that moves only when the code under test waits."""

    def __init__(self) -> None:
        self.now = 100.0
        self.waits: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


def quota(limit: int = 3, window: float = 5.0) -> tuple[QuotaWindow, Clock]:
    clock = Clock()
    return QuotaWindow(limit, window, clock=clock, sleep=clock.sleep), clock


@pytest.mark.parametrize(("text", "seconds"), [
    ("00:00:03", 3.0), ("00:01:00", 60.0), ("01:00:00", 3600.0), ("00:00:00", 0.0),
    ("00:00:02.5", 2.5), ("1.00:00:00", 86_400.0), (" 00:00:04 ", 4.0), ("4", 4.0),
    ("0.5", 0.5),
])
def test_reset_times_are_read_as_the_service_writes_them(text: str, seconds: float) -> None:
    assert read_resets_after(text) == seconds


@pytest.mark.parametrize("text", [None, "", "soon", "-00:00:03", "00:00", "3s", "00:61:00x",
                                  "2.00:00:01", "99999999"])
def test_what_is_not_a_reset_time_is_none(text: str | None) -> None:
    assert read_resets_after(text) is None
    assert MAX_RESET_SECONDS == 86_400.0


def test_a_window_lets_its_limit_through_then_waits_for_the_next() -> None:
    q, clock = quota(limit=3, window=5.0)
    for _ in range(3):
        q.acquire()
        q.finished(None, REMAINING, RESETS)
    assert clock.waits == []
    q.acquire()  # the fourth waits for the window to start again
    assert len(clock.waits) == 1 and clock.waits[0] == pytest.approx(5.05)
    assert q.waited == pytest.approx(5.05)


def test_the_services_count_and_reset_time_set_the_window() -> None:
    q, clock = quota(limit=15, window=5.0)
    q.acquire()
    # another client of the same user spent most of the window: 1 left, resets in 2 s
    q.finished({REMAINING: "1", RESETS: "00:00:02"}, REMAINING, RESETS)
    assert q.status() == (1, pytest.approx(2.0))
    q.acquire()
    q.finished({REMAINING: "0", RESETS: "00:00:02"}, REMAINING, RESETS)
    q.acquire()
    assert clock.waits == [pytest.approx(2.05)]  # until the service's reset, not a full window


def test_a_count_above_the_limit_never_raises_the_window_beyond_it() -> None:
    q, _ = quota(limit=3)
    q.acquire()
    q.finished({REMAINING: "500", RESETS: "00:00:04"}, REMAINING, RESETS)
    assert q.status()[0] == 3


def test_requests_on_their_way_are_not_given_out_again() -> None:
    q, _ = quota(limit=3)
    q.acquire()
    q.acquire()  # both on their way; the first answer says 2 left (the second not counted yet)
    q.finished({REMAINING: "2", RESETS: "00:00:05"}, REMAINING, RESETS)
    assert q.status()[0] == 1


@pytest.mark.parametrize("headers", [{}, {REMAINING: "many", RESETS: "later"},
                                     {REMAINING: "-1"}, {RESETS: "00:00:99x"}])
def test_headers_that_say_nothing_leave_the_window_as_counted(headers: dict[str, str]) -> None:
    q, _ = quota(limit=3)
    q.acquire()
    q.finished(headers, REMAINING, RESETS)
    assert q.status()[0] == 2


def test_a_quota_needs_room_and_time() -> None:
    with pytest.raises(ValueError):
        QuotaWindow(0, 5.0, clock=lambda: 0.0, sleep=lambda s: None)
    with pytest.raises(ValueError):
        QuotaWindow(3, 0.0, clock=lambda: 0.0, sleep=lambda s: None)


def test_threads_together_keep_the_quota() -> None:
    q, clock = quota(limit=4, window=5.0)
    lock = threading.Lock()
    starts: list[float] = []

    def work() -> None:
        for _ in range(3):
            with lock:  # the fake clock is not thread safe: one step at a time
                q.acquire()
                starts.append(clock.now)
                q.finished(None, REMAINING, RESETS)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(starts) == 12
    # no window of 5 s holds more than 4 starts
    for s in starts:
        assert sum(1 for t in starts if s <= t < s + 5.0) <= 4


class Conn:
    def __init__(self) -> None:
        self.clock = Clock()

    def sleep_for(self, seconds: float) -> None:
        self.clock.sleep(seconds)


def test_one_quota_per_connection_and_service() -> None:
    a, b = Conn(), Conn()
    qa = shared_quota(a, "arm.resourcegraph", 15, 5.0)
    assert shared_quota(a, "arm.resourcegraph", 99, 1.0) is qa  # the first caller's values
    assert qa.limit == 15
    assert shared_quota(b, "arm.resourcegraph", 15, 5.0) is not qa
    assert shared_quota(a, "other", 15, 5.0) is not qa
    del a
    gc.collect()  # the connection's quotas go with it
