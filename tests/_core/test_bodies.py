"""Bodies read in large reads, of declared length or not, over real HTTP."""

from __future__ import annotations

import pytest

import toolkit
from tests._core.loopback import TOKEN, EmptyPages, serving
from toolkit._core.messages import Request


def test_a_body_reads_the_same_without_urllib3s_own_buffer_access(monkeypatch) -> None:
    # a body of declared length is read into one buffer through urllib3's answer; where that
    # is not available it is read in chunks, to the same bytes
    from tests.replay import Answer, replay_server
    from toolkit._core import bodies

    body = {"value": [{"id": f"/x/{i}", "name": "n" * (i % 50)} for i in range(3000)]}
    exact: list[int] = []
    read_exact = bodies.BoundedBodyAdapter._read_exact

    def counted(self, *args, **kw):
        exact.append(1)
        return read_exact(self, *args, **kw)

    monkeypatch.setattr(bodies.BoundedBodyAdapter, "_read_exact", counted)
    with replay_server() as rp:
        rp.add("GET", r"/items", Answer(200, body))
        conn = toolkit.connect(base_url=rp.url, token=TOKEN, progress=False)
        try:
            one = conn.pipeline("arm").send(Request("GET", "/items")).content
            monkeypatch.setattr(bodies, "_exact_reads", lambda raw: False)
            two = conn.pipeline("arm").send(Request("GET", "/items")).content
        finally:
            conn.close()
    assert exact == [1]  # the first read took the one-buffer path, the second did not
    assert one == two and len(one) > 100_000


def test_an_answer_to_head_has_no_body_whatever_its_length_says() -> None:
    class Handler(EmptyPages):
        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "12345")
            self.end_headers()

    with serving(Handler) as conn:
        pipe = conn.pipeline("arm")
        assert pipe.send(Request("HEAD", "/x", check_json=False)).content == b""
        assert pipe.send(Request("GET", "/x")).json() == {"value": []}  # the connection serves on


def test_a_compressed_body_inflates_no_further_than_the_cap() -> None:
    import gzip
    import zlib

    from toolkit._core.bodies import _BodyDecoder
    from toolkit._core.errors import ProtocolError

    bomb = gzip.compress(b"\0" * 10_000_000)
    assert len(_BodyDecoder("gzip").feed(bomb, 1000)) == 1001  # enough to tell it is over
    raw = zlib.compress(b"abc")[2:-4]  # raw deflate, without zlib's header
    assert _BodyDecoder("deflate").feed(raw, 100) == b"abc"
    assert _BodyDecoder("deflate").feed(zlib.compress(b"abc"), 100) == b"abc"
    assert _BodyDecoder("").feed(b"as is", 1) == b"as is"
    with pytest.raises(ProtocolError, match="br"):
        _BodyDecoder("br")


@pytest.mark.parametrize("watched", [False, True])
def test_a_compressed_body_larger_than_a_batch_reads_whole(watched: bool) -> None:
    # compressed reads are held and inflated together (past a head watcher, up to a batch at a
    # time): the body comes out the same, whether or not a watcher takes its start
    import base64
    import gzip
    import os

    import orjson

    from tests.replay import Answer, replay_server
    from toolkit._core.bodies import _INFLATE_BATCH

    body = orjson.dumps({"value": [{"id": base64.b64encode(os.urandom(1_600_000)).decode()},
                                   {"id": "x" * 500_000}]})
    zipped = gzip.compress(body, compresslevel=1)
    assert len(zipped) > _INFLATE_BATCH
    heads: list[int] = []

    def on_head(head: bytes) -> bool:
        heads.append(len(head))
        return False

    with replay_server() as rp:
        rp.add("GET", r"/items", Answer(200, zipped, {"Content-Encoding": "gzip",
                                                      "Content-Type": "application/json"}))
        conn = toolkit.connect(base_url=rp.url, token=TOKEN, progress=False)
        try:
            got = conn.pipeline("arm").send(
                Request("GET", "/items", on_head=on_head if watched else None)).content
        finally:
            conn.close()
    assert got == body
    assert bool(heads) == watched and all(0 < n <= 64 * 1024 for n in heads)
