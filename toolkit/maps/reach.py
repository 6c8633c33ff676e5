"""Reachable range: the area reachable from a place within a time or distance budget.

Route 2025-01-01 ``POST /route/range`` takes the origin as a GeoJSON Point feature whose
properties hold one budget (``timeBudgetInSec``, at most 21,600 s, or ``distanceBudgetInMeters``,
at most 500,000 m) and the route options, snaps it to the nearest road and answers a
FeatureCollection: the ``center`` it used (the snapped origin) and the ``boundary`` polygon
(counterclockwise, simplified) with its ``bbox``.

:func:`route_range` asks for every origin and every budget (one request each, concurrently
within the service's rate of 50 route requests a second per account) and gives one row per
origin and budget, in input order: an isochrone (time) or isodistance (distance) polygon each.
An origin the service cannot place on a road is a row with the error, while the others keep
their polygons; a name geocode cannot place is a row with that error.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from toolkit._core.concurrency import fan_out, settle
from toolkit._core.errors import ApiError, AuthenticationError, ToolkitError, ValidationError
from toolkit._core.frames import as_dict, as_list, build_frame, to_geoframe
from toolkit._core.geo import COORDINATE_DECIMALS, LocationsLike, geojson_geometry
from toolkit._core.messages import Request
from toolkit._core.provenance import provenance
from toolkit._core.registry import OperationRecord, register
from toolkit._core.schemas import Col, Schema
from toolkit._core.validate import (
    check_api_version,
    check_choice,
    check_time,
    iso_time,
    many_strings,
)
from toolkit._spec.maps import (
    RANGE_AVOID,
    RANGE_MAX_DISTANCE_M,
    RANGE_MAX_TIME_S,
    ROUTE_API_VERSIONS,
    ROUTE_OPTIMIZE,
    ROUTE_TRAVEL_MODES,
)
from toolkit.connection import get_connection

if TYPE_CHECKING:
    import geopandas as gpd

    from toolkit._core.messages import Response
    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["ROUTE_RANGE", "range_row", "ranges_frame", "route_range"]

API_VERSION = ROUTE_API_VERSIONS[0]
TRAVEL_MODES = ROUTE_TRAVEL_MODES
OPTIMIZE = ROUTE_OPTIMIZE
AVOID = RANGE_AVOID
PATH = "/route/range"
#: Route requests (not batches): 50 a second per account; stay just under.
RANGE_QPS = 45.0
#: The budget fields of a request, by the parameter that gives them, with their largest value.
BUDGETS = {"time_budget": ("timeBudgetInSec", RANGE_MAX_TIME_S, "seconds"),
           "distance_budget": ("distanceBudgetInMeters", RANGE_MAX_DISTANCE_M, "metres")}

ROUTE_RANGE = Schema(
    "route_range",
    (
        Col("origin_index", "Int64"),
        Col("place", "string"),
        Col("place_address", "string"),
        Col("timeBudgetInSec", "float"),
        Col("distanceBudgetInMeters", "float"),
        Col("center", "geometry"),
        Col("bbox", "list"),
        Col("error.code", "string"),
        Col("error.message", "string"),
        Col("geometry", "geometry"),
    ),
    geometry="geometry",
)


def _budget_value(value: Any, parameter: str, most: float, unit: str) -> float:
    if isinstance(value, dt.timedelta) and unit == "seconds":  # pandas Timedelta is one too
        number = value.total_seconds()
    elif isinstance(value, int | float | np.integer | np.floating) and \
            not isinstance(value, bool | np.bool_):
        number = float(value)
    else:
        what = "a number of seconds or a timedelta" if unit == "seconds" else \
            "a number of metres"
        raise ValidationError(parameter, value, f"must be {what}")
    if not math.isfinite(number) or not 0 < number <= most:
        raise ValidationError(parameter, value, f"must be more than 0 and at most {most:,.0f} "
                              f"{unit}")
    return number


def check_budgets(time_budget: Any, distance_budget: Any) -> tuple[str, list[float]]:
    """Check the one budget given (one value or several).

    Returns
    -------
    (str, list of float)
        The service's field (``timeBudgetInSec`` or ``distanceBudgetInMeters``) and the
        distinct values, in the order given.
    """
    given = {k: v for k, v in (("time_budget", time_budget),
                               ("distance_budget", distance_budget)) if v is not None}
    if not given:
        raise ValidationError("time_budget", None, "one budget is required: time_budget "
                              "(seconds or a timedelta) or distance_budget (metres)")
    if len(given) > 1:
        raise ValidationError("distance_budget", distance_budget, "time_budget and "
                              "distance_budget cannot be used together")
    ((parameter, value),) = given.items()
    key, most, unit = BUDGETS[parameter]
    if isinstance(value, str | bytes | dict) or not isinstance(value, Sequence | np.ndarray):
        return key, [_budget_value(value, parameter, most, unit)]
    values = list(value)
    if not values:
        raise ValidationError(parameter, value, "must hold at least one budget")
    checked = [_budget_value(v, f"{parameter}[{k}]", most, unit) for k, v in enumerate(values)]
    return key, list(dict.fromkeys(checked))


def range_options(travel_mode: Any, optimize_route: Any, avoid: Any, depart_at: Any
                  ) -> dict[str, Any]:
    """Check the options of a reachable range; write those that differ from the defaults."""
    options: dict[str, Any] = {}
    mode = check_choice(travel_mode, "travel_mode", TRAVEL_MODES)
    optimize = check_choice(optimize_route, "optimize_route", OPTIMIZE)
    if mode != TRAVEL_MODES[0]:
        options["travelMode"] = mode
    if optimize != OPTIMIZE[0]:
        options["optimizeRoute"] = optimize
    if avoid is not None:
        options["avoid"] = list(dict.fromkeys(many_strings(avoid, "avoid", choices=AVOID)[0]))
    depart = check_time(depart_at, "depart_at")
    if depart is not None:
        options["departAt"] = iso_time(depart)
    return options


def range_row(body: Any) -> dict[str, Any]:
    """Read the center and the boundary of a reachable-range answer.

    Returns
    -------
    dict
        ``center`` (Point or None), ``bbox`` (the boundary's, as sent) and ``geometry`` (the
        boundary polygon; empty when the answer has none, or something else than a polygon).
    """
    empty = geojson_geometry(None, empty="Polygon")
    row: dict[str, Any] = {"center": None, "bbox": None, "geometry": empty}
    for feature in (as_dict(f) for f in as_list(as_dict(body).get("features"))):
        kind = as_dict(feature.get("properties")).get("type")
        geom = geojson_geometry(feature.get("geometry"))
        if kind == "center" and row["center"] is None and getattr(geom, "geom_type", None) \
                == "Point":
            row["center"] = geom
        elif kind == "boundary" and row["geometry"].is_empty and \
                getattr(geom, "geom_type", None) in ("Polygon", "MultiPolygon"):
            row["geometry"] = geom
            row["bbox"] = feature.get("bbox") if isinstance(feature.get("bbox"), list) \
                else None
    return row


def ranges_frame(rows: list[dict[str, Any]], attrs: dict[str, Any] | None = None
                 ) -> gpd.GeoDataFrame:
    """Build the typed GeoDataFrame of reachable ranges (``center`` a second geometry column)."""
    import geopandas as gpd

    df = to_geoframe(build_frame(rows, ROUTE_RANGE, attrs))
    df["center"] = gpd.GeoSeries(list(df["center"]), index=df.index, crs="EPSG:4326")
    return df


def _error_fields(err: ToolkitError) -> dict[str, Any]:
    if isinstance(err, ApiError):
        return {"code": err.code or f"HTTP{err.status}", "message": err.message or str(err)}
    return {"code": type(err).__name__, "message": str(err)}


class _Ranges:
    """Ask the reachable range of each (origin, budget), remembering the request ids."""

    def __init__(self, conn: Connection, points: np.ndarray, key: str,
                 options: dict[str, Any], api_version: str,
                 failed: dict[int, ToolkitError]) -> None:
        self.pipe = conn.pipeline("maps")
        self.points, self.key, self.options = points, key, options
        self.api_version, self.failed = api_version, failed
        self.request_ids: list[str] = []

    def ask(self, item: tuple[int, float]) -> dict[str, Any]:
        i, budget = item
        if i in self.failed:
            raise self.failed[i]
        lon, lat = (round(float(v), COORDINATE_DECIMALS) for v in self.points[i])
        body = {"type": "Feature", "geometry": {"type": "Point", "coordinates": [lon, lat]},
                "properties": {self.key: budget, **self.options}}
        response = self.pipe.send(Request("POST", PATH, params={"api-version": self.api_version},
                                          json=body, operation="route_range",
                                          content_type="application/geo+json"))
        if response.request_id:
            self.request_ids.append(response.request_id)
        return self._read(response)

    @staticmethod
    def _read(response: Response) -> dict[str, Any]:
        row = range_row(response.json_object())
        if row["geometry"].is_empty:
            raise response.refuse("route_range: the answer has no boundary polygon")
        return row


def route_range(origin: LocationsLike, *, time_budget: Any = None, distance_budget: Any = None,
                travel_mode: str = "driving", optimize_route: str = "fastestWithoutTraffic",
                avoid: str | Sequence[str] | None = None, depart_at: Any = None,
                api_version: str = API_VERSION,
                connection: Connection | None = None) -> gpd.GeoDataFrame:
    """Area reachable from one place or several within a time or distance budget.

    Parameters
    ----------
    origin : pair, points, place names, GeoSeries/GeoDataFrame or DataFrame
        Where the trips start: ``(lon, lat)`` (the toolkit's order), many such pairs, shapely
        Points, a GeoSeries/GeoDataFrame of Points (any CRS), a DataFrame with lon/lat columns,
        or place names (resolved through :func:`~toolkit.maps.search.geocode`). The service
        snaps each to the nearest road.
    time_budget : number, timedelta or sequence of them, optional
        Seconds of travel (a ``timedelta`` or ``pandas.Timedelta`` too), at most 21,600 (six
        hours); several give one polygon each (isochrones of 10, 20, 30 minutes...).
    distance_budget : number or sequence of numbers, optional
        Metres of travel, at most 500,000. Exactly one of the two budgets is required.
    travel_mode : {"driving", "truck"}
        The vehicle.
    optimize_route : {"fastestWithoutTraffic", "fastestWithTraffic", "shortest"}
        How the routes within the budget are chosen (``fastestWithTraffic`` uses current
        traffic).
    avoid : str or sequence of str, optional
        ``limitedAccessHighways``, ``tollRoads``, ``ferries``, ``tunnels``, ``borderCrossings``,
        ``lowEmissionZones``, ``unpavedRoads``, ``carpools``, ``carTrains``.
    depart_at : datetime, Timestamp or ISO 8601 string, optional
        When the trips leave (naive times are UTC; the service's default is now).
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    geopandas.GeoDataFrame
        EPSG:4326, one row per origin and budget, origins in input order and each origin's
        budgets in the order given: ``origin_index`` (Int64, position in ``origin``),
        ``place`` and ``place_address`` (strings: the name asked and geocode's address of its
        match; empty for coordinates), ``timeBudgetInSec`` or ``distanceBudgetInMeters``
        (float, the budget of the row; the other is empty), ``center`` (a second geometry
        column: the origin as snapped to a road), ``bbox`` (list, the polygon's
        ``[west, south, east, north]`` as the service sent it), ``error.code`` and
        ``error.message`` (strings, for an origin that failed), ``geometry`` (the reachable
        area's Polygon, counterclockwise; empty for a failed origin).

    Raises
    ------
    ValidationError
        Before any request: no budget or both, a budget out of range, coordinates out of range,
        an unknown option.
    PlaceNotFoundError
        When no origin could be placed.
    ApiError
        When every origin failed, or the credential was refused.
    """
    key, budgets = check_budgets(time_budget, distance_budget)
    options = range_options(travel_mode, optimize_route, avoid, depart_at)
    check_api_version(api_version)
    from toolkit.maps.search import resolve_locations

    conn = get_connection(connection)
    # every point is checked before any request (a name's geocoding included)
    points, named, failed = resolve_locations(origin, "origin", conn)
    ranges = _Ranges(conn, points, key, options, api_version, failed)
    items = [(i, b) for i in range(len(points)) for b in budgets]
    outcomes = fan_out(ranges.ask, items, connection=conn, desc="route_range", rate=RANGE_QPS,
                       burst=1, service="maps.route")
    rows = []
    for o in settle(outcomes, fatal=(AuthenticationError,)):
        i, budget = o.item
        base = {"origin_index": i, key: budget,
                **{column: values[i] for column, values in named.items()}}
        if o.ok:
            rows.append({**base, **o.result()})
        else:
            assert o.error is not None
            logger.info("route_range: origin %d (budget %g) failed: %s", i, budget, o.error)
            rows.append({**base, "error": _error_fields(o.error),
                         "geometry": geojson_geometry(None, empty="Polygon")})
    return ranges_frame(rows, provenance("route_range", api_version, ranges.pipe.url(PATH),
                                         ranges.request_ids))


RECORD = register(OperationRecord("route_range", schema=ROUTE_RANGE, lifetime=600,
                                  plot="reachable_ranges", explore="reachable_ranges"))
