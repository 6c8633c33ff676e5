"""The resource manager's rate limits as a connection keeps them: buckets per subscription.

The service keeps a bucket of reads (GET, HEAD) and one of writes (every other method) per
caller and subscription, and one of each above any subscription (the tenant). A connection
keeps the same (:class:`ArmBuckets`), shared by every call and thread on it, so together they
keep the rate. Each bucket starts at the documented size and rate; each answer's header of what
the service has left for the caller then sets what it holds
(:meth:`~toolkit._core.concurrency.RateLimiter.finished`), and a header naming the other bucket
teaches the connection that the service counts that method otherwise. Other families pace their
fan-outs themselves (:func:`~toolkit._core.concurrency.shared_limiter`).

Some resource providers keep a quota of their own besides (policy insights:
:data:`~toolkit._spec.arm.PROVIDER_QUOTAS`): a request under such a provider takes a token from
the provider's bucket too (of the subscription, or above any), which its answer's count of what
is left then sets, as for the resource manager's; a 429 halves the bucket that refused it (the
one whose count or error code the answer names, else the provider's). A tenant-wide read can
be held by the provider's quota while the resource manager's buckets still have room:
:meth:`ArmBuckets.waited` tells which budget the connection waited for, and
:func:`quotas_left` reads an answer's provider counts (progress bars and ``df.attrs``).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Mapping
from typing import cast
from urllib.parse import urlsplit

from toolkit._core.concurrency import ARM_WRITE_RATE, FAMILY_RATES, RateLimiter
from toolkit._core.messages import Response
from toolkit._spec.arm import (
    POLICY_INSIGHTS_BUCKET,
    POLICY_INSIGHTS_REFILL_PER_SECOND,
    PROVIDER_QUOTAS,
    READ_BUCKET,
    WRITE_BUCKET,
)

logger = logging.getLogger(__name__)

__all__ = ["ArmBuckets", "BucketPair", "header_count", "provider_quota", "quotas_left"]

#: The error codes of the resource manager's own 429s (``SubscriptionRequestsThrottled``,
#: ``TenantRequestsThrottled``), as the body of an answer names them.
_MANAGER_REFUSAL = re.compile(rb'"code"\s*:\s*"(?:Subscription|Tenant)RequestsThrottled"')

#: The size and refill of each provider quota's bucket, as the connection starts it.
_QUOTA_LIMITS = {name: (POLICY_INSIGHTS_REFILL_PER_SECOND, POLICY_INSIGHTS_BUCKET)
                 for name in PROVIDER_QUOTAS}

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


def provider_quota(url: str) -> str | None:
    """Tell which provider quota a request draws on, if any.

    Parameters
    ----------
    url : str
        The request's absolute URL.

    Returns
    -------
    str or None
        The quota's name (a key of :data:`~toolkit._spec.arm.PROVIDER_QUOTAS`) when the path
        is under that provider (``/providers/<namespace>.<word>/``, any namespace word and
        case), else ``None``.
    """
    path = urlsplit(url).path.lower()
    for name, word in PROVIDER_QUOTAS.items():
        marker = f".{word.lower()}/"
        at = path.find(marker)
        if at > 0 and path.rfind("/providers/", 0, at) >= 0:
            return name
    return None


def quotas_left(headers: Mapping[str, str], header_prefix: str) -> dict[str, int]:
    """Read the provider quotas an answer reports: what each has left for the caller.

    Parameters
    ----------
    headers : Mapping
        The answer's headers (case-insensitive).
    header_prefix : str
        The cloud's header prefix (``x-ms-``).

    Returns
    -------
    dict
        Quota name -> requests left, for each quota the answer counts, under
        ``<prefix>ratelimit-remaining-<name>-requests`` or the same with ``subscription-`` or
        ``tenant-`` before the name (both forms are seen in the service's answers).
    """
    out: dict[str, int] = {}
    for name in PROVIDER_QUOTAS:
        for scope in ("", "subscription-", "tenant-"):
            left = header_count(headers.get(f"{header_prefix}ratelimit-remaining-{scope}{name}"
                                          "-requests"))
            if left is not None:
                out[name] = left
                break
    return out


class BucketPair:
    """The two buckets a provider's request takes from: the provider's and the resource manager's.

    It stands for one bucket where the pipeline's retries take one (:meth:`acquire` before each
    attempt sent again, :meth:`throttled` on a 429).

    Parameters
    ----------
    quota : RateLimiter
        The provider quota's bucket.
    arm : RateLimiter
        The resource manager's bucket of the request.
    """

    def __init__(self, quota: RateLimiter, arm: RateLimiter, *, name: str,
                 header_prefix: str) -> None:
        self.quota = quota
        self.arm = arm
        self.name = name
        self.header_prefix = header_prefix

    def acquire(self) -> None:
        """Wait for a token of each bucket, the provider's first."""
        self.quota.acquire()
        self.arm.acquire()

    def refusing(self, headers: Mapping[str, str], body: bytes = b"") -> RateLimiter:
        """Tell which bucket a 429 answer is the refusal of.

        Parameters
        ----------
        headers : Mapping
            The 429 answer's headers.
        body : bytes
            Its body (the error's code).

        Returns
        -------
        RateLimiter
            The provider's bucket when its count says it is used up; the resource manager's
            when one of its counts says so, or its error code is one of the manager's own
            refusals (``SubscriptionRequestsThrottled``, ``TenantRequestsThrottled``); else the
            provider's (a refusal on its path that is not the manager's).
        """
        if quotas_left(headers, self.header_prefix).get(self.name) == 0:
            return self.quota
        stem = f"{self.header_prefix}ratelimit-remaining-"
        if any(header_count(headers.get(f"{stem}{scope}-{kind}")) == 0
               for scope in ("subscription", "tenant") for kind in ("reads", "writes")):
            return self.arm
        return self.arm if _MANAGER_REFUSAL.search(body[:4096]) else self.quota

    def throttled(self, wait: float | None) -> None:
        """Empty both buckets until the wait has passed and halve their rates."""
        self.quota.throttled(wait)
        self.arm.throttled(wait)


