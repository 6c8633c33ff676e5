"""The resource manager's rate limits as a connection keeps them: buckets per subscription.

The service keeps a bucket of reads (GET, HEAD) and one of writes (every other method) per
caller and subscription, and one of each above any subscription (the tenant). A connection
keeps the same (:class:`ArmBuckets`), shared by every call and thread on it, so together they
keep the rate. Each bucket starts at the documented size and rate; each answer's header of what
the service has left for the caller then sets what it holds
(:meth:`~toolkit._core.concurrency.RateLimiter.finished`), and a header naming the other bucket
teaches the connection that the service counts that method otherwise. Other families pace their
fan-outs themselves (:func:`~toolkit._core.concurrency.shared_limiter`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

from toolkit._core.concurrency import ARM_WRITE_RATE, FAMILY_RATES, RateLimiter
from toolkit._core.messages import Response
from toolkit._spec.arm import READ_BUCKET, WRITE_BUCKET

logger = logging.getLogger(__name__)

__all__ = ["ArmBuckets"]

#: The methods the resource manager counts as reads; every other one is a write (a POST query
#: or action included), unless the service's own header says otherwise.
_ARM_READS = frozenset({"GET", "HEAD"})


def _arm_bucket(url: str, method: str) -> tuple[bool, str]:
    """Tell whether a request is a write, and where it is counted.

    Parameters
    ----------
    url : str
        The request's absolute URL.
    method : str
        Its HTTP method.

    Returns
    -------
    tuple of (bool, str)
        Whether the method is a write, and the subscription (lower case) whose buckets it
        draws from, or ``"tenant"`` above any subscription.
    """
    write = method.upper() not in _ARM_READS
    parts = urlsplit(url).path.strip("/").split("/")
    where = parts[1].lower() if len(parts) > 1 and parts[0].lower() == "subscriptions" \
        else "tenant"
    return write, where


def _remaining(value: str | None) -> int | None:
    """Read a rate-limit header's count.

    Parameters
    ----------
    value : str, optional
        The header's value.

    Returns
    -------
    int or None
        The count; ``None`` when absent or not a count.
    """
    if value is None:
        return None
    value = value.strip()
    return int(value) if value.isdigit() and len(value) < 10 else None


class ArmBuckets:
    """A connection's buckets of resource-manager reads and writes, per subscription.

    Parameters
    ----------
    header_prefix : str
        The cloud's header prefix (its rate-limit headers start with it).
    clock, sleep : callable
        The connection's monotonic clock and wait, handed to each bucket.
    """

    def __init__(self, header_prefix: str, *, clock: Callable[[], float],
                 sleep: Callable[[float], None]) -> None:
        self.header_prefix = header_prefix
        self._clock = clock
        self._sleep = sleep
        self._buckets: dict[str, RateLimiter] = {}
        self._lock = threading.Lock()
        #: methods the service's rate-limit headers showed it counts otherwise than
        #: _arm_bucket does (method -> counted as a write)
        self._counted_as: dict[str, bool] = {}

    def limiter(self, url: str, method: str = "GET") -> RateLimiter:
        """Return the bucket a request takes a token from before it is sent.

        Parameters
        ----------
        url : str
            The request's absolute URL (its subscription, or none).
        method : str
            Its HTTP method: reads and writes have buckets of their own, until the service's
            answers show it counts a method otherwise.

        Returns
        -------
        RateLimiter
            The bucket, made on first use.
        """
        return self._bucket(*self._arm_request(url, method))

    def metered(self, url: str, method: str,
                send: Callable[[RateLimiter], Response]) -> Response:
        """Send a request within its bucket, and let the answer's count set the bucket.

        Parameters
        ----------
        url : str
            The request's absolute URL.
        method : str
            Its HTTP method.
        send : callable
            ``bucket -> Response``: sends the request, each attempt after the first taking a
            token from the bucket it is given.

        Returns
        -------
        Response
            What ``send`` returned.
        """
        write, where = self._arm_request(url, method)
        bucket = self._bucket(write, where)
        ticket = bucket.started()
        remaining = None
        try:
            response = send(bucket)
            remaining = self._counted(response.headers, method, write, where)
            return response
        finally:
            bucket.finished(remaining, ticket)

    def _arm_request(self, url: str, method: str) -> tuple[bool, str]:
        """Tell whether a request is counted as a write (as the service showed), and where."""
        write, where = _arm_bucket(url, method)
        return self._counted_as.get(method.upper(), write), where

    def _bucket(self, write: bool, where: str) -> RateLimiter:
        """Return the bucket of reads or writes of ``where`` (made on first use)."""
        key = f"{'writes' if write else 'reads'}/{where}"
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                rate, size = ((ARM_WRITE_RATE, WRITE_BUCKET) if write
                              else (FAMILY_RATES["arm"], READ_BUCKET))
                bucket = self._buckets[key] = RateLimiter(
                    rate, size, clock=self._clock, sleep=self._sleep)
            return bucket

    def _counted(self, headers: Mapping[str, str], method: str, write: bool,
                 where: str) -> int | None:
        """Return what the service says is left in the bucket the request was taken from.

        When its header names the other bucket (reads for writes, or the reverse), requests of
        this method are counted there from now on, and that bucket follows the count.
        """
        stem = (f"{self.header_prefix}ratelimit-remaining-"
                f"{'tenant' if where == 'tenant' else 'subscription'}-")
        reads = _remaining(headers.get(stem + "reads"))
        writes = _remaining(headers.get(stem + "writes"))
        if (reads is None) == (writes is None) or (writes is not None) == write:
            return writes if write else reads
        verb = method.upper()
        if self._counted_as.get(verb) is None:
            logger.debug("the service counts %s requests as %s", verb,
                         "reads" if write else "writes")
        self._counted_as[verb] = not write
        self._bucket(not write, where).observe(reads if write else writes)
        return None
