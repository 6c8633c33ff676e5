"""A benchmark server that costs the client nothing: the sandbox's answers, built once, served
from memory.

A benchmark that reads from the sandbox measures the sandbox as much as the client: on a
machine of two cores the sandbox builds (and compresses) every page on the cores the client is
measured on. :class:`ReplayServer` asks a :class:`~toolkit.sandbox.server.Sandbox` (in its own
process, never started as a server) for each answer once, keeps the answer's status, headers
and body in memory, compressed once with gzip when compression is on, and from then on serves
the same bytes again for the same request, behind the same network model as the sandbox's
(:class:`~toolkit.sandbox.network.NetworkModel`: a round trip a connection, a round trip an
answer, the bandwidth of each connection and of the client's link).

A request is known by its method, its path and its query parameters in any order (a next link
POSTed back names its page whatever order its parameters were written in). A chain of pages can
be recorded up front (:meth:`ReplayServer.record_chain`, following the next links); any other
request is built by the sandbox when first asked (and counted in :attr:`ReplayServer.built`), so
a benchmark run that had to build answers is a recording run, and the runs after it are pure
replay. The server listens on 127.0.0.1 only and stops by itself after ``max_seconds``.
"""

from __future__ import annotations

import gzip
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, urlsplit

import orjson

from toolkit.sandbox.network import NetworkModel
from toolkit.sandbox.server import Sandbox
from toolkit.sandbox.wire import COMPRESS_MIN, accepts_gzip

__all__ = ["Answer", "ReplayServer", "request_key"]

#: How long a replay server lives at most (it stops by itself).
MAX_SECONDS = 3600.0

Key = tuple[str, str, tuple[tuple[str, str], ...]]


