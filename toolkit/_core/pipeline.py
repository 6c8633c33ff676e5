"""One azure-core pipeline per service family: auth, retries, user agent, redacted logging, and
the trust rules and caps every request is held to.

Families: ``arm`` (resource management), ``maps``, ``graph`` (identity) and ``fabric``
(eventstreams). Each gets its own :class:`Pipeline`, built from a frozen
:class:`~toolkit._core.config.FamilyConfig` over one pooled ``requests`` session. Bodies are parsed
with orjson.

Trust and caps, for every request (first page, next link, operation URL alike):

* a request goes only to the family's own origin (scheme, host, port) or a trusted host over
  https, and over plain http only to loopback; anything else is refused before it is sent
  (:class:`UntrustedOriginError`), so a credential never reaches another origin nor travels in
  clear. Redirects are never followed;
* the body is read within ``max_body_bytes`` (counted after decompression; gzip is asked for and
  decoded here) and within ``request_deadline`` however slowly it arrives
  (:class:`ResponseLimitError`);
* tokens a credential object hands out are registered as secrets while they are valid, so they
  are masked in every error text and log record.
"""

from __future__ import annotations

import contextlib
import logging
import math
import socket
import threading
import time
import uuid
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import orjson
import requests
from azure.core import PipelineClient
from azure.core.credentials import AccessToken
from azure.core.exceptions import (
    AzureError,
    ClientAuthenticationError,
    ServiceRequestError,
    ServiceResponseError,
)
from azure.core.pipeline.policies import (
    BearerTokenCredentialPolicy,
    HeadersPolicy,
    HttpLoggingPolicy,
    ProxyPolicy,
    RetryPolicy,
    SansIOHTTPPolicy,
    UserAgentPolicy,
)
from azure.core.pipeline.transport import RequestsTransport
from azure.core.rest import HttpRequest, HttpResponse

from toolkit._core.cache import cache_path, cached_session, forgetter, lifetime_header
from toolkit._core.cancel import check_cancelled, sending
from toolkit._core.concurrency import ARM_WRITE_RATE, FAMILY_RATES, RateLimiter
from toolkit._core.config import (
    PLAIN_HTTP_RULE,
    FamilyConfig,
    Origin,
    check_plain_http,
    check_verify,
    is_loopback,
)
from toolkit._core.deadlines import deadlines
from toolkit._core.errors import (
    AuthenticationError,
    ErrorInfo,
    ProtocolError,
    ResponseLimitError,
    RetryWaitWarning,
    ToolkitError,
    TransportError,
    UntrustedOriginError,
    ValidationError,
    error_from_response,
    warn_user,
)
from toolkit._core.provenance import note_sandbox_answer
from toolkit._core.secrets import Secret, install_log_redaction, redact
from toolkit._spec.arm import READ_BUCKET, WRITE_BUCKET
from toolkit._spec.common import SANDBOX_HEADER

logger = logging.getLogger(__name__)

__all__ = ["FAMILIES", "Pipeline", "Response", "Stats", "build_url", "is_loopback", "segment"]

FAMILIES = ("arm", "maps", "graph", "fabric")

#: Status codes retried (with Retry-After honoured, else exponential backoff).
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
_ALL_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE", "POST", "PATCH"})


@dataclass
class Response:
    """What a request gave back, body unparsed until asked."""

    status: int
    headers: Mapping[str, str]
    content: bytes
    url: str
    method: str
    operation: str | None = None
    header_prefix: str = "x-vendor-"
    #: Removes the answer from the response cache when it was stored there (see :meth:`refuse`).
    forget: Callable[[], None] | None = field(default=None, repr=False)
    _parsed: Any = field(default=None, repr=False)
    _has_parsed: bool = field(default=False, repr=False)

    @property
    def request_id(self) -> str | None:
        """The service's request id header (``<header prefix>request-id``), if any."""
        h = self.headers
        return (h.get(f"{self.header_prefix}request-id") or h.get("request-id")
                or h.get("requestid"))

    def refuse(self, message: str) -> ProtocolError:
        """The error for an answer that is not what the operation expects, with the answer
        removed from the response cache first: only answers the operation could read stay
        there, so the next call asks the service again."""
        if self.forget is not None:
            self.forget()
        return ProtocolError(message, url=self.url, status=self.status)

    def json(self) -> Any:
        """The body parsed with orjson; a body that is not JSON raises ProtocolError."""
        if self._has_parsed:
            return self._parsed
        if not self.content:
            return None
        try:
            self._parsed = orjson.loads(self.content)
            self._has_parsed = True
            return self._parsed
        except orjson.JSONDecodeError as err:
            raise self.refuse(
                f"{self.operation or 'request'}: the service sent a body that is not valid JSON "
                f"(HTTP {self.status}, {len(self.content)} bytes: {err}). This is usually a "
                "broken connection or a proxy in the way; try again.") from err

    def json_object(self) -> dict[str, Any]:
        """The body, which must be a JSON object: an empty body, an array, a string or a number
        raises ProtocolError saying what came instead."""
        body = self.json()
        if isinstance(body, dict):
            return body
        got = "an empty body" if body is None else f"a JSON {type(body).__name__}"
        raise self.refuse(
            f"{self.operation or 'request'}: expected a JSON object, the service sent {got} "
            f"(HTTP {self.status}). Try again; if it persists, the endpoint is not the service "
            "it should be.")


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
        with self._lock:
            for k, v in kw.items():
                setattr(self, k, getattr(self, k) + v)

    def as_dict(self) -> dict[str, int]:
        return {k: getattr(self, k) for k in ("requests", "attempts", "retries", "throttled",
                                              "server_errors", "transport_errors")}


