"""Route matrix: travel time and distance from every origin to every destination.

Route 2025-01-01 answers a matrix in two ways, and the toolkit chooses by the service's own
tables of limits (:data:`~toolkit._spec.maps.MATRIX_SYNC_LIMITS`, ``MATRIX_ASYNC_LIMITS``):

* ``POST /route/matrix`` answers at once, up to 100 cells with any options, 200 cells (within a
  400 km box), or 2,500 cells (at most 1,000 origins or destinations) with the defaults only
  (no time, historical traffic, driving or truck, fastest, nothing avoided);
* ``POST /route/matrix:async`` beyond that (and for ``optimize_route="shortest"``, which only it
  takes): 2,500 cells with any options (within a 400 km box), 50,000 cells (at most 10,000
  origins or destinations) with the defaults only. The service answers 202 with
  ``Operation-Location``; the toolkit polls that status until ``Completed`` and reads the result
  its ``resultUrl`` names (:class:`~toolkit._core.poll_strategies.OperationLocationPolling`),
  and ``wait=False`` gives the :class:`~toolkit.Operation` handle, whose
  ``continuation_token`` finishes it in another kernel (:func:`toolkit.resume_operation`; the
  service keeps a result 24 hours).

A matrix no row of either table takes is refused before any request. Origins and destinations
are ``(lon, lat)`` pairs, shapely Points, GeoSeries or place names (geocoded first; a name that
cannot be placed makes its cells rows with the error, and is not sent). A cell the service could
not route (``OUT_OF_REGION``...) is a row with its ``statusCode`` and error, like every other.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, overload

import numpy as np

from toolkit._core.continuation import answered_from
from toolkit._core.errors import ToolkitError, ValidationError
from toolkit._core.frames import as_dict, as_list, build_frame, to_geoframe
from toolkit._core.geo import COORDINATE_DECIMALS, LocationsLike, to_lonlat
from toolkit._core.polling import Operation
from toolkit._core.provenance import provenance
from toolkit._core.registry import OperationRecord, register
from toolkit._core.schemas import Col, Schema
from toolkit._core.validate import (
    check_api_version,
    check_bool,
    check_choice,
    check_time,
    check_timeout,
    iso_time,
    many_strings,
)
from toolkit._spec.maps import (
    MATRIX_ASYNC_LIMITS,
    MATRIX_AVOID,
    MATRIX_OPTIMIZE,
    MATRIX_SYNC_LIMITS,
    MATRIX_TIME_WORDS,
    MATRIX_TRAFFIC,
    MATRIX_TRAVEL_MODES,
    ROUTE_API_VERSIONS,
)
from toolkit.connection import get_connection

if TYPE_CHECKING:
    import geopandas as gpd

    from toolkit._core.messages import Response
    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["ROUTE_MATRIX", "matrix_frame", "matrix_rows", "plan_matrix", "route_matrix"]

API_VERSION = ROUTE_API_VERSIONS[0]
TRAVEL_MODES = MATRIX_TRAVEL_MODES
OPTIMIZE = MATRIX_OPTIMIZE
TRAFFIC = MATRIX_TRAFFIC
AVOID = MATRIX_AVOID
SYNC_PATH = "/route/matrix"
ASYNC_PATH = "/route/matrix:async"
#: The travel modes the default-options rows of the limits allow.
_DEFAULT_MODES = TRAVEL_MODES[:2]

ROUTE_MATRIX = Schema(
    "route_matrix",
    (
        Col("originIndex", "Int64"),
        Col("destinationIndex", "Int64"),
        Col("origin_place", "string"),
        Col("destination_place", "string"),
        Col("statusCode", "Int64"),
        Col("departureAt", "datetime"),
        Col("arrivalAt", "datetime"),
        Col("distanceInMeters", "float"),
        Col("durationInSeconds", "Int64"),
        Col("durationTrafficInSeconds", "Int64"),
        Col("error.code", "string"),
        Col("error.message", "string"),
        Col("geometry", "geometry"),
    ),
    geometry="geometry",
)


# ------------------------------------------------------------------------------- the request
def _when(value: Any, parameter: str, words: Sequence[str]) -> str | None:
    """Write a time of the matrix: a word the service takes (``any``, ``now``) or a date-time."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip().lower() in words:
        return value.strip().lower()
    if isinstance(value, str) and value.strip().lower() in MATRIX_TIME_WORDS:
        raise ValidationError(parameter, value, f"takes {' or '.join(map(repr, words))} or a "
                              "date-time")
    ts = check_time(value, parameter)
    assert ts is not None
    return iso_time(ts)


