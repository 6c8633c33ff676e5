"""The roads reached within a budget and the polygon around them: every road reached ends within
the budget, the roads just beyond it are cut where it runs out, the polygon holds them."""

from __future__ import annotations

import numpy as np
import pytest
import shapely

from tests.maps.conftest import TOWNS
from toolkit._core.geo import haversine_m
from toolkit.sandbox.maps.roads.network import RoadNetwork, network
from toolkit.sandbox.maps.roads.reach import boundary, reached_roads
from toolkit.sandbox.maps.roads.routing import measures, spread

ALV = TOWNS["Andorra la Vella"]


@pytest.fixture(scope="module")
def net() -> RoadNetwork:
    return network()


@pytest.fixture(scope="module")
def searched(net):
    start = net.nearest(ALV, net.usable("driving"))[:2]
    costs = net.arc_costs("driving", "shortest")
    m = measures(net, "driving")
    return start, costs, m, spread(net, start, costs, m)


@pytest.mark.parametrize("budget", [150.0, 2000.0, 6000.0])
def test_the_roads_reached_lie_within_the_budget(net, searched, budget) -> None:
    start, costs, m, found = searched
    lines = reached_roads(net, found, start, budget, found.metres, m.metres, costs, net.out)
    assert lines
    # no road reached is longer than the budget allows from the start, in a straight line
    x0, y0 = net.position(*start)
    far = max(float(haversine_m(x0, y0, x, y)) for line in lines for x, y in line)
    assert far <= budget + 1.0
    # and the budget is used: some road ends near its limit
    ends = [float(haversine_m(x0, y0, *line[-1])) for line in lines]
    assert max(ends) > 0.3 * budget
    polygon = boundary(net, lines, (x0, y0))
    assert polygon.is_valid and polygon.exterior.is_ccw
    points = shapely.points(np.asarray([p for line in lines for p in line]))
    assert shapely.covers(polygon.buffer(5e-4), points).mean() > 0.97


def test_a_larger_budget_reaches_further(net, searched) -> None:
    start, costs, m, found = searched
    areas = [boundary(net, reached_roads(net, found, start, b, found.metres, m.metres, costs,
                                         net.out), net.position(*start)).area
             for b in (500.0, 3000.0, 9000.0)]
    assert areas[0] < areas[1] < areas[2]


def test_no_road_reached_is_a_small_area_around_the_center(net, searched) -> None:
    start, _, _, _ = searched
    center = net.position(*start)
    polygon = boundary(net, [], center)
    assert polygon.geom_type == "Polygon" and polygon.covers(shapely.Point(center).buffer(1e-5))
    assert polygon.area < 1e-6
