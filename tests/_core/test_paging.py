"""Paging over a replayed service: next links followed, a repeated link refused, and a failed
page leaving what was read on the error's declared attributes.

Also: next links from the envelope only, runs of empty pages end with ProtocolError, and
prefetching behaves as one chain.
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

import toolkit
from tests.replay import Answer, replay_server
from toolkit._core.errors import ProtocolError, ServiceError, ToolkitError
from toolkit._core.frames import FrameBuilder
from toolkit._core.paging import (
    ARM,
    EMPTY_PAGE_LIMIT,
    ODATA,
    UNKNOWN,
    PagingStyle,
    collect_frame,
    envelope_next_link,
    iter_pages,
)
from toolkit._core.schemas import Col, Schema

STYLE = PagingStyle(items_key="value", next_key="nextLink", next_method="GET")
SCHEMA = Schema("things", (Col("id", "string"), Col("n", "Int64")))


def _page(start: int, link: str | None) -> dict:
    return {"value": [{"id": f"t{i}", "n": i} for i in range(start, start + 2)],
            "nextLink": link}


@pytest.fixture
def replay(waits):
    with replay_server() as rp:
        conn = toolkit.connect(base_url=rp.url, token="example-token-0123456789",
                               progress=False, max_retries=0)
        conn.sleep = waits
        rp.conn = conn
        yield rp


def test_every_page_is_read_in_order(replay) -> None:
    replay.add("GET", r"/things\?", Answer(200, _page(0, f"{replay.url}/things/p2")))
    replay.add("GET", r"/things/p2", Answer(200, _page(2, f"{replay.url}/things/p3")))
    replay.add("GET", r"/things/p3", Answer(200, _page(4, None)))
    pipe = replay.conn.pipeline("arm")
    pages = list(iter_pages(pipe, "GET", "/things", style=STYLE, params={"x": "1"},
                            operation="things"))
    assert [p.number for p in pages] == [0, 1, 2]
    assert [item["id"] for p in pages for item in p.items] == [f"t{i}" for i in range(6)]


def test_a_repeated_next_link_is_refused_instead_of_looping(replay) -> None:
    replay.add("GET", r"/things\?", Answer(200, _page(0, f"{replay.url}/things/p2")))
    replay.add("GET", r"/things/p2", Answer(200, _page(2, f"{replay.url}/things/p2")))
    pipe = replay.conn.pipeline("arm")
    with pytest.raises(ProtocolError, match="same next link twice"):
        list(iter_pages(pipe, "GET", "/things", style=STYLE, params={"x": "1"}, operation="things"))


def test_a_failed_page_keeps_the_rows_read_and_where_to_resume(replay) -> None:
    replay.add("GET", r"/things\?", Answer(200, _page(0, f"{replay.url}/things/p2")))
    replay.add("GET", r"/things/p2", Answer(503, {"error": {"code": "Busy", "message": "x"}}))
    pipe = replay.conn.pipeline("arm")
    pages = iter_pages(pipe, "GET", "/things", style=STYLE, params={"x": "1"}, operation="things")
    with pytest.raises(ServiceError) as info:
        collect_frame(pages, FrameBuilder(SCHEMA), operation="things",
                      connection=replay.conn, api_version=None)
    err = info.value
    assert err.partial["id"].tolist() == ["t0", "t1"]
    assert err.next_link == f"{replay.url}/things/p2"
    assert "err.partial" in str(err)


def test_the_attributes_are_declared_on_every_error() -> None:
    err = ToolkitError("x")
    assert err.partial is None and err.next_link is None
    assert "partial" in ToolkitError.__annotations__ and "next_link" in ToolkitError.__annotations__


TOKEN = "example-token-0123456789"


@pytest.mark.parametrize(("body", "want"), [
    (b'{"@odata.nextLink": "https://h/x?a=1&$skiptoken=abc", "value": [1]}',
     "https://h/x?a=1&$skiptoken=abc"),
    (b' {"@odata.context":"c","@odata.count":3,"@odata.nextLink":"a\\"b","value":[]}', 'a"b'),
    (b'{"@odata.nextLink":null,"value":[]}', None),
    (b'{"@odata.nextLink":"","value":[]}', None),
])
def test_the_envelope_head_names_the_next_link(body: bytes, want: Any) -> None:
    assert envelope_next_link(body, ODATA) == want


@pytest.mark.parametrize("body", [
    b'{"value":[]}',                                                   # not in the head
    b'{"value":[{"@odata.nextLink":"http://evil/steal"}]}',            # inside a record
    b'{"value":[], "@odata.nextLink": "http://h/after"}',              # after the items
    b'{"meta":{"@odata.nextLink":"http://evil/"},"@odata.nextLink":"x","value":[]}',
    b'{"@odata.count":1,"@odata.nextLink":7,"value":[]}',              # not a string
    b'{"@odata.next\\u004cink":"http://evil/","value":[]}',            # an escaped key
    b'[1, 2]',
    b'not json',
    b'',
])
def test_anything_else_is_left_to_the_parsed_page(body: bytes) -> None:
    assert envelope_next_link(body, ODATA) is UNKNOWN


def test_a_link_planted_in_record_data_goes_nowhere() -> None:
    with replay_server() as elsewhere, replay_server() as rp:
        elsewhere.add("POST", r".*", Answer(200, {"value": []}))
        planted = f"{elsewhere.url}/steal?$skiptoken=x"
        record = {"resourceId": "/subscriptions/s/x", "complianceState": "Compliant",
                  "timestamp": "2026-11-20T08:00:00Z",
                  "resourceTags": {"@odata.nextLink": planted}}
        rp.add("POST", r"queryResults", Answer(200, {"value": [record]}))
        conn = toolkit.connect(base_url=rp.url, token=TOKEN, progress=False, max_retries=0)
        try:
            df = toolkit.policy_states("00000000-0000-0000-0000-000000000000", "rg",
                                       connection=conn)
        finally:
            conn.close()
    assert len(df) == 1 and planted in df["resourceTags"].iloc[0]
    assert elsewhere.seen == []
    assert len(rp.seen) == 1


@pytest.mark.parametrize("prefetch", [False, True])
def test_a_run_of_empty_pages_ends_with_protocol_error(prefetch: bool) -> None:
    with replay_server() as rp:
        n = EMPTY_PAGE_LIMIT + 20
        answers = [Answer(200, {"nextLink": f"{rp.url}/items?page={i + 1}", "value": []})
                   for i in range(n)]
        rp.add("GET", r"/items", *answers, Answer(200, {"value": [{"id": "last"}]}))
        conn = toolkit.connect(base_url=rp.url, token=TOKEN, progress=False, max_retries=0)
        try:
            pages = iter_pages(conn.pipeline("arm"), "GET", "/items", style=ARM,
                               prefetch=prefetch)
            with pytest.raises(toolkit.ProtocolError, match="in a row held no items"):
                for _ in pages:
                    pass
        finally:
            conn.close()
        assert len(rp.seen) <= EMPTY_PAGE_LIMIT + 2


@pytest.mark.parametrize("prefetch", [False, True])
def test_a_few_empty_pages_are_followed(prefetch: bool) -> None:
    with replay_server() as rp:
        answers = [Answer(200, {"value": [], "nextLink": f"{rp.url}/items?page={i + 1}"})
                   for i in range(5)]
        rp.add("GET", r"/items", *answers, Answer(200, {"value": [{"id": "last"}]}))
        conn = toolkit.connect(base_url=rp.url, token=TOKEN, progress=False, max_retries=0)
        try:
            items = [i for page in iter_pages(conn.pipeline("arm"), "GET", "/items",
                                              prefetch=prefetch) for i in page.items]
        finally:
            conn.close()
    assert items == [{"id": "last"}]


@pytest.mark.parametrize("prefetch", [False, True])
def test_pages_whose_items_were_released_are_not_taken_for_empty_ones(prefetch: bool) -> None:
    with replay_server() as rp:
        n = EMPTY_PAGE_LIMIT + 20
        answers = [Answer(200, {"value": [{"id": f"r{i}"}], "nextLink": f"{rp.url}/items?p={i}"})
                   for i in range(n)]
        rp.add("GET", r"/items", *answers, Answer(200, {"value": [{"id": "last"}]}))
        conn = toolkit.connect(base_url=rp.url, token=TOKEN, progress=False, max_retries=0)
        ids = []
        try:
            for page in iter_pages(conn.pipeline("arm"), "GET", "/items", prefetch=prefetch):
                ids.extend(item["id"] for item in page.items)
                assert page.count == 1
                page.release()
                assert page.items == []
        finally:
            conn.close()
    assert ids == [f"r{i}" for i in range(n)] + ["last"]


def test_collected_pages_drop_their_records_once_they_are_in_the_frame(replay) -> None:
    replay.add("GET", r"/things\?", Answer(200, _page(0, f"{replay.url}/things/p2")))
    replay.add("GET", r"/things/p2", Answer(200, _page(2, None)))
    seen = []

    def pages():
        for page in iter_pages(replay.conn.pipeline("arm"), "GET", "/things", style=STYLE,
                               params={"x": "1"}, operation="things"):
            seen.append(page)
            yield page

    df = collect_frame(pages(), FrameBuilder(SCHEMA), operation="things",
                       transform=lambda items: items[::-1])
    assert df["id"].tolist() == ["t1", "t0", "t3", "t2"]
    assert [(p.count, p.items) for p in seen] == [(2, []), (2, [])]


@pytest.mark.parametrize("prefetch", [False, True])
def test_a_repeated_link_raises_in_both_modes(prefetch: bool) -> None:
    with replay_server() as rp:
        rp.add("GET", r"/items", Answer(200, {"nextLink": f"{rp.url}/items?again=1",
                                              "value": [{"id": 1}]}))
        conn = toolkit.connect(base_url=rp.url, token=TOKEN, progress=False, max_retries=0)
        try:
            with pytest.raises(toolkit.ProtocolError, match="same next link twice"):
                for _ in iter_pages(conn.pipeline("arm"), "GET", "/items", prefetch=prefetch):
                    pass
        finally:
            conn.close()
        assert len(rp.seen) <= 4


def test_weather_pages_stop_on_a_repeated_link_with_an_error() -> None:
    with replay_server() as rp:
        page = {"results": [{"dateTime": "2026-11-20T09:00:00+01:00", "globalIndex": 10.0}],
                "nextLink": f"{rp.url}/weather/airQuality/current/json?again=1"}
        rp.add("GET", r"/weather/airQuality/current", Answer(200, page))
        conn = toolkit.connect(base_url=rp.url, maps_key="example-maps-key-0123456789",
                               progress=False, max_retries=0)
        try:
            with pytest.raises(toolkit.ProtocolError, match="same next link twice"):
                toolkit.air_quality((1.5, 42.5), connection=conn)
        finally:
            conn.close()


class _Streaming:
    """A loopback service whose pages name their next link first, then hold the rest of the
    body until the next page is asked for (or ``patience`` seconds pass): it records, page by
    page, whether the next request arrived while the body was still on its way."""

    def __init__(self, pages: int, patience: float = 5.0, pad: int = 0) -> None:
        self.pages = pages
        self.patience = patience
        self.pad = pad  # blanks before the next link, so that the head comes in several reads
        self.asked = [threading.Event() for _ in range(pages + 1)]
        self.early: list[bool] = []
        self.requests = 0

    def serve(self) -> Any:
        service = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                n = int(self.path.rsplit("=", 1)[1])
                service.requests += 1
                service.asked[n].set()
                last = n == service.pages - 1
                link = "null" if last else f'"{url}/items?page={n + 1}"'
                head = ("{" + " " * service.pad + f'"nextLink":{link},"value":[').encode()
                rest = (",".join(f'{{"id":"p{n}-{i}","n":{i}}}' for i in range(3)) + "]}").encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(head) + len(rest)))
                self.end_headers()
                self.wfile.write(head)
                self.wfile.flush()
                if not last:
                    service.early.append(service.asked[n + 1].wait(service.patience))
                self.wfile.write(rest)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        url = f"http://127.0.0.1:{server.server_address[1]}"
        threading.Thread(target=server.serve_forever, daemon=True,
                         kwargs={"poll_interval": 0.05}).start()  # stopped at once
        return server, url


@pytest.mark.parametrize("pad", [0, 20_000])
def test_the_next_page_is_asked_for_while_the_body_still_streams(pad: int) -> None:
    # (with 20 kB before the link, more of the head is read than the reader had at hand)
    service = _Streaming(pages=4, pad=pad)
    server, url = service.serve()
    conn = toolkit.connect(base_url=url, token=TOKEN, progress=False, max_retries=0)
    try:
        pages = list(iter_pages(conn.pipeline("arm"), "GET", "/items?page=0", style=STYLE,
                                prefetch=True))
    finally:
        conn.close()
        server.shutdown()
        server.server_close()
    assert [i["id"] for p in pages for i in p.items] == [
        f"p{n}-{i}" for n in range(4) for i in range(3)]
    assert service.early == [True, True, True]  # each next request came before the body ended
    assert service.requests == 4  # and no page was asked for twice


@pytest.mark.xdist_group("real-time")  # measures real time: see tests/conftest.py
def test_every_page_request_takes_a_token_from_the_pipelines_bucket(replay, waits) -> None:
    replay.add("GET", r"/items$", Answer(200, _page(0, f"{replay.url}/items?p=2")))
    replay.add("GET", r"p=2", Answer(200, _page(2, f"{replay.url}/items?p=3")))
    replay.add("GET", r"p=3", Answer(200, _page(4, None)))
    pipe = replay.conn.pipeline("arm")
    for prefetch in (False, True):
        pipe.limiter(f"{replay.url}/items").configure(2.0, 1)
        waits.clear()
        began = time.monotonic()
        pages = list(iter_pages(pipe, "GET", "/items", style=STYLE, prefetch=prefetch))
        elapsed = time.monotonic() - began  # the bucket refills with real time as well
        assert sum(len(p.items) for p in pages) == 6
        # three requests at 2 a second, one token in the bucket: the starts are 0.5 s apart
        assert sum(waits) + elapsed >= 1.0 - 1e-9, (prefetch, waits)
        assert len(waits) >= 2
