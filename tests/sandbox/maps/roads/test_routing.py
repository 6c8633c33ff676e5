"""Paths on the road graph: A* finds the cheapest path (the same as plain Dijkstra), legs join at
their waypoints, distances and durations add up, shortest and fastest differ as they should,
``avoid``, trucks and traffic are kept to, alternatives differ from the main route."""

from __future__ import annotations

import math
from itertools import pairwise

import numpy as np
import pytest

from tests.maps.conftest import TOWNS
from toolkit._core.geo import haversine_m
from toolkit.sandbox.maps.roads.network import RoadNetwork, network
from toolkit.sandbox.maps.roads.routing import RouteResult, _leg, route, routes

ALV, CAN, SJL, ORD = (TOWNS[t] for t in ("Andorra la Vella", "Canillo", "Sant Julià de Lòria",
                                         "Ordino"))


@pytest.fixture(scope="module")
def net() -> RoadNetwork:
    return network()


def _snap(net: RoadNetwork, points: list, mode: str = "driving",
          avoid: frozenset[str] = frozenset()) -> list[tuple[int, float]]:
    usable = net.usable(mode, avoid)
    hits = [net.nearest(p, usable) for p in points]
    assert all(h is not None for h in hits)
    return [h[:2] for h in hits]  # type: ignore[index]


def _go(net: RoadNetwork, points: list, **kw) -> RouteResult:
    found = route(net, points, snapped=_snap(net, points, kw.get("mode", "driving"),
                                             kw.get("avoid", frozenset())), **kw)
    assert found is not None
    return found


def _length(line: list[list[float]]) -> float:
    c = np.asarray(line)
    return float(np.sum(haversine_m(c[:-1, 0], c[:-1, 1], c[1:, 0], c[1:, 1])))


def test_legs_join_at_their_waypoints_and_add_up(net: RoadNetwork) -> None:
    points = [ALV, ORD, CAN]
    snapped = _snap(net, points)
    found = _go(net, points)
    assert len(found.legs) == len(found.coordinates) == 2
    for leg, line, (a, b) in zip(found.legs, found.coordinates, pairwise(snapped), strict=True):
        assert line[0] == pytest.approx(list(net.position(*a)), abs=2e-6)
        assert line[-1] == pytest.approx(list(net.position(*b)), abs=2e-6)
        assert _length(line) == pytest.approx(leg["distanceInMeters"], rel=0.002)
        assert leg["durationTrafficInSeconds"] == pytest.approx(leg["durationInSeconds"])
    assert found.coordinates[0][-1] == found.coordinates[1][0]
    assert found.distance_m == pytest.approx(sum(leg["distanceInMeters"] for leg in found.legs))
    assert found.duration_s == pytest.approx(sum(leg["durationInSeconds"] for leg in found.legs))
    assert found.distance_m > float(haversine_m(*ALV, *ORD)) + float(haversine_m(*ORD, *CAN))


def test_arcs_are_driven_in_their_allowed_direction_and_follow_on(net: RoadNetwork) -> None:
    found = _go(net, [SJL, CAN])
    assert all(net.arc_ok[a] for a in found.arcs)
    for a, b in pairwise(found.arcs):
        assert net.arc_head(a) == net.arc_tail(b) or a >> 1 == b >> 1


def test_a_star_finds_what_dijkstra_finds(net: RoadNetwork) -> None:
    for mode, optimize in (("driving", "fastestWithoutTraffic"), ("driving", "shortest"),
                           ("truck", "fastestWithoutTraffic")):
        costs = net.arc_costs(mode, optimize)
        rate = 1.0 if optimize == "shortest" else net.min_seconds_per_m
        a, b = _snap(net, [SJL, CAN], mode)
        guided, plain = _leg(net, a, b, costs, rate), _leg(net, a, b, costs, 0.0)
        assert guided is not None and plain is not None
        assert guided[0] == pytest.approx(plain[0]), (mode, optimize)


