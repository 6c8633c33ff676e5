"""Interactive maps: routes, GPS traces, incidents, suggestions, addresses, reachable ranges."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
    spread_frame,
)
from toolkit.explore._describe import describe_map
from toolkit.plot._style import NEUTRAL, SERIES_COLORS
from toolkit.plot.description import counted, listed, sentences
from toolkit.plot.maps import INCIDENT_COLORS, RANGE_CMAP

if TYPE_CHECKING:
    import folium

__all__ = ["addresses", "incidents", "reachable_ranges", "routes", "snapped_trace",
           "suggestions"]

#: Marker radius per incident severity.
SEVERITY_RADII = {"LowImpact": 5, "Minor": 7, "Moderate": 9, "Serious": 12}
#: The delay colour scale: traffic delay as a share of the free-flow time (upper bound, colour,
#: legend label).
DELAY_STEPS = ((0.05, "#2e7d32", "under 5 %"), (0.15, "#9ccc65", "5 to 15 %"),
               (0.30, "#fdd835", "15 to 30 %"), (0.50, "#fb8c00", "30 to 50 %"),
               (float("inf"), "#c62828", "50 % or more"))
#: Alternatives' colours (Okabe and Ito's colour-blind-safe palette; the main route is
#: coloured by its delay).
ALTERNATIVE_COLORS = ("#0072B2", "#CC79A7", "#56B4E9", "#E69F00", "#009E73")
#: Start, stop and end markers of a route.
END_COLORS = {"start": "#000000", "stop": "#F0E442", "end": "#FFFFFF"}


def delay_share(df: pd.DataFrame) -> pd.Series:
    """Compute the traffic delay as a share of the free-flow travel time, per route.

    The share is Float64, missing where the times are not known.
    """
    if "durationTrafficInSeconds" not in df or "durationInSeconds" not in df:
        return pd.Series(pd.NA, index=df.index, dtype="Float64")
    free = df["durationInSeconds"].astype("Float64")
    delay = (df["durationTrafficInSeconds"].astype("Float64") - free).clip(lower=0)
    return (delay / free.where(free > 0)).astype("Float64")


def delay_colour(share: Any) -> str:
    """Give the colour of a delay share on :data:`DELAY_STEPS` (grey when unknown)."""
    if share is None or pd.isna(share):
        return "#9e9e9e"
    return next(colour for upper, colour, _ in DELAY_STEPS if float(share) < upper)


def _route_ends(drawn: pd.DataFrame) -> pd.DataFrame:
    """Start, stops (where one leg ends and the next starts) and end of each main route."""
    import geopandas as gpd
    import shapely

    rows: list[dict[str, Any]] = []
    for _, r in drawn.iterrows():
        geom = r["geometry"]
        parts = list(getattr(geom, "geoms", [geom]))
        if not parts or parts[0].is_empty:
            continue
        trip = r.get("optionalId") if isinstance(r.get("optionalId"), str) else \
            f"query {r.get('query_index')}"
        legs = r.get("leg_count")
        points = [("start", shapely.Point(parts[0].coords[0]))]
        if not pd.isna(legs) and int(legs) == len(parts) > 1:
            points += [(f"stop {i + 1}", shapely.Point(p.coords[-1]))
                       for i, p in enumerate(parts[:-1])]
        points.append(("end", shapely.Point(parts[-1].coords[-1])))
        rows += [{"point": name, "route": trip, "geometry": pt} for name, pt in points]
    return gpd.GeoDataFrame(rows, columns=["point", "route", "geometry"], crs="EPSG:4326")


def routes(df: pd.DataFrame, *, incidents: pd.DataFrame | None = None, tiles: str = "auto",
           height: int | str = 480, tz: str | None = None) -> folium.Map:
    """Map main and alternative routes, the main ones coloured by their traffic delay.

    The main routes are coloured by their traffic delay relative to their free-flow time, with
    their start, stops and end; optionally with incidents.

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
    tz : str, optional
        Time zone of the times in tooltips and popups (an IANA name such as
        ``"Europe/Andorra"``); UTC when omitted.

    Returns
    -------
    folium.Map
        Layers ``main routes`` (colour: delay as a share of the no-traffic time, see
        :data:`DELAY_STEPS`), ``alternatives`` (dashed, one colour of
        :data:`ALTERNATIVE_COLORS` per alternative), ``start, stops and end``, and the incident
        layers when given. Tooltips: route, distance (km), times (min), delay (min and %),
        departure and arrival; the popup holds the full record.
    """
    frame = geo_frame(df, ["route_index"], "explore.routes")
    drawn = frame[has_geometry(frame["geometry"])].copy()
    share = delay_share(drawn)
    series = [drawn["geometry"]]
    if incidents is not None:
        series.append(geo_frame(incidents, [], "explore.routes(incidents=)")["geometry"])
    m = new_map(bounds_of(*series), tiles=tiles, frames=[df, *([incidents] if incidents is
                                                                    not None else [])],
                features=len(drawn), height=height)
    main = (drawn["route_index"] == 0).fillna(False).to_numpy()
    alt_index = drawn["route_index"].fillna(1).astype(int).to_numpy()
    alt_colours = [ALTERNATIVE_COLORS[(i - 1) % len(ALTERNATIVE_COLORS)]
                   for i in alt_index[~main]]
    add_layer(m, drawn[~main], "alternatives", colors=alt_colours, weight=4, dash="8 6",
              opacity=0.9, operation="route_directions", tz=tz)
    add_layer(m, drawn[main], "main routes",
              colors=[delay_colour(v) for v in share[main]], weight=6,
              operation="route_directions", tz=tz)
    ends = _route_ends(drawn[main])
    add_layer(m, ends, "start, stops and end", radius=6,
              colors=[END_COLORS[str(p).split(" ")[0]] for p in ends["point"]],
              operation="route_ends", spread=False, outline="#000000")
    if incidents is not None:
        _incident_layers(m, incidents, tz=tz)
    shown_alts = sorted(set(alt_index[~main]))
    legend: list[tuple[str, ...]] = [(label, colour, "line") for _, colour, label in DELAY_STEPS]
    legend += [(f"alternative {i} (dashed)", ALTERNATIVE_COLORS[(i - 1) %
                                                              len(ALTERNATIVE_COLORS)], "dashed")
               for i in shown_alts]
    legend += [(name, colour, "dot") for name, colour in END_COLORS.items()
               if name != "stop" or ends["point"].str.startswith("stop").any()]
    m = finish(m, legend=legend, title="delay in traffic (share of the free-flow time)")
    return _describe_routes(m, drawn, main, share, ends, incidents, [df, incidents])


def _describe_routes(m: folium.Map, drawn: pd.DataFrame, main: np.ndarray, share: pd.Series,
                     ends: pd.DataFrame, incidents: pd.DataFrame | None,
                     frames: list[Any]) -> folium.Map:
    """Name the route map and sum it up: routes, their delays and lengths, the incidents."""
    steps = [next(label for upper, _, label in DELAY_STEPS if float(v) < upper)
             for v in share[main] if not pd.isna(v)]
    delays = ", ".join(f"{steps.count(label):,} {label}" for _, _, label in DELAY_STEPS
                       if label in steps)
    km = drawn.loc[main, "distanceInMeters"].astype(float) / 1000 \
        if "distanceInMeters" in drawn.columns else pd.Series(dtype=float)
    what = (f"{counted(int(main.sum()), 'main route')} and "
            f"{counted(int((~main).sum()), 'alternative')}")
    return describe_map(
        m, what,
        f"Main routes coloured by their delay in traffic: {delays}" if delays else "",
        f"Main routes from {km.min():.1f} to {km.max():.1f} km long" if km.notna().any()
        else "",
        f"{counted(int(ends['point'].str.startswith('stop').sum()), 'stop')} marked"
        if len(ends) and ends["point"].str.startswith("stop").any() else "",
        _incident_words(incidents) if incidents is not None and len(incidents) else "",
        frames=[f for f in frames if f is not None])


def snapped_trace(raw: Any, snapped: pd.DataFrame, *, tiles: str = "auto",
                  height: int | str = 480) -> folium.Map:
    """Map a GPS trace before (grey) and after snapping (coloured by speed limit).

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
        point's tooltip holds its input index, road, speed limit (km/h) and whether it was
        interpolated, its popup the full record. Large traces are drawn on a canvas.
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
    add_layer(m, recorded, "recorded", colors="#9e9e9e", radius=2, spread=False,
              show=len(recorded) <= 5_000)
    limits = frame.get("speedLimitInKilometersPerHour")
    if limits is not None and limits.notna().any():
        values = limits.astype(object).where(limits.notna(), None).tolist()
        colours = ramp(values, 30, 90, palette=("#440154", "#3b528b", "#21918c", "#5ec962",
                                                "#fde725"))
        legend = [("30 km/h", "#440154"), ("60 km/h", "#21918c"), ("90 km/h", "#fde725")]
    else:
        colours, legend = ["#1565c0"] * len(frame), [("snapped", "#1565c0")]
    add_layer(m, frame, "snapped", colors=colours, radius=3, spread=False,
              operation="snap_to_roads")
    m = finish(m, legend=[("recorded", "#9e9e9e"), *legend], title="speed limit")
    speeds = ""
    if limits is not None and limits.notna().any():
        speeds = f"Snapped points coloured by speed limit, from {float(limits.min()):.0f} " \
                 f"to {float(limits.max()):.0f} km/h"
    added = int(frame["isInterpolated"].fillna(False).astype(bool).sum()) \
        if "isInterpolated" in frame.columns else 0
    return describe_map(m, f"{counted(len(recorded), 'recorded point')} and "
                           f"{counted(len(frame), 'snapped point')}",
                        f"{added:,} snapped points interpolated" if added else "", speeds,
                        frames=[snapped])


