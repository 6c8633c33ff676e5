"""The maps schemas: each is the one its operation's record declares, every one is a geo frame,
and the functions taking places by name record the place."""

from __future__ import annotations

from toolkit._core.registry import record
from toolkit._core.schemas import Schema
from toolkit._spec import maps as spec
from toolkit.maps import _schemas


def _schemas_of_module() -> dict[str, Schema]:
    return {n: v for n, v in vars(_schemas).items() if isinstance(v, Schema)}


def test_each_schema_is_its_operations_record() -> None:
    schemas = _schemas_of_module()
    assert set(schemas) == set(_schemas.__all__)
    for schema in schemas.values():
        assert record(schema.name).schema is schema


def test_every_maps_frame_is_a_geo_frame() -> None:
    for schema in _schemas_of_module().values():
        assert schema.geometry == "geometry" and schema.names[-1] == "geometry", schema.name


def test_the_weather_by_location_records_the_place_asked() -> None:
    for schema in (_schemas.AIR_QUALITY, _schemas.AIR_QUALITY_FORECAST,
                   _schemas.SEVERE_WEATHER_ALERTS):
        assert schema.names[:3] == ["location_index", "place", "place_address"]
    assert "place" not in _schemas.AIR_QUALITY_POLLUTANTS.names
    assert _schemas.AIR_QUALITY["category"].categories is spec.AIR_QUALITY_CATEGORIES
    assert _schemas.TRAFFIC_INCIDENTS["severity"].ordered
