"""The map of Andorra the toolkit ships (derived from OpenStreetMap, ODbL).

Its drivable roads and its named places, as raw records (for the sandbox) and as frames (for plots
and widgets).

Everything is read on first use and kept for the process; nothing is read at import.
``ATTRIBUTION`` is the credit line every picture drawn from this data carries.
"""

from __future__ import annotations

import gzip
import logging
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    import geopandas as gpd
    import pandas as pd

logger = logging.getLogger(__name__)

__all__ = ["ATTRIBUTION", "place_records", "road_records", "roads", "towns"]

#: The credit line of the data (its licence asks for it wherever it is shown).
ATTRIBUTION = "© OpenStreetMap contributors, ODbL"


def _read(name: str) -> dict[str, Any]:
    with resources.files(__package__ or "toolkit._data").joinpath(name).open("rb") as fh:
        data = orjson.loads(gzip.decompress(fh.read()))
    if not isinstance(data, dict):
        raise ValueError(f"{name}: not a JSON object")
    return data


@lru_cache(maxsize=1)
def road_records() -> dict[str, Any]:
    """Load the road network as derived: ``nodes``, ``edges`` and ``ways``.

    ``nodes`` are (lon, lat) pairs, ``edges`` (start node, end node, way, length in metres, inner
    points) and ``ways`` the OpenStreetMap tags routing needs.
    """
    return _read("andorra_roads.json.gz")


@lru_cache(maxsize=1)
def place_records() -> dict[str, Any]:
    """Load the places as derived: ``parishes``, ``places``, ``pois`` and ``streets``.

    ``places`` are the country, towns, villages, hamlets and localities, ``pois`` the named points
    of interest.
    """
    return _read("andorra_places.json.gz")


@lru_cache(maxsize=1)
def _roads() -> gpd.GeoDataFrame:
    import geopandas as gpd
    import numpy as np
    import shapely

    data = road_records()
    nodes = np.asarray(data["nodes"], dtype=float)
    ways = data["ways"]
    lines, highway, name = [], [], []
    for u, v, w, _length, inner in data["edges"]:
        coords = np.vstack([nodes[u], np.asarray(inner, dtype=float).reshape(-1, 2), nodes[v]])
        lines.append(shapely.LineString(coords))
        highway.append(ways[w].get("highway", "road"))
        name.append(ways[w].get("name"))
    frame = gpd.GeoDataFrame({"highway": highway, "name": name}, geometry=lines, crs="EPSG:4326")
    frame = frame.astype({"highway": "string", "name": "string"})
    frame.attrs["attribution"] = ATTRIBUTION
    logger.debug("road background: %d edges", len(frame))
    return frame


def roads() -> gpd.GeoDataFrame:
    """Load the drivable roads of Andorra, one row per road segment between junctions.

    Returns
    -------
    geopandas.GeoDataFrame
        ``highway`` (string: the OpenStreetMap road class), ``name`` (string, may be missing),
        ``geometry`` (LineString, lon/lat, EPSG:4326); ``attrs["attribution"]`` holds the credit
        line. A copy: changing it does not change what the plots draw.
    """
    return _roads().copy()


def towns() -> pd.DataFrame:
    """Load the towns and villages of Andorra, with their centres.

    Returns
    -------
    pandas.DataFrame
        ``name`` (string), ``lat``, ``lon`` (float); ``attrs["attribution"]`` holds the credit
        line.
    """
    import pandas as pd

    # centres to five decimals (about a metre), as the sandbox's catalogue gives them
    rows = [(p["name"], round(float(p["lat"]), 5), round(float(p["lon"]), 5))
            for p in place_records()["places"]
            if p.get("type") == "PopulatedPlace" and p.get("place") in ("town", "village")]
    frame = pd.DataFrame(rows, columns=["name", "lat", "lon"]).astype({"name": "string"})
    frame.attrs["attribution"] = ATTRIBUTION
    return frame
