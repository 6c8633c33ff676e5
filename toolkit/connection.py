"""Connections: endpoints, credentials and settings, and the default connection.

``connect()`` builds a :class:`Connection` and makes it the default one that every public function
uses when it gets ``connection=None``. With nothing configured (no arguments, no ``TOOLKIT_*``
environment variables), it starts the embedded sandbox on a free loopback port and says so with a
:class:`~toolkit.SandboxWarning` (invented data, and how to connect to the real services); every
frame the sandbox answers carries ``df.attrs["sandbox"] = True``. Naming a real cloud never
starts the sandbox.

Environment variables (each gives the keyword of the same meaning):

=============================  ===============================================================
``TOOLKIT_CLOUD``              ``cloud``: ``public``, ``usgov``, ``china`` or ``neutral`` (or
                               the Azure CLI's ``AzureCloud``, ``AzureUSGovernment``...)
``TOOLKIT_BASE_URL``           ``base_url``: all four families at one address
``TOOLKIT_ARM_URL``            ``arm_url`` (resource management)
``TOOLKIT_MAPS_URL``           ``maps_url``
``TOOLKIT_GRAPH_URL``          ``graph_url`` (identity)
``TOOLKIT_FABRIC_URL``         ``fabric_url`` (eventstreams)
``TOOLKIT_TOKEN``              ``token``: a static bearer token
``TOOLKIT_CREDENTIAL``         ``credential`` shortcut: ``default``, ``cli``, ``managed_identity``,
                               ``interactive`` or ``device_code`` (azure-identity)
``TOOLKIT_MAPS_KEY``           ``maps_key`` (shared key)
``TOOLKIT_MAPS_SAS_TOKEN``     ``maps_sas_token``
``TOOLKIT_MAPS_CLIENT_ID``     ``maps_client_id`` (account id sent with bearer tokens to maps)
``TOOLKIT_NAMESPACE``          ``namespace`` (provider namespace word; the cloud's by default)
``TOOLKIT_HEADER_PREFIX``      ``header_prefix`` (the cloud's by default)
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
``TOOLKIT_SANDBOX_NOW``        the started sandbox's day or instant (``2026-11-20``, an ISO
                               date-time); default today: its world follows the real date
=============================  ===============================================================
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from toolkit._core.config import (
    Credentials,
    FamilyConfig,
    Settings,
    check_plain_http,
    check_verify,
)
from toolkit._core.credentials import check_authority, credential_for, default_credential
from toolkit._core.environment import Asked, cloud_named, cloud_of, settings_of
from toolkit._core.errors import SandboxWarning, ValidationError, warn_user
from toolkit._core.pipeline import FAMILIES, Pipeline
from toolkit._core.policies import Stats
from toolkit._core.provenance import note_default_connection
from toolkit._core.secrets import RedactingHandler, Secret, install_log_redaction
from toolkit._spec.clouds import DEFAULT_CLOUD, NEUTRAL, Cloud, Vocabulary, get_cloud

if TYPE_CHECKING:
    from toolkit.sandbox import Sandbox

logger = logging.getLogger(__name__)

__all__ = ["Connection", "Settings", "connect", "environment_credential", "get_connection"]

#: Token scopes per family of the specification's neutral cloud (a Connection built by hand).
DEFAULT_SCOPES: dict[str, str | None] = dict(NEUTRAL.scopes)

_FAMILY_NAMES = {"arm": "resource management", "maps": "maps", "graph": "identity (Graph)",
                 "fabric": "eventstreams (Fabric)"}

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
    proxies : mapping or None
        Proxy per scheme for every request (``connect(proxies=...)``).
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
    scopes: dict[str, str | None] = field(default_factory=lambda: dict(DEFAULT_SCOPES))
    sandbox: Sandbox | None = None
    stats: Stats = field(default_factory=Stats)
    sleep: Any = time.sleep
    async_header: str = ""
    owns_sandbox: bool = False
    cloud: Cloud = NEUTRAL
    words: Vocabulary = NEUTRAL.words
    proxies: Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        """Apply the rules :func:`connect` applies: plain http to loopback only, ``verify``."""
        urls = {"arm": self.arm_url, "maps": self.maps_url, "graph": self.graph_url,
                "fabric": self.fabric_url}
        for family, url in urls.items():
            check_plain_http(f"{family}_url", url)
        self.verify = check_verify(self.verify, [u for u in urls.values() if u])
        self._pipelines: dict[str, Pipeline] = {}
        self._lock = threading.Lock()
        self._skipped = 0.0
        if self.words.namespace != self.namespace or \
                self.words.header_prefix != self.header_prefix:
            self.words = replace(self.words, namespace=self.namespace,
                                 header_prefix=self.header_prefix)
        self.async_header = self.async_header or self.words.async_header

    def url_for(self, family: str) -> str:
        """Return the base URL of a family.

        Raises
        ------
        ValidationError
            The connection's cloud does not offer the family and no URL was given for it.
        """
        url = {"arm": self.arm_url, "maps": self.maps_url, "graph": self.graph_url,
               "fabric": self.fabric_url}[family]
        if not url:
            raise ValidationError(f"{family}_url", None,
                                  f"the {self.cloud.name} cloud offers no {_FAMILY_NAMES[family]} "
                                  f"service; pass {family}_url= (and a token scope in scopes=) "
                                  "to use one")
        return url

    def scope_for(self, family: str) -> str:
        """Return the token scope of a family.

        Raises
        ------
        ValidationError
            No scope is known for the family (a family the cloud does not offer, reached at a
            URL given by hand: pass ``scopes={family: ...}``).
        """
        scope = self.scopes.get(family)
        if not scope:
            raise ValidationError("scopes", family,
                                  f"the {self.cloud.name} cloud names no token scope for "
                                  f"{_FAMILY_NAMES[family]}; pass scopes={{'{family}': "
                                  "'<resource>/.default'}}")
        return scope

    def check_offered(self, operation: str) -> None:
        """Refuse, before any request, an operation the connection's cloud does not offer.

        Raises
        ------
        ValidationError
            Naming the ``cloud`` and the operation.
        """
        if operation in self.cloud.unavailable:
            raise ValidationError("cloud", self.cloud.name,
                                  f"{operation} is not available in the {self.cloud.name} "
                                  "cloud (the service does not offer it there)")

    def sleep_for(self, seconds: float) -> None:
        """Wait (through :attr:`sleep`, so tests can record instead of sleeping)."""
        if seconds > 0:
            self.sleep(seconds)
            if self.sleep is not time.sleep:
                with self._lock:
                    self._skipped += seconds

    def clock(self) -> float:
        """Return monotonic seconds, counting the waits a replaced :attr:`sleep` skipped.

        Rate limits and timeouts thus see the time they asked to wait as passed.
        """
        return time.monotonic() + self._skipped

    def config_for(self, family: str) -> FamilyConfig:
        """Return the frozen configuration the family's pipeline is built from."""
        return FamilyConfig(
            family=family, base_url=self.url_for(family), scope=self._scope_needed(family),
            header_prefix=self.header_prefix, namespace=self.namespace,
            async_header=self.async_header,
            verify=self.verify, settings=self.settings,
            credentials=Credentials(self.credential, self.token, self.maps_key,
                                    self.maps_sas_token, self.maps_client_id),
            stats=self.stats, sleep=self.sleep_for, clock=self.clock,
            sandbox=self.sandbox is not None, proxies=self.proxies,
        )

    def _scope_needed(self, family: str) -> str | None:
        """Return the family's scope when a credential will be asked for a token."""
        if self.credential is None or self.token is not None or (
                family == "maps" and (self.maps_key or self.maps_sas_token)):
            return self.scopes.get(family)
        return self.scope_for(family)

    def pipeline(self, family: str) -> Pipeline:
        """Return the family's pipeline, built on first use and kept."""
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
        """Show the endpoints and the kind of credential, never a secret."""
        auth = []
        if self.credential is not None:
            auth.append(f"credential={type(self.credential).__name__}")
        for name in ("token", "maps_key", "maps_sas_token"):
            if getattr(self, name):
                auth.append(f"{name}=••••••••")
        where = f"sandbox at {self.sandbox.url}" if self.sandbox is not None else self.arm_url
        return f"<Connection {where} {' '.join(auth) or 'no credential'}>"

    def _repr_html_(self) -> str:
        from toolkit._core.text import html_text

        return f"<code>{html_text(repr(self))}</code>"


