"""The sandbox's route matrix answers as the service: the tables of limits (a 400 for what no row
takes, OUT_OF_REGION beyond the box of a row that has one), the asynchronous matrix's 202, its
status through NotStarted and Running to Completed, its result, and 404 once its 24 hours have
passed or for an id it never gave."""

from __future__ import annotations

from datetime import timedelta

import pytest
import requests

import toolkit
from tests.maps.conftest import TOWNS
from toolkit._core.messages import Request

ALV, CAN, ORD = TOWNS["Andorra la Vella"], TOWNS["Canillo"], TOWNS["Ordino"]
VERSION = {"api-version": "2025-01-01"}


def matrix(origins, destinations, **options):
    return {"type": "FeatureCollection", "features": [
        {"type": "Feature", "geometry": {"type": "MultiPoint", "coordinates": [list(p) for p in
                                                                               points]},
         "properties": {"pointType": kind}}
        for kind, points in (("origins", origins), ("destinations", destinations))], **options}


def post(conn, path, body):
    return conn.pipeline("maps").send(Request("POST", path, params=VERSION, json=body,
                                              expected=(200, 202),
                                              content_type="application/geo+json"))


def refused(conn, path, body) -> toolkit.ApiError:
    with pytest.raises(toolkit.ApiError) as info:
        post(conn, path, body)
    assert info.value.status == 400 and info.value.code == "BadRequest"
    return info.value


def test_the_synchronous_matrix_answers_every_cell(conn) -> None:
    answer = post(conn, "/route/matrix", matrix([ALV, CAN], [ORD]))
    assert answer.status == 200 and answer.headers["content-type"].startswith(
        "application/geo+json")
    body = answer.json()
    assert body["type"] == "Feature" and body["geometry"] is None
    assert body["properties"]["summary"] == {"successfulCount": 2, "totalCount": 2}
    cells = body["properties"]["matrix"]
    assert [(c["originIndex"], c["destinationIndex"]) for c in cells] == [(0, 0), (1, 0)]
    assert all(c["statusCode"] == 200 and c["durationInSeconds"] > 0 for c in cells)
    assert all("departureAt" not in c for c in cells)  # the time did not matter


@pytest.mark.parametrize(("origins", "destinations", "options", "text"), [
    (201, 1, {"avoid": ["tollRoads"]}, "does not meet the limits"),
    (1001, 1, {}, "does not meet the limits"),
    (1, 1, {"optimizeRoute": "shortest"}, "optimizeRoute 'shortest'"),
    (1, 1, {"travelMode": "bike"}, "travelMode"),
    (1, 1, {"traffic": "live"}, "traffic=live"),
    (1, 1, {"departAt": "now", "arriveAt": "2026-11-20T09:00:00Z"}, "arriveAt"),
    (1, 1, {"avoid": ["tollRoads"], "travelMode": "walking"}, "avoid"),
    (1, 1, {"departAt": "whenever"}, "departAt"),
])
def test_the_synchronous_matrix_refuses_what_the_service_refuses(conn, origins, destinations,
                                                                 options, text) -> None:
    err = refused(conn, "/route/matrix", matrix([ALV] * origins, [CAN] * destinations,
                                                **options))
    assert text in err.message


def test_the_body_must_hold_origins_and_destinations(conn) -> None:
    body = matrix([ALV], [CAN])
    assert "origins" in refused(conn, "/route/matrix", {**body, "features": body[
        "features"][1:]}).message
    body["features"][0]["geometry"]["coordinates"] = [[1.5, 95.0]]
    assert "out of range" in refused(conn, "/route/matrix", body).message
    assert "FeatureCollection" in refused(conn, "/route/matrix", [1, 2]).message