def header_count(value: str | None) -> int | None:
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
        quota = provider_quota(url)
        if quota is not None:
            return self._metered_quota(quota, url, method, send)
        bucket = self._bucket(write, where)
        ticket = bucket.started()
        remaining = None
        try:
            response = send(bucket)
            remaining = self._counted(response.headers, method, write, where)
            return response
        finally:
            bucket.finished(remaining, ticket)

    def _metered_quota(self, name: str, url: str, method: str,
                       send: Callable[[RateLimiter], Response]) -> Response:
        """Send a provider's request within its quota's bucket and the resource manager's."""
        write, where = self._arm_request(url, method)
        quota = self._named(f"{name}/{where}", *_QUOTA_LIMITS[name])
        arm = self._bucket(write, where)
        quota_ticket = quota.started()
        arm_ticket = arm.started()
        left = remaining = None
        try:
            response = send(cast(RateLimiter, BucketPair(quota, arm, name=name,
                                                         header_prefix=self.header_prefix)))
            remaining = self._counted(response.headers, method, write, where)
            left = quotas_left(response.headers, self.header_prefix).get(name)
            return response
        finally:
            arm.finished(remaining, arm_ticket)
            quota.finished(left, quota_ticket)

    def waited(self) -> dict[str, float]:
        """Tell how long the connection waited for each budget, in seconds.

        Returns
        -------
        dict
            ``reads``, ``writes`` and each provider quota's name -> the seconds requests
            waited for a token of its buckets (every subscription and the tenant together):
            the largest is the budget that held the connection back.
        """
        out: dict[str, float] = {}
        with self._lock:
            buckets = list(self._buckets.items())
        for key, bucket in buckets:
            kind = key.split("/", 1)[0]
            out[kind] = out.get(kind, 0.0) + bucket.waited
        return out

    def _arm_request(self, url: str, method: str) -> tuple[bool, str]:
        """Tell whether a request is counted as a write (as the service showed), and where."""
        write, where = _arm_bucket(url, method)
        return self._counted_as.get(method.upper(), write), where

    def _bucket(self, write: bool, where: str) -> RateLimiter:
        """Return the bucket of reads or writes of ``where`` (made on first use)."""
        rate, size = ((ARM_WRITE_RATE, WRITE_BUCKET) if write
                      else (FAMILY_RATES["arm"], READ_BUCKET))
        return self._named(f"{'writes' if write else 'reads'}/{where}", rate, size)

    def _named(self, key: str, rate: float, size: int) -> RateLimiter:
        """Return the bucket of that key, made with that rate and size on first use."""
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
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
        reads = header_count(headers.get(stem + "reads"))
        writes = header_count(headers.get(stem + "writes"))
        if (reads is None) == (writes is None) or (writes is not None) == write:
            return writes if write else reads
        verb = method.upper()
        if self._counted_as.get(verb) is None:
            logger.debug("the service counts %s requests as %s", verb,
                         "reads" if write else "writes")
        self._counted_as[verb] = not write
        self._bucket(not write, where).observe(reads if write else writes)
        return None
