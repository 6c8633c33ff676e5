"""Map pictures: routes, GPS traces and their snapping, incidents, addresses, reachable ranges.

The background is a frame of lines (``background=``): the caller's own (any GeoDataFrame of
roads, rivers, borders...), ``True`` for the road network the toolkit ships for Andorra
(:func:`toolkit._data.andorra.roads`, derived from OpenStreetMap: no tile download, so it works
offline) where it overlaps the data, or ``None`` for none. A map carries the credit line of its
background (``attrs["attribution"]`` of the frame) only when it drew one, so a map drawn
elsewhere in the world claims nothing it does not show.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from toolkit._core.errors import ValidationError
from toolkit._core.maprules import bounds_of
from toolkit._core.provenance import from_sandbox
from toolkit._core.text import plot_text
from toolkit._data.andorra import ATTRIBUTION
from toolkit.plot._common import (
    fit_height,
    mark_figure,
    marks_sandbox,
    new_axes,
    require_columns,
    root_figure,
)
from toolkit.plot._style import MIN_FONT_SIZE, NEUTRAL
from toolkit.plot.description import counted, listed, sentences, set_description

if TYPE_CHECKING:  # matplotlib is imported when a helper draws, not with the package
    from matplotlib.axes import Axes

logger = logging.getLogger(__name__)

__all__ = ["ATTRIBUTION", "INCIDENT_COLORS", "RANGE_CMAP", "ROUTE_COLORS", "SEVERITY_SIZES",
           "addresses", "budget_label", "draw_background", "incidents", "reachable_ranges",
           "routes", "snapped_trace", "spread_labels", "stamp_credit"]

#: One colour per incident type (warm for what blocks, cool for what slows).
INCIDENT_COLORS = {
    "Accident": "#c62828", "Congestion": "#ef6c00", "DisabledVehicle": "#8e24aa",
    "RoadHazard": "#6d4c41", "Construction": "#f9a825", "Weather": "#1e88e5",
    "Miscellaneous": "#757575", "MassTransit": "#00897b", "OtherNews": "#9e9e9e",
    "PlannedEvent": "#5e35b1", "Alert": "#d81b60",
}
SEVERITY_SIZES = {"LowImpact": 40, "Minor": 70, "Moderate": 110, "Serious": 160}
#: One colour per meaning on a route map, whatever the number of routes: main routes,
#: alternatives, and the start, stops and end markers.
ROUTE_COLORS = {"main": "#332288", "alternative": "#000000", "start": "#000000",
                "stop": "#9E9E9E", "end": "#FFFFFF"}
#: The colours of the budgets of reachable ranges (sequential, colour-blind safe): the
#: smallest budget darkest, drawn on top.
RANGE_CMAP = "viridis"
_ROAD_STYLE = {  # class -> (width, colour)
    "primary": (1.6, "#b0b0b0"), "primary_link": (1.2, "#b0b0b0"),
    "secondary": (1.2, "#c4c4c4"), "secondary_link": (1.0, "#c4c4c4"),
    "tertiary": (0.9, "#d0d0d0"),
}


def finish_map(ax: Axes, bounds: tuple[float, float, float, float] | None, title: str | None,
               credit: str | None, margin: float = 0.08, *, least_extent: float = 0.002,
               own: bool = False) -> None:
    """Frame a map: its bounds with a margin, the aspect, axis labels, title and credit line.

    The title and the credit line are drawn as written (:func:`~toolkit._core.text.plot_text`).
    ``bounds`` (west, south, east, north) is grown by ``margin`` of its extent (of at least
    ``least_extent`` degrees). A figure the helper made itself (``own``) is then made as tall as
    the map needs (:func:`~toolkit.plot._common.fit_height`).
    """
    if bounds is not None:
        w, s, e, n = bounds
        dx = max(e - w, least_extent) * margin
        dy = max(n - s, least_extent) * margin
        ax.set_xlim(w - dx, e + dx)
        ax.set_ylim(s - dy, n + dy)
        ax.set_aspect(1 / math.cos(math.radians((s + n) / 2)))
    ax.set_xlabel("longitude (°)")
    ax.set_ylabel("latitude (°)")
    ax.tick_params(labelsize=8)
    if title:
        ax.set_title(plot_text(title))
    stamp_credit(ax, credit)
    if own:  # a figure of the helper's own: as tall as the map needs
        fit_height(ax)


def stamp_credit(ax: Axes, credit: str | None) -> None:
    """Write a background's credit line in the lower right corner (nothing when ``None``)."""
    if credit:
        ax.text(0.995, 0.005, plot_text(credit), transform=ax.transAxes, ha="right", va="bottom",
                fontsize=MIN_FONT_SIZE, color=NEUTRAL,
                bbox={"facecolor": "white", "alpha": 0.7, "edgecolor": "none", "pad": 1})


