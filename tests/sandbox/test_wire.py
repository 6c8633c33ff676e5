"""The sandbox on the wire: gzip for a client that accepts it, the ``Date`` of the sandbox's
clock, and the body faults written as a broken front end would write them."""

from __future__ import annotations

import gzip
import socket
from email.utils import parsedate_to_datetime

import pytest
import requests

from toolkit.sandbox.server import Sandbox
from toolkit.sandbox.wire import COMPRESS_MIN, accepts_gzip


@pytest.mark.parametrize(("header", "accepted"), [
    ("gzip", True), ("deflate, gzip;q=0.5", True), ("*", True), ("x-gzip", True),
    (None, False), ("", False), ("br", False), ("gzip;q=0", False), ("gzip; q=0.000", False),
])
def test_accepts_gzip_reads_the_header(header, accepted) -> None:
    assert accepts_gzip(header) is accepted


def _ops(sb: Sandbox) -> str:
    return f"{sb.url}/providers/{sb.namespace}.Sql/operations?api-version=2025-01-01"


def test_large_answers_are_gzipped_and_small_ones_not() -> None:
    with Sandbox(lro_polls=1) as sb:
        auth = {"Authorization": f"Bearer {sb.token('arm')}", "Accept-Encoding": "gzip"}
        packed = requests.get(_ops(sb), headers=auth, stream=True, timeout=10)
        raw = packed.raw.read(decode_content=False)
        assert packed.headers["Content-Encoding"] == "gzip" and len(raw) < COMPRESS_MIN * 100
        assert packed.headers["Vary"] == "Accept-Encoding"
        assert len(gzip.decompress(raw)) >= COMPRESS_MIN
        small = requests.get(sb.url + "/no/such/path", headers=auth, timeout=10)
        assert "Content-Encoding" not in small.headers


def test_the_date_header_is_the_sandbox_clock() -> None:
    with Sandbox(now="2020-02-03", frozen_clock=True) as sb:
        r = requests.get(sb.url + "/no/such/path", timeout=10)
        assert parsedate_to_datetime(r.headers["Date"]).isoformat() == "2020-02-03T09:00:00+00:00"


def test_a_dropped_answer_ends_mid_body() -> None:
    with Sandbox(compress=False) as sb:
        sb.inject("drop", path="operations", count=1)
        host, port = sb.host, sb.port
        with socket.create_connection((host, port), timeout=10) as conn:
            path = _ops(sb).removeprefix(sb.url)
            conn.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
                         f"Authorization: Bearer {sb.token('arm')}\r\n\r\n".encode())
            data = b""
            while chunk := conn.recv(65536):
                data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length")))
        assert 0 < len(body) < length