class _BodyDecoder:
    """Content-Encoding decoding whose output never passes a byte budget (a gzip bomb stops at
    the cap, having inflated no more than it)."""

    def __init__(self, encoding: str) -> None:
        self.encoding = encoding
        if encoding in ("gzip", "x-gzip"):
            self._z: Any = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self._z = None  # zlib or raw deflate: decided on the first bytes
        elif encoding in ("", "identity"):
            self._z = False
        else:
            raise ProtocolError(f"the service sent a body encoded as {encoding!r}, which the "
                                "toolkit did not ask for")

    def feed(self, data: bytes, budget: int) -> bytes:
        """Decoded bytes of ``data`` (at most ``budget + 1``, enough to tell the cap is
        passed)."""
        if self._z is False:
            return data
        if self._z is None:
            wbits = zlib.MAX_WBITS if data[:1] and (data[0] & 0x0F) == 8 else -zlib.MAX_WBITS
            self._z = zlib.decompressobj(wbits)
        out: list[bytes] = []
        size = 0
        pending = data
        while True:
            try:
                chunk = self._z.decompress(pending, budget + 1 - size)
            except zlib.error as err:
                raise requests.exceptions.ContentDecodingError(err) from err
            out.append(chunk)
            size += len(chunk)
            pending = self._z.unconsumed_tail
            if not pending or size > budget:
                return out[0] if len(out) == 1 else b"".join(out)


#: The monotonic time by which the current thread's attempt must have its answer (set by the
#: adapter around each attempt; read by the connections while they wait for the headers).
_attempt_end = threading.local()

#: ``head -> done``: called with the start of a success body (decoded) while it still streams,
#: until it answers True (set by :meth:`Pipeline.send` for its own thread's request).
_head_watch = threading.local()


def _headers_deadline_guard(conn_cls: type) -> type:
    """A urllib3 connection class whose request is written only when the work it belongs to is
    not cancelled (:func:`~toolkit._core.cancel.sending`), and whose wait for the status line
    and headers ends at the attempt's deadline, however slowly the server drips them (each read
    alone is bounded only by ``read_timeout``): at the deadline the socket is shut down and
    ResponseLimitError raised."""

    class Guarded(conn_cls):
        def request(self, *args: Any, **kw: Any) -> Any:
            # connecting sends nothing of the request: its bytes are written only past the
            # last check of the work's cancellation, which then waits for them
            if getattr(self, "sock", None) is None:
                self.connect()
            with sending():
                return super().request(*args, **kw)

        def getresponse(self, *args: Any, **kw: Any) -> Any:
            end = getattr(_attempt_end, "value", None)
            if end is None:
                return super().getresponse(*args, **kw)
            expired = threading.Event()

            def expire() -> None:
                expired.set()
                sock = getattr(self, "sock", None)
                if sock is not None:
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)

            key = deadlines().arm(end, expire)
            try:
                return super().getresponse(*args, **kw)
            except Exception:
                if expired.is_set():
                    raise ResponseLimitError(
                        "the answer's headers took more than request_deadline; stopped "
                        "waiting for them. A slow or stalled server; try again, or raise "
                        "request_deadline in toolkit.connect() for a very slow network.",
                        limit="request_deadline") from None
                raise
            finally:
                deadlines().disarm(key)

    Guarded.__name__ = Guarded.__qualname__ = f"Deadline{conn_cls.__name__}"
    return Guarded


def _guarded_pools() -> dict[str, type]:
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    class Pool(HTTPConnectionPool):
        ConnectionCls = _headers_deadline_guard(HTTPConnectionPool.ConnectionCls)

    class TLSPool(HTTPSConnectionPool):
        ConnectionCls = _headers_deadline_guard(HTTPSConnectionPool.ConnectionCls)

    return {"http": Pool, "https": TLSPool}


