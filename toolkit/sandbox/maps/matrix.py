"""The route matrix (Route 2025-01-01) on real roads, at once and asynchronously.

``POST /route/matrix`` answers the matrix; ``POST /route/matrix:async`` answers 202 with
``Operation-Location`` (``/route/operations/{id}``), whose status goes ``NotStarted``,
``Running``, then ``Completed`` (after the sandbox's ``lro_polls`` polls) with
``result.resultUrl`` (``/route/operations/{id}/result``); with the ``lro_fail`` fault it ends
``Failed`` with its error. A result is kept 24 hours of the sandbox's clock, then both URLs answer
404, as the service's do.

The service's tables of limits decide what each path takes (a request no row takes is a 400):
the synchronous path 100 cells with any options, 200 within a 400 km box, 2,500 (1,000 a side)
with the defaults only; the asynchronous one 2,500 within a 400 km box (``shortest`` too) and
50,000 (10,000 a side) with the defaults only. Under a row with a box, the cells of points
outside the 400 km box that starts at the points' south-west corner are ``OUT_OF_REGION``, as
are the cells of a point more than 1.5 km from any road the travel mode can use. A cell with no
route (a truck barred from every way) is ``NO_ROUTE_FOUND``: the service documents no code for
it, so this one is the sandbox's.

Each cell is the cheapest path on the road graph (by time for ``fastest``, by distance for
``shortest``; walking at 5 km/h on any road but the limited-access ones, either way), with live
traffic slowing the roads of the sandbox's incidents when ``traffic=live``; one search from
each origin (or, when there are fewer destinations, to each destination) answers a whole row.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from toolkit._core.geo import haversine_m
from toolkit._spec.maps import (
    MATRIX_ASYNC_LIMITS,
    MATRIX_AVOID,
    MATRIX_OPTIMIZE,
    MATRIX_REGION_KM,
    MATRIX_SYNC_LIMITS,
    MATRIX_TIME_WORDS,
    MATRIX_TRAFFIC,
    MATRIX_TRAVEL_MODES,
    ROUTE_API_VERSIONS,
    ROUTE_OPERATION_STATUSES,
)
from toolkit.sandbox.http import Reply, Request, Router, SandboxHTTPError, SandboxView
from toolkit.sandbox.maps import note_arrival
from toolkit.sandbox.maps.roads.network import network
from toolkit.sandbox.maps.roads.routing import Position, measures, reach, spread
from toolkit.sandbox.maps.route import MAX_SNAP_M
from toolkit.sandbox.maps.traffic import traffic_factors

if TYPE_CHECKING:
    from toolkit.sandbox.server import Sandbox

__all__ = ["API_VERSIONS", "register"]

API_VERSIONS = ROUTE_API_VERSIONS
#: Hours an asynchronous result is kept.
KEPT_HOURS = 24
_STATE = "maps.route_operations"
_UUID = re.compile(r"^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$")


def _bad(message: str) -> SandboxHTTPError:
    return SandboxHTTPError(400, "BadRequest", message)


# ------------------------------------------------------------------------------- the request
def _points(features: Any, kind: str) -> list[tuple[float, float]]:
    found = [f for f in features if isinstance(f, dict) and
             isinstance(f.get("properties"), dict) and f["properties"].get("pointType") == kind]
    if len(found) != 1:
        raise _bad(f"The features must hold one MultiPoint feature of {kind} (pointType "
                   f"'{kind}').")
    geom = found[0].get("geometry")
    coords = geom.get("coordinates") if isinstance(geom, dict) else None
    if not isinstance(geom, dict) or geom.get("type") != "MultiPoint" or \
            not isinstance(coords, list) or not coords:
        raise _bad(f"The {kind} must be a MultiPoint geometry with at least one point.")
    out = []
    for k, c in enumerate(coords):
        if not isinstance(c, list) or len(c) < 2 or not all(
                isinstance(v, int | float) and not isinstance(v, bool) for v in c[:2]):
            raise _bad(f"Point {k} of the {kind} must be [longitude, latitude].")
        lon, lat = float(c[0]), float(c[1])
        if not (-180 <= lon <= 180 and -90 <= lat <= 90):
            raise _bad(f"Point {k} of the {kind} has coordinates out of range ([{lon}, {lat}]; "
                       "the order is longitude, latitude).")
        out.append((lon, lat))
    return out


def _time(value: Any, field: str, words: tuple[str, ...]) -> datetime | str | None:
    if value is None:
        return None
    if isinstance(value, str) and value.lower() in words:
        return value.lower()
    try:
        t = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise _bad(f"'{field}' must be a date-time (RFC 3339) or one of "
                   f"{', '.join(words)}.") from None
    if t.tzinfo is None:
        from datetime import UTC

        t = t.replace(tzinfo=UTC)
    return t


def _options(body: dict[str, Any], asynchronous: bool) -> dict[str, Any]:
    """Check the matrix's options; give them with the defaults filled in, and ``plain``."""
    allowed_optimize = MATRIX_OPTIMIZE if asynchronous else MATRIX_OPTIMIZE[:1]
    opts = {"travelMode": body.get("travelMode", MATRIX_TRAVEL_MODES[0]),
            "optimizeRoute": body.get("optimizeRoute", MATRIX_OPTIMIZE[0]),
            "traffic": body.get("traffic", MATRIX_TRAFFIC[0])}
    for field, allowed in (("travelMode", MATRIX_TRAVEL_MODES),
                           ("optimizeRoute", allowed_optimize), ("traffic", MATRIX_TRAFFIC)):
        if opts[field] not in allowed:
            raise _bad(f"{field} '{opts[field]}' is not one of {', '.join(allowed)}.")
    avoid = body.get("avoid", [])
    if not isinstance(avoid, list) or any(a not in MATRIX_AVOID for a in avoid):
        raise _bad(f"avoid must list values of {', '.join(MATRIX_AVOID)}.")
    if avoid and opts["travelMode"] not in MATRIX_TRAVEL_MODES[:2]:
        raise _bad("avoid is only supported for the driving and truck travel modes.")
    if "departAt" in body and "arriveAt" in body:
        raise _bad("The departAt parameter cannot be used in conjunction with arriveAt.")
    depart = _time(body.get("departAt"), "departAt", MATRIX_TIME_WORDS)
    arrive = _time(body.get("arriveAt"), "arriveAt", MATRIX_TIME_WORDS[:1])
    timeless = depart in (None, "any") and arrive in (None, "any")
    if opts["traffic"] == "live" and timeless:
        raise _bad("traffic=live may not be used in conjunction with arriveAt=any and "
                   "departAt=any.")
    plain = timeless and not avoid and "vehicleSpec" not in body and \
        opts["traffic"] == MATRIX_TRAFFIC[0] and opts["optimizeRoute"] == MATRIX_OPTIMIZE[0] \
        and opts["travelMode"] in MATRIX_TRAVEL_MODES[:2]
    return {**opts, "avoid": frozenset(avoid), "depart": depart, "arrive": arrive,
            "plain": plain}


