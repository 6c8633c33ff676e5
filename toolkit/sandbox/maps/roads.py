"""The road network behind the maps sandbox: a real graph of Andorra's drivable roads.

Loaded lazily from the compact file derived from OpenStreetMap (``toolkit/_data``,
(c) OpenStreetMap contributors, ODbL) on the first maps request and cached per process. It gives:

* nearest roads (a shapely STRtree over the edges in a local metric projection);
* shortest and fastest paths (Dijkstra on directed arcs: ``oneway`` honoured), with speeds from
  ``maxspeed`` or, when untagged, from the road class; truck mode is slower and barred from roads
  that are too narrow or restricted (``maxweight``, ``maxheight``, ``width``, ``hgv``, service
  roads and living streets); ``avoid`` drops toll roads, tunnels, unpaved roads and
  limited-access highways where the data tags them; traffic factors slow or close arcs;
* alternatives (penalising the arcs of the routes found so far);
* map matching of GPS traces (a hidden-Markov model solved with Viterbi: candidates within a few
  tens of metres, emission by distance to the road, transition by how well the road distance
  between consecutive candidates agrees with the straight distance), interpolation along the
  matched path and the speed limits of the matched roads.
"""

from __future__ import annotations

import heapq
import logging
import math
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import pairwise
from typing import Any

import numpy as np

from toolkit._core.geo import LocalProjection, haversine_m
from toolkit._data.andorra import road_records

logger = logging.getLogger(__name__)

__all__ = [
    "MatchResult",
    "RoadNetwork",
    "RouteResult",
    "network",
    "sample_trace",
]


#: Speed limit (km/h) assumed per road class when ``maxspeed`` is not tagged.
DEFAULT_LIMITS = {
    "motorway": 110, "motorway_link": 60, "trunk": 90, "trunk_link": 50, "primary": 70,
    "primary_link": 40, "secondary": 60, "secondary_link": 40, "tertiary": 50,
    "tertiary_link": 40, "unclassified": 40, "residential": 30, "road": 40, "service": 20,
    "living_street": 10,
}
#: Share of the limit actually driven (mountain roads, junctions).
FREE_FLOW = 0.85
TRUCK_FACTOR = 0.8
TRUCK_MAX_KMH = 80.0
TRUCK_BARRED_CLASSES = frozenset({"service", "living_street"})
LIMITED_ACCESS = frozenset({"motorway", "motorway_link", "trunk", "trunk_link"})
PAVED = frozenset({"asphalt", "paved", "concrete", "paving_stones", "sett", "yes"})


def _number(text: Any) -> float | None:
    if text is None:
        return None
    head = str(text).split(";")[0].strip().lower().replace(",", ".")
    for unit in ("km/h", "kmh", "t", "m"):
        head = head.removesuffix(unit).strip()
    try:
        return float(head)
    except ValueError:
        return None


@dataclass
class RouteResult:
    """One path between waypoints."""

    arcs: list[int]
    legs: list[dict[str, float]]
    distance_m: float
    duration_s: float
    traffic_duration_s: float
    coordinates: list[list[list[float]]]  # one list of [lon, lat] per leg


@dataclass
class MatchResult:
    """A matched trace: one record per snapped or interpolated point, plus the road distance."""

    points: list[dict[str, Any]] = field(default_factory=list)
    road_distance_m: float = 0.0


