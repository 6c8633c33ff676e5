"""The maps family of the sandbox, over the real road network of Andorra.

Autocomplete, geocoding and reverse geocoding, route directions batch, route matrices,
reachable ranges, snap to roads, traffic incidents and weather (road network: OpenStreetMap
contributors, ODbL).

The road network and the places load on the first maps request (and are kept for the process),
so starting a sandbox stays fast. Every maps request's arrival time is noted per operation, so a
caller can check the rate it used against the service's documented limits with
:func:`peak_rate` (or read the times themselves: :func:`arrivals`).
"""

from __future__ import annotations

import time
from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolkit.sandbox.http import Request
    from toolkit.sandbox.server import Sandbox

__all__ = ["DOCUMENTED_QPS", "arrivals", "note_arrival", "peak_rate"]

#: Queries per second the real service allows one account (notes on the maps service).
DOCUMENTED_QPS = {"autocomplete": 500, "route_directions_batch": 10, "snap_to_roads": 50,
                  "traffic_incidents": 50, "reverse_geocode_batch": 10, "route_range": 50}


def note_arrival(request: Request, operation: str) -> None:
    """Record that a request of ``operation`` arrived now."""
    sandbox = request.sandbox
    with sandbox.state_lock:
        log = sandbox.state.setdefault("maps.arrivals", {})
        log.setdefault(operation, deque(maxlen=200_000)).append(time.monotonic())


def arrivals(sandbox: Sandbox, operation: str, since: float | None = None) -> list[float]:
    """List the monotonic times the requests of ``operation`` arrived at, in order.

    Optionally only those after the monotonic time ``since``.
    """
    with sandbox.state_lock:
        times = sorted(sandbox.state.get("maps.arrivals", {}).get(operation, ()))
    return times if since is None else [t for t in times if t >= since]


def peak_rate(sandbox: Sandbox, operation: str, window: float = 1.0,
              since: float | None = None) -> int:
    """Count the most requests of ``operation`` that arrived within any ``window`` seconds.

    Optionally only those after the monotonic time ``since``.
    """
    times = arrivals(sandbox, operation, since)
    best, lo = 0, 0
    for hi, t in enumerate(times):
        while t - times[lo] >= window:
            lo += 1
        best = max(best, hi - lo + 1)
    return best
