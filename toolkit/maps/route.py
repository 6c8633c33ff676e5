"""Route directions in batches (spec 2 §2.2, §4.2) and snap to roads (§2.3, §4.3).

Both take any number of inputs and do the service's bookkeeping:

* ``route_directions`` sends chunks of at most 100 queries per batch call, concurrently but
  never faster than the batch rate the service documents (10 calls a second), and gives one row
  per route in input order; a failed query is a row with its error. A chunk the service
  answers 408 for (longer than its 60 s limit) is split in two and sent again.
* ``snap_to_roads`` splits a long trace into overlapping windows that respect the service's
  limits (5,000 points, 100 km of road), snaps them concurrently and stitches them back into one
  result whose ``inputIndex`` points into the caller's input, with no duplicated points at the
  seams.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd

from toolkit._core.concurrency import fan_out, settle
from toolkit._core.errors import ApiError, ProtocolError, ToolkitError, ValidationError
from toolkit._core.frames import as_dict, as_list, build_frame, to_geoframe
from toolkit._core.geo import (
    PlaceResolver,
    PointsLike,
    geojson_geometry,
    path_length_m,
    to_lonlat,
    to_point,
)
from toolkit._core.messages import Request
from toolkit._core.provenance import provenance
from toolkit._core.registry import OperationRecord, register
from toolkit._core.validate import (
    check_api_version,
    check_choice,
    check_int,
    check_language,
    many_strings,
)
from toolkit._spec.maps import (
    ROUTE_API_VERSIONS,
    ROUTE_AVOID,
    ROUTE_BATCH_SIZE,
    ROUTE_OPTIMIZE,
    ROUTE_OUTPUT_OPTIONS,
    ROUTE_TRAVEL_MODES,
    SNAP_MAX_GAP_M,
)
from toolkit.connection import get_connection
from toolkit.maps._batch import Batches, chunks
from toolkit.maps._schemas import ROUTE_DIRECTIONS, SNAP_TO_ROADS

if TYPE_CHECKING:
    import geopandas as gpd

    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["route_directions", "snap_to_roads"]

API_VERSION = ROUTE_API_VERSIONS[0]
OPTIMIZE = ROUTE_OPTIMIZE
TRAVEL_MODES = ROUTE_TRAVEL_MODES
AVOID = ROUTE_AVOID
OUTPUT_OPTIONS = ROUTE_OUTPUT_OPTIONS
BATCH_SIZE = ROUTE_BATCH_SIZE
BATCH_PATH = "/route/directions:batch"
#: Route batch: 10 calls per second per account; snap (route, non-batch): 50.
BATCH_QPS = 9.0
SNAP_QPS = 45.0
#: Straight-line length of a snap window: the road is longer than the straight line between
#: GPS points, so a window stays well inside the 100 km of road the service allows.
SNAP_WINDOW_M = 60_000.0
SNAP_WINDOW_POINTS = 2500
SNAP_OVERLAP = 40


# ---------------------------------------------------------------------- route directions
def _waypoint(value: object, parameter: str, places: PlaceResolver | None) -> list[float]:
    lon, lat = to_point(value, parameter, places=places)
    return [lon, lat]


def _features(points: Sequence[Sequence[float]]) -> list[dict[str, Any]]:
    return [{"type": "Feature", "geometry": {"type": "Point", "coordinates": list(p)},
             "properties": {"pointIndex": i, "pointType": "waypoint"}}
            for i, p in enumerate(points)]


def _check_item_features(features: Any, where: str) -> None:
    if not isinstance(features, list):
        raise ValidationError(f"{where}.features", features, "must be a list of waypoint "
                              "Point features")
    waypoints = 0
    for k, f in enumerate(features):
        geom = f.get("geometry") if isinstance(f, Mapping) else None
        if not isinstance(geom, Mapping) or geom.get("type") != "Point":
            raise ValidationError(f"{where}.features[{k}]", f, "must be a GeoJSON Point feature")
        to_point(geom.get("coordinates"), f"{where}.features[{k}].coordinates")
        props = f.get("properties")
        if props is not None and not isinstance(props, Mapping):
            raise ValidationError(f"{where}.features[{k}].properties", props,
                                  "must be a dict (or absent)")
        kind = (props or {}).get("pointType", "waypoint")
        if kind not in ("waypoint", "viaWaypoint"):
            raise ValidationError(f"{where}.features[{k}].pointType", kind,
                                  "must be waypoint or viaWaypoint")
        waypoints += kind == "waypoint"
    if not 2 <= len(features) <= 150 or waypoints < 2:
        raise ValidationError(f"{where}.features", f"{len(features)} points",
                              "a directions query needs 2 to 150 waypoints (origin and "
                              "destination at least)")


def _item_options(item: dict[str, Any], where: str) -> None:
    if "optimizeRoute" in item:
        item["optimizeRoute"] = check_choice(item["optimizeRoute"], f"{where}.optimizeRoute",
                                             OPTIMIZE)
    if "travelMode" in item:
        item["travelMode"] = check_choice(item["travelMode"], f"{where}.travelMode",
                                          TRAVEL_MODES)
    if "maxRouteCount" in item:
        item["maxRouteCount"] = check_int(item["maxRouteCount"], f"{where}.maxRouteCount",
                                          minimum=1, maximum=6)
    if "avoid" in item and item["avoid"] is not None:
        item["avoid"], _ = many_strings(item["avoid"], f"{where}.avoid", choices=AVOID)
    if "routeOutputOptions" in item and item["routeOutputOptions"] is not None:
        item["routeOutputOptions"], _ = many_strings(
            item["routeOutputOptions"], f"{where}.routeOutputOptions", choices=OUTPUT_OPTIONS)
    if "departAt" in item and "arriveAt" in item:
        raise ValidationError(f"{where}.arriveAt", item["arriveAt"],
                              "departAt and arriveAt cannot be used together")
    for key in ("departAt", "arriveAt"):
        if key in item:
            item[key] = _time_text(item[key], f"{where}.{key}")
    if "optionalId" in item and item["optionalId"] is not None:
        item["optionalId"] = str(item["optionalId"])


def _time_text(value: Any, parameter: str) -> str:
    if isinstance(value, datetime | pd.Timestamp):
        if pd.isna(value):
            raise ValidationError(parameter, value, "must be a date-time, not NaT")
        ts = pd.Timestamp(value)
        ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
        return ts.strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, str):
        try:
            datetime.fromisoformat(value)
        except ValueError:
            raise ValidationError(parameter, value, "must be an ISO 8601 date-time") from None
        return value
    raise ValidationError(parameter, value, "must be a datetime or an ISO 8601 string")


class _Names(NamedTuple):
    """Hold the place names of one query.

    Its origin's and destination's (``None`` for points) and every name it uses (waypoints too).
    """

    origin: str | None = None
    destination: str | None = None
    used: tuple[str, ...] = ()


def _query_items(queries: object, places: PlaceResolver | None = None
                 ) -> tuple[list[dict[str, Any]], list[_Names]]:
    """Turn the caller's queries into batch items (validated, copies) and their place names."""
    if isinstance(queries, pd.DataFrame):
        return _frame_items(queries, places)
    if isinstance(queries, Mapping | str | bytes) or queries is None:
        raise ValidationError("queries", type(queries).__name__, "must be a list of query dicts "
                              "or a DataFrame of origin and destination points")
    if not isinstance(queries, Iterable):
        raise ValidationError("queries", queries, "must be a list of query dicts or a "
                              "DataFrame")
    raw = list(queries)
    if not raw:
        raise ValidationError("queries", queries, "must hold at least one query")
    items = []
    names: list[_Names] = []
    for i, q in enumerate(raw):
        where = f"queries[{i}]"
        named = _Names()
        if not isinstance(q, Mapping):
            raise ValidationError(where, q, "must be a dict: the item fields of a directions "
                                  "query (type, features, optimizeRoute...) or origin and "
                                  "destination")
        item = dict(q)
        if "features" not in item:
            if "origin" not in item or "destination" not in item:
                raise ValidationError(where, sorted(map(str, item)), "needs 'features' "
                                      "(waypoint Point features) or 'origin' and 'destination'")
            origin, destination = item.pop("origin"), item.pop("destination")
            pts = [_waypoint(origin, f"{where}.origin", places)]
            waypoints = item.pop("waypoints", None)
            if waypoints is not None and (isinstance(waypoints, str | bytes | Mapping)
                                          or not hasattr(waypoints, "__iter__")):
                raise ValidationError(f"{where}.waypoints", waypoints,
                                      "must be a list of (lon, lat) points or place names")
            for k, w in enumerate(waypoints or []):
                pts.append(_waypoint(w, f"{where}.waypoints[{k}]", places))
            pts.append(_waypoint(destination, f"{where}.destination", places))
            named = _Names(origin if isinstance(origin, str) else None,
                           destination if isinstance(destination, str) else None,
                           tuple(v for v in (origin, *(waypoints or []), destination)
                                 if isinstance(v, str)))
            item = {"type": "FeatureCollection", "features": _features(pts), **item}
        else:
            item.setdefault("type", "FeatureCollection")
            if item["type"] != "FeatureCollection":
                raise ValidationError(f"{where}.type", item["type"], "must be FeatureCollection")
            _check_item_features(item["features"], where)
        _item_options(item, where)
        items.append(item)
        names.append(named)
    return items, names


