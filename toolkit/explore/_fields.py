"""What a map's tooltip and popup show, declared per operation in one table.

A tooltip (on hover) holds a handful of labelled fields with their units: minutes rather than
seconds, kilometres rather than metres, local times. The popup (on click) holds the full record,
every column formatted, long text folded away behind a "more" toggle. :data:`TOOLTIPS` names the
fields of each operation (the ``operation`` a frame's ``attrs`` carry); a frame of an operation
not in the table gets its first columns.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from toolkit._core.text import html_text

__all__ = ["TOOLTIPS", "Field", "local_date", "popup_cell", "popup_html", "tooltip_texts"]

#: Characters of a value shown in a popup before the rest is folded away.
POPUP_TEXT = 160
#: Characters of a value shown in a tooltip (longer ones end with an ellipsis).
TOOLTIP_TEXT = 60


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return bool(isinstance(value, np.floating) and np.isnan(value))


def _text(value: Any, tz: str | None = None) -> str:
    """Write a value as plain text.

    Lists are joined, nested objects written as ``key: value``, times in ``tz``.
    """
    if _missing(value):
        return ""
    if isinstance(value, pd.Timestamp):
        return _clock(value, tz, date=True)
    if isinstance(value, pd.Timedelta):
        minutes = value.total_seconds() / 60
        return f"{minutes:.0f} min" if abs(minutes) >= 1 else f"{value.total_seconds():.0f} s"
    if isinstance(value, list | tuple | np.ndarray):
        return ", ".join(_text(v, tz) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_text(v, tz)}" for k, v in value.items())
    if isinstance(value, float | np.floating):
        return f"{float(value):,.6g}"
    if hasattr(value, "geom_type"):
        return f"{value.geom_type}"
    return str(value)  # a Secret shows its mask


def _clock(when: pd.Timestamp, tz: str | None, *, date: bool = False) -> str:
    if when.tzinfo is None:
        when = when.tz_localize("UTC")
    shown = when.tz_convert(tz) if tz else when.tz_convert("UTC")
    zone = shown.strftime("%Z") if tz else "UTC"
    return shown.strftime("%a %d %b %H:%M " if date else "%H:%M ") + zone


def local_date(when: Any) -> str:
    """Give the local calendar date of a daily forecast's ``dateTime``.

    A day's forecast starts at local midnight, which the frame holds in UTC (``23:00`` of the
    day before, in Andorra's winter). Half a day later is inside the local day for any offset
    from UTC under twelve hours, so its UTC date is the local date.
    """
    if _missing(when):
        return ""
    return str((pd.Timestamp(when) + pd.Timedelta(hours=12)).date())


# ------------------------------------------------------------------------------ formatters
#: How a field is written: from a row (a Series or a dict of one record) and a time zone.
Formatter = Callable[[Any, str | None], Any]


def _get(row: pd.Series, name: str) -> Any:
    """Get a row's value of a column (None when the frame has no such column)."""
    return row.get(name)


def _minutes(name: str) -> Formatter:
    def f(row: pd.Series, tz: str | None) -> str:
        v = _get(row, name)
        return "" if _missing(v) else f"{float(v) / 60:.0f} min"
    return f


def _km(name: str) -> Formatter:
    def f(row: pd.Series, tz: str | None) -> str:
        v = _get(row, name)
        return "" if _missing(v) else f"{float(v) / 1000:.1f} km"
    return f


def _plain(name: str, unit: str = "", digits: int | None = None) -> Formatter:
    def f(row: pd.Series, tz: str | None) -> str:
        v = _get(row, name)
        if _missing(v):
            return ""
        if digits is not None:
            return f"{float(v):.{digits}f}{unit}"
        return _short(_text(v, tz)) + unit
    return f


def _time(name: str, *, offset: str | None = None) -> Formatter:
    """Make the formatter of a time column.

    The time is shifted by the row's own UTC offset column when there is one (the service's
    local time), else written in ``tz`` (UTC when none is given).
    """
    def f(row: pd.Series, tz: str | None) -> str:
        v = _get(row, name)
        if _missing(v):
            return ""
        when = pd.Timestamp(v)
        shift = _get(row, offset) if offset else None
        if isinstance(shift, pd.Timedelta) and not tz:
            local = when.tz_convert("UTC") + shift
            hours = shift.total_seconds() / 3600
            return local.strftime("%a %d %b %H:%M ") + f"UTC{hours:+g}"
        return _clock(when, tz, date=True)
    return f


