"""Cancellation of work a fan-out has queued or is retrying.

A fan-out runs each item in a worker thread under a :class:`threading.Event`; when the caller is
interrupted (Ctrl-C) or an item raises, the event is set. The pipeline checks it before every
attempt and every wait, so a worker stops at its next request or retry instead of sending it:
nothing is sent after the interrupt reaches the caller.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from toolkit._core.errors import ToolkitError

__all__ = ["CancelledError", "cancellable", "check_cancelled"]

_current: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar(
    "toolkit_cancel", default=None)


class CancelledError(ToolkitError):
    """The work this request belonged to was cancelled (Ctrl-C, or another item's failure);
    the request was not sent."""


@contextmanager
def cancellable(event: threading.Event) -> Iterator[None]:
    """Run the block under ``event``: once it is set, :func:`check_cancelled` raises."""
    token = _current.set(event)
    try:
        yield
    finally:
        _current.reset(token)


def check_cancelled() -> None:
    """Raise CancelledError when the surrounding work has been cancelled."""
    event = _current.get()
    if event is not None and event.is_set():
        raise CancelledError("cancelled: the fan-out this request belonged to was interrupted; "
                             "nothing was sent")
