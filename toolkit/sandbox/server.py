"""The embedded sandbox: a real threaded HTTP server on 127.0.0.1 serving all four families.

It checks ``api-version`` and authentication like the real services, answers with their status
codes, headers and error bodies, pages, runs long-running operations, throttles on demand, and
injects faults (see :mod:`toolkit.sandbox.faults`). Its world is deterministic from a seed
(:mod:`toolkit.sandbox.world`).
"""

from __future__ import annotations

import importlib
import itertools
import logging
import re
import socket
import ssl
import tempfile
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolkit._spec.clouds import CLOUDS, PUBLIC, Cloud, Vocabulary, get_cloud
from toolkit._spec.common import SANDBOX_HEADER
from toolkit.sandbox.auth import ALL_ROLES, SandboxCredential, TokenAuthority
from toolkit.sandbox.faults import FaultPlan, FaultRule, fault_error, parse_fault_header
from toolkit.sandbox.gate import authenticate, check_api_version
from toolkit.sandbox.http import (
    Reply,
    Request,
    Router,
    SandboxHTTPError,
    _Headers,
    error_reply,
    family_of,
    not_found_code,
)
from toolkit.sandbox.network import NetworkModel
from toolkit.sandbox.wire import Server
from toolkit.sandbox.world import world_epoch

if TYPE_CHECKING:
    import pandas as pd

    from toolkit.sandbox.world import World

logger = logging.getLogger(__name__)

__all__ = ["SERVICE_MODULES", "LoggedRequest", "Middleware", "Sandbox", "latest_running"]

#: How often, in seconds, the serving thread looks whether :meth:`Sandbox.stop` asked it to end
#: (the standard library's default, half a second, is what each stop would otherwise wait).
STOP_POLL_SECONDS = 0.05

#: Modules whose ``register(router, sandbox)`` adds the routes of one service.
SERVICE_MODULES = (
    "toolkit.sandbox.arm.common",
    "toolkit.sandbox.arm.network",
    "toolkit.sandbox.arm.sql",
    "toolkit.sandbox.arm.policy.handlers",
    "toolkit.sandbox.arm.tenant",
    "toolkit.sandbox.arm.inventory",
    "toolkit.sandbox.arm.support",
    "toolkit.sandbox.arm.clusters",
    "toolkit.sandbox.arm.resourcegraph.handlers",
    "toolkit.sandbox.graph.identity",
    "toolkit.sandbox.fabric.eventstream",
    "toolkit.sandbox.fabric.workspaces",
    "toolkit.sandbox.maps.search",
    "toolkit.sandbox.maps.reverse",
    "toolkit.sandbox.maps.route",
    "toolkit.sandbox.maps.matrix",
    "toolkit.sandbox.maps.reach",
    "toolkit.sandbox.maps.traffic",
    "toolkit.sandbox.maps.weather.handlers",
    "toolkit.sandbox.openapi",
)

#: A check a family runs on each of its routed requests before the handler (after the
#: api-version and the credentials): it returns, or raises SandboxHTTPError to refuse.
Middleware = Callable[[Request], None]

#: A ``Host`` header the sandbox builds links from: a name or IPv4 address, or a bracketed IPv6
#: address, and an optional port.
_HOST_RE = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])"
                      r"(?::[0-9]{1,5})?")

#: The sandboxes serving in this process, oldest first (see :func:`latest_running`).
_RUNNING: list[Sandbox] = []
_RUNNING_LOCK = threading.Lock()


def latest_running() -> Sandbox | None:
    """Give the sandbox started last in this process that is still serving.

    Returns
    -------
    Sandbox or None
        That sandbox (``connect()`` with nothing configured starts one), or ``None``.
    """
    with _RUNNING_LOCK:
        return _RUNNING[-1] if _RUNNING else None


@dataclass(frozen=True)
class LoggedRequest:
    """One request the sandbox saw."""

    method: str
    path: str
    query: str
    family: str
    status: int
    route: str | None
    fault: str | None


