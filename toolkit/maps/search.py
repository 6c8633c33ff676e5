"""Geocode autocomplete (spec 2 §2.1, §4.1) and geocoding (Search ``GET /geocode``).

Autocomplete gives ranked suggestions for a partial query; geocoding finds places and addresses by
name, with their coordinates.

:class:`Places` and :func:`resolve_locations` turn place names into coordinates through
:func:`geocode` for the functions that accept a name wherever a location is (weather, route
waypoints, matrices and reachable ranges).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from toolkit._core.concurrency import fan_out, settle
from toolkit._core.errors import PlaceNotFoundError, ToolkitError, ValidationError
from toolkit._core.frames import as_dict, as_list, build_frame, to_geoframe
from toolkit._core.geo import (
    BBoxLike,
    PointLike,
    bbox_param,
    check_bbox_size,
    geojson_geometry,
    lonlat_param,
    to_bbox,
    to_point,
)
from toolkit._core.paging import MAPS, iter_pages
from toolkit._core.provenance import provenance
from toolkit._core.registry import OperationRecord, register
from toolkit._core.schemas import Schema
from toolkit._core.validate import (
    check_api_version,
    check_country_code,
    check_int,
    check_language,
    many_strings,
)
from toolkit._spec.maps import (
    AUTOCOMPLETE_TYPE_GROUPS,
    AUTOCOMPLETE_TYPES,
    GEOCODE_API_VERSIONS,
    GEOCODE_TOP,
    SEARCH_API_VERSIONS,
)
from toolkit.connection import get_connection
from toolkit.maps._schemas import AUTOCOMPLETE, GEOCODE

if TYPE_CHECKING:
    import geopandas as gpd
    import numpy as np

    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["Places", "autocomplete", "collect_names", "geocode", "resolve_locations"]

API_VERSION = SEARCH_API_VERSIONS[0]
GEOCODE_API_VERSION = GEOCODE_API_VERSIONS[0]
#: The confidences at which a place name is taken as resolved (geocode's top match).
RESOLVED_CONFIDENCE = ("High", "Medium")
#: Search (non-batch) allows 500 queries per second per account; stay just under.
SEARCH_QPS = 450.0
MIN_BBOX_DEG = 0.00001


def _choices(value: Any, parameter: str, allowed: Sequence[str]) -> list[str] | None:
    if value is None:
        return None
    return many_strings(value, parameter, choices=allowed, case_insensitive=True)[0]


def _bbox(bbox: Any) -> tuple[float, float, float, float] | None:
    """Check the search ``bbox`` for range, order and the service's smallest size."""
    if bbox is None:
        return None
    box = to_bbox(bbox, "bbox")
    check_bbox_size(box, "bbox", min_deg=MIN_BBOX_DEG)
    return box


def _feature_rows(body: Any, query: str) -> list[dict[str, Any]]:
    """One record per feature of a search body (autocomplete or geocode), in rank order."""
    rows = []
    features = body.get("features") if isinstance(body, dict) else None
    for rank, feat in enumerate(as_list(features), start=1):
        if not isinstance(feat, dict):
            continue
        props = as_dict(feat.get("properties"))
        address = as_dict(props.get("address"))
        districts = address.get("adminDistricts")
        names = [d.get("name") or d.get("shortName") for d in districts
                 if isinstance(d, dict)] if isinstance(districts, list) else []
        rows.append({**props, "query": query, "rank": rank,
                     "admin_district_1": names[0] if names else None,
                     "admin_district_2": names[1] if len(names) > 1 else None,
                     "bbox": feat.get("bbox") if isinstance(feat.get("bbox"), list) else None,
                     "geometry": geojson_geometry(feat.get("geometry"))})
    return rows


autocomplete_rows = _feature_rows
#: One record per feature of a geocode body (the same flattening as autocomplete's).
geocode_rows = _feature_rows