def matrix_options(travel_mode: Any = "driving", optimize_route: Any = "fastest",
                   traffic: Any = "historical", depart_at: Any = None, arrive_at: Any = None,
                   avoid: Any = None) -> dict[str, Any]:
    """Check a matrix's options and write those that differ from the service's defaults.

    Returns
    -------
    dict
        The body fields in the service's words (``travelMode``, ``optimizeRoute``, ``traffic``,
        ``departAt``, ``arriveAt``, ``avoid``), each only when it is not the default: the
        largest matrices take no other parameter "explicitly".
    """
    mode = check_choice(travel_mode, "travel_mode", TRAVEL_MODES)
    optimize = check_choice(optimize_route, "optimize_route", OPTIMIZE)
    flow = check_choice(traffic, "traffic", TRAFFIC)
    if depart_at is not None and arrive_at is not None:
        raise ValidationError("arrive_at", arrive_at, "depart_at and arrive_at cannot be used "
                              "together")
    depart = _when(depart_at, "depart_at", MATRIX_TIME_WORDS)
    arrive = _when(arrive_at, "arrive_at", MATRIX_TIME_WORDS[:1])
    avoided = list(dict.fromkeys(many_strings(avoid, "avoid", choices=AVOID)[0])) \
        if avoid is not None else []
    if avoided and mode not in _DEFAULT_MODES:
        raise ValidationError("avoid", avoid, f"applies to the {' and '.join(_DEFAULT_MODES)} "
                              "travel modes only")
    timed = {"departAt": depart, "arriveAt": arrive}
    if flow == "live" and all(t in (None, "any") for t in timed.values()):
        raise ValidationError("traffic", traffic, "live traffic needs a time: depart_at='now' or "
                              "a date-time, or arrive_at a date-time (not 'any')")
    options: dict[str, Any] = {k: v for k, v in timed.items() if v not in (None, "any")}
    defaults = {"travelMode": (mode, TRAVEL_MODES[0]), "optimizeRoute": (optimize, OPTIMIZE[0]),
                "traffic": (flow, TRAFFIC[0])}
    options.update({k: v for k, (v, default) in defaults.items() if v != default})
    if avoided:
        options["avoid"] = avoided
    return options


def plan_matrix(origins: int, destinations: int, options: Mapping[str, Any]) -> str:
    """Choose the path of a matrix by the service's tables of limits.

    Parameters
    ----------
    origins, destinations : int
        How many points each side has.
    options : Mapping
        The options :func:`matrix_options` wrote (none: the defaults).

    Returns
    -------
    str
        The synchronous path when a row of its table takes the matrix (and ``optimizeRoute`` is
        ``fastest``), else the asynchronous one.

    Raises
    ------
    ValidationError
        No row of either table takes the matrix.
    """
    cells = origins * destinations
    plain = set(options) <= {"travelMode"} and \
        options.get("travelMode", TRAVEL_MODES[0]) in _DEFAULT_MODES

    def fits(rows: Sequence[tuple[int, int, int, str]]) -> bool:
        return any(cells <= most and origins <= most_o and destinations <= most_d and
                   (condition != "defaults" or plain)
                   for most, most_o, most_d, condition in rows)

    if options.get("optimizeRoute", OPTIMIZE[0]) == OPTIMIZE[0] and fits(MATRIX_SYNC_LIMITS):
        return SYNC_PATH
    if fits(MATRIX_ASYNC_LIMITS):
        return ASYNC_PATH
    (small, small_side, _, _), (large, large_side, _, _) = MATRIX_ASYNC_LIMITS
    side = next((name for name, n in (("origins", origins), ("destinations", destinations))
                 if n > (large_side if plain else small_side)), "destinations")
    raise ValidationError(side, f"{origins:,} origins × {destinations:,} destinations = "
                          f"{cells:,} cells", f"a matrix takes at most {small:,} cells (at most "
                          f"{small_side:,} origins or destinations) with options, or {large:,} "
                          f"cells ({large_side:,} origins or destinations) with the defaults "
                          "only: no depart_at or arrive_at, traffic='historical', "
                          "optimize_route='fastest', travel_mode 'driving' or 'truck', no avoid")


