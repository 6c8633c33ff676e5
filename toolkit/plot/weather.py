"""Pictures of air quality and severe weather alerts.

Colours carry the service's meaning: air-quality bars and points take the ``categoryColor`` the
service returned with each reading (the palette below only fills in where a frame has none, for
a pollutant's own index for instance), and the band limits of the global index (20, 50, 100,
150, 250) are marked so a reader sees how close a value is to the next category.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from toolkit._core.errors import ValidationError
from toolkit._core.maprules import (
    STATUS_COLORS,
    band_colour,
    band_name,
    reading_colour,
    status_colour,
)
from toolkit._core.text import plot_text
from toolkit._spec.maps import (
    AIR_QUALITY_BANDS,
    AIR_QUALITY_CATEGORIES,
    AIR_QUALITY_COLORS,
    ALERT_STATUSES,
    POLLUTANT_SHORT_NAMES,
)
from toolkit.plot._common import marks_sandbox, new_axes, require_columns
from toolkit.plot._style import MIN_FONT_SIZE, NEUTRAL, series_style
from toolkit.plot.description import counted, listed, sentences, set_description

if TYPE_CHECKING:  # matplotlib is imported when a helper draws, not with the package
    from matplotlib.axes import Axes
    from matplotlib.patches import Rectangle

__all__ = ["AIR_QUALITY_COLORS", "STATUS_COLORS", "air_quality_forecast", "air_quality_hours",
           "air_quality_map", "alert_timeline", "forecast_along", "pollutants"]

SHORT_POLLUTANT = POLLUTANT_SHORT_NAMES


def _colour(row: pd.Series) -> str:
    """Give the service's ``categoryColor`` when it is a colour, else its category's or band's."""
    return reading_colour(row.get("categoryColor"), row.get("category"), row.get("globalIndex"))


def _band_lines(ax: Axes, top: float, *, vertical: bool = False) -> None:
    """Draw dashed lines at the band limits below ``top``, labelled with the category each closes.

    The labels sit outside the axes (above them for vertical lines, staggered in two rows; right of
    them for horizontal ones), so no label runs through a bar.
    """
    for k, (limit, name) in enumerate(zip(AIR_QUALITY_BANDS, AIR_QUALITY_CATEGORIES,
                                          strict=False)):
        if limit > top:
            break
        if vertical:
            ax.axvline(limit, color=NEUTRAL, lw=0.8, ls="--", zorder=0)
            ax.annotate(f"{name} ≤ {limit:g}", (limit, 1.0), xycoords=("data", "axes fraction"),
                        xytext=(0, 2 + 11 * (k % 2)), textcoords="offset points", va="bottom",
                        ha="center", fontsize=MIN_FONT_SIZE, color=NEUTRAL, annotation_clip=False)
        else:
            ax.axhline(limit, color=NEUTRAL, lw=0.8, ls="--", zorder=0)
            ax.annotate(f"{name} ≤ {limit:g}", (1.0, limit), xycoords=("axes fraction", "data"),
                        xytext=(3, 0), textcoords="offset points", va="center", ha="left",
                        fontsize=MIN_FONT_SIZE, color=NEUTRAL, annotation_clip=False)


def _labels(df: pd.DataFrame, labels: Any) -> dict[int, str]:
    """Place names by location index: a mapping, a sequence in input order, a column name.

    The names are text to draw as written (:func:`~toolkit._core.text.plot_text`).
    """
    return {i: plot_text(name) for i, name in _names(df, labels).items()}


def _names(df: pd.DataFrame, labels: Any) -> dict[int, str]:
    indices = [int(i) for i in pd.unique(df["location_index"].dropna())]
    if labels is None:
        return {i: f"place {i}" for i in indices}
    if isinstance(labels, str):
        require_columns(df, [labels], "labels")
        first = df.dropna(subset=["location_index"]).drop_duplicates("location_index")
        return {int(i): str(v) for i, v in zip(first["location_index"], first[labels],
                                               strict=True)}
    if isinstance(labels, Mapping):
        return {i: str(labels.get(i, f"place {i}")) for i in indices}
    if isinstance(labels, pd.Series | Sequence | np.ndarray):
        seq = list(labels)
        return {i: str(seq[i]) if i < len(seq) else f"place {i}" for i in indices}
    raise ValidationError("labels", type(labels).__name__,
                          "must be a column name, a mapping of location_index to name or a "
                          "sequence of names in input order")


