"""route_directions and snap_to_roads over HTTP: real routes on real roads, options, batches past
100, map matching, interpolation, windows and stitching past the service's limits, failures as
rows, faults, validation."""

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
from toolkit._core.messages import Request
from toolkit.maps._schemas import ROUTE_DIRECTIONS, SNAP_TO_ROADS
from toolkit.maps.route import plan_windows

ALV, CAN, SJL, ORD, ENC, MAS = (TOWNS[t] for t in (
    "Andorra la Vella", "Canillo", "Sant Julià de Lòria", "Ordino", "Encamp", "La Massana"))
OFF_NETWORK = (1.30, 42.60)  # high mountains west of Andorra: no road within kilometres


def q(a, b, **kw):
    return {"origin": a, "destination": b, **kw}


def test_routes_follow_real_roads(conn, sandbox, net) -> None:
    with sandbox.recording() as log:
        df = toolkit.route_directions([q(ALV, CAN, optionalId="to-canillo"), q(SJL, ORD)],
                                      connection=conn)
    assert len(log) == 1 and log[0].path == "/route/directions:batch"
    assert list(df.columns) == ROUTE_DIRECTIONS.names and str(df.crs) == "EPSG:4326"
    assert df["query_index"].tolist() == [0, 1] and df["route_index"].tolist() == [0, 0]
    assert df["optionalId"].tolist()[0] == "to-canillo" and pd.isna(df["optionalId"].iloc[1])
    for (a, b), (_, row) in zip([(ALV, CAN), (SJL, ORD)], df.iterrows(), strict=True):
        straight = float(haversine_m(*a, *b))
        assert straight < row["distanceInMeters"] < 2.5 * straight
        assert 0 < row["durationInSeconds"] <= row["durationTrafficInSeconds"] * 1.0001
        assert row["arrivalAt"] > row["departureAt"]
        line = row.geometry
        assert line.geom_type == "MultiLineString" and not line.is_empty
        start, end = shapely.get_coordinates(line)[[0, -1]]
        assert haversine_m(*start, *a) < 300 and haversine_m(*end, *b) < 300
        # every vertex lies on a road of the network
        verts = shapely.points(net.proj.forward(shapely.get_coordinates(line)))
        assert max(float(shapely.distance(net.lines[net.tree.nearest(v)], v))
                   for v in verts[::7]) < 0.5
    assert df["leg_count"].tolist() == [1, 1]
    assert df["legs"].iloc[0][0]["distanceInMeters"] == pytest.approx(
        df["distanceInMeters"].iloc[0], abs=0.2)
    assert df.attrs["operation"] == "route_directions" and len(df.attrs["request_ids"]) == 1


def test_waypoints_make_legs(conn) -> None:
    df = toolkit.route_directions([{"origin": SJL, "waypoints": [ALV], "destination": ORD}],
                                  connection=conn)
    assert df["leg_count"].iloc[0] == 2 and len(df.geometry.iloc[0].geoms) == 2
    total = sum(leg["distanceInMeters"] for leg in df["legs"].iloc[0])
    assert total == pytest.approx(df["distanceInMeters"].iloc[0], abs=1)


def test_alternatives_shortest_and_fastest(conn) -> None:
    alts = toolkit.route_directions([q(ALV, CAN)], max_route_count=3, connection=conn)
    assert alts["route_index"].tolist()[0] == 0 and len(alts) >= 2
    assert alts["route_index"].tolist() == list(range(len(alts)))
    assert (alts["durationInSeconds"].iloc[0] <= alts["durationInSeconds"]).all()
    assert alts.geometry.iloc[0] != alts.geometry.iloc[1]
    fastest = toolkit.route_directions([q(SJL, CAN)], connection=conn).iloc[0]
    shortest = toolkit.route_directions([q(SJL, CAN)], optimize_route="shortest",
                                        connection=conn).iloc[0]
    assert shortest["distanceInMeters"] <= fastest["distanceInMeters"]
    assert fastest["durationInSeconds"] <= shortest["durationInSeconds"]


