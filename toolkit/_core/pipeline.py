"""One azure-core pipeline per service family, and its send.

Families: ``arm`` (resource management), ``maps``, ``graph`` (identity) and ``fabric``
(eventstreams). Each gets its own :class:`Pipeline`, built from a frozen
:class:`~toolkit._core.config.FamilyConfig` over one pooled ``requests`` session
(:mod:`~toolkit._core.transport`), with the body caps of :mod:`~toolkit._core.bodies`, the
policies of :mod:`~toolkit._core.policies` and :mod:`~toolkit._core.auth`, the origin rule of
:mod:`~toolkit._core.urls` and, for the resource manager, the rate limits of
:mod:`~toolkit._core.ratelimits`. :meth:`Pipeline.send` takes one frozen
:class:`~toolkit._core.messages.Request` and gives back a
:class:`~toolkit._core.messages.Response`, its status checked.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any

import orjson
import requests
from azure.core import PipelineClient
from azure.core.exceptions import (
    AzureError,
    ClientAuthenticationError,
    ServiceRequestError,
    ServiceResponseError,
)
from azure.core.pipeline.policies import (
    BearerTokenCredentialPolicy,
    HeadersPolicy,
    ProxyPolicy,
    UserAgentPolicy,
)
from azure.core.rest import HttpRequest, HttpResponse

from toolkit._core.auth import auth_policies
from toolkit._core.bodies import BoundedBodyAdapter, head_watch
from toolkit._core.cache import cache_path, forgetter, lifetime_header, served_from_cache
from toolkit._core.cancel import check_cancelled
from toolkit._core.concurrency import RateLimiter
from toolkit._core.config import FamilyConfig, Origin, check_plain_http, check_verify, is_loopback
from toolkit._core.error_bodies import error_from_response
from toolkit._core.errors import (
    AuthenticationError,
    ErrorInfo,
    ProtocolError,
    ResponseLimitError,
    ToolkitError,
    TransportError,
    ValidationError,
)
from toolkit._core.messages import Request, Response
from toolkit._core.policies import (
    CountingPolicy,
    OriginGuard,
    RequestIdPolicy,
    Stats,
    ToolkitRetryPolicy,
    logging_policy,
)
from toolkit._core.protocols import Counts
from toolkit._core.provenance import note_sandbox_answer
from toolkit._core.ratelimits import ArmBuckets
from toolkit._core.secrets import install_log_redaction, redact
from toolkit._core.transport import PAGES_IN_FLIGHT, SleeperTransport, session_for
from toolkit._core.urls import build_url, check_origin, short
from toolkit._spec.common import SANDBOX_HEADER

logger = logging.getLogger(__name__)

__all__ = ["FAMILIES", "Pipeline"]

FAMILIES = ("arm", "maps", "graph", "fabric")

_ALL_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE", "POST", "PATCH"})

_TLS_ADVICE = (
    "The server's TLS certificate could not be verified: pass verify= the path of the CA "
    "bundle that signed it (a TLS sandbox's ca_file). Verification is not turned off.")

_NOT_REPEATED = (
    "The request was not sent again, because repeating it could carry it out twice; the "
    "service may or may not have done it. Check (for example, list the items) before trying "
    "again."
)


def _tls_verification_failed(err: BaseException) -> bool:
    """Tell whether a transport failure was a refused TLS certificate.

    Parameters
    ----------
    err : BaseException
        The failure (its causes and azure-core's inner exception are looked at too).

    Returns
    -------
    bool
        Whether any of them is a certificate verification failure.
    """
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
        self.stats: Counts = config.stats if config.stats is not None else Stats()
        self._arm = ArmBuckets(config.header_prefix, clock=config.clock, sleep=config.sleep)
        #: the service's clock as its latest answer told it (``Date``), and when (monotonic)
        self._told: tuple[datetime, float] | None = None
        settings = config.settings
        if Origin.of(config.base_url) is None:
            raise ValidationError(f"{config.family}_url", config.base_url, "an http(s) URL")
        # the rules connect() applies, held for a configuration made any other way
        check_plain_http(f"{config.family}_url", config.base_url)
        check_verify(config.verify, [config.base_url])
        install_log_redaction("azure", "urllib3")
        session = session_for(config)
        self._session = session
        self._cached = cache_path(settings.cache) is not None
        widest = max(settings.max_concurrency, settings.max_partitions)
        adapter = BoundedBodyAdapter(
            max_body=settings.max_body_bytes, deadline=settings.request_deadline,
            read_timeout=settings.read_timeout, pool_connections=4,
            pool_maxsize=PAGES_IN_FLIGHT * widest + 4, max_retries=0)
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        self._transport = SleeperTransport(
            config.sleep, session=session, session_owner=True,
            connection_verify=config.verify,
            connection_timeout=settings.connect_timeout, read_timeout=settings.read_timeout,
            # the body is already in memory: hand it over in one block, not 4 kB slices
            connection_data_block_size=1 << 24,
        )
        retry = ToolkitRetryPolicy(
            max_retry_wait=settings.max_retry_wait, stats=self.stats,
            retry_total=settings.max_retries, retry_connect=settings.max_retries,
            retry_read=settings.max_retries, retry_status=settings.max_retries,
            retry_backoff_factor=settings.backoff, retry_backoff_max=settings.max_retry_wait,
        )
        policies: list[Any] = [
            HeadersPolicy({"Accept": "application/json", "Accept-Encoding": "gzip"}),
            UserAgentPolicy(user_agent=settings.user_agent),
            RequestIdPolicy(f"{self.header_prefix}client-request-id"),
            retry,
            CountingPolicy(self.stats),
            OriginGuard(config),
            *auth_policies(config),
            logging_policy(self.header_prefix),
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

    def limiter(self, url: str, method: str = "GET") -> RateLimiter | None:
        """Return the bucket a request to ``url`` takes a token from before it is sent.

        For the resource manager: the one of its reads (GET, HEAD) or writes (every other
        method, until the service's answers show it counts a method otherwise) in the
        subscription the URL names (or above any subscription), as the service keeps them per
        caller; shared by every call and thread of this connection, so together they keep the
        rate (:class:`~toolkit._core.ratelimits.ArmBuckets`). Other families pace their fan-outs
        themselves (:func:`~toolkit._core.concurrency.shared_limiter`).

        Parameters
        ----------
        url : str
            The request's absolute URL.
        method : str
            Its HTTP method.

        Returns
        -------
        RateLimiter or None
            The bucket, or ``None`` for a family other than ``arm``.
        """
        if self.family != "arm":
            return None
        return self._arm.limiter(url, method)

    def url(self, path: str, params: Mapping[str, Any] | None = None) -> str:
        """Return the absolute URL of a path of this family.

        Parameters
        ----------
        path : str
            A path under the family's base URL (or an absolute URL).
        params : mapping, optional
            Query parameters; ``None`` values are left out.

        Returns
        -------
        str
            The URL.
        """
        return build_url(self.base_url, path, params)

    def send(self, request: Request) -> Response:
        """Send one request through the pipeline and check its status.

        A success body that is not valid JSON (a broken connection, a proxy) is asked for again,
        up to ``max_retries`` times, when the request is idempotent and ``check_json`` is set;
        then ProtocolError.

        Parameters
        ----------
        request : Request
            What to send and how to take the answer; its ``path`` is resolved against the
            family's base URL with its ``params``.

        Returns
        -------
        Response
            The answer, its status one of ``request.expected``.

        Raises
        ------
        UntrustedOriginError
            The URL names an origin the family does not trust (nothing is sent).
        ResponseLimitError
            The answer is larger than ``max_body_bytes`` or slower than ``request_deadline``.
        ApiError
            (or a subclass) for an unexpected status, after retries.
        ProtocolError
            A success body is still not valid JSON after ``max_retries`` asks.
        TransportError
            The service could not be reached after retries.
        """
        url = build_url(self.base_url, request.path, request.params)
        check_origin(self.config, url, request.operation)
        if self.family != "arm":
            return self._attempts(request, url, None)
        # the resource manager's bucket of the request (reads or writes, of the subscription
        # or the tenant), which the service's header of what is left then sets
        return self._arm.metered(url, request.method,
                                 lambda bucket: self._attempts(request, url, bucket))

    def _attempts(self, request: Request, url: str, bucket: RateLimiter | None) -> Response:
        """Send past the origin check and the first token of the rate limit.

        The attempts are azure-core's retries, each further one taking a token from ``bucket``;
        a success body that is not JSON is asked for again (with a token too).
        """

        def once() -> Response:
            head_watch.value = request.on_head
            try:
                return self._send_once(request, url, bucket)
            finally:
                head_watch.value = None

        response = once()
        asked = 0
        while request.check_json and response.content and response.status < 300:
            try:
                response.json()
                break
            except ProtocolError:
                asked += 1
                if not request.idempotent or asked > self.config.settings.max_retries:
                    raise
                logger.warning("%s: unreadable body from %s; asking again (%d)",
                               request.what, short(url), asked)
                self.stats.add(retries=1)
                if bucket is not None:
                    bucket.acquire()
                response = once()
        return response

    def _send_once(self, request: Request, url: str, bucket: RateLimiter | None) -> Response:
        """Send one request through azure-core's pipeline (its retries included)."""
        operation = request.operation
        body = orjson.dumps(request.json) if request.json is not None else None
        http = HttpRequest(request.method, url, content=body,
                           headers=({"Content-Type": request.content_type}
                                    if body is not None else None))
        if request.headers:
            http.headers.update(request.headers)
        if self._cached:
            http.headers.update(lifetime_header(operation, request.method))
        options: dict[str, Any] = {"toolkit_no_retry": request.no_retry, "toolkit_bucket": bucket,
                                   "toolkit_origin_checked": url}  # by send(), for OriginGuard
        if request.idempotent:
            options["retry_on_methods"] = _ALL_METHODS
        if not self._enforce_https:
            options["enforce_https"] = False
        check_cancelled()
        self.stats.add(requests=1)
        try:
            raw = self._client.send_request(http, **options)
        except ResponseLimitError as err:
            raise ResponseLimitError(f"{request.what}: {err}", limit=err.limit,
                                     url=short(url), status=err.status) from None
        except ToolkitError:  # already the toolkit's own (its ApiErrors are AzureErrors too)
            raise
        except ClientAuthenticationError as err:
            raise AuthenticationError(
                401, ErrorInfo(code="CredentialUnavailable", message=redact(str(err.message))),
                operation=operation, url=short(url),
                hint="The credential could not give a token; check its configuration "
                     "(for DefaultAzureCredential: environment, managed identity or CLI login).",
            ) from err
        except (ServiceRequestError, ServiceResponseError) as err:
            advice = ("Check that the endpoint is reachable and try again." if request.idempotent
                      else _NOT_REPEATED)
            if _tls_verification_failed(err):
                advice = _TLS_ADVICE
            raise TransportError(
                f"{request.what}: could not complete the request to {short(url)} "
                f"({type(err).__name__}: {redact(str(err.message))[:200]}). {advice}") from err
        except AzureError as err:
            raise TransportError(f"{request.what}: {redact(str(err))[:300]}") from err
        response = Response(raw.status_code, raw.headers, raw.content, url, request.method,
                            operation, self.header_prefix,
                            forget=forgetter(self._session, raw) if self._cached else None)
        if self.config.sandbox or raw.headers.get(SANDBOX_HEADER) == "true":
            # the mark follows the answer whatever id it carries: one with no id this family
            # reads (another header prefix, none at all) is named by the toolkit
            if not response.request_id:
                response.local_id = f"sandbox-{uuid.uuid4()}"
            note_sandbox_answer(response.request_id)
        # an answer from the response cache tells the clock of the day it was cached
        cached = bool(getattr(getattr(raw, "internal_response", None), "from_cache", False)) \
            or bool(response.request_id and served_from_cache([response.request_id])[0])
        if not cached:
            self._note_date(raw.headers.get("Date"))
        if raw.status_code not in request.expected:
            hint = None
            if not request.idempotent and raw.status_code >= 500:
                hint = _NOT_REPEATED
            raise error_from_response(raw.status_code, raw.content, raw.headers,
                                      operation=operation, url=short(url),
                                      header_prefix=self.header_prefix, hint=hint)
        return response

    def _note_date(self, stamp: str | None) -> None:
        """Keep the service's clock from a fresh answer's ``Date``."""
        if not stamp:
            return
        try:
            when = parsedate_to_datetime(stamp)
        except (TypeError, ValueError, IndexError):
            return
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        self._told = (when.astimezone(UTC), time.monotonic())

    def service_time(self) -> datetime | None:
        """Tell the service's clock: its latest answer's ``Date``, plus the time since.

        Returns
        -------
        datetime or None
            An aware UTC instant (to the second the service wrote), ``None`` before any answer
            that carried a date.
        """
        if self._told is None:
            return None
        when, at = self._told
        return when + timedelta(seconds=time.monotonic() - at)

    def close(self) -> None:
        """Close the pooled connections."""
        self._client.close()

