"""A loopback server that answers with recorded responses: the services' real examples replayed
through the public functions, over HTTP."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests._core.loopback import listening


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

        _date: str | None = None

        def log_message(self, *args: Any) -> None:
            pass

        def date_time_string(self, timestamp: float | None = None) -> str:
            return self._date or super().date_time_string(timestamp)

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            ans = replay.answer(self.command, self.path)
            self._date = ans.headers.get("Date")  # a recorded date replaces the server's
            body = ans.body
            payload = body if isinstance(body, bytes) else (
                b"" if body is None else json.dumps(body).encode())
            self.send_response(ans.status)
            for k, v in ans.headers.items():
                if k != "Date":
                    self.send_header(k, v.replace("{url}", replay.url))
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PUT = _serve

    with listening(Handler) as replay.url:
        yield replay


def word_pairs(cloud: Any) -> list[tuple[str, str]]:
    """(neutral word, the cloud's word) from the clouds' facts, longest first, so that a
    namespace word inside a longer word is replaced with the longer one."""
    from dataclasses import fields

    from toolkit._spec.arm import SQL_DNS_SUFFIXES
    from toolkit._spec.clouds import NEUTRAL

    pairs = {(getattr(NEUTRAL.words, f.name), getattr(cloud.words, f.name))
             for f in fields(NEUTRAL.words)}
    pairs |= {(NEUTRAL.vault_suffix, cloud.vault_suffix), (NEUTRAL.k8s_suffix, cloud.k8s_suffix),
              (NEUTRAL.environment, cloud.environment),
              (NEUTRAL.words.async_header.replace("-", ""),
               cloud.words.async_header.replace("-", ""))}
    pairs |= {(h, cloud.hosts[f]) for f, h in NEUTRAL.hosts.items() if h and cloud.hosts[f]}
    pairs.add((SQL_DNS_SUFFIXES[NEUTRAL.name], SQL_DNS_SUFFIXES[cloud.name]))
    return sorted((p for p in pairs if p[0] != p[1]), key=lambda p: -len(p[0]))


#: The word pairs of each cloud seen and their neutral words in lower case, made once:
#: id -> (cloud, pairs, words); the cloud is held so that its id names it while the entry lives.
_PAIRS: dict[int, tuple[Any, list[tuple[str, str]], tuple[str, ...]]] = {}


def _word_pairs_once(cloud: Any) -> tuple[list[tuple[str, str]], tuple[str, ...]]:
    if id(cloud) not in _PAIRS:
        pairs = word_pairs(cloud)
        words = tuple(neutral.lower() for neutral, _ in pairs)
        assert all(w.isascii() for w in words)  # (what the test below relies on)
        _PAIRS[id(cloud)] = (cloud, pairs, words)
    return _PAIRS[id(cloud)][1:]


def in_words(value: Any, cloud: Any, *, lower: bool = False) -> Any:
    """A neutral example (or frame value) in a cloud's words: strings, and the strings inside
    lists, tuples and dicts (keys too); with ``lower``, the words in lower case too (Resource
    Graph writes types so)."""
    if isinstance(value, str):
        pairs, words = _word_pairs_once(cloud)
        folded = value.lower()
        if not any(w in folded for w in words):  # no neutral word in any case: nothing to do
            return value
        for neutral, real in pairs:
            value = value.replace(neutral, real).replace(neutral.upper(), real.upper())
            if lower:
                value = value.replace(neutral.lower(), real.lower())
        return value
    if isinstance(value, dict):
        return {in_words(k, cloud, lower=lower): in_words(v, cloud, lower=lower)
                for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(in_words(v, cloud, lower=lower) for v in value)
    return value
