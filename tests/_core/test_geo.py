"""The coordinate helper: input shapes, order, ranges, bounding boxes, sizes."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely

from toolkit._core.errors import ValidationError
from toolkit._core.geo import (
    COORDINATE_DECIMALS,
    LocalProjection,
    bbox_param,
    bbox_size_m,
    check_bbox_size,
    coordinate_text,
    geojson_geometry,
    haversine_m,
    latlon_param,
    location_names,
    lonlat_param,
    path_length_m,
    to_bbox,
    to_lonlat,
    to_point,
)

PTS = [(1.52, 42.50), (1.53, 42.51), (1.54, 42.52)]


@pytest.mark.parametrize("value", [
    PTS,
    np.array(PTS),
    [shapely.Point(p) for p in PTS],
    gpd.GeoSeries([shapely.Point(p) for p in PTS], crs=4326),
    gpd.GeoDataFrame({"k": [1, 2, 3]}, geometry=[shapely.Point(p) for p in PTS], crs=4326),
    pd.DataFrame({"Longitude": [p[0] for p in PTS], "Latitude": [p[1] for p in PTS]}),
    pd.DataFrame({"lat": [p[1] for p in PTS], "lon": [p[0] for p in PTS]}),
    shapely.LineString(PTS),
    shapely.MultiPoint(PTS),
])
def test_every_input_shape_gives_lon_lat(value) -> None:
    assert np.allclose(to_lonlat(value, "points"), PTS)


def test_a_pair_valid_both_ways_is_taken_as_lon_lat_never_guessed() -> None:
    # (42.5, 1.5) is Andorra read as (lat, lon), but the toolkit's order is (lon, lat): taken so
    assert to_lonlat((42.5, 1.5), "points").tolist() == [[42.5, 1.5]]
    assert to_lonlat([(lat, lon) for lon, lat in PTS], "points")[:, 0].tolist() == \
        [lat for _, lat in PTS]


def test_points_in_another_crs_are_reprojected() -> None:
    metres = gpd.GeoSeries([shapely.Point(p) for p in PTS], crs=4326).to_crs(25831)
    assert metres.crs.to_epsg() == 25831 and metres.x.iloc[0] > 1000
    assert np.allclose(to_lonlat(metres, "points"), PTS)
    assert np.allclose(to_lonlat(gpd.GeoDataFrame(geometry=metres), "points"), PTS)
    assert to_bbox(metres) == pytest.approx((1.52, 42.50, 1.54, 42.52))


def test_place_names_are_resolved_once_after_the_points_are_checked() -> None:
    asked: list[list[str]] = []

    def places(names: list[str]) -> dict[str, tuple[float, float]]:
        asked.append(names)
        return {n: (1.0 + i, 42.0) for i, n in enumerate(names)}

    arr = to_lonlat(["Ordino", (1.5, 42.5), "Encamp", "Ordino"], "locations", places=places)
    assert asked == [["Ordino", "Encamp"]]
    assert arr.tolist() == [[1.0, 42.0], [1.5, 42.5], [2.0, 42.0], [1.0, 42.0]]
    assert to_point("Encamp", "place", places=places) == (1.0, 42.0)
    asked.clear()
    with pytest.raises(ValidationError) as info:
        to_lonlat(["Ordino", (42.5, 95.0)], "locations", places=places)
    assert info.value.parameter == "locations[1]" and asked == []
    assert location_names(["Ordino", (1.5, 42.5)]) == ["Ordino", None]
    assert location_names(pd.Series(["Ordino", "Encamp"])) == ["Ordino", "Encamp"]
    assert location_names(PTS) is None


def test_a_name_where_names_are_not_resolved_is_refused() -> None:
    with pytest.raises(ValidationError) as info:
        to_lonlat("Ordino", "points")
    assert info.value.parameter == "points" and "(longitude, latitude) points" in info.value.rule
    assert "geocode" in info.value.rule


def test_single_point_and_param_formats() -> None:
    assert to_point((1.5, 42.5), "coordinates") == (1.5, 42.5)
    assert to_point(shapely.Point(1.5, 42.5), "coordinates") == (1.5, 42.5)
    assert lonlat_param(1.5, 42.5) == "1.5,42.5"
    assert latlon_param(1.5, 42.5) == "42.5,1.5"
    with pytest.raises(ValidationError, match="one"):
        to_point(PTS, "coordinates")


@pytest.mark.parametrize("lon, lat", [
    (-122.1234567, 47.6543219), (179.9999994, -89.9999996), (100.123456789, 0.1234565),
    (1.5, 42.5), (-0.0000001, 0.0),
])
def test_coordinates_go_on_the_wire_within_a_tenth_of_a_metre(lon: float, lat: float) -> None:
    # 7 significant digits kept 4 decimals past 100 degrees of longitude (11 m)
    for text in (lonlat_param(lon, lat).split(","), latlon_param(lon, lat).split(",")[::-1],
                 bbox_param((lon, lat, lon, lat)).split(",")[:2]):
        back = [float(t) for t in text]
        assert abs(back[0] - lon) <= 0.5e-6 + 1e-12 and abs(back[1] - lat) <= 0.5e-6 + 1e-12
        assert all(len(t.partition(".")[2]) <= COORDINATE_DECIMALS for t in text)
        assert not any(t.endswith("0") and "." in t for t in text)  # no padding
        assert "e" not in ",".join(text).lower() and text[0] != "-0"


def test_the_sixth_decimal_is_kept_past_100_degrees() -> None:
    assert lonlat_param(123.4567891, -33.8765432) == "123.456789,-33.876543"
    assert bbox_param((-179.9999991, -10.0, 101.0000004, 10.5)) == "-179.999999,-10,101,10.5"
    assert coordinate_text(-0.0000001) == "0"


@pytest.mark.parametrize("value, parameter, rule", [
    ((1.5, 95.0), "points", "(longitude, latitude) with latitude in [-90, 90]"),
    ([(1.5, 95.0)], "points[0]", "(longitude, latitude) with latitude in [-90, 90]"),
    ([(1.5, 42.0), (200.0, 42.0)], "points[1]",
     "(longitude, latitude) with longitude in [-180, 180]"),
    ([(1.5, float("nan"))], "points[0]", "finite"),
    ("1.5,42.5", "points", "(longitude, latitude) points"),
    ([(1, 2, 3, 4)], "points", "pair"),
    ([("a", "b")], "points", "numbers"),
    ([shapely.LineString(PTS)], "points[0]", "must be a Point"),
    (pd.DataFrame({"a": [1]}), "points", "longitude and latitude columns"),
])
def test_bad_points_name_the_parameter_and_rule(value, parameter, rule) -> None:
    with pytest.raises(ValidationError) as info:
        to_lonlat(value, "points")
    assert info.value.parameter == parameter and rule in info.value.rule


def test_an_out_of_range_pair_is_shown_as_read_with_the_order_and_a_swap_hint() -> None:
    with pytest.raises(ValidationError) as info:
        to_lonlat([(1.5, 42.5), (42.55, 95.5)], "locations")
    assert str(info.value) == ("locations[1]=(42.55, 95.5): must be (longitude, latitude) with "
                               "latitude in [-90, 90]; this pair looks like (latitude, "
                               "longitude): pass (95.5, 42.55) instead")


def test_too_few_points() -> None:
    with pytest.raises(ValidationError, match="at least 2 points"):
        to_lonlat([(1.5, 42.5)], "points", min_points=2)


@pytest.mark.parametrize("value", [
    (1.4, 42.4, 1.8, 42.7),
    [1.4, 42.4, 1.8, 42.7],
    shapely.box(1.4, 42.4, 1.8, 42.7),
    gpd.GeoDataFrame(geometry=[shapely.Point(1.4, 42.4), shapely.Point(1.8, 42.7)], crs=4326),
    gpd.GeoSeries([shapely.box(1.4, 42.4, 1.8, 42.7)], crs=4326),
])
def test_bbox_from_tuple_or_anything_with_bounds(value) -> None:
    assert to_bbox(value) == pytest.approx((1.4, 42.4, 1.8, 42.7))


@pytest.mark.parametrize("value, rule", [
    ((1.8, 42.4, 1.4, 42.7), "must not exceed"),
    ((1.4, 42.4, 1.8), "4 numbers"),
    ((1.4, -95, 1.8, 42.7), "latitudes"),
    ((-190, 42.4, 1.8, 42.7), "longitudes"),
    ("1,2,3,4", "object with bounds"),
])
def test_bad_bbox(value, rule) -> None:
    with pytest.raises(ValidationError) as info:
        to_bbox(value)
    assert info.value.parameter == "bbox" and rule in info.value.rule


def test_sizes_in_metres_and_degrees() -> None:
    assert haversine_m(0, 0, 0, 1) == pytest.approx(111_195, rel=1e-3)
    assert path_length_m(np.array([[0, 0], [0, 1], [1, 1]])).round(-2).tolist() == \
        [111_200.0, 111_200.0]
    w, h = bbox_size_m((0, 60, 1, 61))
    assert w == pytest.approx(111_195 * np.cos(np.radians(60)), rel=1e-3)
    assert h == pytest.approx(111_195, rel=1e-3)
    check_bbox_size((1.5, 42.5, 1.6, 42.6), min_m=12, max_m=500_000, max_deg=30)
    with pytest.raises(ValidationError, match="at least 12 m"):
        check_bbox_size((1.5, 42.5, 1.50001, 42.6), min_m=12)
    with pytest.raises(ValidationError, match="at most 500,000 m"):
        check_bbox_size((0, 40, 10, 41), max_m=500_000)
    with pytest.raises(ValidationError, match="at most 30 degrees"):
        check_bbox_size((0, 89, 40, 89.5), max_deg=30)
    with pytest.raises(ValidationError, match=r"at least 0\.00001 degrees"):
        check_bbox_size((1.5, 42.5, 1.500001, 42.6), min_deg=0.00001)


def test_local_projection_round_trip() -> None:
    proj = LocalProjection(1.55, 42.52)
    xy = proj.forward(np.array(PTS))
    assert np.allclose(proj.inverse(xy), PTS)
    d = float(np.hypot(*(xy[1] - xy[0])))
    assert d == pytest.approx(float(haversine_m(*PTS[0], *PTS[1])), rel=2e-3)


def test_geojson_geometry() -> None:
    assert geojson_geometry(None) is None
    assert geojson_geometry(None, empty="MultiLineString").is_empty
    empty = geojson_geometry({"type": "MultiLineString", "coordinates": []})
    assert empty.geom_type == "MultiLineString" and empty.is_empty
    assert geojson_geometry({"type": "Point", "coordinates": [1, 2]}).equals(shapely.Point(1, 2))
