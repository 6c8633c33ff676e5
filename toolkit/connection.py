"""Connections: endpoints, credentials and settings, and the default connection.

``connect()`` builds a :class:`Connection` and makes it the default one that every public function
uses when it gets ``connection=None``. With nothing configured (no arguments, no ``TOOLKIT_*``
environment variables), it starts the embedded sandbox on a free loopback port and says so in one
log line (and one line on stderr when no logging is configured).

Environment variables (each gives the keyword of the same meaning):

=============================  ===============================================================
``TOOLKIT_BASE_URL``           ``base_url``: all four families at one address
``TOOLKIT_ARM_URL``            ``arm_url`` (resource management)
``TOOLKIT_MAPS_URL``           ``maps_url``
``TOOLKIT_GRAPH_URL``          ``graph_url`` (identity)
``TOOLKIT_FABRIC_URL``         ``fabric_url`` (eventstreams)
``TOOLKIT_TOKEN``              ``token``: a static bearer token
``TOOLKIT_CREDENTIAL``         ``default`` uses azure-identity's ``DefaultAzureCredential``
``TOOLKIT_MAPS_KEY``           ``maps_key`` (shared key)
``TOOLKIT_MAPS_SAS_TOKEN``     ``maps_sas_token``
``TOOLKIT_MAPS_CLIENT_ID``     ``maps_client_id`` (account id sent with bearer tokens to maps)
``TOOLKIT_NAMESPACE``          ``namespace`` (provider namespace word, default ``Vendor``)
``TOOLKIT_HEADER_PREFIX``      ``header_prefix`` (default ``x-vendor-``)
``TOOLKIT_VERIFY``             ``verify``: ``true``, ``false`` (loopback only) or a CA bundle path
``TOOLKIT_TRUSTED_HOSTS``      ``trusted_hosts``: comma-separated extra hosts links may name
``TOOLKIT_MAX_RETRIES``        retries per request (default 5)
``TOOLKIT_MAX_RETRY_WAIT``     longest ``Retry-After`` waited out, in seconds (default 60)
``TOOLKIT_MAX_CONCURRENCY``    concurrent requests of a fan-out (default 8)
``TOOLKIT_TIMEOUT``            read timeout of one request, seconds (default 120)
``TOOLKIT_REQUEST_DEADLINE``   overall seconds one request may take (default 600)
``TOOLKIT_MAX_BODY_BYTES``     largest response body, after decompression (default 256 MiB)
``TOOLKIT_POLL_INTERVAL``      wait between polls when the service names none (default 30)
``TOOLKIT_MIN_POLL_WAIT``      shortest wait between polls (default 1)
``TOOLKIT_PROGRESS``           ``0`` hides progress bars
``TOOLKIT_CACHE``              ``1`` (default file) or a file path: cache read answers on disk
``TOOLKIT_SANDBOX``            ``1`` forces the sandbox even when endpoints are set
``TOOLKIT_SANDBOX_SEED``       seed of the sandbox world (default 7)
``TOOLKIT_SANDBOX_SECRET``     derive the started sandbox's signing key and maps key from this
=============================  ===============================================================
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from toolkit._core.config import Credentials, FamilyConfig, Settings, check_verify
from toolkit._core.errors import ValidationError
from toolkit._core.pipeline import FAMILIES, Pipeline, Stats
from toolkit._core.secrets import RedactingHandler, Secret, install_log_redaction

if TYPE_CHECKING:
    from toolkit.sandbox import Sandbox

logger = logging.getLogger(__name__)

__all__ = ["Connection", "Settings", "connect", "environment_credential", "get_connection"]

#: Real service hosts, used when a credential is given without endpoints.
DEFAULT_URLS = {
    "arm": "https://management.vendor.com",
    "maps": "https://atlas.vendor.com",
    "graph": "https://graph.vendor.com",
    "fabric": "https://api.fabric.vendor.com",
}

#: Token scopes per family (see notes on authentication).
DEFAULT_SCOPES = {
    "arm": "https://management.vendor.com/.default",
    "maps": "https://atlas.vendor.com/.default",
    "graph": "https://graph.vendor.com/.default",
    "fabric": "https://api.fabric.vendor.com/.default",
}


_ENV_SETTINGS = {
    "max_retries": ("TOOLKIT_MAX_RETRIES", int),
    "max_retry_wait": ("TOOLKIT_MAX_RETRY_WAIT", float),
    "max_concurrency": ("TOOLKIT_MAX_CONCURRENCY", int),
    "max_partitions": ("TOOLKIT_MAX_PARTITIONS", int),
    "read_timeout": ("TOOLKIT_TIMEOUT", float),
    "request_deadline": ("TOOLKIT_REQUEST_DEADLINE", float),
    "max_body_bytes": ("TOOLKIT_MAX_BODY_BYTES", int),
    "poll_interval": ("TOOLKIT_POLL_INTERVAL", float),
    "min_poll_wait": ("TOOLKIT_MIN_POLL_WAIT", float),
    "trusted_hosts": ("TOOLKIT_TRUSTED_HOSTS",
                      lambda v: tuple(h.strip() for h in v.split(",") if h.strip())),
    "progress": ("TOOLKIT_PROGRESS", lambda v: v.strip().lower() not in ("0", "false", "no")),
    "cache": ("TOOLKIT_CACHE", str),
}


def _settings_from_env(env: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, (var, conv) in _ENV_SETTINGS.items():
        if env.get(var):
            try:
                out[name] = conv(env[var])
            except ValueError as err:
                raise ValidationError(var, env[var], f"must be a {conv.__name__}") from err
    return out


def _as_secret(value: Any, label: str) -> Secret | None:
    if value is None or value == "":
        return None
    return value if isinstance(value, Secret) else Secret(value, label)


@dataclass(eq=False)
class Connection:
    """Endpoints, credentials and settings for the four service families.

    Build one with :func:`connect`. Secrets (``token``, ``maps_key``, ``maps_sas_token``) are held
    masked; the repr never shows them.

    Attributes
    ----------
    sandbox : Sandbox or None
        The running embedded sandbox when the connection uses one.
    stats : Stats
        Request, attempt, retry and throttling counts of this connection.
    sleep : callable
        Waits (Retry-After, backoff, polling) go through it; tests replace it to record waits.
    """

    arm_url: str
    maps_url: str
    graph_url: str
    fabric_url: str
    credential: Any = None
    token: Secret | None = None
    maps_key: Secret | None = None
    maps_sas_token: Secret | None = None
    maps_client_id: str | None = None
    namespace: str = "Vendor"
    header_prefix: str = "x-vendor-"
    verify: bool | str = True
    settings: Settings = field(default_factory=Settings)
    scopes: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_SCOPES))
    sandbox: Sandbox | None = None
    stats: Stats = field(default_factory=Stats)
    sleep: Any = time.sleep
    async_header: str = ""
    owns_sandbox: bool = False

    def __post_init__(self) -> None:
        self._pipelines: dict[str, Pipeline] = {}
        self._lock = threading.Lock()
        self._skipped = 0.0

    def url_for(self, family: str) -> str:
        """The base URL of a family."""
        return {"arm": self.arm_url, "maps": self.maps_url, "graph": self.graph_url,
                "fabric": self.fabric_url}[family]

    def scope_for(self, family: str) -> str:
        """The token scope of a family."""
        return self.scopes[family]

    def sleep_for(self, seconds: float) -> None:
        """Wait (through :attr:`sleep`, so tests can record instead of sleeping)."""
        if seconds > 0:
            self.sleep(seconds)
            if self.sleep is not time.sleep:
                with self._lock:
                    self._skipped += seconds

    def clock(self) -> float:
        """Monotonic seconds, counting the waits a replaced :attr:`sleep` skipped, so that rate
        limits and timeouts see the time they asked to wait as passed."""
        return time.monotonic() + self._skipped

    def config_for(self, family: str) -> FamilyConfig:
        """The frozen configuration the family's pipeline is built from."""
        return FamilyConfig(
            family=family, base_url=self.url_for(family), scope=self.scopes.get(family),
            header_prefix=self.header_prefix, namespace=self.namespace,
            async_header=self.async_header or f"{self.namespace}-AsyncOperation",
            verify=self.verify, settings=self.settings,
            credentials=Credentials(self.credential, self.token, self.maps_key,
                                    self.maps_sas_token, self.maps_client_id),
            stats=self.stats, sleep=self.sleep_for, clock=self.clock,
        )

    def pipeline(self, family: str) -> Pipeline:
        """The family's pipeline, built on first use and kept."""
        with self._lock:
            pipe = self._pipelines.get(family)
            if pipe is None:
                pipe = self._pipelines[family] = Pipeline(self.config_for(family))
            return pipe

    def close(self) -> None:
        """Close pooled connections (and stop the sandbox this connection started)."""
        with self._lock:
            for pipe in self._pipelines.values():
                pipe.close()
            self._pipelines.clear()
        if self.sandbox is not None and self.owns_sandbox:
            self.sandbox.stop()

    def __repr__(self) -> str:
        auth = []
        if self.credential is not None:
            auth.append(f"credential={type(self.credential).__name__}")
        for name in ("token", "maps_key", "maps_sas_token"):
            if getattr(self, name):
                auth.append(f"{name}=••••••••")
        where = f"sandbox at {self.sandbox.url}" if self.sandbox is not None else self.arm_url
        return f"<Connection {where} {' '.join(auth) or 'no credential'}>"

    def _repr_html_(self) -> str:
        import html

        return f"<code>{html.escape(repr(self))}</code>"


