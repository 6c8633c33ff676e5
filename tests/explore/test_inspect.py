"""``map_summary``: one row per layer a reader can switch, counting what each layer draws, read
from maps built here by hand."""

from __future__ import annotations

from typing import Any

import pytest

folium = pytest.importorskip("folium")
from toolkit.explore._inspect import map_summary  # noqa: E402

COLUMNS = ["layer", "features", "geometry_types", "tooltip_fields", "shown"]


def _feature(geometry: dict[str, Any] | None, **properties: Any) -> dict[str, Any]:
    return {"type": "Feature", "geometry": geometry, "properties": properties}


def _point(x: float, y: float, **properties: Any) -> dict[str, Any]:
    return _feature({"type": "Point", "coordinates": [x, y]}, **properties)


def _line(*points: tuple[float, float], **properties: Any) -> dict[str, Any]:
    return _feature({"type": "LineString", "coordinates": [list(p) for p in points]},
                    **properties)


def _collection(*features: dict[str, Any]) -> dict[str, Any]:
    return {"type": "FeatureCollection", "features": list(features)}


def _group(m: Any, name: str, *layers: Any, **kw: Any) -> Any:
    group = folium.FeatureGroup(name=name, **kw)
    for layer in layers:
        layer.add_to(group)
    group.add_to(m)
    return group


def test_one_row_per_switchable_layer_counting_its_features() -> None:
    m = folium.Map(location=[42.5, 1.5])
    _group(m, "towns",
           folium.GeoJson(_collection(_point(1.5, 42.5, name="a", pop=1),
                                      _point(1.6, 42.6, name="b", pop=2)),
                          tooltip=folium.GeoJsonTooltip(fields=["name", "pop"])),
           folium.GeoJson(_line((1.5, 42.5), (1.6, 42.6), name="road")))  # one bare feature
    _group(m, "later", show=False)
    _group(m, "background", folium.GeoJson(_collection(_point(1.5, 42.5))), control=False)
    folium.Marker([42.5, 1.5]).add_to(m)  # not a layer of features
    summary = map_summary(m)
    assert list(summary.columns) == COLUMNS
    assert summary["layer"].tolist() == ["towns", "later"]  # in the order added, no background
    towns = summary.set_index("layer").loc["towns"]
    assert towns["features"] == 3
    assert towns["geometry_types"] == ["LineString", "Point"]
    assert towns["tooltip_fields"] == ["name", "pop"]
    later = summary.set_index("layer").loc["later"]
    assert (later["features"], later["geometry_types"], later["tooltip_fields"]) == (0, [], [])
    assert summary["shown"].tolist() == [True, False]


def test_the_columns_are_typed_even_for_a_map_without_layers() -> None:
    empty = map_summary(folium.Map())
    assert list(empty.columns) == COLUMNS and empty.empty
    assert str(empty["features"].dtype) == "Int64" and str(empty["shown"].dtype) == "boolean"
    m = folium.Map()
    _group(m, "one", folium.GeoJson(_collection(_point(0, 0))))
    one = map_summary(m)
    assert str(one["features"].dtype) == "Int64" and str(one["shown"].dtype) == "boolean"


def test_features_without_geometry_count_but_name_no_type() -> None:
    m = folium.Map()
    _group(m, "some missing",
           folium.GeoJson(_collection(_point(0, 0), _feature(None, why="no position"))))
    row = map_summary(m).iloc[0]
    assert row["features"] == 2 and row["geometry_types"] == ["Point"]


def test_only_a_tooltip_of_fields_names_fields() -> None:
    m = folium.Map()
    _group(m, "text tooltip", folium.GeoJson(_collection(_point(0, 0, a=1)), tooltip="hello"))
    _group(m, "no tooltip", folium.GeoJson(_collection(_point(0, 0, a=1))))
    _group(m, "fields", folium.GeoJson(_collection(_point(0, 0, a=1, b=2)),
                                       tooltip=folium.GeoJsonTooltip(fields=["b"])))
    fields = map_summary(m).set_index("layer")["tooltip_fields"].to_dict()
    assert fields == {"text tooltip": [], "no tooltip": [], "fields": ["b"]}


def test_layers_of_several_geojsons_add_up() -> None:
    m = folium.Map()
    parts = [folium.GeoJson(_collection(*(_point(i, j) for j in range(i)))) for i in range(1, 5)]
    _group(m, "parts", *parts, folium.CircleMarker([0, 0]))  # a marker is not a feature layer
    assert map_summary(m).iloc[0]["features"] == 1 + 2 + 3 + 4
