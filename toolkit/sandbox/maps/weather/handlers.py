"""The weather routes: current air quality, the daily and hourly forecasts and severe alerts.

Checked the way the service checks them and answered from :mod:`.world`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from toolkit._spec.maps import AIR_QUALITY_HOURLY_DURATIONS
from toolkit.sandbox.http import Reply, Request, Router, SandboxHTTPError
from toolkit.sandbox.maps import note_arrival
from toolkit.sandbox.maps.weather.world import (
    API_VERSIONS,
    WeatherWorld,
    alert_record,
    alerts_at,
    covered,
    daily_forecast,
    hourly_forecast,
    hourly_reading,
    language_of,
)

if TYPE_CHECKING:
    from toolkit.sandbox.server import Sandbox

__all__ = ["register"]

def _section(request: Request) -> WeatherWorld:
    return request.sandbox.world.section("weather")


def _point(request: Request) -> tuple[float, float]:
    if request.path_params.get("format", "json").lower() != "json":
        raise SandboxHTTPError(400, "BadRequest", "Only the json format is supported.",
                               target="format")
    query = request.param("query")
    if query is None or not query.strip():
        raise SandboxHTTPError(400, "BadRequest", "The 'query' parameter is required: "
                               "latitude,longitude.", target="query")
    try:
        lat, lon = (float(v) for v in query.split(","))
    except ValueError:
        raise SandboxHTTPError(400, "BadRequest", "The provided coordinates in query are "
                               "invalid or not in the expected format latitude,longitude.",
                               target="query") from None
    if not (math.isfinite(lat) and math.isfinite(lon)) or not (-90 <= lat <= 90) or \
            not (-180 <= lon <= 180):
        raise SandboxHTTPError(400, "BadRequest", "The provided coordinates in query are out "
                               "of range (latitude,longitude: -90 to 90, -180 to 180).",
                               target="query")
    if not covered(lon, lat):
        raise SandboxHTTPError(400, "BadRequest", "The requested location is outside the "
                               "coverage of the weather service: open ocean more than about "
                               "50 nautical miles from a coast.", target="query")
    return lon, lat


def _bool(request: Request, name: str) -> bool:
    value = request.param(name)
    if value is None or value == "":
        return True
    low = value.lower()
    if low not in ("true", "false"):
        raise SandboxHTTPError(400, "BadRequest", f"'{name}' must be true or false.",
                               target=name)
    return low == "true"


def _current(request: Request) -> Reply:
    note_arrival(request, "air_quality")
    lon, lat = _point(request)
    with_pollutants = _bool(request, "pollutants")
    rec = hourly_reading(_section(request), lon, lat, request.sandbox.now(),
                         language=request.param("language"), pollutants=with_pollutants)
    return Reply(200, {"results": [rec]})


def _forecast(request: Request) -> Reply:
    note_arrival(request, "air_quality_forecast")
    lon, lat = _point(request)
    text = request.param("duration")
    try:
        duration = int(text) if text not in (None, "") else 1
    except ValueError:
        duration = 0
    if not 1 <= duration <= 7:
        raise SandboxHTTPError(400, "BadRequest", "'duration' must be one of 1, 2, 3, 4, 5, 6 "
                               "or 7 days.", target="duration")
    recs = daily_forecast(_section(request), lon, lat, request.sandbox.now(), duration,
                          language=request.param("language"))
    return Reply(200, {"results": recs})


def _hourly(request: Request) -> Reply:
    note_arrival(request, "air_quality_hourly_forecast")
    lon, lat = _point(request)
    text = request.param("duration")
    try:
        duration = int(text) if text not in (None, "") else 1
    except ValueError:
        duration = 0
    if duration not in AIR_QUALITY_HOURLY_DURATIONS:
        raise SandboxHTTPError(400, "BadRequest", "'duration' must be one of "
                               f"{', '.join(map(str, AIR_QUALITY_HOURLY_DURATIONS))} hours.",
                               target="duration")
    with_pollutants = _bool(request, "pollutants")
    recs = hourly_forecast(_section(request), lon, lat, request.sandbox.now(), duration,
                           language=request.param("language"), pollutants=with_pollutants)
    return Reply(200, {"results": recs})


def _alerts(request: Request) -> Reply:
    note_arrival(request, "severe_weather_alerts")
    lon, lat = _point(request)
    details = _bool(request, "details")
    ww = _section(request)
    at = request.sandbox.now()
    tz = ww.timezone_at(lon, lat)
    lang = language_of(request.param("language"))
    found = alerts_at(ww, ww.parish_at(lon, lat), at)
    return Reply(200, {"results": [alert_record(a, listed, at, tz, lang, details)
                                   for a, listed in found]})


def register(router: Router, sandbox: Sandbox) -> None:
    """Add the four weather routes."""
    router.add("GET", "/weather/airQuality/current/{format}", _current, family="maps",
               api_versions=API_VERSIONS, name="air_quality")
    router.add("GET", "/weather/airQuality/forecasts/daily/{format}", _forecast, family="maps",
               api_versions=API_VERSIONS, name="air_quality_forecast")
    router.add("GET", "/weather/airQuality/forecasts/hourly/{format}", _hourly, family="maps",
               api_versions=API_VERSIONS, name="air_quality_hourly_forecast")
    router.add("GET", "/weather/severe/alerts/{format}", _alerts, family="maps",
               api_versions=API_VERSIONS, name="severe_weather_alerts")