def _frame_items(df: pd.DataFrame, places: PlaceResolver | None
                 ) -> tuple[list[dict[str, Any]], list[_Names]]:
    cols = {str(c).lower(): c for c in df.columns}

    def point_column(name: str) -> list[Any] | None:
        if name in cols:
            return list(df[cols[name]])
        lon, lat = cols.get(f"{name}_lon") or cols.get(f"{name}_longitude"), \
            cols.get(f"{name}_lat") or cols.get(f"{name}_latitude")
        if lon is not None and lat is not None:
            return list(zip(df[lon], df[lat], strict=True))
        return None

    origins, destinations = point_column("origin"), point_column("destination")
    if origins is None or destinations is None:
        raise ValidationError("queries", f"columns {list(df.columns)[:8]}",
                              "a DataFrame needs origin and destination columns (Points or "
                              "(lon, lat) pairs) or origin_lon/origin_lat/destination_lon/"
                              "destination_lat")
    if len(df) == 0:
        raise ValidationError("queries", "empty DataFrame", "must hold at least one query")
    records = []
    passthrough = [c for c in df.columns if c in ("optionalId", "optimizeRoute", "travelMode",
                                                  "maxRouteCount", "avoid",
                                                  "routeOutputOptions", "departAt", "arriveAt")]
    waypoints = cols.get("waypoints")
    for i in range(len(df)):
        rec: dict[str, Any] = {"origin": origins[i], "destination": destinations[i]}
        if waypoints is not None:
            w = df[waypoints].iloc[i]
            if w is not None and not (isinstance(w, float) and math.isnan(w)):
                rec["waypoints"] = list(w)
        for c in passthrough:
            v = df[c].iloc[i]
            if v is not None and not (isinstance(v, float) and math.isnan(v)) and \
                    v is not pd.NA:
                rec[c] = v.item() if isinstance(v, np.generic) else v
        records.append(rec)
    return _query_items(records, places)