def _row(origins: int, destinations: int, plain: bool, asynchronous: bool) -> str:
    """Find the row of limits the request falls under: ``options``, ``region`` or ``defaults``.

    The rows of the default options come first: a plain request has no box.
    """
    rows = MATRIX_ASYNC_LIMITS if asynchronous else MATRIX_SYNC_LIMITS
    cells = origins * destinations
    order = sorted(rows, key=lambda r: r[3] != "defaults")
    for most, most_o, most_d, condition in order:
        if cells <= most and origins <= most_o and destinations <= most_d and \
                (condition != "defaults" or plain):
            return condition
    limits = "; ".join(f"{most:,} cells ({most_o:,} origins, {most_d:,} destinations)"
                       + (" with the default options only" if condition == "defaults" else "")
                       for most, most_o, most_d, condition in rows)
    raise _bad(f"The matrix of {origins} origins and {destinations} destinations ({cells:,} "
               f"cells) does not meet the limits of this API: {limits}.")


def _in_box(points: list[tuple[float, float]]) -> list[bool]:
    """Which points lie in the 400 km box the first one fixes (its south-west corner)."""
    lon0 = min(p[0] for p in points)
    lat0 = min(p[1] for p in points)
    side = MATRIX_REGION_KM * 1000.0
    return [haversine_m(lon0, p[1], p[0], p[1]) <= side and
            haversine_m(p[0], lat0, p[0], p[1]) <= side for p in points]


