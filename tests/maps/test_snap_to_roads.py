"""snap_to_roads over HTTP: map matching on real roads, interpolation, input shapes, windows and
stitching past the service's limits, faults, validation."""

from __future__ import annotations

import itertools

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely

import toolkit
import toolkit.maps.route as route_module
from tests.maps.conftest import TOWNS, drive
from toolkit._core.errors import ValidationError
from toolkit._core.geo import haversine_m, path_length_m
from toolkit._core.schemas import SNAP_TO_ROADS
from toolkit.maps.route import plan_windows

ALV, CAN, SJL, ORD, ENC, MAS = (TOWNS[t] for t in (
    "Andorra la Vella", "Canillo", "Sant Julià de Lòria", "Ordino", "Encamp", "La Massana"))


@pytest.fixture(scope="module")
def trace() -> np.ndarray:
    return drive([SJL, ALV, ENC], spacing_m=15, noise_m=4, seed=3)


def _on_road(net, lonlat) -> np.ndarray:
    pts = shapely.points(net.proj.forward(np.asarray(lonlat)))
    nearest = net.tree.nearest(pts)
    return shapely.distance(net.lines[nearest], pts)


def test_points_snap_onto_the_roads_they_follow(conn, sandbox, net, trace) -> None:
    with sandbox.recording() as log:
        df = toolkit.snap_to_roads(trace, include_speed_limit=True, connection=conn)
    assert len(log) == 1 and log[0].path == "/route/snapToRoads"
    assert list(df.columns) == SNAP_TO_ROADS.names and str(df.crs) == "EPSG:4326"
    assert df["inputIndex"].tolist() == list(range(len(trace)))  # every point, once, in order
    assert not df["isInterpolated"].any()
    snapped = shapely.get_coordinates(df.geometry)
    assert _on_road(net, snapped).max() < 0.5  # on a road
    moved = haversine_m(trace[:, 0], trace[:, 1], snapped[:, 0], snapped[:, 1])
    assert np.median(moved) < 8 and moved.max() < 40
    assert df["name"].notna().mean() > 0.75 and "CG-1" in set(df["name"].dropna())
    limits = df["speedLimitInKilometersPerHour"]
    assert limits.notna().all() and set(limits) <= {10, 20, 30, 40, 50, 60, 70, 80, 90}
    assert df.attrs["operation"] == "snap_to_roads" and df.attrs["windows"] == 1


def test_matching_follows_the_road_sequence(conn, net) -> None:
    # a trace along the main road through a junction area: nearest-edge snapping would jump to
    # side streets at the junctions; map matching keeps to the road driven
    trace = drive([ALV, ENC], spacing_m=25, noise_m=9, seed=11)
    df = toolkit.snap_to_roads(trace, connection=conn)
    names = df["name"].fillna("").tolist()
    changes = sum(a != b for a, b in itertools.pairwise(names))
    assert changes <= 12
    nearest_names = [net.road_name(int(net.tree.nearest(p))) or "" for p in
                     shapely.points(net.proj.forward(trace))]
    nearest_changes = sum(a != b for a, b in itertools.pairwise(nearest_names))
    assert changes < nearest_changes


def test_interpolation_fills_the_road_between_points(conn, net) -> None:
    sparse = drive([ALV, ORD], spacing_m=200, noise_m=3, seed=5)
    df = toolkit.snap_to_roads(sparse, interpolate=True, include_speed_limit=True,
                               connection=conn)
    inter = df[df["isInterpolated"]]
    assert len(inter) > len(sparse) and inter["inputIndex"].isna().all()
    assert df.loc[~df["isInterpolated"], "inputIndex"].tolist() == list(range(len(sparse)))
    assert _on_road(net, shapely.get_coordinates(inter.geometry)).max() < 0.5
    steps = path_length_m(shapely.get_coordinates(df.geometry))
    assert steps.max() < 250  # the interpolated path has no jumps across the valley
    assert inter["speedLimitInKilometersPerHour"].notna().all()