def _category_legend(ax: Axes, categories: Sequence[str], **kw: Any) -> None:
    from matplotlib.patches import Patch

    limits = dict(zip(AIR_QUALITY_CATEGORIES, (*AIR_QUALITY_BANDS, None), strict=True))
    lows = dict(zip(AIR_QUALITY_CATEGORIES, (0, *(b for b in AIR_QUALITY_BANDS)), strict=True))
    handles = []
    for name in AIR_QUALITY_CATEGORIES:
        if name not in categories:
            continue
        hi = limits[name]
        rng = f"{lows[name]:g}–{hi:g}" if hi is not None else f"> {lows[name]:g}"
        handles.append(Patch(facecolor=AIR_QUALITY_COLORS[name], edgecolor="#333333",
                             label=f"{name} ({rng})"))
    if handles:
        ax.legend(handles=handles, title="global index", fontsize=8, title_fontsize=8, **kw)


# ------------------------------------------------------------------------------ forecast


@marks_sandbox
def air_quality_forecast(df: pd.DataFrame, *, location: int | None = None, labels: Any = None,
                         ax: Axes | None = None, title: str | None = None) -> Axes:
    """Draw the daily forecast as bars in the category colours, with the band limits marked.

    With one place (or ``location=`` naming one), one bar per day: its height is the global
    index, its colour the service's ``categoryColor``, its label the dominant pollutant. With
    several places, a grid: one row per place, one cell per day, coloured the same way and
    showing the index.

    Parameters
    ----------
    df : pandas.DataFrame
        The frame :func:`toolkit.air_quality_forecast` returns (``location_index``, ``day``,
        ``dateTime``, ``globalIndex``, ``categoryColor``, ``category``, ``dominantPollutant``).
    location : int, optional
        The ``location_index`` to draw alone.
    labels : str, mapping or sequence, optional
        Place names: a column of ``df``, a mapping ``location_index -> name`` or names in input
        order.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
    """
    require_columns(df, ["location_index", "day", "dateTime", "globalIndex", "categoryColor",
                         "dominantPollutant"], "plot.air_quality_forecast")
    data = df.dropna(subset=["globalIndex", "location_index"])
    if location is not None:
        data = data[data["location_index"] == location]
    if data.empty:
        raise ValidationError("df", "no forecast rows", "plot.air_quality_forecast needs at "
                              "least one answered forecast day")
    names = _labels(data, labels)
    places = list(names)
    days = sorted(pd.unique(data["dateTime"]))
    day_text = [_day_label(d) for d in days]
    if len(places) == 1:
        ax = new_axes(ax, figsize=(max(5.0, 1.1 * len(days) + 2), 4))
        rows = data.sort_values("day")
        colours = [_colour(r) for _, r in rows.iterrows()]
        x = np.arange(len(rows))
        ax.bar(x, rows["globalIndex"], color=colours, edgecolor="#333333", width=0.7)
        top = max(60.0, float(rows["globalIndex"].max()) * 1.2)
        for xi, (_, r) in zip(x, rows.iterrows(), strict=True):
            short = SHORT_POLLUTANT.get(str(r["dominantPollutant"]),
                                        plot_text(r["dominantPollutant"]))
            ax.text(float(xi), float(r["globalIndex"]) + top * 0.015,
                    f"{r['globalIndex']:.0f}\n{short}", ha="center", va="bottom", fontsize=8,
                    zorder=3, bbox={"facecolor": "white", "edgecolor": "none", "pad": 0.5})
        ax.set_ylim(0, top)
        _band_lines(ax, top)
        ax.set_xticks(x, [_day_label(d) for d in rows["dateTime"]], fontsize=8)
        ax.set_ylabel("global air-quality index")
        ax.set_xlabel("forecast day (local date)")
        ax.set_title(plot_text(title) if title else
                     f"Daily air-quality forecast: {names[places[0]]}")
        ax.spines[["top", "right"]].set_visible(False)
        set_description(ax, _forecast_text(ax.get_title(), rows))
        return ax
    ax = new_axes(ax, figsize=(max(6.0, 1.0 * len(days) + 3), 0.45 * len(places) + 1.8))
    day_pos = {d: j for j, d in enumerate(days)}
    seen: set[str] = set()
    for i, place in enumerate(places):
        for _, r in data[data["location_index"] == place].iterrows():
            j = day_pos[r["dateTime"]]
            colour = _colour(r)
            seen.add(band_name(float(r["globalIndex"])))
            ax.add_patch(_rect(j, i, colour))
            value = float(r["globalIndex"])
            ax.text(j + 0.5, i + 0.5, f"{value:.0f}", ha="center", va="center", fontsize=8,
                    color="white" if value > 100 else "black")
    ax.set_xlim(0, len(days))
    ax.set_ylim(len(places), 0)
    ax.set_xticks(np.arange(len(days)) + 0.5, day_text, fontsize=8)
    ax.set_yticks(np.arange(len(places)) + 0.5, [names[p] for p in places], fontsize=8)
    ax.tick_params(length=0)
    for side in ("top", "right", "bottom", "left"):
        ax.spines[side].set_visible(False)
    _category_legend(ax, sorted(seen), loc="upper left", bbox_to_anchor=(1.01, 1.0),
                     frameon=False)
    ax.set_title(plot_text(title) if title else "Daily air-quality forecast (global index)")
    set_description(ax, _grid_text(ax.get_title(), data, names))
    return ax


