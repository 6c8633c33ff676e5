"""The azure-core policies of a family's pipeline, other than authentication.

Retries narrowed to the toolkit's rules (:class:`ToolkitRetryPolicy`), a client request id on
every request, the origin rule held once more just before a credential is attached
(:class:`OriginGuard`), the attempts counted (:class:`Stats`), and logging that shows only the
headers and query parameters that carry no secret.
"""

from __future__ import annotations

import logging
import math
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any

from azure.core.pipeline import PipelineRequest, PipelineResponse
from azure.core.pipeline.policies import HttpLoggingPolicy, RetryPolicy, SansIOHTTPPolicy
from azure.core.pipeline.transport import HttpTransport
from azure.core.rest import HttpRequest, HttpResponse

from toolkit._core.cancel import check_cancelled
from toolkit._core.config import FamilyConfig
from toolkit._core.errors import RetryWaitWarning, warn_user
from toolkit._core.protocols import Counts
from toolkit._core.urls import check_origin, short

logger = logging.getLogger(__name__)

__all__ = ["RETRY_STATUSES", "CountingPolicy", "OriginGuard", "RequestIdPolicy", "Stats",
           "ToolkitRetryPolicy", "logging_policy"]

#: Status codes retried (with Retry-After honoured, else exponential backoff).
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})

_Request = PipelineRequest[HttpRequest]
_Response = PipelineResponse[Any, Any]


@dataclass
class Stats:
    """Counts kept per connection: attempts, retries, throttled answers, transport errors."""

    requests: int = 0
    attempts: int = 0
    retries: int = 0
    throttled: int = 0
    server_errors: int = 0
    transport_errors: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, **kw: int) -> None:
        """Add to the counts named (thread-safe).

        Parameters
        ----------
        **kw : int
            Count name -> how many to add.
        """
        with self._lock:
            for k, v in kw.items():
                setattr(self, k, getattr(self, k) + v)

    def as_dict(self) -> dict[str, int]:
        """Return the counts.

        Returns
        -------
        dict
            Count name -> count.
        """
        return {k: getattr(self, k) for k in ("requests", "attempts", "retries", "throttled",
                                              "server_errors", "transport_errors")}


def _body(response: _Response) -> bytes:
    """Give an answer's body when it has been read, else nothing."""
    try:
        content = response.http_response.content
    except Exception:  # a body not read (streamed) says nothing here
        return b""
    return content if isinstance(content, bytes) else b""


class ToolkitRetryPolicy(RetryPolicy[HttpRequest, HttpResponse]):
    """azure-core's retry policy, narrowed to the toolkit's rules.

    * only 408, 429 and 5xx are retried (a 4xx with a ``Retry-After`` header is not);
    * a request marked non-idempotent is retried only on 429 and on connection errors where the
      request never left;
    * a request may name statuses it handles itself (``no_retry``), e.g. a batch's 408 that is
      split instead of sent again;
    * a ``Retry-After`` longer than ``max_retry_wait`` stops the retries: the caller raises
      RateLimitError with the wait the service asked for;
    * a 429 without ``Retry-After`` backs off exponentially and says so in the log;
    * with the request's rate-limit bucket (``toolkit_bucket``): a 429 empties it until the
      ``Retry-After`` has passed and halves its rate (RateLimiter.throttled: the connection's
      other requests wait too), and every attempt sent again takes a token from it after its
      wait, as the service counts every attempt.

    Parameters
    ----------
    max_retry_wait : float
        The longest ``Retry-After`` waited for, in seconds.
    stats : Counts
        The connection's counters (a :class:`Stats`).
    **kw
        RetryPolicy's own settings.
    """

    def __init__(self, *, max_retry_wait: float, stats: Counts, **kw: Any) -> None:
        super().__init__(**kw)
        self.max_retry_wait = max_retry_wait
        self.stats = stats

    def get_retry_after(self, response: _Response) -> float | None:
        """Return the ``Retry-After`` wait in seconds.

        A value that cannot be read (not a number nor an HTTP date, or not finite) counts as
        absent, a negative one as 0.

        Parameters
        ----------
        response : PipelineResponse
            The answer.

        Returns
        -------
        float or None
            Seconds, or ``None`` when the answer names no usable wait.
        """
        try:
            value = super().get_retry_after(response)
        except (ValueError, TypeError, OverflowError):
            value = float("nan")
        if value is None:
            return None
        if not math.isfinite(value):
            logger.info("unreadable Retry-After %r from %s: ignored",
                        response.http_response.headers.get("Retry-After"),
                        short(response.http_request.url))
            return None
        return max(0.0, value)

    def configure_retries(self, options: dict[str, Any]) -> dict[str, Any]:
        """Return azure-core's retry settings plus the request's own statuses and bucket.

        Parameters
        ----------
        options : dict
            The request's options (``toolkit_no_retry``, ``toolkit_bucket`` taken out).

        Returns
        -------
        dict
            The settings of this request's retries.
        """
        settings = super().configure_retries(options)
        settings["no_retry"] = options.pop("toolkit_no_retry", frozenset())
        settings["bucket"] = options.pop("toolkit_bucket", None)
        return settings

    def is_retry(self, settings: dict[str, Any], response: _Response) -> bool:
        """Tell whether an answer is to be asked for again, by the rules above.

        Parameters
        ----------
        settings : dict
            The request's retry settings.
        response : PipelineResponse
            The answer.

        Returns
        -------
        bool
            Whether to send the request again.
        """
        status = response.http_response.status_code
        if status not in RETRY_STATUSES or not settings["total"] \
                or status in settings["no_retry"]:
            return False
        if status == 429:
            self.stats.add(throttled=1)
            bucket = settings["bucket"]
            if bucket is not None:
                # a provider's request takes from two buckets: the one the answer says refused
                refusing = getattr(bucket, "refusing", None)
                if refusing is not None:
                    bucket = refusing(response.http_response.headers, _body(response))
                bucket.throttled(self.get_retry_after(response))
        elif status >= 500:
            self.stats.add(server_errors=1)
        idempotent = response.http_request.method.upper() in settings["methods"]
        if not idempotent and status != 429:
            return False
        retry_after = self.get_retry_after(response)
        if retry_after is not None and retry_after > self.max_retry_wait:
            warn_user(f"{short(response.http_request.url)} asked to wait {retry_after:.0f} s "
                      f"before asking again, more than max_retry_wait="
                      f"{self.max_retry_wait:.0f} s: not waiting (raise max_retry_wait in "
                      "toolkit.connect() to let the toolkit wait)", RetryWaitWarning)
            return False
        if retry_after is None and status == 429:
            logger.info("HTTP 429 without Retry-After from %s: backing off %.1f s on our own",
                        short(response.http_request.url), self.get_backoff_time(settings) or 0.8)
        return True

    def increment(self, settings: dict[str, Any], response: Any = None,
                  error: Any = None) -> bool:
        """Count an attempt that failed; tell whether retries are left.

        Parameters
        ----------
        settings : dict
            The request's retry settings.
        response : PipelineResponse, optional
            The failed answer.
        error : Exception, optional
            The transport's failure.

        Returns
        -------
        bool
            Whether another attempt may be made.
        """
        active: bool = super().increment(settings, response=response, error=error)
        if active:
            self.stats.add(retries=1)
            if error is not None:
                self.stats.add(transport_errors=1)
        return active

    def sleep(self, settings: dict[str, Any], transport: HttpTransport[Any, Any],
              response: _Response | None = None) -> None:
        """Wait before the next attempt, then take a token from the request's bucket.

        Parameters
        ----------
        settings : dict
            The request's retry settings.
        transport : HttpTransport
            The transport whose sleep waits.
        response : PipelineResponse, optional
            The answer that asked for the wait.
        """
        super().sleep(settings, transport, response=response)
        if settings["bucket"] is not None:
            settings["bucket"].acquire()

    def _sleep_backoff(self, settings: dict[str, Any],
                       transport: HttpTransport[Any, Any]) -> None:
        backoff = self.get_backoff_time(settings)
        if backoff <= 0:
            backoff = settings["backoff"]
        transport.sleep(backoff)