def test_every_input_shape(conn, trace) -> None:
    short = trace[:60]
    want = toolkit.snap_to_roads([tuple(p) for p in short], connection=conn)
    shapes = [
        gpd.GeoDataFrame(geometry=gpd.points_from_xy(short[:, 0], short[:, 1]), crs=4326),
        gpd.GeoSeries.from_xy(short[:, 0], short[:, 1], crs=4326),
        pd.DataFrame({"lon": short[:, 0], "lat": short[:, 1]}),
        short,
    ]
    for value in shapes:
        got = toolkit.snap_to_roads(value, connection=conn)
        assert got["inputIndex"].tolist() == want["inputIndex"].tolist()
        assert got.geometry.equals(want.geometry)


def test_points_that_cannot_be_snapped_are_left_out(conn, net, trace) -> None:
    pts = trace[:40].copy()
    # move one point up the mountainside, well away from any road
    offsets = [np.array([dx, dy]) for dx in (-0.006, 0.006, 0.0) for dy in (-0.006, 0.006, 0.0)]
    far = next(pts[20] + o for o in offsets if _on_road(net, [pts[20] + o])[0] > 300)
    pts[20] = far
    df = toolkit.snap_to_roads(pts, connection=conn)
    assert 20 not in set(df["inputIndex"]) and len(df) == 39


def test_a_long_trace_is_windowed_and_stitched_exactly(conn, sandbox) -> None:
    stops = [SJL, CAN, ALV, ORD, ENC, MAS, SJL, ENC, CAN, ALV, ORD, SJL]
    trace = drive(stops, spacing_m=10, noise_m=4, seed=7)[:12_000]
    assert len(trace) == 12_000 and path_length_m(trace).sum() > 100_000
    with sandbox.recording() as log:
        df = toolkit.snap_to_roads(trace, connection=conn)
    assert len(log) == df.attrs["windows"] >= 5
    # the sandbox with its limits lifted matches the whole trace in one call: the reference
    sandbox.state["maps.snap_limits"] = False
    try:
        body = {"type": "FeatureCollection", "travelMode": "driving",
                "features": [{"type": "Feature", "properties": {},
                              "geometry": {"type": "Point", "coordinates": [float(x), float(y)]}}
                             for x, y in trace]}
        whole = conn.pipeline("maps").send("POST", "/route/snapToRoads",
                                           params={"api-version": "2025-01-01"},
                                           json=body).json()["features"]
    finally:
        sandbox.state.pop("maps.snap_limits")
    ref = {f["properties"]["inputIndex"]: f["properties"].get("name", "") for f in whole}
    got = df["inputIndex"].tolist()
    assert len(got) == len(set(got))  # no point twice at the seams
    assert got == sorted(got) and set(got) == set(ref)  # every snappable point, in order
    same = np.mean([ref[i] == (n if isinstance(n, str) else "")
                    for i, n in zip(df["inputIndex"], df["name"], strict=True)])
    assert same >= 0.99


def test_a_window_past_100_km_of_road_is_halved(conn, sandbox, monkeypatch) -> None:
    trace = drive([SJL, CAN, SJL, CAN, SJL, CAN, SJL], spacing_m=60, noise_m=3, seed=2)
    assert path_length_m(trace).sum() > 100_000 and len(trace) < 2500
    monkeypatch.setattr(route_module, "SNAP_WINDOW_M", 10_000_000.0)
    with sandbox.recording() as log:
        df = toolkit.snap_to_roads(trace, connection=conn)
    assert log[0].status == 400 and all(r.status == 200 for r in log[1:])
    got = df["inputIndex"].tolist()
    assert got == sorted(set(got)) and len(got) > 0.98 * len(trace)


def test_window_plan_tiles_the_trace() -> None:
    gaps = np.full(11_999, 10.0)
    windows = plan_windows(gaps, max_points=2500, max_length_m=60_000, overlap=40)
    assert windows[0][2] == 0 and windows[-1][3] == 12_000
    for (s, e, own_s, own_e), nxt in zip(windows, [*windows[1:], None], strict=True):
        assert e - s <= 2500 and s <= own_s < own_e <= e
        if nxt is not None:
            assert own_e == nxt[2] and nxt[0] < e  # owned ranges tile; windows overlap
    assert plan_windows(np.full(99, 10.0)) == [(0, 100, 0, 100)]