#: Rounds of moving labels apart (adjustText's ``iter_lim``): about 40 labels of a country's
#: places part within 100, and the rounds after that move nothing a reader sees; each round
#: costs about 6 ms for 40 labels.
LABEL_ITERATIONS = 200


def spread_labels(ax: Axes, texts: Sequence[Any], xs: Any, ys: Any) -> None:
    """Move map labels (``Text`` artists at their points) apart so none covers another or a point.

    A thin leader line goes to its point where a label had to move (adjustText).
    """
    if not texts:
        return
    try:
        from adjustText import adjust_text
    except ImportError as err:  # pragma: no cover - depends on the install
        raise ImportError("map labels need adjustText: pip install 'cloudops-frames[plot]'") \
            from err
    root_figure(ax).draw_without_rendering()  # the layout settles the axes' size first
    adjust_text(list(texts), x=np.asarray(xs, dtype=float), y=np.asarray(ys, dtype=float),
                ax=ax, expand=(1.15, 1.35), ensure_inside_axes=True, iter_lim=LABEL_ITERATIONS,
                arrowprops={"arrowstyle": "-", "color": NEUTRAL, "lw": 0.5})


def _check_background(background: Any) -> Any:
    if background is None or isinstance(background, bool):
        return background
    if isinstance(background, pd.DataFrame) and "geometry" in background.columns:
        return background
    raise ValidationError("background", background,
                          "must be a GeoDataFrame of lines (a 'geometry' column), True for the "
                          "bundled road network of Andorra, or None")


def draw_background(ax: Axes, background: Any,
                    bounds: tuple[float, float, float, float] | None = None) -> str | None:
    """Draw a background of lines under a map.

    Parameters
    ----------
    ax : matplotlib Axes
        Where to draw (below everything else).
    background : GeoDataFrame, True or None
        Lines to draw (a ``highway`` column, when there is one, styles them by road class);
        ``True`` for the bundled road network of Andorra, drawn only when it overlaps
        ``bounds``; ``None`` or ``False`` for nothing.
    bounds : (west, south, east, north), optional
        The extent of the data on the map.

    Returns
    -------
    str or None
        The credit line to stamp on the map (the frame's ``attrs["attribution"]``) when
        something was drawn, else ``None``.
    """
    background = _check_background(background)
    if background is None or background is False:
        return None
    import shapely
    from matplotlib.collections import LineCollection

    if background is True:
        from toolkit._data.andorra import roads

        frame = roads()
        w0, s0, e0, n0 = shapely.total_bounds(np.asarray(frame.geometry, dtype=object))
        if bounds is not None:
            w, s, e, n = bounds
            if e < w0 or w > e0 or n < s0 or s > n0:
                return None
    else:
        frame = background
    geoms = np.asarray(frame["geometry"], dtype=object)
    keep = np.array([g is not None and not g.is_empty for g in geoms], dtype=bool)
    if not keep.any():
        return None
    classes = (frame["highway"].astype(object).to_numpy() if "highway" in frame.columns
               else np.full(len(frame), None, dtype=object))
    groups: dict[tuple[float, str], list[np.ndarray]] = {}
    for geom, cls in zip(geoms[keep], classes[keep], strict=True):
        style = _ROAD_STYLE.get(str(cls), (0.5, "#dddddd"))
        for part in shapely.get_parts(geom):
            coords = shapely.get_coordinates(shapely.boundary(part) if part.geom_type ==
                                             "Polygon" else part)
            if len(coords) > 1:
                groups.setdefault(style, []).append(coords)
    for (width, colour), lines in sorted(groups.items()):
        ax.add_collection(LineCollection(lines, linewidths=width, colors=colour, zorder=0))
    credit = frame.attrs.get("attribution")
    return str(credit) if groups and credit else None


