"""The area reachable within a budget: the roads a search reached, and the polygon around them.

A search (:func:`~.routing.spread`) gives every node the metres and seconds of its best path
from the start. The roads reached are the arcs whose far end is within the budget, whole, and
the part of each other arc leaving a reached node up to where the budget runs out (the start's
own road too, from the start). The boundary is the concave hull of those roads' points in the
network's metric projection (shapely's ``concave_hull``: tighter than the convex hull along the
valleys), simplified as the service's polygons are, back in longitude and latitude,
counterclockwise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from toolkit.sandbox.maps.roads.network import RoadNetwork
from toolkit.sandbox.maps.roads.routing import Position, Spread, edge_ends

if TYPE_CHECKING:
    import shapely

__all__ = ["CONCAVITY", "boundary", "reached_roads"]

#: ``ratio`` of shapely's ``concave_hull``: 0 follows the points closely, 1 is the convex hull.
CONCAVITY = 0.3
#: Metres the polygon is simplified by, and the width it gives a reach too small to enclose
#: an area.
SIMPLIFY_M = 40.0
LEAST_WIDTH_M = 30.0


def reached_roads(net: RoadNetwork, found: Spread, start: Position, budget: float,
                  per_node: list[float], per_arc: list[float], costs: list[float],
                  adjacency: list[list[int]]) -> list[list[list[float]]]:
    """List the roads reached within ``budget``, each as ``[lon, lat]`` points.

    Parameters
    ----------
    found : Spread
        The search from ``start`` (not reversed).
    per_node, per_arc : list of float
        The budget's measure of each node's best path and of each arc (metres or seconds).
    costs : list of float
        The arcs' costs (an arc of infinite cost is barred).
    adjacency : list of list of int
        The arcs leaving each node that the search used.
    """
    lines: list[list[list[float]]] = []

    def walk(arc: int, spent: float, offset: float, length: float) -> None:
        """Go along ``arc`` from ``offset`` metres, ``length`` metres at most, with ``spent``."""
        if costs[arc] == float("inf") or length <= 0:
            return
        cost_of = per_arc[arc] * length / net.arc_len[arc]
        part = 1.0 if spent + cost_of <= budget else max(budget - spent, 0.0) / cost_of
        if part > 0:
            lines.append(net.arc_piece(arc, offset, offset + part * length))

    edge, at = start
    for _, arc, part in edge_ends(net, start, leaving=True):
        offset = at if arc % 2 == 0 else net.edge_len[edge] - at
        walk(arc, 0.0, offset, part * net.edge_len[edge])
    for node, spent in enumerate(per_node):
        if found.cost[node] == float("inf") or spent > budget:
            continue
        for arc in adjacency[node]:
            walk(arc, spent, 0.0, float(net.arc_len[arc]))
    return lines


def boundary(net: RoadNetwork, lines: list[list[list[float]]], center: tuple[float, float]
             ) -> shapely.Polygon:
    """Draw the polygon around the roads reached (around the center alone when none were)."""
    import shapely
    from shapely.geometry.polygon import orient

    points = [p for line in lines for p in line] or [list(center)]
    xy = net.proj.forward(np.asarray(points, dtype=float))
    hull: Any = shapely.concave_hull(shapely.multipoints(xy), ratio=CONCAVITY)
    if not isinstance(hull, shapely.Polygon) or hull.area < LEAST_WIDTH_M ** 2:
        hull = shapely.simplify(shapely.buffer(hull, LEAST_WIDTH_M), LEAST_WIDTH_M / 8)
    else:
        hull = shapely.simplify(hull, SIMPLIFY_M)
    if not isinstance(hull, shapely.Polygon):  # pragma: no cover - a buffer is one polygon
        hull = shapely.convex_hull(hull)
    ring = np.round(net.proj.inverse(np.asarray(hull.exterior.coords)), 5)
    return orient(shapely.Polygon(ring), sign=1.0)
