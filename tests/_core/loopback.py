"""Loopback HTTP servers for the tests: :func:`listening` for any handler (the browser tests'
pages, tile servers, recorded answers), :func:`serving` with a connection to it for the tests of
the transport and the bodies."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import toolkit

TOKEN = "example-token-0123456789"


class EmptyPages(BaseHTTPRequestHandler):
    """Answers every GET with an empty page (``before_answer`` runs first)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def before_answer(self) -> None:
        pass

    def do_GET(self) -> None:
        self.before_answer()
        body = b'{"value": []}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def listening(handler: Callable[..., BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` on 127.0.0.1 (a free port) while the block runs: its base URL
    (``http://127.0.0.1:port``, no slash); stopped, its port freed, when the block ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    # (shutdown waits for the loop's next look at its flag: every 50 ms, not every 0.5 s)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler], **settings: Any) -> Iterator[Any]:
    """A connection to a loopback server of ``handler`` for the block."""
    with listening(handler) as url:
        conn = toolkit.connect(base_url=url, token=TOKEN, progress=False, max_retries=0,
                               **settings)
        try:
            yield conn
        finally:
            conn.close()