def autocomplete_frame(rows: list[dict[str, Any]], attrs: dict[str, Any] | None = None
                       ) -> gpd.GeoDataFrame:
    """Build the typed GeoDataFrame of :func:`autocomplete_rows` records."""
    return to_geoframe(build_frame(rows, AUTOCOMPLETE, attrs))


def geocode_frame(rows: list[dict[str, Any]], attrs: dict[str, Any] | None = None
                  ) -> gpd.GeoDataFrame:
    """Build the typed GeoDataFrame of :func:`geocode_rows` records."""
    return to_geoframe(build_frame(rows, GEOCODE, attrs))


def _queries(query: Any, rule: str) -> list[str]:
    """Check the query or queries: strings, none empty (``rule`` says what one must be)."""
    queries, _single = many_strings(query, "query")
    for i, q in enumerate(queries):
        if not q.strip():
            raise ValidationError("query" if len(queries) == 1 else f"query[{i}]", q, rule)
    return queries


def _search(conn: Connection, path: str, operation: str, queries: list[str],
            params: dict[str, Any], headers: dict[str, str] | None, top: int, schema: Schema,
            api_version: str) -> gpd.GeoDataFrame:
    """Ask ``path`` for every distinct query concurrently, in one frame of ``schema``.

    Next links are followed up to ``top`` results; queries come in input order and results in rank
    order.
    """
    pipe = conn.pipeline("maps")

    def ask(q: str) -> tuple[list[dict[str, Any]], list[str]]:
        rows: list[dict[str, Any]] = []
        ids: list[str] = []
        for page in iter_pages(pipe, "GET", path, style=MAPS, params={**params, "query": q},
                               headers=headers, operation=operation):
            if page.response.request_id:
                ids.append(page.response.request_id)
            rows.extend(_feature_rows(page.body, q))
            if len(rows) >= top:
                break
        for k, row in enumerate(rows[:top], start=1):
            row["rank"] = k
        return rows[:top], ids

    distinct = list(dict.fromkeys(queries))
    outcomes = fan_out(ask, distinct, connection=conn, desc=operation, rate=SEARCH_QPS)
    answers: dict[str, list[dict[str, Any]]] = {}
    request_ids: list[str] = []
    for o in settle(outcomes, fatal=(ToolkitError,)):
        found, ids = o.result()
        answers[o.item] = found
        request_ids.extend(ids)
    rows = [row for q in queries for row in answers[q]]
    attrs = provenance(operation, api_version, pipe.url(path), request_ids)
    return to_geoframe(build_frame(rows, schema, attrs))


