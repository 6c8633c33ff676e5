"""autocomplete over HTTP: ranking, filters, addresses, languages, many queries, validation."""

from __future__ import annotations

import pandas as pd
import pytest
import shapely

import toolkit
from tests.maps.conftest import TOWNS
from toolkit._core.errors import ValidationError
from toolkit._core.schemas import AUTOCOMPLETE

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
