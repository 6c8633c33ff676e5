"""The sandbox's traffic incidents: a pure function of the seed and the clock (five-minute
steps), placed on connected stretches of real roads, the speed factors they put on the road
network, the service's feature shape and refusals."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
import requests

from toolkit.sandbox.http import SandboxHTTPError
from toolkit.sandbox.maps.roads.network import network
from toolkit.sandbox.maps.traffic import (
    ID_BASE,
    RUSH,
    feature,
    incidents_at,
    parse_bbox,
    traffic_factors,
)
from toolkit.sandbox.server import Sandbox

ANDORRA = (1.40, 42.42, 1.80, 42.66)
#: A weekday morning at rush hour (08:55 local time), in winter.
RUSH_HOUR = datetime(2026, 1, 14, 7, 55, tzinfo=UTC)


def _model(seed: int = 7) -> Sandbox:
    """A sandbox (not serving: the model needs none) whose world's "now" is ``RUSH_HOUR``."""
    return Sandbox(seed=seed, epoch=RUSH_HOUR)


def _week(sb: Sandbox, start: datetime) -> list[tuple[datetime, tuple]]:
    return [(start + timedelta(hours=h), incidents_at(sb, start + timedelta(hours=h)))
            for h in range(0, 24 * 7)]


# ---------------------------------------------------------------------- the model
def test_incidents_follow_the_sandbox_clock(sandbox) -> None:
    now = sandbox.now()
    assert [i.id for i in incidents_at(sandbox)] == [i.id for i in incidents_at(sandbox, now)]
    week = [incidents_at(sandbox, now + timedelta(hours=h)) for h in range(0, 24 * 7, 1)]
    kinds = {i.type for step in week for i in step}
    assert {"Construction", "Accident", "Congestion"} <= kinds
    for h, step in zip(range(0, 24 * 7), week, strict=True):
        t = (now + timedelta(hours=h)).astimezone(ZoneInfo("Europe/Andorra"))
        hour = t.hour + t.minute / 60
        rush = any(a <= hour < b for a, b in RUSH[t.weekday()])
        if not rush:
            assert not any(i.type == "Congestion" for i in step)
    accidents = [i for step in week for i in step if i.type == "Accident"]
    assert all(timedelta(minutes=30) <= i.end - i.start <= timedelta(minutes=90)
               for i in accidents)


def test_same_seed_same_incidents_other_seed_other_ones() -> None:
    a, b, c = _model(7), _model(7), _model(8)
    for at in (RUSH_HOUR, RUSH_HOUR + timedelta(days=3, hours=5)):
        first = [(i.id, i.type, i.arcs, i.start, i.end) for i in incidents_at(a, at)]
        assert first == [(i.id, i.type, i.arcs, i.start, i.end) for i in incidents_at(b, at)]
        assert {i.id for i in incidents_at(c, at)} != {i[0] for i in first}


def test_answers_are_stable_within_a_five_minute_step() -> None:
    sb = _model()
    step = datetime(2026, 1, 14, 8, 0, tzinfo=UTC)
    same = [[i.id for i in incidents_at(sb, step + timedelta(seconds=s))] for s in (0, 61, 299)]
    assert same[0] and same[0] == same[1] == same[2]
    for inc in incidents_at(sb, step):
        assert inc.start <= step < inc.end  # active in the step
    later = step + timedelta(hours=1)
    assert [i.id for i in incidents_at(sb, later)] == \
        [i.id for i in incidents_at(sb, later + timedelta(minutes=4, seconds=59))]