class CountingPolicy(SansIOHTTPPolicy[HttpRequest, HttpResponse]):
    """Count every attempt in the connection's :class:`Stats`.

    Parameters
    ----------
    stats : Counts
        The connection's counters (a :class:`Stats`).
    """

    def __init__(self, stats: Counts) -> None:
        self.stats = stats

    def on_request(self, request: _Request) -> None:
        """Count the attempt.

        Parameters
        ----------
        request : PipelineRequest
            The attempt about to be sent.
        """
        self.stats.add(attempts=1)


class RequestIdPolicy(SansIOHTTPPolicy[HttpRequest, HttpResponse]):
    """Give every request a client request id (a fresh UUID) unless it has one.

    Parameters
    ----------
    header : str
        The header's name (``<header prefix>client-request-id``).
    """

    def __init__(self, header: str) -> None:
        self._header = header

    def on_request(self, request: _Request) -> None:
        """Set the header when the request has none.

        Parameters
        ----------
        request : PipelineRequest
            The request about to be sent.
        """
        request.http_request.headers.setdefault(self._header, str(uuid.uuid4()))


class OriginGuard(SansIOHTTPPolicy[HttpRequest, HttpResponse]):
    """Hold the origin rule once more, the last check before a credential is attached.

    Every request already passed it in :meth:`~toolkit._core.pipeline.Pipeline.send`, which
    names the URL it checked in the request's options (``toolkit_origin_checked``): that exact
    URL is not read a second time on its first attempt; any other URL (and every further
    attempt) is checked here, so the rule holds for any request that reaches the pipeline
    another way.

    Parameters
    ----------
    config : FamilyConfig
        The family's origin and trusted hosts.
    """

    def __init__(self, config: FamilyConfig) -> None:
        self._config = config

    def on_request(self, request: _Request) -> None:
        """Refuse the request unless its origin is trusted (or the work is cancelled).

        Parameters
        ----------
        request : PipelineRequest
            The request about to be sent.
        """
        checked = request.context.options.pop("toolkit_origin_checked", None)
        check_cancelled()
        url = request.http_request.url
        if checked is not None and url == checked:
            return
        check_origin(self._config, url, None)


def logging_policy(header_prefix: str) -> HttpLoggingPolicy:
    """Return azure-core's logging policy, showing the headers and parameters safe to show.

    Parameters
    ----------
    header_prefix : str
        The cloud's header prefix (for the request-id and error-code headers).

    Returns
    -------
    HttpLoggingPolicy
        The policy; every other header and query value is redacted in the log.
    """
    policy = HttpLoggingPolicy()
    policy.allowed_header_names.update({
        f"{header_prefix}request-id", f"{header_prefix}error-code",
        f"{header_prefix}client-request-id", "Location", "Retry-After",
    })
    policy.allowed_query_params.update({
        "api-version", "$top", "$orderby", "$select", "$from", "$to", "$expand",
        "query", "top", "duration", "language", "bbox", "incidentType", "server-fqdn",
    })
    return policy