def test_shortest_is_no_longer_and_fastest_no_slower(net: RoadNetwork) -> None:
    fastest = _go(net, [SJL, CAN], optimize="fastestWithoutTraffic")
    shortest = _go(net, [SJL, CAN], optimize="shortest")
    assert shortest.distance_m <= fastest.distance_m + 1e-6
    assert fastest.duration_s <= shortest.duration_s + 1e-6


def test_avoided_and_barred_roads_are_kept_off(net: RoadNetwork) -> None:
    # across a toll road: from the road before it to the road after it
    toll = int(np.flatnonzero(net.toll & net.main)[0])
    u, v = int(net.edge_u[toll]), int(net.edge_v[toll])
    before = next(a >> 1 for arcs in net.out for a in arcs
                  if net.arc_head(a) == u and a >> 1 != toll and net.main[a >> 1])
    after = next(a >> 1 for a in net.out[v] if a >> 1 != toll and net.main[a >> 1])
    ends = [(before, float(net.edge_len[before]) / 2), (after, float(net.edge_len[after]) / 2)]
    points = [net.position(*p) for p in ends]
    through = route(net, points, snapped=ends)
    assert through is not None and toll in {x >> 1 for x in through.arcs}
    around = route(net, points, snapped=ends, avoid=frozenset({"tollRoads"}))
    assert around is None or not any(net.toll[x >> 1] for x in around.arcs)
    # Canillo to Ordino: through a tunnel, or over the hill when tunnels are avoided
    assert any(net.tunnel[x >> 1] for x in _go(net, [CAN, ORD]).arcs)
    above = _go(net, [CAN, ORD], avoid=frozenset({"tunnels"}))
    assert not any(net.tunnel[x >> 1] for x in above.arcs)
    for a, b in ((ALV, CAN), (SJL, ORD), (ALV, TOWNS["Soldeu"])):
        truck = _go(net, [a, b], mode="truck")
        assert all(net.truck_ok[x >> 1] for x in truck.arcs)
        car = _go(net, [a, b])
        assert truck.duration_s >= car.duration_s


def test_traffic_slows_the_route_and_a_closed_road_is_driven_round(net: RoadNetwork) -> None:
    base = _go(net, [SJL, CAN])
    busiest = max({x >> 1 for x in base.arcs}, key=lambda e: net.edge_len[e])
    slow = {e: 0.5 for e in {x >> 1 for x in base.arcs}}
    ignored = _go(net, [SJL, CAN], traffic=slow)
    assert ignored.arcs == base.arcs  # without traffic, the route ignores it...
    assert ignored.traffic_duration_s == pytest.approx(2 * base.duration_s, rel=0.05)
    closed = _go(net, [SJL, CAN], optimize="fastestWithTraffic", traffic={busiest: 0.0})
    assert busiest not in {x >> 1 for x in closed.arcs}  # ...with traffic, it drives round
    assert closed.duration_s >= base.duration_s


def test_no_route_when_every_road_is_closed(net: RoadNetwork) -> None:
    everything = {e: 0.0 for e in range(net.n_edges)}
    snapped = _snap(net, [SJL, CAN])
    assert route(net, [SJL, CAN], optimize="fastestWithTraffic", traffic=everything,
                 snapped=snapped) is None
    assert routes(net, [SJL, CAN], optimize="fastestWithTraffic", traffic=everything,
                  snapped=snapped, count=3) == []


def test_waypoints_must_be_snapped_first(net: RoadNetwork) -> None:
    with pytest.raises(ValueError, match="snap"):
        route(net, [SJL, CAN])


def test_a_waypoint_on_the_same_edge_ahead_is_reached_along_it(net: RoadNetwork) -> None:
    e = next(int(e) for e in np.flatnonzero(net.main & (net.edge_len > 200))
             if net.arc_ok[2 * e] and net.arc_ok[2 * e + 1])
    a, b = (e, 20.0), (e, 120.0)
    found = route(net, [net.position(*a), net.position(*b)], snapped=[a, b],
                  optimize="shortest")
    assert found is not None
    assert found.distance_m == pytest.approx(100.0)
    assert {x >> 1 for x in found.arcs} == {e}


