"""Geocode autocomplete and geocoding over Andorra's places, points of interest and streets.

Autocomplete is spec 2 §2.1, §4.1; geocoding is Search ``GET /geocode``.

The entities come from the OpenStreetMap extract (``toolkit/_data/andorra_places.json.gz``, (c)
OpenStreetMap contributors, ODbL): the country, its towns, villages, hamlets and localities,
named points of interest (hotels, hospitals, churches, museums, fuel stations...) and the named
streets. The extract holds almost no house numbers, so each street gets house numbers 1..N (N
from its length, about one every 12 m), which is what address autocomplete needs.

Ranking: how the query prefix matches (whole-name prefix before word prefix), then the kind of
entity (towns first), then the distance to ``coordinates`` (or the centre of ``bbox``). ``bbox``
restricts the results when given; ``countryRegion``, ``resultTypes`` and ``resultTypeGroups``
filter (their intersection may be empty: then no features); ``Accept-Language`` picks the name
in that language where the data has one (Catalan, the local language, otherwise).

Geocoding matches whole names (accents, case and punctuation aside): a name equal to the query
is a High-confidence match (``Good``, or ``Ambiguous`` when several entities share it), a name
the query starts or a word of it begins with is Medium, anything else is not returned. Text after
a comma narrows to a locality, parish or postcode (``"Carrer Major, Ordino"``); a house number
gives an ``Address`` at the street (``"12 Avinguda Meritxell"``; a number past the street's end
goes up the hierarchy to the ``RoadBlock``, Medium); a street without a number is a
``RoadBlock``. Every match carries its point (``[lon, lat]``), a ``bbox`` and ``geocodePoints``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from toolkit._core.geo import haversine_m
from toolkit._data.andorra import place_records
from toolkit._spec.maps import (
    AUTOCOMPLETE_TYPE_GROUPS,
    AUTOCOMPLETE_TYPES,
    COUNTRY_CODE_PATTERN,
    GEOCODE_API_VERSIONS,
    GEOCODE_TOP,
    SEARCH_API_VERSIONS,
)
from toolkit.sandbox.http import Reply, Request, Router, SandboxHTTPError
from toolkit.sandbox.maps import note_arrival
from toolkit.sandbox.maps.traffic import parse_bbox

if TYPE_CHECKING:
    from toolkit.sandbox.server import Sandbox

__all__ = ["API_VERSIONS", "RESULT_TYPES", "Entity", "address_fields", "entities",
           "geocode_features", "language_code", "register", "suggest"]

API_VERSIONS = SEARCH_API_VERSIONS

#: The enumeration the service accepts in ``resultTypes`` (spec 2 §2.1).
RESULT_TYPES = AUTOCOMPLETE_TYPES
GROUPS = AUTOCOMPLETE_TYPE_GROUPS
COUNTRY_ISO = "AD"
COUNTRY_NAMES = {"en": "Andorra", "ca": "Andorra", "es": "Andorra", "fr": "Andorre",
                 "de": "Andorra", "pt": "Andorra", "ru": "Андорра"}
ISO2 = re.compile(COUNTRY_CODE_PATTERN)


def _norm(text: str) -> str:
    text = text.replace("’", "'").casefold()
    text = "".join(c for c in unicodedata.normalize("NFKD", text)
                   if not unicodedata.combining(c))
    return re.sub(r"\s+", " ", re.sub(r"[^\w' ]+", " ", text)).strip()


@dataclass
class Entity:
    """Something autocomplete can suggest."""

    group: str
    type: str
    name: str
    names: dict[str, str]
    lon: float
    lat: float
    locality: str | None
    parish: str | None
    postcode: str | None
    street: str | None = None
    numbers: int = 0
    weight: int = 3
    keys: tuple[str, ...] = ()


def _weight(place: str | None, kind: str) -> int:
    return {"country": 0, "town": 0, "village": 1, "hamlet": 2}.get(place or "", 3 if
                                                                   kind != "Address" else 2)


@lru_cache(maxsize=1)
def entities() -> tuple[Entity, ...]:
    """Every suggestible entity (loaded on first use)."""
    data = place_records()
    out: list[Entity] = []
    for p in data["places"]:
        if p["place"] == "country":
            ent = Entity("Place", "CountryRegion", p["name"], p.get("names") or {}, p["lon"],
                         p["lat"], None, None, None, weight=0)
        else:
            ent = Entity("Place", p["type"], p["name"], p.get("names") or {}, p["lon"], p["lat"],
                         p["locality"], p["parish"], p["postcode"],
                         weight=_weight(p["place"], p["type"]))
        out.append(ent)
    for p in data["pois"]:
        out.append(Entity("Place", p["type"], p["name"], p.get("names") or {}, p["lon"],
                          p["lat"], p["locality"], p["parish"], p["postcode"],
                          street=p.get("street"), weight=3))
    for s in data["streets"]:
        out.append(Entity("Address", "Address", s["name"], {}, s["lon"], s["lat"], s["locality"],
                          s["parish"], s["postcode"], street=s["name"],
                          numbers=int(max(2, min(200, s["length"] // 12))), weight=2))
    for e in out:
        e.keys = tuple(dict.fromkeys(_norm(n) for n in (e.name, *e.names.values()) if n))
    return tuple(out)


def _match(keys: tuple[str, ...], text: str) -> int | None:
    """0 when a name starts with the text, 1 when a word of it does, else None."""
    best = None
    for k in keys:
        if k.startswith(text):
            return 0
        if (" " + k).find(" " + text) >= 0 or ("'" + text) in k:
            best = 1
    return best


def _split_number(q: str) -> tuple[str, str | None]:
    m = re.match(r"^(\d+)[a-z]?\s+(.*)$", q)
    if m:
        return m.group(2), m.group(1)
    m = re.match(r"^(.*?)[ ,]+(\d+)[a-z]?$", q)
    if m:
        return m.group(1), m.group(2)
    return q, None


def _localized(ent: Entity, lang: str | None) -> str:
    if lang:
        return ent.names.get(lang) or ent.name
    return ent.name


def _address(ent: Entity, lang: str | None, number: str | None = None) -> dict[str, Any]:
    country_name = COUNTRY_NAMES.get(lang or "en", "Andorra")
    address: dict[str, Any] = {"countryRegion": {"ISO": COUNTRY_ISO, "name": country_name}}
    if ent.type == "CountryRegion":
        address["formattedAddress"] = country_name
        return address
    parts = []
    if ent.group == "Address":
        line = f"{ent.street}, {number}" if number else ent.street
        address.update({"streetName": ent.street, "addressLine": line})
        if number:
            address["streetNumber"] = number
        parts.append(line)
    elif ent.street:
        address["streetName"] = ent.street
        address["addressLine"] = ent.street
        parts.append(ent.street)
    if ent.locality:
        address["locality"] = ent.locality if ent.type != "PopulatedPlace" else ent.name
    if ent.parish:
        address["adminDistricts"] = [{"name": ent.parish, "shortName": ent.parish}]
    if ent.postcode:
        address["postalCode"] = ent.postcode
    town = address.get("locality")
    parts.append(" ".join(x for x in (ent.postcode, town) if x))
    parts.append(country_name)
    address["formattedAddress"] = ", ".join(p for p in parts if p)
    return address


#: The service's address object of an entity (and house number), in a language.
address_fields = _address


def suggest(query: str, *, ref: tuple[float, float] | None, bbox: tuple[float, ...] | None,
            country: str | None, types: set[str] | None, groups: set[str] | None, top: int,
            lang: str | None) -> list[dict[str, Any]]:
    """Rank the features for a query."""
    if country is not None and country.upper() != COUNTRY_ISO:
        return []
    text, number = _split_number(_norm(query))
    scored: list[tuple[float, int, dict[str, Any]]] = []
    for order, ent in enumerate(entities()):
        if types is not None and ent.type not in types:
            continue
        if groups is not None and ent.group not in groups:
            continue
        if bbox is not None:
            w, s, e, n = bbox
            if not (w <= ent.lon <= e and s <= ent.lat <= n):
                continue
        quality = _match(ent.keys, text) if text else (0 if number else None)
        if quality is None:
            if number is None or ent.group != "Address":
                continue
            quality = _match(ent.keys, _norm(query))
            if quality is None:
                continue
        km = float(haversine_m(ref[0], ref[1], ent.lon, ent.lat)) / 1000 if ref else 0.0
        base = quality * 10 + ent.weight + min(km, 500.0) / 5
        if ent.group == "Address" and number is not None:
            nums = [str(i) for i in range(1, ent.numbers + 1) if str(i).startswith(number)]
            for k, num in enumerate(nums[:top]):
                feat = {"typeGroup": "Address", "type": "Address",
                        "address": _address(ent, lang, num)}
                scored.append((base + (0 if num == number else 0.5 + k * 0.01), order, feat))
            continue
        props: dict[str, Any] = {"typeGroup": ent.group, "type": ent.type,
                                 "address": _address(ent, lang)}
        if ent.group == "Place":
            props["name"] = COUNTRY_NAMES.get(lang or "", ent.name) \
                if ent.type == "CountryRegion" else _localized(ent, lang)
        scored.append((base, order, props))
    scored.sort(key=lambda t: (t[0], t[1]))
    return [{"type": "Feature", "geometry": None, "properties": p} for _, _, p in scored[:top]]


def _list(value: str | None, allowed: tuple[str, ...], name: str) -> set[str] | None:
    if value is None or value == "":
        return None
    items = {v.strip() for v in value.split(",") if v.strip()}
    bad = sorted(items - set(allowed))
    if bad:
        raise SandboxHTTPError(400, "BadRequest", f"'{name}' has unknown value(s) "
                               f"{', '.join(bad)}.")
    return items


def _location(request: Request) -> tuple[tuple[float, float] | None,
                                        tuple[float, ...] | None]:
    """Read ``coordinates`` and ``bbox``, and the reference point they give.

    The reference point is the coordinates, else the bbox's centre.
    """
    coords = request.param("coordinates")
    bbox_text = request.param("bbox")
    ref = None
    if coords:
        try:
            lon, lat = (float(v) for v in coords.split(","))
        except ValueError:
            raise SandboxHTTPError(400, "BadRequest", "'coordinates' must be longitude,latitude."
                                   ) from None
        if not (-180 <= lon <= 180 and -90 <= lat <= 90):
            raise SandboxHTTPError(400, "BadRequest", "'coordinates' is out of range (the order "
                                   "is longitude,latitude).")
        ref = (lon, lat)
    bbox = None
    if bbox_text:
        bbox = parse_bbox(bbox_text)
        if bbox[2] - bbox[0] < 0.00001 or bbox[3] - bbox[1] < 0.00001:
            raise SandboxHTTPError(400, "BadRequest", "'bbox' must be at least 0.00001 degrees "
                                   "wide and high.")
        if ref is None:
            ref = ((bbox[0] + bbox[2]) / 2, (bbox[1] + bbox[3]) / 2)
    return ref, bbox


def _top(request: Request) -> int:
    low, high = GEOCODE_TOP
    rule = f"'top' must be an integer from {low} to {high}."
    try:
        top = int(request.param("top", "5") or "5")
    except ValueError:
        raise SandboxHTTPError(400, "BadRequest", rule) from None
    if not low <= top <= high:
        raise SandboxHTTPError(400, "BadRequest", rule)
    return top


def _codes(request: Request) -> None:
    for name in ("countryRegion", "view"):
        value = request.param(name)
        if value and not (ISO2.match(value) or (name == "view" and value.lower() == "auto")):
            raise SandboxHTTPError(400, "BadRequest", f"'{name}' must be an ISO 3166-1 alpha-2 "
                                   "code.")


def language_code(request: Request) -> str | None:
    """Give the primary language of the request's ``Accept-Language``, or ``None``."""
    return request.language.split("-")[0].lower() if request.language else None


