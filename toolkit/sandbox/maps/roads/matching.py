"""Map matching: GPS traces snapped to the road network.

The traces are snapped with a hidden-Markov model solved with Viterbi; also interpolation along the
matched path, and synthetic traces to test it with.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from toolkit._core.geo import LocalProjection, haversine_m
from toolkit.sandbox.maps.roads.network import RoadNetwork

__all__ = ["MatchResult", "match", "sample_trace"]


@dataclass
class MatchResult:
    """A matched trace: one record per snapped or interpolated point, plus the road distance."""

    points: list[dict[str, Any]] = field(default_factory=list)
    road_distance_m: float = 0.0


def _distances_from(net: RoadNetwork, node: int, mode: str, limit: float
                    ) -> tuple[dict[int, float], dict[int, int]]:
    """Road distances (metres, along allowed arcs) from a node up to ``limit``."""
    bucket = 1000.0 if limit <= 1000.0 else 1000.0 * 2 ** math.ceil(math.log2(limit / 1000))
    key = (f"{mode}:{bucket:g}", node)
    hit = net._dist_cache.get(key)
    if hit is not None:
        return hit
    costs = net.arc_costs(mode, "shortest")
    dist = {node: 0.0}
    pred: dict[int, int] = {}
    heap = [(0.0, node)]
    out, head = net.out, net.head
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
    net._dist_cache[key] = (dist, pred)
    return dist, pred

def _path_arcs(net: RoadNetwork, pred: dict[int, int], source: int, target: int) -> list[int]:
    arcs = []
    node = target
    while node != source:
        arc = pred[node]
        arcs.append(arc)
        node = net.arc_tail(arc)
    arcs.reverse()
    return arcs

def match(net: RoadNetwork, lonlat: np.ndarray, *, mode: str = "driving", interpolate: bool = False,
          speed_limit: bool = False, radius_m: float = 50.0, sigma_m: float = 8.0,
          beta_m: float = 12.0, max_candidates: int = 4) -> MatchResult:
    """Snap a GPS trace onto the roads it follows (see the module docstring)."""
    import shapely

    n = len(lonlat)
    result = MatchResult()
    if n == 0:
        return result
    usable = net.usable(mode)
    xy = net.proj.forward(lonlat)
    pts = np.asarray(shapely.points(xy))  # one Point per row of xy
    pi, ei = net.tree.query(pts, predicate="dwithin", distance=radius_m)
    keep = usable[ei]
    pi, ei = pi[keep], ei[keep]
    dist = np.asarray(shapely.distance(net.lines[ei], pts[pi]))
    offs = np.asarray(shapely.line_locate_point(net.lines[ei], pts[pi], normalized=True)) * \
        net.edge_len[ei]
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
        length = net.edge_len[e]
        if net.arc_ok[2 * e]:
            states[p].append((2 * e, s, em))
        if net.arc_ok[2 * e + 1]:
            states[p].append((2 * e + 1, length - s, em))
    gaps = np.hypot(*(xy[1:] - xy[:-1]).T) if n > 1 else np.zeros(0)
    arc_len = net.arc_len
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
            head = net.arc_head(a)
            rest = arc_len[a] - s
            dmap: dict[int, float] | None = None
            for j, (b, t, em) in enumerate(cur):
                if a == b and t >= s - 15.0:
                    road = abs(t - s)
                else:
                    if dmap is None:
                        dmap = _distances_from(net, head, mode, limit)[0]
                    mid = dmap.get(net.arc_tail(b))
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
            pieces = _between(net, parc, poff, arc, off, mode,
                                   max(2.0 * float(gaps[pp:p].sum()) + 150.0, 400.0))
            for _arc, s0, s1 in pieces:
                total += max(s1 - s0, 0.0)
            if interpolate:
                for q_arc, q_lonlat in _inner_points(net, pieces):
                    result.points.append(_record(net, q_arc >> 1, q_lonlat, None, True,
                                                      speed_limit))
        pos_off = off if arc % 2 == 0 else net.edge_len[e] - off
        result.points.append(_record(net, e, net.position(e, pos_off), p, False,
                                          speed_limit))
        previous = (p, arc, off, 0.0)
    result.road_distance_m = total
    return result

def _between(net: RoadNetwork, a: int, s: float, b: int, t: float, mode: str, limit: float
             ) -> list[tuple[int, float, float]]:
    if a == b and t >= s - 15.0:
        return [(a, s, max(t, s))]
    dist, pred = _distances_from(net, net.arc_head(a), mode, limit)
    tail = net.arc_tail(b)
    if tail not in dist:
        return []
    arcs = _path_arcs(net, pred, net.arc_head(a), tail)
    return [(a, s, float(net.arc_len[a]))] + \
        [(x, 0.0, float(net.arc_len[x])) for x in arcs] + [(b, 0.0, t)]

def _inner_points(net: RoadNetwork, pieces: list[tuple[int, float, float]]
                  ) -> list[tuple[int, list[float]]]:
    out: list[tuple[int, list[float]]] = []
    for i, (arc, s0, s1) in enumerate(pieces):
        coords = net.arc_piece(arc, s0, s1) if s1 > s0 else []
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

def _record(net: RoadNetwork, edge: int, lonlat: Any, index: int | None, interpolated: bool,
            speed_limit: bool) -> dict[str, Any]:
    rec: dict[str, Any] = {"lon": float(lonlat[0]), "lat": float(lonlat[1]),
                           "name": net.road_name(edge), "inputIndex": index,
                           "isInterpolated": interpolated, "edge": edge}
    if speed_limit:
        rec["speedLimitInKilometersPerHour"] = float(net.limit_kmh[edge])
    return rec


def sample_trace(line: Any, *, spacing_m: float = 10.0, noise_m: float = 5.0,
                 seed: int = 0) -> np.ndarray:
    """Sample GPS-like points along a line of ``(lon, lat)``.

    One every ``spacing_m`` metres with Gaussian noise of ``noise_m`` metres (deterministic from
    ``seed``).
    """
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
