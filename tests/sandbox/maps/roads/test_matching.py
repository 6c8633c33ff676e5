"""Map matching: synthetic GPS traces, each matched point on a road of the network near its
input, in input order along the road sequence, interpolated points on the path between, the
road distance, points that cannot be matched left out, the mode's restrictions kept to."""

from __future__ import annotations

import numpy as np
import pytest
import shapely

from tests.maps.conftest import TOWNS, drive
from toolkit._core.geo import haversine_m
from toolkit.sandbox.maps.roads.matching import MatchResult, match, sample_trace
from toolkit.sandbox.maps.roads.network import RoadNetwork, network
from toolkit.sandbox.maps.roads.routing import route

ALV, ENC = TOWNS["Andorra la Vella"], TOWNS["Encamp"]


@pytest.fixture(scope="module")
def net() -> RoadNetwork:
    return network()


@pytest.fixture(scope="module")
def trace() -> np.ndarray:
    """About 8 km of driving, a point every 20 m with 4 m of noise."""
    return drive([ALV, ENC], spacing_m=20.0, noise_m=4.0, seed=3)


@pytest.fixture(scope="module")
def road(net: RoadNetwork) -> list[list[float]]:
    usable = net.usable("driving")
    snapped = [net.nearest(p, usable)[:2] for p in (ALV, ENC)]  # type: ignore[index]
    found = route(net, [ALV, ENC], snapped=snapped)
    assert found is not None
    return [c for leg in found.coordinates for c in leg]


def _off_road_m(net: RoadNetwork, edge: int, lon: float, lat: float) -> float:
    point = shapely.points(net.proj.forward(np.asarray([[lon, lat]]))[0])
    return float(shapely.distance(net.lines[edge], point))


def _length(line: list[list[float]] | np.ndarray) -> float:
    c = np.asarray(line)
    return float(np.sum(haversine_m(c[:-1, 0], c[:-1, 1], c[1:, 0], c[1:, 1])))


# ---------------------------------------------------------------------- synthetic traces
def test_sample_traces_are_spaced_noisy_and_repeatable(road: list[list[float]]) -> None:
    exact = sample_trace(road, spacing_m=25.0, noise_m=0.0)
    gaps = haversine_m(exact[:-1, 0], exact[:-1, 1], exact[1:, 0], exact[1:, 1])
    assert len(exact) == int(np.ceil(_length(road) / 25.0))
    assert np.all(gaps <= 25.0 + 0.1)
    assert np.median(gaps) == pytest.approx(25.0, abs=0.5)  # less only where the road turns
    assert np.allclose(exact[0], road[0])
    noisy = sample_trace(road, spacing_m=25.0, noise_m=5.0, seed=1)
    assert np.array_equal(noisy, sample_trace(road, spacing_m=25.0, noise_m=5.0, seed=1))
    assert not np.array_equal(noisy, sample_trace(road, spacing_m=25.0, noise_m=5.0, seed=2))
    off = haversine_m(noisy[:, 0], noisy[:, 1], exact[:, 0], exact[:, 1])
    assert 3.0 < float(np.mean(off)) < 9.0  # 5 m of noise per axis: about 6.3 m on average


# ---------------------------------------------------------------------- matching
def test_an_empty_trace_matches_nothing(net: RoadNetwork) -> None:
    assert match(net, np.zeros((0, 2))) == MatchResult([], 0.0)


def test_matched_points_lie_on_roads_near_their_input(net: RoadNetwork,
                                                      trace: np.ndarray) -> None:
    result = match(net, trace)
    indexes = [p["inputIndex"] for p in result.points]
    assert indexes == sorted(set(indexes)) and len(indexes) >= 0.95 * len(trace)
    for p in result.points:
        assert p["isInterpolated"] is False
        assert _off_road_m(net, p["edge"], p["lon"], p["lat"]) < 0.5
        given = trace[p["inputIndex"]]
        assert float(haversine_m(given[0], given[1], p["lon"], p["lat"])) <= 50.0
        assert p["name"] == net.road_name(p["edge"])
        assert "speedLimitInKilometersPerHour" not in p


def test_the_road_distance_is_the_length_driven(net: RoadNetwork, trace: np.ndarray,
                                                road: list[list[float]]) -> None:
    result = match(net, trace)
    first, last = trace[0], trace[-1]
    assert result.road_distance_m == pytest.approx(_length(road), rel=0.05)
    # never less than the straight line between the first and last matched points
    a, b = result.points[0], result.points[-1]
    assert result.road_distance_m >= float(haversine_m(a["lon"], a["lat"], b["lon"], b["lat"]))
    assert float(haversine_m(*first, *last)) > 3000


def test_interpolated_points_fill_the_path_between(net: RoadNetwork,
                                                   trace: np.ndarray) -> None:
    plain = match(net, trace)
    filled = match(net, trace, interpolate=True, speed_limit=True)
    snapped = [p for p in filled.points if not p["isInterpolated"]]
    added = [p for p in filled.points if p["isInterpolated"]]
    assert [(p["lon"], p["lat"]) for p in snapped] == [(p["lon"], p["lat"]) for p in plain.points]
    assert added and all(p["inputIndex"] is None for p in added)
    assert filled.road_distance_m == pytest.approx(plain.road_distance_m)
    for p in filled.points:
        assert _off_road_m(net, p["edge"], p["lon"], p["lat"]) < 0.5
        assert p["speedLimitInKilometersPerHour"] == float(net.limit_kmh[p["edge"]])
    # the whole line, snapped and interpolated points in order, is as long as the road driven
    line = [[p["lon"], p["lat"]] for p in filled.points]
    assert _length(line) == pytest.approx(filled.road_distance_m, rel=0.02)


def test_points_too_far_from_any_road_are_left_out(net: RoadNetwork, trace: np.ndarray) -> None:
    stray = trace.copy()
    stray[10] = [2.35, 48.85]  # Paris
    stray[20] = stray[20] + np.array([0.01, 0.0])  # about 800 m off the road
    result = match(net, stray)
    indexes = {p["inputIndex"] for p in result.points}
    assert 10 not in indexes and 20 not in indexes
    assert {9, 11, 19, 21} <= indexes
    for p in result.points:
        given = stray[p["inputIndex"]]
        assert float(haversine_m(given[0], given[1], p["lon"], p["lat"])) <= 50.0


def test_a_wider_radius_reaches_further_roads(net: RoadNetwork, trace: np.ndarray) -> None:
    shifted = trace + np.array([0.0, 0.0006])  # every point about 67 m north of where it was driven
    near = match(net, shifted, radius_m=50.0)
    wide = match(net, shifted, radius_m=150.0)
    assert len(wide.points) > len(near.points)
    for p in wide.points:
        given = shifted[p["inputIndex"]]
        assert float(haversine_m(given[0], given[1], p["lon"], p["lat"])) <= 150.0


def test_trucks_are_matched_onto_roads_they_may_use(net: RoadNetwork) -> None:
    barred = int(np.flatnonzero(~net.truck_ok & net.main & (net.edge_len > 150))[0])
    line = net.edge_coords[barred]
    points = sample_trace(line, spacing_m=10.0, noise_m=0.0)
    by_car = match(net, points)
    assert barred in {p["edge"] for p in by_car.points}
    by_truck = match(net, points, mode="truck")
    assert all(net.truck_ok[p["edge"]] for p in by_truck.points)


def test_matching_is_repeatable(net: RoadNetwork, trace: np.ndarray) -> None:
    assert match(net, trace, interpolate=True) == match(net, trace, interpolate=True)
