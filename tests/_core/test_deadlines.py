"""Deadlines kept by one thread: actions run when due, never once disarmed, and one failing
action does not stop the others."""

from __future__ import annotations

import threading

import toolkit
from toolkit._core.deadlines import Deadlines, deadlines


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_due_action_runs_in_the_deadlines_thread() -> None:
    clock = _Clock()
    keeper = Deadlines(clock)
    ran = threading.Event()
    where: list[str] = []

    def action() -> None:
        where.append(threading.current_thread().name)
        ran.set()

    keeper.arm(clock.now - 1, action)
    assert ran.wait(10)
    assert where == ["toolkit-deadlines"]
    assert keeper.armed == 0


def test_a_disarmed_action_never_runs() -> None:
    clock = _Clock()
    keeper = Deadlines(clock)
    ran: list[int] = []
    later = keeper.arm(clock.now + 3600, lambda: ran.append(1))
    assert keeper.armed == 1
    assert keeper.disarm(later) is True
    assert keeper.disarm(later) is False  # once only
    done = threading.Event()
    keeper.arm(clock.now - 1, done.set)  # a due one after it still runs
    assert done.wait(10)
    assert ran == [] and keeper.armed == 0


def test_one_failing_action_does_not_stop_the_others(caplog) -> None:
    clock = _Clock()
    keeper = Deadlines(clock)
    done = threading.Event()

    def fails() -> None:
        raise RuntimeError("boom")

    keeper.arm(clock.now - 2, fails)
    keeper.arm(clock.now - 1, done.set)
    assert done.wait(10)


def test_disarmed_deadlines_do_not_pile_up() -> None:
    clock = _Clock()
    keeper = Deadlines(clock)
    for _ in range(1000):  # requests that all finished before their deadline
        keeper.disarm(keeper.arm(clock.now + 300, lambda: None))
    assert keeper.armed == 0
    assert len(keeper._heap) <= 64 + 1


def _deadline_threads() -> int:
    return sum(t.name == "toolkit-deadlines" for t in threading.enumerate())


def test_requests_share_one_deadline_thread(sandbox) -> None:
    before = _deadline_threads()
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    try:
        for _ in range(20):
            toolkit.sql_operations(connection=conn)
    finally:
        conn.close()
    assert _deadline_threads() <= before + 1  # not one a request
    assert deadlines().armed == 0  # every request's deadline was disarmed when it ended