def route_rows(index: int, item: dict[str, Any], answer: Any,
               names: _Names | None = None) -> list[dict[str, Any]]:
    """Build the rows of one query's answer: its routes, or its error."""
    names = names or _Names()
    base = {"query_index": index, "optionalId": item.get("optionalId"),
            "origin_place": names.origin, "destination_place": names.destination}
    if not isinstance(answer, dict):
        return [{**base, "error": {"code": "ProtocolError", "message": "no answer for this "
                                   "query"}, "geometry": geojson_geometry(None,
                                                                          empty="MultiLineString")}]
    if answer.get("optionalId") is not None:
        base["optionalId"] = answer["optionalId"]
    if isinstance(answer.get("error"), dict):
        return [{**base, "error": answer["error"],
                 "geometry": geojson_geometry(None, empty="MultiLineString")}]
    collections = [answer] + [a for a in as_list(answer.get("alternativeRoutes"))
                              if isinstance(a, dict)]
    rows = []
    for k, fc in enumerate(collections):
        paths = [f for f in as_list(fc.get("features")) if isinstance(f, dict) and
                 as_dict(f.get("properties")).get("type", "RoutePath") == "RoutePath"]
        for feat in paths[:1]:
            props = as_dict(feat.get("properties"))
            legs = props.get("legs") if isinstance(props.get("legs"), list) else None
            rows.append({**props, **base, "route_index": k, "legs": legs,
                         "leg_count": len(legs) if legs is not None else None,
                         "geometry": geojson_geometry(feat.get("geometry"),
                                                      empty="MultiLineString")})
    return rows