# ------------------------------------------------------------------------------- the matrix
def _cells(sandbox: SandboxView, origins: list[tuple[float, float]],
           destinations: list[tuple[float, float]], opts: dict[str, Any], region: bool
           ) -> list[dict[str, Any]]:
    """Route every cell on the road graph."""
    net = network()
    mode, avoid = opts["travelMode"], opts["avoid"]
    usable = net.usable(mode, avoid)
    boxed = _in_box(origins + destinations) if region else [True] * (len(origins) +
                                                                      len(destinations))

    def snap(points: list[tuple[float, float]], offset: int) -> list[Position | None]:
        out: list[Position | None] = []
        for k, p in enumerate(points):
            hit = net.nearest(p, usable, max_m=MAX_SNAP_M) if boxed[offset + k] else None
            out.append(hit[:2] if hit is not None else None)
        return out

    o_at, d_at = snap(origins, 0), snap(destinations, len(origins))
    when = opts["depart"] if isinstance(opts["depart"], datetime) else \
        opts["arrive"] if isinstance(opts["arrive"], datetime) else sandbox.now()
    live = traffic_factors(sandbox, when) if opts["traffic"] == "live" else None
    objective = "shortest" if opts["optimizeRoute"] == "shortest" else \
        "fastestWithTraffic" if live else "fastestWithoutTraffic"
    costs = net.arc_costs(mode, objective, avoid, live,
                          key=tuple(sorted(live.items())) if live else None)
    m = measures(net, mode, live)
    walking = mode == "walking"
    reverse = len({d for d in d_at if d}) < len({o for o in o_at if o})
    searches: dict[Position, Any] = {}

    def path(a: Position, b: Position) -> tuple[float, float, float, float] | None:
        start, other = (b, a) if reverse else (a, b)
        if start not in searches:
            searches[start] = spread(net, start, costs, m, both_ways=walking, reverse=reverse)
        return reach(net, searches[start], other, costs, m)

    out = []
    for i, a in enumerate(o_at):
        for j, b in enumerate(d_at):
            cell: dict[str, Any] = {"originIndex": i, "destinationIndex": j}
            if a is None or b is None:
                out.append({**cell, "statusCode": 400, "error": {
                    "code": "OUT_OF_REGION", "message": "Input coordinates out of region"}})
                continue
            found = path(a, b)
            if found is None:
                out.append({**cell, "statusCode": 400, "error": {
                    "code": "NO_ROUTE_FOUND", "message": "No route connects the origin to the "
                    "destination for this travel mode and these options."}})
                continue
            out.append({**cell, "statusCode": 200, **_timed(found, opts, sandbox, live)})
    return out


def _timed(found: tuple[float, float, float, float], opts: dict[str, Any],
           sandbox: SandboxView, live: dict[int, float] | None) -> dict[str, Any]:
    _, metres, seconds, jammed = found
    travel = jammed if live is not None else seconds
    cell: dict[str, Any] = {"distanceInMeters": round(metres, 1),
                            "durationInSeconds": round(seconds),
                            "durationTrafficInSeconds": round(travel)}
    depart, arrive = opts["depart"], opts["arrive"]
    if depart == "now":
        depart = sandbox.now().replace(microsecond=0)
    if isinstance(depart, datetime):
        arrive = depart + timedelta(seconds=round(travel))
    elif isinstance(arrive, datetime):
        depart = arrive - timedelta(seconds=round(travel))
    if isinstance(depart, datetime) and isinstance(arrive, datetime):
        cell["departureAt"] = depart.isoformat(timespec="seconds")
        cell["arrivalAt"] = arrive.isoformat(timespec="seconds")
    return cell


def _matrix(request: Request, asynchronous: bool) -> dict[str, Any]:
    """Read a matrix request and answer it: the Feature the service sends."""
    body = request.json()
    if not isinstance(body, dict) or body.get("type") != "FeatureCollection" or \
            not isinstance(body.get("features"), list):
        raise _bad("The body must be a GeoJSON FeatureCollection of two MultiPoint features: "
                   "the origins and the destinations.")
    origins = _points(body["features"], "origins")
    destinations = _points(body["features"], "destinations")
    opts = _options(body, asynchronous)
    row = _row(len(origins), len(destinations), opts["plain"], asynchronous)
    cells = _cells(request.sandbox, origins, destinations, opts, region=row == "region")
    ok = sum(c["statusCode"] == 200 for c in cells)
    return {"type": "Feature", "geometry": None,
            "properties": {"summary": {"successfulCount": ok, "totalCount": len(cells)},
                           "matrix": cells}}


