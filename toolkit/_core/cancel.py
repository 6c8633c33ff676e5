"""Cancellation of work a fan-out has queued or is retrying.

A fan-out runs each item in a worker thread under a :class:`Cancellation`; when the caller is
interrupted (Ctrl-C) or an item raises, it is set. The pipeline checks it before every attempt
and every wait, and the transport checks it once more right before a request's bytes are written
(:func:`sending`). Setting it waits for the writes already past that last check (a bounded
wait), so nothing is sent after the interrupt reaches the caller: a worker held up anywhere
before the write (a token being fetched, a rate limit, a retry's wait) stops there.

Threads the toolkit starts for the work of one call (the pages a pager asks for ahead) run under
the caller's cancellation too (:func:`current`, and a child :class:`Cancellation` of it).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from toolkit._core.errors import ToolkitError

__all__ = ["Cancellation", "CancelledError", "cancellable", "check_cancelled", "current",
           "sending"]

#: Longest wait, once cancelled, for the writes of requests already past their last check.
SEND_GRACE = 2.0

_current: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar(
    "toolkit_cancel", default=None)


class CancelledError(ToolkitError):
    """The work this request belonged to was cancelled; the request was not sent.

    Cancelled by Ctrl-C, or by another item's failure.
    """


class Cancellation(threading.Event):
    """An event that also counts the requests being written under it.

    Parameters
    ----------
    parent : threading.Event, optional
        The cancellation of the work this one is part of: setting the parent cancels this one
        too.
    """

    def __init__(self, parent: threading.Event | None = None) -> None:
        super().__init__()
        self.parent = parent
        self._writes = threading.Condition()
        self._writing = 0

    def is_set(self) -> bool:
        """Whether this work, or the work it is part of, is cancelled."""
        return super().is_set() or (self.parent is not None and self.parent.is_set())

    def set(self, grace: float = SEND_GRACE) -> None:
        """Cancel: no request starts its write from now on.

        Returns once the writes already under way are done (or after ``grace`` seconds).
        """
        with self._writes:
            super().set()
            self._writes.wait_for(lambda: self._writing == 0, timeout=grace)

    def _chain(self) -> list[Cancellation]:
        chain: list[Cancellation] = []
        event: threading.Event | None = self
        while isinstance(event, Cancellation):
            chain.append(event)
            event = event.parent
        return chain

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the block (a request's write) as under way, so that :meth:`set` waits for it.

        Raise CancelledError instead when already cancelled.
        """
        chain = self._chain()
        for one in chain:  # counted first, then checked: a set() in between waits for it
            with one._writes:
                one._writing += 1
        try:
            check_cancelled()
            yield
        finally:
            for one in chain:
                with one._writes:
                    one._writing -= 1
                    one._writes.notify_all()


@contextmanager
def cancellable(event: threading.Event) -> Iterator[None]:
    """Run the block under ``event``: once it is set, :func:`check_cancelled` raises."""
    token = _current.set(event)
    try:
        yield
    finally:
        _current.reset(token)


def current() -> threading.Event | None:
    """Return the cancellation the surrounding work runs under, if any."""
    return _current.get()


def check_cancelled() -> None:
    """Raise CancelledError when the surrounding work has been cancelled."""
    event = _current.get()
    if event is not None and event.is_set():
        raise CancelledError("cancelled: the fan-out this request belonged to was interrupted; "
                             "nothing was sent")


@contextmanager
def sending() -> Iterator[None]:
    """Make the last check before a request's bytes are written, held while they are.

    Raises CancelledError when the surrounding work is cancelled; a :class:`Cancellation` set
    meanwhile waits for the write to end.
    """
    event = _current.get()
    if isinstance(event, Cancellation):
        with event.writing():
            yield
        return
    check_cancelled()
    yield
