"""Recorded real traffic, replayed exactly: the vendors' public test recordings, loaded, and served
by a loopback server that answers only the requests the recording holds.

Two formats: the VCR cassettes of the Azure CLI and the Fabric CLI (YAML, ``interactions``) and
the Azure SDK test proxy's session records (JSON, ``Entries``). A request is the recording's when
its method, path and query are the recorded ones (the host is the loopback server's; each query
value equal as text, as the same instant for a date-time, or within the 6 decimals the toolkit
sends for a number of a coordinate pair), and every field of its JSON body is the recorded
request's. Any other request is answered 404 ``NotRecorded`` and kept in
:attr:`StrictReplay.unmatched`, so a test fails on a request the recording lacks. Answers go out
as recorded, headers included (a ``Location`` naming the real service's host stays so); only the
framing headers of the recorded transfer (``Content-Encoding``, ``Content-Length``,
``Transfer-Encoding``, ``Connection``) are left out, the body being stored decoded.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import yaml

HERE = Path(__file__).parent
_FRAMING = {"content-encoding", "content-length", "transfer-encoding", "connection"}


@dataclass
class Exchange:
    """One recorded request and its answer."""

    method: str
    url: str
    body: Any
    status: int
    headers: list[tuple[str, str]]
    content: bytes

    @property
    def path(self) -> str:
        return urlsplit(self.url).path

    @property
    def query(self) -> list[tuple[str, str]]:
        return parse_qsl(urlsplit(self.url).query, keep_blank_values=True)

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def json(self) -> Any:
        return json.loads(self.content)


def _json_or_none(text: Any) -> Any:
    if text in (None, "", b""):
        return None
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


def load(name: str) -> list[Exchange]:
    """Read a recording of ``tests/recordings`` (``azure-cli/x.yaml``, ``...json``)."""
    path = HERE / name
    text = path.read_text(encoding="utf-8")
    out: list[Exchange] = []
    if path.suffix == ".yaml":
        for item in yaml.safe_load(text)["interactions"]:
            req, res = item["request"], item["response"]
            body = res["body"]["string"]
            out.append(Exchange(
                req["method"], req["uri"], _json_or_none(req.get("body")),
                res["status"]["code"],
                [(k, str(v)) for k, values in res["headers"].items() for v in values[:1]],
                body.encode("utf-8") if isinstance(body, str) else bytes(body or b"")))
    else:
        for entry in json.loads(text)["Entries"]:
            body = entry.get("ResponseBody")
            content = b"" if body is None else (
                body.encode("utf-8") if isinstance(body, str)
                else json.dumps(body, ensure_ascii=False).encode("utf-8"))
            out.append(Exchange(
                entry["RequestMethod"], entry["RequestUri"], entry.get("RequestBody"),
                entry["StatusCode"], [(k, str(v)) for k, v in entry["ResponseHeaders"].items()],
                content))
    return out


def _instant(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def _numbers(text: str) -> list[float] | None:
    try:
        values = [float(part) for part in text.split(",")]
    except ValueError:
        return None
    return values if all(math.isfinite(v) for v in values) else None


def same_value(recorded: str, sent: str) -> bool:
    """Tell whether a sent query value is the recorded one (see the module's rule)."""
    if recorded == sent:
        return True
    a, b = _instant(recorded), _instant(sent)
    if a is not None and b is not None and "T" in recorded and "T" in sent:
        return a == b
    x, y = _numbers(recorded), _numbers(sent)
    return (x is not None and y is not None and len(x) == len(y) > 1
            and all(abs(p - q) <= 0.5e-6 + 1e-12 for p, q in zip(x, y, strict=True)))


def _body_within(sent: Any, recorded: Any) -> bool:
    if sent is None:
        return recorded in (None, "", {})
    if isinstance(sent, dict) and isinstance(recorded, dict):
        return all(k in recorded and _body_within(v, recorded[k]) for k, v in sent.items())
    return sent == recorded


@dataclass
class StrictReplay:
    """The exchanges of a recording, each answered once, to the request it records."""

    exchanges: list[Exchange]
    defaults: Mapping[str, str] = field(default_factory=dict)
    url: str = ""
    used: list[int] = field(default_factory=list)
    unmatched: list[tuple[str, str]] = field(default_factory=list)
    seen: list[tuple[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def _query_matches(self, recorded: list[tuple[str, str]], sent: list[tuple[str, str]]) -> bool:
        have = dict(recorded)
        extra = [(k, v) for k, v in sent if k not in have]
        if any(self.defaults.get(k) != v for k, v in extra):
            return False  # a parameter the recorded request did not send (and no default)
        got = dict(sent)
        return all(k in got and same_value(v, got[k]) for k, v in recorded)

    def find(self, method: str, target: str, body: Any) -> Exchange | None:
        path = urlsplit(target).path
        query = parse_qsl(urlsplit(target).query, keep_blank_values=True)
        with self.lock:
            self.seen.append((method, target))
            for i, ex in enumerate(self.exchanges):
                if i in self.used or ex.method.upper() != method or ex.path != path:
                    continue
                if self._query_matches(ex.query, query) and _body_within(body, ex.body):
                    self.used.append(i)
                    return ex
            self.unmatched.append((method, target))
            return None

    @property
    def left(self) -> list[tuple[str, str]]:
        """The recorded requests nobody asked for."""
        return [(ex.method, ex.url) for i, ex in enumerate(self.exchanges) if i not in self.used]


@contextmanager
def replaying(name: str, *, defaults: Mapping[str, str] | None = None
              ) -> Iterator[StrictReplay]:
    """Serve a recording on a free loopback port for the duration of the block."""
    replay = StrictReplay(load(name), dict(defaults or {}))

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            ex = replay.find(self.command, self.path, _json_or_none(raw.decode("utf-8")))
            if ex is None:
                status, headers = 404, [("Content-Type", "application/json")]
                payload = json.dumps({"error": {"code": "NotRecorded", "message":
                                      f"{self.command} {self.path} is not in {name}"}}).encode()
            else:
                status, payload = ex.status, ex.content
                headers = [(k, v) for k, v in ex.headers if k.lower() not in _FRAMING]
            self.send_response(status)
            for key, value in headers:
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    replay.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield replay
    finally:
        server.shutdown()
        server.server_close()