_lang = language_code


def _autocomplete(request: Request) -> Reply:
    note_arrival(request, "autocomplete")
    query = request.param("query")
    if query is None or not query.strip():
        raise SandboxHTTPError(400, "BadRequest", "The 'query' parameter is required.")
    if not request.param("coordinates") and not request.param("bbox"):
        raise SandboxHTTPError(400, "BadRequest", "Either 'coordinates' or 'bbox' is required.")
    ref, bbox = _location(request)
    top = _top(request)
    _codes(request)
    types = _list(request.param("resultTypes"), RESULT_TYPES, "resultTypes")
    groups = _list(request.param("resultTypeGroups"), GROUPS, "resultTypeGroups")
    features = suggest(query, ref=ref, bbox=bbox, country=request.param("countryRegion"),
                       types=types, groups=groups, top=top, lang=_lang(request))
    return Reply(200, {"type": "FeatureCollection", "features": features},
                 content_type="application/geo+json")


#: Half the side of a match's bbox, degrees, by entity weight (towns are larger).
_EXTENT = {0: 0.02, 1: 0.008, 2: 0.003, 3: 0.0008}


def _whole(keys: tuple[str, ...], text: str) -> int | None:
    """0 when a name is the text, 1 when a name starts with it or a word of it does."""
    if text in keys:
        return 0
    return 1 if _match(keys, text) is not None else None


