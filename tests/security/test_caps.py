"""Hostile sizes and timings end within their caps, with a ToolkitError subclass.

A declared 2 GiB body, a gzip bomb, an endless body, a body dripping a byte at a time, an LRO
that asks for no wait at all or for a day (or 1e10 s), a kubeconfig built of YAML aliases, an
async-status body of the wrong shape: each ends with the error its cap names, in bounded time and
memory, and nothing about a fault-free answer changes (gzip bodies within the cap are decoded).
"""

from __future__ import annotations

import base64
import gzip
import struct
import time
import tracemalloc
import zlib
from collections.abc import Iterator
from typing import Any

import pytest

import toolkit
from tests.security.conftest import connect_to
from tests.security.hostile import Answer, Hostile, Seen, json_answer
from toolkit._core.errors import (
    OperationWaitError,
    ProtocolError,
    ResponseLimitError,
    ToolkitError,
)

SUB = "00000000-0000-0000-0000-000000000001"
MiB = 1 << 20


def _page(n: int) -> dict[str, Any]:
    return {"value": [{"name": f"Vendor.Sql/op{i}/read", "display": {"provider": "p"}}
                      for i in range(n)]}


def test_a_gzip_answer_within_the_cap_gives_the_same_frame() -> None:
    plain = _page(50)

    def script(seen: Seen, server: Hostile) -> Answer:
        if "gzip" in seen.headers.get("Accept-Encoding", ""):
            return Answer(200, gzip.compress(toolkit_json(plain)),
                          {"Content-Encoding": "gzip", "Content-Type": "application/json"})
        return json_answer(plain)

    with Hostile(script) as zipped, Hostile(lambda s, h: json_answer(plain)) as clear:
        a = toolkit.sql_operations(connection=connect_to(zipped))
        b = toolkit.sql_operations(connection=connect_to(clear))
    assert zipped.seen[0].headers["Accept-Encoding"] == "gzip"
    assert a.equals(b) and len(a) == 50


def toolkit_json(body: Any) -> bytes:
    import orjson

    return orjson.dumps(body)


@pytest.mark.xdist_group("real-time")  # measures real time: see tests/conftest.py
def test_a_declared_huge_body_is_refused_before_it_is_read() -> None:
    def script(seen: Seen, server: Hostile) -> Answer:
        return Answer(200, b"", {"Content-Length": str(2 << 30),
                                 "Content-Type": "application/json"},
                      pieces=iter([b"{" * 1024]), gap=0)

    with Hostile(script) as service:
        started = time.monotonic()
        with pytest.raises(ResponseLimitError, match="max_body_bytes") as err:
            toolkit.sql_operations(connection=connect_to(service))
    assert err.value.limit == "max_body_bytes"
    assert time.monotonic() - started < 10
    assert service.count() == 1  # not asked again


def _endless(piece: bytes) -> Iterator[bytes]:
    while True:
        yield piece


def test_an_endless_body_stops_at_the_cap_in_bounded_memory() -> None:
    def script(seen: Seen, server: Hostile) -> Answer:
        return Answer(200, b"", {"Content-Type": "application/json",
                                 "Transfer-Encoding": "chunked"},
                      pieces=(b"10000\r\n" + b"x" * 0x10000 + b"\r\n" for _ in range(10_000)))

    with Hostile(script) as service:
        tracemalloc.start()
        try:
            with pytest.raises(ResponseLimitError, match="max_body_bytes"):
                toolkit.sql_operations(connection=connect_to(service, max_body_bytes=4 * MiB))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 32 * MiB