_default: Connection | None = None
_default_lock = threading.RLock()

_SANDBOX_WARNING = (
    "toolkit: nothing is configured, so every function answers from the embedded sandbox on "
    "127.0.0.1: invented data, not your cloud's (frames carry df.attrs['sandbox'] = True). To "
    "use the real services: toolkit.connect(cloud='public', credential='cli') (or 'default', "
    "'managed_identity', 'interactive', 'device_code', a credential object, or token=), or set "
    "TOOLKIT_CLOUD and TOOLKIT_CREDENTIAL. toolkit.sandbox.catalog() lists the sandbox's world.")


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
    cloud: str | None = None,
    scopes: dict[str, str] | None = None,
    namespace: str | None = None,
    header_prefix: str | None = None,
    verify: bool | str = True,
    sandbox: bool | Sandbox | None = None,
    proxies: Mapping[str, str] | None = None,
    **settings: Any,
) -> Connection:
    """Build a connection and make it the default.

    Parameters
    ----------
    base_url : str, optional
        One address for all four families (a gateway, or a sandbox started elsewhere).
    arm_url, maps_url, graph_url, fabric_url : str, optional
        Per-family addresses; they win over ``base_url``. Plain ``http://`` is accepted for
        loopback addresses only (any other host: ValidationError naming the parameter).
    credential : object or str, optional
        Anything with azure-identity's ``get_token(*scopes)`` (``DefaultAzureCredential()``...),
        or a shortcut word built with azure-identity and given the cloud's sign-in authority:
        ``"default"`` (``DefaultAzureCredential``), ``"cli"`` (``AzureCliCredential``: the
        Azure CLI's login and cloud), ``"managed_identity"``, ``"interactive"`` (a browser
        sign-in), ``"device_code"``. ``TOOLKIT_CREDENTIAL`` takes the same words. Naming a
        real cloud without any credential or token means ``"default"``.
    token : str, optional
        A static bearer token (used when no credential is given).
    maps_key, maps_sas_token : str, optional
        Maps shared key or SAS token (they take precedence over a bearer token for maps).
    maps_client_id : str, optional
        Maps account id sent as the ``client-id`` header of the cloud's prefix
        (``x-ms-client-id``) with bearer tokens.
    cloud : {"public", "usgov", "china", "neutral"}, optional
        The cloud whose hosts, token scopes and words every family uses
        (:mod:`toolkit._spec.clouds`); the Azure CLI's names (``AzureCloud``,
        ``AzureUSGovernment``, ``AzureChinaCloud``) are accepted, in any case. Naming a real
        cloud (here or in ``TOOLKIT_CLOUD``) never starts the sandbox: without a credential,
        azure-identity's default chain for that cloud is used (an error says what to configure
        when azure-identity is not installed). Default: ``TOOLKIT_CLOUD``, else the sandbox's own
        cloud when connecting to a sandbox, else the cloud whose hosts the given URLs name,
        else ``neutral`` when URLs are given (a gateway or a sandbox in another process, in
        the specification's words) and ``public`` when none are (a credential alone means
        the public cloud). A family the cloud does not offer (maps and eventstreams in
        ``china``, eventstreams in ``usgov``) needs its URL given; without one, calling a
        function of that family raises ValidationError.
    scopes : dict, optional
        Token scope per family (``{"fabric": "https://.../.default"}``), over the cloud's.
    namespace : str, optional
        Low-level override of the provider namespace word (the cloud's by default:
        ``Microsoft`` in a real cloud, ``Vendor`` in the neutral one).
    header_prefix : str, optional
        Low-level override of the custom header prefix (``x-ms-`` / ``x-vendor-``).
    verify : bool or str
        TLS verification: ``True``, or a CA bundle path (for a sandbox serving HTTPS). ``False``
        is accepted for loopback addresses only (and every request is held to that); any other
        value is a ValidationError.
    sandbox : bool or Sandbox, optional
        ``True`` starts the embedded sandbox whatever else is set; a running ``Sandbox`` is
        used as is. With nothing configured at all (no endpoint, credential, token, key or
        cloud), the sandbox is started too, with a :class:`~toolkit.SandboxWarning` saying its
        data is invented. Every frame a sandbox answered has ``df.attrs["sandbox"] = True``.
    proxies : dict, optional
        Proxy per scheme, as requests takes them (``{"https": "http://proxy:8080"}``), for
        every request of the connection (azure-core's ``ProxyPolicy``); ``HTTPS_PROXY`` and
        ``HTTP_PROXY`` in the environment apply without it.
    **settings
        Any :class:`Settings` field (``max_retries``, ``max_retry_wait``, ``max_concurrency``,
        ``read_timeout``, ``request_deadline``, ``max_body_bytes``, ``poll_interval``,
        ``min_poll_wait``, ``trusted_hosts``, ``progress``...). ``cache=True`` (or a file path)
        keeps read answers in an on-disk cache keyed by the credential that asked
        (:mod:`toolkit._core.cache`); ``toolkit.cache_clear()`` empties it.

    Returns
    -------
    Connection
        Also made the default connection. A previous default is left open (code may still hold
        it); ``Connection.close()`` closes one, and stops the sandbox it started.
    """
    env = dict(os.environ)
    conf = settings_of(settings, env)
    asked = Asked.of(env, base_url=base_url, urls={"arm": arm_url, "maps": maps_url,
                                                     "graph": graph_url, "fabric": fabric_url},
                      credential=credential, token=token, maps_key=maps_key,
                      maps_sas_token=maps_sas_token, maps_client_id=maps_client_id,
                      cloud=cloud, namespace=namespace, header_prefix=header_prefix,
                      verify=verify, sandbox=sandbox, proxies=proxies)
    _install_redaction()
    running, owns = _sandbox_for(asked, env)
    chosen = _cloud_and_credential(asked, running)
    urls = _family_urls(asked, chosen)
    token_scopes = _token_scopes(running, chosen, scopes, urls)
    conn = Connection(
        arm_url=urls["arm"], maps_url=urls["maps"], graph_url=urls["graph"],
        fabric_url=urls["fabric"], credential=asked.credential,
        token=_as_secret(asked.token, "token"), maps_key=_as_secret(asked.maps_key, "maps key"),
        maps_sas_token=_as_secret(asked.maps_sas_token, "maps SAS token"),
        maps_client_id=asked.maps_client_id,
        namespace=asked.namespace or chosen.words.namespace,
        header_prefix=asked.header_prefix or chosen.words.header_prefix,
        verify=asked.verify, settings=conf, sandbox=running, owns_sandbox=owns,
        scopes=token_scopes, cloud=chosen, words=chosen.words,
        proxies=asked.proxies,
    )
    _make_default(conn)
    return conn