class Answer(NamedTuple):
    """One recorded answer: status, headers (without the body's length and encoding), the body,
    and the body compressed once (``None``: not compressed)."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    gzipped: bytes | None


def request_key(method: str, target: str) -> Key:
    """What identifies a request: its method, its path and its query parameters, sorted."""
    path, _, query = target.partition("?")
    return (method.upper(), path,
            tuple(sorted(parse_qsl(query, keep_blank_values=True))))


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, replay: ReplayServer) -> None:
        self.replay = replay
        super().__init__(("127.0.0.1", 0), _Handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # answers go out as they are written, as the sandbox's do: the head before the body
    disable_nagle_algorithm = True
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def setup(self) -> None:
        super().setup()
        network = self.server.replay.network
        if network is not None:
            network.connected()

    def _serve(self) -> None:
        replay = self.server.replay
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        if self.headers.get("Authorization") != replay.authorization:
            self._error(401, "AuthenticationFailed", "The bearer token is not this server's.")
            return
        answer = replay.answer(self.command, self.path)
        if replay.network is not None:
            replay.network.before_answer()
        gzipped = answer.gzipped is not None and accepts_gzip(
            self.headers.get("Accept-Encoding"))
        payload = answer.gzipped if gzipped and answer.gzipped is not None else answer.body
        self.send_response(answer.status)
        for name, value in answer.headers:
            self.send_header(name, value)
        if gzipped:
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Vary", "Accept-Encoding")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD" and payload:
            if replay.network is not None:
                self.wfile.flush()
                replay.network.send(self.wfile.write, payload)
            else:
                self.wfile.write(payload)
        replay.note_bytes(len(payload))

    def _error(self, status: int, code: str, message: str) -> None:
        body = orjson.dumps({"error": {"code": code, "message": message}})
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_HEAD = _serve


class ReplayServer:
    """Answers recorded from ``sandbox`` once, served from memory.

    Parameters
    ----------
    sandbox : Sandbox
        Builds each answer the first time it is asked for (its ``network`` and ``compress``
        settings are not used: this server has its own).
    token : str
        The bearer token clients send (a token of ``sandbox``'s, which builds the answers).
    network : NetworkModel, optional
        The link the clients sit behind, as a sandbox's (``None``: loopback speed).
    compress, compress_level : bool, int
        Compress answers of :data:`~toolkit.sandbox.wire.COMPRESS_MIN` bytes and more once
        with gzip, for clients that accept it, as the sandbox does on every answer.
    max_seconds : float
        The server stops by itself this long after it starts.
    """

    def __init__(self, sandbox: Sandbox, token: str, *, network: NetworkModel | None = None,
                 compress: bool = False, compress_level: int = 1,
                 max_seconds: float = MAX_SECONDS) -> None:
        self.sandbox = sandbox
        self.authorization = f"Bearer {token}"
        self.network = network
        self.compress = compress
        self.compress_level = compress_level
        self.max_seconds = max_seconds
        self.answers: dict[Key, Answer] = {}
        #: the keys of the pages recorded by :meth:`record_chain`, in order
        self.chain: list[Key] = []
        self.bytes_sent = 0
        self.built = 0  # answers the sandbox had to build since the last reset
        self._lock = threading.Lock()
        self._build_lock = threading.Lock()
        self._http = _HTTPServer(self)
        self.host = f"127.0.0.1:{self._http.server_address[1]}"
        self.url = f"http://{self.host}"
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> ReplayServer:
        """Serve in a background thread (stopping by itself after ``max_seconds``)."""
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True,
                                        name=f"replay:{self.host}")
        self._thread.start()
        self._timer = threading.Timer(self.max_seconds, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._http.shutdown()
        self._http.server_close()

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ answers
    def answer(self, method: str, target: str) -> Answer:
        """The recorded answer to a request, built by the sandbox if it was never asked."""
        key = request_key(method, target)
        found = self.answers.get(key)
        if found is not None:
            return found
        with self._build_lock:  # one build at a time: the same key asked twice is built once
            found = self.answers.get(key)
            if found is None:
                found = self.answers[key] = self._build(method, target)
                self.built += 1
        return found

    def _build(self, method: str, target: str) -> Answer:
        headers = {"Host": self.host, "Authorization": self.authorization}
        reply, _, _ = self.sandbox.handle(method, target, headers, b"")
        body = reply.payload()
        out = dict(reply.headers)
        if body or reply.status not in (204, 304):
            out.setdefault("Content-Type", reply.content_type)
        gzipped = None
        if self.compress and len(body) >= COMPRESS_MIN:
            gzipped = gzip.compress(body, compresslevel=self.compress_level, mtime=0)
        return Answer(reply.status, tuple((k, str(v)) for k, v in out.items()), body, gzipped)

    def record_chain(self, method: str, target: str, next_key: str = "@odata.nextLink") -> int:
        """Record a chain of pages up front, from ``target`` following each page's next link;
        returns the number of pages."""
        while target:
            answer = self.answer(method, target)
            if answer.status != 200:
                raise RuntimeError(f"recording {target[:80]}: the sandbox answered "
                                   f"{answer.status}: {answer.body[:300]!r}")
            self.chain.append(request_key(method, target))
            link = orjson.loads(answer.body).get(next_key)
            if not link:
                break
            parts = urlsplit(link)
            target = parts.path + (f"?{parts.query}" if parts.query else "")
        return len(self.chain)

    def chain_pages(self) -> list[Answer]:
        """The answers :meth:`record_chain` recorded, in order."""
        return [self.answers[k] for k in self.chain]

    # ------------------------------------------------------------------ counters
    def note_bytes(self, n: int) -> None:
        with self._lock:
            self.bytes_sent += n

    def take_counts(self) -> tuple[int, int]:
        """The body bytes sent and the answers built since the last call."""
        with self._lock:
            out = (self.bytes_sent, self.built)
            self.bytes_sent = self.built = 0
        return out


def bare_decode_seconds(pages: list[Answer], decode: Any, *, gunzip: bool = False
                        ) -> tuple[float, int]:
    """The CPU seconds (of this thread) to decode every page's body with ``decode`` (after
    decompressing it, with ``gunzip``), and the records decoded."""
    records = 0
    start = time.thread_time()
    for page in pages:
        body = gzip.decompress(page.gzipped) if gunzip and page.gzipped is not None \
            else page.body
        records += len(decode(body).items or ())
    return time.thread_time() - start, records
