"""The sandbox's reachable range answers as the service: the snapped center and the boundary
polygon (counterclockwise, with its bbox) for a Point feature and one budget, and a 400 for what
the service refuses."""

from __future__ import annotations

import pytest
import shapely

import toolkit
from tests.maps.conftest import TOWNS
from toolkit._core.messages import Request
from toolkit.sandbox.maps.roads.network import RoadNetwork, network
from toolkit.sandbox.server import Sandbox

ALV = TOWNS["Andorra la Vella"]

@pytest.fixture(scope="module")
def net() -> RoadNetwork:
    return network()



def origin(point, **properties):
    return {"type": "Feature", "geometry": {"type": "Point", "coordinates": list(point)},
            "properties": properties}


def post(conn, body):
    return conn.pipeline("maps").send(Request("POST", "/route/range",
                                              params={"api-version": "2025-01-01"}, json=body,
                                              content_type="application/geo+json"))


def test_the_answer_is_the_center_and_the_boundary(conn, net) -> None:
    answer = post(conn, origin(ALV, timeBudgetInSec=600))
    assert answer.headers["content-type"].startswith("application/geo+json")
    body = answer.json()
    assert body["type"] == "FeatureCollection"
    center, boundary = body["features"]
    assert center["properties"] == {"type": "center"}
    assert boundary["properties"] == {"type": "boundary"}
    point = shapely.geometry.shape(center["geometry"])
    polygon = shapely.geometry.shape(boundary["geometry"])
    # the center is the origin on its nearest road
    edge, offset, _ = net.nearest(ALV, net.usable("driving"))
    assert point.distance(shapely.Point(net.position(edge, offset))) < 2e-5
    assert polygon.is_valid and polygon.exterior.is_ccw and polygon.covers(point)
    assert boundary["bbox"] == list(polygon.bounds)


@pytest.mark.parametrize(("body", "text"), [
    (origin(ALV), "exactly one"),
    (origin(ALV, timeBudgetInSec=600, distanceBudgetInMeters=100), "exactly one"),
    (origin(ALV, timeBudgetInSec=21_601), "from 0 to 21600"),
    (origin(ALV, distanceBudgetInMeters=-1), "from 0 to 500000"),
    (origin(ALV, timeBudgetInSec="600"), "timeBudgetInSec"),
    (origin(ALV, timeBudgetInSec=600, travelMode="walking"), "travelMode"),
    (origin(ALV, timeBudgetInSec=600, optimizeRoute="fastest"), "optimizeRoute"),
    (origin(ALV, timeBudgetInSec=600, avoid=["mountains"]), "avoid"),
    (origin(ALV, timeBudgetInSec=600, isSimplifiedPolygon=False), "isSimplifiedPolygon"),
    (origin(ALV, timeBudgetInSec=600, departAt="soon"), "departAt"),
    (origin((1.5, 95.0), timeBudgetInSec=600), "out of range"),
    (origin((1.30, 42.60), timeBudgetInSec=600), "No routable road"),
    ({**origin(ALV, timeBudgetInSec=600), "type": "FeatureCollection"}, "Feature"),
    ({**origin(ALV, timeBudgetInSec=600), "geometry": {"type": "Polygon"}}, "Point"),
    ({**origin(ALV), "properties": None}, "budget"),
])
def test_what_the_service_refuses_is_a_400(conn, body, text) -> None:
    with pytest.raises(toolkit.ApiError) as info:
        post(conn, body)
    assert info.value.status == 400 and info.value.code == "BadRequest"
    assert text in info.value.message


@pytest.mark.parametrize("now", ["2026-11-20T09:00:00Z", "2026-11-20T10:30:00Z",
                                 "2026-11-20T17:30:00Z", "2026-12-07T08:15:00Z"])
def test_live_traffic_narrows_the_range_where_roads_are_slowed(now) -> None:
    # every incident of the sandbox slows or closes roads: with them, the area is no larger
    # (the polygon around fewer roads is never larger: a concave hull was, by up to 10 %, from
    # about 09:10 of the world day); a sandbox of its own at each instant (the session's clock
    # moves on)
    with Sandbox(seed=7, now=now) as sb:
        conn = toolkit.connect(sandbox=sb, progress=False)
        try:
            free = shapely.geometry.shape(post(conn, origin(ALV, timeBudgetInSec=900)).json()[
                "features"][1]["geometry"])
            live = shapely.geometry.shape(post(conn, origin(
                ALV, timeBudgetInSec=900, optimizeRoute="fastestWithTraffic")).json()[
                "features"][1]["geometry"])
        finally:
            conn.close()
    assert live.area <= free.area * 1.02