def test_a_region_row_leaves_the_points_outside_its_box_out_of_region(conn) -> None:
    # 150 cells with live traffic: the row of 200 cells within a 400 km box
    far = (9.19, 45.46)  # Milan: 500 km from Andorra
    body = matrix([ALV] * 14 + [far], [CAN] * 10, traffic="live", departAt="now")
    cells = post(conn, "/route/matrix", body).json()["properties"]["matrix"]
    codes = {c.get("error", {}).get("code") for c in cells if c["originIndex"] == 14}
    assert codes == {"OUT_OF_REGION"}
    assert all(c["statusCode"] == 200 for c in cells if c["originIndex"] < 14)
    # with the defaults only, 2,500 cells have no box: Milan has no road of Andorra near it
    # either way, so its cells are out of region too, and the others are routed
    cells = post(conn, "/route/matrix", matrix([ALV, far], [CAN])).json()["properties"]["matrix"]
    assert [c["statusCode"] for c in cells] == [200, 400]


def test_the_asynchronous_matrix_runs_its_course(conn, sandbox) -> None:
    pipe = conn.pipeline("maps")
    accepted = post(conn, "/route/matrix:async", matrix([ALV, CAN], [ORD],
                                                        optimizeRoute="shortest"))
    assert accepted.status == 202 and accepted.content == b""
    status_url = accepted.headers["operation-location"]
    assert status_url.startswith(sandbox.url + "/route/operations/")
    assert status_url.endswith("?api-version=2025-01-01")
    assert accepted.headers["retry-after"] == str(sandbox.lro_retry_after)
    seen = []
    while not seen or seen[-1]["status"] not in ("Completed", "Failed"):
        seen.append(pipe.send(Request("GET", status_url)).json())
        assert len(seen) <= sandbox.lro_polls + 1
    assert [s["status"] for s in seen] == ["NotStarted"] + ["Running"] * (
        sandbox.lro_polls - 1) + ["Completed"]
    last = seen[-1]
    assert last["kind"] == "RouteMatrix" and last["id"] in status_url
    assert last["createdAt"] <= last["lastActionAt"]
    result = pipe.send(Request("GET", last["result"]["resultUrl"])).json()
    assert result["kind"] == "RouteMatrix"
    assert result["properties"]["summary"]["totalCount"] == 2
    # asked again, the same status and result
    assert pipe.send(Request("GET", status_url)).json()["status"] == "Completed"


def test_a_result_is_kept_24_hours(conn, sandbox) -> None:
    pipe = conn.pipeline("maps")
    status_url = post(conn, "/route/matrix:async", matrix(
        [ALV], [ORD], optimizeRoute="shortest")).headers["operation-location"]
    result_url = status_url.replace("?", "/result?")
    with pytest.raises(toolkit.NotFoundError):  # not done yet: no result
        pipe.send(Request("GET", result_url))
    for _ in range(sandbox.lro_polls + 1):
        pipe.send(Request("GET", status_url))
    assert pipe.send(Request("GET", result_url)).status == 200
    sandbox.hold_clock(sandbox.now() + timedelta(hours=24, minutes=1))
    try:
        for url in (status_url, result_url):
            with pytest.raises(toolkit.NotFoundError) as info:
                pipe.send(Request("GET", url))
            assert info.value.code == "NotFound"
    finally:
        sandbox.hold_clock(None)


def test_an_operation_never_given_is_not_found(sandbox) -> None:
    key = {"subscription-key": sandbox.maps_key.reveal()}
    for op_id in ("bc3f9365-3ee0-4564-aa27-825016325557", "not-an-id"):
        answer = requests.get(f"{sandbox.url}/route/operations/{op_id}", params=VERSION,
                              headers=key, timeout=10)
        assert answer.status_code == 404 and answer.json()["error"]["code"] == "NotFound"


def test_the_lro_fail_fault_ends_the_matrix_failed(conn, sandbox) -> None:
    sandbox.inject("lro_fail", path=r"matrix:async", method="POST", count=1)
    status_url = post(conn, "/route/matrix:async", matrix(
        [ALV], [ORD], optimizeRoute="shortest")).headers["operation-location"]
    for _ in range(sandbox.lro_polls + 1):
        status = conn.pipeline("maps").send(Request("GET", status_url)).json()
    assert status["status"] == "Failed" and status["error"]["code"] == "InternalServerError"
    assert "result" not in status
