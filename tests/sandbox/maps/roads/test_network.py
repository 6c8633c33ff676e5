"""The road graph of Andorra: loading, directed arcs (one-way roads honoured), speed limits,
restrictions per mode and ``avoid``, arc costs with traffic, geometry along edges, nearest roads,
the strongly connected main part."""

from __future__ import annotations

import math

import numpy as np
import pytest

from toolkit._core.geo import haversine_m
from toolkit._data.andorra import road_records
from toolkit.sandbox.maps.roads.network import (
    DEFAULT_LIMITS,
    FREE_FLOW,
    TRUCK_MAX_KMH,
    RoadNetwork,
    _number,
    network,
)


@pytest.fixture(scope="module")
def net() -> RoadNetwork:
    return network()


@pytest.mark.parametrize("text, value", [
    ("50", 50.0), ("50 km/h", 50.0), ("30;50", 30.0), ("3.5 t", 3.5), ("4,2 m", 4.2),
    ("3.8m", 3.8), (70, 70.0), (None, None), ("signals", None), ("", None),
])
def test_numbers_of_the_tags(text: object, value: float | None) -> None:
    assert _number(text) == value


def test_the_network_is_loaded_once_and_built_the_same_from_the_data(net: RoadNetwork) -> None:
    assert network() is net
    again = RoadNetwork(road_records())
    assert again.n_edges == net.n_edges > 1000
    for name in ("edge_u", "edge_v", "edge_len", "limit_kmh", "arc_ok", "truck_ok", "main"):
        assert np.array_equal(getattr(again, name), getattr(net, name)), name
    assert again.out == net.out


def test_arcs_run_both_ways_unless_the_road_is_one_way(net: RoadNetwork) -> None:
    for e in range(net.n_edges):
        way = net.way_of(e)
        oneway = str(way.get("oneway", "")).lower()
        forward, backward = bool(net.arc_ok[2 * e]), bool(net.arc_ok[2 * e + 1])
        if oneway == "-1":
            assert (forward, backward) == (False, True)
        elif oneway in ("yes", "true", "1") or way.get("junction") == "roundabout":
            assert (forward, backward) == (True, False)
        else:
            assert forward and backward
        u, v = int(net.edge_u[e]), int(net.edge_v[e])
        assert (net.arc_tail(2 * e), net.arc_head(2 * e)) == (u, v)
        assert (net.arc_tail(2 * e + 1), net.arc_head(2 * e + 1)) == (v, u)
    listed = sorted(a for arcs in net.out for a in arcs)
    assert listed == sorted(np.flatnonzero(net.arc_ok).tolist())
    for node, arcs in enumerate(net.out):
        assert all(net.arc_tail(a) == node for a in arcs)


def test_edges_follow_their_geometry(net: RoadNetwork) -> None:
    for e in range(0, net.n_edges, 7):
        coords = net.edge_coords[e]
        assert np.array_equal(coords[0], net.lonlat[net.edge_u[e]])
        assert np.array_equal(coords[-1], net.lonlat[net.edge_v[e]])
        length = float(np.sum(haversine_m(coords[:-1, 0], coords[:-1, 1], coords[1:, 0],
                                          coords[1:, 1])))
        assert net.edge_len[e] == pytest.approx(max(length, 0.01))
        assert net.arc_coords(2 * e + 1) == net.arc_coords(2 * e)[::-1]
        assert net.arc_len[2 * e] == net.arc_len[2 * e + 1] == net.edge_len[e]


def test_speed_limits_tagged_or_by_road_class(net: RoadNetwork) -> None:
    for e in range(net.n_edges):
        tagged = _number(net.way_of(e).get("maxspeed"))
        assert bool(net.limit_tagged[e]) is (tagged is not None)
        expected = tagged or DEFAULT_LIMITS.get(net.highway[e], 40)
        assert net.limit_kmh[e] == expected
        car, truck = net.speed_kmh(e), net.speed_kmh(e, "truck")
        assert car == max(expected * FREE_FLOW, 5.0)
        assert 5.0 <= truck <= min(car, TRUCK_MAX_KMH) or truck == 5.0
    fastest = 3.6 / (net.limit_kmh.max() * FREE_FLOW)
    assert net.min_seconds_per_m == pytest.approx(fastest)


def test_usable_edges_per_mode_and_avoid(net: RoadNetwork) -> None:
    everything = net.usable("driving")
    assert everything.all()
    assert np.array_equal(net.usable("truck"), net.truck_ok) and not net.truck_ok.all()
    no_tolls = net.usable("driving", frozenset({"tollRoads"}))
    assert net.toll.any() and np.array_equal(no_tolls, ~net.toll)
    both = net.usable("truck", frozenset({"tollRoads", "tunnels"}))
    assert np.array_equal(both, net.truck_ok & ~net.toll & ~net.tunnel)
    for e in np.flatnonzero(~net.truck_ok)[:50]:
        way = net.way_of(int(e))
        barred = net.highway[e] in ("service", "living_street") or \
            way.get("hgv") in ("no", "destination")
        small = any(_number(way.get(k)) is not None and _number(way.get(k)) < limit
                    for k, limit in (("maxweight", 7.5), ("maxheight", 4.0), ("width", 3.0)))
        assert barred or small


