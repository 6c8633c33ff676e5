"""The declared schemas of the location, routing, traffic and weather operations' frames.

The modules of :mod:`toolkit.maps` share their parts (an address, a place given by name, the
air-quality fields), so the schemas sit in the family, apart from the functions; each function's
module declares its operation's record with its schema.
"""

from __future__ import annotations

from toolkit._core.schemas import Col, Schema
from toolkit._spec.maps import (
    AIR_QUALITY_CATEGORIES,
    ALERT_STATUSES,
    AUTOCOMPLETE_TYPE_GROUPS,
    AUTOCOMPLETE_TYPES,
    DOMINANT_POLLUTANTS,
    GEOCODE_CONFIDENCE,
    GEOCODE_TYPES,
    INCIDENT_SEVERITIES,
    INCIDENT_TYPES,
    POLLUTANT_TYPES,
    TRAFFIC_CONGESTION,
)

__all__ = ["AIR_QUALITY", "AIR_QUALITY_FORECAST", "AIR_QUALITY_HOURLY_FORECAST",
           "AIR_QUALITY_POLLUTANTS", "AUTOCOMPLETE", "GEOCODE", "REVERSE_GEOCODE",
           "ROUTE_DIRECTIONS", "SEVERE_WEATHER_ALERTS", "SNAP_TO_ROADS", "TRAFFIC_INCIDENTS"]


_ADDRESS = (
    Col("address.formattedAddress", "string"),
    Col("address.addressLine", "string"),
    Col("address.streetName", "string"),
    Col("address.streetNumber", "string"),
    Col("address.neighborhood", "string"),
    Col("address.locality", "string"),
    Col("address.postalCode", "string"),
    Col("address.adminDistricts", "list"),
    Col("admin_district_1", "string"),
    Col("admin_district_2", "string"),
    Col("address.countryRegion.ISO", "string"),
    Col("address.countryRegion.name", "string"),
    Col("address.intersection", "object"),
)

AUTOCOMPLETE = Schema(
    "autocomplete",
    (
        Col("query", "string"),
        Col("rank", "Int64"),
        Col("typeGroup", "category", categories=AUTOCOMPLETE_TYPE_GROUPS),
        Col("type", "category", categories=AUTOCOMPLETE_TYPES),
        Col("name", "string"),
        *_ADDRESS,
        Col("geometry", "geometry"),
    ),
    geometry="geometry",
)

GEOCODE = Schema(
    "geocode",
    (
        Col("query", "string"),
        Col("rank", "Int64"),
        Col("type", "category", categories=GEOCODE_TYPES),
        Col("confidence", "category", categories=GEOCODE_CONFIDENCE, ordered=True),
        Col("matchCodes", "list"),
        *_ADDRESS,
        Col("geocodePoints", "list"),
        Col("bbox", "list"),
        Col("geometry", "geometry"),
    ),
    geometry="geometry",
)

REVERSE_GEOCODE = Schema(
    "reverse_geocode",
    (
        Col("input_index", "Int64"),
        Col("type", "category", categories=GEOCODE_TYPES),
        Col("confidence", "category", categories=GEOCODE_CONFIDENCE, ordered=True),
        Col("matchCodes", "list"),
        *_ADDRESS,
        Col("geocodePoints", "list"),
        Col("bbox", "list"),
        Col("distance_m", "float"),
        Col("error.code", "string"),
        Col("error.message", "string"),
        Col("input_point", "geometry"),
        Col("geometry", "geometry"),
    ),
    geometry="geometry",
)

#: What a location given by name resolved to (added to the frames of the functions that take
#: locations): the name asked and the formatted address of geocode's top match.
_PLACE = (Col("place", "string"), Col("place_address", "string"))

ROUTE_DIRECTIONS = Schema(
    "route_directions",
    (
        Col("query_index", "Int64"),
        Col("optionalId", "string"),
        Col("origin_place", "string"),
        Col("destination_place", "string"),
        Col("route_index", "Int64"),
        Col("type", "string"),
        Col("resourceId", "string"),
        Col("distanceInMeters", "float"),
        Col("durationInSeconds", "Int64"),
        Col("durationTrafficInSeconds", "Int64"),
        Col("departureAt", "datetime"),
        Col("arrivalAt", "datetime"),
        Col("trafficCongestion", "category", categories=TRAFFIC_CONGESTION),
        Col("leg_count", "Int64"),
        Col("legs", "list"),
        Col("error.code", "string"),
        Col("error.message", "string"),
        Col("geometry", "geometry"),
    ),
    geometry="geometry",
)

