"""The shipped roads as a map background: styles, keys and the main roads a notebook shares."""

from __future__ import annotations

import pytest

pytest.importorskip("folium")

from toolkit.explore._roads import (
    ROAD_STYLE,
    SHARED_ROAD_ZOOMS,
    road_frame,
    road_key,
    shared_roads,
)


def test_the_shared_roads_are_one_layer_per_main_road_style() -> None:
    layers = shared_roads()
    styles = {road_key(w, c) for w, c in ROAD_STYLE.values()}
    classes = set(road_frame()["highway"].astype(str))
    present = {road_key(*ROAD_STYLE[k]) for k in classes if k in ROAD_STYLE}
    assert set(layers) == present and present <= styles and present


def test_every_shared_layer_is_a_quiet_line_layer_with_the_data_attribution() -> None:
    for data in shared_roads().values():
        assert data["kind"] == "line" and not data["interactive"]
        assert 1 <= len(data["levels"]) <= len(SHARED_ROAD_ZOOMS)
        assert "OpenStreetMap" in data["attribution"]


def test_a_road_key_names_weight_and_colour() -> None:
    assert road_key(2.0, "#bdbdbd") == "2 #bdbdbd"
    assert road_key(2.4, "#a8a8a8") != road_key(2.4, "#bdbdbd")