def test_arc_costs(net: RoadNetwork) -> None:
    metres = net.arc_costs("driving", "shortest")
    seconds = net.arc_costs("driving", "fastestWithoutTraffic")
    for a in range(0, 2 * net.n_edges, 5):
        if not net.arc_ok[a]:
            assert metres[a] == seconds[a] == math.inf
            continue
        assert metres[a] == net.edge_len[a >> 1]
        assert seconds[a] == pytest.approx(net.arc_seconds(a, "driving"))
    truck = net.arc_costs("truck", "fastestWithoutTraffic")
    barred = int(np.flatnonzero(~net.truck_ok & net.arc_ok[0::2])[0])
    assert truck[2 * barred] == math.inf
    ok = int(np.flatnonzero(net.truck_ok & net.arc_ok[0::2] & net.arc_ok[1::2])[0])
    slowed = net.arc_costs("driving", "fastestWithoutTraffic", traffic={ok: 0.5, barred: 0.0})
    assert slowed[2 * ok] == pytest.approx(2 * seconds[2 * ok])
    assert slowed[2 * ok + 1] == pytest.approx(2 * seconds[2 * ok + 1])
    assert slowed[2 * barred] == math.inf  # a closed road
    # traffic never leaks into the costs without it
    assert net.arc_costs("driving", "fastestWithoutTraffic")[2 * ok] == seconds[2 * ok]


def test_positions_and_pieces_along_an_edge(net: RoadNetwork) -> None:
    e = int(np.argmax([len(c) for c in net.edge_coords]))  # a winding edge
    length = float(net.edge_len[e])
    first, last = net.edge_coords[e][0], net.edge_coords[e][-1]
    assert net.position(e, 0.0) == pytest.approx(tuple(first))
    assert net.position(e, length) == pytest.approx(tuple(last))
    assert net.position(e, -5.0) == net.position(e, 0.0)  # clamped to the edge
    assert net.position(e, length + 5) == net.position(e, length)
    piece = net.piece(e, length / 4, 3 * length / 4)
    assert piece[0] == pytest.approx(list(net.position(e, length / 4)))
    assert piece[-1] == pytest.approx(list(net.position(e, 3 * length / 4)))
    along = float(np.sum(haversine_m(*np.asarray(piece[:-1]).T, *np.asarray(piece[1:]).T)))
    assert along == pytest.approx(length / 2, rel=0.01)
    assert net.piece(e, 3 * length / 4, length / 4) == piece[::-1]
    # along the reverse arc, offsets run from the other end
    assert net.arc_piece(2 * e + 1, 0.0, length / 4) == \
        net.piece(e, length, 3 * length / 4)


def test_nearest_finds_the_road_a_point_lies_on(net: RoadNetwork) -> None:
    for e in np.flatnonzero(net.main)[::97]:
        e = int(e)
        half = float(net.edge_len[e]) / 2
        hit = net.nearest(net.position(e, half))
        assert hit is not None
        edge, offset, dist = hit
        assert dist < 0.5
        if edge == e:
            assert offset == pytest.approx(half, abs=1.0)
    assert net.nearest((2.35, 48.85)) is None  # Paris: no road within reach


def test_nearest_keeps_to_usable_edges_of_the_main_part(net: RoadNetwork) -> None:
    usable = net.usable("truck")
    for e in np.flatnonzero(~net.truck_ok)[::11]:
        point = net.position(int(e), float(net.edge_len[e]) / 2)
        hit = net.nearest(point, usable)
        if hit is not None:
            assert net.truck_ok[hit[0]] and net.main[hit[0]] and hit[2] > 0


def _reach(net: RoadNetwork, start: int, forward: bool) -> set[int]:
    seen, todo = {start}, [start]
    back: dict[int, list[int]] = {}
    if not forward:
        for arcs in net.out:
            for a in arcs:
                back.setdefault(net.arc_head(a), []).append(net.arc_tail(a))
    while todo:
        n = todo.pop()
        nxt = [net.arc_head(a) for a in net.out[n]] if forward else back.get(n, [])
        for m in nxt:
            if m not in seen:
                seen.add(m)
                todo.append(m)
    return seen


def test_the_main_part_is_strongly_connected_and_the_largest(net: RoadNetwork) -> None:
    nodes = set(net.edge_u[net.main].tolist()) | set(net.edge_v[net.main].tolist())
    start = next(iter(nodes))
    both = _reach(net, start, True) & _reach(net, start, False)
    assert nodes <= both  # every main node can be reached from and can reach every other
    assert net.main.sum() > net.n_edges / 2


def test_walking_takes_every_road_but_the_limited_access_ones_at_a_walking_pace(net) -> None:
    from toolkit.sandbox.maps.roads.network import WALKING_KMH

    walkable = net.usable("walking")
    assert (walkable == ~net.limited).all()  # (Andorra's roads have none)
    assert {net.speed_kmh(e, "walking") for e in range(0, net.n_edges, 97)} == {WALKING_KMH}
    costs = net.arc_costs("walking", "fastestWithoutTraffic")
    # one-way streets both ways
    one_way = next(e for e in range(net.n_edges) if not net.arc_ok[2 * e + 1] and
                   not net.limited[e])
    assert costs[2 * one_way + 1] == pytest.approx(net.edge_len[one_way] / (WALKING_KMH / 3.6))
    assert net.arc_costs("driving", "fastestWithoutTraffic")[2 * one_way + 1] == math.inf