def _multipoint(points: np.ndarray, kind: str) -> dict[str, Any]:
    coords = np.round(points, COORDINATE_DECIMALS).tolist()
    return {"type": "Feature", "geometry": {"type": "MultiPoint", "coordinates": coords},
            "properties": {"pointType": kind}}


class MatrixInputs(NamedTuple):
    """What was asked: both sides' points and names, and which of them were sent.

    ``sent_*`` lists the input positions sent, in the request's order (the service's indexes
    point into them); ``failed_*`` the positions whose name could not be placed.
    """

    origins: np.ndarray
    destinations: np.ndarray
    origin_places: list[Any]
    destination_places: list[Any]
    sent_origins: list[int]
    sent_destinations: list[int]
    failed_origins: dict[int, ToolkitError]
    failed_destinations: dict[int, ToolkitError]


def _inputs(origins: object, destinations: object, conn: Connection) -> MatrixInputs:
    """Read both sides (names geocoded); raise when a side has nothing left to send."""
    from toolkit.maps.search import resolve_locations

    o_points, o_named, o_failed = resolve_locations(origins, "origins", conn)
    d_points, d_named, d_failed = resolve_locations(destinations, "destinations", conn)
    sent_o = [i for i in range(len(o_points)) if i not in o_failed]
    sent_d = [j for j in range(len(d_points)) if j not in d_failed]
    for sent, failed in ((sent_o, o_failed), (sent_d, d_failed)):
        if not sent:
            raise next(iter(failed.values()))
    return MatrixInputs(o_points, d_points, o_named["place"], d_named["place"], sent_o, sent_d,
                        o_failed, d_failed)


# ------------------------------------------------------------------------------- the answer
def _cell_row(cell: dict[str, Any], i: Any, j: Any, asked: MatrixInputs | None
              ) -> dict[str, Any]:
    row = {**cell, "originIndex": i, "destinationIndex": j, "geometry": None}
    if asked is not None:
        import shapely

        a, b = asked.origins[i], asked.destinations[j]
        row.update(origin_place=asked.origin_places[i],
                   destination_place=asked.destination_places[j],
                   geometry=shapely.LineString([a, b]) if np.isfinite([a, b]).all()
                   else shapely.LineString())
    return row


def matrix_rows(body: Any, asked: MatrixInputs | None = None) -> list[dict[str, Any]]:
    """Build one record per cell of a matrix answer, in origin then destination order.

    Parameters
    ----------
    body : object
        The answer: a Feature whose ``properties.matrix`` lists the cells.
    asked : MatrixInputs, optional
        What was asked. With it the service's indexes are mapped back to the caller's input, the
        cells of names that could not be placed are rows with that error, a cell the service did
        not answer is a row with a ``ProtocolError``, and each row carries its places and the
        straight line from origin to destination. Without it (a matrix resumed from its token)
        the cells are as the service gave them.
    """
    cells = [c for c in as_list(as_dict(as_dict(body).get("properties")).get("matrix"))
             if isinstance(c, dict)]
    if asked is None:
        rows = [_cell_row(c, c.get("originIndex"), c.get("destinationIndex"), None)
                for c in cells]
        return sorted(rows, key=lambda r: (_order(r["originIndex"]),
                                           _order(r["destinationIndex"])))
    found: dict[tuple[int, int], dict[str, Any]] = {}
    for c in cells:
        k, m = c.get("originIndex"), c.get("destinationIndex")
        if isinstance(k, int) and isinstance(m, int) and \
                _index(k, len(asked.sent_origins)) and _index(m, len(asked.sent_destinations)):
            found.setdefault((asked.sent_origins[k], asked.sent_destinations[m]), c)
        else:
            logger.info("route_matrix: a cell names origin %r and destination %r, outside the "
                        "matrix asked; left out", k, m)
    rows = []
    for i in range(len(asked.origins)):
        for j in range(len(asked.destinations)):
            failed = asked.failed_origins.get(i) or asked.failed_destinations.get(j)
            cell = found.get((i, j))
            if failed is not None:
                cell = {"error": {"code": type(failed).__name__, "message": str(failed)}}
            elif cell is None:
                cell = {"error": {"code": "ProtocolError",
                                  "message": "the service gave no answer for this cell"}}
            rows.append(_cell_row(cell, i, j, asked))
    return rows