def _category(row: pd.Series) -> str:
    """Give a reading's category: the service's, else the band of its index."""
    given = row.get("category")
    return str(given) if isinstance(given, str) and given else \
        band_name(float(row["globalIndex"]))


def _reading(row: pd.Series) -> str:
    return f"{float(row['globalIndex']):.0f} ({_category(row)})"


def _day_text(value: Any) -> str:
    return _day_label(value).replace("\n", " ")


def _forecast_text(title: str, rows: pd.DataFrame) -> str:
    """Describe one place's forecast: its range, then each day with its dominant pollutant."""
    values = rows["globalIndex"].astype(float)
    low, high = rows.iloc[int(values.argmin())], rows.iloc[int(values.argmax())]
    days = [f"{_day_text(r['dateTime'])} {_reading(r)}, dominant "
            f"{SHORT_POLLUTANT.get(str(r['dominantPollutant']), str(r['dominantPollutant']))}"
            for _, r in rows.iterrows()]
    return sentences(f"{title}: {counted(len(rows), 'day')}; global index from {_reading(low)} "
                     f"on {_day_text(low['dateTime'])} to {_reading(high)} on "
                     f"{_day_text(high['dateTime'])}", listed(days, 8, "more days"))


def _grid_text(title: str, data: pd.DataFrame, names: Mapping[int, str]) -> str:
    """Describe the grid: the highest and lowest cell, and each place's highest day."""
    values = data["globalIndex"].astype(float)
    high, low = data.iloc[int(values.argmax())], data.iloc[int(values.argmin())]

    def where(r: pd.Series) -> str:
        return f"{names[int(r['location_index'])]} on {_day_text(r['dateTime'])}"

    peaks = []
    for place, name in names.items():
        rows = data[data["location_index"] == place]
        if len(rows):
            top = rows.iloc[int(rows["globalIndex"].astype(float).argmax())]
            peaks.append(f"{name} {_reading(top)} on {_day_text(top['dateTime'])}")
    return sentences(f"{title}: {counted(len(names), 'place')} over "
                     f"{counted(data['dateTime'].nunique(), 'day')}",
                     f"Highest: {where(high)}, {_reading(high)}; lowest: {where(low)}, "
                     f"{_reading(low)}", f"Each place's highest day: {listed(peaks, 8)}")