_default: Connection | None = None
_default_lock = threading.RLock()


def _install_redaction() -> None:
    install_log_redaction("toolkit", "azure", "urllib3")


def connect(
    base_url: str | None = None,
    *,
    arm_url: str | None = None,
    maps_url: str | None = None,
    graph_url: str | None = None,
    fabric_url: str | None = None,
    credential: Any = None,
    token: str | Secret | None = None,
    maps_key: str | Secret | None = None,
    maps_sas_token: str | Secret | None = None,
    maps_client_id: str | None = None,
    namespace: str = "Vendor",
    header_prefix: str = "x-vendor-",
    verify: bool | str = True,
    sandbox: bool | Sandbox | None = None,
    **settings: Any,
) -> Connection:
    """Build a connection and make it the default.

    Parameters
    ----------
    base_url : str, optional
        One address for all four families (a gateway, or a sandbox started elsewhere).
    arm_url, maps_url, graph_url, fabric_url : str, optional
        Per-family addresses; they win over ``base_url``.
    credential : object, optional
        Anything with azure-identity's ``get_token(*scopes)`` (``DefaultAzureCredential()``...).
    token : str, optional
        A static bearer token (used when no credential is given).
    maps_key, maps_sas_token : str, optional
        Maps shared key or SAS token (they take precedence over a bearer token for maps).
    maps_client_id : str, optional
        Maps account id sent as ``x-vendor-client-id`` with bearer tokens.
    namespace : str
        Provider namespace word (``Vendor`` as in the spec).
    header_prefix : str
        Custom header prefix (``x-vendor-`` as in the spec).
    verify : bool or str
        TLS verification: ``True``, or a CA bundle path (for a sandbox serving HTTPS). ``False``
        is accepted for loopback addresses only (and every request is held to that); any other
        value is a ValidationError.
    sandbox : bool or Sandbox, optional
        ``True`` starts the embedded sandbox whatever else is set; a running ``Sandbox`` is
        used as is.
    **settings
        Any :class:`Settings` field (``max_retries``, ``max_retry_wait``, ``max_concurrency``,
        ``read_timeout``, ``request_deadline``, ``max_body_bytes``, ``poll_interval``,
        ``min_poll_wait``, ``trusted_hosts``, ``progress``...). ``cache=True`` (or a file path)
        keeps read answers in an on-disk cache keyed by the caller's identity
        (:mod:`toolkit._core.cache`); ``toolkit.cache_clear()`` empties it.

    Returns
    -------
    Connection
        Also made the default connection. A previous default is left open (code may still hold
        it); ``Connection.close()`` closes one, and stops the sandbox it started.
    """
    env = dict(os.environ)
    unknown = set(settings) - {f.name for f in fields(Settings)}
    if unknown:
        raise ValidationError(sorted(unknown)[0], settings[sorted(unknown)[0]],
                              f"not a connect() setting; settings are "
                              f"{', '.join(f.name for f in fields(Settings))}")
    merged = {**_settings_from_env(env), **settings}
    conf = Settings(**merged).validated()

    base_url = base_url or env.get("TOOLKIT_BASE_URL")
    urls = {
        "arm": arm_url or env.get("TOOLKIT_ARM_URL"),
        "maps": maps_url or env.get("TOOLKIT_MAPS_URL"),
        "graph": graph_url or env.get("TOOLKIT_GRAPH_URL"),
        "fabric": fabric_url or env.get("TOOLKIT_FABRIC_URL"),
    }
    if credential is None and env.get("TOOLKIT_CREDENTIAL", "").lower() == "default":
        try:
            from azure.identity import DefaultAzureCredential
        except ImportError as err:
            raise ValidationError("TOOLKIT_CREDENTIAL", "default",
                                  "needs azure-identity: pip install 'toolkit[identity]'") from err
        credential = DefaultAzureCredential()
    token = token or env.get("TOOLKIT_TOKEN") or None
    maps_key = maps_key or env.get("TOOLKIT_MAPS_KEY") or None
    maps_sas_token = maps_sas_token or env.get("TOOLKIT_MAPS_SAS_TOKEN") or None
    maps_client_id = maps_client_id or env.get("TOOLKIT_MAPS_CLIENT_ID") or None
    namespace = env.get("TOOLKIT_NAMESPACE", namespace) if namespace == "Vendor" else namespace
    header_prefix = (env.get("TOOLKIT_HEADER_PREFIX", header_prefix)
                     if header_prefix == "x-vendor-" else header_prefix)
    if verify is True and env.get("TOOLKIT_VERIFY", "").strip():
        v = env["TOOLKIT_VERIFY"].strip()
        verify = False if v.lower() in ("0", "false", "no") else (True if v.lower() in (
            "1", "true", "yes") else v)
    if env.get("TOOLKIT_SANDBOX", "").lower() in ("1", "true", "yes") and sandbox is None:
        sandbox = True
    configured = any(urls.values()) or base_url or credential or token or maps_key or maps_sas_token

    _install_redaction()
    running = None
    owns = False
    if sandbox is True or (sandbox is None and not configured):
        from toolkit.sandbox import Sandbox as _Sandbox

        seed = int(env.get("TOOLKIT_SANDBOX_SEED", "7"))
        running = _Sandbox(seed=seed, namespace=namespace, header_prefix=header_prefix,
                           secret=env.get("TOOLKIT_SANDBOX_SECRET") or None).start()
        owns = True
        _announce(f"toolkit: no endpoint configured; started the sandbox at {running.url} "
                  "(toolkit.sandbox.catalog() lists its world)")
    elif sandbox not in (None, False):
        running = sandbox
    if running is not None:
        base_url = running.url
        credential = credential or running.credential()
        maps_key = maps_key or running.maps_key
        if running.tls and verify is True:
            verify = running.ca_file
    for fam in FAMILIES:
        urls[fam] = (urls[fam] or base_url or DEFAULT_URLS[fam]).rstrip("/")
    verify = check_verify(verify, list(urls.values()))

    conn = Connection(
        arm_url=urls["arm"], maps_url=urls["maps"], graph_url=urls["graph"],
        fabric_url=urls["fabric"], credential=credential,
        token=_as_secret(token, "token"), maps_key=_as_secret(maps_key, "maps key"),
        maps_sas_token=_as_secret(maps_sas_token, "maps SAS token"),
        maps_client_id=maps_client_id, namespace=namespace, header_prefix=header_prefix,
        verify=verify, settings=conf, sandbox=running, owns_sandbox=owns,
    )
    global _default
    with _default_lock:
        _default = conn
    return conn