def _narrows(ent: Entity, context: list[str]) -> bool:
    """Tell whether the text after the commas names where the entity is.

    Its locality, parish or postcode, or the country.
    """
    where = {_norm(x) for x in (ent.locality, ent.parish, "Andorra") if x}
    for part in context:
        code = re.match(r"^(ad\d{3})\b\s*", part)
        if code:
            if ent.postcode is None or _norm(ent.postcode) != code.group(1):
                return False
            part = part[code.end():]
        if part and not any(w.startswith(part) for w in where):
            return False
    return True


def geocode_features(query: str, *, ref: tuple[float, float] | None,
                     bbox: tuple[float, ...] | None, country: str | None, top: int,
                     lang: str | None) -> list[dict[str, Any]]:
    """Rank the geocoding features for a query (see the module's notes)."""
    if country is not None and country.upper() != COUNTRY_ISO:
        return []
    head, *context = [p for p in (_norm(x) for x in query.split(",")) if p] or [""]
    context = [c for c in context if c not in ("andorra", "ad")]
    text, number = _split_number(head)
    found: list[tuple[float, int, int, Entity]] = []
    for order, ent in enumerate(entities()):
        quality = _whole(ent.keys, text) if text else None
        if quality is None or not _narrows(ent, context):
            continue
        if number is not None and ent.group != "Address":
            continue
        km = float(haversine_m(ref[0], ref[1], ent.lon, ent.lat)) / 1000 if ref else 0.0
        inside = bbox is None or (bbox[0] <= ent.lon <= bbox[2] and bbox[1] <= ent.lat <= bbox[3])
        score = quality * 10 + (0 if inside else 5) + ent.weight + min(km, 500.0) / 5
        found.append((score, order, quality, ent))
    found.sort(key=lambda t: (t[0], t[1]))
    exact = [ent.name for _, _, q, ent in found if q == 0]
    features = []
    for _, _, quality, ent in found[:top]:
        codes = ["Ambiguous" if exact.count(ent.name) > 1 else "Good"]
        confidence = "High" if quality == 0 else "Medium"
        kind, num = ent.type, None
        if ent.group == "Address":
            kind = "RoadBlock"
            if number is not None and int(number) <= ent.numbers:
                kind, num = "Address", number
            elif number is not None:
                codes, confidence = ["UpHierarchy"], "Medium"
        address = _address(ent, lang, num)
        if ent.group == "Place" and ent.type not in ("PopulatedPlace", "CountryRegion"):
            address["formattedAddress"] = f"{_localized(ent, lang)}, " \
                                          f"{address['formattedAddress']}"
        point = {"type": "Point", "coordinates": [round(ent.lon, 7), round(ent.lat, 7)]}
        half = _EXTENT.get(ent.weight, 0.0008)
        method = "Interpolation" if ent.group == "Address" else "Rooftop"
        features.append({
            "type": "Feature",
            "properties": {"address": address, "type": kind, "confidence": confidence,
                           "matchCodes": codes,
                           "geocodePoints": [{"geometry": point, "calculationMethod": method,
                                              "usageTypes": ["Display", "Route"]}]},
            "geometry": point,
            "bbox": [round(ent.lon - half, 7), round(ent.lat - half, 7),
                     round(ent.lon + half, 7), round(ent.lat + half, 7)],
        })
    return features