def _incident_words(df: pd.DataFrame) -> str:
    """Say how many incidents there are, by type and by severity, and the roads closed."""
    kinds = df["incidentType"].astype(str).value_counts()
    severities = df["severity"].astype(object).fillna("unknown").astype(str).value_counts()
    closed = int(df["isRoadClosed"].fillna(False).astype(bool).sum()) \
        if "isRoadClosed" in df.columns else 0
    return sentences(
        f"{counted(len(df), 'traffic incident')}: "
        + ", ".join(f"{n:,} {k}" for k, n in kinds.items()),
        "By severity: " + ", ".join(f"{n:,} {k}" for k, n in severities.items()),
        f"{closed:,} with the road closed" if closed else "")


def _incident_layers(m: Any, df: pd.DataFrame, *, tz: str | None = None) -> None:
    import geopandas as gpd

    points = spread_frame(m, df, max(SEVERITY_RADII.values()))
    kinds = df["incidentType"].astype(str).tolist()
    colours = [INCIDENT_COLORS.get(k, "#616161") for k in kinds]
    for severity, radius in SEVERITY_RADII.items():
        rows = (df["severity"].astype(object) == severity).to_numpy()
        if rows.any():
            add_layer(m, points[rows], f"incidents: {severity}", spread=False,
                      colors=[c for c, k in zip(colours, rows, strict=True) if k],
                      radius=radius, operation="traffic_incidents", tz=tz)
    known = df["severity"].astype(object).isin(list(SEVERITY_RADII)).to_numpy()
    if (~known).any():
        add_layer(m, points[~known], "incidents: other", spread=False, colors="#616161",
                  radius=6,
                  operation="traffic_incidents", tz=tz)
    ends = df[has_geometry(df["endPoint"])]
    if len(ends):
        import shapely

        lines: list[Any] = [shapely.LineString([a, b]) if b is not None else None
                 for a, b in zip(ends["geometry"], ends["endPoint"], strict=True)]
        extent = gpd.GeoDataFrame(ends.drop(columns=["geometry", "endPoint"]),
                                  geometry=lines, crs="EPSG:4326")
        add_layer(m, extent, "incident extents", weight=2, dash="3 4", tz=tz,
                  operation="traffic_incidents",
                  colors=[INCIDENT_COLORS.get(str(k), "#616161")
                          for k in ends["incidentType"]])