def autocomplete(query: str | Sequence[str], *, coordinates: PointLike | None = None,
                 bbox: BBoxLike | None = None,
                 country_region: str | None = None,
                 result_type_groups: str | Sequence[str] | None = None,
                 result_types: str | Sequence[str] | None = None, top: int = 5,
                 view: str | None = None, language: str | None = None,
                 api_version: str = API_VERSION,
                 connection: Connection | None = None) -> gpd.GeoDataFrame:
    """Suggest addresses and places for partial queries, ranked most likely first.

    Parameters
    ----------
    query : str or sequence of str
        The user's query prefix, or many of them (asked concurrently; one frame back).
    coordinates : point, optional
        The user's location, ``(lon, lat)`` or a shapely Point. Required when ``bbox`` is absent.
    bbox : 4-tuple or object with bounds, optional
        ``(min_lon, min_lat, max_lon, max_lat)``, a shapely geometry or a GeoDataFrame: results
        inside it. Required when ``coordinates`` is absent; at least 0.00001 degrees wide and
        high, at most the whole globe. With both, ``bbox`` dominates.
    country_region : str, optional
        ISO 3166-1 alpha-2 code: only results in that country or region.
    result_type_groups : str or sequence of str, optional
        ``Address`` and/or ``Place``.
    result_types : str or sequence of str, optional
        Entity types (``PopulatedPlace``, ``Address``, ``Hospital``...). Combined with
        ``result_type_groups`` as an intersection, which may be empty: then no rows.
    top : int
        Suggestions per query, 1 to 20 (default 5).
    view : str, optional
        ISO 3166-1 alpha-2 code (or ``Auto``) for disputed borders and labels.
    language : str, optional
        ``Accept-Language`` of the results (e.g. ``"en"``, ``"fr"``).
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    geopandas.GeoDataFrame
        EPSG:4326, one row per suggestion, queries in input order and suggestions in rank
        order: ``query`` (string), ``rank`` (Int64, 1 = most likely), ``typeGroup`` (category
        Address/Place), ``type`` (category of the result types), ``name`` (string; absent for
        addresses), ``address.formattedAddress``, ``address.addressLine``,
        ``address.streetName``, ``address.streetNumber``, ``address.neighborhood``,
        ``address.locality``, ``address.postalCode`` (strings), ``address.adminDistricts``
        (list of ``{name, shortName}``), ``admin_district_1`` and ``admin_district_2`` (the first
        two district names), ``address.countryRegion.ISO``, ``address.countryRegion.name``
        (strings), ``address.intersection`` (object), ``geometry`` (as the service sends it:
        null in every observed answer, and never invented).

    Raises
    ------
    ValidationError
        Before any request, for an empty query, a missing location, out-of-range coordinates, a
        bbox too small or out of range, a code that is not alpha-2, an unknown type or group,
        ``top`` outside 1-20.
    """
    queries = _queries(query, "must be a non-empty query prefix")
    point = to_point(coordinates, "coordinates") if coordinates is not None else None
    box = _bbox(bbox)
    if point is None and box is None:
        raise ValidationError("coordinates", None, "coordinates (lon, lat) or bbox is required: "
                              "the service needs one when the other is absent")
    country = check_country_code(country_region, "country_region")
    view_code = check_country_code(view, "view", auto=True)
    groups = _choices(result_type_groups, "result_type_groups", AUTOCOMPLETE_TYPE_GROUPS)
    types = _choices(result_types, "result_types", AUTOCOMPLETE_TYPES)
    check_int(top, "top", minimum=1, maximum=20)
    check_language(language)
    check_api_version(api_version)
    conn = get_connection(connection)
    params = {
        "api-version": api_version,
        "coordinates": lonlat_param(*point) if point else None,
        "bbox": bbox_param(box) if box else None,
        "countryRegion": country,
        "resultTypeGroups": ",".join(groups) if groups else None,
        "resultTypes": ",".join(types) if types else None,
        "top": top,
        "view": view_code,
    }
    headers = {"Accept-Language": language} if language else None
    return _search(conn, "/geocode:autocomplete", "autocomplete", queries, params, headers, top,
                   AUTOCOMPLETE, api_version)