@marks_sandbox
def forecast_along(df: pd.DataFrame, distance: str = "km", *, ax: Axes | None = None,
                   xlabel: str = "distance along the route (km)",
                   title: str | None = None) -> Axes:
    """Draw the daily forecast at points along a route, with the band limits marked.

    One line per forecast day: the global index against the distance.

    Parameters
    ----------
    df : pandas.DataFrame
        The frame :func:`toolkit.air_quality_forecast` returned for points along a route
        (``location_index``, ``dateTime``, ``globalIndex``), with a column of each point's
        distance from the start.
    distance : str
        That column.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted.
    xlabel : str
        The distance axis' title, in words with its unit.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
    """
    require_columns(df, ["location_index", "dateTime", "globalIndex", distance],
                    "plot.forecast_along")
    data = df.dropna(subset=["globalIndex", "dateTime", distance])
    if data.empty:
        raise ValidationError("df", "no forecast rows", "plot.forecast_along needs at least "
                              "one answered forecast day")
    ax = new_axes(ax, figsize=(10, 4.5))
    for k, (when, day) in enumerate(data.sort_values(distance).groupby("dateTime", sort=True)):
        style = series_style(k)
        ax.plot(day[distance].astype(float), day["globalIndex"].astype(float),
                color=style["color"], ls=style["ls"], marker=style["marker"], ms=4, lw=1.5,
                label=_day_label(when).replace("\n", " "))
    top = max(60.0, float(data["globalIndex"].max()) * 1.1)
    ax.set_ylim(0, top)
    _band_lines(ax, top)
    ax.set_xlabel(plot_text(xlabel))
    ax.set_ylabel("global air-quality index")
    ax.legend(title="forecast day", loc="upper left", bbox_to_anchor=(1.12, 1.0),
              frameon=False)
    ax.set_title(plot_text(title) if title else "Daily air-quality forecast along the route")
    ax.spines[["top", "right"]].set_visible(False)
    set_description(ax, _along_text(ax.get_title(), data, distance, xlabel))
    return ax


def _along_text(title: str, data: pd.DataFrame, distance: str, xlabel: str) -> str:
    """Describe the forecast along a route: per day, its range and where it is highest."""
    at = data[distance].astype(float)
    unit = re.search(r"\(([^()]+)\)\s*$", xlabel)
    days = []
    for when, day in data.groupby("dateTime", sort=True):
        values = day["globalIndex"].astype(float)
        top = day.iloc[int(values.argmax())]
        days.append(f"{_day_text(when)}: from {values.min():.0f} to {_reading(top)}, highest at "
                    f"{float(top[distance]):g}{' ' + unit.group(1) if unit else ''}")
    return sentences(f"{title}: {counted(data['location_index'].nunique(), 'point')}, "
                     f"{xlabel} {at.min():g} to {at.max():g}, "
                     f"{counted(data['dateTime'].nunique(), 'forecast day')}",
                     listed(days, 8, "more days"))


