"""The services' real answers (examples 09-12, 21 and 28-31) parse into the right frames:
every record, value and dtype. The batch and hourly examples are replayed over HTTP through the
public functions; so are the route matrix's and the reachable range's, on a connection in the
public cloud's words (the examples name its hosts): the asynchronous matrix from its 202 through
its status to its result."""

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
    AIR_QUALITY_HOURLY_FORECAST,
    AUTOCOMPLETE,
    GEOCODE,
    REVERSE_GEOCODE,
    ROUTE_DIRECTIONS,
    SNAP_TO_ROADS,
    TRAFFIC_INCIDENTS,
)
from toolkit.maps.matrix import ROUTE_MATRIX
from toolkit.maps.reach import ROUTE_RANGE
from toolkit.maps.reverse import reverse_geocode_frame, reverse_geocode_rows
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


@pytest.fixture
def replay(waits):
    with replay_server() as rp:
        conn = toolkit.connect(base_url=rp.url, maps_key="example-maps-key-0123456789",
                               progress=False)
        conn.sleep = waits
        rp.conn = conn
        yield rp
        conn.close()


def test_reverse_geocoding_example() -> None:
    ex = example("28-maps-reverse-geocode", "ReverseGeocoding.json")
    point = ex["parameters"]["coordinates"]
    (feat,) = ex["responses"]["200"]["body"]["features"]
    df = reverse_geocode_frame([reverse_geocode_rows(0, point, ex["responses"]["200"]["body"])])
    _check_schema(df, REVERSE_GEOCODE)
    row = df.iloc[0]
    address = feat["properties"]["address"]
    assert row["input_index"] == 0 and row["type"] == "Address"
    assert row["confidence"] == "Medium" and list(row["matchCodes"]) == ["Good"]
    assert row["address.formattedAddress"] == address["formattedAddress"]
    assert row["address.streetName"] == address["streetName"]
    assert row["address.streetNumber"] == address["streetNumber"]
    assert row["address.locality"] == address["locality"]
    assert (row["admin_district_1"], row["admin_district_2"]) == ("Washington", "King County")
    assert pd.isna(row["address.countryRegion.ISO"])
    assert (row.geometry.x, row.geometry.y) == tuple(feat["geometry"]["coordinates"])
    assert row["input_point"].equals(shapely.Point(*point))
    assert row["distance_m"] == 0.0  # the example's match is the point asked
    assert [p["calculationMethod"] for p in row["geocodePoints"]] == ["Rooftop", "Rooftop"]
    assert list(row["bbox"]) == feat["bbox"] and pd.isna(row["error.code"])


def test_reverse_geocoding_batch_example_through_the_function(replay) -> None:
    ex = example("28-maps-reverse-geocode", "ReverseGeocodingBatch.json")
    asked = ex["parameters"]["reverseGeocodingBatchRequestBody"]["batchItems"]
    answers = ex["responses"]["200"]["body"]["batchItems"]
    replay.add("POST", r"/reverseGeocode:batch", Answer(200, ex["responses"]["200"]["body"]))
    # the example's second item has latitude first; the toolkit refuses such a pair itself, so
    # a valid point stands in for it while the answer stays the service's
    points = [tuple(asked[0]["coordinates"]), (-122.3, 47.6)]
    df = toolkit.reverse_geocode(points, connection=replay.conn)
    _check_schema(df, REVERSE_GEOCODE)
    assert df["input_index"].tolist() == [0, 1]
    first, second = df.iloc[0], df.iloc[1]
    feat = answers[0]["features"][0]
    assert first["address.formattedAddress"] == feat["properties"]["address"]["formattedAddress"]
    assert first["address.countryRegion.ISO"] == "US"
    assert (first.geometry.x, first.geometry.y) == tuple(feat["geometry"]["coordinates"])
    assert first["distance_m"] > 0 and pd.isna(first["error.code"])
    assert second["error.code"] == answers[1]["error"]["code"] == "400 Bad Request"
    assert second["error.message"] == answers[1]["error"]["message"]
    assert second.geometry is None and pd.isna(second["type"])
    [(method, target)] = replay.seen
    assert method == "POST" and "api-version=2025-01-01" in target


