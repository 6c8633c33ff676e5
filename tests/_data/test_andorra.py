"""The map of Andorra the toolkit ships: roads and towns as frames, read once, handed out as
copies, with their credit line."""

from __future__ import annotations

from toolkit._data.andorra import ATTRIBUTION, place_records, road_records, roads, towns


def test_roads_are_one_line_per_edge_with_their_class() -> None:
    frame = roads()
    assert len(frame) == len(road_records()["edges"]) > 2000
    assert list(frame.columns) == ["highway", "name", "geometry"]
    assert frame.crs.to_epsg() == 4326
    assert {"primary", "secondary", "residential"} <= set(frame["highway"])
    w, s, e, n = frame.total_bounds
    assert 1.40 < w < e < 1.80 and 42.42 < s < n < 42.66
    assert frame.attrs["attribution"] == ATTRIBUTION


def test_the_bundled_frames_are_copies() -> None:
    first = roads()
    first["highway"] = "changed"
    assert "changed" not in set(roads()["highway"])
    places = towns()
    places["name"] = "changed"
    assert "changed" not in set(towns()["name"])


def test_towns_are_the_towns_and_villages_of_the_places() -> None:
    frame = towns()
    wanted = [p["name"] for p in place_records()["places"]
              if p.get("type") == "PopulatedPlace" and p.get("place") in ("town", "village")]
    assert frame["name"].tolist() == wanted and len(wanted) > 20
    assert frame["lat"].between(42.42, 42.66).all() and frame["lon"].between(1.40, 1.80).all()
    assert frame.attrs["attribution"] == ATTRIBUTION
