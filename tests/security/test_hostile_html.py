"""Text from a service is data wherever it reaches HTML, tried in a real headless Chromium: a
hostile service's alert categories, colours, incident types, error messages and a caller's
queries and place names, in every map (saved, in a notebook's output, in an HTML report built by
nbconvert with the project's template) and every widget (its live HTML values as ipywidgets
writes them, its static view). Every payload would run script if it were read as markup; the
pages are checked for any that ran (a console message), and for the text shown as written."""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import toolkit
from tests.browser import launch, missing, sync_playwright
from tests.frames_of_every_function import ANDORRA, TOWNS
from tests.security.hostile import Answer, Hostile, Seen

folium = pytest.importorskip("folium")
pytest.importorskip("ipywidgets")
gpd = pytest.importorskip("geopandas")


#: Each runs script when read as HTML (in an element, an attribute, after a script's end) and
#: says so on the console; the last is text a page-wide search for element names rewrote.
PAYLOADS = [
    '<img src=x onerror=console.log("PWNED-img")>',
    '</script><script>console.log("PWNED-script")</script>',
    '<svg onload=console.log("PWNED-svg")>',
    '\'"><img src=x onerror=console.log("PWNED-attr")>',
    '<!--<script>_0123456789abcdef0123456789abcdef',  # shown whole, not renamed
]
pytestmark = [
    pytest.mark.xdist_group("real-time"),  # Chromium, driven with waits: see tests/conftest.py
    pytest.mark.skipif(missing() is not None, reason=str(missing())),
]


def _cycle(n: int, offset: int = 0) -> list[str]:
    return [PAYLOADS[(i + offset) % len(PAYLOADS)] for i in range(n)]


@pytest.fixture(scope="module")
def frames(sandbox) -> Iterator[dict[str, Any]]:
    """The sandbox's frames with a hostile service's words in them."""
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    conn.sleep = lambda seconds: None
    try:
        places = list(TOWNS.values())
        alerts = toolkit.severe_weather_alerts(places, connection=conn)
        air = toolkit.air_quality(places, connection=conn)
        incidents = toolkit.traffic_incidents(ANDORRA, connection=conn)
        suggestions = toolkit.autocomplete("Can", coordinates=TOWNS["Canillo"],
                                           connection=conn)
        addresses = toolkit.reverse_geocode(places, connection=conn)
    finally:
        conn.close()
    placed = alerts["alertId"].notna()
    alerts = alerts.copy()
    for column, offset in (("category", 0), ("name", 1), ("description.english", 2)):
        values = alerts[column].astype(object)
        values[placed] = _cycle(int(placed.sum()), offset)
        alerts[column] = values
    air = air.copy()
    air["categoryColor"] = "<script>"
    air["place"] = _cycle(len(air), 3)
    incidents = incidents.copy()
    incidents["incidentType"] = _cycle(len(incidents))
    suggestions = suggestions.copy()
    suggestions["query"] = _cycle(len(suggestions))
    suggestions["name"] = _cycle(len(suggestions), 1)
    suggestions["geometry"] = gpd.points_from_xy(
        [1.52 + 0.01 * i for i in range(len(suggestions))], [42.51] * len(suggestions),
        crs=4326)
    addresses = addresses.copy()
    addresses["type"] = _cycle(len(addresses))
    addresses["address.formattedAddress"] = _cycle(len(addresses), 1)
    return {"alerts": alerts, "air": air, "incidents": incidents, "suggestions": suggestions,
            "addresses": addresses}


def _maps(frames: dict[str, Any]) -> dict[str, Any]:
    explore = toolkit.explore
    return {
        "alerts": explore.alerts(frames["alerts"]),
        "air_quality": explore.air_quality(frames["air"], alerts=frames["alerts"]),
        "incidents": explore.incidents(frames["incidents"]),
        "suggestions": explore.suggestions(frames["suggestions"]),
        "addresses": explore.addresses(frames["addresses"]),
    }