@marks_sandbox
def routes(df: pd.DataFrame, *, ax: Axes | None = None, incidents: pd.DataFrame | None = None,
           background: Any = True, labels: bool = True, title: str | None = None) -> Axes:
    """Draw routes on the road network, one colour per meaning however many routes there are.

    Main routes bold, alternatives dashed in a colour of their own, the start, the stops (waypoints)
    and the ends marked.

    Parameters
    ----------
    df : GeoDataFrame
        The frame :func:`toolkit.route_directions` returns (``query_index``, ``route_index``,
        ``geometry``); failed queries (empty geometry) are skipped.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted.
    incidents : GeoDataFrame, optional
        A :func:`toolkit.traffic_incidents` frame to draw on top.
    background : GeoDataFrame, True or None
        Lines drawn underneath: a frame of your own, ``True`` for the bundled road network of
        Andorra where it overlaps the data, ``None`` for nothing (see :func:`draw_background`).
    labels : bool
        Mark where the main routes start (once per place: a depot is one square), their stops
        and where they end.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
    """
    require_columns(df, ["query_index", "route_index", "geometry"], "plot.routes")
    from matplotlib.lines import Line2D

    ok = df[[g is not None and not g.is_empty for g in df.geometry]]
    bounds = bounds_of(ok.geometry) if len(ok) else None
    own = ax is None
    ax = new_axes(ax, figsize=(9, 7))
    credit = draw_background(ax, background, bounds)
    main_lines: list[np.ndarray] = []
    other_lines: list[np.ndarray] = []
    starts: list[tuple[float, float]] = []
    stops: list[tuple[float, float]] = []
    ends: list[tuple[float, float]] = []
    for row in ok.itertuples(index=False):
        legs = list(getattr(row.geometry, "geoms", [row.geometry]))
        coords = [np.asarray(leg.coords) for leg in legs]
        (main_lines if row.route_index == 0 else other_lines).extend(coords)
        if row.route_index == 0 and coords:
            starts.append(tuple(coords[0][0]))
            stops.extend(tuple(c[-1]) for c in coords[:-1])
            ends.append(tuple(coords[-1][-1]))
    from matplotlib.collections import LineCollection

    # alternatives under the main routes, each kind in one colour however many routes there are
    if other_lines:
        ax.add_collection(LineCollection(other_lines, colors=ROUTE_COLORS["alternative"],
                                         linewidths=1.4, linestyles=(0, (4, 2)), zorder=2,
                                         gid="route-alternative"))
    if main_lines:
        ax.add_collection(LineCollection(main_lines, colors=ROUTE_COLORS["main"],
                                         linewidths=2.4, zorder=3, capstyle="round",
                                         gid="route-main"))
    handles = [Line2D([], [], color=ROUTE_COLORS["main"], lw=2.4, label="main route")]
    if other_lines:
        handles.append(Line2D([], [], color=ROUTE_COLORS["alternative"], lw=1.4,
                              ls=(0, (4, 2)), label="alternative"))
    if labels:
        marks = (("start", dict.fromkeys(starts), "s", ROUTE_COLORS["start"], 40),
                 ("stop", dict.fromkeys(stops), "D", ROUTE_COLORS["stop"], 24),
                 ("end", dict.fromkeys(ends), "o", ROUTE_COLORS["end"], 36))
        for label, points, marker, colour, size in marks:
            if not points:
                continue
            xy = np.asarray(list(points))
            ax.scatter(xy[:, 0], xy[:, 1], s=size, marker=marker, color=colour,
                       edgecolor="black", linewidths=0.8, zorder=7 if label == "start" else 6)
            handles.append(Line2D([], [], ls="", marker=marker, color=colour,
                                  markeredgecolor="black", markersize=math.sqrt(size),
                                  label=f"{label} ({len(points)} places)" if len(points) > 1
                                  else label))  # places: routes that end together, once
    if incidents is not None and len(incidents):
        _draw_incidents(ax, incidents, handles)
        if bounds is not None:
            ib = bounds_of(incidents.geometry)
            if ib is not None:
                bounds = (min(bounds[0], ib[0]), min(bounds[1], ib[1]),
                          max(bounds[2], ib[2]), max(bounds[3], ib[3]))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    queries = ok["query_index"].nunique()
    finish_map(ax, bounds, title or f"{queries} route{'s' if queries != 1 else ''}", credit,
               own=own)
    set_description(ax, _routes_text(ax.get_title(), ok, len(dict.fromkeys(starts)),
                                     len(dict.fromkeys(stops)), len(dict.fromkeys(ends)),
                                     incidents))
    return ax


