"""Reverse geocoding over Andorra's roads and places (Search 2025-01-01).

``GET /reverseGeocode`` answers one point, ``POST /reverseGeocode:batch`` up to 100 in one
request (one batch item per item asked, in order, each a FeatureCollection or an ``error``, with
a ``summary`` of how many succeeded).

What a point is: the entity types of the service, the most specific first (``Address``,
``Neighborhood``, ``PopulatedPlace``, ``Postcode1``, ``AdminDivision1``, ``AdminDivision2``,
``CountryRegion``); the answer is the most specific type asked (``resultTypes``; all by default)
that the world has there, as the service does:

* ``Address``: the nearest named road of the OpenStreetMap network within 60 m (of its main
  connected part), its house number
  from where the point falls along the road (about one number every 12 m, as the streets of
  forward geocoding have them), the match on the road (``Interpolation``); ``High`` confidence
  within 15 m of the road, ``Medium`` beyond;
* ``PopulatedPlace``: the nearest town, village or hamlet within 2.5 km (its own point);
* ``Postcode1``: that place's postcode (within 5 km);
* ``AdminDivision1``: the parish of the nearest place within 5 km (at the parish's centre);
* ``CountryRegion``: Andorra, anywhere within its extent.

The world has no neighbourhoods and no second-level divisions: asking only for those finds
nothing. A point outside the world (anywhere else on Earth) has no feature: an empty
FeatureCollection. Coordinates out of range are refused: 400 for the single point, an item
``error`` (code ``400 Bad Request``, as the service's own example shows) in a batch.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from toolkit._core.geo import haversine_m
from toolkit._data.andorra import place_records
from toolkit._spec.maps import (
    COUNTRY_CODE_PATTERN,
    GEOCODE_API_VERSIONS,
    REVERSE_GEOCODE_BATCH_SIZE,
    REVERSE_GEOCODE_TYPES,
)
from toolkit.sandbox.http import Reply, Request, Router, SandboxHTTPError
from toolkit.sandbox.maps import note_arrival
from toolkit.sandbox.maps.route import BATCH_TIME_LIMIT, ItemError, echoed_id
from toolkit.sandbox.maps.search import (
    COUNTRY_NAMES,
    Entity,
    address_fields,
    entities,
    language_code,
)

if TYPE_CHECKING:
    from toolkit.sandbox.server import Sandbox

__all__ = ["API_VERSIONS", "RESULT_TYPES", "register", "reverse_features"]

API_VERSIONS = GEOCODE_API_VERSIONS
RESULT_TYPES = REVERSE_GEOCODE_TYPES
#: How near a named road must be for an address, and how near for a High confidence.
ADDRESS_M = 60.0
HIGH_M = 15.0
#: How near the nearest place must be for a populated place, and for its postcode and parish.
PLACE_M = 2500.0
AREA_M = 5000.0
#: Metres of road per house number (forward geocoding numbers its streets the same way).
NUMBER_M = 12.0
BAD_ITEM = "400 Bad Request"


@lru_cache(maxsize=1)
def _streets() -> dict[str, Entity]:
    return {e.name: e for e in entities() if e.group == "Address"}


@lru_cache(maxsize=1)
def _places() -> tuple[Entity, ...]:
    return tuple(e for e in entities() if e.type == "PopulatedPlace")


@lru_cache(maxsize=1)
def _extent() -> tuple[float, float, float, float]:
    lons = [e.lon for e in entities()]
    lats = [e.lat for e in entities()]
    return min(lons) - 0.02, min(lats) - 0.02, max(lons) + 0.02, max(lats) + 0.02


@lru_cache(maxsize=1)
def _named() -> np.ndarray:
    """Which edges of the road network belong to a road with a name."""
    from toolkit.sandbox.maps.roads.network import network

    net = network()
    return np.array([bool(net.way_of(e).get("name")) for e in range(net.n_edges)], dtype=bool)


def _nearest_place(lon: float, lat: float) -> tuple[Entity, float] | None:
    places = _places()
    if not places:
        return None
    d = haversine_m(lon, lat, np.array([p.lon for p in places]),
                    np.array([p.lat for p in places]))
    k = int(np.argmin(d))
    return places[k], float(d[k])


def _point(lon: float, lat: float) -> dict[str, Any]:
    return {"type": "Point", "coordinates": [round(lon, 7), round(lat, 7)]}


def _feature(kind: str, address: dict[str, Any], lon: float, lat: float, half: float,
             confidence: str, method: str) -> dict[str, Any]:
    point = _point(lon, lat)
    return {"type": "Feature",
            "properties": {"type": kind, "confidence": confidence, "matchCodes": ["Good"],
                           "address": address,
                           "geocodePoints": [{"geometry": point, "calculationMethod": method,
                                              "usageTypes": ["Display", "Route"]}]},
            "geometry": point,
            "bbox": [round(lon - half, 7), round(lat - half, 7), round(lon + half, 7),
                     round(lat + half, 7)]}


def _address(lon: float, lat: float, lang: str | None) -> dict[str, Any] | None:
    from toolkit.sandbox.maps.roads.network import network

    net = network()
    found = net.nearest((lon, lat), usable=_named(), max_m=ADDRESS_M)
    if found is None:
        return None
    edge, offset, distance = found
    name = str(net.way_of(edge)["name"])
    near = _nearest_place(lon, lat)
    street = _streets().get(name)
    if street is None:
        place = near[0] if near else None
        street = Entity("Address", "Address", name, {}, lon, lat,
                        place.locality if place else None, place.parish if place else None,
                        place.postcode if place else None, street=name,
                        numbers=int(max(2, min(200, net.edge_len[edge] // NUMBER_M))))
    number = str(min(street.numbers, 1 + int(offset // NUMBER_M)))
    at_lon, at_lat = net.position(edge, offset)
    here = replace(street, lon=at_lon, lat=at_lat)
    return _feature("Address", address_fields(here, lang, number), at_lon, at_lat, 0.0008,
                    "High" if distance <= HIGH_M else "Medium", "Interpolation")


def _area(kind: str, lon: float, lat: float, lang: str | None) -> dict[str, Any] | None:
    near = _nearest_place(lon, lat)
    if near is None or near[1] > (PLACE_M if kind == "PopulatedPlace" else AREA_M):
        return None
    place = near[0]
    if kind == "PopulatedPlace":
        return _feature(kind, address_fields(place, lang), place.lon, place.lat, 0.008,
                        "High", "Rooftop")
    full = address_fields(place, lang)
    country = full["countryRegion"]
    if kind == "Postcode1" and place.postcode:
        address = {"postalCode": place.postcode, "countryRegion": country,
                   "formattedAddress": f"{place.postcode}, {country['name']}"}
        return _feature(kind, address, place.lon, place.lat, 0.02, "Medium", "Rooftop")
    if kind == "AdminDivision1" and place.parish:
        centre = place_records().get("parishes", {}).get(place.parish, {})
        plon, plat = centre.get("lon", place.lon), centre.get("lat", place.lat)
        address = {"adminDistricts": [{"name": place.parish, "shortName": place.parish}],
                   "countryRegion": country,
                   "formattedAddress": f"{place.parish}, {country['name']}"}
        return _feature(kind, address, plon, plat, 0.05, "High", "Rooftop")
    return None


def _country(lon: float, lat: float, lang: str | None) -> dict[str, Any] | None:
    w, s, e, n = _extent()
    if not (w <= lon <= e and s <= lat <= n):
        return None
    name = COUNTRY_NAMES.get(lang or "en", "Andorra")
    country = next(x for x in entities() if x.type == "CountryRegion")
    return _feature("CountryRegion", {"countryRegion": {"ISO": "AD", "name": name},
                                      "formattedAddress": name},
                    country.lon, country.lat, 0.2, "High", "Rooftop")


def reverse_features(lon: float, lat: float, *, types: tuple[str, ...] | None = None,
                     lang: str | None = None) -> list[dict[str, Any]]:
    """Give the features at a point: the most specific of ``types`` found there (or none)."""
    w, s, e, n = _extent()
    if not (w - 0.5 <= lon <= e + 0.5 and s - 0.5 <= lat <= n + 0.5):
        return []
    for kind in RESULT_TYPES:
        if types is not None and kind not in types:
            continue
        if kind == "Address":
            found = _address(lon, lat, lang)
        elif kind == "CountryRegion":
            found = _country(lon, lat, lang)
        else:
            found = _area(kind, lon, lat, lang)
        if found is not None:
            return [found]
    return []


def _coordinates(value: Any) -> tuple[float, float]:
    ok = isinstance(value, list) and len(value) == 2 and all(
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
        for v in value)
    if not ok or not (-180 <= value[0] <= 180 and -90 <= value[1] <= 90):
        text = ",".join(str(v) for v in value) if isinstance(value, list) else str(value)
        raise ItemError(BAD_ITEM, f"The provided coordinates ({text}) in coordinates field are "
                        "invalid or out of range")
    return float(value[0]), float(value[1])


def _types(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(v, str) for v in items):
        raise ItemError(BAD_ITEM, "resultTypes must be a list of entity types.")
    bad = [v for v in items if v.strip() not in RESULT_TYPES]
    if bad:
        raise ItemError(BAD_ITEM, f"resultTypes has unknown value(s) {', '.join(bad)}; the "
                        f"types are {', '.join(RESULT_TYPES)}.")
    return tuple(v.strip() for v in items)


def _view(value: Any) -> None:
    import re

    if value is None:
        return
    if not isinstance(value, str) or not (re.fullmatch(COUNTRY_CODE_PATTERN, value)
                                          or value.lower() == "auto"):
        raise ItemError(BAD_ITEM, "view must be an ISO 3166-1 alpha-2 code or Auto.")


def _answer(item: Any, lang: str | None) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise ItemError(BAD_ITEM, "A batch item must be an object with coordinates.")
    if "coordinates" not in item:
        raise ItemError(BAD_ITEM, "The coordinates field is required.")
    lon, lat = _coordinates(item["coordinates"])
    types = _types(item.get("resultTypes"))
    _view(item.get("view"))
    return {"type": "FeatureCollection",
            "features": reverse_features(lon, lat, types=types, lang=lang)}


def _single(request: Request) -> Reply:
    note_arrival(request, "reverse_geocode")
    text = request.param("coordinates")
    if not text:
        raise SandboxHTTPError(400, "BadRequest", "The 'coordinates' parameter is required: "
                               "longitude,latitude.", target="coordinates")
    try:
        coords: Any = [float(v) for v in text.split(",")]
        item = {"coordinates": coords, "resultTypes": request.param("resultTypes"),
                "view": request.param("view")}
        body = _answer(item, language_code(request))
    except (ItemError, ValueError) as err:
        message = err.message if isinstance(err, ItemError) else \
            "'coordinates' must be longitude,latitude."
        raise SandboxHTTPError(400, "BadRequest", message) from None
    return Reply(200, body, content_type="application/geo+json")


def _batch(request: Request) -> Reply:
    note_arrival(request, "reverse_geocode_batch")
    started = time.monotonic()
    body = request.json()
    items = body.get("batchItems") if isinstance(body, dict) else None
    if not isinstance(items, list) or not 1 <= len(items) <= REVERSE_GEOCODE_BATCH_SIZE:
        n = len(items) if isinstance(items, list) else 0
        raise SandboxHTTPError(400, "BadRequest", "batchItems must hold 1 to "
                               f"{REVERSE_GEOCODE_BATCH_SIZE} reverse geocoding queries; got "
                               f"{n}.")
    limit = float(request.sandbox.state.get("maps.batch_time_limit", BATCH_TIME_LIMIT))
    lang = language_code(request)
    out, ok = [], 0
    for item in items:
        try:
            answer = _answer(item, lang)
            ok += 1
        except ItemError as err:
            answer = {"error": {"code": err.code, "message": err.message}}
        answer = {**answer, **echoed_id(item)}
        out.append(answer)
        if time.monotonic() - started > limit:
            raise SandboxHTTPError(408, "Timeout", f"The batch took longer than {limit:g} "
                                   "seconds; send fewer queries per batch.")
    return Reply(200, {"summary": {"successfulRequests": ok, "totalRequests": len(items)},
                       "batchItems": out})


def register(router: Router, sandbox: Sandbox) -> None:
    """Add the reverse geocoding routes (one point, and the batch)."""
    router.add("GET", "/reverseGeocode", _single, family="maps", api_versions=API_VERSIONS,
               name="reverse_geocode")
    router.add("POST", "/reverseGeocode:batch", _batch, family="maps",
               api_versions=API_VERSIONS, name="reverse_geocode_batch")
