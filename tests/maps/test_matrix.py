"""route_matrix over HTTP: travel times on real roads, the synchronous and the asynchronous matrix
chosen by the service's limits, place names, cells without a route as rows, the long-running
operation's handle, token and faults, and every argument checked before any request."""

from __future__ import annotations

import pandas as pd
import pytest
import shapely

import toolkit
from tests.maps.conftest import TOWNS
from tests.replay import Answer, replay_server
from toolkit._core.errors import (
    OperationFailedError,
    OperationTimeoutError,
    PlaceNotFoundError,
    ProtocolError,
    ValidationError,
)
from toolkit._core.geo import haversine_m
from toolkit.maps.matrix import ASYNC_PATH, ROUTE_MATRIX, SYNC_PATH, matrix_options, plan_matrix
from toolkit.sandbox.maps.roads.routing import route

ALV, CAN, ORD, ENC, SOL = (TOWNS[t] for t in (
    "Andorra la Vella", "Canillo", "Ordino", "Encamp", "Soldeu"))
OFF_NETWORK = (1.30, 42.60)  # high mountains west of Andorra: no road within kilometres


def _paths(log) -> list[str]:
    return [r.path for r in log]


def test_a_small_matrix_is_answered_at_once_with_real_travel_times(conn, sandbox, net) -> None:
    with sandbox.recording() as log:
        df = toolkit.route_matrix([ALV, CAN], [ORD, ENC, SOL], connection=conn)
    assert _paths(log) == [SYNC_PATH]
    assert list(df.columns) == ROUTE_MATRIX.names and str(df.crs) == "EPSG:4326"
    assert df["originIndex"].tolist() == [0, 0, 0, 1, 1, 1]
    assert df["destinationIndex"].tolist() == [0, 1, 2, 0, 1, 2]
    assert (df["statusCode"] == 200).all() and df["error.code"].isna().all()
    for row in df.itertuples():
        a, b = [ALV, CAN][row.originIndex], [ORD, ENC, SOL][row.destinationIndex]
        # the fastest route of the router, snapped as the service snaps: the same trip
        usable = net.usable("driving")
        found = route(net, [a, b], snapped=[net.nearest(p, usable)[:2] for p in (a, b)])
        assert row.durationInSeconds == round(found.duration_s)
        assert row.distanceInMeters == pytest.approx(found.distance_m, abs=0.1)
        assert haversine_m(*a, *b) < row.distanceInMeters
        # historical traffic: the time in traffic is the usual time
        assert row.durationTrafficInSeconds == row.durationInSeconds
        assert shapely.get_coordinates(row.geometry).tolist() == [list(a), list(b)]
    # the time did not matter ("any"): no departure or arrival
    assert df["departureAt"].isna().all() and df["arrivalAt"].isna().all()
    assert df.attrs["operation"] == "route_matrix" and df.attrs["endpoint"].endswith(SYNC_PATH)
    assert df.attrs["sandbox"] is True


def test_the_shortest_routes_go_through_the_asynchronous_matrix(conn, sandbox) -> None:
    with sandbox.recording() as log:
        fast = toolkit.route_matrix([ALV, SOL], [CAN, ORD], connection=conn)
        short = toolkit.route_matrix([ALV, SOL], [CAN, ORD], optimize_route="shortest",
                                     connection=conn)
    paths = _paths(log)
    assert paths[0] == SYNC_PATH and paths[1] == ASYNC_PATH
    # then the status at Operation-Location until it is done (lro_polls of the sandbox), and the
    # result its resultUrl names
    assert all(p.startswith("/route/operations/") for p in paths[2:])
    assert paths[-1].endswith("/result") and len(paths) == 2 + 4 + 1
    assert (short["distanceInMeters"] <= fast["distanceInMeters"] + 0.1).all()
    assert (short["durationInSeconds"] >= fast["durationInSeconds"] - 1).all()
    assert list(short.columns) == ROUTE_MATRIX.names


def test_names_are_geocoded_and_a_name_not_found_makes_its_cells_rows(conn, sandbox) -> None:
    with sandbox.recording() as log:
        df = toolkit.route_matrix(["Ordino", "Zzyzx Nowhere Town", ALV], ["Canillo", ENC],
                                  connection=conn)
    assert _paths(log).count(SYNC_PATH) == 1
    assert df["origin_place"].tolist()[:2] == ["Ordino", "Ordino"]
    assert df["destination_place"].iloc[0] == "Canillo" and pd.isna(df["destination_place"][1])
    lost = df[df["originIndex"] == 1]
    assert lost["error.code"].tolist() == ["PlaceNotFoundError"] * 2
    assert lost["statusCode"].isna().all() and lost["durationInSeconds"].isna().all()
    assert lost.geometry.is_empty.all()
    # the others map back to the caller's positions
    assert df[df["originIndex"] == 2]["statusCode"].tolist() == [200, 200]
    with pytest.raises(PlaceNotFoundError):
        toolkit.route_matrix(["Zzyzx Nowhere Town"], [ALV], connection=conn)


