"""What every interactive map shares: the choice of background (web tiles or the shipped roads,
the tile server asked over real HTTP), Leaflet written into offline pages, layers with their
tooltips and colours, the legend, and the small helpers the maps are built from."""

from __future__ import annotations

import http.server
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest
import shapely

import toolkit
from tests._core.loopback import listening
from tests.explore.conftest import tooltip_columns
from toolkit._core.errors import ValidationError
from toolkit._core.secrets import MASK, Secret

folium = pytest.importorskip("folium")
gpd = pytest.importorskip("geopandas")
from toolkit.explore import _common, _page  # noqa: E402
from toolkit.explore._common import (  # noqa: E402
    ATTRIBUTION,
    CANVAS_FROM,
    TILES_URL,
    add_layer,
    add_roads,
    bounds_of,
    finish,
    geo_frame,
    has_geometry,
    inline_assets,
    new_map,
    ramp,
    tooltip_frame,
)
from toolkit.explore._inspect import map_summary  # noqa: E402

ANDORRA = (1.45, 42.45, 1.65, 42.60)
OCEAN = (-30.0, 10.0, -29.5, 10.5)


def _children(m: Any, kind: type) -> list[Any]:
    return [c for c in m._children.values() if isinstance(c, kind)]


def _frame(endpoint: str | None = None) -> pd.DataFrame:
    df = pd.DataFrame({"a": [1]})
    if endpoint is not None:
        df.attrs["endpoint"] = endpoint
    return df


