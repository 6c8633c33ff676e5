"""Derive the sandbox weather service's coverage mask from Natural Earth's 1:110m land.

The weather service covers land, bodies of water surrounded by land and the ocean within about
50 nautical miles of a coast (spec 2 §4.5). The sandbox decides that with a coarse land mask:
the 1:110m countries of Natural Earth (public domain), merged into land masses with their holes
filled (so inland seas such as the Caspian count as surrounded by land), coordinates rounded to
0.01 degree, written to ``toolkit/sandbox/maps/data/land_110m.json.gz`` as lists of exterior
rings (longitude, latitude).

Run: ``.venv/bin/python scripts/derive_land.py [path/to/naturalearth_lowres.shp]`` (the default
is the copy of the Natural Earth countries that pyogrio ships with its tests).
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import geopandas as gpd
import shapely
from shapely.geometry import Polygon

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "toolkit" / "sandbox" / "maps" / "data" / "land_110m.json.gz"


def _default_source() -> Path:
    import pyogrio

    return (Path(pyogrio.__file__).parent / "tests" / "fixtures" / "naturalearth_lowres"
            / "naturalearth_lowres.shp")


def main(argv: list[str]) -> None:
    source = Path(argv[1]) if len(argv) > 1 else _default_source()
    countries = gpd.read_file(source).to_crs(4326)
    land = shapely.union_all(countries.geometry.values)
    polygons = list(getattr(land, "geoms", [land]))
    rings = []
    for poly in polygons:
        filled = Polygon(poly.exterior)
        coords = [[round(x, 2), round(y, 2)] for x, y in filled.exterior.coords]
        rings.append(coords)
    payload = {
        "source": "Natural Earth 1:110m countries (public domain), merged, holes filled",
        "rings": rings,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(gzip.compress(json.dumps(payload, separators=(",", ":")).encode(), 9))
    print(f"{len(rings)} land masses, {sum(len(r) for r in rings)} points -> {OUT} "
          f"({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main(sys.argv)