@marks_sandbox
def air_quality_hours(df: pd.DataFrame, *, labels: Any = None, tz: str | None = None,
                      ax: Axes | None = None, title: str | None = None) -> Axes:
    """Draw the hourly forecast: one line per place, each hour marked in its category colour.

    The global index hour by hour, the band limits (20, 50, 100, 150, 250) marked and named at
    the right, so a reader sees when a place crosses into the next category.

    Parameters
    ----------
    df : pandas.DataFrame
        The frame :func:`toolkit.air_quality_hourly_forecast` returns (``location_index``,
        ``dateTime``, ``globalIndex``, ``categoryColor``, ``category``); places that failed are
        left out.
    labels : str, mapping or sequence, optional
        Place names: a column of ``df``, a mapping ``location_index -> name`` or names in input
        order.
    tz : str, optional
        Time zone of the time axis (``"Europe/Andorra"``); UTC when omitted.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
    """
    require_columns(df, ["location_index", "dateTime", "globalIndex", "categoryColor"],
                    "plot.air_quality_hours")
    import matplotlib.dates as mdates

    data = df.dropna(subset=["globalIndex", "location_index", "dateTime"])
    if data.empty:
        raise ValidationError("df", "no forecast rows", "plot.air_quality_hours needs at least "
                              "one answered forecast hour")
    zone = tz or "UTC"
    names = _labels(data, labels)
    ax = new_axes(ax, figsize=(10, 4.5))
    for k, place in enumerate(names):
        rows = data[data["location_index"] == place].sort_values("dateTime")
        when = rows["dateTime"].dt.tz_convert(zone).dt.tz_localize(None)
        style = series_style(k)
        ax.plot(when, rows["globalIndex"].astype(float), color=style["color"], ls=style["ls"],
                lw=1.5, label=names[place], zorder=2)
        ax.scatter(when, rows["globalIndex"].astype(float), s=18, zorder=3,
                   color=[_colour(r) for _, r in rows.iterrows()], edgecolor="#333333",
                   linewidths=0.4, marker=style["marker"])
    top = max(60.0, float(data["globalIndex"].max()) * 1.1)
    ax.set_ylim(0, top)
    _band_lines(ax, top)
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%a %H:%M"))
    ax.tick_params(axis="x", labelsize=8)
    ax.set_xlabel(f"hour ({plot_text(zone)})")
    ax.set_ylabel("global air-quality index")
    ax.legend(title="place", loc="upper left", bbox_to_anchor=(1.12, 1.0), frameon=False)
    hours = int(data.groupby("location_index")["dateTime"].nunique().max())
    ax.set_title(plot_text(title) if title else
                 f"Hourly air-quality forecast, {hours} hour{'s' if hours != 1 else ''}")
    ax.spines[["top", "right"]].set_visible(False)
    set_description(ax, _hours_text(ax.get_title(), data, names, zone))
    return ax


def _hours_text(title: str, data: pd.DataFrame, names: dict[Any, str], zone: str) -> str:
    """Describe the hourly forecast: per place, its range and its best and worst hours."""
    def when(value: Any) -> str:
        return f"{pd.Timestamp(value).tz_convert(zone):%a %H:%M}"

    places = []
    for place, name in names.items():
        rows = data[data["location_index"] == place].sort_values("dateTime")
        values = rows["globalIndex"].astype(float)
        best, worst = rows.iloc[int(values.argmin())], rows.iloc[int(values.argmax())]
        places.append(f"{name}: best {_reading(best)} at {when(best['dateTime'])}, worst "
                      f"{_reading(worst)} at {when(worst['dateTime'])}")
    return sentences(f"{title}: {counted(len(names), 'place')}, times in {zone}",
                     listed(places, 8, "more places"))


def _day_label(value: Any) -> str:
    """Give the local date of a forecast day.

    The service stamps a day with its local midnight in UTC, so the date twelve hours later is the
    local date for any offset within ±12 h.
    """
    return (pd.Timestamp(value) + pd.Timedelta(hours=12)).strftime("%a\n%d %b")


def _rect(x: float, y: float, colour: str) -> Rectangle:
    from matplotlib.patches import Rectangle

    return Rectangle((x + 0.03, y + 0.05), 0.94, 0.9, facecolor=colour, edgecolor="white")


# ------------------------------------------------------------------------------ pollutants


