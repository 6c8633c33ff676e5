"""Paths on the road network: the cheapest route, alternatives, costs from one place to all.

The cheapest route is found with A* on the directed arcs, by time or distance, with the mode's
restrictions, ``avoid`` and traffic. :func:`spread` is Dijkstra's search from one position on a
road to every node (or, reversed, from every node to it), keeping the metres and seconds of each
path beside the cost it minimizes: one search answers a row of a route matrix (:func:`reach`
gives each cell) or the reachable range within a budget.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

import numpy as np

from toolkit.sandbox.maps.roads.network import RoadNetwork

__all__ = ["Measures", "Position", "RouteResult", "Spread", "edge_ends", "measures", "reach",
           "route", "routes", "spread"]


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


# ------------------------------------------------------------------ one to many
#: A position on the network: an edge and the metres from its first node.
Position = tuple[int, float]


@dataclass(frozen=True)
class Measures:
    """What every arc measures: metres, seconds at free flow, seconds in traffic."""

    metres: list[float]
    seconds: list[float]
    traffic: list[float]


def measures(net: RoadNetwork, mode: str, traffic: dict[int, float] | None = None) -> Measures:
    """Measure every arc for a travel mode (traffic factors by edge slow the third measure)."""
    arcs = range(2 * net.n_edges)
    seconds = [float(net.arc_seconds(a, mode)) for a in arcs]
    factors = traffic or {}
    return Measures(net.arc_len.tolist(), seconds,
                    [t / max(factors.get(a >> 1, 1.0), 0.1) for a, t in zip(arcs, seconds,
                                                                            strict=True)])


@lru_cache(maxsize=4)
def _adjacency(net: RoadNetwork, both_ways: bool, reverse: bool) -> list[list[int]]:
    """List the arcs leaving each node (entering it, ``reverse``); every arc when ``both_ways``."""
    n = len(net.lonlat)
    if not both_ways and not reverse:
        return net.out
    adjacency: list[list[int]] = [[] for _ in range(n)]
    for arc in range(2 * net.n_edges):
        if both_ways or net.arc_ok[arc]:
            adjacency[net.head[arc] if reverse else net.tail[arc]].append(arc)
    return adjacency


@dataclass
class Spread:
    """The paths of a one-to-many search, per node.

    ``cost`` is what the search minimized (inf where no path is); ``metres``, ``seconds`` and
    ``traffic`` measure the path found. ``reverse``: the paths lead from each node to the start.
    """

    start: Position
    cost: list[float]
    metres: list[float]
    seconds: list[float]
    traffic: list[float]
    reverse: bool


def _along(arc: int, part: float, costs: list[float], m: Measures
           ) -> tuple[float, float, float, float]:
    """Cost and measures of a part (0 to 1) of an arc."""
    return (costs[arc] * part, m.metres[arc] * part, m.seconds[arc] * part,
            m.traffic[arc] * part)


def edge_ends(net: RoadNetwork, at: Position, leaving: bool
          ) -> list[tuple[int, int, float]]:
    """List the two ways between a position and its edge's nodes: ``(node, arc, part of arc)``.

    Leaving the position (``leaving``) or arriving at it.
    """
    edge, offset = at
    length = float(net.edge_len[edge])
    ahead = min(max(float(offset) / length, 0.0), 1.0)
    u, v = int(net.edge_u[edge]), int(net.edge_v[edge])
    if leaving:  # position -> v along u->v, position -> u along v->u
        return [(v, 2 * edge, 1.0 - ahead), (u, 2 * edge + 1, ahead)]
    return [(u, 2 * edge, ahead), (v, 2 * edge + 1, 1.0 - ahead)]


def spread(net: RoadNetwork, start: Position, costs: list[float], m: Measures, *,
           both_ways: bool = False, reverse: bool = False, limit: float = math.inf) -> Spread:
    """Search from ``start`` to every node (to ``start`` from every node, ``reverse``).

    Parameters
    ----------
    costs : list of float
        Each arc's cost (inf where barred), as :meth:`RoadNetwork.arc_costs` gives them.
    m : Measures
        What each arc measures.
    both_ways : bool
        Walk every arc either way (one-way streets too).
    limit : float
        Stop past this cost (nodes beyond it keep an infinite cost).
    """
    n = len(net.lonlat)
    inf = math.inf
    cost, metres, seconds, jam = [inf] * n, [0.0] * n, [0.0] * n, [0.0] * n
    heap: list[tuple[float, int]] = []
    for node, arc, part in edge_ends(net, start, leaving=not reverse):
        if costs[arc] == inf:
            continue
        c, d, t, tt = _along(arc, part, costs, m)
        if c < cost[node]:
            cost[node], metres[node], seconds[node], jam[node] = c, d, t, tt
            heap.append((c, node))
    heapq.heapify(heap)
    adjacency = _adjacency(net, both_ways, reverse)
    ends = net.tail if reverse else net.head
    done = [False] * n
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        c, node = pop(heap)
        if done[node] or c > cost[node]:
            continue
        if c > limit:
            break
        done[node] = True
        for arc in adjacency[node]:
            nc = c + costs[arc]
            other = ends[arc]
            if nc < cost[other]:
                cost[other] = nc
                metres[other] = metres[node] + m.metres[arc]
                seconds[other] = seconds[node] + m.seconds[arc]
                jam[other] = jam[node] + m.traffic[arc]
                push(heap, (nc, other))
    for node in range(n):
        if not done[node]:
            cost[node] = inf
    return Spread(start, cost, metres, seconds, jam, reverse)


def reach(net: RoadNetwork, found: Spread, other: Position, costs: list[float], m: Measures
          ) -> tuple[float, float, float, float] | None:
    """Give the best path between a search's start and another position.

    Returns ``(cost, metres, seconds, traffic seconds)``, or ``None`` when there is none. The
    path goes from the start to ``other`` (from ``other`` to the start for a reversed search).
    """
    options: list[tuple[float, float, float, float]] = []
    for node, arc, part in edge_ends(net, other, leaving=found.reverse):
        if found.cost[node] == math.inf or costs[arc] == math.inf:
            continue
        c, d, t, tt = _along(arc, part, costs, m)
        options.append((found.cost[node] + c, found.metres[node] + d,
                        found.seconds[node] + t, found.traffic[node] + tt))
    (ea, sa), (eb, sb) = (other, found.start) if found.reverse else (found.start, other)
    if ea == eb:  # along the same road, without reaching a node
        length, sa, sb = float(net.edge_len[ea]), float(sa), float(sb)
        arc, part = (2 * ea, (sb - sa) / length) if sb >= sa else (2 * ea + 1, (sa - sb) / length)
        if costs[arc] < math.inf:
            options.append(_along(arc, part, costs, m))
    return min(options) if options else None