class _BoundedBodyAdapter(requests.adapters.HTTPAdapter):
    """Reads a body that is not streamed in large reads (pages of several megabytes arrive
    several times faster than in requests' 10 kB chunks; a body of declared length goes straight
    into one buffer of its size), within the caps: at most
    ``max_body`` bytes after decompression, and the whole attempt within ``deadline`` seconds
    however slowly the bytes drip. Read errors map to the exceptions requests itself raises, so
    azure-core's retries see the same failures; a broken cap raises ResponseLimitError, which is
    not retried."""

    def __init__(self, *, max_body: int, deadline: float, read_timeout: float,
                 **kw: Any) -> None:
        super().__init__(**kw)
        self.max_body = max_body
        self.deadline = deadline
        self.read_timeout = read_timeout

    def init_poolmanager(self, *args: Any, **kw: Any) -> None:
        super().init_poolmanager(*args, **kw)
        self.poolmanager.pool_classes_by_scheme = _guarded_pools()

    def send(self, request: requests.PreparedRequest, stream: bool = False,
             timeout: Any = None, verify: bool | str = True, cert: Any = None,
             proxies: Mapping[str, str] | None = None) -> requests.Response:
        started = time.monotonic()
        _attempt_end.value = started + self.deadline
        try:
            response = super().send(request, stream=True, timeout=timeout, verify=verify,
                                    cert=cert, proxies=proxies)
        finally:
            _attempt_end.value = None
        if stream:
            return response
        response._content = self._read(response, started)
        # what requests itself records once a body is read
        setattr(response, "_content_consumed", True)  # noqa: B010
        return response

    def _over_deadline(self, response: Any) -> ResponseLimitError:
        response.close()
        return ResponseLimitError(
            f"the answer took more than request_deadline={self.deadline:g} s; stopped reading "
            "it. A slow or stalled server; try again, or raise request_deadline in "
            "toolkit.connect() for a very slow network.", limit="request_deadline",
            url=_short(response.url), status=response.status_code)

    def _too_large(self, response: Any, size: str) -> ResponseLimitError:
        response.close()
        return ResponseLimitError(
            f"the answer is larger than max_body_bytes={self.max_body} ({size}); not read. "
            "Ask for less (max_items, top, select) or raise max_body_bytes in "
            "toolkit.connect() if the service really sends pages this large.",
            limit="max_body_bytes", url=_short(response.url), status=response.status_code)

    def _read(self, response: Any, started: float) -> bytes:
        import urllib3.exceptions as u3

        end = started + self.deadline
        if time.monotonic() > end:
            raise self._over_deadline(response)
        declared = (response.headers.get("Content-Length") or "").strip()
        encoding = (response.headers.get("Content-Encoding") or "").strip().lower()
        if declared.isdigit() and int(declared) > self.max_body and not encoding:
            raise self._too_large(response, f"{int(declared)} bytes declared")
        try:
            decoder = _BodyDecoder(encoding)
        except ProtocolError:
            response.close()
            raise
        raw = response.raw
        watch = (getattr(_head_watch, "value", None) if 200 <= response.status_code < 300
                 else None)
        try:
            if declared.isdigit() and decoder.encoding in ("", "identity") \
                    and _has_body(response) and _exact_reads(raw):
                return self._read_exact(response, int(declared), end, watch)
            return self._read_chunks(response, decoder, end, watch)
        except u3.ProtocolError as err:
            raise requests.exceptions.ChunkedEncodingError(err) from err
        except u3.DecodeError as err:
            raise requests.exceptions.ContentDecodingError(err) from err
        except u3.ReadTimeoutError as err:
            raise requests.exceptions.ConnectionError(err) from err
        except u3.SSLError as err:
            raise requests.exceptions.SSLError(err) from err

    def _left(self, response: Any, end: float) -> None:
        """Raise when the attempt is past its deadline; else set the socket's timeout to at
        most the time left, while the connection is still this answer's (once complete it goes
        back to the pool, where another thread may take it)."""
        left = end - time.monotonic()
        if left <= 0:
            raise self._over_deadline(response)
        raw = response.raw
        conn = getattr(raw, "connection", None)
        sock = getattr(conn, "sock", None)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.settimeout(max(0.001, min(self.read_timeout, left)))

    def _timed_out(self, response: Any, end: float) -> ResponseLimitError | None:
        return self._over_deadline(response) if time.monotonic() >= end else None

    def _read_exact(self, response: Any, size: int, end: float,
                    watch: Callable[[bytes], bool] | None) -> bytes:
        """A body of a declared length, read into one ``bytes`` of that size: no chunk is
        copied again and no buffer grows (fresh pages of memory cost more than the copy itself
        on many machines). The reads are bounded by the socket's timeout each, and all together
        by the attempt's deadline, at which the socket is shut down."""
        import urllib3.exceptions as u3

        raw = response.raw
        sock = getattr(getattr(raw, "connection", None), "sock", None)
        expired = threading.Event()
        reading = threading.Lock()  # held while this answer owns the socket

        def expire() -> None:
            with reading:
                if done:
                    return
                expired.set()
                if sock is not None:
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)

        done = False
        self._left(response, end)
        key = deadlines().arm(end, expire)
        try:
            head = b""
            peek = getattr(raw._fp, "peek", None)
            if watch is not None and size and peek is not None:
                # the head as it sits in the reader's buffer (not taken from it, so the body
                # is still read into one buffer below); more of it only if the watcher needs it
                with raw._error_catcher():
                    watch = _watched(watch, peek(1)[:size])
            while watch is not None and len(head) < size:  # the head as it comes, for it
                data = raw.read1(min(_HEAD_BYTES, size) - len(head), decode_content=False)
                if not data:
                    break
                head += data
                watch = _watched(watch, head)
            with raw._error_catcher():
                # (read even when nothing is left: reading closes the answer, so that its
                # connection can serve the next request)
                rest: bytes = raw._fp.read(size - len(head))
                with reading:  # the connection may go back to the pool once this block ends
                    done = True
                if len(head) + len(rest) < size:  # closed before the declared length
                    raise u3.IncompleteRead(len(head) + len(rest), size - len(head) - len(rest))
        except (u3.HTTPError, OSError):
            if expired.is_set():
                raise self._over_deadline(response) from None
            raise
        finally:
            deadlines().disarm(key)
        # (a deadline that came as the last bytes did shut the socket: the pool finds it
        # dropped before it serves another request)
        raw.release_conn()  # done already when the last read closed the answer
        return head + rest if head else rest

    def _read_chunks(self, response: Any, decoder: _BodyDecoder, end: float,
                     watch: Callable[[bytes], bool] | None) -> bytes:
        """A body of unknown length (chunked, or compressed): read and decoded in large
        reads, joined once at the end."""
        import urllib3.exceptions as u3

        raw = response.raw
        parts: list[bytes] = []
        size = 0
        while True:
            self._left(response, end)
            try:
                data = raw.read1(_READ_BLOCK, decode_content=False)
            except u3.ReadTimeoutError:
                late = self._timed_out(response, end)
                if late is not None:
                    raise late from None
                raise
            if not data:
                break
            data = decoder.feed(data, self.max_body - size)
            size += len(data)
            if size > self.max_body:
                raise self._too_large(response, "after decompression"
                                      if decoder.encoding else "read so far")
            if data:
                parts.append(data)
            if watch is not None and parts:
                head = parts[0] if len(parts) == 1 else b"".join(parts)
                watch = _watched(watch, head[:_HEAD_BYTES])
        return parts[0] if len(parts) == 1 else b"".join(parts)


