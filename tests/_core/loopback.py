"""A loopback HTTP server for the tests of the transport and the bodies."""

from __future__ import annotations

import threading
from collections.abc import Iterator
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
def serving(handler: type[BaseHTTPRequestHandler], **settings: Any) -> Iterator[Any]:
    """A connection to a loopback server of ``handler`` for the block."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    conn = toolkit.connect(base_url=f"http://127.0.0.1:{server.server_address[1]}",
                           token=TOKEN, progress=False, max_retries=0, **settings)
    try:
        yield conn
    finally:
        conn.close()
        server.shutdown()
        server.server_close()