def _routes_text(title: str, ok: pd.DataFrame, starts: int, stops: int, ends: int,
                 incidents: pd.DataFrame | None) -> str:
    """Describe the route map: how many routes between how many places, each one's length."""
    main = ok["route_index"] == 0
    minutes = next((c for c in ("durationTrafficInSeconds", "durationInSeconds")
                    if c in ok.columns), None)
    lines = []
    for _, r in ok.sort_values(["query_index", "route_index"], kind="stable").iterrows():
        name = r["optionalId"] if isinstance(r.get("optionalId"), str) else \
            f"query {r['query_index']}"
        kind = "main route" if r["route_index"] == 0 else f"alternative {r['route_index']}"
        size = []
        if "distanceInMeters" in ok.columns and pd.notna(r["distanceInMeters"]):
            size.append(f"{float(r['distanceInMeters']) / 1000:.1f} km")
        if minutes and pd.notna(r[minutes]):
            size.append(f"{float(r[minutes]) / 60:.0f} min"
                        f"{' in traffic' if minutes == 'durationTrafficInSeconds' else ''}")
        lines.append(f"{name}, {kind}" + (f": {', '.join(size)}" if size else ""))
    places = f"from {counted(starts, 'start place')} to {counted(ends, 'end place')}" + \
        (f" by {counted(stops, 'stop')}" if stops else "")
    shown = (f"{counted(int(main.sum()), 'main route')} and "
             f"{counted(int((~main).sum()), 'alternative')} {places}")
    drawn = ""
    if incidents is not None and len(incidents):
        kinds = incidents["incidentType"].astype(str).value_counts()
        drawn = (f"{counted(len(incidents), 'traffic incident')} drawn: "
                 + ", ".join(f"{n:,} {k}" for k, n in kinds.items()))
    return sentences(f"{title}: {shown}", listed(lines, 6, "more routes"), drawn)


@marks_sandbox
def snapped_trace(raw: Any, snapped: pd.DataFrame, *, ax: Axes | None = None,
                  background: Any = True, cmap: str = "viridis", title: str | None = None) -> Axes:
    """Draw a GPS trace before (grey) and after snapping (coloured by speed limit).

    Parameters
    ----------
    raw : GeoDataFrame, GeoSeries, DataFrame or sequence of (lon, lat)
        The points as recorded (what was passed to :func:`toolkit.snap_to_roads`).
    snapped : GeoDataFrame
        The frame :func:`toolkit.snap_to_roads` returned; colours come from
        ``speedLimitInKilometersPerHour`` (grey when it was not asked for).
    ax : matplotlib Axes, optional
        Where to draw.
    background : GeoDataFrame, True or None
        Lines drawn underneath: a frame of your own, ``True`` for the bundled road network of
        Andorra where it overlaps the data, ``None`` for nothing (see :func:`draw_background`).
    cmap : str
        Colour map of the speed limits.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
    """
    require_columns(snapped, ["geometry", "isInterpolated"], "plot.snapped_trace")
    import shapely

    from toolkit._core.geo import to_lonlat

    pts = to_lonlat(raw, "raw")
    xy = shapely.get_coordinates(snapped.geometry) if len(snapped) else np.empty((0, 2))
    both = np.vstack([pts, xy]) if len(xy) else pts
    bounds = (*both.min(axis=0), *both.max(axis=0))
    own = ax is None
    ax = new_axes(ax, figsize=(8, 7))
    credit = draw_background(ax, background, bounds)
    ax.scatter(pts[:, 0], pts[:, 1], s=6, color="#9e9e9e", alpha=0.6, zorder=2,
               label="recorded")
    if len(xy):
        ax.plot(xy[:, 0], xy[:, 1], color="#424242", lw=0.6, zorder=3)
        limits = snapped.get("speedLimitInKilometersPerHour")
        if limits is not None and limits.notna().any():
            sc = ax.scatter(xy[:, 0], xy[:, 1], c=limits.to_numpy(dtype=float), cmap=cmap,
                            s=9, zorder=4, label="snapped")
            bar = ax.figure.colorbar(sc, ax=ax, shrink=0.7, pad=0.02)
            bar.set_label("speed limit (km/h)")
        else:
            ax.scatter(xy[:, 0], xy[:, 1], s=9, color="#1565c0", zorder=4, label="snapped")
    ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.1), ncol=2, frameon=False,
              markerscale=2)
    finish_map(ax, bounds, title or f"{len(pts):,} recorded points, {len(snapped):,} on the road",
               credit, own=own)
    set_description(ax, _trace_text(ax.get_title(), len(pts), snapped))
    return ax


