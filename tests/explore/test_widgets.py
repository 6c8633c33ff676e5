"""The route planner and the air-quality explorer show their results on interactive maps."""

from __future__ import annotations

import geopandas as gpd
import pytest
import shapely

import toolkit
from tests.frames_of_every_function import TOWNS

pytest.importorskip("folium")
from toolkit.explore import map_summary


def test_route_planner_shows_the_plan_on_an_interactive_map(sandbox) -> None:
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    places = gpd.GeoDataFrame({"name": list(TOWNS)},
                              geometry=[shapely.Point(p) for p in TOWNS.values()], crs=4326)
    planner = toolkit.widgets.route_planner(places=places, coordinates=TOWNS["Encamp"],
                                            debounce=0, connection=conn)
    assert planner.interactive  # folium is installed: the map is the default
    planner.widget  # noqa: B018 - builds the view
    routes = planner.plan("Andorra la Vella", "Canillo")
    summary = map_summary(planner.map).set_index("layer")
    assert summary.loc["main routes", "features"] == (routes["route_index"] == 0).sum()
    assert summary.loc["alternatives", "features"] == (routes["route_index"] > 0).sum()
    incident_layers = [i for i in summary.index if i.startswith("incidents: ")]
    assert sum(summary.loc[incident_layers, "features"]) == len(planner.incidents)
    assert planner.figure is None  # the map replaces the picture
    assert "km" in planner._summary.value
    conn.close()


def test_air_quality_explorer_shows_the_place_and_its_alerts_beside_the_pictures(conn) -> None:
    import matplotlib.pyplot as plt

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
    with pytest.raises(toolkit.ValidationError, match="interactive"):
        toolkit.widgets.route_planner(interactive=1, connection=conn)