def routes_frame(rows: list[dict[str, Any]], attrs: dict[str, Any] | None = None
                 ) -> gpd.GeoDataFrame:
    """Build the typed GeoDataFrame of route records (see :func:`route_rows`)."""
    return to_geoframe(build_frame(rows, ROUTE_DIRECTIONS, attrs))


def _resolved_items(queries: object, conn: Connection
                    ) -> tuple[list[dict[str, Any]], list[_Names], dict[int, ToolkitError]]:
    """Run :func:`_query_items` with place names resolved.

    A first pass checks every query and notes the names, which are then geocoded at once (before any
    directions request). A query with a name geocode could not place is not sent: its error is
    returned by index.
    """
    from toolkit.maps.search import Places, collect_names

    items, names = _query_items(queries, collect_names)
    asked = [n for entry in names for n in entry.used]
    if not asked:
        return items, names, {}
    places = Places("queries", conn)
    missing = places.lookup(asked)

    def resolve(found: list[str]) -> dict[str, tuple[float, float]]:
        return {n: places.found[n][:2] if n in places.found else (0.0, 0.0) for n in found}

    items, names = _query_items(queries, resolve)
    failed: dict[int, ToolkitError] = {}
    for i, entry in enumerate(names):
        unplaced = [missing[n] for n in entry.used if n in missing]
        if unplaced:
            failed[i] = unplaced[0]
    return items, names, failed


#: One directions query: the batch item's fields, or ``origin``/``destination``/``waypoints``.
RouteQuery = Mapping[str, Any]