@marks_sandbox
def pollutants(df: pd.DataFrame, *, location: int | None = None, ax: Axes | None = None,
               title: str | None = None) -> Axes:
    """Draw the pollutant breakdown of one current reading.

    Each pollutant's global index is a bar coloured by its own category, its concentration written
    beside it, the band limits marked.

    Parameters
    ----------
    df : pandas.DataFrame
        The frame :func:`toolkit.air_quality` returns, or its long pollutant frame from
        :func:`toolkit.air_quality_pollutants`.
    location : int, optional
        The ``location_index`` to draw (default: the first place with pollutants).
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
    """
    if isinstance(df, pd.DataFrame) and "pollutants" in df.columns and "type" not in df.columns:
        from toolkit.maps.weather import air_quality_pollutants

        df = air_quality_pollutants(df)
    require_columns(df, ["location_index", "type", "globalIndex", "concentration.value",
                         "concentration.unit"], "plot.pollutants")
    data = df.dropna(subset=["location_index"])
    if data.empty:
        raise ValidationError("df", "no pollutant rows", "plot.pollutants needs pollutant "
                              "details: ask air_quality() with pollutants=True")
    place = int(data["location_index"].iloc[0]) if location is None else location
    rows = data[data["location_index"] == place]
    if rows.empty:
        raise ValidationError("location", location, "no pollutant rows for this location_index")
    rows = rows.sort_values("globalIndex")
    ax = new_axes(ax, figsize=(7, 0.45 * len(rows) + 1.8))
    values = rows["globalIndex"].astype(float).to_numpy()
    colours = [band_colour(float(v)) for v in values]
    y = np.arange(len(rows))
    edge = ["#000000" if bool(d) else "#555555" for d in
            rows.get("is_dominant", pd.Series(False, index=rows.index)).fillna(False)]
    ax.barh(y, values, color=colours, edgecolor=edge, height=0.65)
    top = max(60.0, float(values.max()) * 1.3)
    for yi, (_, r) in zip(y, rows.iterrows(), strict=True):
        ax.text(float(r["globalIndex"]) + top * 0.01, float(yi),
                plot_text(f"{r['globalIndex']:.0f}  ({r['concentration.value']:g} "
                          f"{r['concentration.unit']})"),
                va="center", fontsize=8)
    ax.set_xlim(0, top)
    _band_lines(ax, top, vertical=True)
    ax.set_yticks(y, [plot_text(t) for t in rows["type"]])
    ax.set_xlabel("global air-quality index of each pollutant (concentration in brackets)")
    when = rows["dateTime"].iloc[0] if "dateTime" in rows.columns else None
    stamp = f" at {pd.Timestamp(when):%Y-%m-%d %H:%M} UTC" if when is not None and \
        pd.notna(when) else ""
    ax.set_title(plot_text(title) if title else f"Pollutants of place {place}{stamp}", pad=28)
    ax.spines[["top", "right"]].set_visible(False)
    set_description(ax, _pollutants_text(ax.get_title(), rows))
    return ax


def _pollutants_text(title: str, rows: pd.DataFrame) -> str:
    """Describe the breakdown: each pollutant's index and concentration, highest first."""
    items = [f"{r['type']} {float(r['globalIndex']):.0f} ({r['concentration.value']:g} "
             f"{r['concentration.unit']})" for _, r in rows.iloc[::-1].iterrows()]
    dominant = rows[rows.get("is_dominant", pd.Series(False, index=rows.index))
                    .fillna(False).astype(bool)]
    return sentences(f"{title}: global index of {counted(len(rows), 'pollutant')}, highest first",
                     listed(items, 8),
                     f"Dominant: {', '.join(str(t) for t in dominant['type'])}"
                     if len(dominant) else "")


# ------------------------------------------------------------------------------ map


