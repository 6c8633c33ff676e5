"""What a map holds, as a frame: its layers, their features and tooltip fields."""

from __future__ import annotations

from typing import Any, cast

import pandas as pd

__all__ = ["map_summary"]


def map_summary(m: Any) -> pd.DataFrame:
    """One row per feature layer of a map made by :mod:`toolkit.explore`.

    Returns
    -------
    pandas.DataFrame
        ``layer`` (the name in the layer control), ``features`` (Int64), ``geometry_types``
        (sorted list), ``tooltip_fields`` (list), ``shown`` (boolean: on when the map opens).
    """
    import folium

    rows = []
    for group in m._children.values():
        if not isinstance(group, folium.FeatureGroup) or not group.control:
            continue
        features, types, fields = 0, set(), []  # type: tuple[int, set[str], list[str]]
        for child in group._children.values():
            if hasattr(child, "tooltip_fields"):  # a compact layer (toolkit.explore._layer)
                child = cast(Any, child)
                features += child.features
                types |= set(child.geometry_types)
                fields = list(child.tooltip_fields) or fields
            elif isinstance(child, folium.GeoJson):
                data = child.data
                feats = data.get("features", []) if data.get("type") == "FeatureCollection" \
                    else [data]
                features += len(feats)
                types |= {f["geometry"]["type"] for f in feats if f.get("geometry")}
                tooltip = getattr(child, "tooltip", None) or next(
                    (c for c in child._children.values()
                     if isinstance(c, folium.GeoJsonTooltip)), None)
                if tooltip is not None:
                    fields = list(tooltip.fields)
        rows.append({"layer": group.layer_name, "features": features,
                     "geometry_types": sorted(types), "tooltip_fields": fields,
                     "shown": bool(group.show)})
    return pd.DataFrame(rows, columns=["layer", "features", "geometry_types", "tooltip_fields",
                                       "shown"]).astype({"features": "Int64",
                                                         "shown": "boolean"})
