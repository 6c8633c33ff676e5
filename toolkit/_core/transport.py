"""The transport under a family's pipeline: one pooled ``requests`` session and its connections.

A connection writes a request only while the work it belongs to is not cancelled, and waits for
the answer's status line and headers no longer than the attempt's deadline, however slowly the
server drips them. The session never consults ``~/.netrc`` and answers reads from the response
cache when it is on; the transport's waits between attempts go through the configured sleeper.
The body itself is read within its caps by :mod:`toolkit._core.bodies`.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import urllib.request
from collections.abc import Callable
from typing import Any

import requests
from azure.core.pipeline.transport import RequestsTransport

from toolkit._core.cache import cache_path, cached_session
from toolkit._core.cancel import check_cancelled, sending
from toolkit._core.config import FamilyConfig
from toolkit._core.deadlines import deadlines
from toolkit._core.errors import ResponseLimitError

__all__ = ["PAGES_IN_FLIGHT", "SleeperTransport", "attempt_end", "guarded_pools", "session_for"]

#: Requests one chain of pages keeps in flight at most: the page being read and those asked for
#: early (:mod:`toolkit._core.paging`). A connection pools enough connections for its widest
#: fan-out or partitioned read to keep theirs, instead of opening and discarding extras.
PAGES_IN_FLIGHT = 3

#: The monotonic time by which the current thread's attempt must have its answer (set by the
#: adapter around each attempt; read by the connections while they wait for the headers).
attempt_end = threading.local()


def _headers_deadline_guard(conn_cls: type[Any]) -> type[Any]:
    """Make a urllib3 connection class that is cancellable and waits for headers within time.

    Its request is written only when the work it belongs to is not cancelled
    (:func:`~toolkit._core.cancel.sending`), and its wait for the status line and headers ends
    at the attempt's deadline, however slowly the server drips them (each read alone is bounded
    only by ``read_timeout``): at the deadline the socket is shut down and ResponseLimitError
    raised.

    Parameters
    ----------
    conn_cls : type
        urllib3's connection class (plain or TLS).

    Returns
    -------
    type
        Its subclass.
    """

    class Guarded(conn_cls):  # type: ignore[misc]  # urllib3's class, known only at run time
        def request(self, *args: Any, **kw: Any) -> Any:
            # connecting sends nothing of the request: its bytes are written only past the
            # last check of the work's cancellation, which then waits for them
            if getattr(self, "sock", None) is None:
                self.connect()
            with sending():
                return super().request(*args, **kw)

        def getresponse(self, *args: Any, **kw: Any) -> Any:
            end = getattr(attempt_end, "value", None)
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


def guarded_pools() -> dict[str, type[Any]]:
    """Return urllib3's connection pools, by scheme, whose connections keep the deadline.

    Returns
    -------
    dict
        ``{"http": pool class, "https": pool class}``.
    """
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    class Pool(HTTPConnectionPool):
        ConnectionCls = _headers_deadline_guard(HTTPConnectionPool.ConnectionCls)

    class TLSPool(HTTPSConnectionPool):
        ConnectionCls = _headers_deadline_guard(HTTPSConnectionPool.ConnectionCls)

    return {"http": Pool, "https": TLSPool}


def _header_auth(request: requests.PreparedRequest) -> requests.PreparedRequest:
    """Leave the request as the pipeline made it (the session's ``auth``, see session_for)."""
    return request


#: The environment variables that decide an http(s) request's proxy (either spelling; as CGI,
#: ``REQUEST_METHOD`` drops ``HTTP_PROXY``) and requests' CA bundle.
_PROXY_ENVIRONMENT = (
    "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
    "no_proxy", "NO_PROXY", "REQUEST_METHOD", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")

#: The most origins whose environment proxies a session keeps.
_PROXY_ORIGINS = 64


def _environment_settings(session: requests.Session) -> Callable[..., Any]:
    """Return requests' ``merge_environment_settings`` for ``session``, its lookups cached.

    requests scans the whole environment twice a request for proxy settings (about 0.1 ms each
    time with a few dozen variables). The proxies found for an origin are kept while the
    variables that decide them (:data:`_PROXY_ENVIRONMENT`) keep their values, which are read
    afresh every request: a proxy set, changed or removed in the environment mid-session applies
    to the next request, as it does with requests alone. Only where Python reads proxies from
    the environment alone (not from the system's settings, as on macOS and Windows); elsewhere
    requests' own lookup runs every time.

    Parameters
    ----------
    session : requests.Session
        The session whose settings are merged.

    Returns
    -------
    callable
        ``(url, proxies, stream, verify, cert) -> settings``, as requests' own.
    """
    own = session.merge_environment_settings
    if urllib.request.getproxies is not urllib.request.getproxies_environment \
            or urllib.request.proxy_bypass is not getattr(urllib.request,
                                                          "proxy_bypass_environment", None):
        return own
    from requests.sessions import merge_setting as requests_merge
    from requests.utils import get_environ_proxies

    merged: Callable[[Any, Any], Any] = requests_merge

    def merge_setting(request: Any, own: Any) -> Any:
        # requests' merge_setting, without its protocol checks for the plain values and dicts
        # the transport passes (a few microseconds each, four times a request)
        if own is None:
            return request
        if request is None:
            return own
        if type(request) is dict and type(own) is dict:
            return {k: v for k, v in {**own, **request}.items() if v is not None}
        if type(request) in (bool, str) or type(own) in (bool, str):
            return request
        return merged(request, own)

    found: dict[tuple[str, str | None, tuple[str | None, ...]], dict[str, str]] = {}
    lookup = os.environ.get

    def merge(url: str, proxies: dict[str, str] | None, stream: bool | None, verify: Any,
              cert: Any) -> Any:
        if not session.trust_env:
            return own(url, proxies, stream, verify, cert)
        values = tuple(map(lookup, _PROXY_ENVIRONMENT))
        no_proxy = proxies.get("no_proxy") if proxies is not None else None
        key = ("/".join(url.split("/", 3)[:3]), no_proxy, values)  # scheme://host:port
        env_proxies = found.get(key)
        if env_proxies is None:
            env_proxies = get_environ_proxies(url, no_proxy=no_proxy)
            if len(found) >= _PROXY_ORIGINS:
                found.clear()
            found[key] = env_proxies
        if proxies is not None:
            for k, v in env_proxies.items():
                proxies.setdefault(k, v)
        if verify is True or verify is None:
            verify = values[-2] or values[-1] or verify
        return {"proxies": merge_setting(proxies, session.proxies),
                "stream": merge_setting(stream, session.stream),
                "verify": merge_setting(verify, session.verify),
                "cert": merge_setting(cert, session.cert)}

    return merge


def session_for(config: FamilyConfig) -> requests.Session:
    """Return a plain session, or one answering reads from the response cache when it is on.

    The session's ``auth`` is set to one that changes nothing: without it, requests looks up
    ``~/.netrc`` (or ``$NETRC``) for every request and, when an entry matches the host (a
    ``default`` entry matches every host), replaces the pipeline's ``Authorization`` header
    with that entry's password: a secret of the user's sent to the service, and the call
    refused. The proxy settings of the environment still apply, looked up once an origin while
    they stay the same (:func:`_environment_settings`).

    Parameters
    ----------
    config : FamilyConfig
        The family's settings (the cache) and header prefix.

    Returns
    -------
    requests.Session
        The session, no adapter mounted yet.
    """
    path = cache_path(config.settings.cache)
    session = requests.Session() if path is None else cached_session(path, config.header_prefix)
    session.auth = _header_auth
    session.merge_environment_settings = _environment_settings(session)  # type: ignore[method-assign]
    return session


class SleeperTransport(RequestsTransport):  # type: ignore[misc]  # azure-core's lazy export
    """azure-core's RequestsTransport whose waits go through the configured sleeper.

    Parameters
    ----------
    sleeper : callable
        ``seconds -> None``: the connection's sleep (tests record the waits instead).
    **kw
        RequestsTransport's own arguments.
    """

    def __init__(self, sleeper: Callable[[float], None], **kw: Any) -> None:
        super().__init__(**kw)
        self._sleeper = sleeper

    def sleep(self, duration: float) -> None:
        """Wait ``duration`` seconds through the sleeper, unless the work is cancelled.

        Parameters
        ----------
        duration : float
            Seconds.
        """
        check_cancelled()
        self._sleeper(duration)
        check_cancelled()
