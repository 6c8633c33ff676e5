"""autocomplete over HTTP: ranking, filters, addresses, languages, many queries, validation.

geocode over HTTP, and place names wherever a location is (weather, route waypoints)."""

from __future__ import annotations

import copy
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest
import shapely

import toolkit
from tests.maps.conftest import TOWNS
from toolkit._core.errors import PlaceNotFoundError, ValidationError
from toolkit._core.geo import haversine_m
from toolkit._data.andorra import towns
from toolkit.maps._schemas import AIR_QUALITY, AUTOCOMPLETE, GEOCODE, ROUTE_DIRECTIONS

ANDORRA = (1.40, 42.42, 1.80, 42.66)


def test_places_ranked_by_prefix_kind_and_distance(conn, sandbox) -> None:
    with sandbox.recording() as log:
        near_canillo = toolkit.autocomplete("Can", coordinates=TOWNS["Canillo"], connection=conn)
    assert len(log) == 1 and "coordinates=1.5975,42.5676" in log[0].query
    assert list(near_canillo.columns) == AUTOCOMPLETE.names
    assert near_canillo["rank"].tolist() == list(range(1, len(near_canillo) + 1))
    first = near_canillo.iloc[0]
    assert first["name"] == "Canillo" and first["type"] == "PopulatedPlace"
    assert first["typeGroup"] == "Place" and first["admin_district_1"] == "Canillo"
    assert first["address.countryRegion.ISO"] == "AD" and first["address.postalCode"] == "AD100"
    assert near_canillo.geometry.isna().all() and str(near_canillo.crs) == "EPSG:4326"
    assert near_canillo.attrs["operation"] == "autocomplete"
    assert near_canillo.attrs["api_version"] == "2026-01-01"
    assert len(near_canillo.attrs["request_ids"]) == 1
    # every suggestion matches the prefix at the start of a word of its name or street
    for _, row in near_canillo.iterrows():
        text = row["name"] if pd.notna(row["name"]) else row["address.streetName"]
        assert any(w.lower().startswith("can") for w in text.replace("'", " ").split())


def test_distance_reorders_equal_matches(conn) -> None:
    near_south = toolkit.autocomplete("Carrer", coordinates=TOWNS["Sant Julià de Lòria"],
                                      top=10, result_types="Address", connection=conn)
    near_north = toolkit.autocomplete("Carrer", coordinates=TOWNS["Ordino"], top=10,
                                      result_types="Address", connection=conn)
    assert near_south["address.locality"].tolist() != near_north["address.locality"].tolist()
    assert "Sant Julià de Lòria" in near_south["address.locality"].head(3).tolist()


def test_many_queries_one_frame_in_input_order(conn, sandbox) -> None:
    queries = ["Ordino", "Encamp", "Ordino", "Sold"]
    with sandbox.recording() as log:
        df = toolkit.autocomplete(queries, bbox=ANDORRA, top=3, connection=conn)
    assert len(log) == 3  # each distinct query once
    firsts = df[df["rank"] == 1]
    assert firsts["query"].tolist() == queries
    assert firsts["name"].tolist() == ["Ordino", "Encamp", "Ordino", "Soldeu"]
    assert (df["rank"] <= 3).all() and df["query"].iloc[0] == "Ordino"


def test_street_addresses_with_house_numbers(conn) -> None:
    df = toolkit.autocomplete("12 Avinguda Meritxell", coordinates=TOWNS["Andorra la Vella"],
                              connection=conn)
    assert len(df) >= 1
    assert set(df["typeGroup"]) == {"Address"} and set(df["type"]) == {"Address"}
    assert df["address.streetNumber"].tolist()[0] == "12"
    assert df["address.streetName"].eq("Avinguda Meritxell").all()
    assert df["address.addressLine"].iloc[0] == "Avinguda Meritxell, 12"
    assert df["name"].isna().all()  # absent for addresses
    assert df["address.formattedAddress"].iloc[0].endswith(", Andorra")