def _day(name: str) -> Formatter:
    return lambda row, tz: local_date(_get(row, name))


def _delay(row: pd.Series, tz: str | None) -> str:
    free, traffic = _get(row, "durationInSeconds"), _get(row, "durationTrafficInSeconds")
    if _missing(free) or _missing(traffic) or float(free) <= 0:
        return ""
    extra = max(float(traffic) - float(free), 0.0)
    return f"{extra / 60:.0f} min (+{extra / float(free) * 100:.0f} %)"


def _place(row: pd.Series, tz: str | None) -> str:
    for name in ("place", "town", "name", "address.formattedAddress", "title"):
        v = _get(row, name)
        if isinstance(v, str) and v:
            return _short(v)
    index = _get(row, "location_index")
    return "" if _missing(index) else f"location {index}"


def _route_name(row: pd.Series, tz: str | None) -> str:
    index = _get(row, "route_index")
    kind = "main route" if not _missing(index) and int(index) == 0 else f"alternative {index}"
    ends = [_get(row, "origin_place"), _get(row, "destination_place")]
    trip = " → ".join(str(e) for e in ends if isinstance(e, str) and e)
    ident = _get(row, "optionalId")
    label = trip or (str(ident) if isinstance(ident, str) and ident else "")
    query = _get(row, "query_index")
    if not label and not _missing(query):
        label = f"query {query}"
    return f"{label}: {kind}" if label else kind


def _trip(row: pd.Series, tz: str | None) -> str:
    """Name a matrix cell: its origin and destination, by place or by position."""
    ends = []
    for side in ("origin", "destination"):
        name, index = _get(row, f"{side}_place"), _get(row, f"{side}Index")
        ends.append(_short(name) if isinstance(name, str) and name else
                    "" if _missing(index) else f"{side} {index}")
    return " → ".join(ends)


def _budget(row: pd.Series, tz: str | None) -> str:
    """Write a reachable range's budget: minutes or kilometres."""
    return str(_minutes("timeBudgetInSec")(row, tz) or _km("distanceBudgetInMeters")(row, tz))


def _short(text: str, limit: int = TOOLTIP_TEXT) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


@dataclass(frozen=True)
class Field:
    """One labelled line of a tooltip: its ``label`` (with the unit) and how to write it."""

    label: str
    value: Formatter


#: Tooltip fields per operation (the frame's ``attrs["operation"]``).
TOOLTIPS: dict[str, tuple[Field, ...]] = {
    "route_directions": (
        Field("route", _route_name),
        Field("distance", _km("distanceInMeters")),
        Field("time, no traffic", _minutes("durationInSeconds")),
        Field("time in traffic", _minutes("durationTrafficInSeconds")),
        Field("delay", _delay),
        Field("departs", _time("departureAt")),
        Field("arrives", _time("arrivalAt")),
    ),
    "route_matrix": (
        Field("trip", _trip),
        Field("time", _minutes("durationTrafficInSeconds")),
        Field("distance", _km("distanceInMeters")),
        Field("error", _plain("error.code")),
    ),
    "route_range": (
        Field("place", _place),
        Field("within", _budget),
        Field("error", _plain("error.code")),
    ),
    "snap_to_roads": (
        Field("point", _plain("inputIndex")),
        Field("road", _plain("name")),
        Field("speed limit", _plain("speedLimitInKilometersPerHour", " km/h", 0)),
        Field("interpolated", _plain("isInterpolated")),
    ),
    "traffic_incidents": (
        Field("incident", _plain("incidentType")),
        Field("severity", _plain("severity")),
        Field("where", _plain("title")),
        Field("delay", _plain("delay")),
        Field("road closed", _plain("isRoadClosed")),
        Field("from", _time("startTime")),
        Field("until", _time("endTime")),
    ),
    "air_quality": (
        Field("place", _place),
        Field("category", _plain("category")),
        Field("global index", _plain("globalIndex", "", 0)),
        Field("dominant pollutant", _plain("dominantPollutant")),
        Field("measured", _time("dateTime")),
    ),
    "air_quality_forecast": (
        Field("place", _place),
        Field("day (local)", _day("dateTime")),
        Field("category", _plain("category")),
        Field("global index", _plain("globalIndex", "", 0)),
        Field("dominant pollutant", _plain("dominantPollutant")),
    ),
    "severe_weather_alerts": (
        Field("alert", _plain("description.english")),
        Field("area", _plain("name")),
        Field("level", _plain("level")),
        Field("status", _plain("latestStatus.english")),
        Field("from (local)", _time("startTime", offset="start_offset")),
        Field("until (local)", _time("endTime", offset="end_offset")),
    ),
    "autocomplete": (
        Field("suggestion", _place),
        Field("rank", _plain("rank")),
        Field("type", _plain("type")),
        Field("address", _plain("address.formattedAddress")),
    ),
    "reverse_geocode": (
        Field("point", _plain("input_index")),
        Field("address", _plain("address.formattedAddress")),
        Field("type", _plain("type")),
        Field("confidence", _plain("confidence")),
        Field("distance from the point", _plain("distance_m", " m", 0)),
    ),
    "geocode": (
        Field("query", _plain("query")),
        Field("match", _plain("address.formattedAddress")),
        Field("type", _plain("type")),
        Field("confidence", _plain("confidence")),
    ),
}
#: Columns a popup leaves out: empty error fields, and the bookkeeping of the layers.
_POPUP_SKIP = ("geometry",)


