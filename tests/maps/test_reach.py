"""route_range over HTTP: reachable areas on real roads for time and distance budgets, one origin
or several, each origin's failure a row of its own, and every argument checked before any
request."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest
import shapely

import toolkit
from tests.maps.conftest import TOWNS
from toolkit._core.errors import AuthenticationError, PlaceNotFoundError, ValidationError
from toolkit.maps.reach import PATH, ROUTE_RANGE, check_budgets, range_options
from toolkit.sandbox.maps.roads.routing import route

ALV, CAN, SOL, SJL = (TOWNS[t] for t in ("Andorra la Vella", "Canillo", "Soldeu",
                                          "Sant Julià de Lòria"))
OFF_NETWORK = (1.30, 42.60)  # high mountains west of Andorra: no road within kilometres


def test_one_origin_and_three_budgets_give_nested_areas(conn, sandbox, net) -> None:
    with sandbox.recording() as log:
        df = toolkit.route_range(ALV, time_budget=[300, 600, 900], connection=conn)
    assert [r.path for r in log] == [PATH] * 3
    assert list(df.columns) == ROUTE_RANGE.names and str(df.crs) == "EPSG:4326"
    assert df["origin_index"].tolist() == [0, 0, 0]
    assert df["timeBudgetInSec"].tolist() == [300.0, 600.0, 900.0]
    assert df["distanceBudgetInMeters"].isna().all() and df["error.code"].isna().all()
    areas = [g.area for g in df.geometry]
    assert areas[0] < areas[1] < areas[2]
    for row in df.itertuples():
        polygon = row.geometry
        assert polygon.geom_type == "Polygon" and polygon.is_valid
        assert polygon.exterior.is_ccw  # counterclockwise, as the service draws them
        # the center is the origin snapped to the nearest road, inside its area
        assert row.center.distance(shapely.Point(ALV)) < 0.002
        assert polygon.buffer(1e-4).contains(row.center)
        assert row.bbox == pytest.approx(list(polygon.bounds))
    # Soldeu is about 19 minutes away by road: outside 10 minutes, inside 25
    usable = net.usable("driving")
    trip = route(net, [ALV, SOL], snapped=[net.nearest(p, usable)[:2] for p in (ALV, SOL)])
    assert 600 < trip.duration_s < 1500
    wide = toolkit.route_range(ALV, time_budget=dt.timedelta(minutes=25), connection=conn)
    assert not df.geometry.iloc[1].buffer(1e-4).contains(shapely.Point(SOL))
    assert wide.geometry.iloc[0].buffer(2e-3).contains(shapely.Point(SOL))
    assert df.attrs["operation"] == "route_range" and len(df.attrs["request_ids"]) == 3


def test_a_distance_budget_reaches_about_that_far_along_the_roads(conn) -> None:
    df = toolkit.route_range(ALV, distance_budget=4000, optimize_route="shortest",
                             connection=conn)
    assert df["distanceBudgetInMeters"].tolist() == [4000.0]
    assert df["timeBudgetInSec"].isna().all()
    polygon = df.geometry.iloc[0]
    lon, lat = ALV
    far = [shapely.Point(x, y) for x, y in polygon.exterior.coords]
    from toolkit._core.geo import haversine_m

    # the roads reached are at most 4 km away along them: never further in a straight line
    assert max(float(haversine_m(lon, lat, p.x, p.y)) for p in far) < 4000 + 300


def test_several_origins_in_input_order_and_a_failed_one_as_a_row(conn, sandbox) -> None:
    with sandbox.recording() as log:
        df = toolkit.route_range([CAN, OFF_NETWORK, "Sant Julià de Lòria"],
                                 time_budget=[pd.Timedelta(minutes=5), 600], connection=conn)
    assert sum(r.path == PATH for r in log) == 6
    assert df["origin_index"].tolist() == [0, 0, 1, 1, 2, 2]
    assert df["timeBudgetInSec"].tolist() == [300.0, 600.0] * 3
    failed = df[df["origin_index"] == 1]
    assert failed["error.code"].tolist() == ["BadRequest"] * 2
    assert failed["error.message"].str.contains("No routable road").all()
    assert failed.geometry.is_empty.all() and failed["center"].isna().all()
    assert df.loc[df["origin_index"] == 2, "place"].tolist() == ["Sant Julià de Lòria"] * 2
    assert all(g.area > 0 for g in df.loc[df["origin_index"] != 1].geometry)


def test_every_origin_failing_raises_and_a_name_not_found_is_a_row(conn) -> None:
    with pytest.raises(toolkit.ApiError, match="No routable road"):
        toolkit.route_range(OFF_NETWORK, time_budget=600, connection=conn)
    with pytest.raises(PlaceNotFoundError):
        toolkit.route_range("Zzyzx Nowhere Town", time_budget=600, connection=conn)
    df = toolkit.route_range(["Zzyzx Nowhere Town", ALV], time_budget=300, connection=conn)
    assert df["error.code"].tolist()[0] == "PlaceNotFoundError"


def test_a_refused_credential_ends_the_call(sandbox) -> None:
    conn = toolkit.connect(maps_url=sandbox.url, maps_key="not-the-key-0123456789",
                           progress=False)
    with pytest.raises(AuthenticationError):
        toolkit.route_range([ALV, CAN], time_budget=300, connection=conn)
    conn.close()


def test_options_reach_the_service_in_its_words() -> None:
    assert range_options("driving", "fastestWithoutTraffic", None, None) == {}
    assert range_options("truck", "shortest", ["tunnels", "tunnels"], "2026-11-20 08:00") == {
        "travelMode": "truck", "optimizeRoute": "shortest", "avoid": ["tunnels"],
        "departAt": "2026-11-20T08:00:00Z"}
    assert check_budgets([600, 300, 600.0], None) == ("timeBudgetInSec", [600.0, 300.0])
    assert check_budgets(None, 1500) == ("distanceBudgetInMeters", [1500.0])


def test_a_truck_reaches_less_than_a_car(conn) -> None:
    car, truck = (toolkit.route_range(SJL, time_budget=600, travel_mode=mode, connection=conn)
                  for mode in ("driving", "truck"))
    assert truck.geometry.iloc[0].area < car.geometry.iloc[0].area  # shapely: no CRS warning


@pytest.mark.parametrize(("kwargs", "parameter"), [
    ({}, "time_budget"),                                   # one budget is required
    ({"time_budget": 600, "distance_budget": 100}, "distance_budget"),
    ({"time_budget": 0}, "time_budget"),
    ({"time_budget": 21_601}, "time_budget"),
    ({"time_budget": [600, float("nan")]}, "time_budget[1]"),
    ({"time_budget": "10 min"}, "time_budget"),
    ({"distance_budget": 500_001}, "distance_budget"),
    ({"distance_budget": dt.timedelta(minutes=5)}, "distance_budget"),
    ({"time_budget": 600, "travel_mode": "walking"}, "travel_mode"),
    ({"time_budget": 600, "optimize_route": "fastest"}, "optimize_route"),
    ({"time_budget": 600, "avoid": "mountains"}, "avoid"),
    ({"time_budget": 600, "depart_at": "soon"}, "depart_at"),
    ({"time_budget": 600, "api_version": " "}, "api_version"),
    ({"time_budget": 600, "origin": (1.5, 95.0)}, "origin"),
])
def test_bad_arguments_are_refused_before_any_request(conn, sandbox, kwargs, parameter) -> None:
    call = {"origin": ALV, **kwargs}
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        toolkit.route_range(**call, connection=conn)
    assert log == [] and info.value.parameter == parameter


def test_many_ranges_keep_within_the_services_rate(conn, sandbox) -> None:
    import time

    from toolkit.maps.reach import RANGE_QPS
    from toolkit.sandbox.maps import DOCUMENTED_QPS, peak_rate

    assert DOCUMENTED_QPS["route_range"] > RANGE_QPS
    since = time.monotonic()
    df = toolkit.route_range([ALV, CAN, SOL, SJL], time_budget=[60, 120, 180], connection=conn)
    assert len(df) == 12 and df["error.code"].isna().all()
    assert peak_rate(sandbox, "route_range", since=since) <= DOCUMENTED_QPS["route_range"]
