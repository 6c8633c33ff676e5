"""route_directions over HTTP: real routes, options, batches past 100, failures as rows, faults,
validation."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely

import toolkit
from tests.maps.conftest import TOWNS
from toolkit._core.errors import ValidationError
from toolkit._core.geo import haversine_m
from toolkit._core.schemas import ROUTE_DIRECTIONS

ALV, CAN, SJL, ORD, ENC = (TOWNS[t] for t in ("Andorra la Vella", "Canillo",
                                                 "Sant Julià de Lòria", "Ordino", "Encamp"))
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
    sandbox.inject("429", path="directions", rate=0.6, retry_after=1, count=4)
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


def test_sandbox_checks_items_and_batches(conn) -> None:
    pipe = conn.pipeline("maps")
    good = {"type": "FeatureCollection",
            "features": [{"type": "Feature", "geometry": {"type": "Point", "coordinates": p},
                          "properties": {"pointIndex": i, "pointType": "waypoint"}}
                         for i, p in enumerate((list(ALV), list(CAN)))]}
    bad = {**good, "maxRouteCount": 9, "optionalId": "bad"}
    body = pipe.send("POST", "/route/directions:batch", params={"api-version": "2025-01-01"},
                     json={"batchItems": [bad, good]}).json()
    assert body["summary"] == {"successfulRequests": 1, "totalRequests": 2}
    assert body["batchItems"][0]["optionalId"] == "bad"
    assert body["batchItems"][0]["error"]["code"] == "BadRequest"
    assert "maxRouteCount" in body["batchItems"][0]["error"]["message"]
    with pytest.raises(toolkit.ApiError) as info:
        pipe.send("POST", "/route/directions:batch", params={"api-version": "2025-01-01"},
                  json={"batchItems": [good] * 101}, idempotent=False)
    assert info.value.status == 400 and "1 to 100" in info.value.message


ONE_POINT = {"type": "FeatureCollection",
             "features": [{"type": "Feature",
                           "geometry": {"type": "Point", "coordinates": [1.5, 42.5]}}]}


@pytest.mark.parametrize("queries, kwargs, parameter, rule", [
    ([q(ALV, CAN)], {"max_route_count": 0}, "max_route_count", "between 1 and 6"),
    ([q(ALV, CAN)], {"max_route_count": 7}, "max_route_count", "between 1 and 6"),
    ([q(ALV, CAN)], {"optimize_route": "fastest"}, "optimize_route", "must be one of"),
    ([q(ALV, CAN)], {"travel_mode": "bicycle"}, "travel_mode", "driving, truck"),
    ([q(ALV, CAN)], {"avoid": ["tollRoads", "highways"]}, "avoid", "must be one of"),
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
def test_bad_inputs_are_refused_before_any_request(conn, sandbox, queries, kwargs, parameter,
                                                   rule) -> None:
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
