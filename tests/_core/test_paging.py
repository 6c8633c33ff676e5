"""Paging over a replayed service: next links followed, a repeated link refused, and a failed
page leaving what was read on the error's declared attributes."""

from __future__ import annotations

import pytest

import toolkit
from tests.replay import Answer, replay_server
from toolkit._core.errors import ProtocolError, ServiceError, ToolkitError
from toolkit._core.frames import FrameBuilder
from toolkit._core.paging import PagingStyle, collect_frame, iter_pages
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
