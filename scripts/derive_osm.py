"""Derive the sandbox's compact map files from the OpenStreetMap extract of Andorra.

Reads ``data/osm/andorra.osm.pbf`` with pyosmium (a development-only dependency: the derived
files are committed, so the toolkit never needs an OSM reader at run time) and writes two gzipped
JSON files into ``toolkit/_data/`` (read by the plots, the widgets and the sandbox alike):

``andorra_roads.json.gz``
    The drivable road network: nodes (longitude, latitude) and edges split at every junction,
    each with its geometry, length and the tags routing needs (``highway``, ``name``, ``ref``,
    ``maxspeed``, ``oneway``, ``bridge``, ``tunnel``, ``toll``, ``lanes``, ``surface``,
    ``width``, ``maxweight``, ``maxheight``, ``hgv``), plus the parish and locality it lies in.
``andorra_places.json.gz``
    Towns, villages, hamlets and named points of interest (with their names in other languages
    where the data has them) and the named streets, each with its parish, locality and postcode.

Map data (c) OpenStreetMap contributors, available under the Open Database License (ODbL 1.0);
the derived files are under the same licence (see ``data/README.md``).

Run: ``.venv/bin/pip install osmium && .venv/bin/python scripts/derive_osm.py``
"""

from __future__ import annotations

import gzip
import json
import math
import sys
from collections import Counter, defaultdict
from itertools import pairwise
from pathlib import Path

import osmium
import shapely
from shapely.geometry import Point, Polygon

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "data" / "osm" / "andorra.osm.pbf"
OUT = ROOT / "toolkit" / "_data"

DRIVABLE = {
    "motorway", "motorway_link", "trunk", "trunk_link", "primary", "primary_link", "secondary",
    "secondary_link", "tertiary", "tertiary_link", "unclassified", "residential", "service",
    "living_street", "road",
}
NO_ACCESS = {"no", "private"}
KEEP_TAGS = ("highway", "name", "ref", "maxspeed", "oneway", "bridge", "tunnel", "toll", "lanes",
             "surface", "width", "maxweight", "maxheight", "hgv", "junction")

#: Parish capitals (the seven parishes of Andorra) and their postcodes.
PARISHES = {
    "Canillo": "AD100", "Encamp": "AD200", "Ordino": "AD300", "La Massana": "AD400",
    "Andorra la Vella": "AD500", "Sant Julià de Lòria": "AD600", "Escaldes-Engordany": "AD700",
}
CAPITAL_NODE_NAME = {"les Escaldes": "Escaldes-Engordany"}

LANGS = ("ca", "en", "es", "fr", "de", "pt", "ru")

#: OSM tag -> autocomplete result type.
POI_TYPES = {
    ("amenity", "hospital"): "Hospital", ("amenity", "place_of_worship"): "Church",
    ("historic", "church"): "Church", ("tourism", "museum"): "Museum",
    ("amenity", "theatre"): "Theater", ("amenity", "arts_centre"): "Theater",
    ("amenity", "townhall"): "AdministrativeBuilding",
    ("amenity", "police"): "AdministrativeBuilding",
    ("amenity", "school"): "FacilityStructure", ("amenity", "post_office"): "FacilityStructure",
    ("amenity", "fuel"): "FacilityStructure", ("amenity", "parking"): "ParkingStructure",
    ("amenity", "bank"): "FinancialStructure", ("amenity", "atm"): "FinancialStructure",
    ("amenity", "bus_station"): "TransportationStructure",
    ("amenity", "restaurant"): "BusinessStructure", ("amenity", "cafe"): "BusinessStructure",
    ("amenity", "bar"): "BusinessStructure", ("amenity", "pub"): "BusinessStructure",
    ("amenity", "fast_food"): "BusinessStructure", ("amenity", "nightclub"): "BusinessStructure",
    ("amenity", "pharmacy"): "MedicalStructure", ("tourism", "hotel"): "TouristStructure",
    ("tourism", "apartments"): "TouristStructure", ("tourism", "chalet"): "TouristStructure",
    ("tourism", "attraction"): "TouristStructure", ("tourism", "information"): "TouristStructure",
    ("tourism", "artwork"): "Monument", ("historic", "monument"): "Monument",
    ("tourism", "viewpoint"): "ObservationPoint", ("tourism", "camp_site"): "Camp",
    ("tourism", "alpine_hut"): "Camp", ("tourism", "picnic_site"): "Park",
    ("tourism", "theme_park"): "AmusementPark", ("leisure", "playground"): "Playground",
    ("shop", "mall"): "Market", ("shop", "supermarket"): "Market",
}
PLACE_TYPES = {"town": "PopulatedPlace", "village": "PopulatedPlace", "hamlet": "PopulatedPlace",
               "locality": "Landform", "neighbourhood": "Neighborhood",
               "country": "CountryRegion"}


