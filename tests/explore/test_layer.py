"""Compact layers: encoded geometry, thinned per zoom level, one record table per layer, and the
weight of a page of a thousand routes."""

from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pytest
import shapely

folium = pytest.importorskip("folium")
gpd = pytest.importorskip("geopandas")
from toolkit.explore._layer import (  # noqa: E402
    THIN_ZOOMS,
    column,
    compact_layer,
    decode_polyline,
    encode_polyline,
    line_levels,
    min_zooms,
    opening_zoom,
)

ANDORRA = (1.40, 42.42, 1.80, 42.66)


def test_polylines_round_trip_to_a_metre() -> None:
    rng = np.random.default_rng(1)
    xy = np.column_stack([rng.uniform(-180, 180, 500), rng.uniform(-85, 85, 500)])
    text = encode_polyline(xy)
    assert set(text) <= {chr(c) for c in range(63, 127)}
    assert np.abs(decode_polyline(text) - xy).max() <= 0.5e-5 + 1e-12
    assert encode_polyline(np.zeros((0, 2))) == "" and len(decode_polyline("")) == 0
    # a point next to the one before costs a couple of characters a coordinate
    walk = np.cumsum(np.full((1000, 2), 0.0001), axis=0) + np.array([1.5, 42.5])
    assert len(encode_polyline(walk)) < 1000 * 2 * 3


def test_a_column_pools_values_that_repeat() -> None:
    assert column(["a", "b", "c"]) == ["a", "b", "c"]
    assert column(["x", "y", "x", "x"]) == {"p": ["x", "y"], "i": [0, 1, 0, 0]}
    assert column([]) == []


def test_points_are_thinned_per_zoom_level_and_all_drawn_close_up() -> None:
    """Twenty thousand points along a road: at the opening zoom only one a few pixels wide
    cell is drawn; a point drawn at one zoom is drawn at every closer one; past the thinned
    levels every point is drawn."""
    t = np.linspace(0, 1, 20_000)
    xy = np.column_stack([1.45 + 0.3 * t, 42.45 + 0.15 * np.sin(t * 9)])
    zoom = opening_zoom((1.45, 42.30, 1.75, 42.60))
    minz = min_zooms(xy, zoom, 3.0)
    assert (minz <= zoom).sum() < len(xy) / 4
    drawn = [set(np.flatnonzero(minz <= z)) for z in range(zoom - 2, zoom + THIN_ZOOMS + 2)]
    assert all(a <= b for a, b in itertools.pairwise(drawn))
    assert drawn[-1] == set(range(len(xy)))
    spec = compact_layer(shapely.points(xy), bounds=(1.45, 42.30, 1.75, 42.60),
                         colors=["#000000"] * len(xy), radii=3)
    assert spec["kind"] == "point" and spec["minzoom"] == minz.tolist()
    few = compact_layer(shapely.points(xy[:10]), bounds=ANDORRA, colors=["#000000"] * 10)
    assert few["minzoom"] is None  # small layers are drawn whole


def test_lines_carry_fewer_vertices_at_coarser_zoom_levels() -> None:
    rng = np.random.default_rng(2)
    walk = np.cumsum(rng.normal(0, 0.0002, (5_000, 2)), axis=0) + np.array([1.5, 42.5])
    line = shapely.LineString(walk)
    zooms, levels = line_levels([line], 11, 42.5)
    counts = [shapely.get_num_coordinates(level[0]) for level in levels]
    assert zooms == sorted(zooms) and len(zooms) >= 2
    assert all(a < b for a, b in itertools.pairwise(counts))
    assert counts[-1] < len(walk)  # even the finest level is what a screen can show
    zooms, levels = line_levels([line], opening_zoom(ANDORRA), 42.54)
    spec = compact_layer([line], bounds=ANDORRA, colors=["#123456"])
    assert spec["kind"] == "line" and spec["levels"] == zooms
    counts = [shapely.get_num_coordinates(level[0]) for level in levels]
    finest = spec["geom"][0][-1]
    assert len(decode_polyline(finest)) == counts[-1]


def test_one_record_table_per_layer_not_html_per_feature() -> None:
    lines = [shapely.LineString([(1.5, 42.5 + i / 1000), (1.6, 42.5 + i / 1000)])
             for i in range(50)]
    tips = {"route": [f"route {i}" for i in range(50)], "kind": ["main"] * 50}
    popup = {"distanceInMeters": [str(1000 + i) for i in range(50)], "note": [""] * 50}
    spec = compact_layer(lines, bounds=ANDORRA, colors=["#000000"] * 50, tips=tips,
                         popup=popup)
    assert spec["fields"] == ["route", "kind"]
    assert spec["tips"][1] == {"p": ["main"], "i": [0] * 50}  # a repeated value once
    assert spec["popup"]["names"] == ["distanceInMeters", "note"]
    text = json.dumps(spec)
    assert "<table" not in text and "<tr" not in text  # built in the page, on hover or click
    assert text.count("distanceInMeters") == 1


def _roads(count: int = 12) -> list[np.ndarray]:
    """Winding roads through the valleys, a vertex every few metres (as routes follow them)."""
    t = np.linspace(0, 1, 3_000)[:, None]
    return [np.column_stack([1.45 + 0.25 * t[:, 0], 42.45 + 0.01 * k + 0.02 * np.sin(
        t[:, 0] * (5 + k))]) for k in range(count)]


def test_shared_stretches_are_drawn_once() -> None:
    from toolkit.explore._layer import shared_stretches

    road = _roads(1)[0]
    lines = [shapely.LineString(road[i:i + 500]) for i in range(0, 2_000, 50)]
    network = shared_stretches(lines)
    assert shapely.get_num_coordinates(network) < 2_450 * 1.1
    assert shapely.get_num_coordinates(network) >= 2_450 * 0.9
    assert network.length == pytest.approx(shapely.LineString(road[:2_450]).length, rel=5e-3)


def test_a_page_of_a_thousand_routes_stays_light() -> None:
    """A thousand routes along a dozen roads, with their tooltips and popups: a bound far
    under what one GeoJSON feature per route with its own tooltip and popup HTML weighed
    (10.7 MB for the benchmark's thousand routes), Leaflet and the roads included."""
    import toolkit.explore as explore

    rng = np.random.default_rng(3)
    roads = _roads()
    rows, geoms = [], []
    for i in range(1_000):
        road = roads[i % len(roads)]
        start = int(rng.integers(0, 1_500))
        geoms.append(shapely.LineString(road[start:start + int(rng.integers(300, 1_500))]))
        rows.append({"route_index": 0, "query_index": i, "distanceInMeters": 10_000 + i,
                     "durationInSeconds": 900, "durationTrafficInSeconds": 900 + i % 300})
    routes = gpd.GeoDataFrame(rows, geometry=geoms, crs=4326)
    routes.attrs["operation"] = "route_directions"
    m = explore.routes(routes, tiles="roads")
    page = m.get_root().render()
    assert len(page.encode()) < 1_500_000
    assert not re.search(r"<script[^>]+src=[\"']?https?:", page)
    main = next(c for g in m._children.values() for c in g._children.values()
                if hasattr(c, "spec") and g.layer_name == "main routes").spec
    assert len(main["look"]) == len(main["palette"])  # drawn once per colour