def test_traffic_aware_routes_are_no_slower_in_traffic(conn) -> None:
    plain = toolkit.route_directions([q(SJL, ENC), q(ALV, CAN)], connection=conn)
    aware = toolkit.route_directions([q(SJL, ENC), q(ALV, CAN)],
                                     optimize_route="fastestWithTraffic", connection=conn)
    assert (aware["durationTrafficInSeconds"].to_numpy() <=
            plain["durationTrafficInSeconds"].to_numpy() + 1).all()
    assert (plain["durationTrafficInSeconds"] >= plain["durationInSeconds"]).all()
    assert set(aware["trafficCongestion"].dropna()) <= {"Mild", "Medium", "Heavy"}


def test_avoid_toll_roads_and_trucks(conn, net) -> None:
    # the Envalira tunnel is the toll road of the network: portal to portal through it, or over
    # the pass when tolls are avoided
    (tunnel,) = np.flatnonzero(net.toll & net.tunnel)
    middle = shapely.LineString(net.edge_coords[tunnel]).interpolate(0.5, normalized=True)
    east = tuple(net.edge_coords[tunnel][-1])
    west = tuple(net.edge_coords[tunnel - 1][-1])
    through = toolkit.route_directions([q(east, west)], connection=conn).iloc[0]
    avoiding = toolkit.route_directions([q(east, west)], avoid="tollRoads",
                                        connection=conn).iloc[0]
    assert through.geometry.distance(middle) < 1e-6
    assert avoiding.geometry.distance(middle) > 1e-3
    assert avoiding["distanceInMeters"] > 2 * through["distanceInMeters"]
    car = toolkit.route_directions([q(ALV, CAN)], connection=conn).iloc[0]
    truck = toolkit.route_directions([q(ALV, CAN)], travel_mode="truck", connection=conn).iloc[0]
    assert truck["durationInSeconds"] > car["durationInSeconds"]
    assert pd.isna(truck["trafficCongestion"])


def test_summary_only_has_no_geometry(conn) -> None:
    df = toolkit.route_directions([q(ALV, CAN)], route_output_options="routeSummary",
                                  connection=conn)
    assert df.geometry.iloc[0].is_empty and df["distanceInMeters"].iloc[0] > 5000


def test_a_query_off_the_network_fails_alone(conn) -> None:
    df = toolkit.route_directions([q(ALV, CAN), q(OFF_NETWORK, CAN), q(SJL, ORD)],
                                  connection=conn)
    assert df["query_index"].tolist() == [0, 1, 2]
    bad = df.iloc[1]
    assert bad["error.code"] == "WaypointOffRoadNetwork" and "Waypoint 0" in bad["error.message"]
    assert bad.geometry.is_empty and pd.isna(bad["route_index"])
    assert df.drop(index=1)["error.code"].isna().all()


def test_dataframe_and_geodataframe_queries(conn) -> None:
    plain = pd.DataFrame({"origin_lon": [ALV[0], SJL[0]], "origin_lat": [ALV[1], SJL[1]],
                          "destination_lon": [CAN[0], ORD[0]],
                          "destination_lat": [CAN[1], ORD[1]], "optionalId": ["a", "b"]})
    geo = gpd.GeoDataFrame({"origin": gpd.GeoSeries.from_xy([ALV[0], SJL[0]], [ALV[1], SJL[1]],
                                                            crs=4326),
                            "destination": gpd.GeoSeries.from_xy([CAN[0], ORD[0]],
                                                                 [CAN[1], ORD[1]], crs=4326),
                            "maxRouteCount": [1, 1]}, geometry="origin")
    a = toolkit.route_directions(plain, connection=conn)
    b = toolkit.route_directions(geo, connection=conn)
    assert a["optionalId"].tolist() == ["a", "b"]
    assert a["distanceInMeters"].tolist() == b["distanceInMeters"].tolist()


def test_spec_shaped_items_are_sent_as_given(conn) -> None:
    item = {"type": "FeatureCollection", "optimizeRoute": "shortest",
            "features": [{"type": "Feature", "geometry": {"type": "Point", "coordinates": list(p)},
                          "properties": {"pointIndex": i, "pointType": "waypoint"}}
                         for i, p in enumerate((SJL, CAN))]}
    spec = toolkit.route_directions([item], connection=conn).iloc[0]
    short = toolkit.route_directions([q(SJL, CAN)], optimize_route="shortest",
                                     connection=conn).iloc[0]
    assert spec["distanceInMeters"] == short["distanceInMeters"]


