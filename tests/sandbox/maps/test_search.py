"""The sandbox's autocomplete service: the entities of the bundled map data, the ranking (prefix,
kind, distance), filters, house numbers, languages, and the service's refusals."""

from __future__ import annotations

from typing import Any

import pytest
import requests

from toolkit._core.geo import haversine_m
from toolkit.sandbox.maps import search
from toolkit.sandbox.server import Sandbox

ANDORRA = (1.40, 42.42, 1.80, 42.66)
CANILLO = (1.5975, 42.5676)
VERSION = search.API_VERSIONS[0]


def _suggest(query: str, **kw: Any) -> list[dict[str, Any]]:
    args: dict[str, Any] = {"ref": CANILLO, "bbox": None, "country": None, "types": None,
                            "groups": None, "top": 5, "lang": None, **kw}
    return [f["properties"] for f in search.suggest(query, **args)]


def _get(sb: Sandbox, query: str, **headers: str) -> requests.Response:
    key = sb.maps_key.reveal()
    return requests.get(f"{sb.url}/geocode:autocomplete?api-version={VERSION}&{query}",
                        headers={"subscription-key": key, **headers}, timeout=10)


def _entity(name: str) -> search.Entity:
    return next(e for e in search.entities() if e.name == name)


# ---------------------------------------------------------------------- the data
def test_entities_lie_in_andorra_with_searchable_keys() -> None:
    ents = search.entities()
    assert search.entities() is ents  # loaded once
    w, s, e, n = ANDORRA
    assert all(w <= x.lon <= e and s <= x.lat <= n for x in ents)
    assert {x.group for x in ents} == {"Place", "Address"}
    assert [x.type for x in ents].count("CountryRegion") == 1
    for x in ents:
        assert x.keys and all(k == search._norm(k) for k in x.keys)
        assert x.type in search.RESULT_TYPES
        if x.group == "Address":
            assert 2 <= x.numbers <= 200 and x.street == x.name


@pytest.mark.parametrize("text, normal", [
    ("Sant Julià de Lòria", "sant julia de loria"),
    ("  L’Aldosa ", "l'aldosa"),
    ("Av. de Joan Martí", "av de joan marti"),
    ("CANILLO", "canillo"),
])
def test_names_are_compared_without_case_accents_or_punctuation(text: str,
                                                                normal: str) -> None:
    assert search._norm(text) == normal


@pytest.mark.parametrize("query, split", [
    ("12 avinguda meritxell", ("avinguda meritxell", "12")),
    ("avinguda meritxell 12", ("avinguda meritxell", "12")),
    ("avinguda meritxell, 7b", ("avinguda meritxell", "7")),
    ("avinguda meritxell", ("avinguda meritxell", None)),
])
def test_a_house_number_is_split_from_either_end(query: str, split: tuple) -> None:
    assert search._split_number(query) == split


def test_catalog_rows_are_the_towns_and_villages() -> None:
    rows = search.catalog_rows(None)
    names = {r["name"] for r in rows}
    assert {"Andorra la Vella", "Canillo", "Ordino"} <= names
    for row in rows:
        ent = _entity(row["name"])
        assert ent.type == "PopulatedPlace" and ent.weight <= 1
        lon, lat = (float(v) for v in row["location"].split(","))
        assert abs(lon - ent.lon) < 1e-5 and abs(lat - ent.lat) < 1e-5


# ---------------------------------------------------------------------- ranking and filters
def test_whole_name_prefixes_come_before_word_prefixes() -> None:
    found = _suggest("Can", top=20)
    names = [p.get("name") or p["address"]["streetName"] for p in found]
    starts = [search._norm(n).startswith("can") for n in names]
    assert starts[0] and starts == sorted(starts, reverse=True)
    assert all(any(w.startswith("can") for w in search._norm(n).replace("'", " ").split())
               for n in names)


def test_distance_orders_equal_matches() -> None:
    for ref in (CANILLO, (1.4906, 42.4636)):
        found = _suggest("Carrer", ref=ref, top=10, groups={"Address"})
        streets = [next(e for e in search.entities() if e.group == "Address"
                        and e.name == p["address"]["streetName"]
                        and e.postcode == p["address"].get("postalCode")) for p in found]
        km = [float(haversine_m(ref[0], ref[1], e.lon, e.lat)) for e in streets]
        assert km == sorted(km)


def test_top_takes_the_first_of_the_ranking_and_answers_are_repeatable() -> None:
    five = _suggest("Sant", top=5)
    assert len(five) == 5 and _suggest("Sant", top=2) == five[:2]
    assert _suggest("Sant", top=5) == five