def test_type_and_group_filters_intersect(conn, sandbox) -> None:
    towns = toolkit.autocomplete("S", bbox=ANDORRA, result_types=["PopulatedPlace"], top=20,
                                 connection=conn)
    assert len(towns) > 3 and set(towns["type"]) == {"PopulatedPlace"}
    streets = toolkit.autocomplete("Carrer", bbox=ANDORRA, result_type_groups="Address",
                                   connection=conn)
    assert len(streets) == 5 and set(streets["typeGroup"]) == {"Address"}
    with sandbox.recording() as log:
        none = toolkit.autocomplete("Canillo", bbox=ANDORRA, result_type_groups="Address",
                                    result_types="PopulatedPlace", connection=conn)
    assert len(log) == 1 and log[0].status == 200
    assert len(none) == 0 and list(none.columns) == AUTOCOMPLETE.names


def test_country_bbox_and_language(conn) -> None:
    assert len(toolkit.autocomplete("Ordino", bbox=ANDORRA, country_region="FR",
                                    connection=conn)) == 0
    assert len(toolkit.autocomplete("Ordino", bbox=ANDORRA, country_region="ad",
                                    connection=conn)) > 0
    ordino_box = shapely.box(1.50, 42.54, 1.56, 42.60)  # anything with bounds
    inside = toolkit.autocomplete("C", bbox=ordino_box, top=20, connection=conn)
    assert len(inside) > 0 and set(inside["admin_district_1"]) <= {"Ordino", "La Massana",
                                                                   "Canillo"}
    french = toolkit.autocomplete("Andor", bbox=ANDORRA, language="fr", top=10,
                                  result_types=["CountryRegion", "PopulatedPlace"],
                                  connection=conn)
    assert "Andorre" in french["name"].tolist()
    assert "Andorre-la-Vieille" in french["name"].tolist()
    local = toolkit.autocomplete("Andor", bbox=ANDORRA, top=10,
                                 result_types=["PopulatedPlace"], connection=conn)
    assert "Andorra la Vella" in local["name"].tolist()




@pytest.mark.parametrize("kwargs, parameter, rule", [
    ({"query": ""}, "query", "non-empty"),
    ({"query": ["Can", " "]}, "query[1]", "non-empty"),
    ({"query": 5}, "query", "string"),
    ({"coordinates": None}, "coordinates", "or bbox is required"),
    ({"coordinates": (200, 42)}, "coordinates", "longitude"),
    ({"coordinates": (1.5, 91)}, "coordinates", "latitude"),
    ({"coordinates": None, "bbox": (1.5, 42.5, 1.500001, 42.6)}, "bbox", "0.00001"),
    ({"coordinates": None, "bbox": (1.6, 42.5, 1.5, 42.6)}, "bbox", "must not exceed"),
    ({"top": 0}, "top", "between 1 and 20"),
    ({"top": 21}, "top", "between 1 and 20"),
    ({"top": "5"}, "top", "integer"),
    ({"country_region": "AND"}, "country_region", "alpha-2"),
    ({"view": "A1"}, "view", "alpha-2"),
    ({"result_types": "Nope"}, "result_types", "must be one of"),
    ({"result_types": ["Castle", "Nope"]}, "result_types[1]", "must be one of"),
    ({"result_type_groups": "Street"}, "result_type_groups", "Address, Place"),
    ({"result_type_groups": []}, "result_type_groups", "at least one"),
    ({"language": ""}, "language", "language tag"),
    ({"api_version": ""}, "api_version", "required"),
])
def test_bad_inputs_are_refused_before_any_request(conn, sandbox, kwargs, parameter,
                                                   rule) -> None:
    args = {"query": "Can", "coordinates": (1.52, 42.51), **kwargs}
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        toolkit.autocomplete(args.pop("query"), **args, connection=conn)
    assert info.value.parameter == parameter and rule in info.value.rule
    assert log == []


