"""The area reachable within a budget: the roads a search reached, and the polygon around them.

A search (:func:`~.routing.spread`) gives every node the metres and seconds of its best path
from the start. The roads reached are the arcs whose far end is within the budget, whole, and
the part of each other arc leaving a reached node up to where the budget runs out (the start's
own road too, from the start). The boundary is drawn around those roads in the network's metric
projection: the cells of a grid that the roads cross, each widened to a disc, their union, its
holes filled, simplified as the service's polygons are, back in longitude and latitude,
counterclockwise. It follows the valleys, and fewer roads never give a larger area (a concave
hull does not keep that: with fewer points its edges may be cut less).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from toolkit.sandbox.maps.roads.network import RoadNetwork
from toolkit.sandbox.maps.roads.routing import Position, Spread, edge_ends

if TYPE_CHECKING:
    import shapely

__all__ = ["CELL_M", "REACH_M", "boundary", "reached_roads"]

#: The side of the grid's cells (metres): the roads' points are taken every cell and kept once
#: a cell.
CELL_M = 100.0
#: How far from the roads reached the area goes (metres): the radius of each cell's disc.
REACH_M = 250.0
#: Metres the polygon is simplified by.
SIMPLIFY_M = 40.0
#: The radius of the area around the center when no road was reached (a budget of nothing).
CENTER_M = 30.0


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
    """Draw the polygon around the roads reached (a disc around the center when none were)."""
    import shapely
    from shapely.geometry.polygon import orient

    pieces = [net.proj.forward(np.asarray(line, dtype=float)) for line in lines if line]
    if pieces:
        roads = [shapely.LineString(p) if len(p) > 1 else shapely.Point(p[0]) for p in pieces]
        points = shapely.get_coordinates(shapely.segmentize(roads, CELL_M / 2))
        cells = np.unique(np.round(points / CELL_M), axis=0) * CELL_M
        area: Any = shapely.union_all(shapely.buffer(shapely.points(cells), REACH_M,
                                                     quad_segs=2))
        tolerance = SIMPLIFY_M
    else:
        xy = net.proj.forward(np.asarray([center], dtype=float))[0]
        area = shapely.buffer(shapely.Point(xy), CENTER_M)
        tolerance = CENTER_M / 8
    # the roads reached are connected through the start: one part (the largest, if a road's
    # piece left a gap wider than the discs)
    part = max(getattr(area, "geoms", [area]), key=lambda g: g.area)
    hull = shapely.simplify(shapely.Polygon(part.exterior), tolerance)
    ring = np.round(net.proj.inverse(np.asarray(hull.exterior.coords)), 5)
    return orient(shapely.Polygon(ring), sign=1.0)