def _sync(request: Request) -> Reply:
    note_arrival(request, "route_matrix")
    return Reply(200, _matrix(request, asynchronous=False), content_type="application/geo+json")


# ------------------------------------------------------------------------------- asynchronously
def _stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _async(request: Request) -> Reply:
    note_arrival(request, "route_matrix_async")
    sandbox = request.sandbox
    answer = _matrix(request, asynchronous=True)
    op_id = sandbox.new_id()
    now = sandbox.now()
    with sandbox.state_lock:
        sandbox.state.setdefault(_STATE, {})[op_id.lower()] = {
            "id": op_id, "polls": 0, "total": max(1, sandbox.lro_polls),
            "status": ROUTE_OPERATION_STATUSES[0], "created": now, "updated": now,
            "answer": answer, "fail": request.fail_operation,
            "version": request.param("api-version") or API_VERSIONS[0]}
    return Reply(202, None, {
        "Operation-Location": f"{request.base_url}/route/operations/{op_id}?api-version="
                              f"{request.param('api-version') or API_VERSIONS[0]}",
        "Retry-After": str(sandbox.lro_retry_after)})


def _operation(request: Request) -> dict[str, Any]:
    op_id = request.path_params["id"]
    sandbox = request.sandbox
    op = sandbox.state.get(_STATE, {}).get(op_id.lower()) if _UUID.match(op_id) else None
    if op is None or sandbox.now() - op["created"] > timedelta(hours=KEPT_HOURS):
        raise SandboxHTTPError(404, "NotFound",
                               "Not Found: the requested resource could not be found.")
    return op


def _status(request: Request) -> Reply:
    sandbox = request.sandbox
    running, done, failed = ROUTE_OPERATION_STATUSES[1:]
    with sandbox.state_lock:
        op = _operation(request)
        if op["status"] not in (done, failed):
            op["polls"] += 1
            op["updated"] = sandbox.now()
            if op["polls"] > op["total"]:
                op["status"] = failed if op["fail"] else done
            else:
                op["status"] = ROUTE_OPERATION_STATUSES[0] if op["polls"] == 1 else running
        body: dict[str, Any] = {"id": op["id"], "kind": "RouteMatrix", "status": op["status"],
                                "createdAt": _stamp(op["created"]),
                                "lastActionAt": _stamp(op["updated"])}
        if op["status"] == done:
            body["result"] = {"resultUrl": f"{request.base_url}/route/operations/{op['id']}/"
                                           f"result?api-version={op['version']}"}
        elif op["status"] == failed:
            body["error"] = {"code": "InternalServerError",
                             "message": "The matrix could not be computed; submit it again."}
    headers = {} if op["status"] in (done, failed) else \
        {"Retry-After": str(sandbox.lro_retry_after)}
    return Reply(200, body, headers)


def _result(request: Request) -> Reply:
    with request.sandbox.state_lock:
        op = _operation(request)
        if op["status"] != ROUTE_OPERATION_STATUSES[2]:
            raise SandboxHTTPError(404, "NotFound", "Not Found: the operation has no result "
                                   f"(its status is {op['status']}).")
        return Reply(200, {"kind": "RouteMatrix", **op["answer"]})


def register(router: Router, sandbox: Sandbox) -> None:
    """Add the matrix routes and the route operations' status and result."""
    router.add("POST", "/route/matrix", _sync, family="maps", api_versions=API_VERSIONS,
               name="route_matrix")
    router.add("POST", "/route/matrix:async", _async, family="maps", api_versions=API_VERSIONS,
               name="route_matrix_async")
    router.add("GET", "/route/operations/{id}", _status, family="maps", api_versions=None,
               name="route_operation_status")
    router.add("GET", "/route/operations/{id}/result", _result, family="maps",
               api_versions=None, name="route_operation_result")