def _r(x: float) -> float:
    return round(x, 7)


class Reader(osmium.SimpleHandler):
    def __init__(self) -> None:
        super().__init__()
        self.ways: list[tuple[int, dict[str, str], list[tuple[int, float, float]]]] = []
        self.places: list[dict] = []
        self.pois: list[dict] = []
        self.parishes: dict[str, Polygon] = {}

    def way(self, w: osmium.osm.Way) -> None:
        tags = w.tags
        hw = tags.get("highway")
        if hw not in DRIVABLE:
            if tags.get("name") and any((k, tags.get(k)) in POI_TYPES for k in
                                        ("amenity", "tourism", "shop", "leisure", "historic")):
                pts = [(n.lon, n.lat) for n in w.nodes if n.location.valid()]
                if pts:
                    lon = sum(p[0] for p in pts) / len(pts)
                    lat = sum(p[1] for p in pts) / len(pts)
                    self._poi(tags, lon, lat)
            return
        if tags.get("access") in NO_ACCESS or tags.get("motor_vehicle") in NO_ACCESS or \
                tags.get("vehicle") in NO_ACCESS or tags.get("motorcar") in NO_ACCESS:
            return
        nodes = [(n.ref, n.lon, n.lat) for n in w.nodes if n.location.valid()]
        if len(nodes) < 2:
            return
        self.ways.append((w.id, {k: tags.get(k) for k in KEEP_TAGS if tags.get(k)}, nodes))

    def node(self, n: osmium.osm.Node) -> None:
        tags = n.tags
        if "place" in tags and tags.get("name"):
            names = {lang: tags.get(f"name:{lang}") for lang in LANGS
                     if tags.get(f"name:{lang}")}
            self.places.append({"name": tags["name"], "place": tags["place"],
                                "type": PLACE_TYPES.get(tags["place"], "Other"),
                                "names": names, "lon": _r(n.location.lon),
                                "lat": _r(n.location.lat)})
            return
        if tags.get("name"):
            self._poi(tags, n.location.lon, n.location.lat)

    def _poi(self, tags: osmium.osm.TagList, lon: float, lat: float) -> None:
        for key in ("amenity", "tourism", "shop", "leisure", "historic"):
            kind = POI_TYPES.get((key, tags.get(key)))
            if kind:
                names = {lang: tags.get(f"name:{lang}") for lang in LANGS
                         if tags.get(f"name:{lang}")}
                self.pois.append({"name": tags["name"], "type": kind,
                                  "osm": f"{key}={tags.get(key)}", "names": names,
                                  "street": tags.get("addr:street"),
                                  "housenumber": tags.get("addr:housenumber"),
                                  "lon": _r(lon), "lat": _r(lat)})
                return

    def area(self, a: osmium.osm.Area) -> None:
        if a.tags.get("boundary") != "administrative" or a.tags.get("admin_level") != "7":
            return
        for ring in a.outer_rings():
            poly = Polygon([(n.lon, n.lat) for n in ring])
            name = a.tags.get("name")
            self.parishes[name] = poly if name not in self.parishes else \
                self.parishes[name].union(poly)


def haversine(lon1: float, lat1: float, lon2: float, lat2: float) -> float:
    r = 6371008.8
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * r * math.asin(math.sqrt(h))


