"""The drivable road graph of Andorra.

Loading, arcs, speeds, restrictions, costs, nearest roads (see the package docstring).
"""

from __future__ import annotations

import logging
import math
import threading
from functools import lru_cache
from typing import Any

import numpy as np

from toolkit._core.geo import LocalProjection, haversine_m
from toolkit._data.andorra import road_records

logger = logging.getLogger(__name__)

__all__ = ["DEFAULT_LIMITS", "RoadNetwork", "network"]

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
#: Walking: a steady pace on any road but the limited-access ones, either way along one-way
#: streets.
WALKING_KMH = 5.0
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


class RoadNetwork:
    """The drivable road graph (see the package docstring)."""

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
        self.truck_ok = np.array([self._truck_allowed(int(w), self.highway[i])
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
        """Find the edges inside the largest strongly connected part of the directed graph.

        Routes snap onto them, so that every routed point can be both reached and left.
        """
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
        """Give the node an arc leads to."""
        return self.head[arc]

    def arc_tail(self, arc: int) -> int:
        """Give the node an arc starts from."""
        return self.tail[arc]

    def arc_coords(self, arc: int) -> list[list[float]]:
        """Give the whole arc's coordinates in its direction (rounded to 1e-6 degrees; cached)."""
        hit = self._arc_coords.get(arc)
        if hit is None:
            coords = np.round(self.edge_coords[arc >> 1], 6).tolist()
            hit = coords if arc % 2 == 0 else coords[::-1]
            self._arc_coords[arc] = hit
        return hit

    def road_name(self, edge: int) -> str | None:
        """Give the name (else the ref) of an edge's road, or ``None``."""
        way = self.ways[self.edge_way[edge]]
        return way.get("name") or way.get("ref")

    def way_of(self, edge: int) -> dict[str, Any]:
        """Give the OpenStreetMap tags of an edge's way."""
        return self.ways[self.edge_way[edge]]

    def speed_kmh(self, edge: int, mode: str = "driving") -> float:
        """Give the free-flow speed on an edge for a travel mode, in km/h (at least 5)."""
        if mode == "walking":
            return WALKING_KMH
        v = self.limit_kmh[edge] * FREE_FLOW
        if mode == "truck":
            v = min(v * TRUCK_FACTOR, TRUCK_MAX_KMH)
        return max(v, 5.0)

    def usable(self, mode: str, avoid: frozenset[str] = frozenset()) -> np.ndarray:
        """Which edges a travel mode (and ``avoid`` list) may use."""
        ok = np.ones(self.n_edges, dtype=bool)
        if mode == "truck":
            ok &= self.truck_ok
        if mode == "walking":
            ok &= ~self.limited
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
        if mode == "walking":
            speeds = np.full(self.n_edges, WALKING_KMH)
        speeds = np.maximum(speeds, 5.0) / 3.6
        per_edge = self.edge_len if optimize == "shortest" else self.edge_len / speeds
        cost = np.repeat(per_edge, 2).astype(float)
        cost[~np.repeat(usable, 2)] = math.inf
        if mode != "walking":
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
        """Give the seconds an arc takes at free-flow speed for a travel mode."""
        return self.edge_len[arc >> 1] / (self.speed_kmh(arc >> 1, mode) / 3.6)

    # ------------------------------------------------------------------ geometry helpers
    def position(self, edge: int, offset: float) -> tuple[float, float]:
        """Give the lon/lat at ``offset`` metres from the edge's first node."""
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
        """Give coordinates along an edge from offset ``start`` to ``end``, both ends included.

        Reversed when ``end < start``.
        """
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
        """Find the nearest usable edge: ``(edge, offset from u in metres, distance in metres)``."""
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


@lru_cache(maxsize=1)
def network() -> RoadNetwork:
    """Return the road network, loaded on first use and kept for the process."""
    net = RoadNetwork(road_records())
    logger.info("road network loaded: %d nodes, %d edges", len(net.lonlat), net.n_edges)
    return net