@pytest.fixture
def tile_server() -> Iterator[str]:
    """A real tile server on loopback: ``/0/0/0.png`` answers 200, anything else 404."""

    class Tiles(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:
            self.send_response(200 if self.path == "/0/0/0.png" else 404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    with listening(Tiles) as url:
        yield url


@pytest.fixture
def no_answer_yet(monkeypatch) -> None:
    """Forget whether the tile server answered (the module asks once per process)."""
    monkeypatch.setattr(_common, "_reachable", {})


@pytest.fixture(scope="module")
def incidents(sandbox) -> pd.DataFrame:
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    try:
        return toolkit.traffic_incidents((1.40, 42.42, 1.80, 42.66), connection=conn)
    finally:
        conn.close()


# ------------------------------------------------------------------------------ background
def test_folium_module_is_folium() -> None:
    assert _common.folium_module() is folium


@pytest.mark.parametrize(("path", "expected"), [("/0/0/0.png", True), ("/missing.png", False)])
def test_the_tile_server_is_asked_over_http_once(tile_server, no_answer_yet, monkeypatch,
                                                 path: str, expected: bool) -> None:
    monkeypatch.setattr(_common, "_TILE_PROBE", tile_server + path)
    assert _common.tiles_reachable(timeout=5) is expected
    monkeypatch.setattr(_common, "_TILE_PROBE", tile_server + "/elsewhere.png")
    assert _common.tiles_reachable(timeout=5) is expected  # remembered, not asked again
    assert _common._reachable == {TILES_URL: expected}


def test_a_tile_server_that_does_not_answer_is_unreachable(no_answer_yet, monkeypatch) -> None:
    import socket

    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(_common, "_TILE_PROBE", f"http://127.0.0.1:{port}/0/0/0.png")
    assert _common.tiles_reachable(timeout=2) is False


def test_the_tiles_choice_is_checked() -> None:
    with pytest.raises(ValidationError, match="tiles"):
        new_map(ANDORRA, tiles="satellite")
    with pytest.raises(ValidationError, match="tiles"):
        _common._offline("Roads", [])


def test_frames_of_the_sandbox_mean_offline_whatever_the_tiles(monkeypatch) -> None:
    monkeypatch.setattr(_common, "_reachable", {TILES_URL: True})
    assert _common._offline("auto", [_frame("http://127.0.0.1:8080/traffic/incident")])
    assert not _common._offline("auto", [_frame("https://atlas.example.com/traffic")])
    assert not _common._offline("auto", [_frame(None), "not a frame"])
    monkeypatch.setattr(_common, "_reachable", {TILES_URL: False})
    assert _common._offline("auto", [_frame("https://atlas.example.com/traffic")])
    assert _common._offline("roads", []) and not _common._offline("web", [])


def test_offline_map_has_the_roads_and_leaflet_written_in(incidents) -> None:
    m = new_map(bounds_of(incidents.geometry), frames=[incidents])
    finish(m)
    assert m.toolkit_offline  # the sandbox's frames: no web tiles
    page = m.get_root().render()
    assert "cdn.jsdelivr.net" not in page and "<script src=" not in page
    assert "L.version" in page or "Leaflet" in page  # the library itself is in the page
    assert ATTRIBUTION.removeprefix("© ") in page
    roads = [c for c in _children(m, folium.FeatureGroup) if c.layer_name == "roads"]
    assert roads and not roads[0].control
    assert not _children(m, folium.TileLayer)


def test_web_tiles_when_asked(incidents) -> None:
    m = new_map(bounds_of(incidents.geometry), tiles="web", frames=[incidents])
    assert not m.toolkit_offline
    tiles = _children(m, folium.TileLayer)
    assert tiles and ATTRIBUTION in tiles[0].options.get("attribution", "")
    assert tiles[0].tiles == TILES_URL
    assert "cdn.jsdelivr.net" in m.get_root().render()
    assert not [c for c in _children(m, folium.FeatureGroup) if c.layer_name == "roads"]


def test_the_map_fits_its_bounds_with_a_margin_and_draws_on_canvas_when_large() -> None:
    m = new_map(ANDORRA, tiles="roads")
    ((south, west), (north, east)) = _children(m, folium.map.FitBounds)[0].bounds
    assert south < ANDORRA[1] and west < ANDORRA[0] and north > ANDORRA[3] and east > ANDORRA[2]
    point = new_map((1.5, 42.5, 1.5, 42.5), tiles="roads")  # one place: a margin all the same
    ((south, west), (north, east)) = _children(point, folium.map.FitBounds)[0].bounds
    assert north - south >= 0.004 and east - west >= 0.004
    assert not new_map(ANDORRA, tiles="roads", features=CANVAS_FROM).options["prefer_canvas"]
    assert new_map(ANDORRA, tiles="roads", features=CANVAS_FROM + 1).options["prefer_canvas"]


@pytest.mark.parametrize("tiles", ["roads", "web"])
def test_a_notebook_shows_a_map_in_a_frame_as_tall_as_the_map(tiles) -> None:
    import re

    # folium's frame is 60 % of the width: taller than a 480 px map on a wide screen (a blank
    # band under it), shorter on a narrow one (its legend and scale cut off)
    shown = new_map(ANDORRA, tiles=tiles, height=480)._repr_html_()
    frames = re.findall(r"<iframe srcdoc=.*?></iframe>", shown, re.S)
    assert len(frames) == 1 and "padding-bottom" not in shown
    assert re.search(r"""height=["']480px["']""", frames[0][-300:])
    assert "height: 480.0px" in new_map(ANDORRA, tiles=tiles, height="480px").get_root().render()
    # a height relative to the page keeps folium's frame in proportion to the width
    assert "padding-bottom:60%" in new_map(ANDORRA, tiles=tiles, height="100%")._repr_html_()


def _specs(group: Any) -> list[dict[str, Any]]:
    """The data of the compact layers drawn into a feature group."""
    return [c.spec for c in group._children.values() if hasattr(c, "spec")]


def _colours(spec: dict[str, Any]) -> list[str]:
    colour = spec["color"]
    return [spec["palette"][c] for c in colour] if isinstance(colour, list) else \
        [spec["palette"][colour]] * spec["n"]


def test_roads_are_drawn_only_where_the_shipped_network_is() -> None:
    m = folium.Map()
    assert add_roads(m, ANDORRA) is True
    (layer,) = _children(m, folium.FeatureGroup)
    assert layer.layer_name == "roads" and not layer.control
    parts = _specs(layer)
    assert parts and {p["kind"] for p in parts} == {"line"}
    styles = {(p["palette"][0], p["weight"]) for p in parts}
    assert len(styles) == len(parts) and all(p["n"] == 1 for p in parts)  # one per style
    assert all(not p["interactive"] for p in parts)  # background only
    assert all(p["attribution"] == ATTRIBUTION for p in parts)
    far = folium.Map()
    assert add_roads(far, OCEAN) is False and not _children(far, folium.FeatureGroup)
    offline = new_map(OCEAN, tiles="roads")
    assert offline.toolkit_offline and not _children(offline, folium.FeatureGroup)


def test_roads_are_thinned_to_the_maps_extent_and_zoom() -> None:
    """A town's map carries the roads near the town only, its streets too; a map of the
    country its main roads only, with fewer vertices at the zoom it opens at than closer."""
    from toolkit.explore._layer import decode_polyline

    def roads(bounds: tuple[float, ...]) -> list[dict[str, Any]]:
        m = folium.Map()
        add_roads(m, bounds)
        (layer,) = _children(m, folium.FeatureGroup)
        return _specs(layer)

    def vertices(specs: list[dict[str, Any]], level: int) -> int:
        total = 0
        for spec in specs:
            entry = spec["geom"][0][min(level, len(spec["geom"][0]) - 1)]
            entry = spec["geom"][0][entry] if isinstance(entry, int) else entry
            total += sum(len(decode_polyline(p)) for p in entry.split(" "))
        return total

    town = roads((1.515, 42.502, 1.530, 42.512))  # Andorra la Vella
    country = roads(ANDORRA)
    assert "#dcdcdc" in {s["palette"][0] for s in town}  # streets
    assert "#dcdcdc" not in {s["palette"][0] for s in country}
    main_town = [s for s in town if s["palette"][0] != "#dcdcdc"]
    assert vertices(main_town, -1) < vertices(country, -1) / 3
    assert vertices(country, 0) < vertices(country, -1) * 0.8


# ------------------------------------------------------------------------------ offline assets
def test_inline_assets_keeps_unknown_links() -> None:
    page = ('<script src="https://cdn.jsdelivr.net/npm/leaflet@1.9.3/dist/leaflet.js"></script>'
            '<script src="https://example.org/mine.js"></script>')
    out = inline_assets(page)
    assert "https://example.org/mine.js" in out and "leaflet@1.9.3" not in out


def test_inline_assets_writes_leaflet_in_and_drops_the_other_known_links() -> None:
    assets = _page.leaflet_assets()
    script = next(u for u in assets if u.endswith("/leaflet.js"))
    style = next(u for u in assets if u.endswith("/leaflet.css"))
    other = next(u for u in assets if u.endswith(".js") and not u.endswith("/leaflet.js"))
    page = (f'<link rel="stylesheet" href="{style}"/><script src="{script}"></script>'
            f'<script src="{other}"></script><link rel="stylesheet" href="https://x.org/a.css"/>')
    out = inline_assets(page)
    assert out.count("<script>") == 1 and out.count("<style>") == 1
    assert script not in out and style not in out and other not in out
    assert "https://x.org/a.css" in out
    inlined = out.split("<script>", 1)[1].rsplit("</script>", 1)[0]
    assert "</script" not in inlined  # the library cannot close its own tag early
    assert len(inlined) >= len(assets[script])


# ------------------------------------------------------------------------------ layers
def _places() -> gpd.GeoDataFrame:
    frame = gpd.GeoDataFrame(
        {"name": ["a", "b", "c", "d"], "tags": [["x", "y"], [], None, ["z"]],
         "info": [{"k": 1}, None, {"k": 2, "j": "v"}, np.nan],
         "key": [Secret("s3cr3t-value"), None, None, None],
         "when": pd.to_datetime(["2026-01-01", None, "2026-01-03", None])},
        geometry=[shapely.Point(1.5, 42.5), None, shapely.Point(1.6, 42.6),
                  shapely.LineString([(1.5, 42.5), (1.55, 42.52), (1.6, 42.6)])],
        crs=4326, index=[10, 11, 12, 13])
    frame["other_geometry"] = gpd.GeoSeries([shapely.Point(0, 0)] * 4, index=frame.index)
    return frame


def test_tooltip_frame_writes_each_column_as_text() -> None:
    text = tooltip_frame(_places())
    assert list(text.columns) == ["name", "tags", "info", "key", "when", "geometry"]
    assert list(text.index) == [10, 11, 12, 13] and text.crs.to_epsg() == 4326
    assert text["tags"].tolist() == ["x, y", "", "", "z"]
    assert text["info"].tolist() == ["k: 1", "", "k: 2, j: v", ""]
    assert text["key"].tolist() == [MASK, "", "", ""]  # a secret shows its mask only
    assert text["when"].tolist()[1::2] == ["", ""]
    assert "s3cr3t" not in text.to_json()


def test_a_layer_draws_the_rows_with_a_geometry_with_their_colour_and_tooltip() -> None:
    places = _places()
    m = folium.Map()
    layer = add_layer(m, places, "places", colors=["#111111", "#222222", "#333333", "#444444"],
                      radius=[4, 5, 6, 7], dash="4 4", show=False)
    points, lines = _specs(layer)  # points and lines apart, in one layer
    assert (points["kind"], points["n"], lines["kind"], lines["n"]) == ("point", 2, "line", 1)
    names = points["tips"][points["fields"].index("name")]
    assert names == ["a", "c"] or names == {"p": ["a", "c"], "i": [0, 1]}
    assert _colours(points) == ["#111111", "#333333"] and _colours(lines) == ["#444444"]
    assert points["radius"] == [4.0, 6.0] and lines["dash"] == "4 4"
    assert points["popup"]["names"] == ["name", "tags", "info", "key", "when"]
    assert "s3cr3t" not in str(points) and MASK in str(points)
    summary = map_summary(m).iloc[0]
    assert summary["layer"] == "places" and summary["features"] == 3 and not summary["shown"]
    assert summary["geometry_types"] == ["LineString", "Point"]
    assert summary["tooltip_fields"] == tooltip_columns(places.drop(columns="other_geometry"))
    assert places["tags"].iloc[0] == ["x", "y"]  # the frame is not changed


def test_one_colour_or_one_per_row() -> None:
    places = _places()
    m = folium.Map()
    add_layer(m, places, "one colour", colors="#abcdef")
    with pytest.raises(ValueError, match="one colour per row"):
        add_layer(m, places, "bad", colors=["#000000"] * 3)
    with pytest.raises(ValueError, match="one radius per row"):
        add_layer(m, places, "bad", colors="#000000", radius=[1, 2])
    specs = _specs(_children(m, folium.FeatureGroup)[0])
    assert {c for s in specs for c in _colours(s)} == {"#abcdef"}


def test_a_layer_with_nothing_to_draw_is_still_a_layer() -> None:
    places = _places().iloc[[1]]
    m = folium.Map()
    layer = add_layer(m, places, "nothing", colors="#000000")
    assert not _specs(layer)
    assert map_summary(m)[["layer", "features"]].values.tolist() == [["nothing", 0]]


def test_lines_are_simplified_points_are_kept() -> None:
    from toolkit.explore._layer import compact_layer, decode_polyline

    wiggle = shapely.LineString([(x / 1000, 0.000001 * (-1) ** x) for x in range(1001)])
    line = compact_layer([wiggle], bounds=(0, 0, 1, 1), colors=["#000000"])
    finest = line["geom"][0][-1]
    assert 2 <= len(decode_polyline(finest)) < 100
    point = compact_layer([shapely.Point(0.1234567, 0.7654321)], bounds=(0, 0, 1, 1),
                          colors=["#000000"])
    assert decode_polyline(point["geom"])[0] == pytest.approx([0.1234567, 0.7654321],
                                                              abs=1e-5)


def _legend_html(page: str) -> str:
    """The HTML the page's legend control writes (the JSON its script holds, read back)."""
    import json

    start = page.index("div.innerHTML = ", page.index('"toolkit-legend"')) + 16
    return json.loads(page[start:page.index(";\n", start)])


def test_finish_adds_the_layer_control_and_an_escaped_legend() -> None:
    m = finish(folium.Map(), legend=[("<b>bold</b>", "#ff0000"), ("plain", "#00ff00"),
                                     ("odd colour", "red;background:url(x)")],
               title="A & B")
    assert _children(m, folium.LayerControl)
    page = m.get_root().render()
    legend = _legend_html(page)
    assert "&lt;b&gt;bold&lt;/b&gt;" in legend and "<b>bold</b>" not in legend
    assert "A &amp; B" in legend and "#00ff00" in legend
    assert "url(" not in legend and "#9e9e9e" in legend  # not a colour: grey
    assert "<b>" not in page.split("<script>", 2)[-1]  # no data's tag in the page's script
    bare = finish(folium.Map())
    assert "toolkit-legend" not in bare.get_root().render()


def test_layer_names_are_text_in_the_control_and_kept_as_given() -> None:
    import html
    import json
    import re

    import toolkit.explore as explore

    query = '<img src=x onerror="alert(1)"> & more'
    df = gpd.GeoDataFrame({"query": [query], "rank": [1], "name": ["a"]},
                          geometry=[shapely.Point(1.52, 42.51)], crs=4326)
    m = explore.suggestions(df, tiles="roads")
    assert map_summary(m)["layer"].tolist() == [f"suggestions: {query}"]  # as given
    page = m.get_root().render()
    names = [json.loads(f'"{k}"') for k in
             re.findall(r'"((?:[^"\\]|\\.)*)" : feature_group_', page)]
    assert names == [html.escape(f"suggestions: {query}")]  # what Leaflet writes as HTML
    assert "<" not in names[0] and html.unescape(names[0]) == f"suggestions: {query}"


def test_every_map_of_sandbox_frames_carries_the_sandbox_mark(frames) -> None:
    import toolkit
    from toolkit._core.provenance import SANDBOX_MARK

    placed = frames["suggestions"].copy()  # the sandbox's suggestions carry no position
    placed["geometry"] = gpd.points_from_xy([1.52] * len(placed), [42.51] * len(placed),
                                            crs=4326)
    assert placed.attrs["sandbox"] is True
    maps = {
        "routes": toolkit.explore.routes(frames["routes"], incidents=frames["incidents"]),
        "incidents": toolkit.explore.incidents(frames["incidents"]),
        "snapped_trace": toolkit.explore.snapped_trace(frames["raw"], frames["snapped"]),
        "suggestions": toolkit.explore.suggestions(placed),
        "air_quality": toolkit.explore.air_quality(frames["air"], alerts=frames["alerts"]),
        "alerts": toolkit.explore.alerts(frames["alerts"]),
        "addresses": toolkit.explore.addresses(frames["addresses"]),
        "reachable_ranges": toolkit.explore.reachable_ranges(frames["ranges"]),
    }
    assert set(maps) == set(toolkit.explore.__all__) - {"map_summary"}
    for name, m in maps.items():
        page = m.get_root().render()
        assert page.count('"toolkit-sandbox-mark"') == 1 and SANDBOX_MARK in page, name
    real = frames["incidents"].copy()
    real.attrs["sandbox"] = False
    assert "toolkit-sandbox-mark" not in toolkit.explore.incidents(real).get_root().render()


# ------------------------------------------------------------------------------ helpers
def test_has_geometry_skips_missing_and_empty() -> None:
    values = [shapely.Point(0, 0), None, shapely.Point(), shapely.LineString([(0, 0), (1, 1)])]
    assert has_geometry(pd.Series(values)).tolist() == [True, False, False, True]
    assert has_geometry(gpd.GeoSeries(values)).dtype == bool


def test_geo_frame_names_what_is_missing() -> None:
    places = _places()
    assert geo_frame(places, ["name"], "explore.x") is places
    with pytest.raises(ValidationError, match=r"explore\.x needs the columns \['severity'\]"):
        geo_frame(places, ["severity"], "explore.x")
    with pytest.raises(ValidationError, match="needs a DataFrame"):
        geo_frame([1, 2, 3], [], "explore.x")


def test_bounds_of_several_series_and_none() -> None:
    a = gpd.GeoSeries([shapely.Point(1, 2), None, shapely.Point()])
    b = [shapely.LineString([(0, 5), (3, 4)])]
    assert bounds_of(a, b) == (0.0, 2.0, 3.0, 5.0)
    assert all(isinstance(v, float) for v in bounds_of(a))
    with pytest.raises(ValidationError, match="df"):
        bounds_of(gpd.GeoSeries([None, shapely.Point()]))


def test_ramp_places_values_between_low_and_high() -> None:
    palette = ("p0", "p1", "p2", "p3")
    got = ramp([-5, 0, 24.9, 25, 50, 99.9, 100, 1e9, None, math.nan, pd.NA], 0, 100,
               palette=palette, missing="grey")
    assert got == ["p0", "p0", "p0", "p1", "p2", "p3", "p3", "p3", "grey", "grey", "grey"]
    assert ramp([1, 2, 3], 5, 5, palette=palette) == ["p0"] * 3  # no range: the first colour
    assert ramp([], 0, 1) == []
    assert len(set(ramp(range(0, 101, 10), 0, 100))) == 5  # the default palette, in full


# ------------------------------------------------------------------------------ curated tooltips
def test_co_located_points_are_spread_apart_and_the_rest_kept() -> None:
    from toolkit.explore._common import spread_points

    here = shapely.Point(1.5, 42.5)
    line = shapely.LineString([(0, 0), (1, 1)])
    out = spread_points([here] * 43 + [shapely.Point(1.6, 42.6), line], (1e-4, 1e-4), 16)
    spread = out[:43]
    assert len({(round(p.x, 7), round(p.y, 7)) for p in spread}) == 43
    gaps = [a.distance(b) for i, a in enumerate(spread) for b in spread[i + 1:]]
    assert min(gaps) > 1e-4 * 8  # at least half a spacing apart on screen
    assert max(here.distance(p) for p in spread) < 1e-4 * 16 * 6
    assert out[43].equals(shapely.Point(1.6, 42.6)) and out[44] is line