def main() -> int:
    if not SOURCE.exists():
        print(f"missing {SOURCE}", file=sys.stderr)
        return 1
    reader = Reader()
    reader.apply_file(str(SOURCE), locations=True)

    towns = [p for p in reader.places if p["place"] in ("town", "village", "hamlet")]
    capitals = {}
    for p in reader.places:
        name = CAPITAL_NODE_NAME.get(p["name"], p["name"])
        if p["place"] == "town" and name in PARISHES:
            capitals[name] = (p["lon"], p["lat"])
    missing = set(PARISHES) - set(capitals)
    if missing:
        print(f"parish capitals not found: {missing}", file=sys.stderr)
        return 1
    parish_polys = {name: shapely.make_valid(poly) for name, poly in reader.parishes.items()}

    def parish_of(lon: float, lat: float) -> str:
        pt = Point(lon, lat)
        for name, poly in parish_polys.items():
            if poly.contains(pt):
                return name
        return min(capitals, key=lambda c: haversine(lon, lat, *capitals[c]))

    def locality_of(lon: float, lat: float) -> str:
        best = min(towns, key=lambda t: haversine(lon, lat, t["lon"], t["lat"]))
        return best["name"]

    # split ways into edges at junctions
    use = Counter()
    for _, _, nodes in reader.ways:
        refs = [r for r, _, _ in nodes]
        use.update(set(refs))
        use[refs[0]] += 1
        use[refs[-1]] += 1
    node_index: dict[int, int] = {}
    node_coords: list[list[float]] = []

    def index_of(ref: int, lon: float, lat: float) -> int:
        if ref not in node_index:
            node_index[ref] = len(node_coords)
            node_coords.append([_r(lon), _r(lat)])
        return node_index[ref]

    ways_out: list[dict] = []
    edges_out: list[list] = []
    for way_id, tags, nodes in sorted(reader.ways):
        w = len(ways_out)
        mid = nodes[len(nodes) // 2]
        ways_out.append({"id": way_id, **tags, "parish": parish_of(mid[1], mid[2]),
                         "locality": locality_of(mid[1], mid[2])})
        start = 0
        for i in range(1, len(nodes)):
            if i == len(nodes) - 1 or use[nodes[i][0]] > 1:
                seg = nodes[start:i + 1]
                length = sum(haversine(a[1], a[2], b[1], b[2]) for a, b in pairwise(seg))
                if length > 0.05:
                    u = index_of(*seg[0])
                    v = index_of(*seg[-1])
                    inner = [[_r(lon), _r(lat)] for _, lon, lat in seg[1:-1]]
                    edges_out.append([u, v, w, round(length, 2), inner])
                start = i

    streets: dict[tuple[str, str], dict] = {}
    by_name: dict[str, list[int]] = defaultdict(list)
    for e in edges_out:
        name = ways_out[e[2]].get("name")
        if name:
            by_name[name].append(e)
    for name, edges in sorted(by_name.items()):
        for e in edges:
            u, v = node_coords[e[0]], node_coords[e[1]]
            lon, lat = (u[0] + v[0]) / 2, (u[1] + v[1]) / 2
            locality = locality_of(lon, lat)
            key = (name, locality)
            s = streets.setdefault(key, {"name": name, "locality": locality,
                                         "parish": parish_of(lon, lat), "length": 0.0,
                                         "lon": _r(lon), "lat": _r(lat),
                                         "ref": ways_out[e[2]].get("ref")})
            s["length"] = round(s["length"] + e[3], 1)
    street_list = [s for s in streets.values() if s["length"] >= 40]
    for s in street_list:
        s["postcode"] = PARISHES[s["parish"]]

    for p in reader.places + reader.pois:
        p["parish"] = parish_of(p["lon"], p["lat"])
        p["postcode"] = PARISHES[p["parish"]]
        p["locality"] = locality_of(p["lon"], p["lat"]) if p.get("place") != "country" else None

    OUT.mkdir(parents=True, exist_ok=True)
    roads = {"source": "OpenStreetMap extract of Andorra (2013-05-28)",
             "licence": "(c) OpenStreetMap contributors, ODbL 1.0",
             "nodes": node_coords, "ways": ways_out,
             "edge_fields": ["u", "v", "way", "length_m", "inner_coordinates"],
             "edges": edges_out}
    places = {"source": roads["source"], "licence": roads["licence"],
              "parishes": {n: {"postcode": c, "lon": capitals[n][0], "lat": capitals[n][1]}
                           for n, c in PARISHES.items()},
              "places": reader.places, "pois": reader.pois, "streets": street_list}
    for name, payload in (("andorra_roads.json.gz", roads), ("andorra_places.json.gz", places)):
        data = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
        with gzip.GzipFile(OUT / name, "wb", mtime=0) as fh:
            fh.write(data.encode())
    print(f"{len(node_coords)} nodes, {len(edges_out)} edges from {len(ways_out)} ways; "
          f"{len(reader.places)} places, {len(reader.pois)} points of interest, "
          f"{len(street_list)} streets -> {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