#: The methods the resource manager counts as reads; every other one is a write (a POST query
#: or action included), unless the service's own header says otherwise (see Pipeline.send).
_ARM_READS = frozenset({"GET", "HEAD"})


def _arm_bucket(url: str, method: str) -> tuple[bool, str]:
    """Whether a resource-manager request is a write, and the subscription (lower case) whose
    buckets it draws from, or ``"tenant"`` above any subscription."""
    write = method.upper() not in _ARM_READS
    parts = urlsplit(url).path.strip("/").split("/")
    where = parts[1].lower() if len(parts) > 1 and parts[0].lower() == "subscriptions" \
        else "tenant"
    return write, where


def _remaining(value: str | None) -> int | None:
    """A rate-limit header's count (``None`` when absent or not a count)."""
    if value is None:
        return None
    value = value.strip()
    return int(value) if value.isdigit() and len(value) < 10 else None


#: The largest single read of a body.
_READ_BLOCK = 1 << 20


def _has_body(response: Any) -> bool:
    """Whether the answer's Content-Length counts a body that follows (not for HEAD, 1xx, 204
    or 304, whose bodies are empty whatever the header says)."""
    method = getattr(getattr(response, "request", None), "method", "") or ""
    status = response.status_code
    return method.upper() != "HEAD" and status not in (204, 304) and status >= 200


def _exact_reads(raw: Any) -> bool:
    """Whether urllib3's answer lets a body of known length be read into a buffer of our own
    (its underlying ``http.client`` answer and its error mapping are there)."""
    return (hasattr(getattr(raw, "_fp", None), "read")
            and hasattr(raw, "_error_catcher") and hasattr(raw, "release_conn"))


#: The most of a body's start handed to a head watcher.
_HEAD_BYTES = 64 * 1024


def _watched(watch: Callable[[bytes], bool], head: bytes) -> Callable[[bytes], bool] | None:
    """Hand ``head`` to the watcher; the watcher to call with the next chunk, or ``None`` once
    it has seen enough (or failed: the body is read on regardless)."""
    try:
        done = watch(head)
    except Exception:  # the watcher's own failure must not fail the read
        logger.debug("head watcher failed", exc_info=True)
        return None
    return None if done or len(head) >= _HEAD_BYTES else watch


#: Requests one chain of pages keeps in flight at most: the page being read and those asked for
#: early (:mod:`toolkit._core.paging`). A connection pools enough connections for its widest
#: fan-out or partitioned read to keep theirs, instead of opening and discarding extras.
PAGES_IN_FLIGHT = 3


def _header_auth(request: requests.PreparedRequest) -> requests.PreparedRequest:
    """Authentication that leaves the request as the pipeline made it (see :func:`_session`)."""
    return request


def _session(config: FamilyConfig) -> requests.Session:
    """A plain session, or one answering reads from the response cache when it is on.

    The session's ``auth`` is set to one that changes nothing: without it, requests looks up
    ``~/.netrc`` (or ``$NETRC``) for every request and, when an entry matches the host (a
    ``default`` entry matches every host), replaces the pipeline's ``Authorization`` header
    with that entry's password: a secret of the user's sent to the service, and the call
    refused. The proxy settings of the environment still apply."""
    path = cache_path(config.settings.cache)
    session = requests.Session() if path is None else cached_session(path, config.header_prefix)
    session.auth = _header_auth
    return session


class _Transport(RequestsTransport):
    """RequestsTransport whose waits go through the configured sleeper (so tests never
    sleep)."""

    def __init__(self, sleeper: Any, **kw: Any) -> None:
        super().__init__(**kw)
        self._sleeper = sleeper

    def sleep(self, duration: float) -> None:
        check_cancelled()
        self._sleeper(duration)
        check_cancelled()


