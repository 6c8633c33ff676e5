"""The reachable range (Route 2025-01-01 ``POST /route/range``) on real roads.

The origin (a GeoJSON Point feature) is snapped to the nearest road the travel mode may use
(within 1.5 km, else the service's 400: no routable road near the point); a search from there
(:func:`~toolkit.sandbox.maps.roads.routing.spread`, by time or distance as ``optimizeRoute``
says, live traffic from the sandbox's incidents for ``fastestWithTraffic``) finds the roads
within the budget (``timeBudgetInSec`` in free-flow seconds, or in traffic for
``fastestWithTraffic``; ``distanceBudgetInMeters`` in metres), and the answer is the snapped
``center`` and the ``boundary`` polygon around those roads (:mod:`.roads.reach`) with its
``bbox``. The request's rules are the service's: a Feature with a Point, exactly one budget
within its range (21,600 s; 500,000 m), known travel modes, optimizations and ``avoid`` values,
``isSimplifiedPolygon`` only true.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from toolkit._spec.maps import (
    RANGE_AVOID,
    RANGE_MAX_DISTANCE_M,
    RANGE_MAX_TIME_S,
    ROUTE_API_VERSIONS,
    ROUTE_OPTIMIZE,
    ROUTE_TRAVEL_MODES,
)
from toolkit.sandbox.http import Reply, Request, Router, SandboxHTTPError
from toolkit.sandbox.maps import note_arrival
from toolkit.sandbox.maps.roads.network import network
from toolkit.sandbox.maps.roads.reach import boundary, reached_roads
from toolkit.sandbox.maps.roads.routing import measures, spread
from toolkit.sandbox.maps.route import MAX_SNAP_M
from toolkit.sandbox.maps.traffic import traffic_factors

if TYPE_CHECKING:
    from toolkit.sandbox.server import Sandbox

__all__ = ["API_VERSIONS", "register"]

API_VERSIONS = ROUTE_API_VERSIONS
BUDGETS = {"timeBudgetInSec": RANGE_MAX_TIME_S, "distanceBudgetInMeters": RANGE_MAX_DISTANCE_M}


def _bad(message: str) -> SandboxHTTPError:
    return SandboxHTTPError(400, "BadRequest", message)


def _origin(body: Any) -> tuple[tuple[float, float], dict[str, Any]]:
    if not isinstance(body, dict) or body.get("type") != "Feature":
        raise _bad("The body must be a GeoJSON Feature with the origin as its Point geometry.")
    geom = body.get("geometry")
    coords = geom.get("coordinates") if isinstance(geom, dict) else None
    if not isinstance(geom, dict) or geom.get("type") != "Point" or \
            not isinstance(coords, list) or len(coords) < 2 or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in coords[:2]):
        raise _bad("The geometry must be a Point with [longitude, latitude] coordinates.")
    lon, lat = float(coords[0]), float(coords[1])
    if not (-180 <= lon <= 180 and -90 <= lat <= 90):
        raise _bad(f"The origin has coordinates out of range ([{lon}, {lat}]; the order is "
                   "longitude, latitude).")
    props = body.get("properties")
    if not isinstance(props, dict):
        raise _bad("The feature's properties must hold the budget.")
    return (lon, lat), props


def _budget(props: dict[str, Any]) -> tuple[str, float]:
    given = [k for k in BUDGETS if k in props]
    if len(given) != 1:
        raise _bad("Specify exactly one of timeBudgetInSec and distanceBudgetInMeters.")
    (key,) = given
    value = props[key]
    if isinstance(value, bool) or not isinstance(value, int | float) or \
            not 0 <= value <= BUDGETS[key]:
        raise _bad(f"{key} must be a number from 0 to {BUDGETS[key]:g}.")
    return key, float(value)


def _options(props: dict[str, Any]) -> tuple[str, str, frozenset[str], datetime | None]:
    mode = props.get("travelMode", ROUTE_TRAVEL_MODES[0])
    optimize = props.get("optimizeRoute", ROUTE_OPTIMIZE[0])
    for field, value, allowed in (("travelMode", mode, ROUTE_TRAVEL_MODES),
                                  ("optimizeRoute", optimize, ROUTE_OPTIMIZE)):
        if value not in allowed:
            raise _bad(f"{field} '{value}' is not one of {', '.join(allowed)}.")
    avoid = props.get("avoid", [])
    if not isinstance(avoid, list) or any(a not in RANGE_AVOID for a in avoid):
        raise _bad(f"avoid must list values of {', '.join(RANGE_AVOID)}.")
    if props.get("isSimplifiedPolygon", True) is not True:
        raise _bad("isSimplifiedPolygon only supports true.")
    depart = None
    if "departAt" in props:
        try:
            depart = datetime.fromisoformat(str(props["departAt"]).replace("Z", "+00:00"))
        except ValueError:
            raise _bad("'departAt' must be a date-time (RFC 3339).") from None
    return mode, optimize, frozenset(avoid), depart


def _range(request: Request) -> Reply:
    note_arrival(request, "route_range")
    origin, props = _origin(request.json())
    key, budget = _budget(props)
    mode, optimize, avoid, depart = _options(props)
    net = network()
    hit = net.nearest(origin, net.usable(mode, avoid), max_m=MAX_SNAP_M)
    if hit is None:
        raise _bad("No routable road could be found near one or more specified points.")
    start = hit[:2]
    center = net.position(*start)
    live = traffic_factors(request.sandbox, depart) if optimize == "fastestWithTraffic" \
        else None
    costs = net.arc_costs(mode, optimize, avoid, live,
                          key=tuple(sorted(live.items())) if live else None)
    m = measures(net, mode, live)
    per_arc = m.metres if key == "distanceBudgetInMeters" else m.traffic if live else m.seconds
    same = (key == "distanceBudgetInMeters") == (optimize == "shortest")
    found = spread(net, start, costs, m, limit=budget if same else float("inf"))
    per_node = found.metres if key == "distanceBudgetInMeters" else \
        found.traffic if live else found.seconds
    roads = reached_roads(net, found, start, budget, per_node, per_arc, costs, net.out)
    polygon = boundary(net, roads, center)
    west, south, east, north = polygon.bounds
    return Reply(200, {"type": "FeatureCollection", "features": [
        {"type": "Feature", "geometry": {"type": "Point",
                                         "coordinates": [round(center[0], 5),
                                                         round(center[1], 5)]},
         "properties": {"type": "center"}},
        {"type": "Feature", "bbox": [west, south, east, north],
         "geometry": {"type": "Polygon",
                      "coordinates": [[list(p) for p in polygon.exterior.coords]]},
         "properties": {"type": "boundary"}}]}, content_type="application/geo+json")


def register(router: Router, sandbox: Sandbox) -> None:
    """Add the reachable-range route."""
    router.add("POST", "/route/range", _range, family="maps", api_versions=API_VERSIONS,
               name="route_range")
