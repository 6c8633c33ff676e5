"""Hostile servers for the security tests: real HTTP servers on loopback that answer the way an
attacker (or a broken proxy) would, and record every request they receive.

Each server answers from a ``script`` (a function of the request), serves on 127.0.0.1 (or
another loopback address, to play a foreign host), handles one request per thread, and is stopped
at the end of its ``with`` block. Nothing in them waits without a bound: a dripping answer stops
when the client hangs up or after ``max_seconds``.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson


@dataclass
class Seen:
    """One request a hostile server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Answer:
    """What a script answers: status, headers, and a body given whole or as pieces (each piece
    written and flushed after ``gap`` seconds)."""

    status: int = 200
    body: Any = b""
    headers: dict[str, str] = field(default_factory=dict)
    pieces: Iterator[bytes] | None = None
    gap: float = 0.0
    #: the pieces are the whole answer, status line and headers included
    raw: bool = False

    def payload(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        return orjson.dumps(self.body)


Script = Callable[[Seen, "Hostile"], Answer]


class Hostile:
    """A scripted HTTP server on a loopback address.

    Parameters
    ----------
    script : callable
        ``script(seen, server) -> Answer`` for each request.
    host : str
        Loopback address to listen on (``127.0.0.2`` plays another host).
    max_seconds : float
        Longest time any one answer is written for.
    """

    def __init__(self, script: Script, host: str = "127.0.0.1", max_seconds: float = 30.0) -> None:
        self.script = script
        self.host = host
        self.max_seconds = max_seconds
        self.seen: list[Seen] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _any(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(min(length, 1 << 20)) if length else b""
                seen = Seen(self.command, self.path, dict(self.headers.items()), body)
                with outer.lock:
                    outer.seen.append(seen)
                answer = outer.script(seen, outer)
                if answer.raw:
                    self._drip(answer)
                    return
                self.send_response(answer.status)
                for k, v in answer.headers.items():
                    self.send_header(k, v)
                if answer.pieces is None:
                    data = answer.payload()
                    if "Content-Length" not in answer.headers:
                        self.send_header("Content-Length", str(len(data)))
                    if data and "Content-Type" not in answer.headers:
                        self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    with contextlib.suppress(OSError):
                        self.wfile.write(data)
                    return
                self.end_headers()
                self._drip(answer)

            def _drip(self, answer: Answer) -> None:
                assert answer.pieces is not None
                end = time.monotonic() + outer.max_seconds
                try:
                    for piece in answer.pieces:
                        if time.monotonic() > end or outer.stopping.is_set():
                            break
                        self.wfile.write(piece)
                        self.wfile.flush()
                        if answer.gap:
                            outer.stopping.wait(answer.gap)
                except OSError:
                    pass
                self.close_connection = True

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

        self.stopping = threading.Event()
        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.server.daemon_threads = True
        # (a short poll: leaving the block waits for the server to see that it is stopped)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True,
                                       kwargs={"poll_interval": 0.05})

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> Hostile:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)

    def count(self) -> int:
        with self.lock:
            return len(self.seen)


def json_answer(body: Any, status: int = 200, **headers: str) -> Answer:
    """A JSON answer."""
    return Answer(status, body, dict(headers))


class Forwarder:
    """A port forward on 127.0.0.1: every connection is piped to ``target`` as is (the client's
    ``Host`` names the forward's port, as behind a container's mapped port or a notebook
    server's proxy)."""

    def __init__(self, target: tuple[str, int]) -> None:
        import socket

        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)
        self.sockets: list[Any] = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}"

    def _accept(self) -> None:
        import socket

        while not self.stopping.is_set():
            try:
                client, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            upstream = socket.create_connection(self.target, timeout=30)
            self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(src: Any, dst: Any) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(2)

    def __enter__(self) -> Forwarder:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stopping.set()
        self.listener.close()
        for s in self.sockets:
            with contextlib.suppress(OSError):
                s.close()
        self.thread.join(5)
