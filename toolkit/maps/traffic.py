"""Traffic incidents in a bounding box (spec 2 §2.4, §4.4)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toolkit._core.frames import as_list, build_frame, to_geoframe
from toolkit._core.geo import BBoxLike, bbox_param, check_bbox_size, geojson_geometry, to_bbox
from toolkit._core.messages import Request
from toolkit._core.provenance import provenance
from toolkit._core.registry import OperationRecord, register
from toolkit._core.validate import check_api_version, many_strings
from toolkit._spec.maps import INCIDENT_SEVERITIES, INCIDENT_TYPES, TRAFFIC_API_VERSIONS
from toolkit.connection import get_connection
from toolkit.maps._schemas import TRAFFIC_INCIDENTS

if TYPE_CHECKING:
    import geopandas as gpd

    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["traffic_incidents"]

API_VERSION = TRAFFIC_API_VERSIONS[0]
SEVERITY = dict(enumerate(INCIDENT_SEVERITIES, start=1))


def incident_rows(body: Any) -> list[dict[str, Any]]:
    """One record per incident feature of a traffic incident body."""
    rows = []
    features = body.get("features") if isinstance(body, dict) else None
    for feat in as_list(features):
        if not isinstance(feat, dict):
            continue
        props = dict(feat["properties"]) if isinstance(feat.get("properties"), dict) else {}
        if "lastModifiedTime" not in props and "lastModified" in props:
            props["lastModifiedTime"] = props.pop("lastModified")
        level = props.get("severity")
        level = level if isinstance(level, int) and not isinstance(level, bool) else None
        props["severity_level"] = level
        props["severity"] = SEVERITY.get(level) if level is not None else None
        if level is not None and level not in SEVERITY:
            props["severity"] = str(level)
        props["endPoint"] = geojson_geometry(props.get("endPoint"))
        rows.append({**props, "id": feat.get("id"),
                     "geometry": geojson_geometry(feat.get("geometry"))})
    return rows


def incidents_frame(body: Any, attrs: dict[str, Any]) -> gpd.GeoDataFrame:
    """Build the GeoDataFrame of a traffic incident body (``endPoint`` a second geometry column)."""
    import geopandas as gpd

    df = to_geoframe(build_frame(incident_rows(body), TRAFFIC_INCIDENTS, attrs))
    df["endPoint"] = gpd.GeoSeries(list(df["endPoint"]), index=df.index, crs="EPSG:4326")
    return df


def traffic_incidents(bbox: BBoxLike, *, incident_types: str | Sequence[str] | None = None,
                      api_version: str = API_VERSION,
                      connection: Connection | None = None) -> gpd.GeoDataFrame:
    """Traffic incidents inside a bounding box.

    Parameters
    ----------
    bbox : 4-tuple or object with bounds
        ``(min_lon, min_lat, max_lon, max_lat)``, a shapely geometry, a GeoSeries or
        GeoDataFrame (its total bounds). Width and height at least 12 m, at most 500,000 m and
        30 degrees.
    incident_types : str or sequence of str, optional
        Only these types: ``Accident``, ``Congestion``, ``DisabledVehicle``, ``MassTransit``,
        ``Miscellaneous``, ``OtherNews``, ``PlannedEvent``, ``RoadHazard``, ``Construction``,
        ``Alert``, ``Weather``. All types when omitted.
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    geopandas.GeoDataFrame
        EPSG:4326, one row per incident: ``id`` (exact 64-bit integer, Int64), ``incidentType``
        (category), ``severity`` (ordered category LowImpact < Minor < Moderate < Serious, from
        the service's 1-4), ``severity_level`` (Int64, the service's number), ``title`` and
        ``description`` (strings), ``delay`` (timedelta), ``startTime``, ``endTime``,
        ``lastModifiedTime`` (UTC), ``isRoadClosed``, ``isTrafficJam`` (boolean), ``endPoint``
        (a second geometry column: where the incident ends), ``geometry`` (Point where it
        starts).

    Raises
    ------
    ValidationError
        Before any request: a bbox out of range, in the wrong order or of the wrong size, an
        unknown incident type.
    """
    box = to_bbox(bbox, "bbox")
    check_bbox_size(box, "bbox", min_m=12, max_m=500_000, max_deg=30)
    kinds = None
    if incident_types is not None:
        kinds, _ = many_strings(incident_types, "incident_types", choices=INCIDENT_TYPES,
                                case_insensitive=True)
    check_api_version(api_version)
    conn = get_connection(connection)
    pipe = conn.pipeline("maps")
    path = "/traffic/incident"
    response = pipe.send(Request("GET", path, params={"api-version": api_version,
                                                      "bbox": bbox_param(box),
                                                      "incidentType": ",".join(dict.fromkeys(kinds))
                                                      if kinds else None},
                                 operation="traffic_incidents"))
    ids = [response.request_id] if response.request_id else []
    return incidents_frame(response.json_object(),
                           provenance("traffic_incidents", api_version, pipe.url(path), ids))


RECORD = register(OperationRecord("traffic_incidents", schema=TRAFFIC_INCIDENTS, lifetime=120,
                                  plot="incidents", explore="incidents"))