@marks_sandbox
def air_quality_map(df: pd.DataFrame, *, labels: Any = None, ax: Axes | None = None,
                    background: Any = True, title: str | None = None) -> Axes:
    """Map the current (or forecast) air quality at many places.

    One dot per place in its category colour, sized by the global index, over a background of lines
    (by default the shipped road network, where the places lie inside it).

    Parameters
    ----------
    df : GeoDataFrame
        The frame :func:`toolkit.air_quality` returns (or one day of
        :func:`toolkit.air_quality_forecast`): ``location_index``, ``globalIndex``,
        ``categoryColor``, ``geometry``. Places that failed are drawn as grey crosses.
    labels : str, mapping or sequence, optional
        Place names written beside the dots (a column, a mapping ``location_index -> name`` or
        names in input order).
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted.
    background : GeoDataFrame, True or None
        Lines drawn under the dots: a frame of your own, ``True`` for the bundled road network
        of Andorra where it overlaps the places, ``None`` for nothing (see
        :func:`toolkit.plot.maps.draw_background`).
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
    """
    require_columns(df, ["location_index", "globalIndex", "categoryColor", "geometry"],
                    "plot.air_quality_map")
    pts = df[df.geometry.notna()] if hasattr(df, "geometry") else df.dropna(subset=["geometry"])
    if pts.empty:
        raise ValidationError("df", "no places", "plot.air_quality_map needs places")
    xs = np.array([g.x for g in pts["geometry"]])
    ys = np.array([g.y for g in pts["geometry"]])
    bounds = (float(xs.min()), float(ys.min()), float(xs.max()), float(ys.max()))
    own = ax is None
    ax = new_axes(ax, figsize=(9, 7))
    from toolkit.plot.maps import draw_background, finish_map, spread_labels

    credit = draw_background(ax, background, bounds)
    ok = pts["globalIndex"].notna().to_numpy()
    colours = [_colour(r) for _, r in pts[ok].iterrows()]
    values = pts.loc[ok, "globalIndex"].astype(float).to_numpy()
    ax.scatter(xs[ok], ys[ok], s=30 + 2.2 * values, c=colours, edgecolors="#222222",
               linewidths=0.7, zorder=3)
    if (~ok).any():
        ax.scatter(xs[~ok], ys[~ok], marker="x", c="#9e9e9e", s=40, zorder=3,
                   label="no answer")
    seen = sorted({band_name(float(v)) for v in values})
    _category_legend(ax, seen, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    when = df["dateTime"].dropna() if "dateTime" in df.columns else pd.Series([], dtype=object)
    stamp = f" ({pd.Timestamp(when.iloc[0]):%Y-%m-%d %H:%M} UTC)" if len(when) else ""
    # framed (and its own figure fitted) before the labels are spread over it
    finish_map(ax, bounds, title or f"Air quality{stamp}", credit, least_extent=0.01, own=own)
    if labels is not None:
        names = _labels(pts, labels)
        placed = []
        for x, y, i, v in zip(xs, ys, pts["location_index"], pts["globalIndex"], strict=True):
            if pd.isna(i):
                continue
            text = names.get(int(i), "")
            if pd.notna(v):
                text += f" {v:.0f}"
            placed.append(ax.text(x, y, text, fontsize=MIN_FONT_SIZE, zorder=4))
        spread_labels(ax, placed, xs, ys)
    set_description(ax, _map_text(ax.get_title(), pts, _labels(pts, labels)))
    return ax


def _map_text(title: str, pts: pd.DataFrame, names: Mapping[int, str]) -> str:
    """Describe the air-quality map: the range, the categories, the places highest first."""
    answered = pts[pts["globalIndex"].notna()]
    values = answered["globalIndex"].astype(float)
    categories = pd.Series([_category(r) for _, r in answered.iterrows()],
                           dtype=object).value_counts()
    ranked = [f"{names.get(int(r['location_index']), 'place')} {_reading(r)}"
              for _, r in answered.loc[values.sort_values(ascending=False,
                                                          kind="stable").index].iterrows()]
    missing = len(pts) - len(answered)
    return sentences(
        f"{title}: {counted(len(pts), 'place')}" + (
            f", global index from {values.min():.0f} to {values.max():.0f}" if len(values)
            else ""),
        "By category: " + ", ".join(f"{n:,} {c}" for c, n in categories.items())
        if len(categories) else "",
        f"Highest first: {listed(ranked, 6, 'more places')}" if ranked else "",
        f"{counted(missing, 'place')} without an answer" if missing else "")


# ------------------------------------------------------------------------------ alerts


@marks_sandbox
def alert_timeline(df: pd.DataFrame, *, now: Any = None, ax: Axes | None = None,
                   title: str | None = None) -> Axes:
    """Draw severe weather alerts as a timeline.

    One bar per alert area from its start to its end (UTC), coloured by its latest status.

    Parameters
    ----------
    df : pandas.DataFrame
        The frame :func:`toolkit.severe_weather_alerts` returns (``alertId``, ``area_index``,
        ``name``, ``description.english``, ``startTime``, ``endTime``,
        ``latestStatus.english``). An area asked from several places is drawn once.
    now : datetime or Timestamp, optional
        Marked as a vertical line (e.g. the reading time of the current air quality).
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.dates as mdates
    from matplotlib.patches import Patch

    require_columns(df, ["alertId", "area_index", "name", "startTime", "endTime",
                         "latestStatus.english"], "plot.alert_timeline")
    data = df.dropna(subset=["alertId", "startTime", "endTime"]).drop_duplicates(
        ["alertId", "area_index"])
    if data.empty:
        raise ValidationError("df", "no alert areas", "plot.alert_timeline needs at least one "
                              "alert area with start and end times")
    sort_cols = [c for c in ("priority", "alertId", "area_index") if c in data.columns]
    data = data.sort_values(sort_cols, kind="stable")
    ax = new_axes(ax, figsize=(9, 0.38 * len(data) + 1.8))
    what = data["description.english"] if "description.english" in data.columns else \
        data["alertId"].astype(str)
    labels = [plot_text(f"{w} · {n}") for w, n in zip(what, data["name"], strict=True)]
    y = np.arange(len(data))
    start = mdates.date2num(data["startTime"].dt.tz_convert("UTC").dt.tz_localize(None))
    end = mdates.date2num(data["endTime"].dt.tz_convert("UTC").dt.tz_localize(None))
    statuses = [str(s) for s in data["latestStatus.english"]]
    colours = [status_colour(s) for s in statuses]
    ax.barh(y, end - start, left=start, color=colours, edgecolor="#333333", height=0.6)
    ax.set_yticks(y, labels, fontsize=8)
    ax.set_ylim(len(data) - 0.5, -0.5)
    ax.xaxis_date()
    locator = mdates.AutoDateLocator(minticks=3, maxticks=7)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%a %d\n%H:%M"))
    ax.tick_params(axis="x", labelsize=8)
    ax.set_xlabel("time (UTC)")
    if now is not None:
        t = pd.Timestamp(now)
        t = t.tz_convert("UTC").tz_localize(None) if t.tzinfo is not None else t
        ax.axvline(mdates.date2num(t), color="#000000", lw=1.2, ls=":")
        ax.text(mdates.date2num(t), len(data) - 0.5, " now", va="bottom", fontsize=8)
    order = [s for s in ALERT_STATUSES if s in statuses] + \
        [s for s in dict.fromkeys(statuses) if s not in ALERT_STATUSES]
    ax.legend(handles=[Patch(facecolor=status_colour(s), label=plot_text(s))
                       for s in order], title="latest status", fontsize=8, title_fontsize=8,
              loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_title(plot_text(title) if title else "Severe weather alerts by area")
    ax.spines[["top", "right"]].set_visible(False)
    set_description(ax, _alerts_text(ax.get_title(), data, labels, statuses))
    return ax


def _alerts_text(title: str, data: pd.DataFrame, labels: list[str], statuses: list[str]) -> str:
    """Describe the timeline: how many areas and alerts, when, each area's span and status."""
    def when(value: Any) -> str:
        return f"{pd.Timestamp(value).tz_convert('UTC'):%a %d %b %H:%M}"

    spans = [f"{label}: {when(a)} to {when(b)}, {status}" for label, a, b, status in
             zip(labels, data["startTime"], data["endTime"], statuses, strict=True)]
    counts = pd.Series(statuses, dtype=object).value_counts()
    return sentences(
        f"{title}: {counted(len(data), 'alert area')} of "
        f"{counted(data['alertId'].nunique(), 'alert')}, from {when(data['startTime'].min())} "
        f"to {when(data['endTime'].max())} (UTC)",
        "Latest status: " + ", ".join(f"{n:,} {s}" for s, n in counts.items()),
        listed(spans, 6, "more areas"))