def _gzip_bomb(mebibytes: int) -> bytes:
    """A valid gzip member inflating to ``mebibytes`` MiB of zeros: one fully flushed deflate
    block of 1 MiB repeated, then an empty final block and the trailer."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = deflate.compress(b"\0" * MiB) + deflate.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    zeros = b"\0" * MiB
    for _ in range(mebibytes):
        crc = zlib.crc32(zeros, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
    trailer = struct.pack("<II", crc, (mebibytes * MiB) & 0xFFFFFFFF)
    return header + block * mebibytes + b"\x03\x00" + trailer


def test_the_gzip_bomb_is_a_valid_gzip_member() -> None:
    assert len(zlib.decompress(_gzip_bomb(8), 16 + zlib.MAX_WBITS)) == 8 * MiB


def test_a_gzip_bomb_stops_at_the_cap_after_decompression() -> None:
    body = _gzip_bomb(256)
    assert len(body) < MiB

    def script(seen: Seen, server: Hostile) -> Answer:
        return Answer(200, body, {"Content-Encoding": "gzip", "Content-Type": "application/json"})

    with Hostile(script) as service:
        tracemalloc.start()
        try:
            with pytest.raises(ResponseLimitError, match="after decompression"):
                toolkit.sql_operations(connection=connect_to(service, max_body_bytes=4 * MiB))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 48 * MiB


def test_an_unasked_encoding_is_a_protocol_error() -> None:
    def script(seen: Seen, server: Hostile) -> Answer:
        return Answer(200, b"\x00\x01", {"Content-Encoding": "br"})

    with Hostile(script) as service, pytest.raises(ProtocolError, match="'br'"):
        toolkit.sql_operations(connection=connect_to(service))


@pytest.mark.xdist_group("real-time")  # measures real time: see tests/conftest.py
def test_a_dripping_body_ends_at_the_request_deadline() -> None:
    def script(seen: Seen, server: Hostile) -> Answer:
        return Answer(200, b"", {"Content-Length": "100000", "Content-Type": "application/json"},
                      pieces=_endless(b" "), gap=0.05)

    with Hostile(script) as service:
        conn = connect_to(service, request_deadline=0.5, read_timeout=30)
        started = time.monotonic()
        with pytest.raises(ResponseLimitError, match="request_deadline") as err:
            toolkit.sql_operations(connection=conn)
        took = time.monotonic() - started
    assert err.value.limit == "request_deadline"
    assert took < 5
    assert service.count() == 1


def _header_drip() -> Iterator[bytes]:
    yield b"HTTP/1.1 200 OK\r\n"
    while True:
        yield b"X"  # one endless header line, a byte at a time


@pytest.mark.xdist_group("real-time")  # measures real time: see tests/conftest.py
def test_dripping_headers_end_at_the_request_deadline() -> None:
    def script(seen: Seen, server: Hostile) -> Answer:
        return Answer(pieces=_header_drip(), gap=0.05, raw=True)

    with Hostile(script) as service:
        conn = connect_to(service, request_deadline=0.5, read_timeout=30)
        started = time.monotonic()
        with pytest.raises(ResponseLimitError, match="request_deadline"):
            toolkit.sql_operations(connection=conn)
        took = time.monotonic() - started
    assert took < 5
    assert service.count() == 1


def _lro(retry_after: str, polls: list[Seen]) -> Any:
    def script(seen: Seen, server: Hostile) -> Answer:
        polls.append(seen)
        return Answer(202, b"", {"Location": f"{server.url}/operations/1",
                                 "Retry-After": retry_after})

    return script


def test_retry_after_zero_does_not_spin() -> None:
    seen: list[Seen] = []
    with Hostile(_lro("0", seen)) as service:
        conn = connect_to(service, min_poll_wait=2.0)
        with pytest.raises(toolkit.OperationTimeoutError):
            toolkit.backend_health(SUB, "rg", "agw", timeout=20, connection=conn)
    assert conn.waits and min(conn.waits) >= 2.0
    assert len(seen) <= 1 + 20 / 2.0


@pytest.mark.parametrize("asked", ["100000", "1e10", "inf"])
def test_a_huge_poll_wait_raises_with_the_operation_to_resume(asked: str) -> None:
    seen: list[Seen] = []
    with Hostile(_lro(asked, seen)) as service:
        conn = connect_to(service, max_retry_wait=60)
        with pytest.raises(OperationWaitError) as err:
            toolkit.backend_health(SUB, "rg", "agw", connection=conn)
        assert err.value.retry_after == float(asked)
        assert "max_retry_wait" in str(err.value)
        assert conn.waits == []  # nothing sat out
        operation = err.value.operation
        # resuming polls at once (the caller has waited), and raises again on the same answer
        with pytest.raises(OperationWaitError):
            operation.result()
    assert len(seen) == 2


def test_an_async_status_body_of_the_wrong_shape_is_a_protocol_error() -> None:
    def script(seen: Seen, server: Hostile) -> Answer:
        if seen.method == "GET" and "/status" in seen.path:
            return json_answer(["not", "an", "object"])
        return Answer(202, b"", {"Location": f"{server.url}/result",
                                 "Vendor-AsyncOperation": f"{server.url}/status",
                                 "Retry-After": "1"})

    with Hostile(script) as service, pytest.raises(ProtocolError, match="JSON object"):
        toolkit.backend_health(SUB, "rg", "agw", connection=connect_to(service))


@pytest.mark.parametrize("status", [{"status": 7}, {"status": "Failed", "error": "boom"}])
def test_odd_async_status_fields_end_with_a_toolkit_error(status: dict[str, Any]) -> None:
    def script(seen: Seen, server: Hostile) -> Answer:
        if seen.method == "GET" and "/status" in seen.path:
            return json_answer(status)
        return Answer(202, b"", {"Location": f"{server.url}/result",
                                 "Vendor-AsyncOperation": f"{server.url}/status",
                                 "Retry-After": "1"})

    with Hostile(script) as service, pytest.raises(ToolkitError):
        toolkit.backend_health(SUB, "rg", "agw", connection=connect_to(service))


def test_a_kubeconfig_of_yaml_aliases_is_refused_in_bounded_memory() -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 12):
        prev = chr(ord("a") + i - 1)
        cur = chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]")
    bomb = "\n".join(lines) + "\n"
    assert len(bomb) < 1000
    body = {"kubeconfigs": [{"name": "clusterUser",
                             "value": base64.b64encode(bomb.encode()).decode()}]}

    with Hostile(lambda s, h: json_answer(body)) as service:
        tracemalloc.start()
        try:
            with pytest.raises(ProtocolError, match="aliases"):
                toolkit.cluster_monitoring_credentials(SUB, "rg", "aks-1",
                                                       connection=connect_to(service))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 16 * MiB
