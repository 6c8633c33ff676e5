"""Leaflet carried once per notebook: which map carries it, the pages that load it from there,
and, in a real headless Chromium, two maps of one notebook page drawing offline with it."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest

folium = pytest.importorskip("folium")
gpd = pytest.importorskip("geopandas")
import shapely  # noqa: E402

import toolkit.explore as explore  # noqa: E402
from tests.browser import launch, missing, sync_playwright  # noqa: E402
from toolkit.explore import _page  # noqa: E402
from toolkit.explore._page import (  # noqa: E402
    CARRIER_ID,
    DEFERRED,
    carrier,
    carries_now,
    leaflet_files,
    shared_page,
    srcdoc_value,
)

_HTTP_SCRIPT = re.compile(r"<script[^>]+src=[\"']?https?:", re.I)
_HTTP_STYLE = re.compile(r"<link[^>]+href=[\"']?https?:[^>]+stylesheet|<link[^>]+stylesheet"
                         r"[^>]+href=[\"']?https?:", re.I)


def _map(name: str = "a") -> Any:
    df = gpd.GeoDataFrame({"query": ["q"], "rank": [1], "name": [name]},
                          geometry=[shapely.Point(1.52, 42.51)], crs=4326)
    return explore.suggestions(df, tiles="roads")


@pytest.fixture
def kernel(monkeypatch) -> dict[str, Any]:
    """A kernel session whose current cell the test sets."""
    state: dict[str, Any] = {"cell": None}
    monkeypatch.setattr(_page, "_in_kernel", lambda: True)
    monkeypatch.setattr(_page, "_current_cell", lambda: state["cell"])
    monkeypatch.setattr(_page, "_carrier", {"done": False, "cell": None})
    return state


def test_the_first_map_of_a_session_carries_leaflet_and_its_cell_again(kernel) -> None:
    kernel["cell"] = "c1"
    assert carries_now()
    kernel["cell"] = "c2"
    assert not carries_now()
    kernel["cell"] = "c1"  # the carrying cell run again: it carries again
    assert carries_now()
    kernel["cell"] = None
    assert not carries_now()


def test_outside_a_kernel_every_map_carries(monkeypatch) -> None:
    monkeypatch.setattr(_page, "_in_kernel", lambda: False)
    assert carries_now() and carries_now()


def test_where_each_output_is_a_window_apart_every_map_carries(kernel, monkeypatch) -> None:
    import sys
    import types

    # Google Colab shows each output in a frame of an origin of its own: no map there can
    # reach Leaflet in another cell's output
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    kernel["cell"] = "c1"
    assert carries_now()
    kernel["cell"] = "c2"
    assert carries_now() and "toolkit-leaflet" in _map("b")._repr_html_()


def test_a_notebook_shows_the_carrier_once_and_pages_without_leaflet(kernel) -> None:
    kernel["cell"] = "c1"
    first = _map("a")._repr_html_()
    kernel["cell"] = "c2"
    second = _map("b")._repr_html_()
    assert first.count(f'id="{CARRIER_ID}"') == 1 and CARRIER_ID not in second.split("<iframe")[0]
    js, _ = leaflet_files()
    assert len(js) > 100_000
    for shown in (first, second):
        page = html.unescape(shown.split("srcdoc='", 1)[1].split("'", 1)[0])
        assert "__toolkitLeaflet" in page and js[:3000] not in page
        assert not _HTTP_SCRIPT.search(page) and not _HTTP_STYLE.search(page)
        assert f'<script type="{DEFERRED}">' in page
    # the second map's page alone: far lighter than a page with Leaflet written in
    assert len(second) < len(_map("b").get_root().render()) / 2
    # compressed, with the layers' script and the main roads of the network
    assert len(carrier()) < 120_000
    assert "toolkitRoads" in second and '"n":1,"palette":["#a8a8a8"]' not in second


def test_a_saved_page_carries_its_own_leaflet_and_links_nothing() -> None:
    page = _map().get_root().render()
    assert not _HTTP_SCRIPT.search(page) and not _HTTP_STYLE.search(page)
    assert leaflet_files()[0][:3000] in page and "__toolkitLeaflet" not in page


def test_shared_page_leaves_a_page_without_leaflet_alone() -> None:
    page = "<html><script>var a = 1;</script></html>"
    assert shared_page(page) == page
    assert srcdoc_value("a & 'b' \"c\"") == "a &amp; &#39;b&#39; \"c\""


@pytest.mark.skipif(missing() is not None, reason=str(missing()))
def test_two_maps_of_one_page_draw_offline_with_one_leaflet(kernel, tmp_path) -> None:
    """As a notebook or its HTML report holds them: the first map's output carries Leaflet,
    the second's does not; both draw, hover shows the tooltip, and nothing is fetched."""
    kernel["cell"] = "c1"
    first = _map("first place")._repr_html_()
    kernel["cell"] = "c2"
    second = _map("second place")._repr_html_()
    report = tmp_path / "report.html"
    report.write_text(f"<html><body>{first}<p>between</p>{second}</body></html>",
                      encoding="utf-8")
    requests: list[str] = []
    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 900, "height": 1300})
            page.on("request", lambda r: requests.append(r.url))
            page.goto(report.as_uri())
            frames = [f for f in page.frames if f != page.main_frame]
            assert len(frames) == 2
            for frame, name in zip(frames, ("first place", "second place"), strict=True):
                marker = frame.locator("path.leaflet-interactive")
                marker.first.wait_for(timeout=15_000)
                assert frame.evaluate("typeof L") == "object"
                marker.first.hover(force=True)
                tip = frame.locator(".toolkit-tooltip")
                tip.wait_for(timeout=10_000)
                assert name in tip.inner_text()
            page.screenshot(path=str(tmp_path / "two-maps.png"))
        finally:
            browser.close()
    assert not [u for u in requests if u.startswith(("http:", "https:"))]


def test_a_notebook_page_names_its_elements_shortly_and_leaves_the_data_as_it_was() -> None:
    text = "_0123456789abcdef0123456789abcdef <script>"  # an element name's shape, and a tag
    m = _map(text)
    figure = m.get_root()
    ids = {id(e): e._id for e in _page._elements(figure)}
    shown, saved = figure._repr_html_(), figure.render()
    # no render leaves parts behind for the next one, under names it no longer has
    assert figure._repr_html_() == shown and figure.render() == saved
    assert {id(e): e._id for e in _page._elements(figure)} == ids
    page = html.unescape(shown.split("srcdoc='", 1)[1].split("'", 1)[0])
    assert re.findall(r"_[0-9a-f]{32}", page) == [text[:33]] * page.count(text[:33])
    assert page.count(text[:33]) >= 1  # the data's text, whole
    assert re.search(r"\bmap_\d{1,3}\b", page)  # folium's names, short
    # the layers' data read back whole: nothing of it was taken for a tag or a name
    import json

    calls = [line for line in page.splitlines() if line.startswith("toolkitLayer(")
             and line.endswith("});")]
    tips = [json.loads(line[line.index("{"):-2]).get("tips") for line in calls]
    assert any(text in html.unescape(str(t)) for t in tips if t)