def test_a_cell_without_a_route_is_a_row_with_its_error(conn) -> None:
    df = toolkit.route_matrix([ALV, OFF_NETWORK], [CAN], connection=conn)
    ok, off = df.iloc[0], df.iloc[1]
    assert ok["statusCode"] == 200 and pd.isna(ok["error.code"])
    assert off["statusCode"] == 400 and off["error.code"] == "OUT_OF_REGION"
    assert pd.isna(off["durationInSeconds"]) and pd.isna(off["distanceInMeters"])


def test_a_departure_time_gives_departures_and_arrivals(conn) -> None:
    when = pd.Timestamp("2026-11-20T08:00:00Z")
    df = toolkit.route_matrix([ALV], [CAN, SOL], depart_at=when, traffic="live",
                              connection=conn)
    assert (df["departureAt"] == when).all()
    assert (df["arrivalAt"] - df["departureAt"]).dt.total_seconds().tolist() == \
        df["durationTrafficInSeconds"].astype(float).tolist()
    arrive = toolkit.route_matrix([ALV], [CAN], arrive_at="2026-11-20T10:00:00+01:00",
                                  connection=conn)
    assert arrive["arrivalAt"].iloc[0] == pd.Timestamp("2026-11-20T09:00:00Z")


def test_wait_false_gives_the_handle_and_its_token_resumes(conn, sandbox) -> None:
    op = toolkit.route_matrix([ALV, CAN], [ORD], optimize_route="shortest", wait=False,
                              connection=conn)
    assert isinstance(op, toolkit.Operation) and op.status == "InProgress"
    assert "/route/operations/" in op.url
    token = op.continuation_token
    assert token and sandbox.maps_key.reveal() not in token
    resumed = toolkit.resume_operation(token, connection=conn)
    direct = op.result()
    # the resumed frame holds the service's cells, without the request's places and lines
    assert resumed[["originIndex", "destinationIndex", "distanceInMeters"]].equals(
        direct[["originIndex", "destinationIndex", "distanceInMeters"]])
    assert resumed.geometry.isna().all() and direct.geometry.notna().all()
    assert resumed.attrs["api_version"] == "2025-01-01"
    # a synchronous matrix is done at once: a finished handle, nothing to resume
    done = toolkit.route_matrix([ALV], [ORD], wait=False, connection=conn)
    assert done.done() and done.continuation_token is None


def test_a_timeout_carries_the_operation_to_resume(conn) -> None:
    with pytest.raises(OperationTimeoutError) as info:
        toolkit.route_matrix([ALV], [CAN, ORD], optimize_route="shortest", timeout=1,
                             connection=conn)
    df = info.value.operation.result()
    assert len(df) == 2 and (df["statusCode"] == 200).all()


def test_a_failed_matrix_raises_the_operations_error(conn, sandbox) -> None:
    sandbox.inject("lro_fail", path=r"matrix:async", method="POST", count=1)
    with pytest.raises(OperationFailedError) as info:
        toolkit.route_matrix([ALV], [CAN], optimize_route="shortest", connection=conn)
    assert info.value.code == "InternalServerError"


# ------------------------------------------------------------------------------ the limits
@pytest.mark.parametrize(("origins", "destinations", "options", "path"), [
    (10, 10, {}, SYNC_PATH),                                # 100 cells, any options
    (10, 10, {"avoid": ["tollRoads"]}, SYNC_PATH),
    (10, 20, {"traffic": "live", "departAt": "now"}, SYNC_PATH),  # 200, within a 400 km box
    (50, 50, {}, SYNC_PATH),                                # 2,500 with the defaults only
    (50, 50, {"travelMode": "truck"}, SYNC_PATH),
    (50, 50, {"avoid": ["tollRoads"]}, ASYNC_PATH),         # with options: asynchronously
    (1, 1, {"optimizeRoute": "shortest"}, ASYNC_PATH),      # shortest: asynchronously only
    (1000, 1, {}, SYNC_PATH),
    (1001, 1, {}, ASYNC_PATH),                              # over 1,000 a side
    (200, 250, {}, ASYNC_PATH),                             # 50,000 with the defaults only
    (10_000, 5, {}, ASYNC_PATH),
])
def test_the_path_follows_the_services_tables(origins, destinations, options, path) -> None:
    assert plan_matrix(origins, destinations, options) == path