def test_throttling_loses_nothing(conn, sandbox) -> None:
    queries = [f"{p}" for p in ("A", "B", "C", "E", "L", "M", "O", "P", "S", "V")]
    expected = toolkit.autocomplete(queries, bbox=ANDORRA, connection=conn)
    sandbox.inject("429", path="autocomplete", rate=0.5, retry_after=1, count=6)
    again = toolkit.autocomplete(queries, bbox=ANDORRA, connection=conn)
    assert conn.stats.throttled > 0
    pd.testing.assert_frame_equal(pd.DataFrame(again.drop(columns="geometry")),
                                  pd.DataFrame(expected.drop(columns="geometry")))


def _town(name: str) -> tuple[float, float]:
    t = towns()
    row = t[t["name"] == name].iloc[0]
    return float(row["lon"]), float(row["lat"])


def test_places_by_name_one_row_per_match_in_rank_order(conn, sandbox) -> None:
    with sandbox.recording() as log:
        df = toolkit.geocode(["Ordino", "Canillo", "Ordino"], top=3, connection=conn)
    assert sorted(parse_qs(e.query)["query"][0] for e in log) == ["Canillo", "Ordino"]
    assert all(parse_qs(e.query)["api-version"] == ["2025-01-01"] for e in log)
    assert list(df.columns) == GEOCODE.names and str(df.crs) == "EPSG:4326"
    assert df["query"].tolist()[:1] == ["Ordino"] and df["query"].tolist()[-1] == "Ordino"
    canillo = df[df["query"] == "Canillo"]
    assert canillo["rank"].tolist() == list(range(1, len(canillo) + 1))
    first = df[df["query"] == "Canillo"].iloc[0]
    assert first["type"] == "PopulatedPlace" and first["confidence"] == "High"
    assert list(first["matchCodes"]) == ["Good"]
    assert haversine_m(first.geometry.x, first.geometry.y, *_town("Canillo")) < 1
    assert first["address.postalCode"] == "AD100" and first["admin_district_1"] == "Canillo"
    w, s, e, n = first["bbox"]
    assert w < first.geometry.x < e and s < first.geometry.y < n
    assert df["confidence"].cat.ordered and df["confidence"].max() == "High"
    assert df.attrs["operation"] == "geocode" and len(df.attrs["request_ids"]) == 2


def test_addresses_streets_and_ambiguity(conn) -> None:
    one = toolkit.geocode("12 Avinguda Meritxell, Andorra la Vella", top=5, connection=conn)
    assert (one["type"] == "Address").all() and (one["address.streetNumber"] == "12").all()
    assert one["address.locality"].iloc[0] == "Andorra la Vella"
    assert set(one["admin_district_1"]) == {"Andorra la Vella"}  # the parish narrows
    street = toolkit.geocode("Carrer Major", top=5, connection=conn)
    assert (street["type"] == "RoadBlock").all() and len(street) >= 2
    assert all(list(m) == ["Ambiguous"] for m in street["matchCodes"])
    far = toolkit.geocode("9999 Carrer Major", top=1, connection=conn)
    assert far["type"].tolist() == ["RoadBlock"] and list(far["matchCodes"].iloc[0]) == \
        ["UpHierarchy"]
    nothing = toolkit.geocode("Atlantis", connection=conn)
    assert len(nothing) == 0 and list(nothing.columns) == GEOCODE.names
    elsewhere = toolkit.geocode("Ordino", country_region="FR", connection=conn)
    assert len(elsewhere) == 0


def test_the_user_location_reorders_equal_matches(conn) -> None:
    south = toolkit.geocode("Carrer Major", coordinates=TOWNS["Sant Julià de Lòria"], top=1,
                            connection=conn).geometry.iloc[0]
    north = toolkit.geocode("Carrer Major", coordinates=TOWNS["Ordino"], top=1,
                            connection=conn).geometry.iloc[0]
    d = {k: haversine_m(g.x, g.y, *TOWNS[k]) for k, g in (("Sant Julià de Lòria", south),
                                                          ("Ordino", north))}
    assert not south.equals(north)
    assert d["Sant Julià de Lòria"] < haversine_m(north.x, north.y,
                                                  *TOWNS["Sant Julià de Lòria"])
    assert d["Ordino"] < haversine_m(south.x, south.y, *TOWNS["Ordino"])