def _trace_text(title: str, recorded: int, snapped: pd.DataFrame) -> str:
    """Describe the trace: points recorded and snapped, those interpolated, the speed limits."""
    added = int(snapped["isInterpolated"].fillna(False).astype(bool).sum())
    limits = snapped.get("speedLimitInKilometersPerHour")
    speeds = ""
    if limits is not None and limits.notna().any():
        low, high = float(limits.min()), float(limits.max())
        speeds = (f"Speed limits {low:.0f} km/h" if low == high else
                  f"Speed limits from {low:.0f} to {high:.0f} km/h")
    return sentences(f"{title}: {counted(recorded, 'recorded point')} and "
                     f"{counted(len(snapped), 'snapped point')} on the road, "
                     f"{added:,} of them interpolated", speeds)


#: Most labels an address map writes (a label per match beyond it would bury the map).
ADDRESS_LABELS = 12


@marks_sandbox
def addresses(df: pd.DataFrame, *, ax: Axes | None = None, background: Any = True,
              labels: bool = True, title: str | None = None) -> Axes:
    """Draw the points asked about and the addresses found for them, on the road network.

    Each point asked is a small grey cross joined by a thin line to its match, which is coloured
    by the type of entity found (address, place, postcode...); a point with no match or an error
    is a hollow grey circle. With few matches (12 at most) each is labelled with its address
    line (or formatted address).

    Parameters
    ----------
    df : GeoDataFrame
        The frame :func:`toolkit.reverse_geocode` returns (``input_point``, ``type``,
        ``geometry``; ``address.addressLine`` and ``address.formattedAddress`` for labels).
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted.
    background : GeoDataFrame, True or None
        Lines drawn underneath: a frame of your own, ``True`` for the bundled road network of
        Andorra where it overlaps the data, ``None`` for nothing (see :func:`draw_background`).
    labels : bool
        Label the matches with their addresses (when there are at most 12).
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
    """
    require_columns(df, ["input_point", "type", "geometry"], "plot.addresses")
    import shapely
    from matplotlib.collections import LineCollection
    from matplotlib.lines import Line2D

    from toolkit.plot._style import SERIES_COLORS

    asked = np.asarray(df["input_point"], dtype=object)
    found = np.asarray(df["geometry"], dtype=object)
    has = np.array([g is not None and not g.is_empty for g in found], dtype=bool)
    known = np.array([g is not None and not g.is_empty for g in asked], dtype=bool)
    if not known.any():
        raise ValidationError("df", "no points", "plot.addresses needs the points asked about")
    xy_asked = shapely.get_coordinates(asked[known])
    xy_found = shapely.get_coordinates(found[has]) if has.any() else np.empty((0, 2))
    both = np.vstack([xy_asked, xy_found])
    bounds = (*both.min(axis=0), *both.max(axis=0))
    own = ax is None
    ax = new_axes(ax, figsize=(8, 7))
    credit = draw_background(ax, background, bounds)
    pairs = [np.array([shapely.get_coordinates(a)[0], shapely.get_coordinates(f)[0]])
             for a, f, ok in zip(asked, found, has & known, strict=True) if ok]
    if pairs:
        ax.add_collection(LineCollection(pairs, colors=NEUTRAL, linewidths=0.7, zorder=2))
    ax.scatter(xy_asked[:, 0], xy_asked[:, 1], s=22, marker="x", color=NEUTRAL, linewidths=1.0,
               zorder=3)
    handles = [Line2D([], [], ls="", marker="x", color=NEUTRAL, label="point asked")]
    kinds = df["type"].astype(object).where(has, None)
    order = [k for k in dict.fromkeys(kinds.dropna().astype(str))]
    for k, kind in enumerate(order):
        pick = (kinds.astype(str) == kind).to_numpy() & has
        xy = shapely.get_coordinates(found[pick])
        colour = SERIES_COLORS[k % len(SERIES_COLORS)]
        ax.scatter(xy[:, 0], xy[:, 1], s=46, color=colour, edgecolor="white", linewidths=0.8,
                   zorder=5)
        handles.append(Line2D([], [], ls="", marker="o", color=colour, markeredgecolor="white",
                              label=f"{plot_text(kind)} ({int(pick.sum())})"))
    missing = known & ~has
    if missing.any():
        xy = shapely.get_coordinates(asked[missing])
        ax.scatter(xy[:, 0], xy[:, 1], s=60, facecolor="none", edgecolor=NEUTRAL, zorder=4)
        handles.append(Line2D([], [], ls="", marker="o", markerfacecolor="none",
                              color=NEUTRAL, label=f"no match ({int(missing.sum())})"))
    if labels and 0 < int(has.sum()) <= ADDRESS_LABELS:
        rows = df[has]
        line = rows.get("address.addressLine", pd.Series(None, index=rows.index))
        full = rows.get("address.formattedAddress", pd.Series(None, index=rows.index))
        texts, xs, ys = [], [], []
        for geom, a, b in zip(rows.geometry, line, full, strict=True):
            text = a if isinstance(a, str) and a else b
            if not isinstance(text, str) or not text:
                continue
            texts.append(ax.text(geom.x, geom.y, plot_text(text), fontsize=MIN_FONT_SIZE,
                                 zorder=6, bbox={"facecolor": "white", "alpha": 0.8,
                                                 "edgecolor": "none", "pad": 1}))
            xs.append(geom.x)
            ys.append(geom.y)
        spread_labels(ax, texts, xs, ys)
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    n = int(known.sum())
    finish_map(ax, bounds, title or f"{n} point{'s' if n != 1 else ''}, "
               f"{int(has.sum())} matched", credit, own=own)
    counts = kinds.dropna().astype(str).value_counts()
    set_description(ax, sentences(
        f"{ax.get_title()}: {counted(n, 'point')} asked about, "
        f"{counted(int(has.sum()), 'address', 'addresses')} found",
        "By type of entity: " + ", ".join(f"{c:,} {k}" for k, c in counts.items())
        if len(counts) else "",
        f"{counted(int(missing.sum()), 'point')} with no match" if missing.any() else ""))
    return ax


