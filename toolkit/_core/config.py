"""What the HTTP core is told about one service family: a frozen configuration.

``toolkit.connection`` builds one :class:`FamilyConfig` per family from what the user gave
(endpoints, credentials, settings, the cloud's vocabulary) and hands it to the pipeline; the core
never reads the connection itself. The configuration is frozen, so a pipeline cannot see a setting
change under it: a new connection makes new configurations.

:class:`Settings` (the behaviour settings, with their bounds) lives here for the same reason: the
core reads them, and ``toolkit.connection`` re-exports them as ``toolkit.Settings``.
"""

from __future__ import annotations

import ipaddress
import math
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from urllib3.exceptions import LocationParseError
from urllib3.util import parse_url

from toolkit._core.errors import ValidationError
from toolkit._core.protocols import Counts
from toolkit._core.secrets import Secret
from toolkit._version import __version__

if TYPE_CHECKING:
    from azure.core.credentials import TokenCredential

__all__ = ["Credentials", "FamilyConfig", "Origin", "Settings", "check_plain_http",
           "check_verify", "is_loopback", "parse_trusted_host"]

#: Default cap on one response body, after decompression (bytes). The biggest real pages (a
#: policy-states page of 1000 records with evaluation details, a 100-query route batch with
#: route paths) are a few tens of megabytes.
DEFAULT_MAX_BODY_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class Settings:
    """Behaviour settings of a connection (all have ``TOOLKIT_*`` variables).

    Attributes
    ----------
    max_retries : int
        Retries per request (0 to 50).
    max_retry_wait : float
        Longest wait the toolkit sits out when a service asks for one (``Retry-After`` of a retry
        or of a long-running operation's poll); a longer one raises with what to resume.
    backoff : float
        Backoff factor between retries without ``Retry-After``.
    max_concurrency : int
        Concurrent requests of a fan-out (1 to 64).
    max_partitions : int
        Concurrent chains of one long paged read, e.g. the time slices of ``policy_states``
        (1 to 64; 1 reads one chain).
    connect_timeout, read_timeout : float
        Seconds to connect, and to wait for each read from the socket.
    request_deadline : float
        Overall seconds one attempt may take, headers to last body byte, however the server
        paces it.
    max_body_bytes : int
        Largest response body accepted, counted after decompression.
    poll_interval : float
        Wait between polls when the service names none.
    min_poll_wait : float
        Shortest wait between polls, whatever the service asks (``Retry-After: 0`` included).
        The longest is ``max_retry_wait`` (or ``poll_interval``, when that is longer).
    trusted_hosts : tuple of str
        Extra hosts (``host`` or ``host:port``) that links and operation URLs may name besides
        the family's own endpoint, over https (private endpoints, regional hosts).
    progress : bool
        Progress bars for work of many requests.
    cache : bool, str or path, optional
        The on-disk response cache of read answers: ``True`` the default file, a path that
        file, a folder ``responses.sqlite`` in it, ``None``/``False`` none (see
        :mod:`toolkit._core.cache`).
    """

    max_retries: int = 5
    max_retry_wait: float = 60.0
    backoff: float = 0.8
    max_concurrency: int = 8
    max_partitions: int = 16
    connect_timeout: float = 10.0
    read_timeout: float = 120.0
    request_deadline: float = 600.0
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    poll_interval: float = 30.0
    min_poll_wait: float = 1.0
    trusted_hosts: tuple[str, ...] = ()
    progress: bool = True
    progress_min: int = 5
    user_agent: str = f"toolkit/{__version__}"
    cache: str | bool | None = None

    def validated(self) -> Settings:
        """Check the ranges; raise ValidationError naming the setting."""

        def number(value: Any) -> bool:
            return (isinstance(value, int | float) and not isinstance(value, bool)
                    and math.isfinite(value))

        checks = [
            ("max_retries", isinstance(self.max_retries, int) and 0 <= self.max_retries <= 50,
             "between 0 and 50"),
            ("max_retry_wait", number(self.max_retry_wait) and self.max_retry_wait >= 0,
             "at least 0 seconds"),
            ("max_concurrency", isinstance(self.max_concurrency, int)
             and 1 <= self.max_concurrency <= 64, "between 1 and 64"),
            ("max_partitions", isinstance(self.max_partitions, int)
             and not isinstance(self.max_partitions, bool) and 1 <= self.max_partitions <= 64,
             "between 1 and 64"),
            ("read_timeout", number(self.read_timeout) and self.read_timeout > 0,
             "more than 0 seconds"),
            ("request_deadline", number(self.request_deadline) and self.request_deadline > 0,
             "more than 0 seconds"),
            ("max_body_bytes", isinstance(self.max_body_bytes, int)
             and not isinstance(self.max_body_bytes, bool) and self.max_body_bytes >= 1024,
             "an integer of at least 1024 bytes"),
            ("poll_interval", number(self.poll_interval) and self.poll_interval >= 0,
             "at least 0 seconds"),
            ("min_poll_wait", number(self.min_poll_wait) and self.min_poll_wait >= 0,
             "at least 0 seconds"),
            ("cache", self.cache is None or isinstance(self.cache, bool | str | os.PathLike),
             "True, False, None or the path of a cache file"),
        ]
        for name, ok, rule in checks:
            if not ok:
                raise ValidationError(name, getattr(self, name), rule)
        hosts = self.trusted_hosts
        if isinstance(hosts, str):
            hosts = tuple(h.strip() for h in hosts.split(",") if h.strip())
        if not isinstance(hosts, tuple | list):
            raise ValidationError("trusted_hosts", hosts, "a list of host names")
        for host in hosts:
            parse_trusted_host(host)
        if tuple(hosts) != self.trusted_hosts:
            object.__setattr__(self, "trusted_hosts", tuple(hosts))
        return self