@pytest.mark.parametrize("kwargs, parameter, words", [
    ({"query": ""}, "query", "non-empty"),
    ({"query": ["Ordino", " "]}, "query[1]", "non-empty"),
    ({"query": 3}, "query", "string"),
    ({"query": "Ordino", "top": 0}, "top", "between 1 and 20"),
    ({"query": "Ordino", "top": 21}, "top", "between 1 and 20"),
    ({"query": "Ordino", "bbox": (1.8, 42.4, 1.4, 42.7)}, "bbox", "must not exceed"),
    ({"query": "Ordino", "bbox": (1.5, 42.5, 1.500001, 42.6)}, "bbox", "at least"),
    ({"query": "Ordino", "coordinates": (1.5, 95.0)}, "coordinates", "latitude in [-90, 90]"),
    ({"query": "Ordino", "country_region": "AND"}, "country_region", "alpha-2"),
    ({"query": "Ordino", "api_version": ""}, "api_version", "required"),
])
def test_bad_input_is_refused_before_any_request(conn, sandbox, kwargs, parameter,
                                                 words) -> None:
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        toolkit.geocode(**kwargs, connection=conn)
    assert log == [] and info.value.parameter == parameter and words in str(info.value)


def test_weather_takes_place_names_and_records_them(conn, sandbox) -> None:
    with sandbox.recording() as log:
        df = toolkit.air_quality(["Ordino", TOWNS["Canillo"], "Encamp"], pollutants=False,
                                 connection=conn)
    paths = [e.path for e in log]
    assert paths.count("/geocode") == 2 and paths.index("/geocode") < min(
        i for i, p in enumerate(paths) if p.startswith("/weather/"))
    assert list(df.columns) == AIR_QUALITY.names
    assert df["place"].tolist()[0] == "Ordino" and pd.isna(df["place"].iloc[1])
    assert df["place_address"].tolist()[2] == "AD200 Encamp, Andorra"
    ordino = toolkit.geocode("Ordino", top=1, connection=conn).geometry.iloc[0]
    assert df.geometry.iloc[0].equals(ordino)
    by_point = toolkit.air_quality((ordino.x, ordino.y), pollutants=False, connection=conn)
    assert by_point["globalIndex"].iloc[0] == df["globalIndex"].iloc[0]
    week = toolkit.air_quality_forecast(pd.Series(["Ordino", "Encamp"]), duration=2,
                                        connection=conn)
    assert week["place"].tolist() == ["Ordino", "Ordino", "Encamp", "Encamp"]
    alerts = toolkit.severe_weather_alerts("Ordino", connection=conn)
    assert (alerts["place"] == "Ordino").all()


def test_a_name_geocode_cannot_place_is_a_row_and_is_not_asked_about(conn, sandbox) -> None:
    with sandbox.recording() as log:
        df = toolkit.air_quality([TOWNS["Ordino"], "Atlantis"], pollutants=False,
                                 connection=conn)
    paths = [e.path for e in log]
    assert paths[0] == "/geocode" and paths.count("/weather/airQuality/current/json") == 1
    assert df["error.code"].tolist()[1] == "PlaceNotFoundError"
    assert "'Atlantis'" in df["error.message"].iloc[1] and pd.isna(df["globalIndex"].iloc[1])
    assert df.geometry.iloc[1] is None and df["place"].iloc[1] == "Atlantis"
    assert pd.isna(df["error.code"].iloc[0]) and df["globalIndex"].notna().iloc[0]
    # nothing left to ask about: raised
    with sandbox.recording() as log, pytest.raises(PlaceNotFoundError) as info:
        toolkit.severe_weather_alerts("Atlantis", connection=conn)
    assert info.value.parameter == "locations" and info.value.name == "Atlantis"
    assert [e.path for e in log] == ["/geocode"]


