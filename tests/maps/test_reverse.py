"""reverse_geocode over HTTP: the address at each point, batches past 100, the same point asked
once, failures as rows, a batch past the time limit split, validation before any request."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely

import toolkit
from tests.maps.conftest import TOWNS
from tests.replay import Answer, replay_server
from toolkit._core.errors import ApiError, ValidationError
from toolkit._core.geo import haversine_m
from toolkit.maps._batch import Batches
from toolkit.maps._schemas import REVERSE_GEOCODE

ALV, CAN, ORD = (TOWNS[t] for t in ("Andorra la Vella", "Canillo", "Ordino"))
#: A point on a named street of Ordino (Cami Peu de la Grau), and one far out at sea.
STREET = (1.5331, 42.5560)
OCEAN = (-30.0, 30.0)


def test_one_row_per_point_in_input_order_with_its_address(conn, sandbox) -> None:
    points = [STREET, ALV, OCEAN, STREET]
    with sandbox.recording() as log:
        df = toolkit.reverse_geocode(points, connection=conn)
    assert [e.path for e in log] == ["/reverseGeocode:batch"]
    assert isinstance(df, gpd.GeoDataFrame) and str(df.crs) == "EPSG:4326"
    assert list(df.columns) == REVERSE_GEOCODE.names
    assert df["input_index"].tolist() == [0, 1, 2, 3]
    assert str(df["input_index"].dtype) == "Int64" and df["confidence"].cat.ordered
    street = df.iloc[0]
    assert street["type"] == "Address" and street["address.streetName"]
    assert street["address.streetNumber"].isdigit()
    assert street["address.countryRegion.ISO"] == "AD"
    # the match is on the road, near the point asked; distance_m says how near
    assert street["distance_m"] == pytest.approx(
        float(haversine_m(*STREET, street.geometry.x, street.geometry.y)), abs=0.1)
    assert street["distance_m"] <= 60
    assert df["input_point"].iloc[0].equals(shapely.Point(*STREET))
    # the same point twice: asked once, answered the same
    assert df.iloc[3]["address.formattedAddress"] == street["address.formattedAddress"]
    # far out at sea the world has nothing: a row with no match, not an error
    sea = df.iloc[2]
    assert pd.isna(sea["type"]) and sea.geometry is None and pd.isna(sea["error.code"])
    assert df.attrs["operation"] == "reverse_geocode" and len(df.attrs["request_ids"]) == 1


def test_the_items_sent_are_the_distinct_points_with_the_options(conn, sandbox,
                                                                 monkeypatch) -> None:
    sent: list[list[dict]] = []
    send = Batches.send

    def spy(self, chunk):
        sent.append([self.items[i] for i in chunk])
        return send(self, chunk)

    monkeypatch.setattr(Batches, "send", spy)
    with sandbox.recording() as log:
        df = toolkit.reverse_geocode([ALV, ALV, CAN], result_types="populatedplace", view="ad",
                                     language="ca", connection=conn)
    assert len(log) == 1 and "api-version=2025-01-01" in log[0].query
    assert sent == [[{"coordinates": list(p), "resultTypes": ["PopulatedPlace"], "view": "AD"}
                     for p in (ALV, CAN)]]
    assert df["address.locality"].tolist() == ["Andorra la Vella"] * 2 + ["Canillo"]


def test_result_types_choose_the_entity_and_language_the_words(conn) -> None:
    df = toolkit.reverse_geocode([ALV, CAN], result_types=["PopulatedPlace"], language="fr",
                                 connection=conn)
    assert df["type"].tolist() == ["PopulatedPlace", "PopulatedPlace"]
    assert df["address.locality"].tolist() == ["Andorra la Vella", "Canillo"]
    assert (df["address.countryRegion.name"] == "Andorre").all()
    parish = toolkit.reverse_geocode(ORD, result_types="AdminDivision1", connection=conn)
    assert parish["type"].tolist() == ["AdminDivision1"]
    assert parish["admin_district_1"].tolist() == ["Ordino"]


def test_batches_past_100_points_go_in_several_requests(conn, sandbox) -> None:
    rng = np.random.default_rng(3)
    points = np.column_stack([rng.uniform(1.50, 1.60, 230), rng.uniform(42.46, 42.58, 230)])
    with sandbox.recording() as log:
        df = toolkit.reverse_geocode(points, result_types="CountryRegion", connection=conn)
    assert sorted(e.path for e in log) == ["/reverseGeocode:batch"] * 3  # 100 + 100 + 30
    assert df["input_index"].tolist() == list(range(230))
    assert (df["type"] == "CountryRegion").all()
    assert np.allclose(shapely.get_coordinates(df["input_point"]), points)


def test_a_batch_past_the_time_limit_is_split_then_reported(conn, sandbox) -> None:
    sandbox.state["maps.batch_time_limit"] = 0.0
    try:
        with sandbox.recording() as log:
            df = toolkit.reverse_geocode([ALV, CAN, ORD, TOWNS["Encamp"]], connection=conn)
    finally:
        sandbox.state.pop("maps.batch_time_limit")
    assert [r.status for r in log] == [408] * 7  # 4 -> 2 + 2 -> 1 + 1 + 1 + 1
    assert df["input_index"].tolist() == [0, 1, 2, 3]
    assert df["error.code"].eq("Timeout").all() and df.geometry.isna().all()


@pytest.fixture
def replay(waits):
    with replay_server() as rp:
        connection = toolkit.connect(base_url=rp.url, maps_key="k" * 24, progress=False,
                                     max_retries=0)
        connection.sleep = waits
        rp.conn = connection
        yield rp
        connection.close()


def test_a_failed_item_is_a_row_with_its_error_and_the_others_are_kept(replay) -> None:
    found = {"type": "FeatureCollection", "features": [{
        "type": "Feature", "properties": {"type": "Address", "confidence": "High",
                                          "address": {"formattedAddress": "1 Main St"}},
        "geometry": {"type": "Point", "coordinates": [10.0, 20.0]}}]}
    replay.add("POST", r"/reverseGeocode:batch", Answer(200, {
        "summary": {"successfulRequests": 1, "totalRequests": 2},
        "batchItems": [found, {"error": {"code": "400 Bad Request", "message": "out of range"}}]}))
    df = toolkit.reverse_geocode([(10.0, 20.0), (11.0, 21.0)], connection=replay.conn)
    assert df["address.formattedAddress"].tolist()[0] == "1 Main St"
    assert df["distance_m"].iloc[0] == 0.0
    assert pd.isna(df["error.code"].iloc[0])
    assert df["error.code"].iloc[1] == "400 Bad Request"
    assert df["error.message"].iloc[1] == "out of range" and df.geometry.iloc[1] is None


def test_a_wrong_number_of_items_is_refused_and_every_batch_failing_raises(replay) -> None:
    replay.add("POST", r"/reverseGeocode:batch", Answer(200, {"batchItems": []}))
    df = toolkit.reverse_geocode([(10.0, 20.0)], connection=replay.conn)
    assert df["error.code"].tolist() == ["ProtocolError"]  # the batch's answer, as a row
    replay.routes.clear()
    replay.add("POST", r"/reverseGeocode:batch", Answer(401, {"error": {
        "code": "Unauthorized", "message": "no"}}))
    with pytest.raises(ApiError):
        toolkit.reverse_geocode([(10.0, 20.0)], connection=replay.conn)


@pytest.mark.parametrize(("kwargs", "parameter"), [
    ({"points": []}, "points"),
    ({"points": (200.0, 10.0)}, "points"),
    ({"points": "Ordino"}, "points"),
    ({"points": ALV, "result_types": "Town"}, "result_types"),
    ({"points": ALV, "result_types": ["Address", 3]}, "result_types[1]"),
    ({"points": ALV, "view": "AND"}, "view"),
    ({"points": ALV, "language": "en US"}, "language"),
    ({"points": ALV, "api_version": ""}, "api_version"),
])
def test_bad_arguments_are_refused_before_any_request(conn, sandbox, kwargs, parameter) -> None:
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        toolkit.reverse_geocode(**kwargs, connection=conn)
    assert log == [] and info.value.parameter == parameter