def is_loopback(url: str) -> bool:
    """Whether a URL points at this machine (127.0.0.0/8, ::1, localhost)."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return False
    return _loopback_host(host)


def _loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


#: A backslash, whitespace (any, as ``str.isspace``) or a control character: never in a URL
#: whose origin is trusted.
_UNSAFE_IN_URL = re.compile(r"[\\\s\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Origin:
    """Scheme, host and port of a URL (the default port filled in)."""

    scheme: str
    host: str
    port: int

    @classmethod
    def of(cls, url: str) -> Origin | None:
        r"""Read an absolute http(s) URL's origin, or ``None`` when it has none or is ambiguous.

        A URL is read both as the standard library reads it and as the transport (urllib3)
        does; a URL the two read differently (``http://a\@b/``), one with user information
        (``user@host``), or one with a backslash, whitespace or control character has no origin,
        so it is never trusted.
        """
        if not isinstance(url, str) or _UNSAFE_IN_URL.search(url):
            return None
        try:
            parts = urlsplit(url)
            port = parts.port
            sent = parse_url(url)
        except (ValueError, LocationParseError):
            return None
        scheme = parts.scheme.lower()
        host = (parts.hostname or "").lower().rstrip(".")
        if scheme not in ("http", "https") or not host or "@" in parts.netloc:
            return None
        sent_host = (sent.host or "").lower().strip("[]").rstrip(".")
        if (sent.scheme or "").lower() != scheme or sent_host != host or sent.port != port \
                or sent.auth:
            return None
        return cls(scheme, host, port if port is not None else (443 if scheme == "https"
                                                                 else 80))

    @property
    def loopback(self) -> bool:
        return _loopback_host(self.host)

    def __str__(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"


def parse_trusted_host(entry: str) -> tuple[str, int | None]:
    """Parse a ``trusted_hosts`` entry as (host, port or ``None`` for any).

    A bad one raises ValidationError.
    """
    if not isinstance(entry, str) or not entry or any(c in entry for c in "/@\\"):
        raise ValidationError("trusted_hosts", entry,
                              "each entry is a host name or host:port, without scheme or path")
    parts = urlsplit(f"https://{entry}")
    try:
        port = parts.port
    except ValueError as err:
        raise ValidationError("trusted_hosts", entry, "the port is not a number") from err
    host = (parts.hostname or "").lower().rstrip(".")
    if not host or any(c in host for c in " ?#"):
        raise ValidationError("trusted_hosts", entry, "not a host name")
    return host, port


@dataclass(frozen=True)
class Credentials:
    """What a family authenticates with; secrets stay masked.

    Attributes
    ----------
    credential : TokenCredential or None
        azure-core's credential protocol: anything with ``get_token(*scopes)``.
    token : Secret or None
        A static bearer token (used when no credential is given).
    maps_key, maps_sas_token : Secret or None
        The maps shared key or SAS token (they win over a bearer token for maps).
    maps_client_id : str or None
        The maps account id sent with bearer tokens.
    """

    credential: TokenCredential | None = None
    token: Secret | None = None
    maps_key: Secret | None = None
    maps_sas_token: Secret | None = None
    maps_client_id: str | None = None

    def __repr__(self) -> str:
        given = [name for name in ("credential", "token", "maps_key", "maps_sas_token")
                 if getattr(self, name)]
        return f"Credentials({', '.join(given) or 'none'})"


#: The rule a plain-http endpoint breaks, as errors state it.
PLAIN_HTTP_RULE = ("plain http is allowed only to loopback addresses (127.0.0.0/8, ::1, "
                   "localhost); anywhere else use https, so that no token, maps key or SAS "
                   "token is ever sent in clear")


def check_plain_http(parameter: str, url: str) -> None:
    """Refuse an endpoint (named ``parameter``) in plain http to a host other than this machine.

    An empty one (a family not offered) passes.

    Raises
    ------
    ValidationError
        Naming ``parameter``, the URL and the rule.
    """
    if url and urlsplit(url).scheme.lower() == "http" and not is_loopback(url):
        raise ValidationError(parameter, url, PLAIN_HTTP_RULE)


def check_verify(verify: Any, urls: list[str]) -> bool | str:
    """Check ``verify`` as the pipeline takes it: ``True``, a CA bundle path, or ``False``.

    ``False`` only when every URL is loopback; anything else raises ValidationError.
    """
    if verify is True:
        return True
    if verify is False:
        if not all(is_loopback(u) for u in urls):
            raise ValidationError("verify", False, "TLS verification may be turned off only for "
                                  "loopback addresses; pass a CA bundle path instead")
        return False
    if isinstance(verify, os.PathLike):
        verify = os.fspath(verify)
    if isinstance(verify, str) and verify.strip():
        if not os.path.exists(verify):
            raise ValidationError("verify", verify, "a CA bundle path that exists")
        return verify
    raise ValidationError("verify", verify, "True, the path of a CA bundle, or False "
                          "(loopback addresses only)")


@dataclass(frozen=True)
class FamilyConfig:
    """Everything the HTTP core needs about one family, frozen.

    Attributes
    ----------
    family : str
        ``arm``, ``maps``, ``graph`` or ``fabric``.
    base_url : str
        The family's endpoint; its scheme, host and port are the origin credentials go to.
    scope : str or None
        The token scope.
    header_prefix, namespace, async_header : str
        The cloud's words: custom header prefix, provider namespace, ARM async-operation header.
    verify : bool or str
        TLS verification (``False`` only for loopback).
    settings : Settings
        Retries, caps, waits, trusted hosts.
    credentials : Credentials
        What requests are authenticated with.
    stats : Counts or None
        The connection's request counters (``add(**counts)``); the pipeline keeps its own
        when ``None``.
    sleep : callable
        Waits go through it (the connection's, so tests can record them).
    clock : callable
        Monotonic seconds, counting the waits a recording sleeper skipped.
    sandbox : bool
        The family's endpoint is a sandbox the connection started or was given: every answer
        is marked as invented data (:mod:`toolkit._core.provenance`).
    proxies : mapping or None
        Proxy per scheme, as requests takes them, given to azure-core's ``ProxyPolicy``.
    """

    family: str
    base_url: str
    scope: str | None = None
    header_prefix: str = "x-vendor-"
    namespace: str = "Vendor"
    async_header: str = "Vendor-AsyncOperation"
    verify: bool | str = True
    settings: Settings = field(default_factory=Settings)
    credentials: Credentials = field(default_factory=Credentials)
    stats: Counts | None = None
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    sandbox: bool = False
    proxies: Mapping[str, str] | None = None

    @property
    def origin(self) -> Origin:
        """The family's own origin."""
        origin = Origin.of(self.base_url)
        if origin is None:
            raise ValidationError(f"{self.family}_url", self.base_url, "an http(s) URL")
        return origin

    def trusts(self, origin: Origin) -> bool:
        """Tell whether requests (and the credential) may go to ``origin``.

        The family's own scheme, host and port, or a trusted host over https; plain http only on
        loopback, even to the family's own endpoint.
        """
        if origin.scheme != "https" and not origin.loopback:
            return False
        if origin == self.origin:
            return True
        if self.verify is False and not origin.loopback:
            return False
        for entry in self.settings.trusted_hosts:
            host, port = parse_trusted_host(entry)
            if origin.host == host and (port is None or port == origin.port):
                return True
        return False