def _draw_incidents(ax: Axes, df: pd.DataFrame, handles: list[Any]) -> None:
    from matplotlib.lines import Line2D

    seen = []
    for _, row in df.iterrows():
        kind = str(row["incidentType"])
        colour = INCIDENT_COLORS.get(kind, "#616161")
        size = SEVERITY_SIZES.get(str(row.get("severity")), 60)
        start, end = row.geometry, row.get("endPoint")
        if end is not None and not getattr(end, "is_empty", True):
            ax.plot([start.x, end.x], [start.y, end.y], color=colour, lw=3, alpha=0.6,
                    zorder=4)
        marker = "X" if bool(row.get("isRoadClosed")) else "o"
        ax.scatter(start.x, start.y, s=size, color=colour, edgecolor="black", lw=0.6,
                   marker=marker, zorder=6)
        if kind not in seen:
            seen.append(kind)
    for kind in seen:
        handles.append(Line2D([], [], marker="o", ls="", color=INCIDENT_COLORS.get(kind,
                                                                                    "#616161"),
                              markeredgecolor="black", label=plot_text(kind)))


@marks_sandbox
def incidents(df: pd.DataFrame, *, ax: Axes | None = None, background: Any = True,
              bbox: Any = None, title: str | None = None) -> Axes:
    """Draw traffic incidents by type (colour) and severity (size).

    A line goes to where each ends, an X where the road is closed.

    Parameters
    ----------
    df : GeoDataFrame
        The frame :func:`toolkit.traffic_incidents` returns (``incidentType``, ``severity``,
        ``geometry``, ``endPoint``).
    ax : matplotlib Axes, optional
        Where to draw.
    background : GeoDataFrame, True or None
        Lines drawn underneath: a frame of your own, ``True`` for the bundled road network of
        Andorra where it overlaps the data, ``None`` for nothing (see :func:`draw_background`).
    bbox : 4-tuple or object with bounds, optional
        The area to show (default: the incidents' extent).
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
    """
    require_columns(df, ["incidentType", "severity", "geometry", "endPoint"], "plot.incidents")
    from matplotlib.lines import Line2D

    from toolkit._core.geo import to_bbox

    if bbox is not None:
        bounds: Any = to_bbox(bbox)
    else:
        bounds = bounds_of(df.geometry, df["endPoint"]) if len(df) else None
    own = ax is None
    ax = new_axes(ax, figsize=(8, 7))
    credit = draw_background(ax, background, bounds)
    handles: list[Any] = []
    _draw_incidents(ax, df, handles)
    for label, size in SEVERITY_SIZES.items():
        handles.append(Line2D([], [], marker="o", ls="", color="white", markeredgecolor="black",
                              markersize=math.sqrt(size), label=label))
    if handles:
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False,
                  title="type / severity")
    finish_map(ax, bounds, title or f"{len(df)} traffic incident{'s' if len(df) != 1 else ''}",
               credit, own=own)
    set_description(ax, _incidents_text(ax.get_title(), df))
    return ax