def test_bbox_restricts_and_country_filters() -> None:
    around_canillo = (1.55, 42.54, 1.65, 42.60)
    found = _suggest("Andorra", bbox=around_canillo, top=20)
    w, s, e, n = around_canillo
    for p in found:
        if p["typeGroup"] == "Place" and p["type"] != "CountryRegion":
            assert any(w <= x.lon <= e and s <= x.lat <= n for x in search.entities()
                       if x.name == p["name"])
    assert "Andorra la Vella" not in [p.get("name") for p in found]
    assert _suggest("Can", country="FR") == []
    assert _suggest("Can", country="ad") == _suggest("Can")


def test_types_and_groups_intersect() -> None:
    addresses = _suggest("Carrer", types={"Address"}, top=10)
    assert addresses and {p["type"] for p in addresses} == {"Address"}
    assert _suggest("Carrer", types={"Address"}, groups={"Place"}) == []
    places = _suggest("Can", groups={"Place"}, top=10)
    assert places and {p["typeGroup"] for p in places} == {"Place"}


def test_house_numbers_are_offered_along_a_street() -> None:
    found = _suggest("12 Avinguda Meritxell", top=5)
    first = found[0]["address"]
    assert first["streetNumber"] == "12" and first["streetName"] == "Avinguda Meritxell"
    assert first["addressLine"] == "Avinguda Meritxell, 12"
    assert first["formattedAddress"].startswith("Avinguda Meritxell, 12, AD")
    for p in found:
        number = p["address"]["streetNumber"]
        street = _entity(p["address"]["streetName"])
        assert number.startswith("12") and int(number) <= street.numbers


def test_names_in_the_asked_language_else_the_local_one() -> None:
    french = _suggest("Andor", top=10, lang="fr", types={"CountryRegion", "PopulatedPlace"})
    names = [p["name"] for p in french]
    assert "Andorre" in names and "Andorre-la-Vieille" in names
    assert all(p["address"]["countryRegion"] == {"ISO": "AD", "name": "Andorre"}
               for p in french)
    local = _suggest("Andor", top=10, types={"PopulatedPlace"})
    assert "Andorra la Vella" in [p["name"] for p in local]
    # a language the data lacks for a place: its local name
    ordino = _suggest("Ordino", top=1, lang="fr", types={"PopulatedPlace"})
    assert ordino[0]["name"] == "Ordino"


# ---------------------------------------------------------------------- over HTTP
def test_the_answer_is_geojson(sandbox: Sandbox) -> None:
    r = _get(sandbox, "query=Can&coordinates=1.5975,42.5676&top=3",
             **{"Accept-Language": "fr-FR,fr;q=0.9"})
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/geo+json")
    body = r.json()
    assert body["type"] == "FeatureCollection" and len(body["features"]) == 3
    assert [f["properties"] for f in body["features"]] == _suggest("Can", top=3, lang="fr")
    bbox_only = _get(sandbox, "query=Can&bbox=1.40,42.42,1.80,42.66")
    centre = ((ANDORRA[0] + ANDORRA[2]) / 2, (ANDORRA[1] + ANDORRA[3]) / 2)
    assert [f["properties"] for f in bbox_only.json()["features"]] == \
        _suggest("Can", ref=centre, bbox=ANDORRA)


def test_sandbox_refuses_like_the_service(sandbox) -> None:
    key = sandbox.maps_key.reveal()
    base = f"{sandbox.url}/geocode:autocomplete?api-version=2026-01-01&subscription-key={key}"
    missing = requests.get(base + "&query=Can", timeout=10)
    assert missing.status_code == 400 and missing.headers["x-vendor-error-code"] == "BadRequest"
    assert "coordinates" in missing.json()["error"]["message"]
    too_many = requests.get(base + "&query=Can&coordinates=1.5,42.5&top=21", timeout=10)
    assert too_many.status_code == 400
    bad_type = requests.get(base + "&query=Can&coordinates=1.5,42.5&resultTypes=Castle,Nope",
                            timeout=10)
    assert bad_type.status_code == 400 and "Nope" in bad_type.json()["error"]["message"]
    no_key = requests.get(base.split("&subscription-key")[0] + "&query=C&coordinates=1,2",
                          timeout=10)
    assert no_key.status_code == 401 and no_key.json()["error"]["code"] == "Unauthorized"


@pytest.mark.parametrize("query, said", [
    ("coordinates=1.5,42.5", "'query' parameter is required"),
    ("query=%20&coordinates=1.5,42.5", "'query' parameter is required"),
    ("query=Can&coordinates=a,b", "longitude,latitude"),
    ("query=Can&coordinates=1.5", "longitude,latitude"),
    ("query=Can&coordinates=42.5,200", "out of range"),
    ("query=Can&bbox=1.5,42.5,1.500001,42.6", "0.00001"),
    ("query=Can&bbox=1.6,42.5,1.5,42.6", "order"),
    ("query=Can&bbox=1,2,3", "four numbers"),
    ("query=Can&coordinates=1.5,42.5&top=x", "1 to 20"),
    ("query=Can&coordinates=1.5,42.5&top=0", "1 to 20"),
    ("query=Can&coordinates=1.5,42.5&countryRegion=AND", "countryRegion"),
    ("query=Can&coordinates=1.5,42.5&view=A1", "view"),
    ("query=Can&coordinates=1.5,42.5&resultTypeGroups=Street", "Street"),
])
def test_each_refusal_says_what_is_wrong(sandbox: Sandbox, query: str, said: str) -> None:
    r = _get(sandbox, query)
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["code"] == "BadRequest" == r.headers["x-vendor-error-code"]
    assert said in err["message"] and err["details"] == []


