"""Interactive maps of air quality and severe-weather alerts by place."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from toolkit._core.errors import ValidationError
from toolkit._core.maprules import STATUS_COLORS, reading_colour, status_colour
from toolkit._spec.maps import AIR_QUALITY_COLORS
from toolkit.explore._common import (
    add_layer,
    bounds_of,
    finish,
    geo_frame,
    has_geometry,
    new_map,
    spread_frame,
)
from toolkit.explore._describe import describe_map
from toolkit.explore._fields import local_date
from toolkit.plot.description import counted, listed

if TYPE_CHECKING:
    import folium

__all__ = ["air_quality", "alerts"]


def air_quality(df: pd.DataFrame, *, alerts: pd.DataFrame | None = None, tiles: str = "auto",
                height: int | str = 480, tz: str | None = None) -> folium.Map:
    """Map air quality at many places.

    One marker per place in its category colour, larger for a higher global index; places the
    service refused are grey.

    Parameters
    ----------
    df : GeoDataFrame
        The frame :func:`toolkit.air_quality` returns, or :func:`toolkit.air_quality_forecast`
        (one layer per day then): ``globalIndex``, ``category``, ``geometry``
        (``categoryColor`` when the service sent it).
    alerts : GeoDataFrame, optional
        :func:`toolkit.severe_weather_alerts` for the same places, drawn as layers of their own.
    tiles : {"auto", "roads", "web"}
    height : int or str
    tz : str, optional
        Time zone of the measurement times shown (UTC when omitted).

    Returns
    -------
    folium.Map
        Layer ``air quality`` (or ``air quality <date>`` per forecast day, named by the local
        date the day's forecast covers, the first shown); tooltips hold the place, category,
        global index, dominant pollutant and the time (or local day), popups the full record.
    """
    frame = geo_frame(df, ["globalIndex", "category"], "explore.air_quality")
    if not has_geometry(frame["geometry"]).any():
        raise ValidationError("df", "no places", "explore.air_quality needs places to draw")
    m = new_map(bounds_of(frame["geometry"]), tiles=tiles,
                frames=[df, *([alerts] if alerts is not None else [])], features=len(frame),
                height=height)
    day_column = "day" if "day" in frame.columns else None
    groups = ([(_day_label(rows, day), rows)
               for day, rows in frame.groupby(day_column, sort=True, observed=True)]
              if day_column else [(None, frame)])
    for i, (day, rows) in enumerate(groups):
        index = pd.to_numeric(rows["globalIndex"], errors="coerce").fillna(0)
        radii = (6 + (index.clip(upper=150) / 150) * 8).tolist()
        add_layer(m, rows, "air quality" + (f" {day}" if day else ""), show=i == 0,
                  colors=_colours(rows), radius=radii, tz=tz,
                  operation="air_quality_forecast" if day_column else "air_quality")
    present = [c for c in AIR_QUALITY_COLORS if c in set(frame["category"].astype(str))]
    legend: list[tuple[str, ...]] = [(c, AIR_QUALITY_COLORS[c]) for c in present]
    if alerts is not None:
        statuses = _alert_layers(m, geo_frame(alerts, ["alertId", "latestStatus.english"],
                                              "explore.air_quality(alerts=)"), tz=tz)
        legend += [(f"alert: {s}", STATUS_COLORS[s], "dot") for s in statuses]
    m = finish(m, legend=legend, title="air quality")
    return _describe_air(m, frame, groups, alerts, [df, alerts])


def _describe_air(m: folium.Map, frame: pd.DataFrame, groups: list[tuple[Any, pd.DataFrame]],
                  alerts: pd.DataFrame | None, frames: list[Any]) -> folium.Map:
    """Name the air-quality map and sum it up: its range, categories, highest places, alerts."""
    first = groups[0][1]
    values = pd.to_numeric(first["globalIndex"], errors="coerce")
    answered = first[values.notna().to_numpy()]
    name = next((c for c in ("place", "name", "label") if c in frame.columns), None)
    ranked = answered.assign(_v=values[values.notna()].to_numpy()).sort_values(
        "_v", ascending=False, kind="stable")
    top = [f"{r[name] if name else 'place ' + str(r.get('location_index'))} {r['_v']:.0f} "
           f"({r['category']})" for _, r in ranked.iterrows()]
    categories = answered["category"].astype(str).value_counts()
    places = len(first)
    what = f"air quality at {counted(places, 'place')}" + (
        f", {counted(len(groups), 'forecast day')} (layers), {groups[0][0]} shown"
        if groups[0][0] else "")
    alert_words = ""
    if alerts is not None:
        drawn = alerts[alerts["alertId"].notna().to_numpy()] if "alertId" in alerts else alerts
        if len(drawn):
            statuses = drawn["latestStatus.english"].astype(str).value_counts()
            alert_words = (f"{counted(drawn['alertId'].nunique(), 'severe weather alert')}: "
                           + ", ".join(f"{n:,} {s}" for s, n in statuses.items()))
    return describe_map(
        m, what,
        f"Global index from {values.min():.0f} to {values.max():.0f}" if len(answered) else "",
        "By category: " + ", ".join(f"{n:,} {c}" for c, n in categories.items())
        if len(categories) else "",
        f"Highest first: {listed(top, 6, 'more places')}" if top else "",
        f"{counted(places - len(answered), 'place')} without an answer"
        if places > len(answered) else "",
        alert_words, frames=[f for f in frames if f is not None])


def _alert_layers(m: Any, frame: pd.DataFrame, *, tz: str | None = None) -> list[str]:
    """Add one layer of alerts per category; return the statuses drawn, in legend order."""
    placed = frame[has_geometry(frame["geometry"]) & frame["alertId"].notna().to_numpy()]
    placed = spread_frame(m, placed, 7)  # as one: alerts of every category at one place
    category = placed["category"].astype(object).fillna("alert") if "category" in placed \
        else pd.Series("alert", index=placed.index)
    for name, rows in placed.groupby(category, sort=True):
        colours = [status_colour(s) for s in rows["latestStatus.english"]]
        add_layer(m, rows, f"alerts: {name}", colors=colours, radius=7, tz=tz,
                  operation="severe_weather_alerts", spread=False)
    return [s for s in STATUS_COLORS if s in set(placed["latestStatus.english"].astype(str))]


def _day_label(rows: pd.DataFrame, day: Any) -> str:
    when = rows["dateTime"].dropna() if "dateTime" in rows else pd.Series(dtype=object)
    return local_date(when.iloc[0]) if len(when) else f"day {day}"


def _colours(rows: pd.DataFrame) -> list[str]:
    given = rows["categoryColor"] if "categoryColor" in rows else pd.Series(None,
                                                                          index=rows.index)
    return [reading_colour(colour, category, index) for colour, category, index
            in zip(given, rows["category"], rows["globalIndex"], strict=True)]


def alerts(df: pd.DataFrame, *, tiles: str = "auto", height: int | str = 480,
           tz: str | None = None) -> folium.Map:
    """Severe-weather alerts by place, coloured by their latest status (New, Update... Expire).

    Parameters
    ----------
    df : GeoDataFrame
        The frame :func:`toolkit.severe_weather_alerts` returns (``alertId``,
        ``latestStatus.english``, ``geometry``). An alert asked from several places is drawn at
        each of them.
    tiles : {"auto", "roads", "web"}
    height : int or str
    tz : str, optional
        Time zone of the times shown; by default each alert's own local time (its
        ``start_offset``/``end_offset``).

    Returns
    -------
    folium.Map
        One layer per alert category (``alerts: <category>``); tooltips hold the alert, area,
        level, status and its local start and end, popups the full record (long texts folded).
        Alerts at the same place are spread around it so that each can be hovered.
    """
    frame = geo_frame(df, ["alertId", "latestStatus.english"], "explore.alerts")
    placed = frame[has_geometry(frame["geometry"]) & frame["alertId"].notna().to_numpy()]
    if placed.empty:
        raise ValidationError("df", "no alerts", "explore.alerts needs alerts to draw")
    m = new_map(bounds_of(placed["geometry"]), tiles=tiles, frames=[df], features=len(placed),
                height=height)
    statuses = _alert_layers(m, placed, tz=tz)
    m = finish(m, legend=[(s, STATUS_COLORS[s]) for s in statuses], title="latest status")
    counts = placed["latestStatus.english"].astype(str).value_counts()
    kinds = placed["description.english"].astype(str).value_counts() \
        if "description.english" in placed.columns else pd.Series(dtype=int)
    return describe_map(
        m, f"{counted(placed['alertId'].nunique(), 'severe weather alert')} at "
           f"{counted(len(placed), 'place')}",
        "Latest status: " + ", ".join(f"{n:,} {s}" for s, n in counts.items()),
        "Alerts: " + ", ".join(f"{k} ({n:,})" for k, n in kinds.items()) if len(kinds) else "",
        frames=[df])
