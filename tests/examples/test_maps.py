"""The services' real answers (examples 09-12, 21, 25, 26) parse into the right frames: every
record, value and dtype. The route matrix's and the reachable range's are replayed over HTTP
through the public functions, on a connection in the public cloud's words (the examples name its
hosts): the asynchronous matrix from its 202 through its status to its result."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pytest
import shapely

import toolkit
from tests.conftest import example
from tests.replay import Answer, replay_server
from toolkit.maps._schemas import (
    AUTOCOMPLETE,
    GEOCODE,
    ROUTE_DIRECTIONS,
    SNAP_TO_ROADS,
    TRAFFIC_INCIDENTS,
)
from toolkit.maps.matrix import ROUTE_MATRIX
from toolkit.maps.reach import ROUTE_RANGE
from toolkit.maps.route import route_rows, routes_frame, snap_frame, stitch
from toolkit.maps.search import autocomplete_frame, autocomplete_rows, geocode_frame, geocode_rows
from toolkit.maps.traffic import incidents_frame


def _body(folder: str, name: str) -> dict:
    return example(folder, name)["responses"]["200"]["body"]


def _check_schema(df, schema) -> None:
    assert list(df.columns) == schema.names
    assert str(df.crs) == "EPSG:4326"
    for col in schema.columns:
        if col.kind in ("string", "Int64", "boolean", "float", "category"):
            want = col.dtype()
            if col.kind == "category":
                assert isinstance(df[col.name].dtype, pd.CategoricalDtype), col.name
            else:
                assert df[col.name].dtype == want, (col.name, df[col.name].dtype)


def test_autocomplete_default_example() -> None:
    body = _body("09-maps-geocode-autocomplete", "AutocompleteDefault.json")
    df = autocomplete_frame(autocomplete_rows(body, "1 Vendor"))
    _check_schema(df, AUTOCOMPLETE)
    assert len(df) == 2
    assert df["rank"].tolist() == [1, 2] and df["query"].tolist() == ["1 Vendor"] * 2
    assert df["typeGroup"].tolist() == ["Address", "Place"]
    assert df["type"].tolist() == ["Address", "LandmarkBuilding"]
    assert pd.isna(df["name"].iloc[0]) and df["name"].iloc[1] == "Vendor-Advanta C"
    first = df.iloc[0]
    assert first["address.streetNumber"] == "1" and first["address.streetName"] == "Vendor Way"
    assert first["address.addressLine"] == "1 Vendor Way"
    assert first["address.postalCode"] == "98052" and first["address.locality"] == "Redmond"
    assert first["address.formattedAddress"] == \
        "1 Vendor Way, Redmond, Washington 98052, United States"
    assert first["address.adminDistricts"] == [{"name": "Washington"}, {"name": "King County"}]
    assert first["admin_district_1"] == "Washington"
    assert first["admin_district_2"] == "King County"
    assert df["address.countryRegion.ISO"].tolist() == ["US", "US"]
    assert df["address.countryRegion.name"].tolist() == ["United States"] * 2
    assert df.iloc[1]["address.locality"] == "Bellevue"
    assert pd.isna(df.iloc[1]["address.streetName"])
    # the service sends null geometry: it stays null, nothing is invented
    assert df.geometry.isna().all()


def test_autocomplete_null_result_is_an_empty_frame_with_the_full_schema() -> None:
    body = _body("09-maps-geocode-autocomplete", "AutocompleteNullResult.json")
    df = autocomplete_frame(autocomplete_rows(body, "1 Vendor Way, Redmond"))
    assert len(df) == 0
    _check_schema(df, AUTOCOMPLETE)


def test_route_directions_batch_example() -> None:
    ex = example("10-maps-route-directions-batch", "PostRouteDirectionsBatch.json")
    items = ex["parameters"]["routeDirectionsBatchRequest"]["batchItems"]
    answers = ex["responses"]["200"]["body"]["batchItems"]
    rows = [r for i, (q, a) in enumerate(zip(items, answers, strict=True))
            for r in route_rows(i, q, a)]
    df = routes_frame(rows)
    _check_schema(df, ROUTE_DIRECTIONS)
    assert len(df) == 2
    assert df["query_index"].tolist() == [0, 1] and df["route_index"].tolist() == [0, 0]
    assert df["optionalId"].tolist() == ["4C3681A6C8AA4AC3441412763A2A25C81444DC8B"] * 2
    assert df["type"].tolist() == ["RoutePath"] * 2
    assert df["distanceInMeters"].tolist() == [1432.9, 1432.9]
    assert df["durationInSeconds"].tolist() == [524, 524]
    assert df["durationTrafficInSeconds"].tolist() == [554, 554]
    assert df["resourceId"].iloc[0].startswith("v70,h1207959581,i0")
    assert df["error.code"].isna().all() and df["departureAt"].isna().all()
    # routeSummary only: the geometry is an empty MultiLineString, as sent
    assert all(g.geom_type == "MultiLineString" and g.is_empty for g in df.geometry)


def test_a_failed_batch_item_is_a_row_with_its_error() -> None:
    rows = route_rows(3, {"optionalId": "x"}, {"error": {"code": "NoRouteFound",
                                                         "message": "no route"}})
    df = routes_frame(rows)
    assert df["query_index"].tolist() == [3] and df["optionalId"].tolist() == ["x"]
    assert df["error.code"].tolist() == ["NoRouteFound"]
    assert df["error.message"].tolist() == ["no route"]
    assert pd.isna(df["route_index"].iloc[0]) and df.geometry.iloc[0].is_empty


def test_snap_to_roads_example() -> None:
    body = _body("11-maps-snap-to-roads", "PostSnapToRoads.json")
    df = snap_frame(stitch(body["features"], 0, 0, 2))
    _check_schema(df, SNAP_TO_ROADS)
    assert df["inputIndex"].tolist() == [0, 1]
    assert df["isInterpolated"].tolist() == [False, False]
    assert df["name"].tolist() == ["State Rte-99 N"] * 2
    assert df["speedLimitInKilometersPerHour"].tolist() == [80.0, 80.0]
    assert df.geometry.iloc[0].equals(shapely.Point(-122.336769, 47.590885))
    assert df.geometry.iloc[1].equals(shapely.Point(-122.336008, 47.601609))


def test_traffic_incident_example_keeps_the_big_ids_exact() -> None:
    body = _body("12-maps-traffic-incident", "GetTrafficIncident.json")
    df = incidents_frame(body, {})
    _check_schema(df, TRAFFIC_INCIDENTS)
    assert str(df["id"].dtype) == "Int64"
    assert df["id"].tolist() == [18558549332008001, 21366103288104000]
    assert int(df["id"].iloc[0]) == 18558549332008001  # > 2**53: exact, never a float
    assert df["incidentType"].tolist() == ["Accident", "Accident"]
    assert df["severity"].tolist() == ["Serious", "Serious"]
    assert df["severity"].cat.ordered and df["severity_level"].tolist() == [4, 4]
    assert pd.isna(df["delay"].iloc[0]) and df["delay"].iloc[1] == pd.Timedelta(seconds=10)
    assert pd.api.types.is_timedelta64_dtype(df["delay"])
    assert df["startTime"].iloc[0] == pd.Timestamp("2025-09-12T09:31:37Z")
    assert df["endTime"].iloc[1] == pd.Timestamp("2025-09-12T10:21:47Z")
    # the example says lastModified where the spec says lastModifiedTime: both are accepted
    assert df["lastModifiedTime"].tolist() == [pd.Timestamp("2025-09-12T10:21:47Z")] * 2
    assert str(df["startTime"].dtype) == "datetime64[ns, UTC]"
    assert df["isTrafficJam"].tolist() == [False, True]
    assert df["isRoadClosed"].tolist() == [False, False]
    assert df["title"].tolist() == ["I-25 N / US-87 N", "I-70 E"]
    assert df["description"].iloc[1].startswith("Accident on I-70 E")
    assert df.geometry.iloc[0].equals(shapely.Point(-104.939053, 39.682642))
    assert df["endPoint"].iloc[1].equals(shapely.Point(-94.35559355, 39.04075549))
    assert str(df["endPoint"].crs) == "EPSG:4326"


def test_geocode_address_example() -> None:
    ex = example("21-maps-geocode", "ForwardGeocodingByQuery.json")
    body = ex["responses"]["200"]["body"]
    df = geocode_frame(geocode_rows(body, ex["parameters"]["query"]))
    _check_schema(df, GEOCODE)
    feat = body["features"][0]
    assert len(df) == 1 and df["rank"].tolist() == [1]
    assert df["query"].tolist() == ["15127 NE 24th Street Redmond WA"]
    row = df.iloc[0]
    assert (row.geometry.x, row.geometry.y) == tuple(feat["geometry"]["coordinates"])
    assert row["type"] == "Address" and row["confidence"] == "High"
    assert list(row["matchCodes"]) == ["Good"]
    assert row["address.formattedAddress"] == feat["properties"]["address"]["formattedAddress"]
    assert row["address.streetNumber"] == "15127" and row["address.postalCode"] == "98052"
    # districts with only a short name keep it
    assert (row["admin_district_1"], row["admin_district_2"]) == ("WA", "King County")
    assert pd.isna(row["address.countryRegion.ISO"])
    assert row["address.countryRegion.name"] == "United States"
    assert list(row["bbox"]) == feat["bbox"]
    assert [p["usageTypes"] for p in row["geocodePoints"]] == [["Display"], ["Route"]]


def test_geocode_landmark_example_keeps_point_of_interest_types() -> None:
    ex = example("21-maps-geocode", "ForwardGeocodingFindLandmarkByQuery.json")
    body = ex["responses"]["200"]["body"]
    df = geocode_frame(geocode_rows(body, "empire state building"))
    _check_schema(df, GEOCODE)
    assert df["type"].astype(str).tolist() == ["PointOfInterest", "LandmarkBuilding"]
    assert df["rank"].tolist() == [1, 2] and df["confidence"].astype(str).tolist() == \
        ["High", "High"]
    assert [list(m) for m in df["matchCodes"]] == [["Ambiguous"], ["Ambiguous"]]
    assert df["address.locality"].tolist() == ["New York", "Manhattan"]
    assert [(g.x, g.y) for g in df.geometry] == [
        tuple(f["geometry"]["coordinates"]) for f in body["features"]]


# ------------------------------------------------------------------------------ matrix, range
MATRIX = "25-maps-route-matrix"
PUBLIC_HOST = "https://atlas.microsoft.com"


@pytest.fixture
def replay(waits) -> Any:
    with replay_server() as rp:
        conn = toolkit.connect(maps_url=rp.url, cloud="public", maps_key="k" * 32,
                               progress=False)
        conn.sleep = waits
        rp.conn = conn
        yield rp
        conn.close()


def _sides(request: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    origins, destinations = (f["geometry"]["coordinates"] for f in request["features"])
    return origins, destinations


def _on(rp: Any, value: Any) -> Any:
    """An example's value with the public host replaced by the replay's."""
    return json.loads(json.dumps(value).replace(PUBLIC_HOST, rp.url))


def _cells_match(df: pd.DataFrame, cells: list[dict[str, Any]]) -> None:
    _check_schema(df, ROUTE_MATRIX)
    assert len(df) == len(cells)
    for (_, row), cell in zip(df.iterrows(), cells, strict=True):
        assert (row["originIndex"], row["destinationIndex"]) == (cell["originIndex"],
                                                                 cell["destinationIndex"])
        assert row["statusCode"] == cell["statusCode"]
        if "error" in cell:
            assert row["error.code"] == cell["error"]["code"]
            assert row["error.message"] == cell["error"]["message"]
            assert pd.isna(row["durationInSeconds"]) and pd.isna(row["departureAt"])
            continue
        assert pd.isna(row["error.code"])
        for key in ("distanceInMeters", "durationInSeconds", "durationTrafficInSeconds"):
            assert row[key] == cell[key], key
        for key in ("departureAt", "arrivalAt"):
            assert row[key] == pd.Timestamp(cell[key]) and str(row[key].tz) == "UTC", key


def test_route_matrix_example_is_the_frame(replay) -> None:
    ex = example(MATRIX, "PostRouteMatrix.json")
    request = ex["parameters"]["routeMatrixRequest"]
    replay.add("POST", r"^/route/matrix\?api-version=2025-01-01$",
               Answer(200, ex["responses"]["200"]["body"]))
    df = toolkit.route_matrix(*_sides(request), travel_mode=request["travelMode"],
                              optimize_route=request["optimizeRoute"],
                              traffic=request["traffic"], depart_at=request["departAt"],
                              avoid=request["avoid"], connection=replay.conn)
    _cells_match(df, ex["responses"]["200"]["body"]["properties"]["matrix"])
    origins, destinations = _sides(request)
    assert [list(line.coords) for line in df.geometry] == [
        [tuple(o), tuple(d)] for o in origins for d in destinations]
    assert df.attrs["api_version"] == "2025-01-01"
    assert [m for m, _ in replay.seen] == ["POST"]


def _async_answers(rp: Any) -> None:
    accepted = example(MATRIX, "PostRouteMatrixAsync.json")["responses"]["202"]["headers"]
    status = example(MATRIX, "GetRouteOperationStatusCompleted.json")["responses"]
    result = example(MATRIX, "GetRouteMatrixAsyncResult.json")["responses"]["200"]["body"]
    rp.add("POST", r"^/route/matrix:async\?api-version=2025-01-01$",
           Answer(202, None, _on(rp, accepted)))
    rp.add("GET", r"^/route/operations/bc3f9365-3ee0-4564-aa27-825016325557/result\?",
           Answer(200, result))
    rp.add("GET", r"^/route/operations/bc3f9365-3ee0-4564-aa27-825016325557\?",
           Answer(200, _on(rp, status["200"]["body"])))


def test_the_asynchronous_matrix_example_from_its_202_to_its_result(replay) -> None:
    request = example(MATRIX, "PostRouteMatrixAsync.json")["parameters"][
        "routeMatrixAsyncRequest"]
    _async_answers(replay)
    df = toolkit.route_matrix(*_sides(request), travel_mode=request["travelMode"],
                              optimize_route="shortest", depart_at=request["departAt"],
                              avoid=request["avoid"], connection=replay.conn)
    cells = example(MATRIX, "GetRouteMatrixAsyncResult.json")["responses"]["200"]["body"][
        "properties"]["matrix"]
    _cells_match(df, cells)
    assert df["error.code"].tolist()[1::2] == ["OUT_OF_REGION"] * 2
    # the 202, the status (Completed at once), then the result at the resultUrl it named (with
    # the api-version the service wrote there)
    assert [m for m, _ in replay.seen] == ["POST", "GET", "GET"]
    assert replay.seen[2][1].endswith("/result?api-version=2024-07-01-preview")


def test_a_resumed_asynchronous_matrix_names_what_answered(replay) -> None:
    request = example(MATRIX, "PostRouteMatrixAsync.json")["parameters"][
        "routeMatrixAsyncRequest"]
    _async_answers(replay)
    op = toolkit.route_matrix(*_sides(request), optimize_route="shortest", wait=False,
                              connection=replay.conn)
    df = toolkit.resume_operation(op.continuation_token, connection=replay.conn)
    _cells_match(df, example(MATRIX, "GetRouteMatrixAsyncResult.json")["responses"]["200"][
        "body"]["properties"]["matrix"])
    assert df.attrs["api_version"] == "2024-07-01-preview"
    assert df.attrs["endpoint"].endswith("/result")


def test_route_range_example_is_the_frame(replay) -> None:
    ex = example("26-maps-route-range", "PostRouteRange.json")
    request = ex["parameters"]["routeRangeRequest"]
    body = ex["responses"]["200"]["body"]
    replay.add("POST", r"^/route/range\?api-version=2025-01-01$", Answer(200, body))
    df = toolkit.route_range(tuple(request["geometry"]["coordinates"]),
                             time_budget=request["properties"]["timeBudgetInSec"],
                             connection=replay.conn)
    _check_schema(df, ROUTE_RANGE)
    center, boundary = body["features"]
    row = df.iloc[0]
    assert len(df) == 1 and row["origin_index"] == 0 and row["timeBudgetInSec"] == 6000.0
    assert pd.isna(row["distanceBudgetInMeters"]) and pd.isna(row["error.code"])
    assert (row["center"].x, row["center"].y) == tuple(center["geometry"]["coordinates"])
    assert [list(p) for p in row.geometry.exterior.coords] == \
        boundary["geometry"]["coordinates"][0]
    assert list(row["bbox"]) == boundary["bbox"]
    assert row.geometry.exterior.is_ccw