def route_directions(queries: pd.DataFrame | Iterable[RouteQuery], *,
                     optimize_route: str = "fastestWithoutTraffic",
                     travel_mode: str = "driving", max_route_count: int = 1,
                     avoid: str | Sequence[str] | None = None,
                     route_output_options: str | Sequence[str] = ("routePath",),
                     depart_at: datetime | str | None = None, language: str | None = None,
                     api_version: str = API_VERSION,
                     connection: Connection | None = None) -> gpd.GeoDataFrame:
    """Directions for any number of queries, sent in concurrent batches of at most 100.

    Parameters
    ----------
    queries : list of dict, or DataFrame
        Each dict is a directions query: the item fields of the batch request (``type``,
        ``features`` of waypoint Points in ``[lon, lat]``, ``optimizeRoute``, ``travelMode``,
        ``maxRouteCount``, ``avoid``, ``routeOutputOptions``, ``departAt``/``arriveAt``,
        ``optionalId``...), or simply ``origin``, ``destination`` (and ``waypoints``) as
        ``(lon, lat)`` pairs (the toolkit's order everywhere), shapely Points or place names
        (``"Ordino"``: geocode's top match of High or Medium confidence, every name geocoded
        once before the directions requests; a query with a name it cannot place is not sent
        and is a row with ``error.code`` ``PlaceNotFoundError``).
        A DataFrame/GeoDataFrame has ``origin`` and
        ``destination`` columns (Points, pairs or names) or ``origin_lon``, ``origin_lat``,
        ``destination_lon``, ``destination_lat``, optionally ``waypoints`` and any of the item
        fields as columns. Fields given per query win over the keywords below.
    optimize_route : {"fastestWithoutTraffic", "fastestWithTraffic", "shortest"}
        What the route minimises.
    travel_mode : {"driving", "truck"}
        Trucks are slower and kept off roads too narrow or restricted for them.
    max_route_count : int
        Routes wanted per query, 1 to 6 (the main route plus alternatives).
    avoid : str or sequence of str, optional
        ``limitedAccessHighways``, ``tollRoads``, ``ferries``, ``tunnels``,
        ``borderCrossings``, ``lowEmissionZones``, ``unpavedRoads``.
    route_output_options : str or sequence of str
        ``routePath`` (default: the route geometry), ``itinerary``, ``routeSummary`` (summary
        only: the geometry comes back empty), ``regionTravelSummary``.
    depart_at : datetime or str, optional
        Departure time, a datetime or an ISO 8601 string (default: now).
    language : str, optional
        ``Accept-Language`` of the answers.
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    geopandas.GeoDataFrame
        EPSG:4326, one row per route in input order (main route ``route_index`` 0, alternatives
        1..n): ``query_index`` (Int64, position in ``queries``), ``optionalId`` (string),
        ``origin_place`` and ``destination_place`` (strings: the names asked, empty for points;
        the route's geometry starts and ends at what they resolved to),
        ``route_index`` (Int64), ``type`` (string, ``RoutePath``), ``resourceId`` (string),
        ``distanceInMeters`` (float), ``durationInSeconds`` and ``durationTrafficInSeconds``
        (Int64 seconds), ``departureAt`` and ``arrivalAt`` (UTC), ``trafficCongestion``
        (category), ``leg_count`` (Int64), ``legs`` (list of per-leg summaries),
        ``error.code`` and ``error.message`` (strings, set on the one row of a failed query,
        whose ``route_index`` is null and geometry empty), ``geometry`` (MultiLineString, one
        line per leg; empty when only ``routeSummary`` was asked for).

    Raises
    ------
    ValidationError
        Before any request: fewer than 2 waypoints, coordinates out of range (shown as read, in
        (longitude, latitude) order), ``maxRouteCount`` outside 1-6, unknown enumeration
        values, a malformed query.
    PlaceNotFoundError
        When no query could be sent because each has a name geocode could not place.
    ApiError
        When every batch call failed (e.g. a refused credential): the first failure. When only
        some failed, their queries are rows with the error and the others are kept.
    """
    defaults = _route_defaults(optimize_route, travel_mode, max_route_count, avoid,
                               route_output_options, depart_at)
    check_language(language)
    check_api_version(api_version)
    conn = get_connection(connection)
    items, names, unplaced = _resolved_items(queries, conn)
    for item in items:
        for key, value in defaults.items():
            if key == "departAt" and "arriveAt" in item:
                continue
            item.setdefault(key, value)
    sent = [i for i in range(len(items)) if i not in unplaced]
    if not sent:
        raise next(iter(unplaced.values()))
    batches = Batches(conn.pipeline("maps"), BATCH_PATH, "route_directions", items, api_version,
                      {"Accept-Language": language} if language else None)
    outcomes = fan_out(batches.send, chunks(sent, BATCH_SIZE), connection=conn,
                       desc="route_directions", rate=BATCH_QPS, burst=1)
    settle(outcomes, spared=(ProtocolError,))  # nothing came back (e.g. credentials): raise
    rows = [_failed_row(i, items[i], names[i], type(err).__name__, err)
            for i, err in unplaced.items()]
    for outcome in outcomes:
        for pos, i in enumerate(outcome.item):
            if outcome.ok:
                rows.extend(route_rows(i, items[i], outcome.result()[pos], names[i]))
            else:
                err = outcome.error
                rows.append(_failed_row(i, items[i], names[i],
                                        getattr(err, "code", None) or type(err).__name__, err))
    rows.sort(key=lambda r: r["query_index"])  # input order (a query's routes stay in order)
    return routes_frame(rows, provenance("route_directions", api_version,
                                         batches.pipe.url(BATCH_PATH), batches.request_ids))



def _route_defaults(optimize_route: Any, travel_mode: Any, max_route_count: Any, avoid: Any,
                    route_output_options: Any, depart_at: Any) -> dict[str, Any]:
    """Check the options every query takes unless it says otherwise, in the service's words."""
    defaults: dict[str, Any] = {
        "optimizeRoute": check_choice(optimize_route, "optimize_route", OPTIMIZE),
        "travelMode": check_choice(travel_mode, "travel_mode", TRAVEL_MODES),
        "maxRouteCount": check_int(max_route_count, "max_route_count", minimum=1, maximum=6)}
    avoid_list = many_strings(avoid, "avoid", choices=AVOID)[0] if avoid is not None else None
    defaults["routeOutputOptions"], _ = many_strings(route_output_options,
                                                     "route_output_options",
                                                     choices=OUTPUT_OPTIONS)
    depart = _time_text(depart_at, "depart_at") if depart_at is not None else None
    if avoid_list:
        defaults["avoid"] = avoid_list
    if depart:
        defaults["departAt"] = depart
    return defaults


def _failed_row(index: int, item: dict[str, Any], names: Any, code: str,
                err: BaseException | None) -> dict[str, Any]:
    """Make the row of a query that gave no route: its error, an empty geometry."""
    return {"query_index": index, "optionalId": item.get("optionalId"),
            "origin_place": names.origin, "destination_place": names.destination,
            "error": {"code": code, "message": str(err)},
            "geometry": geojson_geometry(None, empty="MultiLineString")}


