"""Interactive maps of routes, snapped GPS traces, traffic incidents and place suggestions."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from toolkit._core.errors import ValidationError
from toolkit.explore._common import (
    add_layer,
    bounds_of,
    finish,
    geo_frame,
    has_geometry,
    new_map,
    ramp,
)
from toolkit.plot.maps import INCIDENT_COLORS

__all__ = ["incidents", "routes", "snapped_trace", "suggestions"]

#: Marker radius per incident severity.
SEVERITY_RADII = {"LowImpact": 5, "Minor": 7, "Moderate": 9, "Serious": 12}
_DELAY_MAX = 600.0  # seconds of traffic delay at the red end of the scale


def routes(df: pd.DataFrame, *, incidents: pd.DataFrame | None = None, tiles: str = "auto",
           height: int | str = 480) -> Any:
    """Main and alternative routes, coloured by their traffic delay, optionally with incidents.

    Parameters
    ----------
    df : GeoDataFrame
        The frame :func:`toolkit.route_directions` returns (``route_index``, ``geometry``;
        ``durationInSeconds``/``durationTrafficInSeconds`` give the delay). Failed queries (no
        geometry) are left out.
    incidents : GeoDataFrame, optional
        :func:`toolkit.traffic_incidents` to draw over the routes (a layer of their own).
    tiles : {"auto", "roads", "web"}
        Background: web tiles when reachable (``auto``) or the shipped roads.
    height : int or str
        Height of the map in the page.

    Returns
    -------
    folium.Map
        Layers ``main routes`` and ``alternatives`` (dashed), each feature's tooltip holding the
        frame's columns and ``delay_s``; ``incidents`` when given.
    """
    frame = geo_frame(df, ["route_index"], "explore.routes")
    drawn = frame[has_geometry(frame["geometry"])].copy()
    if "durationTrafficInSeconds" in drawn and "durationInSeconds" in drawn:
        delay = (drawn["durationTrafficInSeconds"].astype("Float64")
                 - drawn["durationInSeconds"].astype("Float64")).clip(lower=0)
    else:
        delay = pd.Series(pd.NA, index=drawn.index, dtype="Float64")
    drawn["delay_s"] = delay
    colours = ramp(delay.astype(object).where(delay.notna(), None).tolist(), 0, _DELAY_MAX)
    series = [drawn["geometry"]]
    if incidents is not None:
        series.append(geo_frame(incidents, [], "explore.routes(incidents=)")["geometry"])
    m = new_map(bounds_of(*series), tiles=tiles, frames=[df, *([incidents] if incidents is
                                                                    not None else [])],
                features=len(drawn), height=height)
    main = (drawn["route_index"] == 0).fillna(False).to_numpy()
    add_layer(m, drawn[main], "main routes",
              colors=[c for c, k in zip(colours, main, strict=True) if k], weight=5)
    add_layer(m, drawn[~main], "alternatives",
              colors=[c for c, k in zip(colours, main, strict=True) if not k], weight=3,
              dash="6 6", opacity=0.8)
    if incidents is not None:
        _incident_layers(m, incidents)
    legend = [("no delay", "#2e7d32"), ("some delay", "#fdd835"),
              (f"{_DELAY_MAX / 60:.0f}+ min delay", "#c62828")]
    return finish(m, legend=legend, title="traffic delay")


def snapped_trace(raw: Any, snapped: pd.DataFrame, *, tiles: str = "auto",
                  height: int | str = 480) -> Any:
    """A GPS trace before (grey) and after snapping (coloured by speed limit).

    Parameters
    ----------
    raw : points
        The points as recorded (anything :func:`toolkit.snap_to_roads` accepts).
    snapped : GeoDataFrame
        The frame :func:`toolkit.snap_to_roads` returned (``inputIndex``, ``isInterpolated``,
        ``geometry``, and ``speedLimitInKilometersPerHour`` when it was asked for).
    tiles : {"auto", "roads", "web"}
    height : int or str

    Returns
    -------
    folium.Map
        Layers ``recorded`` (hidden at first past 5,000 points) and ``snapped``; a snapped
        point's tooltip holds the frame's columns. Large traces are drawn on a canvas.
    """
    import geopandas as gpd
    import shapely

    from toolkit._core.geo import to_lonlat

    frame = geo_frame(snapped, ["inputIndex"], "explore.snapped_trace")
    xy = to_lonlat(raw, "raw")
    recorded = gpd.GeoDataFrame({"point": np.arange(len(xy))},
                                geometry=shapely.points(xy), crs="EPSG:4326")
    m = new_map(bounds_of(recorded["geometry"], frame["geometry"]), tiles=tiles,
                frames=[snapped], features=len(recorded) + len(frame), height=height)
    add_layer(m, recorded, "recorded", colors="#9e9e9e", radius=2,
              show=len(recorded) <= 5_000)
    limits = frame.get("speedLimitInKilometersPerHour")
    if limits is not None and limits.notna().any():
        values = limits.astype(object).where(limits.notna(), None).tolist()
        colours = ramp(values, 30, 90, palette=("#440154", "#3b528b", "#21918c", "#5ec962",
                                                "#fde725"))
        legend = [("30 km/h", "#440154"), ("60 km/h", "#21918c"), ("90 km/h", "#fde725")]
    else:
        colours, legend = ["#1565c0"] * len(frame), [("snapped", "#1565c0")]
    add_layer(m, frame, "snapped", colors=colours, radius=3)
    return finish(m, legend=[("recorded", "#9e9e9e"), *legend], title="speed limit")


def _incident_layers(m: Any, df: pd.DataFrame) -> None:
    import geopandas as gpd

    kinds = df["incidentType"].astype(str).tolist()
    colours = [INCIDENT_COLORS.get(k, "#616161") for k in kinds]
    for severity, radius in SEVERITY_RADII.items():
        rows = (df["severity"].astype(object) == severity).to_numpy()
        if rows.any():
            add_layer(m, df[rows], f"incidents: {severity}",
                      colors=[c for c, k in zip(colours, rows, strict=True) if k],
                      radius=radius)
    known = df["severity"].astype(object).isin(list(SEVERITY_RADII)).to_numpy()
    if (~known).any():
        add_layer(m, df[~known], "incidents: other", colors="#616161", radius=6)
    ends = df[has_geometry(df["endPoint"])]
    if len(ends):
        import shapely

        lines: list[Any] = [shapely.LineString([a, b]) if b is not None else None
                 for a, b in zip(ends["geometry"], ends["endPoint"], strict=True)]
        extent = gpd.GeoDataFrame(ends.drop(columns=["geometry", "endPoint"]),
                                  geometry=lines, crs="EPSG:4326")
        add_layer(m, extent, "incident extents", weight=2, dash="3 4",
                  colors=[INCIDENT_COLORS.get(str(k), "#616161")
                          for k in ends["incidentType"]])


def incidents(df: pd.DataFrame, *, tiles: str = "auto", height: int | str = 480) -> Any:
    """Traffic incidents by type (colour) and severity (size), with a line to where each ends.

    Parameters
    ----------
    df : GeoDataFrame
        The frame :func:`toolkit.traffic_incidents` returns (``incidentType``, ``severity``,
        ``geometry``, ``endPoint``).
    tiles : {"auto", "roads", "web"}
    height : int or str

    Returns
    -------
    folium.Map
        One layer per severity (``incidents: Serious``...), and ``incident extents`` (start to
        end point); tooltips hold the frame's columns.
    """
    frame = geo_frame(df, ["incidentType", "severity", "endPoint"], "explore.incidents")
    if frame.empty:
        raise ValidationError("df", "no incidents", "explore.incidents needs incidents to draw")
    m = new_map(bounds_of(frame["geometry"], frame["endPoint"]), tiles=tiles, frames=[df],
                features=len(frame), height=height)
    _incident_layers(m, frame)
    present = sorted(set(frame["incidentType"].astype(str)))
    return finish(m, legend=[(k, INCIDENT_COLORS.get(k, "#616161")) for k in present],
                  title="incident type")


def suggestions(df: pd.DataFrame, *, tiles: str = "auto", height: int | str = 400) -> Any:
    """Place suggestions from :func:`toolkit.autocomplete` that have a position, one marker per
    suggestion in rank order (darker for better ranks).

    Parameters
    ----------
    df : GeoDataFrame
        The frame :func:`toolkit.autocomplete` returns (``query``, ``rank``, ``geometry``).
    tiles : {"auto", "roads", "web"}
    height : int or str

    Returns
    -------
    folium.Map
        One layer per query; tooltips hold the frame's columns.

    Raises
    ------
    ValidationError
        No suggestion has a position (the service sends none for some result types).
    """
    frame = geo_frame(df, ["query", "rank"], "explore.suggestions")
    placed = frame[has_geometry(frame["geometry"])]
    if placed.empty:
        raise ValidationError("df", "no positions", "explore.suggestions needs suggestions "
                              "with a geometry (the service sent none for these)")
    m = new_map(bounds_of(placed["geometry"]), tiles=tiles, frames=[df],
                features=len(placed), height=height)
    for query, rows in placed.groupby("query", sort=False, observed=True):
        colours = ramp(rows["rank"].astype(float).tolist(), 0, 10,
                       palette=("#0d47a1", "#1976d2", "#42a5f5", "#90caf9"))
        add_layer(m, rows, f"suggestions: {query}", colors=colours, radius=7)
    return finish(m)