def incidents(df: pd.DataFrame, *, tiles: str = "auto", height: int | str = 480,
              tz: str | None = None) -> folium.Map:
    """Traffic incidents by type (colour) and severity (size), with a line to where each ends.

    Parameters
    ----------
    df : GeoDataFrame
        The frame :func:`toolkit.traffic_incidents` returns (``incidentType``, ``severity``,
        ``geometry``, ``endPoint``).
    tiles : {"auto", "roads", "web"}
    height : int or str
    tz : str, optional
        Time zone of the times shown (UTC when omitted).

    Returns
    -------
    folium.Map
        One layer per severity (``incidents: Serious``...), and ``incident extents`` (start to
        end point); tooltips hold the type, severity, place, delay, closure and times, popups
        the full record. Incidents at the same place are spread around it.
    """
    frame = geo_frame(df, ["incidentType", "severity", "endPoint"], "explore.incidents")
    if frame.empty:
        raise ValidationError("df", "no incidents", "explore.incidents needs incidents to draw")
    m = new_map(bounds_of(frame["geometry"], frame["endPoint"]), tiles=tiles, frames=[df],
                features=len(frame), height=height)
    _incident_layers(m, frame, tz=tz)
    present = sorted(set(frame["incidentType"].astype(str)))
    m = finish(m, legend=[(k, INCIDENT_COLORS.get(k, "#616161")) for k in present],
           title="incident type")
    return describe_map(m, counted(len(frame), "traffic incident"), _incident_words(frame),
                        frames=[df])