# ---------------------------------------------------------------------- the steps of connect()
def _sandbox_for(asked: Asked, env: Mapping[str, str]) -> tuple[Sandbox | None, bool]:
    """Find the sandbox the connection uses (started here, given, or none), and its owner.

    With nothing configured, and no real cloud named, the sandbox starts with a warning (asking
    for real data is never answered from the sandbox unasked). A sandbox used fills in the
    endpoints, the credential, the maps key, its CA bundle and its cloud.
    """
    by_default = asked.sandbox is None and not asked.configured and not (
        asked.cloud is not None and asked.cloud.real)
    running: Sandbox | None = None
    owns = False
    if asked.sandbox is True or by_default:
        running, owns = _start_sandbox(asked, env, by_default), True
    elif asked.sandbox is not None and not isinstance(asked.sandbox, bool):
        running = asked.sandbox
    asked.named = asked.cloud is not None
    if running is not None:
        asked.base_url = running.url
        asked.credential = asked.credential or running.credential()
        asked.maps_key = asked.maps_key or running.maps_key
        if running.tls and asked.verify is True:
            asked.verify = running.ca_file or asked.verify
        asked.cloud = asked.cloud or running.cloud
        asked.named = True
    return running, owns


def _start_sandbox(asked: Asked, env: Mapping[str, str], by_default: bool) -> Sandbox:
    """Start the embedded sandbox in the cloud asked (neutral by default) and say so."""
    from toolkit.sandbox import Sandbox as _Sandbox

    seed = int(env.get("TOOLKIT_SANDBOX_SEED", "7"))
    running = _Sandbox(seed=seed, cloud=(asked.cloud or NEUTRAL).name, namespace=asked.namespace,
                       header_prefix=asked.header_prefix,
                       secret=env.get("TOOLKIT_SANDBOX_SECRET") or None,
                       now=env.get("TOOLKIT_SANDBOX_NOW", "").strip() or None).start()
    words = "" if running.cloud.name == "neutral" else \
        f" in the {running.cloud.name} cloud's vocabulary"
    line = (f"toolkit: started the sandbox at {running.url}{words} "
            "(toolkit.sandbox.catalog() lists its world)")
    if by_default:
        logger.info(line)
        warn_user(_SANDBOX_WARNING, SandboxWarning)
    else:
        _announce(line)
    return running


