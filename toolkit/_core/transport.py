"""The transport under a family's pipeline: one pooled ``requests`` session and its connections.

A connection writes a request only while the work it belongs to is not cancelled, and waits for
the answer's status line and headers no longer than the attempt's deadline, however slowly the
server drips them. The session never consults ``~/.netrc`` and answers reads from the response
cache when it is on; the transport's waits between attempts go through the configured sleeper.
The body itself is read within its caps by :mod:`toolkit._core.bodies`.

Proxies (``connect(proxies=...)``, ``HTTPS_PROXY`` and the like) carry a request to its service,
never a credential in clear (:func:`proxies_for`): an endpoint on this machine is reached
directly, as if ``NO_PROXY`` named it (a proxy elsewhere could not reach it anyway, and a plain
http request would hand it the credential), and a plain http request that carries a credential
is never handed to a proxy.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

import requests
from azure.core.pipeline.transport import RequestsTransport
from requests.utils import select_proxy

from toolkit._core.cache import cache_path, cached_session
from toolkit._core.cancel import check_cancelled, sending
from toolkit._core.config import FamilyConfig, is_loopback
from toolkit._core.deadlines import deadlines
from toolkit._core.errors import ResponseLimitError, ValidationError

__all__ = ["PAGES_IN_FLIGHT", "SleeperTransport", "attempt_end", "guarded_pools", "proxies_for",
           "session_for"]

#: Request headers that carry a credential (a bearer token, a SAS token, a maps key).
CREDENTIAL_HEADERS = ("Authorization", "subscription-key")

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


def proxies_for(request: requests.PreparedRequest,
                proxies: Mapping[str, str] | None) -> Mapping[str, str] | None:
    """Choose the proxies a request may go through.

    Parameters
    ----------
    request : requests.PreparedRequest
        The request about to be sent.
    proxies : mapping or None
        The proxies requests chose for it (``connect(proxies=...)`` merged with the
        environment's, ``NO_PROXY`` applied).

    Returns
    -------
    mapping or None
        None for a request to this machine (127.0.0.0/8, ``::1``, ``localhost``), as ``NO_PROXY``
        would give; else ``proxies`` unchanged.

    Raises
    ------
    ValidationError
        A plain http request that carries a credential would go through a proxy (nothing is
        sent): the proxy would read the credential.
    """
    if not proxies or not request.url:
        return proxies
    url = request.url
    if is_loopback(url):
        return None
    if urlsplit(url).scheme.lower() == "http" and select_proxy(url, dict(proxies)) and any(
            request.headers.get(name) for name in CREDENTIAL_HEADERS):
        origin = urlsplit(url)
        raise ValidationError(
            "proxies", f"a proxy for http://{origin.netloc}",
            "a plain http request carrying a credential is not sent through a proxy (the proxy "
            "would read it); reach the service over https, or directly")
    return proxies


def _header_auth(request: requests.PreparedRequest) -> requests.PreparedRequest:
    """Leave the request as the pipeline made it (the session's ``auth``, see session_for)."""
    return request


def session_for(config: FamilyConfig) -> requests.Session:
    """Return a plain session, or one answering reads from the response cache when it is on.

    The session's ``auth`` is set to one that changes nothing: without it, requests looks up
    ``~/.netrc`` (or ``$NETRC``) for every request and, when an entry matches the host (a
    ``default`` entry matches every host), replaces the pipeline's ``Authorization`` header
    with that entry's password: a secret of the user's sent to the service, and the call
    refused. The proxy settings of the environment still apply, as :func:`proxies_for` allows.

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
