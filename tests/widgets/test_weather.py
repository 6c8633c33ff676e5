"""The air-quality explorer driven from code: places found by name through autocomplete and
placed with the bundled gazetteer (no look inside the sandbox), or given as coordinates."""

from __future__ import annotations

import matplotlib
import pytest

import toolkit
from toolkit._core.errors import ValidationError
from toolkit._data.andorra import towns

matplotlib.use("Agg")

ANDORRA_LA_VELLA = (42.5069, 1.5212)


def test_the_default_gazetteer_is_the_bundled_towns_whatever_the_connection() -> None:
    from toolkit.widgets.weather import gazetteer

    places = gazetteer()
    assert list(places.columns) == ["name", "lat", "lon"]
    assert {"Ordino", "Canillo", "Encamp"} <= set(places["name"])
    assert places.equals(towns())


def test_explorer_driven_by_name_and_by_coordinates(conn) -> None:
    import matplotlib.pyplot as plt

    from toolkit.widgets.weather import find_places

    explorer = toolkit.widgets.air_quality_explorer(connection=conn)
    hits = explorer.search("Ordi")
    assert "Ordino" in hits["label"].tolist()
    assert list(explorer.choices.options) == hits["label"].tolist()
    report = explorer.select("Ordino")
    assert report.label == "Ordino" and (report.lat, report.lon) == pytest.approx(
        (42.5562, 1.5335), abs=0.001)
    assert len(report.current) == 1 and len(report.forecast) == 7
    assert len(report.pollutants) == 6 and len(report.alerts) > 0
    assert (explorer.lat_box.value, explorer.lon_box.value) == (report.lat, report.lon)
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
    # a street is placed at its town centre, and says so
    streets = find_places("Carrer", connection=conn)
    assert set(streets["placed_by"]) == {"locality"}
    note = explorer.select(streets["label"].iloc[0]).notes
    assert note and "centre of its town" in note[0]
    plt.close("all")


def test_explorer_bad_place_is_refused_and_shown(conn, sandbox) -> None:
    explorer = toolkit.widgets.air_quality_explorer(connection=conn)
    with sandbox.recording() as log, pytest.raises(ValidationError):
        explorer.select((-122.1, 47.6))
    assert log == []
    explorer.lat_box.value, explorer.lon_box.value = 95.0, 1.5
    explorer.show_button.click()
    assert "latitude must be between -90 and 90" in explorer.error
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
    plt.close("all")


def test_interactive_is_checked(conn) -> None:
    with pytest.raises(toolkit.ValidationError, match="interactive"):
        toolkit.widgets.air_quality_explorer(connection=conn, interactive="yes")
