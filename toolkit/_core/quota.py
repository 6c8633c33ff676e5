"""A service's quota of requests per window, kept per connection and paced on the service's count.

Some services count a caller's requests in fixed windows rather than a refilling bucket: Resource
Graph allows each user a number of queries in every window of a few seconds, and says with each
answer how many are left (``x-ms-user-quota-remaining``) and when the window starts again
(``x-ms-user-quota-resets-after``, ``hh:mm:ss``). :class:`QuotaWindow` keeps such a quota on the
caller's side: a request waits for a place in the current window, and each answer's count and
reset time then set what the window holds, so that every call and thread on a connection together
stay within it instead of being refused. :func:`shared_quota` gives one per connection and
service.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Mapping

from toolkit._core.concurrency import PerConnection
from toolkit._core.protocols import Running
from toolkit._core.ratelimits import header_count

logger = logging.getLogger(__name__)

__all__ = ["QuotaWindow", "read_resets_after", "shared_quota"]

#: ``[d.]hh:mm:ss[.fff]``: how the service writes a time span.
_SPAN = re.compile(r"(?:(\d{1,4})\.)?(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,7}))?")
#: The longest wait a reset time may ask for: a day (a longer one is not believed).
MAX_RESET_SECONDS = 86_400.0
#: Added to each reset time before a request is sent again (the service writes whole seconds).
RESET_MARGIN = 0.05


def read_resets_after(value: str | None) -> float | None:
    """Read a reset time (``hh:mm:ss``, or a number of seconds) as seconds.

    Parameters
    ----------
    value : str, optional
        The header's value.

    Returns
    -------
    float or None
        The seconds until the window starts again; ``None`` when absent, not a time span, or
        longer than :data:`MAX_RESET_SECONDS`.
    """
    if value is None:
        return None
    text = value.strip()
    m = _SPAN.fullmatch(text)
    if m is not None:
        days, hours, minutes, seconds, fraction = m.groups()
        total = (int(days or 0) * 86_400 + int(hours) * 3600 + int(minutes) * 60 + int(seconds)
                 + (float(f"0.{fraction}") if fraction else 0.0))
    elif re.fullmatch(r"\d{1,6}(?:\.\d{1,6})?", text):
        total = float(text)
    else:
        return None
    return total if total <= MAX_RESET_SECONDS else None


class QuotaWindow:
    """A quota of ``limit`` requests in each window of ``window`` seconds.

    Parameters
    ----------
    limit : int
        Requests a window allows (the documented quota, until the service says otherwise).
    window : float
        The window's length in seconds.
    clock, sleep : callable
        Monotonic time source and wait (the connection's, injectable for tests).
    """

    def __init__(self, limit: int, window: float, *, clock: Callable[[], float],
                 sleep: Callable[[float], None]) -> None:
        if limit < 1 or window <= 0:
            raise ValueError("a quota allows at least one request in a window of some time")
        self.limit = limit
        self.window = window
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._left = limit
        self._resets_at: float | None = None  # unknown until the first request
        self._in_flight = 0
        #: seconds spent waiting for a window to start again, over the quota's life
        self.waited = 0.0

    def acquire(self) -> None:
        """Wait until the current window has room, and take a place in it."""
        while True:
            with self._lock:
                now = self._clock()
                if self._resets_at is None or now >= self._resets_at:
                    # a window starts: full, as the service counts it, less what is on its way
                    self._left = self.limit - self._in_flight
                    self._resets_at = now + self.window
                if self._left >= 1:
                    self._left -= 1
                    self._in_flight += 1
                    return
                wait = self._resets_at - now + RESET_MARGIN
            logger.debug("quota of %d a window used up; waiting %.2f s", self.limit, wait)
            self.waited += wait
            self._sleep(wait)

    def finished(self, headers: Mapping[str, str] | None, remaining_header: str,
                 resets_header: str) -> None:
        """Note that a request taken with :meth:`acquire` is answered, and follow its count.

        Parameters
        ----------
        headers : mapping, optional
            The answer's headers (``None`` when no answer came).
        remaining_header, resets_header : str
            The names of the headers of what is left and of the time until the window resets.
        """
        remaining = header_count(headers.get(remaining_header)) if headers is not None else None
        resets = read_resets_after(headers.get(resets_header)) if headers is not None else None
        with self._lock:
            self._in_flight = max(0, self._in_flight - 1)
            now = self._clock()
            if resets is not None:
                self._resets_at = now + resets
            if remaining is not None:
                # the service's count, less the requests still on their way (not yet counted)
                self._left = max(0, min(self.limit, remaining) - self._in_flight)

    def status(self) -> tuple[int, float]:
        """Tell what the window holds now.

        Returns
        -------
        tuple of (int, float)
            The requests left in the window and the seconds until it starts again (0 when it is
            over).
        """
        with self._lock:
            now = self._clock()
            if self._resets_at is None or now >= self._resets_at:
                return self.limit - self._in_flight, 0.0
            return self._left, self._resets_at - now


_QUOTAS: PerConnection[QuotaWindow] = PerConnection()


def shared_quota(connection: Running, service: str, limit: int, window: float) -> QuotaWindow:
    """Get the quota of ``service`` on ``connection``, made on first use.

    Then the same object for every call and thread using that connection (kept while the
    connection lives), so that together they keep the quota.

    Parameters
    ----------
    connection : Connection
        Gives the clock and the wait (``clock``, ``sleep_for``).
    service : str
        The name the quota is documented for (e.g. ``"arm.resourcegraph"``).
    limit, window
        As :class:`QuotaWindow`; the first caller's values hold for the connection's life.

    Returns
    -------
    QuotaWindow
        The connection's quota of that service.
    """
    return _QUOTAS.get(connection, service, lambda: QuotaWindow(
        limit, window, clock=connection.clock, sleep=connection.sleep_for))