def _incidents_text(title: str, df: pd.DataFrame) -> str:
    """Describe the incident map: the incidents by type and severity, the roads closed."""
    kinds = df["incidentType"].astype(str).value_counts()
    severities = df["severity"].astype(object).fillna("unknown").astype(str).value_counts()
    closed = int(df["isRoadClosed"].fillna(False).astype(bool).sum()) \
        if "isRoadClosed" in df.columns else 0
    return sentences(
        f"{title}: {counted(len(df), 'traffic incident')}",
        "By type: " + ", ".join(f"{n:,} {k}" for k, n in kinds.items()) if len(df) else "",
        "By severity: " + ", ".join(f"{n:,} {k}" for k, n in severities.items())
        if len(df) else "",
        f"{closed:,} with the road closed" if closed else "")


def budget_label(key: str, amount: float) -> str:
    """Write a reachable range's budget as a reader reads it: ``10 min``, ``5 km``."""
    if key == "timeBudgetInSec":
        minutes = amount / 60
        return f"{minutes:g} min" if minutes == round(minutes, 1) else f"{minutes:.1f} min"
    km = amount / 1000
    return f"{km:g} km" if km == round(km, 1) else f"{km:.1f} km"


@marks_sandbox
def reachable_ranges(df: pd.DataFrame, *, ax: Axes | None = None, background: Any = True,
                     labels: bool = True, title: str | None = None) -> Axes:
    """Draw reachable ranges over the roads: one colour per budget, the origins marked.

    The largest budget's areas are drawn first and lightest, the smallest on top and darkest,
    so nested ranges (10, 20, 30 minutes) read as rings; each origin's center (where the
    service snapped it to a road) is marked and named.

    Parameters
    ----------
    df : GeoDataFrame
        The frame :func:`toolkit.route_range` returns (``timeBudgetInSec`` or
        ``distanceBudgetInMeters``, ``center``, ``geometry``; ``place`` names the centers);
        failed rows (empty polygons) are skipped.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted.
    background : GeoDataFrame, True or None
        Lines drawn underneath: a frame of your own, ``True`` for the bundled road network of
        Andorra where it overlaps the data, ``None`` for nothing (see :func:`draw_background`).
    labels : bool
        Name each origin by its place (or its position in the input).
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
    """
    require_columns(df, ["timeBudgetInSec", "distanceBudgetInMeters", "center", "geometry"],
                    "plot.reachable_ranges")
    import matplotlib as mpl
    import shapely
    from matplotlib.patches import Patch, PathPatch
    from matplotlib.path import Path

    ok = df[[g is not None and not g.is_empty for g in df.geometry]]
    key = "timeBudgetInSec" if ok["timeBudgetInSec"].notna().any() or \
        not ok["distanceBudgetInMeters"].notna().any() else "distanceBudgetInMeters"
    budgets = sorted({float(b) for b in ok[key].dropna()})
    bounds = bounds_of(ok.geometry) if len(ok) else None
    own = ax is None
    ax = new_axes(ax, figsize=(8.5, 7))
    credit = draw_background(ax, background, bounds)
    cmap = mpl.colormaps[RANGE_CMAP]
    colours = {b: cmap(0.15 + 0.7 * (k / max(len(budgets) - 1, 1)))
               for k, b in enumerate(budgets)}
    for budget in reversed(budgets):  # the largest first, under the others
        for geom in ok.geometry[ok[key] == budget]:
            for part in shapely.get_parts(geom):
                rings = [np.asarray(part.exterior.coords),
                         *(np.asarray(r.coords) for r in part.interiors)]
                path = Path.make_compound_path(*(Path(r, closed=True) for r in rings))
                ax.add_patch(PathPatch(path, facecolor=colours[budget], alpha=0.45,
                                       edgecolor=colours[budget], linewidth=1.4, zorder=2,
                                       gid="range"))
    handles: list[Any] = [Patch(facecolor=colours[b], edgecolor=colours[b], alpha=0.6,
                                label=budget_label(key, b)) for b in budgets]
    centers = ok.drop_duplicates("origin_index") if "origin_index" in ok.columns else ok
    points = [(c.x, c.y, row) for c, row in zip(centers["center"], centers.itertuples(),
                                               strict=True) if c is not None and not c.is_empty]
    if points:
        from matplotlib.lines import Line2D

        ax.scatter([p[0] for p in points], [p[1] for p in points], s=40, marker="o",
                   color="white", edgecolor="black", linewidths=1.0, zorder=6)
        handles.append(Line2D([], [], ls="", marker="o", color="white", markeredgecolor="black",
                              label="origin (on the road)"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False,
              title="reachable within")
    amounts = [budget_label(key, b) for b in budgets]
    unit = amounts[-1].rsplit(" ", 1)[-1] if amounts else ""
    numbers = [a.rsplit(" ", 1)[0] for a in amounts]
    what = (f"{', '.join(numbers[:-1])} and {numbers[-1]} {unit}" if len(numbers) > 1 else
            amounts[0] if amounts else "no budget")
    # framed (and its own figure fitted) before the labels are spread over it
    finish_map(ax, bounds, title or f"Reachable within {what} from {len(points)} "
               f"place{'s' if len(points) != 1 else ''}", credit, own=own)
    if labels and points:
        texts = [ax.text(x, y, _origin_name(row), fontsize=MIN_FONT_SIZE + 1, zorder=7,
                         bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "none",
                               "pad": 1})
                 for x, y, row in points]
        spread_labels(ax, texts, [p[0] for p in points], [p[1] for p in points])
    set_description(ax, _ranges_text(ax.get_title(), ok, key, budgets, points))
    if own:
        _settle(ax, df)
    return ax