class _RetryPolicy(RetryPolicy[HttpRequest, HttpResponse]):
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
    """

    def __init__(self, *, max_retry_wait: float, stats: Stats, **kw: Any) -> None:
        super().__init__(**kw)
        self.max_retry_wait = max_retry_wait
        self.stats = stats

    def get_retry_after(self, response: Any) -> float | None:
        """The ``Retry-After`` wait in seconds; a value that cannot be read (not a number nor an
        HTTP date, or not finite) counts as absent, a negative one as 0."""
        try:
            value = super().get_retry_after(response)
        except (ValueError, TypeError, OverflowError):
            value = float("nan")
        if value is None:
            return None
        if not math.isfinite(value):
            logger.info("unreadable Retry-After %r from %s: ignored",
                        response.http_response.headers.get("Retry-After"),
                        _short(response.http_request.url))
            return None
        return max(0.0, value)

    def configure_retries(self, options: dict[str, Any]) -> dict[str, Any]:
        settings = super().configure_retries(options)
        settings["no_retry"] = options.pop("toolkit_no_retry", frozenset())
        settings["bucket"] = options.pop("toolkit_bucket", None)
        return settings

    def is_retry(self, settings: dict[str, Any], response: Any) -> bool:
        status = response.http_response.status_code
        if status not in RETRY_STATUSES or not settings["total"] \
                or status in settings["no_retry"]:
            return False
        if status == 429:
            self.stats.add(throttled=1)
            if settings["bucket"] is not None:
                settings["bucket"].throttled(self.get_retry_after(response))
        elif status >= 500:
            self.stats.add(server_errors=1)
        idempotent = response.http_request.method.upper() in settings["methods"]
        if not idempotent and status != 429:
            return False
        retry_after = self.get_retry_after(response)
        if retry_after is not None and retry_after > self.max_retry_wait:
            warn_user(f"{_short(response.http_request.url)} asked to wait {retry_after:.0f} s "
                      f"before asking again, more than max_retry_wait="
                      f"{self.max_retry_wait:.0f} s: not waiting (raise max_retry_wait in "
                      "toolkit.connect() to let the toolkit wait)", RetryWaitWarning)
            return False
        if retry_after is None and status == 429:
            logger.info("HTTP 429 without Retry-After from %s: backing off %.1f s on our own",
                        _short(response.http_request.url), self.get_backoff_time(settings) or 0.8)
        return True

    def increment(self, settings: dict[str, Any], response: Any = None, error: Any = None) -> bool:
        active = super().increment(settings, response=response, error=error)
        if active:
            self.stats.add(retries=1)
            if error is not None:
                self.stats.add(transport_errors=1)
        return active

    def sleep(self, settings: dict[str, Any], transport: Any, response: Any = None) -> None:
        super().sleep(settings, transport, response=response)
        if settings["bucket"] is not None:
            settings["bucket"].acquire()

    def _sleep_backoff(self, settings: dict[str, Any], transport: Any) -> None:
        backoff = self.get_backoff_time(settings)
        if backoff <= 0:
            backoff = settings["backoff"]
        transport.sleep(backoff)


class _CountingPolicy(SansIOHTTPPolicy[HttpRequest, HttpResponse]):
    def __init__(self, stats: Stats) -> None:
        self.stats = stats

    def on_request(self, request: Any) -> None:
        self.stats.add(attempts=1)


class _StaticTokenCredential:
    """A fixed bearer token presented as a credential."""

    def __init__(self, token: Secret) -> None:
        self._token = token

    def get_token(self, *scopes: str, **kw: Any) -> AccessToken:
        return AccessToken(_header_text(self._token), int(time.time()) + 365 * 24 * 3600)

    def __repr__(self) -> str:
        return "StaticToken(••••••••)"


class _RegisteredTokens:
    """A credential whose tokens are registered as secrets (masked in every error text and log
    record) for as long as they are valid; the last few are kept, expired ones let go."""

    _KEEP = 16

    def __init__(self, credential: Any) -> None:
        self._credential = credential
        self._lock = threading.Lock()
        self._live: dict[str, tuple[Secret, float]] = {}
        if hasattr(credential, "get_token_info"):
            self.get_token_info = self._get_token_info

    def _register(self, token: Any) -> Any:
        value = getattr(token, "token", None)
        if isinstance(value, str) and value:
            expires = float(getattr(token, "expires_on", 0) or 0)
            now = time.time()
            with self._lock:
                if value not in self._live:
                    self._live[value] = (Secret(value, "token"), expires)
                for old in [k for k, (_, exp) in self._live.items() if exp and exp < now]:
                    if old != value:
                        del self._live[old]
                while len(self._live) > self._KEEP:
                    del self._live[next(iter(self._live))]
        return token

    def get_token(self, *scopes: str, **kw: Any) -> Any:
        return self._register(self._credential.get_token(*scopes, **kw))

    def _get_token_info(self, *scopes: str, **kw: Any) -> Any:
        return self._register(self._credential.get_token_info(*scopes, **kw))

    def close(self) -> None:
        close = getattr(self._credential, "close", None)
        if callable(close):
            close()

    def __repr__(self) -> str:
        return repr(self._credential)


class _OriginGuard(SansIOHTTPPolicy[HttpRequest, HttpResponse]):
    """The last check before a credential is attached: the request's origin must be trusted
    (every request already passed it in :meth:`Pipeline.send`; this holds the rule for any
    request that reaches the pipeline another way)."""

    def __init__(self, config: FamilyConfig) -> None:
        self._config = config

    def on_request(self, request: Any) -> None:
        check_cancelled()
        _check_origin(self._config, request.http_request.url, None)


def _check_origin(config: FamilyConfig, url: str, operation: str | None) -> None:
    """Refuse a URL whose origin the family does not trust, naming the host."""
    origin = Origin.of(url)
    if origin is not None and config.trusts(origin):
        return
    own = config.origin
    what = f"{operation}: " if operation else ""
    if origin is None:
        raise UntrustedOriginError(
            f"{what}the service named a URL that is not an http(s) address ({url[:80]!r}); "
            "nothing was sent.", host="", url=None)
    if origin.scheme != "https" and not origin.loopback:
        why = PLAIN_HTTP_RULE
    elif origin.host == own.host and origin.port == own.port and origin.scheme != own.scheme:
        why = (f"it is {own.host} over {origin.scheme} instead of {own.scheme}; the credential "
               "is never sent over plain http")
    elif config.verify is False and not origin.loopback:
        why = "TLS verification is turned off, which is allowed for loopback addresses only"
    else:
        why = (f"it is not the {config.family} endpoint ({own}) nor a trusted host; if it is a "
               "private endpoint of the same service, add it to trusted_hosts "
               "(toolkit.connect(trusted_hosts=[...]) or TOOLKIT_TRUSTED_HOSTS)")
    raise UntrustedOriginError(
        f"{what}the service pointed the next request at {origin.host} ({origin}); it was "
        f"refused and nothing was sent there: {why}.", host=origin.host)


def _header_text(secret: Secret) -> str:
    """A credential as header text (a bytes value byte for byte, as HTTP headers are Latin-1)."""
    value = secret.reveal()
    return value.decode("latin-1") if isinstance(value, bytes) else value


class _MapsKeyPolicy(SansIOHTTPPolicy[HttpRequest, HttpResponse]):
    """Maps shared key (``subscription-key``) or SAS token (``Authorization: jwt-sas``)."""

    def __init__(self, key: Secret | None, sas: Secret | None) -> None:
        self._key = key
        self._sas = sas

    def on_request(self, request: Any) -> None:
        headers = request.http_request.headers
        if self._key:
            headers["subscription-key"] = _header_text(self._key)
        elif self._sas:
            headers["Authorization"] = f"jwt-sas {_header_text(self._sas)}"


class _ClientIdPolicy(SansIOHTTPPolicy[HttpRequest, HttpResponse]):
    def __init__(self, header: str, client_id: str) -> None:
        self._header = header
        self._client_id = client_id

    def on_request(self, request: Any) -> None:
        request.http_request.headers[self._header] = self._client_id


class _RequestIdPolicy(SansIOHTTPPolicy[HttpRequest, HttpResponse]):
    def __init__(self, header: str) -> None:
        self._header = header

    def on_request(self, request: Any) -> None:
        request.http_request.headers.setdefault(self._header, str(uuid.uuid4()))


_TLS_ADVICE = (
    "The server's TLS certificate could not be verified: pass verify= the path of the CA "
    "bundle that signed it (a TLS sandbox's ca_file). Verification is not turned off.")


def _tls_verification_failed(err: BaseException) -> bool:
    """Whether a transport failure was a refused TLS certificate."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [err]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, requests.exceptions.SSLError) or "CERTIFICATE_VERIFY_FAILED" in str(e):
            return True
        todo += [e.__cause__, e.__context__, getattr(e, "inner_exception", None)]
    return False


