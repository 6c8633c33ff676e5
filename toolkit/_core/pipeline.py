"""One azure-core pipeline per service family: auth, retries, user agent, redacted logging.

Families: ``arm`` (resource management), ``maps``, ``graph`` (identity) and ``fabric``
(eventstreams). Each gets its own :class:`Pipeline` built once per connection, over one pooled
``requests`` session. Bodies are parsed with orjson.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
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
    RetryPolicy,
    SansIOHTTPPolicy,
    UserAgentPolicy,
)
from azure.core.pipeline.transport import RequestsTransport
from azure.core.rest import HttpRequest

from toolkit._core.cache import cache_path, cached_session, lifetime_header
from toolkit._core.errors import (
    AuthenticationError,
    ErrorInfo,
    ProtocolError,
    TransportError,
    error_from_response,
)
from toolkit._core.secrets import Secret, redact

if TYPE_CHECKING:
    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["FAMILIES", "Pipeline", "Response", "is_loopback"]

FAMILIES = ("arm", "maps", "graph", "fabric")

#: Status codes retried (with Retry-After honoured, else exponential backoff).
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
_ALL_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE", "POST", "PATCH"})


def is_loopback(url: str) -> bool:
    """Whether a URL points at this machine (127.0.0.0/8, ::1, localhost)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass
class Response:
    """What a request gave back, body unparsed until asked."""

    status: int
    headers: Mapping[str, str]
    content: bytes
    url: str
    method: str
    operation: str | None = None
    _parsed: Any = field(default=None, repr=False)
    _has_parsed: bool = field(default=False, repr=False)

    @property
    def request_id(self) -> str | None:
        """The service's request id header, if any."""
        h = self.headers
        return h.get("x-vendor-request-id") or h.get("request-id") or h.get("requestid")

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
            raise ProtocolError(
                f"{self.operation or 'request'}: the service sent a body that is not valid JSON "
                f"(HTTP {self.status}, {len(self.content)} bytes: {err}). This is usually a "
                "broken connection or a proxy in the way; try again.",
                url=self.url, status=self.status) from err

    def json_object(self) -> dict[str, Any]:
        """The body, which must be a JSON object: an empty body, an array, a string or a number
        raises ProtocolError saying what came instead."""
        body = self.json()
        if isinstance(body, dict):
            return body
        got = "an empty body" if body is None else f"a JSON {type(body).__name__}"
        raise ProtocolError(
            f"{self.operation or 'request'}: expected a JSON object, the service sent {got} "
            f"(HTTP {self.status}). Try again; if it persists, the endpoint is not the service "
            "it should be.", url=self.url, status=self.status)


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


class _WholeBodyAdapter(requests.adapters.HTTPAdapter):
    """Reads a body that is not streamed with one read, instead of requests' 10 kB chunks: pages
    of several megabytes arrive several times faster. Read errors map to the exceptions requests
    itself raises, so azure-core's retries see the same failures."""

    def send(self, request: Any, stream: bool = False, **kw: Any) -> Any:
        import urllib3.exceptions as u3

        response = super().send(request, stream=True, **kw)
        if stream:
            return response
        try:
            response._content = response.raw.read(decode_content=True) or b""
        except u3.ProtocolError as err:
            raise requests.exceptions.ChunkedEncodingError(err) from err
        except u3.DecodeError as err:
            raise requests.exceptions.ContentDecodingError(err) from err
        except u3.ReadTimeoutError as err:
            raise requests.exceptions.ConnectionError(err) from err
        except u3.SSLError as err:
            raise requests.exceptions.SSLError(err) from err
        response._content_consumed = True
        return response


def _session(connection: Connection) -> requests.Session:
    """A plain session, or one answering reads from the response cache when it is on."""
    path = cache_path(connection.settings.cache)
    if path is None:
        return requests.Session()
    return cached_session(path, connection.header_prefix)  # type: ignore[no-any-return]