class RoadNetwork:
    """The drivable road graph (see the module docstring)."""

    def __init__(self, data: dict[str, Any]) -> None:
        import shapely

        nodes = np.asarray(data["nodes"], dtype=float)
        self.lonlat = nodes
        self.proj = LocalProjection(float(nodes[:, 0].mean()), float(nodes[:, 1].mean()))
        self.xy = self.proj.forward(nodes)
        self.ways: list[dict[str, Any]] = data["ways"]
        n_edges = len(data["edges"])
        self.edge_u = np.empty(n_edges, dtype=np.int64)
        self.edge_v = np.empty(n_edges, dtype=np.int64)
        self.edge_way = np.empty(n_edges, dtype=np.int64)
        self.edge_len = np.empty(n_edges, dtype=float)
        self.edge_coords: list[np.ndarray] = []   # lon/lat, endpoints included
        self.edge_cum: list[np.ndarray] = []      # cumulative metres along the edge
        lines_xy = []
        for i, (u, v, w, _length, inner) in enumerate(data["edges"]):
            coords = np.vstack([nodes[u], np.asarray(inner, dtype=float).reshape(-1, 2), nodes[v]])
            seg = haversine_m(coords[:-1, 0], coords[:-1, 1], coords[1:, 0], coords[1:, 1])
            cum = np.concatenate([[0.0], np.cumsum(seg)])
            self.edge_u[i], self.edge_v[i], self.edge_way[i] = u, v, w
            self.edge_len[i] = max(cum[-1], 0.01)
            self.edge_coords.append(coords)
            self.edge_cum.append(cum)
            lines_xy.append(self.proj.forward(coords))
        self.lines = np.array([shapely.linestrings(c) for c in lines_xy], dtype=object)
        self.tree = shapely.STRtree(self.lines)
        # per-edge attributes
        self.highway = [self.ways[w].get("highway", "road") for w in self.edge_way]
        self.limit_kmh = np.array([
            _number(self.ways[w].get("maxspeed")) or DEFAULT_LIMITS.get(self.highway[i], 40)
            for i, w in enumerate(self.edge_way)], dtype=float)
        self.limit_tagged = np.array([_number(self.ways[w].get("maxspeed")) is not None
                                      for w in self.edge_way])
        self.toll = np.array([self.ways[w].get("toll") == "yes" for w in self.edge_way])
        self.tunnel = np.array([self.ways[w].get("tunnel") not in (None, "no")
                                for w in self.edge_way])
        self.unpaved = np.array([self.ways[w].get("surface") not in (None, *PAVED)
                                 for w in self.edge_way])
        self.limited = np.array([h in LIMITED_ACCESS for h in self.highway])
        self.truck_ok = np.array([self._truck_allowed(w, self.highway[i])
                                  for i, w in enumerate(self.edge_way)])
        # directed arcs: 2e is u->v, 2e+1 is v->u
        n_nodes = len(nodes)
        self.out: list[list[int]] = [[] for _ in range(n_nodes)]
        self.arc_ok = np.zeros(2 * n_edges, dtype=bool)
        for e in range(n_edges):
            way = self.ways[self.edge_way[e]]
            oneway = str(way.get("oneway", "")).lower()
            forward = oneway != "-1"
            backward = oneway not in ("yes", "true", "1", "-1") and \
                way.get("junction") != "roundabout"
            if oneway == "-1":
                backward = True
            if forward:
                self.out[self.edge_u[e]].append(2 * e)
                self.arc_ok[2 * e] = True
            if backward:
                self.out[self.edge_v[e]].append(2 * e + 1)
                self.arc_ok[2 * e + 1] = True
        self.arc_len = np.repeat(self.edge_len, 2)
        # plain lists for the inner loops (numpy scalar access is slow there)
        self.head = [int(self.edge_v[a >> 1] if a % 2 == 0 else self.edge_u[a >> 1])
                     for a in range(2 * n_edges)]
        self.tail = [int(self.edge_u[a >> 1] if a % 2 == 0 else self.edge_v[a >> 1])
                     for a in range(2 * n_edges)]
        self._arc_coords: dict[int, list[list[float]]] = {}
        self.node_x = self.xy[:, 0].tolist()
        self.node_y = self.xy[:, 1].tolist()
        #: least seconds per metre anywhere (the fastest road at free flow)
        self.min_seconds_per_m = 3.6 / (float(self.limit_kmh.max()) * FREE_FLOW)
        # the main connected part (routing snaps onto it)
        self.main = self._main_component()
        self._costs: dict[Any, list[float]] = {}
        self._dist_cache: dict[tuple[str, int], tuple[dict[int, float], dict[int, int]]] = {}
        self._lock = threading.Lock()
        # busiest roads (for traffic): primary roads through towns
        self.n_edges = n_edges

    # ------------------------------------------------------------------ attributes
    def _truck_allowed(self, w: int, highway: str) -> bool:
        way = self.ways[w]
        if highway in TRUCK_BARRED_CLASSES or way.get("hgv") in ("no", "destination"):
            return False
        weight, height, width = (_number(way.get("maxweight")), _number(way.get("maxheight")),
                                 _number(way.get("width")))
        return not ((weight is not None and weight < 7.5) or
                    (height is not None and height < 4.0) or
                    (width is not None and width < 3.0))

    def _main_component(self) -> np.ndarray:
        """Edges inside the largest strongly connected part of the directed graph (routes snap
        onto them, so that every routed point can be both reached and left)."""
        n = len(self.lonlat)
        fwd: list[list[int]] = [[] for _ in range(n)]
        rev: list[list[int]] = [[] for _ in range(n)]
        for node, arcs in enumerate(self.out):
            for arc in arcs:
                e = arc >> 1
                m = int(self.edge_v[e] if arc % 2 == 0 else self.edge_u[e])
                fwd[node].append(m)
                rev[m].append(node)
        order: list[int] = []
        seen = [False] * n
        for start in range(n):
            if seen[start]:
                continue
            seen[start] = True
            stack = [(start, iter(fwd[start]))]
            while stack:
                node, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    stack.pop()
                    order.append(node)
                elif not seen[nxt]:
                    seen[nxt] = True
                    stack.append((nxt, iter(fwd[nxt])))
        comp = [-1] * n
        label = 0
        for start in reversed(order):
            if comp[start] >= 0:
                continue
            comp[start] = label
            todo = [start]
            while todo:
                node = todo.pop()
                for m in rev[node]:
                    if comp[m] < 0:
                        comp[m] = label
                        todo.append(m)
            label += 1
        sizes = np.bincount(np.asarray(comp), minlength=label)
        biggest = int(np.argmax(sizes))
        comps = np.asarray(comp)
        return (comps[self.edge_u] == biggest) & (comps[self.edge_v] == biggest)

    def arc_head(self, arc: int) -> int:
        return self.head[arc]

    def arc_tail(self, arc: int) -> int:
        return self.tail[arc]

    def arc_coords(self, arc: int) -> list[list[float]]:
        """The whole arc's coordinates in its direction (rounded to 1e-6 degrees; cached)."""
        hit = self._arc_coords.get(arc)
        if hit is None:
            coords = np.round(self.edge_coords[arc >> 1], 6).tolist()
            hit = coords if arc % 2 == 0 else coords[::-1]
            self._arc_coords[arc] = hit
        return hit

    def road_name(self, edge: int) -> str | None:
        way = self.ways[self.edge_way[edge]]
        return way.get("name") or way.get("ref")

    def way_of(self, edge: int) -> dict[str, Any]:
        return self.ways[self.edge_way[edge]]

    def speed_kmh(self, edge: int, mode: str = "driving") -> float:
        v = self.limit_kmh[edge] * FREE_FLOW
        if mode == "truck":
            v = min(v * TRUCK_FACTOR, TRUCK_MAX_KMH)
        return max(v, 5.0)

    def usable(self, mode: str, avoid: frozenset[str] = frozenset()) -> np.ndarray:
        """Which edges a travel mode (and ``avoid`` list) may use."""
        ok = np.ones(self.n_edges, dtype=bool)
        if mode == "truck":
            ok &= self.truck_ok
        if "tollRoads" in avoid:
            ok &= ~self.toll
        if "tunnels" in avoid:
            ok &= ~self.tunnel
        if "unpavedRoads" in avoid:
            ok &= ~self.unpaved
        if "limitedAccessHighways" in avoid:
            ok &= ~self.limited
        return ok

    def arc_costs(self, mode: str, optimize: str, avoid: frozenset[str] = frozenset(),
                  traffic: dict[int, float] | None = None, key: Any = None) -> list[float]:
        """Cost of every arc (seconds, or metres for ``shortest``); ``inf`` where barred."""
        cache_key = (mode, optimize, avoid, key) if key is not None or traffic is None else None
        if cache_key is not None and cache_key in self._costs:
            return self._costs[cache_key]
        usable = self.usable(mode, avoid)
        speeds = self.limit_kmh * FREE_FLOW
        if mode == "truck":
            speeds = np.minimum(speeds * TRUCK_FACTOR, TRUCK_MAX_KMH)
        speeds = np.maximum(speeds, 5.0) / 3.6
        per_edge = self.edge_len if optimize == "shortest" else self.edge_len / speeds
        cost = np.repeat(per_edge, 2).astype(float)
        cost[~np.repeat(usable, 2)] = math.inf
        cost[~self.arc_ok] = math.inf
        if traffic:
            for edge, factor in traffic.items():
                for arc in (2 * edge, 2 * edge + 1):
                    cost[arc] = math.inf if factor <= 0 else cost[arc] / factor
        out = cost.tolist()
        if cache_key is not None:
            if len(self._costs) > 64:
                self._costs.clear()
            self._costs[cache_key] = out
        return out

    def arc_seconds(self, arc: int, mode: str) -> float:
        return self.edge_len[arc >> 1] / (self.speed_kmh(arc >> 1, mode) / 3.6)

    # ------------------------------------------------------------------ geometry helpers
    def position(self, edge: int, offset: float) -> tuple[float, float]:
        """The lon/lat at ``offset`` metres from the edge's first node."""
        cum, coords = self.edge_cum[edge], self.edge_coords[edge]
        offset = min(max(offset, 0.0), cum[-1])
        i = int(np.searchsorted(cum, offset, side="right")) - 1
        i = min(max(i, 0), len(cum) - 2)
        span = cum[i + 1] - cum[i]
        t = 0.0 if span <= 0 else (offset - cum[i]) / span
        lon = coords[i, 0] + t * (coords[i + 1, 0] - coords[i, 0])
        lat = coords[i, 1] + t * (coords[i + 1, 1] - coords[i, 1])
        return float(lon), float(lat)

    def piece(self, edge: int, start: float, end: float) -> list[list[float]]:
        """Coordinates along an edge from offset ``start`` to ``end`` (reversed when
        ``end < start``), both ends included."""
        cum, coords = self.edge_cum[edge], self.edge_coords[edge]
        lo, hi = sorted((start, end))
        inner = [coords[i].tolist() for i in range(len(cum)) if lo < cum[i] < hi]
        pts = [list(self.position(edge, lo)), *inner, list(self.position(edge, hi))]
        return pts if start <= end else pts[::-1]

    def arc_piece(self, arc: int, start: float, end: float) -> list[list[float]]:
        """Like :meth:`piece` with offsets measured along the arc's direction."""
        e = arc >> 1
        if arc % 2 == 0:
            return self.piece(e, start, end)
        length = self.edge_len[e]
        return self.piece(e, length - start, length - end)

    # ------------------------------------------------------------------ nearest roads
    def nearest(self, lonlat: tuple[float, float], usable: np.ndarray | None = None,
                max_m: float = 1500.0) -> tuple[int, float, float] | None:
        """The nearest usable edge: ``(edge, offset from u in metres, distance in metres)``."""
        import shapely

        pt = shapely.points(self.proj.forward(np.asarray([lonlat]))[0])
        idx = self.tree.query(pt, predicate="dwithin", distance=max_m)
        if usable is not None:
            idx = idx[usable[idx] & self.main[idx]]
        if len(idx) == 0:
            return None
        d = shapely.distance(self.lines[idx], pt)
        best = int(idx[int(np.argmin(d))])
        frac = float(shapely.line_locate_point(self.lines[best], pt, normalized=True))
        return best, frac * self.edge_len[best], float(d.min())

    # ------------------------------------------------------------------ routing
    def _dijkstra(self, sources: dict[int, float], costs: list[float],
                  targets: dict[int, float], goal: tuple[float, float] | None = None,
                  rate: float = 0.0) -> tuple[float, int | None, dict[int, int]]:
        """Cheapest way from the sources (node -> initial cost) to a target (node -> final
        cost); returns the total, the target node reached and the predecessor arcs.

        With ``goal`` (metric x, y) and ``rate`` (the least cost of a metre anywhere), the
        search is A*: the straight distance to the goal times ``rate`` never overestimates.
        """
        dist: dict[int, float] = dict(sources)
        pred: dict[int, int] = {}
        xs, ys = self.node_x, self.node_y
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
        out, head = self.out, self.head
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

    def _leg(self, a: tuple[int, float], b: tuple[int, float], costs: list[float],
             rate: float = 0.0) -> tuple[float, list[tuple[int, float, float]]] | None:
        """Cheapest path between two edge positions, as pieces ``(arc, from, to)`` with
        offsets along each arc."""
        ea, sa = a
        eb, sb = b
        la, lb = self.edge_len[ea], self.edge_len[eb]
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
            n = int(self.edge_v[ea])
            sources[n] = costs[fa] * (la - sa) / la
            first[n] = (fa, sa, la)
        if costs[ra] < math.inf:
            n = int(self.edge_u[ea])
            c = costs[ra] * sa / la
            if c < sources.get(n, math.inf):
                sources[n] = c
                first[n] = (ra, la - sa, la)
        targets: dict[int, float] = {}
        last: dict[int, tuple[int, float, float]] = {}
        if costs[fb] < math.inf:
            n = int(self.edge_u[eb])
            targets[n] = costs[fb] * sb / lb
            last[n] = (fb, 0.0, sb)
        if costs[rb] < math.inf:
            n = int(self.edge_v[eb])
            c = costs[rb] * (lb - sb) / lb
            if c < targets.get(n, math.inf):
                targets[n] = c
                last[n] = (rb, 0.0, lb - sb)
        if not sources or not targets:
            return direct
        goal = None
        if rate > 0:
            gx, gy = self.proj.forward(np.asarray([self.position(eb, sb)]))[0]
            goal = (float(gx), float(gy))
        total, end, pred = self._dijkstra(sources, costs, targets, goal, rate)
        if end is None or (direct is not None and direct[0] <= total):
            return direct
        arcs: list[int] = []
        node = end
        while node in pred:
            arc = pred[node]
            arcs.append(arc)
            node = self.arc_tail(arc)
        arcs.reverse()
        pieces = [first[node]] + [(arc, 0.0, float(self.arc_len[arc])) for arc in arcs] + \
            [last[end]]
        return total, pieces

    def route(self, waypoints: list[tuple[float, float]], *, mode: str = "driving",
              optimize: str = "fastestWithoutTraffic", avoid: frozenset[str] = frozenset(),
              traffic: dict[int, float] | None = None, penalty: dict[int, float] | None = None,
              snapped: list[tuple[int, float]] | None = None) -> RouteResult | None:
        """The best route through the waypoints, or ``None`` when there is none."""
        traffic_for_cost = traffic if optimize == "fastestWithTraffic" else None
        base_key = tuple(sorted(traffic_for_cost.items())) if traffic_for_cost else None
        costs = self.arc_costs(mode, optimize, avoid, traffic_for_cost, key=base_key)
        if penalty:
            costs = list(costs)
            for arc, factor in penalty.items():
                costs[arc] *= factor
        if snapped is None:
            raise ValueError("snap the waypoints first")
        rate = 1.0 if optimize == "shortest" else self.min_seconds_per_m
        legs_pieces = []
        for a, b in pairwise(snapped):
            leg = self._leg(a, b, costs, rate)
            if leg is None or leg[0] == math.inf:
                return None
            legs_pieces.append(leg[1])
        return self._summarise(legs_pieces, mode, traffic)

    def _summarise(self, legs_pieces: list[list[tuple[int, float, float]]], mode: str,
                   traffic: dict[int, float] | None) -> RouteResult:
        legs, coords, arcs = [], [], []
        total_d = total_t = total_tt = 0.0
        for pieces in legs_pieces:
            d = t = tt = 0.0
            line: list[list[float]] = []
            for arc, s0, s1 in pieces:
                length = max(s1 - s0, 0.0)
                secs = self.arc_seconds(arc, mode) * length / self.arc_len[arc]
                factor = (traffic or {}).get(arc >> 1, 1.0)
                d += length
                t += secs
                tt += secs / max(factor, 0.1)
                if length > 0:
                    full = s0 <= 0.0 and s1 >= self.arc_len[arc] - 1e-9
                    part = self.arc_coords(arc) if full else \
                        [[round(x, 6), round(y, 6)] for x, y in self.arc_piece(arc, s0, s1)]
                    line.extend(part if not line else part[1:])
                    arcs.append(arc)
            if len(line) < 2:
                line = line * 2 if line else []
            legs.append({"distanceInMeters": d, "durationInSeconds": t,
                         "durationTrafficInSeconds": tt})
            coords.append(line)
            total_d, total_t, total_tt = total_d + d, total_t + t, total_tt + tt
        return RouteResult(arcs, legs, total_d, total_t, total_tt, coords)

    def routes(self, waypoints: list[tuple[float, float]], *, mode: str = "driving",
               optimize: str = "fastestWithoutTraffic", avoid: frozenset[str] = frozenset(),
               traffic: dict[int, float] | None = None, count: int = 1,
               snapped: list[tuple[int, float]] | None = None) -> list[RouteResult]:
        """The main route and up to ``count - 1`` alternatives that differ enough from it."""
        main = self.route(waypoints, mode=mode, optimize=optimize, avoid=avoid, traffic=traffic,
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
            alt = self.route(waypoints, mode=mode, optimize=optimize, avoid=avoid,
                             traffic=traffic, penalty=penalty, snapped=snapped)
            if alt is None:
                break
            if alt.distance_m > 0:
                main_edges = {a >> 1 for a in main.arcs}
                shared = sum(self.edge_len[a >> 1] for a in set(alt.arcs) if a >> 1 in main_edges)
                new_enough = shared / max(alt.distance_m, 1.0) < 0.8
                distinct = all(set(alt.arcs) != set(r.arcs) for r in found)
                reasonable = alt.duration_s <= 1.8 * main.duration_s + 120
                if new_enough and distinct and reasonable:
                    found.append(alt)
        return found

    # ------------------------------------------------------------------ map matching
    def _distances_from(self, node: int, mode: str, limit: float
                        ) -> tuple[dict[int, float], dict[int, int]]:
        """Road distances (metres, along allowed arcs) from a node up to ``limit``."""
        bucket = 1000.0 if limit <= 1000.0 else 1000.0 * 2 ** math.ceil(math.log2(limit / 1000))
        key = (f"{mode}:{bucket:g}", node)
        hit = self._dist_cache.get(key)
        if hit is not None:
            return hit
        costs = self.arc_costs(mode, "shortest")
        dist = {node: 0.0}
        pred: dict[int, int] = {}
        heap = [(0.0, node)]
        out, head = self.out, self.head
        while heap:
            c, n = heapq.heappop(heap)
            if c > dist.get(n, math.inf) or c > bucket:
                continue
            for arc in out[n]:
                w = costs[arc]
                if w == math.inf:
                    continue
                m = head[arc]
                nc = c + w
                if nc < dist.get(m, math.inf) and nc <= bucket:
                    dist[m] = nc
                    pred[m] = arc
                    heapq.heappush(heap, (nc, m))
        self._dist_cache[key] = (dist, pred)
        return dist, pred

    def _path_arcs(self, pred: dict[int, int], source: int, target: int) -> list[int]:
        arcs = []
        node = target
        while node != source:
            arc = pred[node]
            arcs.append(arc)
            node = self.arc_tail(arc)
        arcs.reverse()
        return arcs

    def match(self, lonlat: np.ndarray, *, mode: str = "driving", interpolate: bool = False,
              speed_limit: bool = False, radius_m: float = 50.0, sigma_m: float = 8.0,
              beta_m: float = 12.0, max_candidates: int = 4) -> MatchResult:
        """Snap a GPS trace onto the roads it follows (see the module docstring)."""
        import shapely

        n = len(lonlat)
        result = MatchResult()
        if n == 0:
            return result
        usable = self.usable(mode)
        xy = self.proj.forward(lonlat)
        pts = shapely.points(xy)
        pi, ei = self.tree.query(pts, predicate="dwithin", distance=radius_m)
        keep = usable[ei]
        pi, ei = pi[keep], ei[keep]
        dist = shapely.distance(self.lines[ei], pts[pi])
        offs = shapely.line_locate_point(self.lines[ei], pts[pi], normalized=True) * \
            self.edge_len[ei]
        order = np.lexsort((dist, pi))
        pi, ei, dist, offs = pi[order], ei[order], dist[order], offs[order]
        # states per point: (arc, offset along arc, emission cost)
        states: list[list[tuple[int, float, float]]] = [[] for _ in range(n)]
        counts = np.zeros(n, dtype=int)
        for p, e, d, s in zip(pi.tolist(), ei.tolist(), dist.tolist(), offs.tolist(),
                              strict=True):
            if counts[p] >= max_candidates:
                continue
            counts[p] += 1
            em = 0.5 * (d / sigma_m) ** 2
            length = self.edge_len[e]
            if self.arc_ok[2 * e]:
                states[p].append((2 * e, s, em))
            if self.arc_ok[2 * e + 1]:
                states[p].append((2 * e + 1, length - s, em))
        gaps = np.hypot(*(xy[1:] - xy[:-1]).T) if n > 1 else np.zeros(0)
        arc_len = self.arc_len
        # Viterbi with breaks: chains of points connected by feasible transitions
        chosen: list[tuple[int, int]] = []  # (point, state index)
        prev_p = -1
        prev_cost: list[float] = []
        back: dict[int, list[int]] = {}
        chain: list[int] = []
        restarts: set[int] = set()
        gap_acc = 0.0

        def close_chain() -> None:
            if not chain:
                return
            k = int(np.argmin(prev_cost))
            seq = []
            for p in reversed(chain):
                seq.append((p, k))
                if p != chain[0]:
                    k = back[p][k]
            chosen.extend(reversed(seq))

        for p in range(n):
            if p > 0:
                gap_acc += gaps[p - 1]
            cur = states[p]
            if not cur:
                continue
            if prev_p < 0:
                prev_cost = [st[2] for st in cur]
                chain, back, prev_p, gap_acc = [p], {}, p, 0.0
                restarts.add(p)
                continue
            gc = gap_acc
            limit = max(2.0 * gc + 150.0, gc + 400.0)
            prev_states = states[prev_p]
            new_cost = [math.inf] * len(cur)
            new_back = [0] * len(cur)
            for i, (a, s, _) in enumerate(prev_states):
                base = prev_cost[i]
                if base == math.inf:
                    continue
                head = self.arc_head(a)
                rest = arc_len[a] - s
                dmap: dict[int, float] | None = None
                for j, (b, t, em) in enumerate(cur):
                    if a == b and t >= s - 15.0:
                        road = abs(t - s)
                    else:
                        if dmap is None:
                            dmap = self._distances_from(head, mode, limit)[0]
                        mid = dmap.get(self.arc_tail(b))
                        if mid is None:
                            continue
                        road = rest + mid + t
                    if road > limit:
                        continue
                    c = base + abs(road - gc) / beta_m + em
                    if c < new_cost[j]:
                        new_cost[j] = c
                        new_back[j] = i
            if all(c == math.inf for c in new_cost):
                close_chain()
                prev_cost = [st[2] for st in cur]
                chain, back, prev_p, gap_acc = [p], {}, p, 0.0
                restarts.add(p)
                continue
            back[p] = new_back
            chain.append(p)
            prev_cost = new_cost
            prev_p, gap_acc = p, 0.0
        close_chain()
        # emit points (and interpolated ones between consecutive matched points)
        total = 0.0
        previous: tuple[int, int, float, float] | None = None  # point, arc, offset, gap to it
        for p, k in chosen:
            arc, off, _ = states[p][k]
            e = arc >> 1
            if previous is not None and p not in restarts:
                pp, parc, poff, _ = previous
                pieces = self._between(parc, poff, arc, off, mode,
                                       max(2.0 * float(gaps[pp:p].sum()) + 150.0, 400.0))
                for _arc, s0, s1 in pieces:
                    total += max(s1 - s0, 0.0)
                if interpolate:
                    for q_arc, q_lonlat in self._inner_points(pieces):
                        result.points.append(self._record(q_arc >> 1, q_lonlat, None, True,
                                                          speed_limit))
            pos_off = off if arc % 2 == 0 else self.edge_len[e] - off
            result.points.append(self._record(e, self.position(e, pos_off), p, False,
                                              speed_limit))
            previous = (p, arc, off, 0.0)
        result.road_distance_m = total
        return result

    def _between(self, a: int, s: float, b: int, t: float, mode: str, limit: float
                 ) -> list[tuple[int, float, float]]:
        if a == b and t >= s - 15.0:
            return [(a, s, max(t, s))]
        dist, pred = self._distances_from(self.arc_head(a), mode, limit)
        tail = self.arc_tail(b)
        if tail not in dist:
            return []
        arcs = self._path_arcs(pred, self.arc_head(a), tail)
        return [(a, s, float(self.arc_len[a]))] + \
            [(x, 0.0, float(self.arc_len[x])) for x in arcs] + [(b, 0.0, t)]

    def _inner_points(self, pieces: list[tuple[int, float, float]]
                      ) -> list[tuple[int, list[float]]]:
        out: list[tuple[int, list[float]]] = []
        for i, (arc, s0, s1) in enumerate(pieces):
            coords = self.arc_piece(arc, s0, s1) if s1 > s0 else []
            inner = coords[1:] if i < len(pieces) - 1 else coords[1:-1]
            if i == len(pieces) - 1 and len(coords) >= 2:
                inner = coords[1:-1]
            out.extend((arc, c) for c in inner)
        # drop consecutive duplicates
        dedup: list[tuple[int, list[float]]] = []
        for arc, c in out:
            if not dedup or dedup[-1][1] != c:
                dedup.append((arc, c))
        return dedup

    def _record(self, edge: int, lonlat: Any, index: int | None, interpolated: bool,
                speed_limit: bool) -> dict[str, Any]:
        rec: dict[str, Any] = {"lon": float(lonlat[0]), "lat": float(lonlat[1]),
                               "name": self.road_name(edge), "inputIndex": index,
                               "isInterpolated": interpolated, "edge": edge}
        if speed_limit:
            rec["speedLimitInKilometersPerHour"] = float(self.limit_kmh[edge])
        return rec



@lru_cache(maxsize=1)
def network() -> RoadNetwork:
    """The road network, loaded on first use and kept for the process."""
    net = RoadNetwork(road_records())
    logger.info("road network loaded: %d nodes, %d edges", len(net.lonlat), net.n_edges)
    return net


def sample_trace(line: Any, *, spacing_m: float = 10.0, noise_m: float = 5.0,
                 seed: int = 0) -> np.ndarray:
    """GPS-like points along a line of ``(lon, lat)``: one every ``spacing_m`` metres with
    Gaussian noise of ``noise_m`` metres (deterministic from ``seed``)."""
    coords = np.asarray(line, dtype=float)
    seg = haversine_m(coords[:-1, 0], coords[:-1, 1], coords[1:, 0], coords[1:, 1])
    cum = np.concatenate([[0.0], np.cumsum(seg)])
    at = np.arange(0.0, cum[-1], spacing_m)
    lon = np.interp(at, cum, coords[:, 0])
    lat = np.interp(at, cum, coords[:, 1])
    rng = np.random.default_rng(seed)
    proj = LocalProjection(float(lon.mean()), float(lat.mean()))
    xy = proj.forward(np.column_stack([lon, lat])) + rng.normal(0, noise_m, (len(at), 2))
    return proj.inverse(xy)
