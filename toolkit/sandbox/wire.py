"""Put the sandbox on the wire: the threaded HTTP server and the handler of its connections.

The handler reads a request, hands it to the service (:meth:`Service.handle`), and writes the
answer as a web front end does: gzip for a client that accepts it, the network model's pacing,
and the body faults (``malformed``, ``truncate``, ``drop``) the fault plan chose.
"""

from __future__ import annotations

import gzip
import logging
import socket
from contextlib import suppress
from datetime import UTC, datetime
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from toolkit.sandbox.faults import FaultRule
    from toolkit.sandbox.http import Reply, Request
    from toolkit.sandbox.network import NetworkModel

logger = logging.getLogger(__name__)

__all__ = ["COMPRESS_MIN", "RequestHandler", "Server", "Service", "accepts_gzip"]

#: Answers from this size on are compressed for a client that accepts gzip (the front doors of
#: the real services do the same for JSON).
COMPRESS_MIN = 1024


class Service(Protocol):
    """What the wire needs of the service it serves (a :class:`~toolkit.sandbox.server.Sandbox`).

    Attributes
    ----------
    network : NetworkModel or None
        The link answers are paced over; ``None``: loopback speed.
    compress : bool
        Whether answers of :data:`COMPRESS_MIN` bytes and more are gzipped.
    compress_level : int
        The gzip level (1 to 9).
    """

    network: NetworkModel | None
    compress: bool
    compress_level: int

    def now(self) -> datetime:
        """Tell the service's clock (the ``Date`` header)."""

    def handle(self, method: str, target: str, headers: dict[str, str],
               body: bytes) -> tuple[Reply, FaultRule | None, Request]:
        """Answer one request, with the body fault to apply and the request parsed."""

    def note_bytes(self, n: int) -> None:
        """Count body bytes sent."""


def accepts_gzip(value: str | None) -> bool:
    """Tell whether an ``Accept-Encoding`` header accepts gzip (and does not refuse it, q=0).

    Parameters
    ----------
    value : str or None
        The header's value.

    Returns
    -------
    bool
        ``True`` when gzip (or ``*``) is named with a non-zero quality.
    """
    for item in (value or "").split(","):
        name, _, params = item.strip().partition(";")
        if name.strip().lower() in ("gzip", "x-gzip", "*"):
            q = params.strip().lower()
            return not (q.startswith("q=") and q[2:].strip() in ("0", "0.0", "0.00", "0.000"))
    return False


class Server(ThreadingHTTPServer):
    """A threaded HTTP server for one service, each connection in a daemon thread.

    Parameters
    ----------
    address : tuple of (str, int)
        Host and port to listen on (port 0: a free one).
    service : Service
        What answers the requests.
    """

    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], service: Service) -> None:
        self.sandbox = service
        super().__init__(address, RequestHandler)


class RequestHandler(BaseHTTPRequestHandler):
    """Serve the requests of one connection: read, let the service answer, write."""

    protocol_version = "HTTP/1.1"
    # answers go out as they are written (TCP_NODELAY), as web front ends send them, so that
    # the head of a page reaches the client before its body is complete
    disable_nagle_algorithm = True
    server: Server

    def log_message(self, format: str, *args: Any) -> None:
        """Log a line of the standard library's server at debug level."""
        logger.debug("sandbox: " + format, *args)

    def date_time_string(self, timestamp: float | None = None) -> str:
        """Write the ``Date`` header from the service's clock, as a service's is its own."""
        when = self.server.sandbox.now() if timestamp is None else \
            datetime.fromtimestamp(timestamp, UTC)
        return format_datetime(when, usegmt=True)

    def setup(self) -> None:
        """Open the connection (a round trip on the network model)."""
        super().setup()
        network = self.server.sandbox.network
        if network is not None:
            network.connected()

    def _serve(self) -> None:
        sandbox = self.server.sandbox
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        reply, fault, request = sandbox.handle(self.command, self.path, dict(self.headers.items()),
                                               body)
        if sandbox.network is not None:
            sandbox.network.before_answer()
        self._send(reply, fault, request)

    def _send(self, reply: Reply, fault: FaultRule | None, request: Request) -> None:
        payload = reply.payload()
        if fault is not None and fault.kind == "malformed" and payload:
            payload = payload[: max(1, len(payload) // 2)] + b"<<not json>>"
        elif fault is not None and fault.kind == "truncate" and payload:
            payload = payload[: max(1, len(payload) // 2)]
        self.send_response(reply.status)
        headers = dict(reply.headers)
        if payload or reply.status not in (204, 304):
            headers.setdefault("Content-Type", reply.content_type)
        sandbox = self.server.sandbox
        if (sandbox.compress and len(payload) >= COMPRESS_MIN
                and accepts_gzip(request.headers.get("accept-encoding"))):
            payload = gzip.compress(payload, compresslevel=sandbox.compress_level, mtime=0)
            headers["Content-Encoding"] = "gzip"
            headers["Vary"] = "Accept-Encoding"
        for k, v in headers.items():
            self.send_header(k, str(v))
        if fault is not None and fault.kind == "drop" and len(payload) > 1:
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload[: len(payload) // 2])
            self.wfile.flush()
            self.close_connection = True
            with suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD" and payload:
            if sandbox.network is not None:
                self.wfile.flush()
                sandbox.network.send(self.wfile.write, payload)
            else:
                self.wfile.write(payload)
        sandbox.note_bytes(len(payload))

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _serve