def test_alternatives_differ_from_the_main_route(net: RoadNetwork) -> None:
    snapped = _snap(net, [ALV, CAN])
    found = routes(net, [ALV, CAN], count=3, snapped=snapped)
    main = route(net, [ALV, CAN], snapped=snapped)
    assert found and main is not None and found[0].arcs == main.arcs
    assert 1 <= len(found) <= 3
    for alt in found[1:]:
        assert set(alt.arcs) != set(main.arcs)
        assert alt.duration_s <= 1.8 * main.duration_s + 120
        assert alt.duration_s >= main.duration_s - 1e-6  # the main route is the fastest
    assert len({frozenset(r.arcs) for r in found}) == len(found)
    assert routes(net, [ALV, CAN], count=1, snapped=snapped)[0].arcs == main.arcs


def test_routes_are_repeatable(net: RoadNetwork) -> None:
    first = _go(net, [SJL, ORD, CAN])
    again = _go(net, [SJL, ORD, CAN])
    assert first == again
    assert math.isfinite(first.duration_s) and first.duration_s > 0


# ------------------------------------------------------------------ one to many
@pytest.mark.parametrize("mode", ["driving", "truck"])
@pytest.mark.parametrize("optimize", ["fastestWithoutTraffic", "shortest"])
def test_one_search_gives_every_trip_a_route_would(net, mode, optimize) -> None:
    from toolkit.sandbox.maps.roads.routing import measures, reach, spread

    points = [ALV, CAN, SJL, ORD]
    snapped = _snap(net, points, mode)
    costs = net.arc_costs(mode, optimize)
    m = measures(net, mode)
    for i, a in enumerate(snapped):
        forward = spread(net, a, costs, m)
        for j, b in enumerate(snapped):
            backward = spread(net, b, costs, m, reverse=True)
            found = route(net, [points[i], points[j]], mode=mode, optimize=optimize,
                          snapped=[a, b])
            for search, other in ((forward, b), (backward, a)):
                _, metres, seconds, traffic = reach(net, search, other, costs, m)
                assert metres == pytest.approx(found.distance_m, abs=0.01)
                assert seconds == pytest.approx(found.duration_s, abs=0.01)
                assert traffic == pytest.approx(seconds)  # no traffic given


def test_a_limit_stops_the_search(net) -> None:
    from toolkit.sandbox.maps.roads.routing import measures, spread

    start = _snap(net, [ALV])[0]
    costs = net.arc_costs("driving", "fastestWithoutTraffic")
    m = measures(net, "driving")
    full, near = spread(net, start, costs, m), spread(net, start, costs, m, limit=300.0)
    reached = [c for c in near.cost if c < math.inf]
    assert reached and max(reached) <= 300.0
    assert sum(c < math.inf for c in full.cost) > len(reached)
    assert all(full.cost[n] == c for n, c in enumerate(near.cost) if c < math.inf)


def test_walking_goes_either_way_along_one_way_streets(net) -> None:
    from toolkit.sandbox.maps.roads.routing import measures, reach, spread

    one_way = next(e for e in range(net.n_edges) if net.arc_ok[2 * e] != net.arc_ok[2 * e + 1]
                   and net.main[e] and not net.limited[e])
    barred = 2 * one_way + (1 if net.arc_ok[2 * one_way] else 0)
    length = float(net.edge_len[one_way])
    a, b = (one_way, 0.1 * length), (one_way, 0.9 * length)
    if barred % 2 == 0:  # the way u -> v is barred: walk it
        start, end = a, b
    else:
        start, end = b, a
    walk = net.arc_costs("walking", "fastestWithoutTraffic")
    m = measures(net, "walking")
    found = reach(net, spread(net, start, walk, m, both_ways=True), end, walk, m)
    assert found is not None and found[1] == pytest.approx(0.8 * length)
    assert found[2] == pytest.approx(0.8 * length / (5.0 / 3.6))
    drive = net.arc_costs("driving", "fastestWithoutTraffic")
    by_car = reach(net, spread(net, start, drive, measures(net, "driving")), end, drive,
                   measures(net, "driving"))
    assert by_car is None or by_car[1] > 0.8 * length  # a car goes round