class Sandbox:
    """The embedded service.

    Parameters
    ----------
    seed : int
        Seed of the deterministic world.
    port : int
        Port on 127.0.0.1; 0 picks a free one.
    cloud : str
        Whose vocabulary the sandbox speaks: ``neutral`` (the default: the specification's own
        words, ``Vendor.*`` and ``x-vendor-``, so that what the spec and the notebooks say and
        what the sandbox answers read the same), or a real cloud's (``public``, ``usgov``,
        ``china``: ``Microsoft.*``, ``x-ms-``, ``Azure-AsyncOperation``, ``AzureKeyVault``,
        the real hosted-cluster provider...). It then accepts tokens for that cloud's audiences
        (``https://management.azure.com/``...); a family the cloud does not offer is served all
        the same, accepting the public cloud's audiences for it.
    namespace, header_prefix : str, optional
        Low-level overrides of the cloud's provider namespace word and custom header prefix.
    tls : bool
        Serve HTTPS with a certificate generated for 127.0.0.1 (``ca_file`` is its path).
    lro_polls : int
        How many status polls a long-running operation takes before it is done.
    lro_retry_after : int
        ``Retry-After`` seconds sent with 202 answers.
    now : date, datetime or ISO 8601 string, optional
        The day (``"2026-11-20"``: 09:00 UTC of it) or instant the sandbox clock starts from,
        which its whole world is built back from (histories end there); the clock then runs
        with real time, and answers carry it in their ``Date`` header. Default:
        ``TOOLKIT_SANDBOX_NOW`` when set, else today's date: the world follows the real date,
        and the same day always gives the same world. Pin it to reproduce a run.
    epoch : datetime, optional
        The same as ``now`` (an aware instant); give one of the two.
    frozen_clock : bool
        Keep the clock at ``epoch`` (time-dependent answers such as traffic and air quality then
        stay the same for the sandbox's whole life, as comparisons across runs need).
    secret : str, optional
        Derive the token signing key and the maps key from this secret instead of random bytes
        (``TOOLKIT_SANDBOX_SECRET`` for the sandbox ``connect()`` starts).
    network : NetworkModel, optional
        Make every answer wait as over a real link (round trip, bandwidth per connection,
        service time; see :mod:`toolkit.sandbox.network`); ``None``: loopback speed.
    compress : bool
        Compress answers of 1 kB and more with gzip when the client accepts it, as the real
        front doors do (``compress_level`` 1 to 9).
    deny_subscriptions : sequence of str
        Subscriptions (names or ids) the caller may not read: every resource-manager request
        under one, and under the management groups above it (the tenant root group
        included), is refused 403 ``AuthorizationFailed``, as for a principal with a role on
        only part of the tenant; the subscriptions list still names them (see
        :func:`toolkit.sandbox.arm.common.refuse_denied`).
    arm_limits : bool
        Throttle the resource-management routes as the service does: a bucket of reads
        (250, refilled 25 a second) and of writes (200, 10 a second; every method but GET and
        HEAD, see ``arm_read_methods``) per caller and subscription, 429 with ``Retry-After``
        past it (see
        :func:`toolkit.sandbox.arm.common.limits`). Off by default, so that a test suite's
        thousands of requests a minute from one caller are not throttled.
    provider_limits : bool
        Throttle the resource providers' own quotas too: policy insights keeps one per caller
        and subscription (or tenant), 150 requests refilled 1 a second
        (:data:`toolkit._spec.arm.POLICY_INSIGHTS_BUCKET`: the provider publishes no numbers),
        checked before the resource manager's, 429 with ``Retry-After`` past it. Its answers
        always say what is left (``x-ms-ratelimit-remaining-policy-insights-requests``). Off by
        default.

    Examples
    --------
    >>> with Sandbox() as sb:                               # doctest: +SKIP
    ...     conn = toolkit.connect(sandbox=sb)
    """

    def __init__(self, *, seed: int = 7, port: int = 0, host: str = "127.0.0.1",
                 cloud: str = "neutral", namespace: str | None = None,
                 header_prefix: str | None = None, tls: bool = False,
                 lro_polls: int = 2, lro_retry_after: int = 1,
                 now: date | datetime | str | None = None,
                 epoch: datetime | None = None, frozen_clock: bool = False,
                 secret: str | None = None, network: NetworkModel | None = None,
                 compress: bool = True, compress_level: int = 5,
                 arm_limits: bool = False, provider_limits: bool = False,
                 deny_subscriptions: Sequence[str] = ()) -> None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError("the sandbox listens on loopback only")
        self.seed = seed
        self.host = host
        self.port = port
        try:
            self.cloud: Cloud = get_cloud(cloud)
        except KeyError:
            raise ValueError(f"unknown cloud {cloud!r}; clouds are {', '.join(CLOUDS)}") from None
        self.words: Vocabulary = replace(
            self.cloud.words, namespace=namespace or self.cloud.words.namespace,
            header_prefix=header_prefix or self.cloud.words.header_prefix)
        self.namespace = self.words.namespace
        self.header_prefix = self.words.header_prefix
        self.tls = tls
        self.ca_file: str | None = None
        self.lro_polls = lro_polls
        self.lro_retry_after = lro_retry_after
        if now is not None and epoch is not None:
            raise ValueError("give now= or epoch=, not both")
        self.epoch = world_epoch(epoch if epoch is not None else now)
        self.frozen_clock = frozen_clock
        self._held_at: datetime | None = None
        self.authority = TokenAuthority(secret)
        if network is not None and not isinstance(network, NetworkModel):
            raise TypeError("network must be a NetworkModel or None")
        if not 1 <= compress_level <= 9:
            raise ValueError("compress_level must be between 1 and 9")
        self.network = network
        self.compress = compress
        self.compress_level = compress_level
        self.arm_limits = arm_limits
        self.provider_limits = provider_limits
        if isinstance(deny_subscriptions, str):
            deny_subscriptions = (deny_subscriptions,)
        self.deny_subscriptions: tuple[str, ...] = tuple(deny_subscriptions)
        #: the methods the resource manager counts as reads: every other one (a POST query or
        #: action too) is a write, in the buckets and in the rate-limit header of its answer
        self.arm_read_methods: frozenset[str] = frozenset({"GET", "HEAD"})
        self.bytes_sent = 0
        self._bytes_lock = threading.Lock()
        self.faults = FaultPlan(seed)
        self.log: deque[LoggedRequest] = deque(maxlen=200_000)
        self._logged = 0  # requests logged since the start (the log keeps the latest ones)
        self._log_lock = threading.Lock()
        self.state: dict[str, Any] = {}
        self.state_lock = threading.RLock()
        self.router = Router(self.namespace)
        self._world: World | None = None
        self._world_lock = threading.Lock()
        #: checks run on a routed request of a family before its handler, in order (each
        #: raises :class:`~toolkit.sandbox.http.SandboxHTTPError` to refuse it): the families
        #: register them, as the resource manager does its throttling
        self.middleware: list[tuple[str, Middleware]] = []
        self._server: Server | None = None
        self._thread: threading.Thread | None = None
        self._started_at = time.monotonic()
        self._tmpdir: tempfile.TemporaryDirectory[str] | None = None
        for module in SERVICE_MODULES:
            importlib.import_module(module).register(self.router, self)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> Sandbox:
        """Start serving in a background thread; returns self."""
        if self._server is not None:
            return self
        server = Server((self.host, self.port), self)
        if self.tls:
            server.socket = self._wrap_tls(server.socket)
        self._server = server
        self.port = server.server_address[1]
        self._thread = threading.Thread(target=server.serve_forever, name=f"sandbox:{self.port}",
                                        kwargs={"poll_interval": STOP_POLL_SECONDS}, daemon=True)
        self._thread.start()
        with _RUNNING_LOCK:
            _RUNNING.append(self)
        logger.info("sandbox serving at %s", self.url)
        return self

    def _wrap_tls(self, sock: socket.socket) -> socket.socket:
        try:
            import trustme
        except ImportError as err:  # pragma: no cover - depends on the install
            raise ImportError(
                "a TLS sandbox needs trustme: pip install 'cloudops-frames[tls]'") from err

        ca = trustme.CA()
        cert = ca.issue_cert("127.0.0.1", "localhost")
        self._tmpdir = tempfile.TemporaryDirectory(prefix="toolkit-sandbox-")
        ca_path = Path(self._tmpdir.name) / "sandbox-ca.pem"
        ca.cert_pem.write_to_path(str(ca_path))
        self.ca_file = str(ca_path)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        cert.configure_cert(ctx)
        return ctx.wrap_socket(sock, server_side=True)

    def serve_forever(self) -> None:
        """Serve in the calling thread until interrupted (used by ``python -m``)."""
        self.start()
        assert self._thread is not None
        try:
            while self._thread.is_alive():
                self._thread.join(0.5)
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()

    def stop(self) -> None:
        """Stop serving and free the port."""
        server, self._server = self._server, None
        with _RUNNING_LOCK:
            if self in _RUNNING:
                _RUNNING.remove(self)
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._tmpdir is not None:
            self._tmpdir.cleanup()
            self._tmpdir = None

    def __enter__(self) -> Sandbox:
        """Start serving (see :meth:`start`)."""
        return self.start()

    def __exit__(self, *exc: object) -> None:
        """Stop serving (see :meth:`stop`)."""
        self.stop()

    @property
    def running(self) -> bool:
        """Whether the server is up."""
        return self._server is not None

    @property
    def url(self) -> str:
        """The base URL (all four families)."""
        scheme = "https" if self.tls else "http"
        return f"{scheme}://{self.host}:{self.port}"

    def __repr__(self) -> str:
        """Show the seed and the address (or ``stopped``)."""
        state = self.url if self.running else "stopped"
        return f"<Sandbox seed={self.seed} {state}>"

    # ------------------------------------------------------------------ world and clock
    @property
    def world(self) -> World:
        """The deterministic world (built on first use)."""
        if self._world is None:
            with self._world_lock:
                if self._world is None:
                    from toolkit.sandbox.world import World

                    self._world = World(self.seed, epoch=self.epoch,
                                        namespace=self.namespace, cloud=self.cloud)
        return self._world

    def now(self) -> datetime:
        """Tell the sandbox clock.

        Returns
        -------
        datetime
            The epoch plus the real time since the sandbox was made (the epoch itself with
            ``frozen_clock``; the held time while :meth:`hold_clock` holds it).
        """
        if self._held_at is not None:
            return self._held_at
        if self.frozen_clock:
            return self.epoch
        return self.epoch + timedelta(seconds=time.monotonic() - self._started_at)

    def hold_clock(self, when: datetime | None) -> None:
        """Hold the clock at ``when`` (an aware datetime), to see the services answer as then.

        ``None`` lets it run again.
        """
        if when is not None and when.tzinfo is None:
            raise ValueError("hold_clock needs an aware datetime (UTC)")
        self._held_at = when

    def catalog(self) -> pd.DataFrame:
        """List what the world holds (see :func:`toolkit.sandbox.catalog`).

        Returns
        -------
        pandas.DataFrame
            Columns ``kind``, ``subscription_id``, ``resource_group``, ``name``, ``location``,
            ``detail``.
        """
        return self.world.catalog()

    # ------------------------------------------------------------------ credentials
    def credential(self, *, expires_in: float = 3600,
                   roles: Sequence[str] = ALL_ROLES) -> SandboxCredential:
        """Make a credential whose tokens this sandbox accepts.

        Returns
        -------
        SandboxCredential
            An azure-core ``TokenCredential`` minting tokens with these roles and lifetime.
        """
        return SandboxCredential(self.authority, expires_in=expires_in, roles=roles)

    def token(self, family: str | None = "arm", *, expires_in: float = 3600,
              roles: Sequence[str] = ALL_ROLES, audience: str | None = None) -> str:
        """Mint a raw token for a family, or for all four with ``family=None``.

        Tests use it to make expired or wrong-audience tokens.

        Returns
        -------
        str
            The signed token.
        """
        aud: str | list[str]
        if audience is not None:
            aud = audience
        elif family is None:
            aud = [self.audiences(f)[0] for f in self.cloud.hosts]
        else:
            aud = self.audiences(family)[0]
        return self.authority.mint(aud, expires_in=expires_in, roles=roles)

    def audiences(self, family: str) -> tuple[str, ...]:
        """List the token audiences the sandbox accepts for a family.

        Returns
        -------
        tuple of str
            Its cloud's (the public cloud's for a family its cloud does not offer).
        """
        return self.cloud.audiences.get(family) or PUBLIC.audiences[family]

    def scope(self, family: str) -> str:
        """Name the token scope a client asks for to call a family of this sandbox.

        Returns
        -------
        str
            The scope (``<audience>/.default``).
        """
        return self.cloud.scope(family) or str(PUBLIC.scope(family))

    @property
    def maps_key(self) -> Any:
        """The maps shared key this sandbox accepts (a masked Secret)."""
        return self.authority.maps_key

    def note_bytes(self, n: int) -> None:
        """Count body bytes sent (:attr:`bytes_sent`, what went over the wire)."""
        with self._bytes_lock:
            self.bytes_sent += n

    # ------------------------------------------------------------------ faults and log
    def inject(self, kind: str, **kw: Any) -> FaultRule:
        """Add a fault rule (see :class:`~toolkit.sandbox.faults.FaultRule`)."""
        return self.faults.add(FaultRule(kind, **kw))

    def clear_faults(self) -> None:
        """Remove every fault rule."""
        self.faults.clear()

    @contextmanager
    def recording(self) -> Iterator[list[LoggedRequest]]:
        """Collect the requests made inside the block."""
        with self._log_lock:
            start = self._logged
        out: list[LoggedRequest] = []
        try:
            yield out
        finally:
            # the latest ones only, from the end: the log may hold many, and be full
            with self._log_lock:
                new = min(self._logged - start, len(self.log))
                out.extend(reversed(list(itertools.islice(reversed(self.log), new))))

    # ------------------------------------------------------------------ request handling
    def base_url_for(self, headers: dict[str, str]) -> str:
        """Give the address the client reached this sandbox at.

        The scheme it serves and the request's ``Host`` (as a service behind a front door builds
        its links), so the absolute URLs it hands out (next links, ``Location``, operation URLs)
        keep working behind a proxy or a mapped port. A missing or malformed ``Host`` gives the
        listening address.

        Returns
        -------
        str
            The base URL.
        """
        host = _Headers(headers).get("host") or ""
        if not _HOST_RE.fullmatch(host):
            return self.url
        return f"{'https' if self.tls else 'http'}://{host}"

    def handle(self, method: str, target: str, headers: dict[str, str],
               body: bytes) -> tuple[Reply, FaultRule | None, Request]:
        """Answer one request: faults, routing, api-version, authentication, the handler."""
        request = Request(method.upper(), target, _Headers(headers), body,
                          self.base_url_for(headers), self)
        route, path_params, path_exists = self.router.match(request.method, request.path)
        request.family = route.family if route else family_of(request.path)
        request.path_params = path_params
        body_fault: FaultRule | None = None
        fault_name: str | None = None
        try:
            rules = self.faults.draw(request.method, target)
            header_rule = parse_fault_header(
                request.headers.get(f"{self.header_prefix}sandbox-fault", "") or "")
            if header_rule is not None:
                rules.append(header_rule)
            for rule in rules:
                fault_name = rule.kind
                if rule.kind == "latency":
                    time.sleep(self.faults.jitter(rule) / 1000.0)
                elif rule.kind == "lro_fail":
                    request.fail_operation = True
                elif rule.kind in ("429", "500", "503"):
                    raise fault_error(rule)
                else:
                    body_fault = rule
            # the one public path: the sandbox's own description (toolkit.sandbox.openapi),
            # which holds no data; every other route authenticates
            public = route is not None and route.name == "openapi" and request.method == "GET"
            claims = {} if public else authenticate(request, self.authority, self.audiences,
                                                    self.header_prefix)
            request.claims = claims
            if route is None:
                if path_exists:
                    raise SandboxHTTPError(405, "MethodNotAllowed",
                                           f"The requested method {method} is not allowed.")
                raise SandboxHTTPError(404, not_found_code(request.family),
                                       f"No resource or route matches '{request.path}'.")
            check_api_version(request, route.api_versions)
            for family, check in self.middleware:
                if family == request.family:
                    check(request)
            reply = route.handler(request)
        except SandboxHTTPError as err:
            reply = error_reply(request, err.status, err.code, err.message, headers=err.headers,
                                **err.extra)
        except Exception:  # a sandbox bug must not kill the connection
            logger.exception("sandbox handler failed for %s %s", method, request.path)
            reply = error_reply(request, 500, "InternalServerError",
                                "The sandbox failed to process the request.")
        if reply.status >= 400 and body_fault is not None:
            body_fault = None
        reply.headers.setdefault(f"{self.header_prefix}request-id", request.request_id)
        reply.headers[SANDBOX_HEADER] = "true"
        if request.family == "arm":
            reply.headers.setdefault(f"{self.header_prefix}correlation-request-id",
                                     request.headers.get(f"{self.header_prefix}client-request-id")
                                     or request.request_id)
        logged = LoggedRequest(request.method, request.path, target.partition("?")[2],
                               request.family, reply.status, route.name if route else None,
                               fault_name)
        with self._log_lock:
            self.log.append(logged)
            self._logged += 1
        return reply, body_fault, request

    # ------------------------------------------------------------------ helpers for services
    def add_middleware(self, family: str, check: Middleware) -> None:
        """Run ``check`` on every routed request of ``family`` before its handler.

        Parameters
        ----------
        family : str
            ``arm``, ``maps``, ``graph`` or ``fabric``.
        check : callable
            Takes the request; raises :class:`~toolkit.sandbox.http.SandboxHTTPError` to
            refuse it (the resource manager's throttling is one).
        """
        self.middleware.append((family, check))

    def new_id(self) -> str:
        """Make a fresh identifier for operations and requests.

        Returns
        -------
        str
            A random UUID.
        """
        return str(uuid.uuid4())