_NOT_REPEATED = (
    "The request was not sent again, because repeating it could carry it out twice; the "
    "service may or may not have done it. Check (for example, list the items) before trying "
    "again."
)


def _short(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.path}"


#: Characters left as they are in a path segment (RFC 3986 ``pchar`` less ``%``): everything
#: else, ``/``, ``?``, ``#`` and ``%`` included, is percent-encoded.
_SEGMENT_SAFE = "-._~!$&'()*+,;=:@"


def segment(value: Any, parameter: str) -> str:
    """One path segment from a caller's value: percent-encoded, so it can neither add segments
    nor start a query; ``.`` and ``..`` (which would climb the path) raise ValidationError."""
    text = str(value)
    if text in (".", ".."):
        raise ValidationError(parameter, text, "'.' and '..' are not names: as a path segment "
                              "they would address another resource")
    return quote(text, safe=_SEGMENT_SAFE)


def build_url(base: str, path: str, params: Mapping[str, Any] | None = None) -> str:
    """Join a base URL, a path and query parameters (OData ``$`` names kept readable)."""
    url = path if path.startswith(("http://", "https://")) else base.rstrip("/") + path
    if params:
        items = [(k, v) for k, v in params.items() if v is not None]
        if items:
            sep = "&" if "?" in url else "?"
            url += sep + urlencode(items, quote_via=quote, safe=",$:")
    return url