class Browser:
    """A headless Chromium that opens pages and reports whatever script a payload ran."""

    def __init__(self, browser: Any) -> None:
        self.browser = browser

    def open(self, path: Path, *, maps: int = 0) -> dict[str, Any]:
        """Open ``path``, wait for ``maps`` maps to draw their markers, and gather what ran
        and what the pages show."""
        ran: list[str] = []
        page = self.browser.new_page(viewport={"width": 1000, "height": 900})
        try:
            page.on("console", lambda m: ran.append(m.text) if "PWNED" in m.text else None)
            page.on("dialog", lambda d: (ran.append(f"dialog {d.message}"), d.dismiss()))
            page.goto(path.as_uri(), timeout=60_000)
            drawn = []
            for frame in [page.main_frame, *page.frames[1:]]:
                if maps and frame is not page.main_frame:
                    frame.locator(".leaflet-control-layers").first.wait_for(
                        state="attached", timeout=20_000)
                    drawn.append(frame.locator("path.leaflet-interactive").count())
            texts = [f.evaluate("document.documentElement.textContent") for f in page.frames]
            layers = [f.evaluate("Array.from(document.querySelectorAll("
                                 "'.leaflet-control-layers-overlays label')).map("
                                 "e => e.textContent.trim())") for f in page.frames[1:]]
            page.wait_for_timeout(300)  # an image's onerror fires after its failed load
            page.screenshot(path=str(path.with_suffix(".png")), full_page=True)
        finally:
            page.close()
        assert len(drawn) >= maps
        return {"ran": ran, "drawn": drawn, "texts": texts, "layers": layers}


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        chromium = launch(p)
        try:
            yield Browser(chromium)
        finally:
            chromium.close()


def _page(body: str) -> str:
    return f"<!DOCTYPE html><html><head><meta charset='utf-8'></head><body>{body}</body></html>"


def _check_layers(seen: dict[str, Any], payloads: list[str] = PAYLOADS) -> None:
    """The layer controls name the hostile layers as written."""
    named = [name for frame in seen["layers"] for name in frame]
    for payload in payloads:
        assert any(payload in name for name in named), payload


# ------------------------------------------------------------------------------ maps
def test_a_saved_map_shows_a_services_words_as_text(frames, browser, tmp_path) -> None:
    for name, m in _maps(frames).items():
        path = tmp_path / f"{name}.html"
        m.save(str(path))
        # a saved page is the map itself: its layer control is the top window's
        framed = tmp_path / f"{name}-framed.html"
        framed.write_text(_page(f"<iframe src='{path.name}' width=900 height=600></iframe>"),
                          encoding="utf-8")
        seen = browser.open(framed, maps=1)
        assert seen["ran"] == [], name
        assert seen["drawn"][0] > 0, name
        if name == "alerts":  # the map whose layers are named by the service's categories
            _check_layers(seen)


def test_a_notebooks_view_of_a_map_shows_a_services_words_as_text(frames, browser,
                                                                   tmp_path) -> None:
    # the notebook's output of each map as JupyterLab and nbconvert embed it: the page in an
    # <iframe srcdoc> of the notebook's origin (the first one carrying Leaflet)
    outputs = [m._repr_html_() for m in _maps(frames).values()]
    path = tmp_path / "notebook.html"
    path.write_text(_page("".join(f"<div class='output'>{o}</div>" for o in outputs)),
                    encoding="utf-8")
    seen = browser.open(path, maps=len(outputs))
    assert seen["ran"] == []
    assert all(n > 0 for n in seen["drawn"]), seen["drawn"]  # "<script>" colours draw too
    _check_layers(seen)


# ------------------------------------------------------------------------------ widgets
def _error_server(seen: Seen, server: Hostile) -> Answer:
    return Answer(400, {"error": {"code": "BadRequest", "message": f"refused: {PAYLOADS[0]}"}})


def _live_and_static(values: list[str], static: list[str]) -> str:
    """A page that writes each live value as ipywidgets' HTML widget does (``innerHTML``),
    then the static views as nbconvert does (the page's own HTML)."""
    holders = "".join(f"<div id='live{i}'></div>" for i in range(len(values)))
    fill = ("<script>var v = " + json.dumps(values).replace("</", "<\\/") + ";"
            "v.forEach(function (x, i) {document.getElementById('live' + i).innerHTML = x;});"
            "</script>")
    return _page(holders + fill + "".join(static))