def test_accepted_edge_values(sandbox: Sandbox) -> None:
    for query in ("query=Can&coordinates=1.5,42.5&view=Auto",
                  "query=Can&coordinates=1.5,42.5&top=20&countryRegion=ad",
                  "query=Can&coordinates=1.5,42.5&top=1&resultTypes="):
        assert _get(sandbox, query).status_code == 200, query
    other_country = _get(sandbox, "query=Can&coordinates=1.5,42.5&countryRegion=FR")
    assert other_country.status_code == 200 and other_country.json()["features"] == []


def test_api_version_is_checked(sandbox: Sandbox) -> None:
    key = {"subscription-key": sandbox.maps_key.reveal()}
    base = f"{sandbox.url}/geocode:autocomplete?query=Can&coordinates=1.5,42.5"
    missing = requests.get(base, headers=key, timeout=10)
    assert missing.status_code == 400 and missing.json()["error"]["code"] == "MissingApiVersion"
    wrong = requests.get(base + "&api-version=2020-01-01", headers=key, timeout=10)
    assert wrong.status_code == 400 and wrong.json()["error"]["code"] == "InvalidApiVersion"
    for version in search.API_VERSIONS:
        assert requests.get(base + f"&api-version={version}", headers=key,
                            timeout=10).status_code == 200


# ---------------------------------------------------------------------- geocoding
def _geocode(sb: Sandbox, query: str, **headers: str) -> requests.Response:
    key = sb.maps_key.reveal()
    return requests.get(f"{sb.url}/geocode?api-version={search.GEOCODE_API_VERSIONS[0]}&{query}",
                        headers={"subscription-key": key, **headers}, timeout=10)


def test_geocode_answers_points_with_confidence_and_match_codes(sandbox: Sandbox) -> None:
    r = _geocode(sandbox, "query=Ordino&top=3")
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/geo+json")
    body = r.json()
    assert body["type"] == "FeatureCollection" and 1 <= len(body["features"]) <= 3
    first = body["features"][0]
    ordino = _entity("Ordino")
    assert first["geometry"] == {"type": "Point",
                                 "coordinates": [round(ordino.lon, 7), round(ordino.lat, 7)]}
    props = first["properties"]
    assert props["type"] == "PopulatedPlace" and props["confidence"] == "High"
    assert props["matchCodes"] == ["Good"]
    assert props["geocodePoints"][0]["geometry"] == first["geometry"]
    w, s, e, n = first["bbox"]
    assert w < ordino.lon < e and s < ordino.lat < n
    # later matches only start a word of their names: less sure
    assert {f["properties"]["confidence"] for f in body["features"][1:]} <= {"Medium"}


def test_geocode_needs_only_the_query_and_refuses_like_autocomplete(sandbox: Sandbox) -> None:
    assert _geocode(sandbox, "query=").status_code == 400
    assert _geocode(sandbox, "top=3").json()["error"]["code"] == "BadRequest"
    assert _geocode(sandbox, "query=Ordino&top=21").status_code == 400
    assert _geocode(sandbox, "query=Ordino&coordinates=42.5,191").status_code == 400
    assert _geocode(sandbox, "query=Ordino&countryRegion=AND").status_code == 400
    structured = _geocode(sandbox, "addressLine=Carrer%20Major&locality=Sispony&top=1").json()
    assert structured["features"][0]["properties"]["address"]["locality"] == "Sispony"
    unauthenticated = requests.get(f"{sandbox.url}/geocode?api-version=2025-01-01&query=Ordino",
                                   timeout=10)
    assert unauthenticated.status_code == 401


def test_geocode_narrows_by_the_text_after_a_comma() -> None:
    def localities(query: str) -> list[str]:
        return [f["properties"]["address"].get("locality") for f in
                search.geocode_features(query, ref=None, bbox=None, country=None, top=20,
                                        lang=None)]

    everywhere = localities("Carrer Major")
    assert len(set(everywhere)) > 1
    assert set(localities("Carrer Major, Sispony")) == {"Sispony"}
    assert set(localities("Carrer Major, AD400 Sispony, Andorra")) == {"Sispony"}
    assert localities("Carrer Major, AD100") == []