def suggestions(df: pd.DataFrame, *, tiles: str = "auto", height: int | str = 400) -> folium.Map:
    """Map the place suggestions from :func:`toolkit.autocomplete` that have a position.

    One marker per suggestion in rank order (darker for better ranks).

    Parameters
    ----------
    df : GeoDataFrame
        The frame :func:`toolkit.autocomplete` returns (``query``, ``rank``, ``geometry``).
    tiles : {"auto", "roads", "web"}
    height : int or str

    Returns
    -------
    folium.Map
        One layer per query; tooltips hold the suggestion, its rank, type and address (for a
        :func:`toolkit.geocode` frame: the query, match, type and confidence), popups the full
        record.

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
    m = finish(m)
    label = next((c for c in ("name", "match", "address.formattedAddress")
                  if c in placed.columns), None)
    best = [f"{q}: {rows.sort_values('rank', kind='stable')[label].astype(str).iloc[0]}"
            for q, rows in placed.groupby("query", sort=False, observed=True)] if label else []
    return describe_map(m, f"{counted(len(placed), 'place suggestion')} for "
                           f"{counted(placed['query'].nunique(), 'query', 'queries')}",
                        f"The first of each: {listed(best, 6)}" if best else "", frames=[df])


def addresses(df: pd.DataFrame, *, tiles: str = "auto", height: int | str = 480) -> folium.Map:
    """Map the addresses :func:`toolkit.reverse_geocode` found, beside the points asked.

    Parameters
    ----------
    df : GeoDataFrame
        The frame :func:`toolkit.reverse_geocode` returns (``input_point``, ``type``,
        ``geometry``).
    tiles : {"auto", "roads", "web"}
    height : int or str

    Returns
    -------
    folium.Map
        One layer per type of entity found (``addresses: Address``...), coloured apart, and the
        layer ``points asked`` (grey, the points themselves); tooltips hold the point's index,
        the address, its type, confidence and distance from the point, popups the full record.

    Raises
    ------
    ValidationError
        The frame holds no point asked.
    """
    frame = geo_frame(df, ["input_point", "type"], "explore.addresses")
    asked = has_geometry(frame["input_point"])
    if not asked.any():
        raise ValidationError("df", "no points", "explore.addresses needs the points asked")
    found = has_geometry(frame["geometry"])
    both = pd.concat([frame["input_point"][asked], frame["geometry"][found]])
    m = new_map(bounds_of(both), tiles=tiles, frames=[df], features=int(asked.sum() + found.sum()),
                height=height)
    kinds = frame["type"].astype(object).where(found, None)
    legend: list[tuple[str, ...]] = []
    for k, kind in enumerate(dict.fromkeys(kinds.dropna().astype(str))):
        rows = frame[(kinds.astype(str) == kind).to_numpy() & found]
        colour = SERIES_COLORS[k % len(SERIES_COLORS)]
        add_layer(m, rows, f"addresses: {kind}", colors=colour, radius=7,
                  operation="reverse_geocode")
        legend.append((kind, colour))
    add_layer(m, frame[asked], "points asked", colors=NEUTRAL, radius=3,
              geometry="input_point", operation="reverse_geocode", spread=False)
    legend.append(("point asked", NEUTRAL, "dot"))
    m = finish(m, legend=legend, title="reverse geocoding")
    kinds_found = kinds.dropna().astype(str).value_counts()
    return describe_map(m, f"{counted(int(asked.sum()), 'point')} asked, "
                           f"{counted(int(found.sum()), 'match', 'matches')} found",
                        "By type: " + ", ".join(f"{n:,} {k}" for k, n in kinds_found.items())
                        if len(kinds_found) else "", frames=[df])


def reachable_ranges(df: pd.DataFrame, *, tiles: str = "auto",
                     height: int | str = 480) -> folium.Map:
    """Map reachable ranges: one layer per budget, the largest under the others, and the origins.

    Parameters
    ----------
    df : GeoDataFrame
        The frame :func:`toolkit.route_range` returns (``timeBudgetInSec`` or
        ``distanceBudgetInMeters``, ``center``, ``geometry``); failed rows (no polygon) are left
        out.
    tiles : {"auto", "roads", "web"}
    height : int or str

    Returns
    -------
    folium.Map
        Layers ``within <budget>`` (one per budget, coloured from the plot's
        :data:`~toolkit.plot.maps.RANGE_CMAP`, the smallest darkest) and ``origins`` (where the
        service snapped each origin); tooltips hold the place and the budget (min or km),
        popups the full record.

    Raises
    ------
    ValidationError
        No row has a polygon.
    """
    import geopandas as gpd
    import matplotlib as mpl
    from matplotlib.colors import to_hex

    from toolkit.plot.maps import budget_label

    frame = geo_frame(df, ["timeBudgetInSec", "distanceBudgetInMeters", "center"],
                      "explore.reachable_ranges")
    drawn = frame[has_geometry(frame["geometry"])]
    if drawn.empty:
        raise ValidationError("df", "no polygons", "explore.reachable_ranges needs ranges with "
                              "a polygon (every origin failed)")
    key = "timeBudgetInSec" if drawn["timeBudgetInSec"].notna().any() else \
        "distanceBudgetInMeters"
    budgets = sorted({float(b) for b in drawn[key].dropna()})
    cmap = mpl.colormaps[RANGE_CMAP]
    colours = {b: to_hex(cmap(0.15 + 0.7 * (k / max(len(budgets) - 1, 1))))
               for k, b in enumerate(budgets)}
    m = new_map(bounds_of(drawn["geometry"]), tiles=tiles, frames=[df], features=len(drawn),
                height=height)
    for budget in reversed(budgets):
        rows = drawn[drawn[key] == budget].drop(columns=["center"])
        add_layer(m, rows, f"within {budget_label(key, budget)}", colors=colours[budget],
                  weight=2, spread=False, operation="route_range")
    centers = drawn.drop_duplicates("origin_index") if "origin_index" in drawn else drawn
    points = gpd.GeoDataFrame(centers.drop(columns=["geometry", "center"]),
                              geometry=list(centers["center"]), crs="EPSG:4326")
    add_layer(m, points, "origins", colors="#FFFFFF", radius=6, outline="#000000",
              operation="route_range")
    m = finish(m, legend=[(budget_label(key, b), colours[b]) for b in budgets],
               title="reachable within")
    return describe_map(m, f"{counted(len(drawn), 'reachable range')} within "
                           f"{listed([budget_label(key, b) for b in budgets], 6)} from "
                           f"{counted(len(centers), 'origin')}", frames=[df])