def _many(n: int) -> list[dict]:
    towns = list(TOWNS.values())
    pairs = [(a, b) for a in towns for b in towns if a != b]
    return [q(*pairs[i % len(pairs)], optionalId=f"q{i:03d}") for i in range(n)]


def test_more_than_100_queries_go_in_chunks_in_order(conn, sandbox) -> None:
    queries = _many(250)
    with sandbox.recording() as log:
        df = toolkit.route_directions(queries, connection=conn)
    assert len(log) == 3 and all(r.path == "/route/directions:batch" for r in log)
    assert df["query_index"].tolist() == list(range(len(queries)))
    assert df["optionalId"].tolist() == [x["optionalId"] for x in queries]
    assert df["error.code"].isna().all() and len(df.attrs["request_ids"]) == 3


def test_throttling_loses_and_duplicates_nothing(conn, sandbox, waits) -> None:
    queries = _many(230)
    expected = toolkit.route_directions(queries, route_output_options="routeSummary",
                                        connection=conn)
    sandbox.inject("429", path="directions", retry_after=1, count=2)  # the first two batches
    got = toolkit.route_directions(queries, route_output_options="routeSummary",
                                   connection=conn)
    assert conn.stats.throttled > 0 and 1 in waits
    assert got["optionalId"].tolist() == expected["optionalId"].tolist()
    assert got["distanceInMeters"].tolist() == expected["distanceInMeters"].tolist()


def test_a_batch_past_the_time_limit_is_split_then_reported(conn, sandbox) -> None:
    sandbox.state["maps.batch_time_limit"] = 0.0
    try:
        with sandbox.recording() as log:
            df = toolkit.route_directions(_many(4), connection=conn)
    finally:
        sandbox.state.pop("maps.batch_time_limit")
    assert [r.status for r in log] == [408] * 7  # 4 -> 2 + 2 -> 1 + 1 + 1 + 1
    assert df["query_index"].tolist() == [0, 1, 2, 3]
    assert df["error.code"].eq("Timeout").all() and df.geometry.is_empty.all()


ONE_POINT = {"type": "FeatureCollection",
             "features": [{"type": "Feature",
                           "geometry": {"type": "Point", "coordinates": [1.5, 42.5]}}]}


@pytest.mark.parametrize("queries, kwargs, parameter, rule", [
    ([q(ALV, CAN)], {"max_route_count": 0}, "max_route_count", "between 1 and 6"),
    ([q(ALV, CAN)], {"max_route_count": 7}, "max_route_count", "between 1 and 6"),
    ([q(ALV, CAN)], {"optimize_route": "fastest"}, "optimize_route", "must be one of"),
    ([q(ALV, CAN)], {"travel_mode": "bicycle"}, "travel_mode", "driving, truck"),
    ([q(ALV, CAN)], {"avoid": ["tollRoads", "highways"]}, "avoid[1]", "must be one of"),
    ([q(ALV, CAN)], {"route_output_options": []}, "route_output_options", "at least one"),
    ([q(ALV, CAN)], {"depart_at": "tomorrow"}, "depart_at", "ISO 8601"),
    ([q(ALV, (1.5, 95.0))], {}, "queries[0].destination", "latitude"),
    ([q(ALV, CAN), {"origin": ALV}], {}, "queries[1]", "'origin' and 'destination'"),
    ([ONE_POINT], {}, "queries[0].features", "2 to 150 waypoints"),
    ([q(ALV, CAN, maxRouteCount=9)], {}, "queries[0].maxRouteCount", "between 1 and 6"),
    ([q(ALV, CAN, travelMode="walking")], {}, "queries[0].travelMode", "must be one of"),
    ([q(ALV, CAN, departAt="2026-11-20T10:00:00Z", arriveAt="2026-11-20T11:00:00Z")], {},
     "queries[0].arriveAt", "cannot be used together"),
    ([], {}, "queries", "at least one"),
    ("ALV to CAN", {}, "queries", "list of query dicts"),
    ([("ALV", "CAN")], {}, "queries[0]", "must be a dict"),
    (pd.DataFrame({"from": [1]}), {}, "queries", "origin and destination columns"),
])
def test_bad_route_queries_are_refused_before_any_request(conn, sandbox, queries, kwargs,
                                                          parameter, rule) -> None:
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        toolkit.route_directions(queries, **kwargs, connection=conn)
    assert info.value.parameter == parameter and rule in info.value.rule
    assert log == []


