"""Reverse geocoding (Search 2025-01-01 ``POST /reverseGeocode:batch``): the address at a point.

Any number of points: the distinct ones are sent in batches of at most 100 (the service's
limit), concurrently but never faster than the search batch rate the service documents (10
calls a second), and the frame has one row per point given, in input order, with the service's
best match (the most specific entity it found of the types asked). A point the service refuses
(out of range, for instance) is a row with ``error.code`` and ``error.message`` while the others
keep their results; a point where it found nothing is a row with no address and no geometry. A
batch the service answers 408 (longer than its 60 s limit) is split in two and sent again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from toolkit._core.concurrency import fan_out, settle
from toolkit._core.errors import ProtocolError
from toolkit._core.frames import as_dict, build_frame, to_geoframe
from toolkit._core.geo import PointsLike, haversine_m, to_lonlat
from toolkit._core.provenance import provenance
from toolkit._core.registry import OperationRecord, register
from toolkit._core.validate import (
    check_api_version,
    check_country_code,
    check_language,
    many_strings,
)
from toolkit._spec.maps import (
    GEOCODE_API_VERSIONS,
    REVERSE_GEOCODE_BATCH_SIZE,
    REVERSE_GEOCODE_TYPES,
)
from toolkit.connection import get_connection
from toolkit.maps._batch import Batches, chunks
from toolkit.maps._schemas import REVERSE_GEOCODE
from toolkit.maps.search import geocode_rows

if TYPE_CHECKING:
    import geopandas as gpd

    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["reverse_geocode", "reverse_geocode_frame", "reverse_geocode_rows"]

API_VERSION = GEOCODE_API_VERSIONS[0]
BATCH_PATH = "/reverseGeocode:batch"
#: Search batch: 10 calls per second per account; stay just under.
BATCH_QPS = 9.0


def reverse_geocode_rows(index: int, point: Sequence[float], answer: Any) -> dict[str, Any]:
    """Build the row of one point from its batch item: the best match, the error, or nothing.

    ``point`` is the ``(lon, lat)`` asked about; ``answer`` the service's batch item (a
    FeatureCollection, or an object with ``error``).
    """
    import shapely

    lon, lat = float(point[0]), float(point[1])
    base: dict[str, Any] = {"input_index": index, "input_point": shapely.Point(lon, lat),
                            "geometry": None}
    if not isinstance(answer, dict):
        return {**base, "error": {"code": "ProtocolError",
                                  "message": "the service sent no answer for this point"}}
    error = answer.get("error")
    if error is not None:
        err = as_dict(error)
        code, message = err.get("code"), err.get("message")
        if code is None and message is None:  # an error that says nothing is still an error
            code, message = "Error", f"the service answered an error: {error!r}"[:300]
        return {**base, "error": {"code": code, "message": message}}
    matches = geocode_rows(answer, "")
    if not matches:
        return base
    best = {k: v for k, v in matches[0].items() if k not in ("query", "rank")}
    geom = best.get("geometry")
    if geom is not None and not geom.is_empty and geom.geom_type == "Point":
        best["distance_m"] = round(float(haversine_m(lon, lat, geom.x, geom.y)), 1)
    return {**best, "input_index": index, "input_point": base["input_point"]}


def reverse_geocode_frame(rows: list[dict[str, Any]], attrs: dict[str, Any] | None = None
                          ) -> gpd.GeoDataFrame:
    """Build the typed GeoDataFrame of :func:`reverse_geocode_rows` records."""
    import geopandas as gpd

    df = to_geoframe(build_frame(rows, REVERSE_GEOCODE, attrs))
    df["input_point"] = gpd.GeoSeries(list(df["input_point"]), index=df.index, crs="EPSG:4326")
    return df


def _item(lon: float, lat: float, types: list[str] | None, view: str | None) -> dict[str, Any]:
    item: dict[str, Any] = {"coordinates": [round(lon, 7), round(lat, 7)]}
    if types:
        item["resultTypes"] = types
    if view:
        item["view"] = view
    return item


def reverse_geocode(points: PointsLike, *, result_types: str | Sequence[str] | None = None,
                    view: str | None = None, language: str | None = None,
                    api_version: str = API_VERSION,
                    connection: Connection | None = None) -> gpd.GeoDataFrame:
    """Find the address (or place) at each of any number of points.

    Parameters
    ----------
    points : pair, points, GeoSeries/GeoDataFrame or DataFrame
        ``(lon, lat)`` (the toolkit's order, as GeoJSON and shapely have it), many such pairs or
        an ``(n, 2)`` array, shapely Points, a GeoSeries/GeoDataFrame of Points (any CRS), or a
        DataFrame with lon/lat columns. Identical points are asked once.
    result_types : str or sequence of str, optional
        The entity types wanted, of ``Address``, ``Neighborhood``, ``PopulatedPlace``,
        ``Postcode1``, ``AdminDivision1``, ``AdminDivision2``, ``CountryRegion`` (the
        service's default: all). The service answers the most specific type it finds; a point
        with none of them has no match.
    view : str, optional
        ISO 3166-1 alpha-2 code (or ``Auto``) for disputed borders and labels.
    language : str, optional
        ``Accept-Language`` of the answers (e.g. ``"en"``, ``"ca"``).
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    geopandas.GeoDataFrame
        EPSG:4326, one row per point in input order: ``input_index`` (Int64, position in
        ``points``), ``type`` (category: Address, RoadBlock, RoadIntersection, Neighborhood,
        PopulatedPlace, Postcode1, AdminDivision1, AdminDivision2, CountryRegion; others the
        service sends are kept), ``confidence`` (ordered category Low < Medium < High),
        ``matchCodes`` (list), ``address.formattedAddress``, ``address.addressLine``,
        ``address.streetName``, ``address.streetNumber``, ``address.neighborhood``,
        ``address.locality``, ``address.postalCode`` (strings), ``address.adminDistricts``
        (list of ``{name, shortName}``), ``admin_district_1`` and ``admin_district_2``
        (strings), ``address.countryRegion.ISO``, ``address.countryRegion.name`` (strings),
        ``address.intersection`` (object), ``geocodePoints`` (list), ``bbox`` (list of four
        numbers), ``distance_m`` (float: metres from the point asked to the match),
        ``error.code`` and ``error.message`` (strings, only for a point the service refused),
        ``input_point`` (Point: the point asked about), ``geometry`` (Point: the match; empty
        for a point with no match or an error).

    Raises
    ------
    ValidationError
        Before any request: no points, a longitude outside ±180 or latitude outside ±90 (shown
        as read, in (longitude, latitude) order), an unknown result type, a code that is not
        alpha-2, a bad language.
    ApiError
        When every batch failed (e.g. a refused credential): the first failure. When only some
        failed, their points are rows with the error and the others are kept.

    Examples
    --------
    >>> found = toolkit.reverse_geocode([(1.5218, 42.5075), (1.5975, 42.5676)])  # doctest: +SKIP
    >>> found[["input_index", "type", "address.formattedAddress", "distance_m"]]  # doctest: +SKIP
    """
    coords = to_lonlat(points, "points", min_points=1)
    types = many_strings(result_types, "result_types", choices=REVERSE_GEOCODE_TYPES,
                         case_insensitive=True)[0] if result_types is not None else None
    view_code = check_country_code(view, "view", auto=True)
    check_language(language)
    check_api_version(api_version)
    conn = get_connection(connection)
    distinct: dict[tuple[float, float], int] = {}
    for lon, lat in coords:
        distinct.setdefault((float(lon), float(lat)), len(distinct))
    items = [_item(lon, lat, types, view_code) for lon, lat in distinct]
    batches = Batches(conn.pipeline("maps"), BATCH_PATH, "reverse_geocode", items, api_version,
                      {"Accept-Language": language} if language else None)
    outcomes = fan_out(batches.send, chunks(range(len(items)), REVERSE_GEOCODE_BATCH_SIZE),
                       connection=conn, desc="reverse_geocode", rate=BATCH_QPS, burst=1,
                       service="maps.search_batch")
    settle(outcomes, spared=(ProtocolError,))  # nothing came back (e.g. credentials): raise
    answers: list[Any] = [None] * len(items)
    for outcome in outcomes:
        for pos, k in enumerate(outcome.item):
            if outcome.ok:
                answers[k] = outcome.result()[pos]
            else:
                err = outcome.error
                answers[k] = {"error": {"code": getattr(err, "code", None)
                                        or type(err).__name__, "message": str(err)}}
    rows = [reverse_geocode_rows(i, point, answers[distinct[(float(point[0]), float(point[1]))]])
            for i, point in enumerate(np.asarray(coords))]
    return reverse_geocode_frame(rows, provenance("reverse_geocode", api_version,
                                                  batches.pipe.url(BATCH_PATH),
                                                  batches.request_ids))


RECORD = register(OperationRecord("reverse_geocode", schema=REVERSE_GEOCODE, lifetime=86_400,
                                  plot="addresses", explore="addresses"))