SNAP_TO_ROADS = Schema(
    "snap_to_roads",
    (
        Col("inputIndex", "Int64"),
        Col("isInterpolated", "boolean"),
        Col("name", "string"),
        Col("speedLimitInKilometersPerHour", "float"),
        Col("geometry", "geometry"),
    ),
    geometry="geometry",
)

TRAFFIC_INCIDENTS = Schema(
    "traffic_incidents",
    (
        Col("id", "exactint"),
        Col("incidentType", "category", categories=INCIDENT_TYPES),
        Col("severity", "category", categories=INCIDENT_SEVERITIES, ordered=True),
        Col("severity_level", "Int64"),
        Col("title", "string"),
        Col("description", "string"),
        Col("delay", "timedelta"),
        Col("startTime", "datetime"),
        Col("endTime", "datetime"),
        Col("lastModifiedTime", "datetime"),
        Col("isRoadClosed", "boolean"),
        Col("isTrafficJam", "boolean"),
        Col("endPoint", "geometry"),
        Col("geometry", "geometry"),
    ),
    geometry="geometry",
)


_AQ_COMMON = (
    Col("dateTime", "datetime"),
    Col("globalIndex", "float"),
    Col("index", "float"),
    Col("category", "category", categories=AIR_QUALITY_CATEGORIES, ordered=True),
    Col("categoryColor", "string"),
    Col("dominantPollutant", "category", categories=DOMINANT_POLLUTANTS),
    Col("description", "string"),
)
_LOCATION_ERROR = (Col("error.code", "string"), Col("error.message", "string"))

AIR_QUALITY = Schema(
    "air_quality",
    (Col("location_index", "Int64"), *_PLACE, *_AQ_COMMON, Col("pollutants", "list"),
     *_LOCATION_ERROR, Col("geometry", "geometry")),
    geometry="geometry",
)

AIR_QUALITY_POLLUTANTS = Schema(
    "air_quality_pollutants",
    (
        Col("location_index", "Int64"),
        Col("dateTime", "datetime"),
        Col("type", "category", categories=POLLUTANT_TYPES),
        Col("name", "string"),
        Col("concentration.value", "float"),
        Col("concentration.unit", "string"),
        Col("concentration.unitType", "Int64"),
        Col("unit_type_name", "string"),
        Col("index", "float"),
        Col("globalIndex", "float"),
        Col("is_dominant", "boolean"),
        Col("geometry", "geometry"),
    ),
    geometry="geometry",
)

AIR_QUALITY_FORECAST = Schema(
    "air_quality_forecast",
    (Col("location_index", "Int64"), *_PLACE, Col("day", "Int64"), *_AQ_COMMON,
     *_LOCATION_ERROR, Col("geometry", "geometry")),
    geometry="geometry",
)

AIR_QUALITY_HOURLY_FORECAST = Schema(
    "air_quality_hourly_forecast",
    (Col("location_index", "Int64"), *_PLACE, Col("hour", "Int64"), *_AQ_COMMON,
     Col("pollutants", "list"), *_LOCATION_ERROR, Col("geometry", "geometry")),
    geometry="geometry",
)

SEVERE_WEATHER_ALERTS = Schema(
    "severe_weather_alerts",
    (
        Col("location_index", "Int64"),
        *_PLACE,
        Col("alert_rank", "Int64"),
        Col("countryCode", "string"),
        Col("alertId", "Int64"),
        Col("description.english", "string"),
        Col("description.localized", "string"),
        Col("category", "string"),
        Col("priority", "Int64"),
        Col("class", "string"),
        Col("level", "string"),
        Col("source", "string"),
        Col("sourceId", "Int64"),
        Col("disclaimer", "string"),
        Col("area_index", "Int64"),
        Col("name", "string"),
        Col("summary", "string"),
        Col("startTime", "datetime"),
        Col("start_offset", "timedelta"),
        Col("endTime", "datetime"),
        Col("end_offset", "timedelta"),
        Col("latestStatus.english", "category", categories=ALERT_STATUSES),
        Col("latestStatus.localized", "string"),
        Col("alertDetails", "string"),
        Col("alertDetailsLanguageCode", "string"),
        *_LOCATION_ERROR,
        Col("geometry", "geometry"),
    ),
    geometry="geometry",
)
