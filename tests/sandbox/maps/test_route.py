"""The sandbox's route service refuses what the real one refuses: a bad item fails alone in its
batch, more than 100 items, too few or too many points, points too far apart."""

from __future__ import annotations

import pytest

import toolkit
from tests.maps.conftest import TOWNS
from toolkit._core.messages import Request

ALV, CAN = TOWNS["Andorra la Vella"], TOWNS["Canillo"]


def test_sandbox_checks_items_and_batches(conn) -> None:
    pipe = conn.pipeline("maps")
    good = {"type": "FeatureCollection",
            "features": [{"type": "Feature", "geometry": {"type": "Point", "coordinates": p},
                          "properties": {"pointIndex": i, "pointType": "waypoint"}}
                         for i, p in enumerate((list(ALV), list(CAN)))]}
    bad = {**good, "maxRouteCount": 9, "optionalId": "bad"}
    body = pipe.send(Request("POST", "/route/directions:batch",
                             params={"api-version": "2025-01-01"},
                             json={"batchItems": [bad, good]})).json()
    assert body["summary"] == {"successfulRequests": 1, "totalRequests": 2}
    assert body["batchItems"][0]["optionalId"] == "bad"
    assert body["batchItems"][0]["error"]["code"] == "BadRequest"
    assert "maxRouteCount" in body["batchItems"][0]["error"]["message"]
    with pytest.raises(toolkit.ApiError) as info:
        pipe.send(Request("POST", "/route/directions:batch", params={"api-version": "2025-01-01"},
                          json={"batchItems": [good] * 101}, idempotent=False))
    assert info.value.status == 400 and "1 to 100" in info.value.message


def test_sandbox_enforces_the_service_limits(conn) -> None:
    pipe = conn.pipeline("maps")

    def body(points):
        return {"type": "FeatureCollection",
                "features": [{"type": "Feature", "properties": {},
                              "geometry": {"type": "Point", "coordinates": list(p)}}
                             for p in points]}

    cases = [([ALV] * 5001, "2 to 5000"), ([ALV], "2 to 5000"), ([ALV, (1.60, 42.60)], "6 km")]
    for points, text in cases:
        with pytest.raises(toolkit.ApiError) as info:
            pipe.send(Request("POST", "/route/snapToRoads", params={"api-version": "2025-01-01"},
                              json=body(points)))
        assert info.value.status == 400 and text in info.value.message
        assert info.value.code == "BadRequest"
