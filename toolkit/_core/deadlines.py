"""Deadlines kept by one thread: an action runs at its time unless disarmed first.

A request's deadline (see :mod:`toolkit._core.pipeline`) shuts its socket down when the answer
is not complete in time, however slowly the server drips it. One thread keeps every deadline of
the process, instead of a timer thread started for each request; it starts on the first deadline
and ends after a minute without any.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable

logger = logging.getLogger(__name__)

__all__ = ["Deadlines", "deadlines"]

#: Seconds the thread waits without any deadline before it ends (the next one starts it again).
IDLE_SECONDS = 60.0


class Deadlines:
    """Actions to run at given monotonic times, each unless disarmed before.

    Parameters
    ----------
    clock : callable
        The monotonic time (injectable for tests).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._armed: set[int] = set()
        self._ids = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, when: float, action: Callable[[], None]) -> int:
        """Run ``action`` (in the deadlines' thread) at monotonic time ``when``.

        Returns the id to :meth:`disarm` it with.
        """
        with self._cond:
            key = next(self._ids)
            heapq.heappush(self._heap, (when, key, action))
            self._armed.add(key)
            if len(self._heap) > 64 and len(self._heap) > 4 * len(self._armed):
                self._heap = [e for e in self._heap if e[1] in self._armed]  # drop disarmed
                heapq.heapify(self._heap)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="toolkit-deadlines",
                                                daemon=True)
                self._thread.start()
            self._cond.notify()
            return key

    def disarm(self, key: int) -> bool:
        """Do not run the action of ``key``; whether it had not run yet."""
        with self._cond:
            if key in self._armed:
                self._armed.discard(key)
                return True
            return False

    @property
    def armed(self) -> int:
        """How many actions wait for their time."""
        with self._cond:
            return len(self._armed)

    def _next(self) -> Callable[[], None] | None:
        """Wait for the next action that is due (``None``: idle for :data:`IDLE_SECONDS`)."""
        with self._cond:
            while True:
                while self._heap and self._heap[0][1] not in self._armed:
                    heapq.heappop(self._heap)
                if not self._heap:
                    if not self._cond.wait(IDLE_SECONDS) and not self._heap:
                        self._thread = None
                        return None
                    continue
                when, key, action = self._heap[0]
                now = self._clock()
                if when > now:
                    self._cond.wait(when - now)
                    continue
                heapq.heappop(self._heap)
                self._armed.discard(key)
                return action

    def _run(self) -> None:
        while True:
            action = self._next()
            if action is None:
                return
            try:
                action()
            except Exception:  # one failing action must not stop the others
                logger.debug("deadline action failed", exc_info=True)


_DEADLINES: Deadlines | None = None
_LOCK = threading.Lock()


def deadlines() -> Deadlines:
    """Return the process's deadlines (made on first use)."""
    global _DEADLINES
    with _LOCK:
        if _DEADLINES is None:
            _DEADLINES = Deadlines()
        return _DEADLINES