def _index(value: Any, size: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < size


def _order(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, int) and not isinstance(value, bool) else (1, 0)


def matrix_frame(rows: list[dict[str, Any]], attrs: dict[str, Any] | None = None
                 ) -> gpd.GeoDataFrame:
    """Build the typed GeoDataFrame of matrix cells (see :func:`matrix_rows`)."""
    return to_geoframe(build_frame(rows, ROUTE_MATRIX, attrs))


def _parser(asked: MatrixInputs | None, endpoint: str, api_version: str | None
            ) -> Callable[[Response], gpd.GeoDataFrame]:
    def parse(response: Response) -> gpd.GeoDataFrame:
        body = response.json_object()
        ids = [response.request_id] if response.request_id else []
        summary = as_dict(as_dict(body.get("properties")).get("summary"))
        logger.info("route_matrix: %s of %s cells routed", summary.get("successfulCount"),
                    summary.get("totalCount"))
        return matrix_frame(matrix_rows(body, asked),
                            provenance("route_matrix", api_version, endpoint, ids))
    return parse


def _resume_parser(connection: Any, operation: Any) -> Callable[[Response], gpd.GeoDataFrame]:
    """Make the result parser of a matrix resumed from its token.

    The frame's endpoint and api-version are those of the request that gave the result; its
    indexes are the service's (positions in the request), without places or lines.
    """
    def parse(response: Response) -> gpd.GeoDataFrame:
        endpoint, version = answered_from(response.url, operation.pipeline.base_url)
        return _parser(None, endpoint, version)(response)
    return parse


# ------------------------------------------------------------------------------- the function
@overload
def route_matrix(origins: LocationsLike, destinations: LocationsLike, *,
                 travel_mode: str = ..., optimize_route: str = ..., traffic: str = ...,
                 depart_at: Any = ..., arrive_at: Any = ...,
                 avoid: str | Sequence[str] | None = ...,
                 wait: Literal[True] = ..., timeout: float | None = ..., api_version: str = ...,
                 connection: Connection | None = ...) -> gpd.GeoDataFrame: ...
@overload
def route_matrix(origins: LocationsLike, destinations: LocationsLike, *,
                 travel_mode: str = ..., optimize_route: str = ..., traffic: str = ...,
                 depart_at: Any = ..., arrive_at: Any = ...,
                 avoid: str | Sequence[str] | None = ...,
                 wait: Literal[False], timeout: float | None = ..., api_version: str = ...,
                 connection: Connection | None = ...) -> Operation[gpd.GeoDataFrame]: ...
@overload
def route_matrix(origins: LocationsLike, destinations: LocationsLike, *,
                 travel_mode: str = ..., optimize_route: str = ..., traffic: str = ...,
                 depart_at: Any = ..., arrive_at: Any = ...,
                 avoid: str | Sequence[str] | None = ...,
                 wait: bool = ..., timeout: float | None = ..., api_version: str = ...,
                 connection: Connection | None = ...
                 ) -> gpd.GeoDataFrame | Operation[gpd.GeoDataFrame]: ...
def route_matrix(origins: LocationsLike, destinations: LocationsLike, *,
                 travel_mode: str = "driving", optimize_route: str = "fastest",
                 traffic: str = "historical", depart_at: Any = None, arrive_at: Any = None,
                 avoid: str | Sequence[str] | None = None, wait: bool = True,
                 timeout: float | None = None, api_version: str = API_VERSION,
                 connection: Connection | None = None
                 ) -> gpd.GeoDataFrame | Operation[gpd.GeoDataFrame]:
    """Travel time and distance from every origin to every destination.

    Up to 2,500 cells the service answers at once; larger matrices (up to 50,000 cells) and
    ``optimize_route="shortest"`` go through its asynchronous matrix, which the toolkit follows
    to its end (see the module's notes for the service's limits).

    Parameters
    ----------
    origins, destinations : pairs, points, place names, GeoSeries/GeoDataFrame or DataFrame
        ``(lon, lat)`` pairs (the toolkit's order), shapely Points, a GeoSeries/GeoDataFrame of
        Points (any CRS), a DataFrame with lon/lat columns, or place names (resolved through
        :func:`~toolkit.maps.search.geocode`; one location or many).
    travel_mode : {"driving", "truck", "walking"}
        The vehicle.
    optimize_route : {"fastest", "shortest"}
        What the routes minimize (``shortest`` only through the asynchronous matrix, up to
        2,500 cells).
    traffic : {"historical", "live"}
        ``live`` adds traffic jams and closures; it needs ``depart_at`` or ``arrive_at``.
    depart_at, arrive_at : datetime, Timestamp, ISO 8601 string or word, optional
        When the trips leave or arrive (naive times are UTC); ``"any"`` (the service's default:
        the time does not matter) or, for ``depart_at``, ``"now"``. Not both.
    avoid : str or sequence of str, optional
        ``tollRoads``, ``unpavedRoads`` (driving and truck only).
    wait : bool
        Wait for the matrix (default); ``False`` returns the :class:`~toolkit.Operation` handle,
        whose ``result()`` gives the frame (finished already for a synchronous matrix).
    timeout : float, optional
        Seconds to wait at most for an asynchronous matrix; then OperationTimeoutError, whose
        ``operation`` resumes.
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    geopandas.GeoDataFrame
        EPSG:4326, one row per cell, by origin then destination: ``originIndex`` and
        ``destinationIndex`` (Int64, positions in ``origins`` and ``destinations``),
        ``origin_place`` and ``destination_place`` (strings, the names asked; empty for
        coordinates), ``statusCode`` (Int64, the cell's HTTP status), ``departureAt`` and
        ``arrivalAt`` (UTC; absent when the time did not matter), ``distanceInMeters``
        (float), ``durationInSeconds`` and ``durationTrafficInSeconds`` (Int64),
        ``error.code`` and ``error.message`` (strings, for a cell that failed:
        ``OUT_OF_REGION``, a name geocode could not place...), ``geometry`` (the straight line
        from origin to destination, not the route).

    Raises
    ------
    ValidationError
        Before any request: a matrix larger than the service takes (with these options), an
        empty side, coordinates out of range, an unknown option, ``depart_at`` with
        ``arrive_at``, live traffic without a time.
    PlaceNotFoundError
        When no origin (or no destination) could be placed.
    OperationTimeoutError
        Still running after ``timeout``.
    OperationFailedError
        The asynchronous matrix ended ``Failed``.
    """
    options = matrix_options(travel_mode, optimize_route, traffic, depart_at, arrive_at, avoid)
    check_bool(wait, "wait")
    check_timeout(timeout)
    check_api_version(api_version)
    from toolkit.maps.search import collect_names

    path = plan_matrix(len(to_lonlat(origins, "origins", places=collect_names)),
                       len(to_lonlat(destinations, "destinations", places=collect_names)),
                       options)
    conn = get_connection(connection)
    asked = _inputs(origins, destinations, conn)
    body = {"type": "FeatureCollection",
            "features": [_multipoint(asked.origins[asked.sent_origins], "origins"),
                         _multipoint(asked.destinations[asked.sent_destinations],
                                     "destinations")],
            **options}
    pipe = conn.pipeline("maps")
    logger.info("route_matrix: %d x %d cells, %s", len(asked.sent_origins),
                len(asked.sent_destinations), "at once" if path == SYNC_PATH else
                "asynchronously")
    op: Operation[gpd.GeoDataFrame] = Operation.start(
        pipe, "POST", path, name="route_matrix",
        parse=_parser(asked, pipe.url(path), api_version), params={"api-version": api_version},
        json=body, content_type="application/geo+json")
    return op.result(timeout) if wait else op


# never cached: the polls of an asynchronous matrix are requests of the operation too
RECORD = register(OperationRecord("route_matrix", schema=ROUTE_MATRIX, plot="travel_times",
                                  resume=_resume_parser))