def test_incidents_lie_on_connected_stretches_of_road() -> None:
    net = network()
    sb = _model()
    seen = [i for _, step in _week(sb, RUSH_HOUR) for i in step]
    assert {"Construction", "Accident", "DisabledVehicle", "Congestion"} <= \
        {i.type for i in seen}
    for inc in seen:
        assert inc.arcs and all(net.arc_ok[a] for a in inc.arcs)
        for a, b in zip(inc.arcs, inc.arcs[1:], strict=False):
            assert net.arc_head(a) == net.arc_tail(b), inc.type
        start = net.lonlat[net.arc_tail(inc.arcs[0])]
        end = net.lonlat[net.arc_head(inc.arcs[-1])]
        assert inc.start_point == (float(start[0]), float(start[1]))
        assert inc.end_point == (float(end[0]), float(end[1]))
        assert inc.start < inc.end and 1 <= inc.severity <= 4
        assert ID_BASE < inc.id < 2**63 and inc.id > 2**53
        if inc.closed:
            assert inc.factor == 0.0 and inc.delay == 0.0
        else:
            assert 0 < inc.factor < 1 and inc.delay >= 0


def test_ids_are_unique_in_a_step() -> None:
    sb = _model()
    for _, step in _week(sb, RUSH_HOUR):
        ids = [i.id for i in step]
        assert len(ids) == len(set(ids))


def test_snow_on_the_pass_only_in_winter() -> None:
    sb = _model()
    winter = [i for _, step in _week(sb, datetime(2026, 1, 5, tzinfo=UTC)) for i in step]
    summer = [i for _, step in _week(sb, datetime(2026, 7, 6, tzinfo=UTC)) for i in step]
    assert any(i.type == "Weather" for i in winter)
    assert not any(i.type == "Weather" for i in summer)
    net = network()
    for inc in (i for i in winter if i.type == "Weather"):
        assert {net.way_of(a >> 1).get("ref") for a in inc.arcs} == {"CG-2"}


def test_factors_are_the_slowest_incident_on_each_edge() -> None:
    sb = _model()
    active = incidents_at(sb, RUSH_HOUR)
    factors = traffic_factors(sb, RUSH_HOUR)
    edges = {a >> 1 for inc in active for a in inc.arcs}
    assert set(factors) == edges
    for edge, factor in factors.items():
        covering = [inc.factor for inc in active if edge in {a >> 1 for a in inc.arcs}]
        assert factor == min(covering)
    assert any(i.type == "Congestion" for i in active)  # rush hour: the towns are slow


def test_feature_shape_and_language() -> None:
    sb = _model()
    inc = next(i for i in incidents_at(sb, RUSH_HOUR) if i.type == "Congestion")
    english, french = feature(inc, None), feature(inc, "fr-FR")
    assert english["id"] == inc.id and isinstance(english["id"], int)
    props = english["properties"]
    assert props["incidentType"] == "Congestion" and props["isTrafficJam"] is True
    assert props["description"] == inc.description["en"]
    assert french["properties"]["description"] == inc.description["fr"] != props["description"]
    assert feature(inc, "ja")["properties"]["description"] == inc.description["en"]
    assert props["startTime"].endswith("Z") and props["startTime"] < props["endTime"]
    assert english["geometry"]["coordinates"] == [round(v, 7) for v in inc.start_point]
    assert props["endPoint"]["coordinates"] == [round(v, 7) for v in inc.end_point]


@pytest.mark.parametrize("text, said", [
    (None, "required"),
    ("", "required"),
    ("1,2,3", "four numbers"),
    ("1,2,3,4,5", "four numbers"),
    ("a,b,c,d", "four numbers"),
    ("1,2,nan,4", "four numbers"),
    ("1.8,42.4,1.4,42.6", "order"),
    ("1.4,42.6,1.8,42.4", "order"),
    ("-181,0,1,1", "out of range"),
    ("0,-91,1,1", "out of range"),
])
def test_parse_bbox_refuses_like_the_service(text: str | None, said: str) -> None:
    with pytest.raises(SandboxHTTPError) as info:
        parse_bbox(text)
    assert info.value.status == 400 and info.value.code == "BadRequest"
    assert said in info.value.message


def test_parse_bbox_reads_the_four_numbers() -> None:
    assert parse_bbox("1.4,42.42,1.8,42.66") == ANDORRA
    assert parse_bbox("-180,-90,180,90") == (-180, -90, 180, 90)


