"""Weather (spec 2 §2.5-2.7, §4.5-4.7) at one place or many.

Current air quality, daily and hourly air-quality forecasts and severe weather alerts.

Every function takes ``locations`` in any of these shapes:

* a ``(longitude, latitude)`` pair, the toolkit's order everywhere (as GeoJSON and shapely have
  it; the toolkit writes the service's ``lat,lon`` query itself): ``(1.521, 42.507)``, or a
  sequence of such pairs, or an ``(n, 2)`` array of them;
* shapely Points, or a GeoSeries/GeoDataFrame of Points (reprojected to EPSG:4326 when they
  have another CRS);
* a DataFrame with longitude and latitude columns (``lon``/``lng``/``longitude`` and
  ``lat``/``latitude``);
* place names (``"Ordino"``, or a list mixing names and points, or a Series of names), found
  through :func:`~toolkit.maps.search.geocode` before any weather request: its top match, when
  High or Medium confidence. A name with no such match is not asked about: its row carries
  ``error.code`` ``PlaceNotFoundError`` and an empty geometry (raised when no location is
  left). The frame's ``place`` column keeps the name asked and ``place_address`` what it
  resolved to (both empty for a location given as coordinates); ``geometry`` is the point
  asked about.

Coordinates are checked before any request (longitude within ±180, latitude within ±90; the
error shows the pair as read). A pair valid both ways is taken as (longitude, latitude), never
guessed. Many places are asked
concurrently within the service's documented rate (weather: 50 requests per second per account);
the frame keeps the input order in ``location_index`` and the queried point in ``geometry``. A
place the service refuses (far out at sea, for instance) becomes a row with ``error.code`` and
``error.message`` while the other places keep their results; when every place fails, or the
credential is refused, the error is raised.

The pollutants of a current reading are in the ``pollutants`` column (a list, as the service sent
it); :func:`air_quality_pollutants` turns them into a long typed frame, one row per place and
pollutant, without another request.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from toolkit._core.concurrency import fan_out, settle
from toolkit._core.errors import ApiError, AuthenticationError, ToolkitError, ValidationError
from toolkit._core.frames import build_frame, to_geoframe
from toolkit._core.geo import LocationsLike, latlon_param
from toolkit._core.paging import PagingStyle, iter_pages
from toolkit._core.provenance import provenance, provenance_of
from toolkit._core.registry import OperationRecord, register
from toolkit._core.schemas import Schema
from toolkit._core.validate import check_api_version, check_frame, check_int
from toolkit._spec.maps import (
    AIR_QUALITY_HOURLY_DURATIONS,
    POLLUTANT_SHORT_NAMES,
    WEATHER_API_VERSIONS,
)
from toolkit.connection import get_connection
from toolkit.maps._schemas import (
    AIR_QUALITY,
    AIR_QUALITY_FORECAST,
    AIR_QUALITY_HOURLY_FORECAST,
    AIR_QUALITY_POLLUTANTS,
    SEVERE_WEATHER_ALERTS,
)

if TYPE_CHECKING:
    import geopandas as gpd

    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["air_quality", "air_quality_forecast", "air_quality_hourly_forecast",
           "air_quality_pollutants", "severe_weather_alerts"]

API_VERSION = WEATHER_API_VERSIONS[0]
#: The service allows 50 weather requests per second per account; stay just under (a bucket of
#: 2 keeps any one-second window at 47 starts at most, leaving room for network jitter).
WEATHER_QPS = 45.0
WEATHER_BURST = 2
#: Weather answers list ``results`` and name the next page in ``nextLink`` (GET).
RESULTS = PagingStyle(items_key="results")

CURRENT_PATH = "/weather/airQuality/current/json"
FORECAST_PATH = "/weather/airQuality/forecasts/daily/json"
HOURLY_PATH = "/weather/airQuality/forecasts/hourly/json"
ALERTS_PATH = "/weather/severe/alerts/json"

#: UnitType codes of spec 2 §2.5.
UNIT_TYPES = {
    0: "feet", 1: "inches", 2: "miles", 3: "millimeter", 4: "centimeter", 5: "meter",
    6: "kilometer", 7: "kilometersPerHour", 8: "knots", 9: "milesPerHour", 10: "metersPerSecond",
    11: "hectoPascals", 12: "inchesOfMercury", 13: "kiloPascals", 14: "millibars",
    15: "millimetersOfMercury", 16: "poundsPerSquareInch", 17: "Celsius", 18: "Fahrenheit",
    19: "kelvin", 20: "percent", 21: "float", 22: "integer", 31: "MicrogramsPerCubicMeterOfAir",
}
#: Dominant pollutant names of the service and the pollutant types they are.
DOMINANT_TYPES = POLLUTANT_SHORT_NAMES


# ------------------------------------------------------------------------------ shared steps


def _points(locations: object, conn: Connection
            ) -> tuple[np.ndarray, dict[str, list[Any]], dict[int, ToolkitError]]:
    """Check the places before any request, then geocode names (:func:`resolve_locations`)."""
    from toolkit.maps.search import resolve_locations

    return resolve_locations(locations, "locations", conn)


def _language(language: Any) -> str | None:
    if language is None:
        return None
    if not isinstance(language, str) or not language.strip():
        raise ValidationError("language", language, "must be an IETF language tag such as 'en', "
                              "'ca' or 'fr-FR', or None")
    return language.strip()


def _flag(value: Any, parameter: str) -> str:
    if not isinstance(value, bool | np.bool_):
        raise ValidationError(parameter, value, "must be True or False")
    return "true" if value else "false"


def _ask_all(conn: Connection, path: str, points: np.ndarray, params: dict[str, Any],
             operation: str, failed: dict[int, ToolkitError]) -> tuple[list[Any], list[str]]:
    """GET ``path`` for every point, following next links.

    Per point the list of results or the error (``failed`` ones are not asked about), and the
    request ids.
    """
    pipe = conn.pipeline("maps")

    def ask(i: int) -> tuple[list[dict[str, Any]], list[str]]:
        if i in failed:
            raise failed[i]
        lon, lat = points[i]
        results: list[dict[str, Any]] = []
        ids: list[str] = []
        for page in iter_pages(pipe, "GET", path, style=RESULTS,
                               params={**params, "query": latlon_param(lon, lat)},
                               operation=operation):
            if page.response.request_id:
                ids.append(page.response.request_id)
            results.extend(r for r in page.items if isinstance(r, dict))
        return results, ids

    outcomes = fan_out(ask, list(range(len(points))), connection=conn, desc=operation,
                       rate=WEATHER_QPS, burst=WEATHER_BURST, service="maps.weather")
    answers: list[Any] = []
    request_ids: list[str] = []
    for o in settle(outcomes, fatal=(AuthenticationError,)):
        if o.ok:
            found, ids = o.result()
            answers.append(found)
            request_ids.extend(ids)
        else:
            logger.info("%s: location %d failed: %s", operation, o.index, o.error)
            answers.append(o.error)
    return answers, request_ids


def _error_fields(err: ToolkitError) -> dict[str, Any]:
    if isinstance(err, ApiError):
        return {"code": err.code or f"HTTP{err.status}", "message": err.message or str(err)}
    return {"code": type(err).__name__, "message": str(err)}


def _point_geometry(points: np.ndarray) -> list[Any]:
    import shapely

    known = np.isfinite(points).all(axis=1)
    geoms = list(np.asarray(shapely.points(points)))
    return [g if ok else None for g, ok in zip(geoms, known, strict=True)]


def _frame(rows: list[dict[str, Any]], schema: Schema, operation: str, api_version: str,
           conn: Connection, path: str, request_ids: list[str]) -> gpd.GeoDataFrame:
    attrs = provenance(operation, api_version, conn.pipeline("maps").url(path), request_ids)
    return to_geoframe(build_frame(rows, schema, attrs))


def _rows(answers: list[Any], points: np.ndarray, named: dict[str, list[Any]],
          per_result: Callable[[int, int, dict[str, Any]], list[dict[str, Any]]], *,
          keep_empty: bool = True) -> list[dict[str, Any]]:
    """Build the rows of every place: its results, its error, or one row with only the place.

    The row with only the place is kept (``keep_empty``) when the service had no result for it.
    """
    rows: list[dict[str, Any]] = []
    geoms = _point_geometry(points)
    for i, answer in enumerate(answers):
        base = {"location_index": i, "geometry": geoms[i],
                **{column: values[i] for column, values in named.items()}}
        if isinstance(answer, ToolkitError):
            rows.append({**base, "error": _error_fields(answer)})
            continue
        if not answer and keep_empty:
            rows.append(base)
            continue
        for k, result in enumerate(answer):
            rows.extend({**base, **r} for r in per_result(i, k, result))
    return rows


# ------------------------------------------------------------------------------ current


def air_quality(locations: LocationsLike, *, language: str | None = None, pollutants: bool = True,
                api_version: str = API_VERSION,
                connection: Connection | None = None) -> gpd.GeoDataFrame:
    """Read the current air quality at one place or many.

    Parameters
    ----------
    locations : pair, points, place names, GeoSeries/GeoDataFrame or DataFrame
        ``(lon, lat)`` (the toolkit's order, as GeoJSON and shapely have it), many such pairs,
        shapely Points, a GeoSeries/GeoDataFrame of Points (any CRS), a DataFrame with lon/lat
        columns, or place names (``"Ordino"``; resolved through
        :func:`~toolkit.maps.search.geocode`, see the module's notes).
    language : str, optional
        IETF tag of the category and description text (``"en"``, ``"fr"``, ``"ca"``...); the
        service falls back to its default language where it has none.
    pollutants : bool
        Ask for the per-pollutant details (the service's default). ``False`` sends
        ``pollutants=false``: the ``pollutants`` column is then empty.
    api_version : str
        The service version (``"1.1"``).
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    geopandas.GeoDataFrame
        EPSG:4326, one row per place in input order: ``location_index`` (Int64, position in
        ``locations``), ``place`` and ``place_address`` (strings: the name asked and geocode's
        formatted address of its match; empty for a location given as coordinates),
        ``dateTime`` (UTC datetime of the observation), ``globalIndex`` (float,
        0 to 250+), ``index`` (float, local regulator's scale), ``category`` (ordered category
        Excellent < Fair < Poor < Unhealthy < Very unhealthy < Dangerous; localized or unknown
        names from the service are kept after them), ``categoryColor`` (string, hex colour),
        ``dominantPollutant`` (category), ``description`` (string), ``pollutants`` (list of the
        service's pollutant objects; see :func:`air_quality_pollutants`), ``error.code`` and
        ``error.message`` (strings, only for a place that failed), ``geometry`` (the queried
        point).

    Raises
    ------
    ValidationError
        Before any request: no places, a longitude outside ±180 or latitude outside ±90 (the
        message shows the pair as read, in the toolkit's (longitude, latitude) order), a bad
        language or flag.
    PlaceNotFoundError
        When no place name could be placed and no location is left to ask about.
    ApiError
        When every place failed (e.g. one place far out at sea), or the credential was refused.
    """
    lang = _language(language)
    flag = _flag(pollutants, "pollutants")
    check_api_version(api_version)
    conn = get_connection(connection)
    points, named, failed = _points(locations, conn)
    params = {"api-version": api_version, "language": lang, "pollutants": flag}
    answers, ids = _ask_all(conn, CURRENT_PATH, points, params, "air_quality", failed)
    rows = _rows(answers, points, named, lambda i, k, r: [r] if k == 0 else [])
    return _frame(rows, AIR_QUALITY, "air_quality", api_version, conn, CURRENT_PATH, ids)


def air_quality_pollutants(df: pd.DataFrame) -> gpd.GeoDataFrame | pd.DataFrame:
    """Reshape the pollutants of an :func:`air_quality` frame into a long frame (no request).

    Parameters
    ----------
    df : DataFrame
        A frame returned by :func:`air_quality` (or a subset of its rows).

    Returns
    -------
    geopandas.GeoDataFrame
        One row per place and pollutant, in the frame's row order and the service's pollutant
        order: ``location_index`` (Int64), ``dateTime`` (UTC), ``type`` (category CO, NO2, O3,
        PM2.5, PM10, SO2; types the service adds are kept), ``name`` (string, English),
        ``concentration.value`` (float), ``concentration.unit`` (string, e.g. ``µg/m³``),
        ``concentration.unitType`` (Int64), ``unit_type_name`` (string, the UnitType's name,
        e.g. ``MicrogramsPerCubicMeterOfAir``), ``index`` and ``globalIndex`` (floats),
        ``is_dominant`` (boolean: the reading's dominant pollutant), ``geometry``. Empty (with
        every column) when the readings were asked with ``pollutants=False``. A plain
        DataFrame when ``df`` has no geometry.
    """
    check_frame(df, ["location_index", "pollutants"], "air_quality_pollutants", "air_quality()")
    rows: list[dict[str, Any]] = []
    has_geometry = "geometry" in df.columns
    for _, reading in df.iterrows():
        items = reading["pollutants"]
        if not isinstance(items, list | tuple | np.ndarray):
            continue
        dominant = reading.get("dominantPollutant")
        dominant = None if pd.isna(dominant) else str(dominant)
        for p in items:
            if not isinstance(p, dict):
                continue
            unit_type = (p.get("concentration") or {}).get("unitType") \
                if isinstance(p.get("concentration"), dict) else None
            is_dominant = None
            if dominant is not None:
                is_dominant = bool(p.get("name") == dominant or
                                   DOMINANT_TYPES.get(dominant) == p.get("type"))
            rows.append({
                **p,
                "location_index": reading["location_index"],
                "dateTime": reading.get("dateTime"),
                "unit_type_name": UNIT_TYPES.get(unit_type) if isinstance(unit_type, int)
                and not isinstance(unit_type, bool) else None,
                "is_dominant": is_dominant,
                "geometry": reading["geometry"] if has_geometry else None,
            })
    out = build_frame(rows, AIR_QUALITY_POLLUTANTS, provenance_of(df))
    out.attrs["operation"] = "air_quality_pollutants"
    if has_geometry:
        return to_geoframe(out)
    return out.drop(columns="geometry")


# ------------------------------------------------------------------------------ forecast


def air_quality_forecast(locations: LocationsLike, *, duration: int = 1,
                         language: str | None = None, api_version: str = API_VERSION,
                         connection: Connection | None = None) -> gpd.GeoDataFrame:
    """Daily air-quality forecasts for one place or many.

    Parameters
    ----------
    locations : pair, points, place names, GeoSeries/GeoDataFrame or DataFrame
        As for :func:`air_quality`: ``(lon, lat)`` pairs, Points, lon/lat columns or place
        names.
    duration : int
        Days from today, 1 to 7 (default 1).
    language : str, optional
        IETF tag of the category and description text.
    api_version : str
        The service version (``"1.1"``).
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    geopandas.GeoDataFrame
        EPSG:4326, one row per place and day (places in input order, days in order):
        ``location_index`` (Int64), ``place``, ``place_address`` (strings, as in
        :func:`air_quality`), ``day`` (Int64, 0 = today), ``dateTime`` (UTC start of the
        day), ``globalIndex``, ``index`` (floats), ``category`` (ordered category as in
        :func:`air_quality`), ``categoryColor``, ``dominantPollutant`` (category),
        ``description``, ``error.code``, ``error.message`` (one row with the error for a place
        that failed), ``geometry`` (the queried point).

    Raises
    ------
    ValidationError
        Before any request: ``duration`` outside 1-7, no places, out-of-range coordinates, a
        bad language.
    ApiError
        When every place failed, or the credential was refused.
    """
    check_int(duration, "duration", minimum=1, maximum=7)
    lang = _language(language)
    check_api_version(api_version)
    conn = get_connection(connection)
    points, named, failed = _points(locations, conn)
    params = {"api-version": api_version, "language": lang, "duration": int(duration)}
    answers, ids = _ask_all(conn, FORECAST_PATH, points, params, "air_quality_forecast",
                            failed)
    rows = _rows(answers, points, named, lambda i, k, r: [{**r, "day": k}])
    return _frame(rows, AIR_QUALITY_FORECAST, "air_quality_forecast", api_version, conn,
                  FORECAST_PATH, ids)


def _duration_hours(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or \
            int(value) not in AIR_QUALITY_HOURLY_DURATIONS:
        raise ValidationError("duration", value, "must be one of "
                              f"{', '.join(map(str, AIR_QUALITY_HOURLY_DURATIONS))} hours (the "
                              "spans the service forecasts)")
    return int(value)


def air_quality_hourly_forecast(locations: LocationsLike, *, duration: int = 24,
                                language: str | None = None, pollutants: bool = True,
                                api_version: str = API_VERSION,
                                connection: Connection | None = None) -> gpd.GeoDataFrame:
    """Hourly air-quality forecasts for one place or many, from the current hour on.

    Parameters
    ----------
    locations : pair, points, place names, GeoSeries/GeoDataFrame or DataFrame
        As for :func:`air_quality`: ``(lon, lat)`` pairs, Points, lon/lat columns or place
        names.
    duration : int
        Hours ahead: 1, 12, 24 (default), 48, 72 or 96 (the spans the service forecasts).
    language : str, optional
        IETF tag of the category and description text.
    pollutants : bool
        Ask for the per-pollutant details of each hour (the service's default). ``False``
        sends ``pollutants=false``: the ``pollutants`` column is then empty.
    api_version : str
        The service version (``"1.1"``).
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    geopandas.GeoDataFrame
        EPSG:4326, one row per place and hour (places in input order, hours in order):
        ``location_index`` (Int64), ``place``, ``place_address`` (strings, as in
        :func:`air_quality`), ``hour`` (Int64, 0 = the first hour the service forecasts),
        ``dateTime`` (UTC start of the hour), ``globalIndex``, ``index`` (floats),
        ``category`` (ordered category as in :func:`air_quality`), ``categoryColor``,
        ``dominantPollutant`` (category), ``description``, ``pollutants`` (list of the
        service's pollutant objects: :func:`air_quality_pollutants` makes a long frame of
        them), ``error.code``, ``error.message`` (one row with the error for a place that
        failed), ``geometry`` (the queried point).

    Raises
    ------
    ValidationError
        Before any request: ``duration`` not one of 1, 12, 24, 48, 72, 96, no places,
        out-of-range coordinates, a bad language or flag.
    ApiError
        When every place failed, or the credential was refused.
    """
    hours = _duration_hours(duration)
    lang = _language(language)
    flag = _flag(pollutants, "pollutants")
    check_api_version(api_version)
    conn = get_connection(connection)
    points, named, failed = _points(locations, conn)
    params = {"api-version": api_version, "language": lang, "duration": hours,
              "pollutants": flag}
    answers, ids = _ask_all(conn, HOURLY_PATH, points, params, "air_quality_hourly_forecast",
                            failed)
    rows = _rows(answers, points, named, lambda i, k, r: [{**r, "hour": k}])
    return _frame(rows, AIR_QUALITY_HOURLY_FORECAST, "air_quality_hourly_forecast", api_version,
                  conn, HOURLY_PATH, ids)


# ------------------------------------------------------------------------------ alerts


def _offset_seconds(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    offset = parsed.utcoffset()
    return offset.total_seconds() if offset is not None else None


def _alert_rows(i: int, rank: int, alert: dict[str, Any]) -> list[dict[str, Any]]:
    fields = {k: v for k, v in alert.items() if k != "alertAreas"}
    fields["alert_rank"] = rank
    areas = alert.get("alertAreas")
    areas = [a for a in areas if isinstance(a, dict)] if isinstance(areas, list) else []
    if not areas:
        return [fields]
    out = []
    for j, area in enumerate(areas):
        out.append({**fields, **area, "area_index": j,
                    "start_offset": _offset_seconds(area.get("startTime")),
                    "end_offset": _offset_seconds(area.get("endTime"))})
    return out


def severe_weather_alerts(locations: LocationsLike, *, language: str | None = None,
                          details: bool = True,
                          api_version: str = API_VERSION,
                          connection: Connection | None = None) -> gpd.GeoDataFrame:
    """Severe weather alerts in force at one place or many.

    Parameters
    ----------
    locations : pair, points, place names, GeoSeries/GeoDataFrame or DataFrame
        As for :func:`air_quality`: ``(lon, lat)`` pairs, Points, lon/lat columns or place
        names.
    language : str, optional
        IETF tag of the localized description and status (``alertDetails`` is always in the
        issuing provider's language).
    details : bool
        Ask for the full ``alertDetails`` (the service's default); ``False`` leaves that column
        and ``alertDetailsLanguageCode`` empty.
    api_version : str
        The service version (``"1.1"``).
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    geopandas.GeoDataFrame
        EPSG:4326, one row per alert area (the alert's fields repeated on each), places in input
        order and alerts in the service's order (highest priority first); a place with no alert
        has no rows. Columns: ``location_index`` (Int64), ``place``, ``place_address`` (strings,
        as in :func:`air_quality`), ``alert_rank`` (Int64, 0 = first
        alert of the place), ``countryCode`` (string), ``alertId`` (Int64),
        ``description.english``, ``description.localized``, ``category`` (strings),
        ``priority`` (Int64, 1 = highest), ``class``, ``level``, ``source`` (strings),
        ``sourceId`` (Int64), ``disclaimer`` (string), ``area_index`` (Int64), ``name``,
        ``summary`` (strings), ``startTime`` and ``endTime`` (UTC datetimes) with
        ``start_offset`` and ``end_offset`` (timedelta: the UTC offset the service wrote them
        with, so ``startTime + start_offset`` is the local wall time), ``latestStatus.english``
        (category of the eight keywords New, Update, Continue, Extend, Upgrade, Correct, Cancel,
        Expire), ``latestStatus.localized``, ``alertDetails``, ``alertDetailsLanguageCode``
        (strings), ``error.code``, ``error.message`` (a row for a place that failed),
        ``geometry`` (the queried point).

    Raises
    ------
    ValidationError
        Before any request: no places, out-of-range coordinates, a bad language or flag.
    ApiError
        When every place failed, or the credential was refused.
    """
    lang = _language(language)
    flag = _flag(details, "details")
    check_api_version(api_version)
    conn = get_connection(connection)
    points, named, failed = _points(locations, conn)
    params = {"api-version": api_version, "language": lang, "details": flag}
    answers, ids = _ask_all(conn, ALERTS_PATH, points, params, "severe_weather_alerts",
                            failed)
    rows = _rows(answers, points, named, _alert_rows, keep_empty=False)
    return _frame(rows, SEVERE_WEATHER_ALERTS, "severe_weather_alerts", api_version, conn,
                  ALERTS_PATH, ids)


AIR_QUALITY_RECORD = register(OperationRecord(
    "air_quality", schema=AIR_QUALITY, lifetime=600, plot="air_quality_map",
    explore="air_quality"))
POLLUTANTS_RECORD = register(OperationRecord("air_quality_pollutants",
                                             schema=AIR_QUALITY_POLLUTANTS, plot="pollutants",
                                             derived_from="air_quality"))
FORECAST_RECORD = register(OperationRecord(
    "air_quality_forecast", schema=AIR_QUALITY_FORECAST, lifetime=3_600,
    plot="air_quality_forecast", explore="air_quality"))
HOURLY_RECORD = register(OperationRecord(
    "air_quality_hourly_forecast", schema=AIR_QUALITY_HOURLY_FORECAST, lifetime=1_800,
    plot="air_quality_hours"))
ALERTS_RECORD = register(OperationRecord(
    "severe_weather_alerts", schema=SEVERE_WEATHER_ALERTS, lifetime=300, plot="alert_timeline",
    explore="alerts"))
