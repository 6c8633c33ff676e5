"""Route directions batch (spec 2 §2.2, §4.2) and snap to roads (§2.3, §4.3) on real roads.

Directions: each batch item is routed on the road graph (shortest or fastest, with or without the
sandbox's live traffic incidents, alternatives, ``avoid``, truck restrictions); an item that
breaks a rule or whose waypoints are off the network fails alone as ``{"error": {code,
message}}`` in its place. A batch that would take longer than the service's time limit (60 s)
answers 408.

Snap to roads: the trace is map-matched along the road sequence (not point by point), points that
cannot be snapped are left out, interpolated points follow the matched path. The service's limits
(2 to 5,000 points, consecutive points within 6 km, at most 100 km of road) are enforced; a test
can lift them with ``sandbox.state["maps.snap_limits"] = False``.
"""

from __future__ import annotations

import hashlib
import math
import time
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from toolkit._core.geo import path_length_m
from toolkit._spec.maps import (
    ROUTE_API_VERSIONS,
    ROUTE_AVOID,
    ROUTE_OPTIMIZE,
    ROUTE_OUTPUT_OPTIONS,
    ROUTE_TRAVEL_MODES,
    SNAP_MAX_GAP_M,
    SNAP_MAX_POINTS,
)
from toolkit.sandbox.http import Reply, Request, Router, SandboxHTTPError, SandboxView
from toolkit.sandbox.maps import note_arrival
from toolkit.sandbox.maps.roads.matching import match as match_trace
from toolkit.sandbox.maps.roads.network import network
from toolkit.sandbox.maps.roads.routing import RouteResult, routes
from toolkit.sandbox.maps.traffic import traffic_factors

if TYPE_CHECKING:
    from toolkit.sandbox.server import Sandbox

__all__ = ["API_VERSIONS", "AVOID", "OPTIMIZE", "OUTPUT_OPTIONS", "TRAVEL_MODES", "register"]

API_VERSIONS = ROUTE_API_VERSIONS
OPTIMIZE = ROUTE_OPTIMIZE
TRAVEL_MODES = ROUTE_TRAVEL_MODES
AVOID = ROUTE_AVOID
OUTPUT_OPTIONS = ROUTE_OUTPUT_OPTIONS
BATCH_TIME_LIMIT = 60.0
MAX_SNAP_M = 1500.0
SNAP_MAX_ROAD_M = 100_000.0


def echoed_id(item: Any) -> dict[str, str]:
    """Give the ``optionalId`` a batch answer echoes for ``item``.

    Its own when it is text (the answer's schema holds a string), else none.
    """
    given = item.get("optionalId") if isinstance(item, dict) else None
    return {"optionalId": given} if isinstance(given, str) else {}


