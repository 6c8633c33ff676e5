"""The shipped roads as a map background: their styles and the main roads a notebook shares.

The main roads of the whole network are carried once per notebook or report (see
:mod:`toolkit.explore._page`); each map adds the roads near its data on top
(:func:`toolkit.explore._common.add_roads`).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from toolkit._data.andorra import ATTRIBUTION
from toolkit.explore._layer import compact_layer

__all__ = ["ROAD_STYLE", "SHARED_ROAD_ZOOMS", "road_frame", "road_key", "shared_roads"]

#: Main road class -> (line weight, colour); any other class is a minor road.
ROAD_STYLE = {  # road class -> (weight, colour)
    "motorway": (3.0, "#9e9e9e"), "trunk": (3.0, "#9e9e9e"),
    "primary": (2.4, "#a8a8a8"), "primary_link": (1.8, "#a8a8a8"),
    "secondary": (2.0, "#bdbdbd"), "secondary_link": (1.5, "#bdbdbd"),
    "tertiary": (1.5, "#cfcfcf"),
}
#: The same, relative to the zoom a map of the whole shipped network opens at, for the main
#: roads a notebook carries once (:func:`shared_roads`).
SHARED_ROAD_ZOOMS = (1, 4)


def road_frame() -> Any:
    """Load the shipped roads.

    Returns a frame of ``highway`` (road class) and ``geometry`` (LineString, EPSG:4326).
    """
    from toolkit._data.andorra import roads

    return roads()


def road_key(weight: float, colour: str) -> str:
    return f"{weight:g} {colour}"


@functools.cache
def shared_roads() -> dict[str, dict[str, Any]]:
    """Return the main roads of the whole shipped network, one layer's data per road style.

    A notebook carries them once with Leaflet (see :mod:`toolkit.explore._page`), and the
    pages of its maps draw them from there instead of carrying roads of their own; minor roads
    (on maps of a town) stay in each map's page.

    Returns
    -------
    dict
        Road style key -> the data :func:`toolkit.explore._layer.compact_layer` returns.
    """
    import shapely

    roads = road_frame()
    out: dict[str, dict[str, Any]] = {}
    kinds = roads["highway"].astype(str)
    bounds = shapely.total_bounds(np.asarray(roads.geometry, dtype=object))
    for kind_style in sorted(set(ROAD_STYLE.values())):
        weight, colour = kind_style
        chosen = kinds.map(lambda k, style=kind_style: ROAD_STYLE.get(k) == style).to_numpy()
        if not chosen.any():
            continue
        geoms = np.asarray(roads.geometry, dtype=object)[chosen]
        merged = shapely.line_merge(shapely.multilinestrings(
            [p for g in geoms for p in getattr(g, "geoms", [g])]))
        out[road_key(weight, colour)] = compact_layer(
            [merged], bounds=bounds, colors=[colour], weight=weight, opacity=1.0,
            interactive=False, attribution=ATTRIBUTION, zooms=SHARED_ROAD_ZOOMS)
    return out