def _cloud_and_credential(asked: Asked, running: Sandbox | None) -> Cloud:
    """Choose the connection's cloud and build its credential.

    A shortcut word is built for that cloud; a real cloud named without any credential gets the
    default chain; a credential object given is checked against the cloud's sign-in host.
    """
    chosen = asked.cloud
    if chosen is None:
        given = {"base": asked.base_url or "", **{f: u or "" for f, u in asked.urls.items()}}
        chosen = cloud_of(given) if any(given.values()) else get_cloud(DEFAULT_CLOUD)
    if asked.word is not None:
        asked.credential = credential_for(asked.word[0], chosen, asked.word[1])
    elif asked.named and running is None and asked.credential is None and not asked.token \
            and chosen.real:
        asked.credential = default_credential(chosen)
    elif running is None and asked.credential is not None:
        check_authority(asked.credential, chosen)
    return chosen


def _family_urls(asked: Asked, chosen: Cloud) -> dict[str, str]:
    """Give each family's base URL: given, else the one address, else the cloud's host.

    The ``verify`` setting is checked against them.
    """
    resolved = {fam: (asked.urls[fam] or asked.base_url or chosen.host(fam) or "").rstrip("/")
                for fam in FAMILIES}
    asked.verify = check_verify(asked.verify, [u for u in resolved.values() if u])
    return resolved


