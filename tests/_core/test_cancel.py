"""cancellable and check_cancelled: a set event stops the work of its own block and thread only,
and a request under a cancelled fan-out is never sent."""

from __future__ import annotations

import contextvars
import threading

import pytest

from toolkit._core.cancel import (
    Cancellation,
    CancelledError,
    cancellable,
    check_cancelled,
    sending,
)
from toolkit._core.errors import ToolkitError


def test_nothing_is_cancelled_outside_a_block() -> None:
    check_cancelled()  # no surrounding work: nothing to cancel


def test_a_set_event_cancels_its_block_and_only_while_set() -> None:
    event = threading.Event()
    with cancellable(event):
        check_cancelled()
        event.set()
        with pytest.raises(CancelledError, match="nothing was sent") as info:
            check_cancelled()
        assert isinstance(info.value, ToolkitError)
    check_cancelled()  # the block is over: the event no longer applies


def test_blocks_nest_and_restore_the_outer_event() -> None:
    outer, inner = threading.Event(), threading.Event()
    outer.set()
    with cancellable(outer):
        with cancellable(inner):
            check_cancelled()  # the inner event decides inside the inner block
        with pytest.raises(CancelledError):
            check_cancelled()


def test_the_event_follows_the_context_into_a_worker_thread() -> None:
    event = threading.Event()
    seen: list[str] = []

    def work() -> None:
        try:
            check_cancelled()
            seen.append("sent")
        except CancelledError:
            seen.append("cancelled")

    with cancellable(event):
        event.set()
        ctx = contextvars.copy_context()
    worker = threading.Thread(target=ctx.run, args=(work,))
    worker.start()
    worker.join()
    plain = threading.Thread(target=work)  # a thread outside the fan-out is not affected
    plain.start()
    plain.join()
    assert seen == ["cancelled", "sent"]


def test_cancelling_waits_for_a_write_under_way_and_refuses_the_next() -> None:
    cancel = Cancellation()
    in_write, finish = threading.Event(), threading.Event()
    order: list[str] = []

    def write() -> None:
        with cancellable(cancel), sending():
            in_write.set()
            finish.wait(10)
            order.append("written")

    writer = threading.Thread(target=write)
    writer.start()
    assert in_write.wait(10)
    canceller = threading.Thread(target=lambda: (cancel.set(grace=30),
                                                 order.append("cancelled")))
    canceller.start()
    assert cancel.wait(10)  # cancelled: set() now waits for the write under way
    finish.set()
    writer.join(10)
    canceller.join(10)
    assert order == ["written", "cancelled"]
    with cancellable(cancel), pytest.raises(CancelledError), sending():
        order.append("sent after")
    assert "sent after" not in order


def test_a_child_cancellation_is_cancelled_with_its_parent() -> None:
    parent = Cancellation()
    child = Cancellation(parent)
    with cancellable(child):
        check_cancelled()
        parent.set()
        with pytest.raises(CancelledError):
            check_cancelled()
    assert child.is_set() and not Cancellation(threading.Event()).is_set()
