"""The air-quality explorer driven from code: places found by name through autocomplete and
placed through geocode (no look inside the sandbox), or given as (longitude, latitude)."""

from __future__ import annotations

import html

import matplotlib
import pytest

import toolkit
from toolkit._core.errors import ValidationError

matplotlib.use("Agg")

ANDORRA_LA_VELLA = (1.5212, 42.5069)


def test_suggestions_are_placed_by_geocode_or_by_the_callers_gazetteer(conn, sandbox) -> None:
    import pandas as pd

    from toolkit.widgets.weather import find_places

    with sandbox.recording() as log:
        hits = find_places("Ordi", connection=conn)
    assert {entry.path for entry in log} == {"/geocode:autocomplete", "/geocode"}
    ordino = hits[hits["label"] == "Ordino"].iloc[0]
    assert ordino["placed_by"] == "geocode"
    found = toolkit.geocode("Ordino", top=1, connection=conn).geometry.iloc[0]
    assert (ordino["lon"], ordino["lat"]) == (found.x, found.y)
    mine = pd.DataFrame({"name": ["Ordino"], "lon": [1.0], "lat": [42.0]})
    with sandbox.recording() as log:
        placed = find_places("Ordino", places=mine, top=1, connection=conn)
    assert [entry.path for entry in log] == ["/geocode:autocomplete"]
    assert placed.iloc[0][["lon", "lat", "placed_by"]].tolist() == [1.0, 42.0, "gazetteer"]


def test_explorer_driven_by_name_and_by_coordinates(conn) -> None:
    import matplotlib.pyplot as plt

    from toolkit.widgets.weather import find_places

    explorer = toolkit.widgets.air_quality_explorer(connection=conn)
    hits = explorer.search("Ordi")
    assert "Ordino" in hits["label"].tolist()
    assert list(explorer.choices.options) == hits["label"].tolist()
    report = explorer.select("Ordino")
    assert report.label == "Ordino" and (report.lon, report.lat) == pytest.approx(
        (1.5335, 42.5562), abs=0.001)
    assert len(report.current) == 1 and len(report.forecast) == 7
    assert len(report.pollutants) == 6 and len(report.alerts) > 0
    assert (explorer.lon_box.value, explorer.lat_box.value) == (report.lon, report.lat)
    summary = report.summary()
    assert summary["category"].tolist() == report.forecast["category"].astype(str).tolist()
    assert summary["now"].notna().sum() == 1
    plt.close(report.figure())
    by_point = explorer.select(ANDORRA_LA_VELLA)
    assert by_point.forecast["location_index"].eq(0).all()
    assert by_point.current["globalIndex"].iloc[0] == toolkit.air_quality(
        ANDORRA_LA_VELLA, connection=conn)["globalIndex"].iloc[0]
    # picking from the list shows the place too
    explorer.choices.value = hits["label"].iloc[0]
    assert explorer.result.label == hits["label"].iloc[0]
    # a street is placed by geocoding its formatted address
    streets = find_places("Carrer", connection=conn)
    assert set(streets["placed_by"]) == {"geocode"}
    street = explorer.select(streets["label"].iloc[0])
    assert (street.lon, street.lat) == (streets["lon"].iloc[0], streets["lat"].iloc[0])
    plt.close("all")


def test_explorer_bad_place_is_refused_and_shown(conn, sandbox) -> None:
    explorer = toolkit.widgets.air_quality_explorer(connection=conn)
    with sandbox.recording() as log, pytest.raises(ValidationError):
        explorer.select((47.6, -122.1))
    assert log == []
    explorer.lon_box.value, explorer.lat_box.value = 1.5, 95.0
    explorer.show_button.click()
    assert "place=(1.5, 95.0): must be (longitude, latitude) with latitude in [-90, 90]" \
        in explorer.error
    assert "latitude" in explorer.message.value


