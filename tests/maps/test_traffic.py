"""traffic_incidents over HTTP: incidents on real roads, filters, bbox forms, exact ids, the clock,
validation."""

from __future__ import annotations

import pandas as pd
import pytest
import shapely

import toolkit
from toolkit._core.errors import ValidationError
from toolkit._spec.maps import INCIDENT_SEVERITIES
from toolkit.maps._schemas import TRAFFIC_INCIDENTS
from toolkit.sandbox.maps.traffic import incidents_at

ANDORRA = (1.40, 42.42, 1.80, 42.66)


def test_incidents_in_andorra(conn, sandbox, net) -> None:
    with sandbox.recording() as log:
        df = toolkit.traffic_incidents(ANDORRA, connection=conn)
    assert len(log) == 1 and "bbox=1.4,42.42,1.8,42.66" in log[0].query
    assert list(df.columns) == TRAFFIC_INCIDENTS.names and str(df.crs) == "EPSG:4326"
    assert len(df) >= 5 and df["id"].is_unique
    assert str(df["id"].dtype) == "Int64" and (df["id"] > 2**53).all()
    expected = {i.id for i in incidents_at(sandbox)}
    assert set(int(i) for i in df["id"]) == expected  # exact 64-bit ids, no float rounding
    assert set(df["incidentType"]) <= set(TRAFFIC_INCIDENTS["incidentType"].categories)
    assert "Construction" in set(df["incidentType"])
    assert list(df["severity"].cat.categories[:4]) == list(INCIDENT_SEVERITIES)
    assert df["severity"].cat.ordered
    assert df["severity"].astype(str).tolist() == \
        [INCIDENT_SEVERITIES[int(x) - 1] for x in df["severity_level"]]
    assert pd.api.types.is_timedelta64_dtype(df["delay"]) and (df["delay"] >= pd.Timedelta(0)).all()
    now = pd.Timestamp(sandbox.now())
    assert (df["startTime"] <= now).all() and (df["endTime"] > now - pd.Timedelta(minutes=5)).all()
    assert str(df["startTime"].dtype) == "datetime64[ns, UTC]"
    assert df["title"].notna().all() and df["description"].notna().all()
    # start and end points lie on real roads
    for col in ("geometry", "endPoint"):
        pts = shapely.points(net.proj.forward(shapely.get_coordinates(df[col])))
        assert shapely.distance(net.lines[net.tree.nearest(pts)], pts).max() < 0.5
    assert str(df["endPoint"].crs) == "EPSG:4326"
    closed = df[df["isRoadClosed"]]
    assert (closed["delay"] == pd.Timedelta(0)).all()


def test_type_filter_and_bbox_forms(conn, sandbox) -> None:
    everything = toolkit.traffic_incidents(ANDORRA, connection=conn)
    with sandbox.recording() as log:
        works = toolkit.traffic_incidents(shapely.box(*ANDORRA), incident_types="construction",
                                          connection=conn)
    assert "incidentType=Construction" in log[0].query
    assert set(works["incidentType"]) == {"Construction"}
    assert len(works) == (everything["incidentType"] == "Construction").sum()
    one = everything.iloc[0]
    x, y = one.geometry.x, one.geometry.y
    near = toolkit.traffic_incidents((x - 0.0005, y - 0.0005, x + 0.0005, y + 0.0005),
                                     connection=conn)
    assert int(one["id"]) in set(int(i) for i in near["id"])
    assert len(near) < len(everything)
    import geopandas as gpd

    frame = gpd.GeoDataFrame(geometry=[shapely.Point(ANDORRA[:2]), shapely.Point(ANDORRA[2:])],
                             crs=4326)
    assert toolkit.traffic_incidents(frame, connection=conn)["id"].tolist() == \
        everything["id"].tolist()
    paris = toolkit.traffic_incidents((2.25, 48.80, 2.45, 48.90), connection=conn)
    assert len(paris) == 0 and list(paris.columns) == TRAFFIC_INCIDENTS.names






@pytest.mark.parametrize("bbox, kwargs, parameter, rule", [
    ((1.5, 42.5, 1.50005, 42.6), {}, "bbox", "at least 12 m"),
    ((-5.0, 40.0, 5.0, 41.0), {}, "bbox", "at most 500,000 m"),
    ((0.0, 89.0, 40.0, 89.5), {}, "bbox", "at most 30 degrees"),
    ((1.8, 42.42, 1.4, 42.66), {}, "bbox", "must not exceed"),
    ((1.4, 42.42, 1.8), {}, "bbox", "4 numbers"),
    ("1.4,42.42,1.8,42.66", {}, "bbox", "object with bounds"),
    (ANDORRA, {"incident_types": "Meteor"}, "incident_types", "must be one of"),
    (ANDORRA, {"incident_types": []}, "incident_types", "at least one"),
    (ANDORRA, {"api_version": ""}, "api_version", "required"),
])
def test_bad_inputs_are_refused_before_any_request(conn, sandbox, bbox, kwargs, parameter,
                                                   rule) -> None:
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        toolkit.traffic_incidents(bbox, **kwargs, connection=conn)
    assert info.value.parameter == parameter and rule in info.value.rule
    assert log == []