def _generic(columns: Sequence[str], n: int = 6) -> tuple[Field, ...]:
    return tuple(Field(str(c), _plain(str(c))) for c in list(columns)[:n])


def fields_for(df: pd.DataFrame, operation: str | None = None) -> tuple[Field, ...]:
    """Choose the tooltip fields of a frame.

    They are its operation's (``operation``, else its ``attrs``), or its first columns (but the
    geometries) for a frame of no known operation.
    """
    op = operation or df.attrs.get("operation")
    if isinstance(op, str) and op in TOOLTIPS:
        return TOOLTIPS[op]
    geo = {c for c in df.columns if str(df[c].dtype) == "geometry"} | {"geometry"}
    return _generic([c for c in df.columns if c not in geo])


def tooltip_texts(df: pd.DataFrame, fields: Sequence[Field], *,
                  tz: str | None = None) -> dict[str, list[str]]:
    """Give, per field label, the escaped text of every row.

    The text is escaped for a Leaflet tooltip, which writes the values into the page as HTML.
    """
    out: dict[str, list[str]] = {f.label: [] for f in fields}
    for row in df.to_dict("records"):  # plain dicts: formatters read them as rows
        for f in fields:
            out[f.label].append(html_text(str(f.value(row, tz))))
    return out


def popup_cell(value: Any, tz: str | None = None) -> str:
    """Write one value of a popup's record as HTML.

    The value is formatted and escaped, text past :data:`POPUP_TEXT` characters folded behind a
    ``<details>`` toggle; empty when missing.
    """
    if hasattr(value, "geom_type") or _missing(value):
        return ""
    text = _text(value, tz)
    if len(text) > POPUP_TEXT:
        return (f"<details><summary>{html_text(text[:POPUP_TEXT])}…</summary>"
                f"{html_text(text[POPUP_TEXT:])}</details>")
    return html_text(text)


def popup_html(row: pd.Series, *, tz: str | None = None, title: str | None = None) -> str:
    """Write the full record as an HTML table.

    Every column but the geometries and empty values is formatted; text past
    :data:`POPUP_TEXT` characters is folded behind a ``<details>`` toggle.
    """
    lines = []
    for name, value in row.items():
        if name in _POPUP_SKIP:
            continue
        shown = popup_cell(value, tz)
        if not shown:
            continue
        lines.append(f"<tr><th style='text-align:left;padding-right:8px;vertical-align:top'>"
                     f"{html_text(str(name))}</th><td>{shown}</td></tr>")
    head = f"<b>{html_text(title)}</b>" if title else ""
    return (f"<div style='max-height:200px;overflow:auto;font:12px sans-serif'>{head}"
            f"<table>{''.join(lines)}</table></div>")