def test_widgets_show_a_services_words_and_error_messages_as_text(frames, sandbox, browser,
                                                                   tmp_path) -> None:
    from toolkit.widgets._static import bundle
    from toolkit.widgets.maps import AutocompleteBox, RoutePlanner
    from toolkit.widgets.policy import ComplianceExplorer
    from toolkit.widgets.weather import AirQualityExplorer

    live: list[str] = []
    static: list[str] = []
    with Hostile(_error_server) as server:
        conn = toolkit.connect(base_url=server.url, maps_key="k" * 43, token="t" * 24,
                               progress=False)
        conn.sleep = lambda seconds: None
        box = AutocompleteBox(coordinates=TOWNS["Canillo"], debounce=0, connection=conn)
        box.widget  # noqa: B018 - builds the view: its status line
        box.type(PAYLOADS[1])
        assert box.error and PAYLOADS[0] in html.unescape(box._status.value)
        places = pd.DataFrame({"name": ["A", "B"]}).pipe(
            gpd.GeoDataFrame, geometry=gpd.points_from_xy([1.52, 1.60], [42.51, 42.57]),
            crs=4326)
        planner = RoutePlanner(places=places, coordinates=TOWNS["Canillo"], interactive=True,
                               debounce=0, connection=conn)
        planner.widget  # noqa: B018 - builds the view: its button and status line
        planner.origin.place = places.iloc[[0]]
        planner.destination.place = places.iloc[[1]]
        planner.widget.children[1].click()  # "Plan route": the service refuses
        assert PAYLOADS[0] in html.unescape(planner._summary.value)  # the service's words
        live += [box._status.value, planner._summary.value]
        static += [bundle(box.widget, box.static_html())["text/html"],
                   bundle(planner.widget, planner.static_html())["text/html"]]
        conn.close()
    good = toolkit.connect(sandbox=sandbox, progress=False)
    good.sleep = lambda seconds: None
    try:
        explorer = AirQualityExplorer(interactive=True, connection=good)
        result = explorer.select(TOWNS["Ordino"], label=PAYLOADS[3])
        result.alerts = frames["alerts"][frames["alerts"]["alertId"].notna()].head(3)
        explorer._render(result)
        explorer._show_error(PAYLOADS[2])
        sub = sandbox.catalog().query("kind == 'subscription'").iloc[0].subscription_id
        compliance = ComplianceExplorer(scopes=pd.DataFrame({
            "label": [PAYLOADS[0]], "subscription_id": [sub], "resource_group": [PAYLOADS[2]]}),
            connection=good)
        live += [explorer.title.value, explorer.message.value, explorer.table.value,
                 compliance._status.value]
        static += [bundle(explorer.widget, explorer.static_html())["text/html"],
                   bundle(compliance.widget, compliance.static_html())["text/html"]]
    finally:
        good.close()
    path = tmp_path / "widgets.html"
    path.write_text(_live_and_static(live, static), encoding="utf-8")
    seen = browser.open(path, maps=1)
    assert seen["ran"] == []
    shown = seen["texts"][0]
    for payload in PAYLOADS[:4]:
        assert payload in shown, payload  # as text: the payload, not its effect
    _check_layers(seen, PAYLOADS[:3])  # the explorer's map: the alerts' categories as written


# ------------------------------------------------------------------------------ a report
def test_a_report_built_by_nbconvert_shows_a_services_words_as_text(frames, sandbox, browser,
                                                                    tmp_path) -> None:
    import nbformat

    from toolkit.report.pages import exporter
    from toolkit.widgets._static import bundle
    from toolkit.widgets.weather import AirQualityExplorer

    good = toolkit.connect(sandbox=sandbox, progress=False)
    good.sleep = lambda seconds: None
    try:
        explorer = AirQualityExplorer(interactive=True, connection=good)
        explorer.select(TOWNS["Ordino"], label=PAYLOADS[0])
        widget = bundle(explorer.widget, explorer.static_html())
    finally:
        good.close()
    nb = nbformat.v4.new_notebook()
    cells = [nbformat.v4.new_markdown_cell("# A report of a stranger's service")]
    maps = _maps(frames)
    for name, m in maps.items():
        cell = nbformat.v4.new_code_cell(f"toolkit.explore.{name}(df)")
        cell.outputs = [nbformat.v4.new_output("display_data", data={
            "text/html": m._repr_html_(), "text/plain": "<folium.Map>"})]
        cells.append(cell)
    cell = nbformat.v4.new_code_cell("toolkit.widgets.air_quality_explorer()")
    cell.outputs = [nbformat.v4.new_output("display_data", data={
        "text/html": widget["text/html"], "text/plain": "explorer"})]
    cells.append(cell)
    nb.cells = cells
    page, _ = exporter().from_notebook_node(nb, resources={"metadata": {"name": "hostile"}})
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    seen = browser.open(path, maps=len(maps) + 1)
    assert seen["ran"] == []
    assert all(n > 0 for n in seen["drawn"]), seen["drawn"]
    _check_layers(seen)
    assert html.unescape(PAYLOADS[0]) in seen["texts"][0]  # the explorer's title, as text
