"""A loopback server that answers with recorded responses: the services' real examples replayed
through the public functions, over HTTP."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Answer:
    """One recorded response: status, headers, body (JSON-able, bytes or None)."""

    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Replay:
    """Routes (method, path regex) to a list of answers, given in turn (the last one repeats)."""

    routes: list[tuple[str, re.Pattern[str], list[Answer]]] = field(default_factory=list)
    seen: list[tuple[str, str]] = field(default_factory=list)
    url: str = ""

    def add(self, method: str, path: str, *answers: Answer) -> None:
        self.routes.append((method.upper(), re.compile(path), list(answers)))

    def answer(self, method: str, target: str) -> Answer:
        self.seen.append((method, target))
        for m, rx, answers in self.routes:
            if m == method and rx.search(target):
                return answers.pop(0) if len(answers) > 1 else answers[0]
        return Answer(404, {"error": {"code": "NotFound", "message": f"no replay for {target}"}})


@contextmanager
def replay_server() -> Iterator[Replay]:
    """Serve a Replay on a free loopback port for the duration of the block."""
    replay = Replay()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body leave at once, no delayed ACK

        def log_message(self, *args: Any) -> None:
            pass

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            ans = replay.answer(self.command, self.path)
            body = ans.body
            payload = body if isinstance(body, bytes) else (
                b"" if body is None else json.dumps(body).encode())
            self.send_response(ans.status)
            for k, v in ans.headers.items():
                self.send_header(k, v.replace("{url}", replay.url))
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PUT = _serve

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    replay.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield replay
    finally:
        server.shutdown()
        server.server_close()