class _Transport(RequestsTransport):
    """RequestsTransport whose waits go through the connection's sleeper (so tests never
    sleep)."""

    def __init__(self, sleeper: Callable[[float], None], **kw: Any) -> None:
        super().__init__(**kw)
        self._sleeper = sleeper

    def sleep(self, duration: float) -> None:
        self._sleeper(duration)


class _RetryPolicy(RetryPolicy):
    """azure-core's retry policy, narrowed to the toolkit's rules.

    * only 408, 429 and 5xx are retried (a 4xx with a ``Retry-After`` header is not);
    * a request marked non-idempotent is retried only on 429 and on connection errors where the
      request never left;
    * a request may name statuses it handles itself (``no_retry``), e.g. a batch's 408 that is
      split instead of sent again;
    * a ``Retry-After`` longer than ``max_retry_wait`` stops the retries: the caller raises
      RateLimitError with the wait the service asked for;
    * a 429 without ``Retry-After`` backs off exponentially and says so in the log.
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
        return settings

    def is_retry(self, settings: dict[str, Any], response: Any) -> bool:
        status = response.http_response.status_code
        if status not in RETRY_STATUSES or not settings["total"] \
                or status in settings["no_retry"]:
            return False
        if status == 429:
            self.stats.add(throttled=1)
        elif status >= 500:
            self.stats.add(server_errors=1)
        idempotent = response.http_request.method.upper() in settings["methods"]
        if not idempotent and status != 429:
            return False
        retry_after = self.get_retry_after(response)
        if retry_after is not None and retry_after > self.max_retry_wait:
            logger.warning("%s asked to wait %.0f s, more than max_retry_wait=%.0f s: not waiting",
                           _short(response.http_request.url), retry_after, self.max_retry_wait)
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

    def _sleep_backoff(self, settings: dict[str, Any], transport: Any) -> None:
        backoff = self.get_backoff_time(settings)
        if backoff <= 0:
            backoff = settings["backoff"]
        transport.sleep(backoff)


class _CountingPolicy(SansIOHTTPPolicy):
    def __init__(self, stats: Stats) -> None:
        self.stats = stats

    def on_request(self, request: Any) -> None:
        self.stats.add(attempts=1)


class _StaticTokenCredential:
    """A fixed bearer token presented as a credential."""

    def __init__(self, token: Secret) -> None:
        self._token = token

    def get_token(self, *scopes: str, **kw: Any) -> AccessToken:
        return AccessToken(str(self._token.reveal()), int(time.time()) + 365 * 24 * 3600)

    def __repr__(self) -> str:
        return "StaticToken(••••••••)"


class _MapsKeyPolicy(SansIOHTTPPolicy):
    """Maps shared key (``subscription-key``) or SAS token (``Authorization: jwt-sas``)."""

    def __init__(self, key: Secret | None, sas: Secret | None) -> None:
        self._key = key
        self._sas = sas

    def on_request(self, request: Any) -> None:
        headers = request.http_request.headers
        if self._key:
            headers["subscription-key"] = str(self._key.reveal())
        elif self._sas:
            headers["Authorization"] = f"jwt-sas {self._sas.reveal()}"


class _ClientIdPolicy(SansIOHTTPPolicy):
    def __init__(self, header: str, client_id: str) -> None:
        self._header = header
        self._client_id = client_id

    def on_request(self, request: Any) -> None:
        request.http_request.headers[self._header] = self._client_id


class _RequestIdPolicy(SansIOHTTPPolicy):
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
    """The pipeline of one service family on one connection.

    Parameters
    ----------
    connection : Connection
        Endpoints, credentials and settings.
    family : {"arm", "maps", "graph", "fabric"}
        The service family.
    """

    def __init__(self, connection: Connection, family: str) -> None:
        if family not in FAMILIES:
            raise ValueError(f"unknown family {family!r}")
        self.connection = connection
        self.family = family
        self.base_url = connection.url_for(family)
        self.header_prefix = connection.header_prefix
        self.stats = connection.stats
        settings = connection.settings
        session = _session(connection)
        adapter = _WholeBodyAdapter(pool_connections=4,
                                    pool_maxsize=settings.max_concurrency + 4, max_retries=0)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        self._cached = cache_path(settings.cache) is not None
        verify = connection.verify
        self._transport = _Transport(
            connection.sleep_for, session=session, session_owner=True,
            connection_verify=verify,
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
        policies: list[Any] = [
            HeadersPolicy({"Accept": "application/json"}),
            UserAgentPolicy(user_agent=settings.user_agent),
            _RequestIdPolicy(f"{self.header_prefix}client-request-id"),
            retry,
            _CountingPolicy(self.stats),
            *self._auth_policies(connection),
            logging_policy,
        ]
        self._client = PipelineClient(self.base_url, policies=policies, transport=self._transport)
        # ``enforce_https`` is an option of the bearer-token policy only: never hand it to a
        # pipeline without one (maps with a shared key), whose transport would refuse it
        self._enforce_https = not is_loopback(self.base_url) or not any(
            isinstance(p, BearerTokenCredentialPolicy) for p in policies)

    def _auth_policies(self, connection: Connection) -> list[Any]:
        credential = connection.credential
        if credential is None and connection.token:
            credential = _StaticTokenCredential(connection.token)
        policies: list[Any] = []
        if self.family == "maps":
            if connection.maps_key or connection.maps_sas_token:
                return [_MapsKeyPolicy(connection.maps_key, connection.maps_sas_token)]
            if credential is not None:
                policies.append(BearerTokenCredentialPolicy(credential,
                                                            connection.scope_for("maps")))
                if connection.maps_client_id:
                    policies.append(_ClientIdPolicy(f"{self.header_prefix}client-id",
                                                    connection.maps_client_id))
            return policies
        if credential is not None:
            policies.append(BearerTokenCredentialPolicy(credential,
                                                        connection.scope_for(self.family)))
        return policies

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
    ) -> Response:
        """Send one request through the pipeline and check its status.

        Parameters
        ----------
        method, path
            HTTP method, and a path under the family's base URL or an absolute URL (next links,
            operation URLs are followed exactly as the service gave them).
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

        A success body that is not valid JSON (a broken connection, a proxy) is asked for again,
        up to ``max_retries`` times, when the request is idempotent; then ProtocolError.

        Raises
        ------
        ApiError
            (or a subclass) for an unexpected status, after retries.
        ProtocolError
            when a success body is still not valid JSON after ``max_retries`` asks.
        TransportError
            when the service could not be reached after retries.
        """
        url = build_url(self.base_url, path, params)

        def once() -> Response:
            return self._send_once(method, url, json, headers, operation, idempotent, expected,
                                   content_type, no_retry)

        response = once()
        asked = 0
        while check_json and response.content and response.status < 300:
            try:
                response.json()
                break
            except ProtocolError:
                asked += 1
                if not idempotent or asked > self.connection.settings.max_retries:
                    raise
                logger.warning("%s: unreadable body from %s; asking again (%d)",
                               operation or method, _short(url), asked)
                self.stats.add(retries=1)
                response = once()
        return response

    def _send_once(self, method: str, url: str, json: Any, headers: Mapping[str, str] | None,
                   operation: str | None, idempotent: bool, expected: tuple[int, ...],
                   content_type: str, no_retry: frozenset[int]) -> Response:
        body = orjson.dumps(json) if json is not None else None
        request = HttpRequest(method, url, content=body,
                              headers={"Content-Type": content_type} if body is not None else None)
        if headers:
            request.headers.update(headers)
        if self._cached:
            request.headers.update(lifetime_header(operation, method))
        options: dict[str, Any] = {"toolkit_no_retry": no_retry}
        if idempotent:
            options["retry_on_methods"] = _ALL_METHODS
        if not self._enforce_https:
            options["enforce_https"] = False
        self.stats.add(requests=1)
        try:
            raw = self._client.send_request(request, **options)
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
        response = Response(raw.status_code, raw.headers, raw.content, url, method, operation)
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