def test_hourly_air_quality_example_through_the_function(replay) -> None:
    ex = example("29-maps-weather-hourly-air-quality-forecast", "GetHourlyAirQuality.json")
    results = ex["responses"]["200"]["body"]["results"]
    replay.add("GET", r"/weather/airQuality/forecasts/hourly/json",
               Answer(200, ex["responses"]["200"]["body"]))
    lat, lon = map(float, ex["parameters"]["query"].split(","))
    df = toolkit.air_quality_hourly_forecast((lon, lat), duration=ex["parameters"]["duration"],
                                             connection=replay.conn)
    _check_schema(df, AIR_QUALITY_HOURLY_FORECAST)
    assert len(df) == len(results) == ex["parameters"]["duration"]
    assert df["hour"].tolist() == list(range(len(results)))
    assert df["dateTime"].tolist() == [pd.Timestamp(r["dateTime"]) for r in results]
    assert df["globalIndex"].tolist() == [r["globalIndex"] for r in results]
    assert df["index"].tolist() == [r["index"] for r in results]
    assert df["category"].astype(str).tolist() == [r["category"] for r in results]
    assert df["categoryColor"].tolist() == [r["categoryColor"] for r in results]
    assert df["dominantPollutant"].astype(str).tolist() == ["Ozone"] * len(results)
    assert [len(p) for p in df["pollutants"]] == [6] * len(results)
    assert df.geometry.iloc[0].equals(shapely.Point(lon, lat))
    [(_, target)] = replay.seen
    assert "query=47.632346%2C-122.138874" in target or "query=47.632346,-122.138874" in target
    long = toolkit.air_quality_pollutants(df)
    assert len(long) == 6 * len(results)
    ozone = long[long["type"] == "O3"]
    assert ozone["is_dominant"].all()
    assert ozone["concentration.value"].tolist() == [
        next(p for p in r["pollutants"] if p["type"] == "O3")["concentration"]["value"]
        for r in results]


# ------------------------------------------------------------------------------ matrix, range
MATRIX = "30-maps-route-matrix"
PUBLIC_HOST = "https://atlas.microsoft.com"


@pytest.fixture
def public_replay(waits) -> Any:
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
    """An example's value with the public host replaced by the public_replay's."""
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


def test_route_matrix_example_is_the_frame(public_replay) -> None:
    ex = example(MATRIX, "PostRouteMatrix.json")
    request = ex["parameters"]["routeMatrixRequest"]
    public_replay.add("POST", r"^/route/matrix\?api-version=2025-01-01$",
               Answer(200, ex["responses"]["200"]["body"]))
    df = toolkit.route_matrix(*_sides(request), travel_mode=request["travelMode"],
                              optimize_route=request["optimizeRoute"],
                              traffic=request["traffic"], depart_at=request["departAt"],
                              avoid=request["avoid"], connection=public_replay.conn)
    _cells_match(df, ex["responses"]["200"]["body"]["properties"]["matrix"])
    origins, destinations = _sides(request)
    assert [list(line.coords) for line in df.geometry] == [
        [tuple(o), tuple(d)] for o in origins for d in destinations]
    assert df.attrs["api_version"] == "2025-01-01"
    assert [m for m, _ in public_replay.seen] == ["POST"]


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


def test_the_asynchronous_matrix_example_from_its_202_to_its_result(public_replay) -> None:
    request = example(MATRIX, "PostRouteMatrixAsync.json")["parameters"][
        "routeMatrixAsyncRequest"]
    _async_answers(public_replay)
    df = toolkit.route_matrix(*_sides(request), travel_mode=request["travelMode"],
                              optimize_route="shortest", depart_at=request["departAt"],
                              avoid=request["avoid"], connection=public_replay.conn)
    cells = example(MATRIX, "GetRouteMatrixAsyncResult.json")["responses"]["200"]["body"][
        "properties"]["matrix"]
    _cells_match(df, cells)
    assert df["error.code"].tolist()[1::2] == ["OUT_OF_REGION"] * 2
    # the 202, the status (Completed at once), then the result at the resultUrl it named (with
    # the api-version the service wrote there)
    assert [m for m, _ in public_replay.seen] == ["POST", "GET", "GET"]
    assert public_replay.seen[2][1].endswith("/result?api-version=2024-07-01-preview")


def test_a_resumed_asynchronous_matrix_names_what_answered(public_replay) -> None:
    request = example(MATRIX, "PostRouteMatrixAsync.json")["parameters"][
        "routeMatrixAsyncRequest"]
    _async_answers(public_replay)
    op = toolkit.route_matrix(*_sides(request), optimize_route="shortest", wait=False,
                              connection=public_replay.conn)
    df = toolkit.resume_operation(op.continuation_token, connection=public_replay.conn)
    _cells_match(df, example(MATRIX, "GetRouteMatrixAsyncResult.json")["responses"]["200"][
        "body"]["properties"]["matrix"])
    assert df.attrs["api_version"] == "2024-07-01-preview"
    assert df.attrs["endpoint"].endswith("/result")


def test_route_range_example_is_the_frame(public_replay) -> None:
    ex = example("31-maps-route-range", "PostRouteRange.json")
    request = ex["parameters"]["routeRangeRequest"]
    body = ex["responses"]["200"]["body"]
    public_replay.add("POST", r"^/route/range\?api-version=2025-01-01$", Answer(200, body))
    df = toolkit.route_range(tuple(request["geometry"]["coordinates"]),
                             time_budget=request["properties"]["timeBudgetInSec"],
                             connection=public_replay.conn)
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
