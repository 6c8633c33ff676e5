"""Geocode autocomplete (spec 2 §2.1, §4.1) over Andorra's places, points of interest and streets.

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
    SEARCH_API_VERSIONS,
)
from toolkit.sandbox.http import Reply, Request, Router, SandboxHTTPError
from toolkit.sandbox.maps import note_arrival
from toolkit.sandbox.maps.traffic import parse_bbox

if TYPE_CHECKING:
    from toolkit.sandbox.server import Sandbox

__all__ = ["API_VERSIONS", "RESULT_TYPES", "Entity", "entities", "register", "suggest"]

API_VERSIONS = SEARCH_API_VERSIONS

#: The enumeration the service accepts in ``resultTypes`` (spec 2 §2.1).
RESULT_TYPES = AUTOCOMPLETE_TYPES
ADDRESS_TYPES = ("Address", "RoadBlock")
GROUPS = AUTOCOMPLETE_TYPE_GROUPS
COUNTRY = {"ISO": "AD", "names": {"en": "Andorra", "ca": "Andorra", "es": "Andorra",
                                  "fr": "Andorre", "de": "Andorra", "pt": "Andorra",
                                  "ru": "Андорра"}}
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
    country_name = COUNTRY["names"].get(lang or "en", "Andorra")
    address: dict[str, Any] = {"countryRegion": {"ISO": COUNTRY["ISO"], "name": country_name}}
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


def suggest(query: str, *, ref: tuple[float, float] | None, bbox: tuple[float, ...] | None,
            country: str | None, types: set[str] | None, groups: set[str] | None, top: int,
            lang: str | None) -> list[dict[str, Any]]:
    """The ranked features for a query."""
    if country is not None and country.upper() != COUNTRY["ISO"]:
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
            props["name"] = COUNTRY["names"].get(lang or "", ent.name) \
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


def _autocomplete(request: Request) -> Reply:
    note_arrival(request, "autocomplete")
    query = request.param("query")
    if query is None or not query.strip():
        raise SandboxHTTPError(400, "BadRequest", "The 'query' parameter is required.")
    coords = request.param("coordinates")
    bbox_text = request.param("bbox")
    if not coords and not bbox_text:
        raise SandboxHTTPError(400, "BadRequest", "Either 'coordinates' or 'bbox' is required.")
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
    top_text = request.param("top", "5")
    try:
        top = int(top_text or "5")
    except ValueError:
        raise SandboxHTTPError(400, "BadRequest", "'top' must be an integer from 1 to 20."
                               ) from None
    if not 1 <= top <= 20:
        raise SandboxHTTPError(400, "BadRequest", "'top' must be an integer from 1 to 20.")
    for name in ("countryRegion", "view"):
        value = request.param(name)
        if value and not (ISO2.match(value) or (name == "view" and value.lower() == "auto")):
            raise SandboxHTTPError(400, "BadRequest", f"'{name}' must be an ISO 3166-1 alpha-2 "
                                   "code.")
    types = _list(request.param("resultTypes"), RESULT_TYPES, "resultTypes")
    groups = _list(request.param("resultTypeGroups"), GROUPS, "resultTypeGroups")
    lang = request.language.split("-")[0].lower() if request.language else None
    features = suggest(query, ref=ref, bbox=bbox, country=request.param("countryRegion"),
                       types=types, groups=groups, top=top, lang=lang)
    return Reply(200, {"type": "FeatureCollection", "features": features},
                 content_type="application/geo+json")


def catalog_rows(section: Any) -> list[dict[str, Any]]:
    """The towns and villages of the maps world, for :func:`toolkit.sandbox.catalog`."""
    rows = []
    for e in entities():
        if e.type == "PopulatedPlace" and e.weight <= 1:
            rows.append({"kind": "place", "subscription_id": None, "resource_group": None,
                         "name": e.name, "location": f"{e.lon:.5f},{e.lat:.5f}",
                         "detail": f"{e.parish} ({e.postcode}); maps search, routes, traffic"})
    return rows


def build_world(world: Any) -> tuple[Entity, ...]:
    """The maps section of the world: the entities (the road network loads on demand)."""
    return entities()


def register(router: Router, sandbox: Sandbox) -> None:
    """Add the autocomplete route."""
    router.add("GET", "/geocode:autocomplete", _autocomplete, family="maps",
               api_versions=API_VERSIONS, name="autocomplete")

