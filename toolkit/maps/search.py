"""Geocode autocomplete (spec 2 §2.1, §4.1): ranked suggestions for a partial query."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toolkit._core.concurrency import fan_out, settle
from toolkit._core.errors import ToolkitError, ValidationError
from toolkit._core.frames import as_list, build_frame, to_geoframe
from toolkit._core.geo import (
    bbox_param,
    check_bbox_size,
    geojson_geometry,
    lonlat_param,
    to_bbox,
    to_point,
)
from toolkit._core.paging import MAPS, iter_pages
from toolkit._core.provenance import provenance
from toolkit._core.schemas import AUTOCOMPLETE, AUTOCOMPLETE_TYPE_GROUPS, AUTOCOMPLETE_TYPES
from toolkit._core.validate import (
    check_api_version,
    check_choice,
    check_int,
    check_language,
    many_strings,
)
from toolkit._spec.maps import COUNTRY_CODE_PATTERN, SEARCH_API_VERSIONS
from toolkit.connection import get_connection

if TYPE_CHECKING:
    import geopandas as gpd

    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["autocomplete"]

API_VERSION = SEARCH_API_VERSIONS[0]
#: Search (non-batch) allows 500 queries per second per account; stay just under.
SEARCH_QPS = 450.0
ISO2 = re.compile(COUNTRY_CODE_PATTERN)
MIN_BBOX_DEG = 0.00001


def _choices(value: Any, parameter: str, allowed: Sequence[str]) -> list[str] | None:
    if value is None:
        return None
    items = [value] if isinstance(value, str) else value
    try:
        items = list(items)
    except TypeError:
        raise ValidationError(parameter, value, f"must be one or more of "
                              f"{', '.join(allowed[:8])}...") from None
    if not items:
        raise ValidationError(parameter, value, "must name at least one value, or be None")
    return [check_choice(v, f"{parameter}[{i}]" if len(items) > 1 else parameter, allowed,
                         case_insensitive=True) for i, v in enumerate(items)]


def _iso2(value: Any, parameter: str, *, auto: bool = False) -> str | None:
    if value is None:
        return None
    if auto and isinstance(value, str) and value.lower() == "auto":
        return "Auto"
    if not isinstance(value, str) or not ISO2.fullmatch(value):
        raise ValidationError(parameter, value, "must be an ISO 3166-1 alpha-2 code such as "
                              "'AD' or 'FR'" + (" (or 'Auto')" if auto else ""))
    return value.upper()


def autocomplete_rows(body: Any, query: str) -> list[dict[str, Any]]:
    """One record per feature of an autocomplete body, in rank order."""
    rows = []
    features = body.get("features") if isinstance(body, dict) else None
    for rank, feat in enumerate(as_list(features), start=1):
        if not isinstance(feat, dict):
            continue
        props = feat.get("properties") if isinstance(feat.get("properties"), dict) else {}
        address = props.get("address") if isinstance(props.get("address"), dict) else {}
        districts = address.get("adminDistricts")
        names = [d.get("name") for d in districts if isinstance(d, dict)] \
            if isinstance(districts, list) else []
        rows.append({**props, "query": query, "rank": rank,
                     "admin_district_1": names[0] if names else None,
                     "admin_district_2": names[1] if len(names) > 1 else None,
                     "geometry": geojson_geometry(feat.get("geometry"))})
    return rows


def autocomplete_frame(rows: list[dict[str, Any]], attrs: dict[str, Any] | None = None
                       ) -> gpd.GeoDataFrame:
    """The typed GeoDataFrame of :func:`autocomplete_rows` records."""
    return to_geoframe(build_frame(rows, AUTOCOMPLETE, attrs))


def autocomplete(query: str | Sequence[str], *, coordinates: Any = None, bbox: Any = None,
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
    queries, _single = many_strings(query, "query")
    for i, q in enumerate(queries):
        if not q.strip():
            raise ValidationError("query" if len(queries) == 1 else f"query[{i}]", q,
                                  "must be a non-empty query prefix")
    point = to_point(coordinates, "coordinates") if coordinates is not None else None
    box = to_bbox(bbox, "bbox") if bbox is not None else None
    if box is not None:
        check_bbox_size(box, "bbox", min_deg=MIN_BBOX_DEG)
    if point is None and box is None:
        raise ValidationError("coordinates", None, "coordinates (lon, lat) or bbox is required: "
                              "the service needs one when the other is absent")
    country = _iso2(country_region, "country_region")
    view_code = _iso2(view, "view", auto=True)
    groups = _choices(result_type_groups, "result_type_groups", AUTOCOMPLETE_TYPE_GROUPS)
    types = _choices(result_types, "result_types", AUTOCOMPLETE_TYPES)
    check_int(top, "top", minimum=1, maximum=20)
    check_language(language)
    check_api_version(api_version)
    conn = get_connection(connection)
    pipe = conn.pipeline("maps")
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

    def ask(q: str) -> tuple[list[dict[str, Any]], list[str]]:
        rows: list[dict[str, Any]] = []
        ids: list[str] = []
        for page in iter_pages(pipe, "GET", "/geocode:autocomplete", style=MAPS,
                               params={**params, "query": q}, headers=headers,
                               operation="autocomplete"):
            if page.response.request_id:
                ids.append(page.response.request_id)
            rows.extend(autocomplete_rows(page.body, q))
            if len(rows) >= top:
                break
        for k, row in enumerate(rows[:top], start=1):
            row["rank"] = k
        return rows[:top], ids

    distinct = list(dict.fromkeys(queries))
    outcomes = fan_out(ask, distinct, connection=conn, desc="autocomplete", rate=SEARCH_QPS)
    answers: dict[str, list[dict[str, Any]]] = {}
    request_ids: list[str] = []
    for o in settle(outcomes, fatal=(ToolkitError,)):
        found, ids = o.result()
        answers[o.item] = found
        request_ids.extend(ids)
    rows = [row for q in queries for row in answers[q]]
    return autocomplete_frame(rows, provenance("autocomplete", api_version,
                                               pipe.url("/geocode:autocomplete"), request_ids))