def _token_scopes(running: Sandbox | None, chosen: Cloud, scopes: dict[str, str] | None,
                  resolved: Mapping[str, str]) -> dict[str, str | None]:
    """Give the token scope per family: the sandbox's or the cloud's, under the ones given.

    A cloud's scope is the one for the host used (DoD Graph has its own).
    """
    token_scopes: dict[str, str | None] = {
        fam: (running.scope(fam) if running is not None else chosen.scope_at(fam, resolved[fam]))
        for fam in FAMILIES}
    for fam, scope in (scopes or {}).items():
        if fam not in FAMILIES:
            raise ValidationError("scopes", fam, f"families are {', '.join(FAMILIES)}")
        token_scopes[fam] = scope
    return token_scopes


def _make_default(conn: Connection) -> None:
    global _default
    with _default_lock:
        _default = conn
        note_default_connection(conn.sandbox is not None)


def environment_credential(arm_url: str, parameter: str = "credential") -> Any:
    """Build a credential from this process's own environment.

    For a process that must authenticate without being handed a secret (a dask worker).

    ``TOOLKIT_SANDBOX_SECRET`` with a loopback ``arm_url``: the sandbox's token authority derived
    from that secret; ``TOOLKIT_TOKEN``: that static token (a string);
    ``TOOLKIT_CREDENTIAL``: the azure-identity credential of that shortcut word
    (``default``: ``DefaultAzureCredential``, environment, workload or managed identity), for
    ``TOOLKIT_CLOUD`` or the cloud ``arm_url`` names.

    Raises
    ------
    ValidationError
        None of them is set (named ``parameter``).
    """
    secret = os.environ.get("TOOLKIT_SANDBOX_SECRET")
    from toolkit._core.config import is_loopback

    if secret and is_loopback(arm_url):
        from toolkit.sandbox.auth import SandboxCredential, TokenAuthority

        return SandboxCredential(TokenAuthority(secret))
    if os.environ.get("TOOLKIT_TOKEN"):
        return os.environ["TOOLKIT_TOKEN"]
    word = os.environ.get("TOOLKIT_CREDENTIAL", "").strip()
    if word:
        cloud_name = os.environ.get("TOOLKIT_CLOUD", "").strip()
        cloud = cloud_named(cloud_name, "TOOLKIT_CLOUD") if cloud_name else \
            cloud_of({"arm": arm_url})
        return credential_for(word, cloud if cloud.real else get_cloud(DEFAULT_CLOUD),
                              "TOOLKIT_CREDENTIAL")
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
    """Return the given connection, else the default one (made by :func:`connect` on first use)."""
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
