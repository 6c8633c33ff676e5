"""The sandbox's reverse geocoding: the most specific entity asked for at a point (addresses on
the named roads, places, postcodes, parishes, the country), in the service's shapes (the single
point and the batch with its summary), and its refusals."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from toolkit._core.geo import haversine_m
from toolkit.sandbox.maps import reverse, search
from toolkit.sandbox.maps.roads.network import network
from toolkit.sandbox.server import Sandbox

VERSION = reverse.API_VERSIONS[0]
ORDINO = (1.5331, 42.5560)
CANILLO = (1.5975, 42.5676)
OCEAN = (-30.0, 30.0)


def _get(sb: Sandbox, query: str, **headers: str) -> requests.Response:
    return requests.get(f"{sb.url}/reverseGeocode?api-version={VERSION}&{query}",
                        headers={"subscription-key": sb.maps_key.reveal(), **headers},
                        timeout=10)


def _batch(sb: Sandbox, body: Any, **headers: str) -> requests.Response:
    return requests.post(f"{sb.url}/reverseGeocode:batch?api-version={VERSION}", json=body,
                         headers={"subscription-key": sb.maps_key.reveal(), **headers},
                         timeout=30)


def test_an_address_is_on_the_nearest_named_road_with_a_house_number() -> None:
    (feat,) = reverse.reverse_features(*ORDINO)
    props = feat["properties"]
    assert props["type"] == "Address" and props["matchCodes"] == ["Good"]
    address = props["address"]
    lon, lat = feat["geometry"]["coordinates"]
    assert float(haversine_m(*ORDINO, lon, lat)) <= reverse.ADDRESS_M
    assert props["confidence"] == ("High" if haversine_m(*ORDINO, lon, lat) <= reverse.HIGH_M
                                   else "Medium")
    # the match lies on a road of that name
    net = network()
    edge, _, gap = net.nearest((lon, lat))
    assert gap < 1.0 and net.way_of(edge).get("name") == address["streetName"]
    assert address["streetNumber"].isdigit() and int(address["streetNumber"]) >= 1
    assert address["countryRegion"] == {"ISO": "AD", "name": "Andorra"}
    assert props["geocodePoints"][0]["calculationMethod"] == "Interpolation"


def test_the_address_found_is_found_again_by_forward_geocoding() -> None:
    (feat,) = reverse.reverse_features(*ORDINO)
    address = feat["properties"]["address"]
    found = search.geocode_features(f"{address['streetNumber']} {address['streetName']}, "
                                    f"{address['locality']}", ref=None, bbox=None,
                                    country=None, top=5, lang=None)
    kinds = [f["properties"]["type"] for f in found
             if f["properties"]["address"].get("streetName") == address["streetName"]]
    assert "Address" in kinds


@pytest.mark.parametrize(("types", "expected"), [
    (("PopulatedPlace",), "PopulatedPlace"),
    (("Postcode1",), "Postcode1"),
    (("AdminDivision1",), "AdminDivision1"),
    (("CountryRegion",), "CountryRegion"),
    (("Neighborhood", "AdminDivision2"), None),   # the world has neither
    (("Neighborhood", "PopulatedPlace", "CountryRegion"), "PopulatedPlace"),  # most specific
])
def test_the_most_specific_type_asked_is_answered(types, expected) -> None:
    found = reverse.reverse_features(*CANILLO, types=types)
    assert [f["properties"]["type"] for f in found] == ([expected] if expected else [])
    if expected == "PopulatedPlace":
        assert found[0]["properties"]["address"]["locality"] == "Canillo"
    if expected == "Postcode1":
        assert found[0]["properties"]["address"]["postalCode"] == "AD100"
    if expected == "AdminDivision1":
        assert found[0]["properties"]["address"]["adminDistricts"][0]["name"] == "Canillo"


def test_nothing_is_found_outside_the_world() -> None:
    assert reverse.reverse_features(*OCEAN) == []


def test_the_single_point_answers_geojson_in_the_language_asked(sandbox) -> None:
    r = _get(sandbox, f"coordinates={CANILLO[0]},{CANILLO[1]}&resultTypes=PopulatedPlace",
             **{"Accept-Language": "fr-FR"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/geo+json")
    (feat,) = r.json()["features"]
    assert feat["properties"]["address"]["countryRegion"]["name"] == "Andorre"


@pytest.mark.parametrize("query", ["", "coordinates=1.5", "coordinates=200,42.5",
                                   "coordinates=a,b", "coordinates=1.5,42.5&resultTypes=Town",
                                   "coordinates=1.5,42.5&view=AND"])
def test_the_single_point_refuses_what_the_service_refuses(sandbox, query) -> None:
    r = _get(sandbox, query)
    assert r.status_code == 400 and r.json()["error"]["code"] == "BadRequest"


def test_the_batch_answers_each_item_in_order_with_a_summary(sandbox) -> None:
    body = {"batchItems": [
        {"coordinates": list(ORDINO), "optionalId": "a"},
        {"coordinates": [42.5560, 181.0], "optionalId": "b"},   # latitude first: refused
        {"coordinates": list(CANILLO), "resultTypes": ["AdminDivision1"]},
        {"coordinates": list(OCEAN)},
        {"coordinates": list(CANILLO), "resultTypes": ["Town"]},
    ]}
    r = _batch(sandbox, body)
    assert r.status_code == 200
    out = r.json()
    assert out["summary"] == {"successfulRequests": 3, "totalRequests": 5}
    items = out["batchItems"]
    assert items[0]["optionalId"] == "a" and items[0]["features"][0]["properties"]["type"] == \
        "Address"
    assert items[1]["optionalId"] == "b" and items[1]["error"]["code"] == "400 Bad Request"
    assert "42.556,181.0" in items[1]["error"]["message"]
    assert items[2]["features"][0]["properties"]["type"] == "AdminDivision1"
    assert items[3] == {"type": "FeatureCollection", "features": []}
    assert "Town" in items[4]["error"]["message"]


@pytest.mark.parametrize("body", [{}, {"batchItems": []}, {"batchItems": "x"},
                                  {"batchItems": [{"coordinates": [1.5, 42.5]}] * 101}])
def test_the_batch_holds_1_to_100_items(sandbox, body) -> None:
    r = _batch(sandbox, body)
    assert r.status_code == 400 and "1 to 100" in r.json()["error"]["message"]


def test_a_batch_past_the_time_limit_answers_408(sandbox) -> None:
    sandbox.state["maps.batch_time_limit"] = 0.0
    try:
        r = _batch(sandbox, {"batchItems": [{"coordinates": list(ORDINO)}]})
    finally:
        sandbox.state.pop("maps.batch_time_limit")
    assert r.status_code == 408 and r.json()["error"]["code"] == "Timeout"