class Pipeline:
    """The pipeline of one service family.

    Parameters
    ----------
    config : FamilyConfig
        Endpoint, words, credentials, settings, counters and sleeper of the family.
    """

    def __init__(self, config: FamilyConfig) -> None:
        if config.family not in FAMILIES:
            raise ValueError(f"unknown family {config.family!r}")
        self.config = config
        self.family = config.family
        self.base_url = config.base_url
        self.header_prefix = config.header_prefix
        self.stats: Stats = config.stats if config.stats is not None else Stats()
        self._buckets: dict[str, RateLimiter] = {}
        self._buckets_lock = threading.Lock()
        #: methods the service's rate-limit headers showed it counts otherwise than
        #: _arm_bucket does (method -> counted as a write)
        self._counted_as: dict[str, bool] = {}
        settings = config.settings
        if Origin.of(config.base_url) is None:
            raise ValidationError(f"{config.family}_url", config.base_url, "an http(s) URL")
        # the rules connect() applies, held for a configuration made any other way
        check_plain_http(f"{config.family}_url", config.base_url)
        check_verify(config.verify, [config.base_url])
        install_log_redaction("azure", "urllib3")
        session = _session(config)
        self._session = session
        self._cached = cache_path(settings.cache) is not None
        widest = max(settings.max_concurrency, settings.max_partitions)
        adapter = _BoundedBodyAdapter(
            max_body=settings.max_body_bytes, deadline=settings.request_deadline,
            read_timeout=settings.read_timeout, pool_connections=4,
            pool_maxsize=PAGES_IN_FLIGHT * widest + 4, max_retries=0)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        self._transport = _Transport(
            config.sleep, session=session, session_owner=True,
            connection_verify=config.verify,
            connection_timeout=settings.connect_timeout, read_timeout=settings.read_timeout,
            # the body is already in memory: hand it over in one block, not 4 kB slices
            connection_data_block_size=1 << 24,
        )
        retry = _RetryPolicy(
            max_retry_wait=settings.max_retry_wait, stats=self.stats,
            retry_total=settings.max_retries, retry_connect=settings.max_retries,
            retry_read=settings.max_retries, retry_status=settings.max_retries,
            retry_backoff_factor=settings.backoff, retry_backoff_max=settings.max_retry_wait,
        )
        logging_policy = HttpLoggingPolicy()
        logging_policy.allowed_header_names.update({
            f"{self.header_prefix}request-id", f"{self.header_prefix}error-code",
            f"{self.header_prefix}client-request-id", "Location", "Retry-After",
        })
        logging_policy.allowed_query_params.update({
            "api-version", "$top", "$orderby", "$select", "$from", "$to", "$expand",
            "query", "top", "duration", "language", "bbox", "incidentType", "server-fqdn",
        })
        auth = self._auth_policies(config)
        policies: list[Any] = [
            HeadersPolicy({"Accept": "application/json", "Accept-Encoding": "gzip"}),
            UserAgentPolicy(user_agent=settings.user_agent),
            _RequestIdPolicy(f"{self.header_prefix}client-request-id"),
            retry,
            _CountingPolicy(self.stats),
            _OriginGuard(config),
            *auth,
            logging_policy,
        ]
        if config.proxies:
            policies.insert(0, ProxyPolicy(proxies=dict(config.proxies)))
        self._client: PipelineClient[HttpRequest, HttpResponse] = PipelineClient(
            self.base_url, policies=policies, transport=self._transport)
        # ``enforce_https`` is an option of the bearer-token policy only: never hand it to a
        # pipeline without one (maps with a shared key), whose transport would refuse it. Over
        # http (loopback only: the origin rule refuses it elsewhere) the bearer policy is told
        # not to insist.
        self._enforce_https = not is_loopback(self.base_url) or not any(
            isinstance(p, BearerTokenCredentialPolicy) for p in policies)

    def _auth_policies(self, config: FamilyConfig) -> list[Any]:
        creds = config.credentials
        credential = creds.credential
        if credential is not None:
            credential = _RegisteredTokens(credential)
        elif creds.token:
            credential = _StaticTokenCredential(creds.token)
        policies: list[Any] = []
        if self.family == "maps":
            if creds.maps_key or creds.maps_sas_token:
                return [_MapsKeyPolicy(creds.maps_key, creds.maps_sas_token)]
            if credential is not None and config.scope:
                policies.append(BearerTokenCredentialPolicy(credential, config.scope))
                if creds.maps_client_id:
                    policies.append(_ClientIdPolicy(f"{self.header_prefix}client-id",
                                                    creds.maps_client_id))
            return policies
        if credential is not None and config.scope:
            policies.append(BearerTokenCredentialPolicy(credential, config.scope))
        return policies

    def limiter(self, url: str, method: str = "GET") -> RateLimiter | None:
        """The bucket a request to ``url`` takes a token from before it is sent: for the
        resource manager, the one of its reads (GET, HEAD) or writes (every other method, until
        the service's answers show it counts a method otherwise) in the subscription the URL
        names (or above any subscription), as the service keeps them per caller; shared by every
        call and thread of this connection, so together they keep the rate. Other families pace
        their fan-outs themselves (:func:`~toolkit._core.concurrency.shared_limiter`).

        The bucket starts at the documented size and rate; each answer's rate-limit header
        (what the service has left for the caller) then sets what it holds
        (:meth:`~toolkit._core.concurrency.RateLimiter.finished`)."""
        if self.family != "arm":
            return None
        return self._bucket(*self._arm_request(url, method))

    def _arm_request(self, url: str, method: str) -> tuple[bool, str]:
        """Whether a resource-manager request is counted as a write (by its method, or as the
        service's answers showed it counts that method), and where (:func:`_arm_bucket`)."""
        write, where = _arm_bucket(url, method)
        return self._counted_as.get(method.upper(), write), where

    def _bucket(self, write: bool, where: str) -> RateLimiter:
        """The connection's bucket of reads or writes of ``where`` (made on first use)."""
        key = f"{'writes' if write else 'reads'}/{where}"
        with self._buckets_lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                rate, size = ((ARM_WRITE_RATE, WRITE_BUCKET) if write
                              else (FAMILY_RATES["arm"], READ_BUCKET))
                bucket = self._buckets[key] = RateLimiter(
                    rate, size, clock=self.config.clock, sleep=self.config.sleep)
            return bucket

    def url(self, path: str, params: Mapping[str, Any] | None = None) -> str:
        """The absolute URL of a path of this family."""
        return build_url(self.base_url, path, params)

    def send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
        operation: str | None = None,
        idempotent: bool = True,
        expected: tuple[int, ...] = (200,),
        content_type: str = "application/json",
        check_json: bool = True,
        no_retry: frozenset[int] = frozenset(),
        on_head: Callable[[bytes], bool] | None = None,
    ) -> Response:
        """Send one request through the pipeline and check its status.

        Parameters
        ----------
        method, path
            HTTP method, and a path under the family's base URL or an absolute URL (next links,
            operation URLs are followed exactly as the service gave them, when their origin is
            the family's own or a trusted host).
        params : mapping, optional
            Query parameters (``None`` values are left out).
        json : object, optional
            Body, serialized with orjson.
        operation : str, optional
            The public function's name, for messages and provenance.
        idempotent : bool
            Whether the request may be sent again after a failure the service may have seen.
        expected : tuple of int
            Success statuses; anything else raises the matching ApiError.
        check_json : bool
            Parse a success body now (and ask again when it is not JSON). ``False`` leaves
            the parsing, and asking again, to the caller (a pager parsing in another thread).
        no_retry : frozenset of int
            Statuses the caller handles itself instead of the retries (a batch's 408, split in
            two rather than sent again).
        on_head : callable, optional
            ``head -> done``: called in this thread with the start of a success body (decoded,
            at most 64 kB) while the rest still streams, until it answers True; a pager reads
            the next link there and sends the next request before this body has arrived.

        A success body that is not valid JSON (a broken connection, a proxy) is asked for again,
        up to ``max_retries`` times, when the request is idempotent; then ProtocolError.

        Raises
        ------
        UntrustedOriginError
            when the URL names an origin the family does not trust (nothing is sent).
        ResponseLimitError
            when the answer is larger than ``max_body_bytes`` or slower than
            ``request_deadline``.
        ApiError
            (or a subclass) for an unexpected status, after retries.
        ProtocolError
            when a success body is still not valid JSON after ``max_retries`` asks.
        TransportError
            when the service could not be reached after retries.
        """
        url = build_url(self.base_url, path, params)
        _check_origin(self.config, url, operation)
        if self.family != "arm":
            return self._send_checked(method, url, json, headers, operation, idempotent,
                                      expected, content_type, check_json, no_retry, on_head)
        # the resource manager's bucket of the request (reads or writes, of the subscription
        # or the tenant), which the service's header of what is left then sets
        write, where = self._arm_request(url, method)
        bucket = self._bucket(write, where)
        ticket = bucket.started()
        remaining = None
        try:
            response = self._send_checked(method, url, json, headers, operation, idempotent,
                                          expected, content_type, check_json, no_retry,
                                          on_head, bucket)
            remaining = self._counted(response, method, write, where)
            return response
        finally:
            bucket.finished(remaining, ticket)

    def _counted(self, response: Response, method: str, write: bool, where: str) -> int | None:
        """What the service says is left in the bucket the request was taken from; when its
        header names the other bucket (reads for writes, or the reverse), requests of this method
        are counted there from now on, and that bucket follows the count."""
        stem = (f"{self.header_prefix}ratelimit-remaining-"
                f"{'tenant' if where == 'tenant' else 'subscription'}-")
        reads = _remaining(response.headers.get(stem + "reads"))
        writes = _remaining(response.headers.get(stem + "writes"))
        if (reads is None) == (writes is None) or (writes is not None) == write:
            return writes if write else reads
        verb = method.upper()
        if self._counted_as.get(verb) is None:
            logger.debug("the service counts %s requests as %s", verb,
                         "reads" if write else "writes")
        self._counted_as[verb] = not write
        self._bucket(not write, where).observe(reads if write else writes)
        return None

    def _send_checked(self, method: str, url: str, json: Any,
                      headers: Mapping[str, str] | None, operation: str | None,
                      idempotent: bool, expected: tuple[int, ...], content_type: str,
                      check_json: bool, no_retry: frozenset[int],
                      on_head: Callable[[bytes], bool] | None,
                      bucket: RateLimiter | None = None) -> Response:
        """:meth:`send` past the origin check and the first token of the rate limit: the
        attempts (azure-core's retries, each further one taking a token from ``bucket``), and
        asking again for a success body that is not JSON (with a token too)."""

        def once() -> Response:
            _head_watch.value = on_head
            try:
                return self._send_once(method, url, json, headers, operation, idempotent,
                                       expected, content_type, no_retry, bucket)
            finally:
                _head_watch.value = None

        response = once()
        asked = 0
        while check_json and response.content and response.status < 300:
            try:
                response.json()
                break
            except ProtocolError:
                asked += 1
                if not idempotent or asked > self.config.settings.max_retries:
                    raise
                logger.warning("%s: unreadable body from %s; asking again (%d)",
                               operation or method, _short(url), asked)
                self.stats.add(retries=1)
                if bucket is not None:
                    bucket.acquire()
                response = once()
        return response

    def _send_once(self, method: str, url: str, json: Any, headers: Mapping[str, str] | None,
                   operation: str | None, idempotent: bool, expected: tuple[int, ...],
                   content_type: str, no_retry: frozenset[int],
                   bucket: RateLimiter | None = None) -> Response:
        body = orjson.dumps(json) if json is not None else None
        request = HttpRequest(method, url, content=body,
                              headers={"Content-Type": content_type} if body is not None else None)
        if headers:
            request.headers.update(headers)
        if self._cached:
            request.headers.update(lifetime_header(operation, method))
        options: dict[str, Any] = {"toolkit_no_retry": no_retry, "toolkit_bucket": bucket}
        if idempotent:
            options["retry_on_methods"] = _ALL_METHODS
        if not self._enforce_https:
            options["enforce_https"] = False
        check_cancelled()
        self.stats.add(requests=1)
        try:
            raw = self._client.send_request(request, **options)
        except ResponseLimitError as err:
            raise ResponseLimitError(f"{operation or method}: {err}", limit=err.limit,
                                     url=_short(url), status=err.status) from None
        except ToolkitError:  # already the toolkit's own (its ApiErrors are AzureErrors too)
            raise
        except ClientAuthenticationError as err:
            raise AuthenticationError(
                401, ErrorInfo(code="CredentialUnavailable", message=redact(str(err.message))),
                operation=operation, url=_short(url),
                hint="The credential could not give a token; check its configuration "
                     "(for DefaultAzureCredential: environment, managed identity or CLI login).",
            ) from err
        except (ServiceRequestError, ServiceResponseError) as err:
            advice = ("Check that the endpoint is reachable and try again." if idempotent
                      else _NOT_REPEATED)
            if _tls_verification_failed(err):
                advice = _TLS_ADVICE
            raise TransportError(
                f"{operation or method}: could not complete the request to {_short(url)} "
                f"({type(err).__name__}: {redact(str(err.message))[:200]}). {advice}") from err
        except AzureError as err:
            raise TransportError(f"{operation or method}: {redact(str(err))[:300]}") from err
        response = Response(raw.status_code, raw.headers, raw.content, url, method, operation,
                            self.header_prefix,
                            forget=forgetter(self._session, raw) if self._cached else None)
        if self.config.sandbox or raw.headers.get(SANDBOX_HEADER) == "true":
            note_sandbox_answer(response.request_id)
        if raw.status_code not in expected:
            hint = None
            if not idempotent and raw.status_code >= 500:
                hint = _NOT_REPEATED
            raise error_from_response(raw.status_code, raw.content, raw.headers,
                                      operation=operation, url=_short(url),
                                      header_prefix=self.header_prefix, hint=hint)
        return response

    def close(self) -> None:
        """Close the pooled connections."""
        self._client.close()