def geocode(query: str | Sequence[str], *, coordinates: PointLike | None = None,
            bbox: BBoxLike | None = None, country_region: str | None = None,
            top: int = 5, view: str | None = None, language: str | None = None,
            api_version: str = GEOCODE_API_VERSION,
            connection: Connection | None = None) -> gpd.GeoDataFrame:
    """Find places and addresses by name: their coordinates, address and how sure the match is.

    The service's geocoding (``GET /geocode``): free text such as ``"Ordino"``,
    ``"Avinguda Meritxell 12, Andorra la Vella"`` or a landmark's name.

    Parameters
    ----------
    query : str or sequence of str
        What to find, or many of them (asked concurrently; one frame back, queries in input
        order).
    bbox : 4-tuple or object with bounds, optional
        ``(min_lon, min_lat, max_lon, max_lat)``, a shapely geometry or a GeoDataFrame: the area
        the results are ranked for (at least 0.00001 degrees wide and high).
    coordinates : point, optional
        The user's location, ``(lon, lat)`` or a shapely Point: nearer results rank higher.
    country_region : str, optional
        ISO 3166-1 alpha-2 code of the country or region to look in.
    top : int
        Results per query, 1 to 20 (default 5).
    view : str, optional
        ISO 3166-1 alpha-2 code (or ``Auto``) for disputed borders and labels.
    language : str, optional
        ``Accept-Language`` of the results (e.g. ``"en"``, ``"ca"``).
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    geopandas.GeoDataFrame
        EPSG:4326, one row per match, queries in input order and matches in rank order:
        ``query`` (string, as asked), ``rank`` (Int64, 1 = best), ``type`` (category:
        Address, RoadBlock, RoadIntersection, Neighborhood, PopulatedPlace, Postcode1,
        AdminDivision1, AdminDivision2, CountryRegion; point-of-interest types the service
        sends are kept), ``confidence`` (ordered category Low < Medium < High),
        ``matchCodes`` (list of Good, Ambiguous, UpHierarchy), ``address.formattedAddress``,
        ``address.addressLine``, ``address.streetName``, ``address.streetNumber``,
        ``address.neighborhood``, ``address.locality``, ``address.postalCode`` (strings),
        ``address.adminDistricts`` (list of ``{name, shortName}``), ``admin_district_1`` and
        ``admin_district_2`` (the first two districts' names, else short names),
        ``address.countryRegion.ISO``, ``address.countryRegion.name`` (strings),
        ``address.intersection`` (object), ``geocodePoints`` (list of the service's points
        with ``calculationMethod`` and ``usageTypes``), ``bbox`` (list of four numbers: the
        match's extent), ``geometry`` (Point, longitude and latitude). A query with no match
        has no rows.

    Raises
    ------
    ValidationError
        Before any request: an empty query, ``top`` outside 1-20, a bbox out of range or too
        small, out-of-range coordinates, a code that is not alpha-2, a bad language.

    Examples
    --------
    >>> found = toolkit.geocode(["Ordino", "Canillo"], top=1)  # doctest: +SKIP
    >>> found[["query", "type", "confidence", "geometry"]]    # doctest: +SKIP
    """
    queries = _queries(query, "must be a non-empty place name or address")
    box = _bbox(bbox)
    point = to_point(coordinates, "coordinates") if coordinates is not None else None
    country = check_country_code(country_region, "country_region")
    view_code = check_country_code(view, "view", auto=True)
    check_int(top, "top", minimum=GEOCODE_TOP[0], maximum=GEOCODE_TOP[1])
    check_language(language)
    check_api_version(api_version)
    conn = get_connection(connection)
    params = {
        "api-version": api_version,
        "bbox": bbox_param(box) if box else None,
        "coordinates": lonlat_param(*point) if point else None,
        "countryRegion": country,
        "top": top,
        "view": view_code,
    }
    headers = {"Accept-Language": language} if language else None
    return _search(conn, "/geocode", "geocode", queries, params, headers, top, GEOCODE,
                   api_version)


class PlaceMatch(NamedTuple):
    """Where a place name resolved to: geocode's top match."""

    lon: float
    lat: float
    address: str | None


def collect_names(names: list[str]) -> dict[str, tuple[float, float]]:
    """Place every name at ``(0, 0)``: a stand-in place resolver.

    A first pass over the locations thus checks the points given as coordinates before any name is
    geocoded.
    """
    return dict.fromkeys(names, (0.0, 0.0))