class ItemError(Exception):
    """A batch item that fails alone."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_time(value: Any, field: str) -> datetime:
    if not isinstance(value, str):
        raise ItemError("BadRequest", f"'{field}' must be an ISO 8601 date-time.")
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ItemError("BadRequest", f"'{field}' must be an ISO 8601 date-time.") from None
    if t.tzinfo is None:
        from datetime import UTC

        t = t.replace(tzinfo=UTC)
    return t


def _waypoints(item: dict[str, Any]) -> list[tuple[float, float]]:
    if item.get("type") != "FeatureCollection" or not isinstance(item.get("features"), list):
        raise ItemError("BadRequest", "A batch item must be a FeatureCollection of waypoint "
                        "features.")
    features = item["features"]
    points: list[tuple[int, float, float]] = []
    for i, f in enumerate(features):
        geom = f.get("geometry") if isinstance(f, dict) else None
        coords = geom.get("coordinates") if isinstance(geom, dict) else None
        if not isinstance(geom, dict) or geom.get("type") != "Point" or \
                not isinstance(coords, list) or len(coords) < 2 or \
                not all(isinstance(c, int | float) and not isinstance(c, bool)
                        for c in coords[:2]):
            raise ItemError("BadRequest", f"Feature {i} must have a Point geometry with "
                            "[longitude, latitude] coordinates.")
        lon, lat = float(coords[0]), float(coords[1])
        if not (-180 <= lon <= 180 and -90 <= lat <= 90):
            raise ItemError("BadRequest", f"Feature {i} has coordinates out of range "
                            f"([{lon}, {lat}]; the order is longitude, latitude).")
        props = f.get("properties") or {}
        if props.get("pointType", "waypoint") not in ("waypoint", "viaWaypoint"):
            raise ItemError("BadRequest", f"Feature {i} has an unknown pointType "
                            f"'{props.get('pointType')}'.")
        order = props.get("pointIndex", i)
        if not isinstance(order, int) or isinstance(order, bool):
            raise ItemError("BadRequest", f"Feature {i} has a pointIndex that is not an "
                            "integer.")
        points.append((order, lon, lat))
    if not 2 <= len(points) <= 150:
        raise ItemError("BadRequest", f"A directions query needs 2 to 150 waypoints; got "
                        f"{len(points)}.")
    points.sort(key=lambda p: p[0])
    return [(lon, lat) for _, lon, lat in points]


def _route_feature(r: RouteResult, depart: datetime, with_path: bool, mode: str,
                   resource: str) -> dict[str, Any]:
    arrive = depart + timedelta(seconds=round(float(r.traffic_duration_s)))
    legs = []
    t = depart
    for leg in r.legs:
        end = t + timedelta(seconds=round(float(leg["durationTrafficInSeconds"])))
        legs.append({"distanceInMeters": round(float(leg["distanceInMeters"]), 1),
                     "durationInSeconds": round(float(leg["durationInSeconds"])),
                     "durationTrafficInSeconds": round(float(leg["durationTrafficInSeconds"])),
                     "departureAt": _iso(t), "arrivalAt": _iso(end)})
        t = end
    ratio = r.traffic_duration_s / max(r.duration_s, 1.0)
    props: dict[str, Any] = {
        "type": "RoutePath",
        "resourceId": resource,
        "distanceInMeters": round(float(r.distance_m), 1),
        "durationInSeconds": round(float(r.duration_s)),
        "durationTrafficInSeconds": round(float(r.traffic_duration_s)),
        "departureAt": _iso(depart),
        "arrivalAt": _iso(arrive),
        "legs": legs,
    }
    if mode == "driving":
        props["trafficCongestion"] = "Mild" if ratio < 1.1 else "Medium" if ratio < 1.3 \
            else "Heavy"
    coords = r.coordinates if with_path else []  # already rounded to 1e-6 degrees
    return {"type": "Feature", "geometry": {"type": "MultiLineString", "coordinates": coords},
            "properties": props}


def _route_item(item: Any, sandbox: SandboxView) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise ItemError("BadRequest", "A batch item must be a JSON object.")
    points = _waypoints(item)
    optimize = item.get("optimizeRoute", "fastestWithoutTraffic")
    if optimize not in OPTIMIZE:
        raise ItemError("BadRequest", f"optimizeRoute '{optimize}' is not one of "
                        f"{', '.join(OPTIMIZE)}.")
    mode = item.get("travelMode", "driving")
    if mode not in TRAVEL_MODES:
        raise ItemError("BadRequest", f"travelMode '{mode}' is not one of "
                        f"{', '.join(TRAVEL_MODES)}.")
    count = item.get("maxRouteCount", 1)
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 6:
        raise ItemError("BadRequest", f"maxRouteCount must be an integer from 1 to 6; got "
                        f"{count!r}.")
    avoid = item.get("avoid") or []
    if not isinstance(avoid, list) or any(a not in AVOID for a in avoid):
        raise ItemError("BadRequest", f"avoid must list values of {', '.join(AVOID)}.")
    options = item.get("routeOutputOptions") or ["itinerary"]
    if not isinstance(options, list) or any(o not in OUTPUT_OPTIONS for o in options):
        raise ItemError("BadRequest", f"routeOutputOptions must list values of "
                        f"{', '.join(OUTPUT_OPTIONS)}.")
    if "departAt" in item and "arriveAt" in item:
        raise ItemError("BadRequest", "departAt and arriveAt cannot be used together.")
    net = network()
    usable = net.usable(mode, frozenset(avoid))
    snapped = []
    for i, p in enumerate(points):
        hit = net.nearest(p, usable, max_m=MAX_SNAP_M)
        if hit is None:
            raise ItemError("WaypointOffRoadNetwork",
                            f"Waypoint {i} at longitude {p[0]:.6f}, latitude {p[1]:.6f} is more "
                            f"than {MAX_SNAP_M / 1000:g} km from any road the {mode} travel mode "
                            "can use.")
        snapped.append(hit[:2])
    traffic = traffic_factors(sandbox)
    found = routes(net, points, mode=mode, optimize=optimize, avoid=frozenset(avoid),
                       traffic=traffic, count=count, snapped=snapped)
    if not found:
        raise ItemError("NoRouteFound", "No route connects the waypoints for this travel mode "
                        "and avoid options.")
    if "arriveAt" in item:
        arrive = _parse_time(item["arriveAt"], "arriveAt")
        depart = arrive - timedelta(seconds=round(float(found[0].traffic_duration_s)))
    elif "departAt" in item:
        depart = _parse_time(item["departAt"], "departAt")
    else:
        depart = sandbox.now().replace(microsecond=0)
    with_path = any(o in ("routePath", "itinerary") for o in options)
    digest = hashlib.sha1(repr((points, optimize, mode, avoid)).encode()).hexdigest()[:16]
    feats = [_route_feature(r, depart, with_path, mode, f"sbx,{digest},r{i}")
             for i, r in enumerate(found)]
    out: dict[str, Any] = {"type": "FeatureCollection", "features": [feats[0]]}
    if len(feats) > 1:
        out["alternativeRoutes"] = [{"type": "FeatureCollection", "features": [f]}
                                    for f in feats[1:]]
    return out


def _directions_batch(request: Request) -> Reply:
    note_arrival(request, "route_directions_batch")
    started = time.monotonic()
    body = request.json()
    items = body.get("batchItems") if isinstance(body, dict) else None
    if not isinstance(items, list) or not 1 <= len(items) <= 100:
        n = len(items) if isinstance(items, list) else 0
        raise SandboxHTTPError(400, "BadRequest", f"batchItems must hold 1 to 100 directions "
                               f"queries; got {n}.")
    limit = float(request.sandbox.state.get("maps.batch_time_limit", BATCH_TIME_LIMIT))
    out, ok = [], 0
    for item in items:
        try:
            answer = _route_item(item, request.sandbox)
            ok += 1
        except ItemError as err:
            answer = {"error": {"code": err.code, "message": err.message}}
        answer = {**echoed_id(item), **answer}
        out.append(answer)
        if time.monotonic() - started > limit:
            raise SandboxHTTPError(408, "Timeout", f"The batch took longer than {limit:g} "
                                   "seconds; send fewer queries per batch.")
    return Reply(200, {"summary": {"successfulRequests": ok, "totalRequests": len(items)},
                       "batchItems": out})


def _snap(request: Request) -> Reply:
    note_arrival(request, "snap_to_roads")
    body = request.json()
    limits = request.sandbox.state.get("maps.snap_limits", True)
    if not isinstance(body, dict) or body.get("type") != "FeatureCollection" or \
            not isinstance(body.get("features"), list):
        raise SandboxHTTPError(400, "BadRequest", "The body must be a GeoJSON FeatureCollection "
                               "of Point features.")
    feats = body["features"]
    if len(feats) < 2 or (limits and len(feats) > SNAP_MAX_POINTS):
        raise SandboxHTTPError(400, "BadRequest", f"Snap to roads takes 2 to {SNAP_MAX_POINTS} "
                               f"points; got {len(feats)}.")
    coords = np.empty((len(feats), 2))
    for i, f in enumerate(feats):
        geom = f.get("geometry") if isinstance(f, dict) else None
        c = geom.get("coordinates") if isinstance(geom, dict) else None
        if not isinstance(geom, dict) or not isinstance(c, list) or len(c) < 2 \
                or geom.get("type") != "Point" or not all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in c[:2]):
            raise SandboxHTTPError(400, "BadRequest", f"Feature {i} must be a Point with "
                                   "[longitude, latitude] coordinates.")
        if not (-180 <= c[0] <= 180 and -90 <= c[1] <= 90):
            raise SandboxHTTPError(400, "BadRequest", f"Feature {i} has coordinates out of "
                                   "range (the order is longitude, latitude).")
        coords[i] = c[0], c[1]
    mode = body.get("travelMode", "driving")
    if mode not in TRAVEL_MODES:
        raise SandboxHTTPError(400, "BadRequest", f"travelMode '{mode}' is not one of "
                               f"{', '.join(TRAVEL_MODES)}.")
    for key in ("includeSpeedLimit", "interpolate"):
        if key in body and not isinstance(body[key], bool):
            raise SandboxHTTPError(400, "BadRequest", f"'{key}' must be a boolean.")
    gaps = path_length_m(coords)
    if limits and len(gaps) and gaps.max() > SNAP_MAX_GAP_M:
        i = int(np.argmax(gaps))
        raise SandboxHTTPError(400, "BadRequest", f"Points {i} and {i + 1} are "
                               f"{gaps[i] / 1000:.1f} km apart; consecutive points must be "
                               "within 6 km.")
    if limits and gaps.sum() > SNAP_MAX_ROAD_M:
        raise SandboxHTTPError(400, "BadRequest", "The points span more than 100 km of road; "
                               "send shorter traces.")
    net = network()
    match = match_trace(net, coords, mode=mode, interpolate=bool(body.get("interpolate")),
                      speed_limit=bool(body.get("includeSpeedLimit")))
    if limits and match.road_distance_m > SNAP_MAX_ROAD_M:
        raise SandboxHTTPError(400, "BadRequest", f"The matched road distance is "
                               f"{match.road_distance_m / 1000:.1f} km, more than 100 km; send "
                               "shorter traces.")
    features = []
    for p in match.points:
        props: dict[str, Any] = {"name": p["name"]} if p["name"] else {}
        if p["inputIndex"] is not None:
            props["inputIndex"] = p["inputIndex"]
        props["isInterpolated"] = p["isInterpolated"]
        if "speedLimitInKilometersPerHour" in p and not math.isnan(
                p["speedLimitInKilometersPerHour"]):
            props["speedLimitInKilometersPerHour"] = p["speedLimitInKilometersPerHour"]
        features.append({"type": "Feature",
                         "geometry": {"type": "Point",
                                      "coordinates": [round(p["lon"], 7), round(p["lat"], 7)]},
                         "properties": props})
    return Reply(200, {"type": "FeatureCollection", "features": features},
                 content_type="application/geo+json")


def register(router: Router, sandbox: Sandbox) -> None:
    """Add the directions batch and snap to roads routes."""
    router.add("POST", "/route/directions:batch", _directions_batch, family="maps",
               api_versions=API_VERSIONS, name="route_directions_batch")
    router.add("POST", "/route/snapToRoads", _snap, family="maps", api_versions=API_VERSIONS,
               name="snap_to_roads")