def test_route_waypoints_take_place_names(conn, sandbox) -> None:
    with sandbox.recording() as log:
        df = toolkit.route_directions(
            [{"origin": "Andorra la Vella", "destination": "Canillo"},
             {"origin": TOWNS["Ordino"], "waypoints": ["La Massana"], "destination": "Encamp"}],
            connection=conn)
    paths = [e.path for e in log]
    assert paths.count("/geocode") == 4 and paths[-1] == "/route/directions:batch"
    assert list(df.columns) == ROUTE_DIRECTIONS.names
    assert df["origin_place"].tolist()[0] == "Andorra la Vella" and \
        pd.isna(df["origin_place"].iloc[1])
    assert df["destination_place"].tolist() == ["Canillo", "Encamp"]
    assert df["error.code"].isna().all()
    by_point = toolkit.route_directions(
        [{"origin": _town("Andorra la Vella"), "destination": _town("Canillo")}],
        connection=conn)
    assert by_point["distanceInMeters"].iloc[0] == df["distanceInMeters"].iloc[0]
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        toolkit.route_directions([{"origin": "Atlantis", "destination": (1.5, 95.0)}],
                                 connection=conn)
    assert info.value.parameter == "queries[0].destination" and log == []
    # a query with a name geocode cannot place is a row and is not sent
    with sandbox.recording() as log:
        mixed = toolkit.route_directions(
            [{"origin": "Ordino", "destination": "Atlantis"},
             {"origin": "Ordino", "waypoints": ["Atlantis"], "destination": "Canillo"},
             {"origin": "Ordino", "destination": "Canillo"}], connection=conn)
    assert mixed["query_index"].tolist() == [0, 1, 2]
    assert mixed["error.code"].tolist()[:2] == ["PlaceNotFoundError"] * 2
    assert mixed["distanceInMeters"].notna().tolist() == [False, False, True]
    batch = [e for e in log if e.path == "/route/directions:batch"]
    assert len(batch) == 1
    with pytest.raises(PlaceNotFoundError):
        toolkit.route_directions([{"origin": "Atlantis", "destination": "Ordino"}],
                                 connection=conn)


def test_a_low_confidence_best_match_is_not_taken(waits) -> None:
    from tests.conftest import example
    from tests.replay import Answer, replay_server

    body = copy.deepcopy(example("21-maps-geocode", "ForwardGeocodingByQuery.json")[
        "responses"]["200"]["body"])
    body["features"][0]["properties"]["confidence"] = "Low"
    aq = example("13-maps-weather-current-air-quality", "GetCurrentAirQuality.json")
    with replay_server() as rp:
        rp.add("GET", "/geocode", Answer(200, body))
        rp.add("GET", "/weather/airQuality/current/json",
               Answer(200, aq["responses"]["200"]["body"]))
        conn = toolkit.connect(base_url=rp.url, token="example-token-0123456789",
                               maps_client_id="00000000-0000-0000-0000-0000000000aa",
                               progress=False)
        conn.sleep = waits
        try:
            df = toolkit.air_quality(["15127 NE 24th", (-122.14, 47.63)], connection=conn)
        finally:
            conn.close()
    assert df["error.code"].tolist()[0] == "PlaceNotFoundError"
    assert "Low-confidence" in df["error.message"].iloc[0]
    assert "15127 NE 24th St, Redmond, WA 98052" in df["error.message"].iloc[0]
    assert pd.isna(df["error.code"].iloc[1]) and df["globalIndex"].notna().iloc[1]
    assert [urlsplit(t).path for _, t in rp.seen] == ["/geocode",
                                                      "/weather/airQuality/current/json"]


def test_a_dataframe_of_origin_and_destination_names(conn) -> None:
    queries = pd.DataFrame({"origin": ["Ordino", "Encamp"], "destination": ["Canillo",
                                                                            TOWNS["Ordino"]]})
    df = toolkit.route_directions(queries, connection=conn)
    assert df["origin_place"].tolist() == ["Ordino", "Encamp"]
    assert df["destination_place"].tolist()[0] == "Canillo" and \
        pd.isna(df["destination_place"].iloc[1])
    assert df["error.code"].isna().all() and (df["distanceInMeters"] > 1000).all()