def test_air_quality_explorer_shows_the_place_and_its_alerts_beside_the_pictures(conn) -> None:
    import matplotlib.pyplot as plt

    pytest.importorskip("folium")
    from toolkit.explore import map_summary

    explorer = toolkit.widgets.air_quality_explorer(connection=conn, duration=2)
    report = explorer.select("Ordino")
    summary = map_summary(explorer.map)
    assert summary.loc[summary["layer"] == "air quality", "features"].iloc[0] == 1
    alert_layers = summary[summary["layer"].str.startswith("alerts: ")]
    assert alert_layers["features"].sum() == report.alerts["alertId"].notna().sum()
    assert "<iframe" in explorer.map_view.value
    assert explorer.picture.value  # the static pictures stay, beside the map
    # the map's frame is named after what it shows; the picture is described by its data
    assert 'title="interactive map: air quality at 1 place' in explorer.map_view.value
    now = report.current.iloc[0]
    alt = explorer.picture_description
    assert alt.startswith("Ordino: pollutants now: ")
    assert f"Ordino: the week ahead: {len(report.forecast)} days" in alt
    assert f"{now['globalIndex']:.0f}" in alt
    assert f'alt="{html.escape(alt)}"' in explorer.picture.value
    plt.close("all")


def test_interactive_is_checked(conn) -> None:
    with pytest.raises(toolkit.ValidationError, match="interactive"):
        toolkit.widgets.air_quality_explorer(connection=conn, interactive="yes")


def test_find_shows_the_place_found_and_show_keeps_its_name(conn) -> None:
    import matplotlib.pyplot as plt

    explorer = toolkit.widgets.air_quality_explorer(connection=conn, duration=2,
                                                    interactive=False)
    assert explorer.picture.value == ""  # no picture (and no unnamed image) yet
    assert [c.description for c in (explorer.name_box, explorer.find_button, explorer.choices,
                                    explorer.lon_box, explorer.lat_box, explorer.show_button)
            ] == ["Place", "Find", "Pick", "Longitude", "Latitude", "Show"]
    first = explorer.select("Ordino")
    explorer.name_box.value = "Encamp"  # typed and Enter: Find
    shown = explorer.result
    assert shown is not first and shown.label == "Encamp"
    assert explorer.choices.value == "Encamp"
    assert (explorer.lon_box.value, explorer.lat_box.value) == (shown.lon, shown.lat)
    assert "Encamp" in explorer.title.value and "Ordino" not in explorer.title.value
    explorer.show_button.click()  # the boxes hold the place found: the same place, by name
    assert explorer.result.label == "Encamp"
    assert (explorer.result.lon, explorer.result.lat) == (shown.lon, shown.lat)
    explorer.lon_box.value, explorer.lat_box.value = ANDORRA_LA_VELLA
    explorer.show_button.click()  # other coordinates: that place, named by them
    assert explorer.result.label == "1.5212, 42.5069" and explorer.choices.value is None
    found = explorer.find("Zzzzqx")
    assert found is None and explorer.result.label == "1.5212, 42.5069"
    plt.close("all")


def test_the_explorer_leaves_a_static_view_and_sizes_its_map(conn) -> None:
    import matplotlib.pyplot as plt

    pytest.importorskip("folium")
    explorer = toolkit.widgets.air_quality_explorer(connection=conn, duration=2)
    empty = explorer._repr_mimebundle_()
    assert "no place chosen" in empty["text/html"]
    explorer.select("Canillo")
    data = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    static = data["text/html"]
    assert "Canillo" in static and "data:image/png;base64," in static
    assert "<iframe" in static and "height:380px" in static
    assert explorer.map_view.layout.height == "390px"
    plt.close("all")


def test_a_place_chosen_from_code_is_the_one_listed(conn) -> None:
    import matplotlib.pyplot as plt

    explorer = toolkit.widgets.air_quality_explorer(connection=conn, duration=1,
                                                    interactive=False)
    explorer.select("Ordino")
    assert explorer.choices.value == "Ordino" and "Ordino" in explorer.choices.options
    explorer.select(ANDORRA_LA_VELLA)
    assert explorer.choices.value is None
    plt.close("all")