def environment_credential(arm_url: str, parameter: str = "credential") -> Any:
    """A credential from this process's own environment, for a process that must authenticate
    without being handed a secret (a dask worker).

    ``TOOLKIT_SANDBOX_SECRET`` with a loopback ``arm_url``: the sandbox's token authority derived
    from that secret; ``TOOLKIT_TOKEN``: that static token (a string);
    ``TOOLKIT_CREDENTIAL=default``: azure-identity's ``DefaultAzureCredential`` (environment,
    workload or managed identity).

    Raises
    ------
    ValidationError
        None of them is set (named ``parameter``).
    """
    secret = os.environ.get("TOOLKIT_SANDBOX_SECRET")
    from toolkit._core.pipeline import is_loopback

    if secret and is_loopback(arm_url):
        from toolkit.sandbox.auth import SandboxCredential, TokenAuthority

        return SandboxCredential(TokenAuthority(secret))
    if os.environ.get("TOOLKIT_TOKEN"):
        return os.environ["TOOLKIT_TOKEN"]
    if os.environ.get("TOOLKIT_CREDENTIAL", "").lower() == "default":
        try:
            from azure.identity import DefaultAzureCredential
        except ImportError as err:
            raise ValidationError("TOOLKIT_CREDENTIAL", "default",
                                  "needs azure-identity: pip install 'toolkit[identity]'") from err
        return DefaultAzureCredential()
    raise ValidationError(parameter, None, "this process found no credential: set "
                                           "TOOLKIT_CREDENTIAL=default (environment, workload or "
                                           "managed identity) or TOOLKIT_TOKEN in its "
                                           "environment, or TOOLKIT_SANDBOX_SECRET for a sandbox")



def _announce(line: str) -> None:
    logger.info(line)
    configured = [h for name in ("", "toolkit") for h in logging.getLogger(name).handlers
                  if not isinstance(h, logging.NullHandler | RedactingHandler)]
    if not configured:
        sys.stderr.write(line + "\n")


def get_connection(connection: Connection | None = None) -> Connection:
    """The given connection, else the default one (made by :func:`connect` on first use)."""
    if connection is not None:
        if not isinstance(connection, Connection):
            raise ValidationError("connection", type(connection).__name__,
                                  "must be a Connection from toolkit.connect()")
        return connection
    global _default
    with _default_lock:
        if _default is None:
            connect()
        assert _default is not None
        return _default