class Places:
    """Place names resolved through :func:`geocode`, for ``parameter``.

    Each name is geocoded once (all of them concurrently) and resolves to the top match when its
    confidence is High or Medium. :meth:`lookup` keeps the names it could not place apart
    (:class:`~toolkit._core.errors.PlaceNotFoundError` each, for a row of their own); calling
    the object (a :data:`~toolkit._core.geo.PlaceResolver`) raises the first. ``found`` keeps
    what each name resolved to.
    """

    def __init__(self, parameter: str, connection: Connection | None = None) -> None:
        self.parameter = parameter
        self.connection = connection
        self.found: dict[str, PlaceMatch] = {}
        self.missing: dict[str, PlaceNotFoundError] = {}

    def lookup(self, names: Sequence[str]) -> dict[str, PlaceNotFoundError]:
        """Geocode the names not yet asked; the ones that could not be placed."""
        import pandas as pd

        asked = [n for n in dict.fromkeys(names) if n not in self.found and n not in self.missing]
        if asked:
            df = geocode(asked, top=1, connection=self.connection)
            for name in asked:
                hits = df[df["query"] == name]
                geom = hits["geometry"].iloc[0] if len(hits) else None
                if geom is None or geom.is_empty:
                    self.missing[name] = PlaceNotFoundError(
                        self.parameter, name, "geocode found no place of that name; give "
                        "(longitude, latitude) instead")
                    continue
                best = hits.iloc[0]
                address = best["address.formattedAddress"]
                address = None if pd.isna(address) else str(address)
                if str(best["confidence"]) not in RESOLVED_CONFIDENCE:
                    self.missing[name] = PlaceNotFoundError(
                        self.parameter, name, f"geocode's best match is only "
                        f"{best['confidence']!s}-confidence ({address}); name the place more "
                        "fully or give (longitude, latitude)")
                    continue
                self.found[name] = PlaceMatch(float(geom.x), float(geom.y), address)
                logger.info("%s: %r is %s (%.5f, %.5f)", self.parameter, name, address,
                            geom.x, geom.y)
        return {n: self.missing[n] for n in dict.fromkeys(names) if n in self.missing}

    def __call__(self, names: list[str]) -> Mapping[str, PlaceMatch]:
        """Resolve ``names`` (geocoding those not yet asked); raise the first that was not found."""
        missing = self.lookup(names)
        if missing:
            raise next(iter(missing.values()))
        return {n: self.found[n] for n in names}

    def columns(self, names: Sequence[str | None] | None, count: int) -> dict[str, list[Any]]:
        """Give the ``place`` and ``place_address`` columns of ``count`` locations.

        ``None`` where a location was given as coordinates or its name was not found.
        """
        asked = list(names) if names is not None else [None] * count
        return {"place": asked,
                "place_address": [self.found[n].address if n in self.found else None
                                  for n in asked]}


def resolve_locations(locations: object, parameter: str, conn: Connection
                      ) -> tuple[np.ndarray, dict[str, list[Any]], dict[int, ToolkitError]]:
    """Read locations as an ``(n, 2)`` array of (lon, lat), the names among them geocoded.

    The points given as coordinates are checked first (before any request); then the names are
    geocoded at once (:class:`Places`).

    Parameters
    ----------
    locations : object
        What :func:`~toolkit._core.geo.to_lonlat` reads, place names included.
    parameter : str
        The parameter they came under, for errors.
    conn : Connection
        The connection geocode asks through.

    Returns
    -------
    (numpy.ndarray, dict, dict)
        The points (NaN where a name could not be placed); the ``place`` and ``place_address``
        columns (:meth:`Places.columns`); the positions whose name could not be placed, each
        with its :class:`~toolkit._core.errors.PlaceNotFoundError` (nothing is asked about them).
    """
    import numpy as np

    from toolkit._core.geo import location_names, to_lonlat

    points = to_lonlat(locations, parameter, min_points=1, places=collect_names)
    names = location_names(locations)
    places = Places(parameter, conn)
    failed: dict[int, ToolkitError] = {}
    if names is not None:
        missing = places.lookup([n for n in names if n is not None])
        for i, name in enumerate(names):
            if name is None:
                continue
            if name in missing:
                failed[i] = missing[name]
                points[i] = np.nan
            else:
                points[i] = places.found[name][:2]
    return points, places.columns(names, len(points)), failed


AUTOCOMPLETE_RECORD = register(OperationRecord("autocomplete", schema=AUTOCOMPLETE,
                                               lifetime=86_400, explore="suggestions"))
GEOCODE_RECORD = register(OperationRecord("geocode", schema=GEOCODE))