def test_a_failed_batch_call_keeps_the_other_batches(sandbox) -> None:
    one_at_a_time = toolkit.connect(sandbox=sandbox, progress=False, max_concurrency=1,
                                    max_retries=2)
    one_at_a_time.sleep = lambda seconds: None
    try:
        sandbox.inject("500", path="directions", count=3)  # the first batch, and its 2 retries
        df = toolkit.route_directions(_many(150), connection=one_at_a_time)
    finally:
        one_at_a_time.close()
    assert df["query_index"].tolist() == list(range(150))
    assert df["error.code"].iloc[:100].eq("InternalServerError").all()
    assert df.geometry.iloc[:100].is_empty.all()
    assert df["error.code"].iloc[100:].isna().all() and df["route_index"].iloc[100:].eq(0).all()


def test_when_every_batch_fails_the_error_is_raised(sandbox) -> None:
    wrong = toolkit.connect(sandbox.url, maps_key="not-the-key", progress=False)
    try:
        with pytest.raises(toolkit.AuthenticationError):
            toolkit.route_directions(_many(3), connection=wrong)
    finally:
        wrong.close()


def test_trucks_are_kept_off_restricted_roads(conn, net) -> None:
    # Carretera dels Cortals carries maxweight=2.1 t: cars may drive it, trucks may not
    (cortals,) = [e for e in range(net.n_edges) if net.way_of(e).get("maxweight")]
    middle = net.position(cortals, net.edge_len[cortals] / 2)
    df = toolkit.route_directions([q(ALV, middle), q(ALV, middle, travelMode="truck")],
                                  connection=conn)
    car, truck = df.iloc[0], df.iloc[1]
    car_end = shapely.get_coordinates(car.geometry)[-1]
    assert haversine_m(*car_end, *middle) < 1
    if pd.isna(truck["error.code"]):  # routed to the nearest road a truck may use instead
        truck_end = shapely.get_coordinates(truck.geometry)[-1]
        assert haversine_m(*truck_end, *middle) > 20
        line = shapely.LineString(net.edge_coords[cortals])
        assert truck.geometry.intersection(line.buffer(1e-5)).length < 1e-4
    else:
        assert truck["error.code"] in ("WaypointOffRoadNetwork", "NoRouteFound")


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
        whole = conn.pipeline("maps").send(Request("POST", "/route/snapToRoads",
                                                   params={"api-version": "2025-01-01"},
                                                   json=body)).json()["features"]
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


@pytest.mark.parametrize("points, kwargs, parameter, rule", [
    ([ALV], {}, "points", "at least 2 points"),
    ([ALV, (1.5, 91.0)], {}, "points[1]", "latitude"),
    ([ALV, (1.60, 42.60)], {}, "points", "within 6 km"),
    ([ALV, CAN], {"include_speed_limit": "yes"}, "include_speed_limit", "True or False"),
    ([ALV, CAN], {"interpolate": 1}, "interpolate", "True or False"),
    ([ALV, CAN], {"travel_mode": "walking"}, "travel_mode", "driving, truck"),
    (pd.DataFrame({"x1": [1.0, 2.0]}), {}, "points", "longitude and latitude columns"),
    (gpd.GeoSeries.from_xy([169_000, 169_100], [5_240_000, 5_340_100], crs=3857), {},
     "points", "within 6 km"),
    ("1.5,42.5;1.6,42.6", {}, "points", "(longitude, latitude) points"),
    (["Andorra la Vella", "Canillo"], {}, "points", "does not look up place names"),
])
def test_bad_snap_points_are_refused_before_any_request(conn, sandbox, points, kwargs,
                                                        parameter, rule) -> None:
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