def test_faults_lose_and_duplicate_nothing(conn, sandbox, trace) -> None:
    long = np.vstack([trace] * 1)
    expected = toolkit.snap_to_roads(long, connection=conn)
    monkey = sandbox.inject("503", path="snapToRoads", rate=1.0, count=1, retry_after=1)
    got = toolkit.snap_to_roads(long, connection=conn)
    assert monkey.fired == 1 and conn.stats.retries >= 1
    assert got["inputIndex"].tolist() == expected["inputIndex"].tolist()
    assert got.geometry.equals(expected.geometry)


def test_sandbox_enforces_the_service_limits(conn) -> None:
    pipe = conn.pipeline("maps")

    def body(points):
        return {"type": "FeatureCollection",
                "features": [{"type": "Feature", "properties": {},
                              "geometry": {"type": "Point", "coordinates": list(p)}}
                             for p in points]}

    cases = [([ALV] * 5001, "2 to 5000"), ([ALV], "2 to 5000"), ([ALV, (1.60, 42.60)], "6 km")]
    for points, text in cases:
        with pytest.raises(toolkit.ApiError) as info:
            pipe.send("POST", "/route/snapToRoads", params={"api-version": "2025-01-01"},
                      json=body(points))
        assert info.value.status == 400 and text in info.value.message
        assert info.value.code == "BadRequest"


@pytest.mark.parametrize("points, kwargs, parameter, rule", [
    ([ALV], {}, "points", "at least 2 points"),
    ([ALV, (1.5, 91.0)], {}, "points[1]", "latitude"),
    ([ALV, (1.60, 42.60)], {}, "points", "within 6 km"),
    ([ALV, CAN], {"include_speed_limit": "yes"}, "include_speed_limit", "True or False"),
    ([ALV, CAN], {"interpolate": 1}, "interpolate", "True or False"),
    ([ALV, CAN], {"travel_mode": "walking"}, "travel_mode", "driving, truck"),
    (pd.DataFrame({"x1": [1.0, 2.0]}), {}, "points", "longitude and latitude columns"),
    (gpd.GeoSeries.from_xy([169_000, 169_100], [5_240_000, 5_240_100], crs=3857), {},
     "points", "to_crs(4326)"),
    ("1.5,42.5;1.6,42.6", {}, "points", "(lon, lat) points"),
])
def test_bad_inputs_are_refused_before_any_request(conn, sandbox, points, kwargs, parameter,
                                                   rule) -> None:
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        toolkit.snap_to_roads(points, **kwargs, connection=conn)
    assert info.value.parameter == parameter and rule in info.value.rule
    assert log == []


def test_interpolated_points_are_stitched_without_gaps_or_repeats(conn, monkeypatch,
                                                                    trace) -> None:
    sparse = trace[::4]  # about 60 m apart
    whole = toolkit.snap_to_roads(sparse, interpolate=True, connection=conn)
    monkeypatch.setattr(route_module, "SNAP_WINDOW_POINTS", 120)
    monkeypatch.setattr(route_module, "SNAP_OVERLAP", 20)
    windowed = toolkit.snap_to_roads(sparse, interpolate=True, connection=conn)
    assert windowed.attrs["windows"] > 1
    snapped = windowed.loc[~windowed["isInterpolated"], "inputIndex"].tolist()
    assert snapped == sorted(set(snapped)) == whole.loc[~whole["isInterpolated"],
                                                        "inputIndex"].tolist()
    steps = path_length_m(shapely.get_coordinates(windowed.geometry))
    assert steps.max() < 150 and (steps > 0.01).mean() > 0.99  # no jumps, no repeated points
    assert abs(len(windowed) - len(whole)) <= 0.02 * len(whole)