# ---------------------------------------------------------------------- snap to roads
def plan_windows(gaps: np.ndarray, *, max_points: int | None = None,
                 max_length_m: float | None = None, overlap: int | None = None
                 ) -> list[tuple[int, int, int, int]]:
    """Overlapping windows over a trace of ``len(gaps) + 1`` points.

    Returns ``(start, end, own_start, own_end)`` per window: the points sent are
    ``start:end``, and the window's results are kept for input indexes ``own_start:own_end``
    (the owned ranges tile the trace, each seam in the middle of an overlap).
    """
    max_points = SNAP_WINDOW_POINTS if max_points is None else max_points
    max_length_m = SNAP_WINDOW_M if max_length_m is None else max_length_m
    overlap = SNAP_OVERLAP if overlap is None else overlap
    n = len(gaps) + 1
    if n <= max_points and float(gaps.sum()) <= max_length_m:
        return [(0, n, 0, n)]
    overlap = max(0, min(overlap, max_points // 4))
    spans: list[tuple[int, int]] = []
    start = 0
    while True:
        end, length = start + 1, 0.0
        while end < n and end - start < max_points and length + gaps[end - 1] <= max_length_m:
            length += gaps[end - 1]
            end += 1
        spans.append((start, end))
        if end >= n:
            break
        nxt = max(end - overlap, start + 1)
        if end - overlap <= start + overlap:  # short window: keep some progress
            nxt = max(start + (end - start) // 2, start + 1)
        start = nxt
    out = []
    for k, (s, e) in enumerate(spans):
        own_s = 0 if k == 0 else (s + spans[k - 1][1]) // 2
        own_e = n if k == len(spans) - 1 else (spans[k + 1][0] + e) // 2
        out.append((s, e, own_s, own_e))
    return out


def stitch(features: list[Any], start: int, own_start: int, own_end: int
           ) -> list[dict[str, Any]]:
    """Keep the records of one window's features that the window owns (see :func:`plan_windows`).

    Their ``inputIndex`` is shifted into the caller's input.
    """
    rows: list[dict[str, Any]] = []
    anchor: int | None = None
    for feat in features:
        if not isinstance(feat, dict):
            continue
        props = dict(feat["properties"]) if isinstance(feat.get("properties"), dict) else {}
        local = props.get("inputIndex")
        if isinstance(local, int) and not isinstance(local, bool):
            anchor = local + start
            if not own_start <= anchor < own_end:
                continue
            props["inputIndex"] = anchor
        else:
            props.pop("inputIndex", None)
            if anchor is None or not own_start <= anchor < own_end:
                continue
        props["geometry"] = geojson_geometry(feat.get("geometry"))
        rows.append(props)
    return rows


def snap_frame(rows: list[dict[str, Any]], attrs: dict[str, Any] | None = None
               ) -> gpd.GeoDataFrame:
    """Build the typed GeoDataFrame of snapped-point records (see :func:`stitch`)."""
    return to_geoframe(build_frame(rows, SNAP_TO_ROADS, attrs))


def snap_to_roads(points: PointsLike, *, include_speed_limit: bool = False,
                  interpolate: bool = False,
                  travel_mode: str = "driving", api_version: str = API_VERSION,
                  connection: Connection | None = None) -> gpd.GeoDataFrame:
    """Snap GPS points to the roads they were recorded on.

    Any number of points: a trace longer than the service allows in one call (5,000 points,
    100 km of road) is split into overlapping windows, snapped concurrently and stitched back.

    Parameters
    ----------
    points : GeoDataFrame, GeoSeries, DataFrame or sequence of (lon, lat)
        The trace in recording order: Points (EPSG:4326), a DataFrame with ``lon``/``lat`` (or
        ``longitude``/``latitude``) columns, or ``(lon, lat)`` pairs. At least 2 points;
        consecutive points within 6 km of each other.
    include_speed_limit : bool
        Add each road's speed limit (km/h).
    interpolate : bool
        Add points along the matched roads between the snapped ones (``isInterpolated``).
    travel_mode : {"driving", "truck"}
        The vehicle the trace was recorded in.
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    geopandas.GeoDataFrame
        EPSG:4326, one row per snapped or interpolated point in travel order: ``inputIndex``
        (Int64, position in ``points``; null for interpolated points), ``isInterpolated``
        (boolean), ``name`` (string, road name), ``speedLimitInKilometersPerHour`` (float, with
        ``include_speed_limit``), ``geometry`` (Point on the road). Points the service cannot
        snap are left out, as the service does.

    Raises
    ------
    ValidationError
        Before any request: fewer than 2 points, coordinates out of range, consecutive points
        more than 6 km apart, a bad option.
    """
    coords = to_lonlat(points, "points", min_points=2)
    if not isinstance(include_speed_limit, bool):
        raise ValidationError("include_speed_limit", include_speed_limit, "must be True or False")
    if not isinstance(interpolate, bool):
        raise ValidationError("interpolate", interpolate, "must be True or False")
    travel_mode = check_choice(travel_mode, "travel_mode", TRAVEL_MODES)
    check_api_version(api_version)
    gaps = path_length_m(coords)
    if len(gaps) and gaps.max() > SNAP_MAX_GAP_M:
        i = int(np.argmax(gaps))
        raise ValidationError("points", f"points {i} and {i + 1} are {gaps[i] / 1000:.1f} km "
                              "apart", "consecutive points must be within 6 km of each other")
    conn = get_connection(connection)
    pipe = conn.pipeline("maps")
    path = "/route/snapToRoads"
    request_ids: list[str] = []

    def body(lo: int, hi: int) -> dict[str, Any]:
        return {"type": "FeatureCollection",
                "features": [{"type": "Feature",
                              "geometry": {"type": "Point",
                                           "coordinates": [round(float(x), 7),
                                                           round(float(y), 7)]},
                              "properties": {}} for x, y in coords[lo:hi]],
                "includeSpeedLimit": include_speed_limit, "interpolate": interpolate,
                "travelMode": travel_mode}

    def snap(window: tuple[int, int, int, int]) -> list[dict[str, Any]]:
        lo, hi, own_lo, own_hi = window
        try:
            response = pipe.send(Request("POST", path, params={"api-version": api_version},
                                         json=body(lo, hi), operation="snap_to_roads",
                                         content_type="application/geo+json"))
        except ApiError as err:
            # a window past the service's road-distance limit: halve it and try again
            if err.status != 400 or hi - lo <= 2 * SNAP_OVERLAP + 4 or own_hi - own_lo < 4:
                raise
            mid = (own_lo + own_hi) // 2
            ov = SNAP_OVERLAP // 2
            logger.info("snap_to_roads: window %d-%d refused (%s); halving it", lo, hi, err.code)
            first = (lo, min(hi, mid + ov), own_lo, mid)
            second = (max(lo, mid - ov), hi, mid, own_hi)
            return snap(first) + snap(second)
        if response.request_id:
            request_ids.append(response.request_id)
        answer = response.json()
        features = answer.get("features") if isinstance(answer, dict) else None
        if not isinstance(answer, dict) or not isinstance(features, list | None):
            raise response.refuse(f"snap_to_roads: expected a JSON object with a 'features' "
                                  f"list, got {type(answer).__name__}"
                                  + (f" with 'features' a {type(features).__name__}"
                                     if isinstance(answer, dict) else ""))
        return stitch(features or [], lo, own_lo, own_hi)

    windows = plan_windows(gaps)
    outcomes = fan_out(snap, windows, connection=conn, desc="snap_to_roads", rate=SNAP_QPS,
                       burst=1)
    rows: list[dict[str, Any]] = []
    for o in outcomes:
        if not o.ok:
            assert isinstance(o.error, ToolkitError)
            raise o.error
        rows.extend(o.value or [])
    df = snap_frame(rows, provenance("snap_to_roads", api_version, pipe.url(path), request_ids))
    df.attrs["windows"] = len(windows)
    return df


ROUTE_RECORD = register(OperationRecord("route_directions", schema=ROUTE_DIRECTIONS, lifetime=600,
                                        plot="routes", explore="routes"))
# the helpers draw the points as recorded beside the snapped ones: snapped_trace(raw, snapped)
SNAP_RECORD = register(OperationRecord("snap_to_roads", schema=SNAP_TO_ROADS, lifetime=86_400,
                                       plot="snapped_trace", explore="snapped_trace",
                                       input_first=True))