# ---------------------------------------------------------------------- over HTTP
@pytest.fixture(scope="module")
def frozen() -> Sandbox:
    with Sandbox(seed=7, epoch=RUSH_HOUR, frozen_clock=True) as sb:
        yield sb


def _get(sb: Sandbox, query: str, **headers: str) -> requests.Response:
    return requests.get(f"{sb.url}/traffic/incident?api-version=2025-01-01&{query}",
                        headers={"subscription-key": sb.maps_key.reveal(), **headers},
                        timeout=10)


def test_sandbox_answers_like_the_service(sandbox) -> None:
    key = sandbox.maps_key.reveal()
    base = f"{sandbox.url}/traffic/incident?api-version=2025-01-01&subscription-key={key}"
    ok = requests.get(base + "&bbox=1.4,42.42,1.8,42.66", timeout=10)
    assert ok.status_code == 200 and ok.headers["Content-Type"].startswith("application/json")
    assert b'"id":1' in ok.content or b'"id":2' in ok.content  # integers, not strings or floats
    tiny = requests.get(base + "&bbox=1.5,42.5,1.50001,42.50001", timeout=10)
    assert tiny.status_code == 400 and tiny.headers["x-vendor-error-code"] == "BadRequest"
    unknown = requests.get(base + "&bbox=1.4,42.42,1.8,42.66&incidentType=Meteor", timeout=10)
    assert unknown.status_code == 400 and "Meteor" in unknown.json()["error"]["message"]
    no_version = requests.get(base.replace("api-version=2025-01-01&", "") +
                              "&bbox=1.4,42.42,1.8,42.66", timeout=10)
    assert no_version.status_code == 400


def test_the_whole_country_gives_every_active_incident_in_start_order(frozen: Sandbox) -> None:
    body = _get(frozen, "bbox=1.4,42.42,1.8,42.66").json()
    assert body["type"] == "FeatureCollection"
    active = sorted(incidents_at(frozen), key=lambda i: (i.start, i.id))
    assert [f["id"] for f in body["features"]] == [i.id for i in active]


def test_the_bbox_and_the_types_filter(frozen: Sandbox) -> None:
    everything = _get(frozen, "bbox=1.4,42.42,1.8,42.66").json()["features"]
    one = everything[0]
    x, y = one["geometry"]["coordinates"]
    near = _get(frozen, f"bbox={x - 0.0005},{y - 0.0005},{x + 0.0005},{y + 0.0005}").json()
    assert one["id"] in [f["id"] for f in near["features"]]
    assert len(near["features"]) < len(everything)
    far = _get(frozen, "bbox=2.25,48.80,2.45,48.90").json()
    assert far["features"] == []
    kinds = sorted({f["properties"]["incidentType"] for f in everything})
    only = _get(frozen, f"bbox=1.4,42.42,1.8,42.66&incidentType={kinds[0]}").json()
    assert only["features"] and \
        {f["properties"]["incidentType"] for f in only["features"]} == {kinds[0]}
    both = _get(frozen, f"bbox=1.4,42.42,1.8,42.66&incidentType={','.join(kinds)}").json()
    assert both == {"type": "FeatureCollection", "features": everything}


def test_descriptions_follow_accept_language(frozen: Sandbox) -> None:
    english = _get(frozen, "bbox=1.4,42.42,1.8,42.66").json()["features"]
    catalan = _get(frozen, "bbox=1.4,42.42,1.8,42.66", **{"Accept-Language": "ca"}).json()
    by_id = {i.id: i for i in incidents_at(frozen)}
    for en, ca in zip(english, catalan["features"], strict=True):
        assert en["properties"]["description"] == by_id[en["id"]].description["en"]
        assert ca["properties"]["description"] == by_id[en["id"]].description["ca"]


@pytest.mark.parametrize("bbox", ["1.5,42.5,1.50001,42.6", "-5,40,5,41", "0,10,40,12"])
def test_a_box_too_small_or_too_big_is_refused(frozen: Sandbox, bbox: str) -> None:
    r = _get(frozen, f"bbox={bbox}")
    assert r.status_code == 400 and "at least 12 m" in r.json()["error"]["message"]