def _ranges_text(title: str, ok: pd.DataFrame, key: str, budgets: list[float],
                 points: list[Any]) -> str:
    """Describe the ranges: per origin, the area reachable within each budget."""
    from pyproj import Geod

    geod = Geod(ellps="WGS84")
    areas = []
    for _, _, row in points:
        mine = ok[ok["origin_index"] == row.origin_index] if "origin_index" in ok.columns else ok
        parts = [f"{budget_label(key, float(b))} "
                 f"{abs(geod.geometry_area_perimeter(g)[0]) / 1e6:.1f} km²"
                 for b, g in zip(mine[key], mine.geometry, strict=True)]
        areas.append(f"{_origin_name(row)}: " + ", ".join(parts))
    return sentences(f"{title}: {counted(len(budgets), 'budget')}, "
                     f"{counted(len(points), 'origin')}",
                     "Area reachable: " + listed(areas, 6, "more origins") if areas else "")


def _settle(ax: Axes, df: pd.DataFrame) -> None:
    """Lay a helper's own figure out again once everything is drawn on it.

    The layout of an aspect-locked map places the title from where the last layout drew the
    Axes: after the labels moved, or the sandbox's mark took its strip along the bottom, the
    next layout can leave the title partly above the figure's edge; two more settle it where
    a saved figure keeps it. The mark is drawn here first (the decorator then finds it).
    """
    fig = root_figure(ax)
    if from_sandbox(df):
        mark_figure(fig)
    for _ in range(2):
        fig.draw_without_rendering()


def _origin_name(row: Any) -> str:
    place = getattr(row, "place", None)
    if isinstance(place, str) and place:
        return plot_text(place)
    index = getattr(row, "origin_index", None)
    return f"origin {index}" if index is not None and not pd.isna(index) else "origin"
