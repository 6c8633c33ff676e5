"""Fan-out: many requests run concurrently within a service's rate, results in input order.

A service's documented rate holds for the caller, not for one call: :func:`shared_limiter` keeps
one :class:`RateLimiter` per connection and service, which every fan-out on that connection (two
cells, a widget firing while a cell runs, threads of the user's own) draws from.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

from toolkit._core.cancel import Cancellation, cancellable, check_cancelled, current
from toolkit._core.errors import ToolkitError
from toolkit._core.progress import progress_bar
from toolkit._core.protocols import Running

logger = logging.getLogger(__name__)

__all__ = ["Outcome", "PerConnection", "RateLimiter", "fan_out", "settle", "shared_limiter"]

T = TypeVar("T")
R = TypeVar("R")

#: Requests per second each family allows one caller (documented limits, with a margin).
FAMILY_RATES = {"arm": 20.0, "maps": 45.0, "graph": 1.0, "fabric": 5.0}
#: Resource-manager writes a second: like reads, four fifths of the service's refill.
ARM_WRITE_RATE = 8.0


class RateLimiter:
    """A token bucket: at most ``rate`` starts per second, bursts up to ``burst``.

    Parameters
    ----------
    rate : float
        Sustained requests per second.
    burst : int, optional
        Bucket size (default: the rate, at least 1).
    clock, sleep : callable
        Time source and wait (injectable for tests).
    """

    def __init__(self, rate: float, burst: int | None = None, *,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.rate = rate
        #: the rate to return to after the service refused requests (see :meth:`throttled`)
        self.base_rate = rate
        self.burst = burst if burst is not None else max(1, int(rate))
        self._tokens = float(self.burst)
        self._clock = clock
        self._sleep = sleep
        self._last = clock()
        self._lock = threading.Lock()
        self._in_flight = 0
        self._tickets = 0  # requests let through so far, in order
        #: seconds callers waited here for a token, in all
        self.waited = 0.0
        self._followed = 0  # the ticket of the request whose count the bucket follows
        #: whether the service's own count (:meth:`finished`) may also raise the bucket above
        #: what it holds here (until :meth:`configure` sets limits of the caller's own)
        self.follows_service = True

    def configure(self, rate: float, burst: int) -> None:
        """Set new limits, starting from a full bucket.

        They are the caller's own: from now on the service's count can lower the bucket, never raise
        it.
        """
        with self._lock:
            self.rate, self.base_rate, self.burst = rate, rate, burst
            self._tokens = float(burst)
            self._last = self._clock()
            self.follows_service = False

    def started(self) -> int:
        """Wait for a token (:meth:`acquire`) for a request whose answer reports what is left.

        The answer will say what the service has left (:meth:`finished`). Returns the request's
        ticket (its place in the order the requests were let through).
        """
        return self._take(started=True)

    def finished(self, remaining: int | None, ticket: int | None = None) -> None:
        """Note that a request begun with :meth:`started` is answered.

        ``remaining`` is the service's own count of what is left in the caller's bucket (its
        rate-limit header), if it sent one.

        The bucket then holds that count less the requests still on their way (which the
        service may not have counted yet): lower when other clients of the same caller have
        used the bucket, higher when the service has more room than the documented one
        (unless :meth:`configure` set limits of the caller's own). Between answers it refills
        at ``rate``. With the ``ticket`` :meth:`started` gave, an answer to a request sent
        before the one whose count the bucket follows now (an older count, answered late) is
        not followed.
        """
        with self._lock:
            self._in_flight = max(0, self._in_flight - 1)
            # after a refusal the rate comes back a little with each answer
            self.rate = min(self.base_rate, self.rate + self.base_rate / 32)
            if ticket is not None:
                if ticket < self._followed:
                    return
                self._followed = ticket
            self._follow(remaining)

    def throttled(self, wait: float | None) -> None:
        """Empty the bucket and halve the rate: the service refused a request for want of tokens.

        The service asked to wait ``wait`` seconds: the bucket is empty until then (its next token
        comes at the wait's end, for the refused request sent again), and the rate is halved (at
        most down to a sixteenth), coming back with each answer (:meth:`finished`). Several clients
        of one caller (the workers of a cluster) each keep their own bucket and learn of one another
        only this way and by the service's count: halving is what makes them, together, fit the
        caller's budget instead of being refused again together.
        """
        with self._lock:
            now = self._clock()
            self._last = now
            self.rate = max(self.base_rate / 16, self.rate / 2)
            self._tokens = 1.0 - max(0.0, wait or 0.0) * self.rate  # one token at the wait's end

    def observe(self, remaining: int | None) -> None:
        """Follow the service's count of what is left in this bucket, as in :meth:`finished`.

        The count comes from the answer to a request that did not take its token here (one the
        service counted in this bucket though the connection took it from another).
        """
        with self._lock:
            self._follow(remaining)

    def _follow(self, remaining: int | None) -> None:
        if remaining is None:
            return
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
        self._last = now
        said = float(max(0, min(self.burst, remaining - self._in_flight)))
        self._tokens = said if self.follows_service else min(self._tokens, said)

    def acquire(self) -> None:
        """Wait until a request may start."""
        self._take(started=False)

    def _take(self, *, started: bool) -> int:
        """Wait for a token and take it.

        A request :meth:`started` is counted on its way in the same step, so that no answer in
        between can give its token out again.
        """
        while True:
            with self._lock:
                now = self._clock()
                self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
                self._last = now
                if self._tokens >= 1:
                    self._tokens -= 1
                    self._tickets += 1
                    if started:
                        self._in_flight += 1
                    return self._tickets
                wait = (1 - self._tokens) / self.rate
                self.waited += wait
            self._sleep(wait)


class PerConnection(Generic[T]):
    """One object per connection and service, made on first use, forgotten with the connection.

    Every call and thread using a connection gets the same object for a service (a rate
    limiter, a quota), so that together they keep to what the service allows.
    """

    def __init__(self) -> None:
        self._table: dict[int, dict[str, T]] = {}
        self._lock = threading.Lock()

    def get(self, connection: Running, service: str, make: Callable[[], T]) -> T:
        """Return the connection's object for ``service``, made with ``make()`` the first time."""
        key = id(connection)
        with self._lock:
            per = self._table.get(key)
            if per is None:
                per = self._table[key] = {}
                weakref.finalize(connection, self._forget, key)
            found = per.get(service)
            if found is None:
                found = per[service] = make()
            return found

    def _forget(self, key: int) -> None:
        with self._lock:
            self._table.pop(key, None)


_LIMITERS: PerConnection[RateLimiter] = PerConnection()


def shared_limiter(connection: Running, service: str, rate: float,
                   burst: int | None = None) -> RateLimiter:
    """Get the rate limiter of ``service`` on ``connection``, made on first use.

    Then the same object for every call and thread using that connection (kept while the connection
    lives).

    Parameters
    ----------
    connection : Connection
        Gives the clock and the wait (``clock``, ``sleep_for``).
    service : str
        The name the rate is documented for (e.g. ``"maps.weather"``).
    rate, burst
        As :class:`RateLimiter`; the first caller's values hold for the connection's life.
    """
    return _LIMITERS.get(connection, service, lambda: RateLimiter(
        rate, burst, clock=connection.clock, sleep=connection.sleep_for))


@dataclass
class Outcome(Generic[T, R]):
    """The result of one item of a fan-out: its value, or the error it raised."""

    index: int
    item: T
    value: R | None = None
    error: ToolkitError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def result(self) -> R:
        """Return the value, or raise the error this item ended with."""
        if self.error is not None:
            raise self.error
        return cast(R, self.value)


def fan_out(
    func: Callable[[T], R],
    items: Sequence[T],
    *,
    connection: Running,
    desc: str,
    rate: float | None = None,
    max_workers: int | None = None,
    burst: int | None = None,
    service: str | None = None,
) -> list[Outcome[T, R]]:
    """Run ``func`` over ``items`` concurrently; outcomes come back in input order.

    Toolkit errors are captured per item (so one failure does not lose the others); anything
    else (a bug, or Ctrl-C in the caller) cancels the items still queued, stops the running ones
    at their next request or retry (nothing is sent after the interrupt reaches the caller), and
    propagates at once.

    Parameters
    ----------
    func : callable
        Called once per item.
    items : sequence
        The inputs.
    connection : Connection
        Gives ``max_concurrency`` and the progress setting.
    desc : str
        Progress bar label.
    rate : float, optional
        Requests per second at most (token bucket); ``None`` means no limit beyond concurrency.
    burst : int, optional
        Bucket size of the rate limiter (default: the rate); ``1`` spaces the starts evenly, so
        no window of one second holds more than ``rate`` (+1) starts.
    service : str, optional
        The name the rate is documented for (default: ``desc``): fan-outs of the same service
        on one connection share one limiter (:func:`shared_limiter`), so together they keep the
        rate.
    """
    outcomes: list[Outcome[T, R]] = [Outcome(i, item) for i, item in enumerate(items)]
    if not items:
        return outcomes
    limiter = shared_limiter(connection, service or desc, rate, burst) if rate else None
    workers = min(max_workers or connection.settings.max_concurrency, len(items))
    bar = progress_bar(connection, desc=desc, total=len(items))

    # a fan-out inside cancellable work (a pager's, another fan-out's) is cancelled with it
    cancelled = Cancellation(current())

    def run(outcome: Outcome[T, R]) -> None:
        with cancellable(cancelled):
            check_cancelled()
            if limiter is not None:
                limiter.acquire()
            check_cancelled()
            try:
                outcome.value = func(outcome.item)
            except ToolkitError as err:
                outcome.error = err
        bar.update(1)

    pool = None
    try:
        if workers == 1:
            for o in outcomes:
                run(o)
        else:
            pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="toolkit")
            for future in [pool.submit(run, o) for o in outcomes]:
                future.result()
    except BaseException:
        cancelled.set()
        raise
    finally:
        if pool is not None:
            # on an interrupt, drop what is queued and do not wait for the running ones (they
            # stop before their next request)
            pool.shutdown(wait=not cancelled.is_set(), cancel_futures=True)
        bar.close()
    return outcomes


def settle(outcomes: Sequence[Outcome[T, R]], *,
           fatal: tuple[type[ToolkitError], ...] = (),
           spared: tuple[type[ToolkitError], ...] = ()) -> Sequence[Outcome[T, R]]:
    """Apply the one rule of a batch: when every item failed, raise; otherwise keep errors as rows.

    Parameters
    ----------
    outcomes : sequence of Outcome
        What :func:`fan_out` returned.
    fatal : tuple of exception types
        Errors that end the whole call even when other items succeeded (bad credentials
        fail every item alike; ``(ToolkitError,)`` makes any failure end it).
    spared : tuple of exception types
        Errors that stay rows even when every item failed (a malformed answer about one batch
        says nothing about the others).

    Returns
    -------
    sequence of Outcome
        ``outcomes`` unchanged, for the caller to turn into rows (errors included).

    Raises
    ------
    ToolkitError
        The first fatal error, else the first error when every item failed with an error that
        is not spared.
    """
    failed = [o.error for o in outcomes if o.error is not None]
    for err in failed:
        if isinstance(err, fatal):
            raise err
    if failed and len(failed) == len(outcomes) and not isinstance(failed[0], spared):
        raise failed[0]
    return outcomes