@pytest.mark.parametrize(("origins", "destinations", "options", "named"), [
    (50, 51, {"avoid": ["tollRoads"]}, "destinations"),     # 2,550 cells with options
    (1001, 2, {"travelMode": "walking"}, "origins"),       # walking is not a default mode
    (200, 251, {}, "destinations"),                         # 50,200 cells
    (10_001, 1, {}, "origins"),                             # over 10,000 a side
    (60, 60, {"optimizeRoute": "shortest"}, "destinations"),
])
def test_a_matrix_no_row_takes_is_refused_naming_the_limits(origins, destinations, options,
                                                            named) -> None:
    with pytest.raises(ValidationError) as info:
        plan_matrix(origins, destinations, options)
    assert info.value.parameter == named
    assert "2,500 cells" in str(info.value) and "50,000 cells" in str(info.value)


def test_the_limit_is_checked_before_any_request(conn, sandbox) -> None:
    points = [ALV] * 101
    with sandbox.recording() as log, pytest.raises(ValidationError, match="at most"):
        toolkit.route_matrix(points, [(1.5, 42.5 + i / 1e4) for i in range(30)],
                             avoid="tollRoads", connection=conn)
    assert log == []


def test_options_are_written_only_when_they_are_not_the_defaults() -> None:
    assert matrix_options() == {}
    assert matrix_options(travel_mode="truck", avoid=["tollRoads", "tollRoads"],
                          depart_at="2026-11-20 09:30") == {
        "travelMode": "truck", "avoid": ["tollRoads"], "departAt": "2026-11-20T09:30:00Z"}
    assert matrix_options(depart_at="ANY") == {}
    assert matrix_options(depart_at="now", traffic="live") == {"departAt": "now",
                                                               "traffic": "live"}


@pytest.mark.parametrize(("kwargs", "parameter"), [
    ({"travel_mode": "bicycle"}, "travel_mode"),
    ({"optimize_route": "fastestWithTraffic"}, "optimize_route"),
    ({"traffic": "live"}, "traffic"),                          # live traffic needs a time
    ({"traffic": "live", "depart_at": "any"}, "traffic"),
    ({"arrive_at": "now"}, "arrive_at"),                       # "now" departs only
    ({"depart_at": "now", "arrive_at": "2026-11-20T09:00Z"}, "arrive_at"),
    ({"avoid": "ferries"}, "avoid"),
    ({"avoid": "tollRoads", "travel_mode": "walking"}, "avoid"),
    ({"depart_at": "tomorrow"}, "depart_at"),
    ({"wait": "yes"}, "wait"),
    ({"timeout": -1}, "timeout"),
    ({"api_version": ""}, "api_version"),
    ({"origins": []}, "origins"),
    ({"destinations": (1.5, 95.0)}, "destinations"),
])
def test_bad_arguments_are_refused_before_any_request(conn, sandbox, kwargs, parameter) -> None:
    call = {"origins": [ALV], "destinations": [CAN], **kwargs}
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        toolkit.route_matrix(**call, connection=conn)
    assert log == [] and info.value.parameter == parameter


# ------------------------------------------------------------------------------ the answer
def test_cells_the_service_left_out_or_misplaced_are_rows_with_a_protocol_error(waits) -> None:
    cell = {"statusCode": 200, "distanceInMeters": 10.0, "durationInSeconds": 5,
            "durationTrafficInSeconds": 5}
    body = {"type": "Feature", "geometry": None, "properties": {"matrix": [
        {**cell, "originIndex": 1, "destinationIndex": 0},
        {**cell, "originIndex": 7, "destinationIndex": 0},      # no such origin
        {**cell, "originIndex": 1, "destinationIndex": 0, "distanceInMeters": 99.0},  # twice
        {**cell, "originIndex": True, "destinationIndex": 0}]}}
    with replay_server() as rp:
        rp.add("POST", r"/route/matrix\?", Answer(200, body))
        conn = toolkit.connect(maps_url=rp.url, maps_key="k" * 24, progress=False)
        conn.sleep = waits
        df = toolkit.route_matrix([ALV, CAN], [ORD], connection=conn)
        conn.close()
    assert df["originIndex"].tolist() == [0, 1]
    assert df["error.code"].iloc[0] == "ProtocolError" and pd.isna(df["error.code"].iloc[1])
    assert df["distanceInMeters"].tolist()[1] == 10.0  # the first answer of a cell is kept


def test_an_answer_that_is_not_a_matrix_is_a_protocol_error(waits) -> None:
    with replay_server() as rp:
        rp.add("POST", r"/route/matrix\?", Answer(200, ["not", "a", "matrix"]))
        conn = toolkit.connect(maps_url=rp.url, maps_key="k" * 24, progress=False)
        conn.sleep = waits
        with pytest.raises(ProtocolError):
            toolkit.route_matrix([ALV], [ORD], connection=conn)
        conn.close()