def _geocode(request: Request) -> Reply:
    note_arrival(request, "geocode")
    query = request.param("query")
    if query is None or not query.strip():
        parts = [request.param(n) for n in ("addressLine", "locality", "postalCode",
                                            "adminDistrict")]
        query = ", ".join(p for p in parts if p)
    if not query.strip():
        raise SandboxHTTPError(400, "BadRequest", "The 'query' parameter (or 'addressLine', "
                               "'locality', 'postalCode', 'adminDistrict') is required.")
    ref, bbox = _location(request)
    top = _top(request)
    _codes(request)
    features = geocode_features(query, ref=ref, bbox=bbox,
                                country=request.param("countryRegion"), top=top,
                                lang=_lang(request))
    return Reply(200, {"type": "FeatureCollection", "features": features},
                 content_type="application/geo+json")


def catalog_rows(section: Any) -> list[dict[str, Any]]:
    """List the towns and villages of the maps world, for :func:`toolkit.sandbox.catalog`."""
    rows = []
    for e in entities():
        if e.type == "PopulatedPlace" and e.weight <= 1:
            rows.append({"kind": "place", "subscription_id": None, "resource_group": None,
                         "name": e.name, "location": f"{e.lon:.5f},{e.lat:.5f}",
                         "detail": f"{e.parish} ({e.postcode}); maps search, routes, traffic"})
    return rows


def build_world(world: Any) -> tuple[Entity, ...]:
    """Build the maps section of the world: the entities (the road network loads on demand)."""
    return entities()


def register(router: Router, sandbox: Sandbox) -> None:
    """Add the autocomplete and geocode routes."""
    router.add("GET", "/geocode:autocomplete", _autocomplete, family="maps",
               api_versions=API_VERSIONS, name="autocomplete")
    router.add("GET", "/geocode", _geocode, family="maps", api_versions=GEOCODE_API_VERSIONS,
               name="geocode")

