"""Paths on the road network: the cheapest route through waypoints, and alternatives.

The cheapest route is found with A* on the directed arcs, by time or distance, with the mode's
restrictions, ``avoid`` and traffic.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from toolkit.sandbox.maps.roads.network import RoadNetwork

__all__ = ["RouteResult", "route", "routes"]


@dataclass
class RouteResult:
    """One path between waypoints."""

    arcs: list[int]
    legs: list[dict[str, float]]
    distance_m: float
    duration_s: float
    traffic_duration_s: float
    coordinates: list[list[list[float]]]  # one list of [lon, lat] per leg


def _dijkstra(net: RoadNetwork, sources: dict[int, float], costs: list[float],
              targets: dict[int, float], goal: tuple[float, float] | None = None,
              rate: float = 0.0) -> tuple[float, int | None, dict[int, int]]:
    """Find the cheapest way from the sources (node -> initial cost) to a target (node -> end cost).

    Returns the total, the target node reached and the predecessor arcs.

    With ``goal`` (metric x, y) and ``rate`` (the least cost of a metre anywhere), the
    search is A*: the straight distance to the goal times ``rate`` never overestimates.
    """
    dist: dict[int, float] = dict(sources)
    pred: dict[int, int] = {}
    xs, ys = net.node_x, net.node_y
    if goal is not None and rate > 0:
        gx, gy = goal

        def h(n: int) -> float:
            return math.hypot(xs[n] - gx, ys[n] - gy) * rate
    else:
        def h(n: int) -> float:
            return 0.0
    heap = [(c + h(n), c, n) for n, c in sources.items()]
    heapq.heapify(heap)
    best, best_node = math.inf, None
    out, head = net.out, net.head
    done: set[int] = set()
    inf = math.inf
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        f, c, n = pop(heap)
        if f >= best:
            break
        if n in done or c > dist.get(n, inf):
            continue
        done.add(n)
        if n in targets and c + targets[n] < best:
            best, best_node = c + targets[n], n
        for arc in out[n]:
            nc = c + costs[arc]
            if nc == inf:
                continue
            m = head[arc]
            if nc < dist.get(m, inf):
                dist[m] = nc
                pred[m] = arc
                push(heap, (nc + h(m), nc, m))
    return best, best_node, pred

def _leg(net: RoadNetwork, a: tuple[int, float], b: tuple[int, float], costs: list[float],
         rate: float = 0.0) -> tuple[float, list[tuple[int, float, float]]] | None:
    """Find the cheapest path between two edge positions.

    The path comes as pieces ``(arc, from, to)`` with offsets along each arc.
    """
    ea, sa = a
    eb, sb = b
    la, lb = net.edge_len[ea], net.edge_len[eb]
    fa, ra, fb, rb = 2 * ea, 2 * ea + 1, 2 * eb, 2 * eb + 1
    direct: tuple[float, list[tuple[int, float, float]]] | None = None
    if ea == eb:
        if sb >= sa and costs[fa] < math.inf:
            direct = (costs[fa] * (sb - sa) / la, [(fa, sa, sb)])
        elif sb < sa and costs[ra] < math.inf:
            direct = (costs[ra] * (sa - sb) / la, [(ra, la - sa, la - sb)])
    sources: dict[int, float] = {}
    first: dict[int, tuple[int, float, float]] = {}
    if costs[fa] < math.inf:
        n = int(net.edge_v[ea])
        sources[n] = costs[fa] * (la - sa) / la
        first[n] = (fa, sa, la)
    if costs[ra] < math.inf:
        n = int(net.edge_u[ea])
        c = costs[ra] * sa / la
        if c < sources.get(n, math.inf):
            sources[n] = c
            first[n] = (ra, la - sa, la)
    targets: dict[int, float] = {}
    last: dict[int, tuple[int, float, float]] = {}
    if costs[fb] < math.inf:
        n = int(net.edge_u[eb])
        targets[n] = costs[fb] * sb / lb
        last[n] = (fb, 0.0, sb)
    if costs[rb] < math.inf:
        n = int(net.edge_v[eb])
        c = costs[rb] * (lb - sb) / lb
        if c < targets.get(n, math.inf):
            targets[n] = c
            last[n] = (rb, 0.0, lb - sb)
    if not sources or not targets:
        return direct
    goal = None
    if rate > 0:
        gx, gy = net.proj.forward(np.asarray([net.position(eb, sb)]))[0]
        goal = (float(gx), float(gy))
    total, end, pred = _dijkstra(net, sources, costs, targets, goal, rate)
    if end is None or (direct is not None and direct[0] <= total):
        return direct
    arcs: list[int] = []
    node = end
    while node in pred:
        arc = pred[node]
        arcs.append(arc)
        node = net.arc_tail(arc)
    arcs.reverse()
    pieces = [first[node]] + [(arc, 0.0, float(net.arc_len[arc])) for arc in arcs] + \
        [last[end]]
    return total, pieces

def route(net: RoadNetwork, waypoints: list[tuple[float, float]], *, mode: str = "driving",
          optimize: str = "fastestWithoutTraffic", avoid: frozenset[str] = frozenset(),
          traffic: dict[int, float] | None = None, penalty: dict[int, float] | None = None,
          snapped: list[tuple[int, float]] | None = None) -> RouteResult | None:
    """Find the best route through the waypoints, or ``None`` when there is none."""
    traffic_for_cost = traffic if optimize == "fastestWithTraffic" else None
    base_key = tuple(sorted(traffic_for_cost.items())) if traffic_for_cost else None
    costs = net.arc_costs(mode, optimize, avoid, traffic_for_cost, key=base_key)
    if penalty:
        costs = list(costs)
        for arc, factor in penalty.items():
            costs[arc] *= factor
    if snapped is None:
        raise ValueError("snap the waypoints first")
    rate = 1.0 if optimize == "shortest" else net.min_seconds_per_m
    legs_pieces = []
    for a, b in pairwise(snapped):
        leg = _leg(net, a, b, costs, rate)
        if leg is None or leg[0] == math.inf:
            return None
        legs_pieces.append(leg[1])
    return _summarise(net, legs_pieces, mode, traffic)

def _summarise(net: RoadNetwork, legs_pieces: list[list[tuple[int, float, float]]], mode: str,
               traffic: dict[int, float] | None) -> RouteResult:
    legs, coords, arcs = [], [], []
    total_d = total_t = total_tt = 0.0
    for pieces in legs_pieces:
        d = t = tt = 0.0
        line: list[list[float]] = []
        for arc, s0, s1 in pieces:
            length = max(s1 - s0, 0.0)
            secs = net.arc_seconds(arc, mode) * length / net.arc_len[arc]
            factor = (traffic or {}).get(arc >> 1, 1.0)
            d += length
            t += secs
            tt += secs / max(factor, 0.1)
            if length > 0:
                full = s0 <= 0.0 and s1 >= net.arc_len[arc] - 1e-9
                part = net.arc_coords(arc) if full else \
                    [[round(x, 6), round(y, 6)] for x, y in net.arc_piece(arc, s0, s1)]
                line.extend(part if not line else part[1:])
                arcs.append(arc)
        if len(line) < 2:
            line = line * 2 if line else []
        legs.append({"distanceInMeters": d, "durationInSeconds": t,
                     "durationTrafficInSeconds": tt})
        coords.append(line)
        total_d, total_t, total_tt = total_d + d, total_t + t, total_tt + tt
    return RouteResult(arcs, legs, total_d, total_t, total_tt, coords)

def routes(net: RoadNetwork, waypoints: list[tuple[float, float]], *, mode: str = "driving",
           optimize: str = "fastestWithoutTraffic", avoid: frozenset[str] = frozenset(),
           traffic: dict[int, float] | None = None, count: int = 1,
           snapped: list[tuple[int, float]] | None = None) -> list[RouteResult]:
    """Find the main route and up to ``count - 1`` alternatives that differ enough from it."""
    main = route(net, waypoints, mode=mode, optimize=optimize, avoid=avoid, traffic=traffic,
                      snapped=snapped)
    if main is None:
        return []
    found = [main]
    penalty: dict[int, float] = {}
    tries = 0
    while len(found) < count and tries < 2 * count + 2:
        tries += 1
        for r in found:
            for arc in r.arcs:
                for a in (arc, arc ^ 1):
                    penalty[a] = penalty.get(a, 1.0) * 1.6
        alt = route(net, waypoints, mode=mode, optimize=optimize, avoid=avoid,
                         traffic=traffic, penalty=penalty, snapped=snapped)
        if alt is None:
            break
        if alt.distance_m > 0:
            main_edges = {a >> 1 for a in main.arcs}
            shared = sum(net.edge_len[a >> 1] for a in set(alt.arcs) if a >> 1 in main_edges)
            new_enough = shared / max(alt.distance_m, 1.0) < 0.8
            distinct = all(set(alt.arcs) != set(r.arcs) for r in found)
            reasonable = alt.duration_s <= 1.8 * main.duration_s + 120
            if new_enough and distinct and reasonable:
                found.append(alt)
    return found

# ------------------------------------------------------------------ map matching
