"""Map widgets driven from code: the debounced autocomplete box and the route planner."""

from __future__ import annotations

import geopandas as gpd
import matplotlib
import pytest
import shapely

import toolkit
from tests.maps.conftest import TOWNS
from toolkit._core.errors import ValidationError
from toolkit.widgets.maps import Debouncer, suggestion_labels

matplotlib.use("Agg")


def test_debouncer_sends_only_the_last_value() -> None:
    seen: list[str] = []
    d = Debouncer(seen.append, wait=0.05)
    for text in ("C", "Ca", "Can"):
        d(text)
    d.flush()
    assert seen == ["Can"] and d.calls == 1
    now = Debouncer(seen.append, wait=0)
    now("x")
    assert seen == ["Can", "x"]


def test_autocomplete_box_driven_from_code(sandbox) -> None:
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    chosen = []
    box = toolkit.widgets.autocomplete_box(coordinates=TOWNS["Canillo"], debounce=0.05,
                                           connection=conn)
    box.on_choose = chosen.append
    view = box.widget  # the ipywidgets view exists and follows the logic
    for text in ("C", "Ca", "Can"):
        box.type(text)
    box.flush()
    assert box.queries == ["Can"]  # debounced: one query for three keystrokes
    assert list(box._list.options) == suggestion_labels(box.suggestions)
    place = box.choose(0)
    assert len(place) == 1 and place["name"].iloc[0] == "Canillo" and chosen
    assert box.label.startswith("Canillo")
    assert view is box.widget
    box.type("C")  # too short: no lookup
    box.flush()
    assert box.queries == ["Can"] and box.suggestions is None
    with pytest.raises(ValidationError, match="index"):
        box.choose(0)


def test_route_planner_from_two_chosen_places(sandbox) -> None:
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    places = gpd.GeoDataFrame({"name": list(TOWNS)},
                              geometry=[shapely.Point(p) for p in TOWNS.values()], crs=4326)
    planner = toolkit.widgets.route_planner(places=places, coordinates=TOWNS["Encamp"],
                                            debounce=0, interactive=False, connection=conn)
    planner.widget  # noqa: B018 - builds the view, so plans are drawn too
    planner.origin.search("Sant Jul")
    planner.origin.choose(0)
    planner.destination.search("Soldeu")
    planner.destination.choose(0)
    routes = planner.plan()
    assert routes["route_index"].tolist()[0] == 0 and routes["error.code"].isna().all()
    start = shapely.get_coordinates(routes.geometry.iloc[0])[0]
    assert shapely.Point(start).distance(shapely.Point(TOWNS["Sant Julià de Lòria"])) < 0.005
    assert planner.incidents is not None and planner.figure is not None
    summary = planner.summary()
    assert list(summary.columns) == ["route_index", "km", "minutes", "minutes_in_traffic",
                                     "incidents_on_route"]
    assert (summary["minutes_in_traffic"] >= summary["minutes"]).all()
    # the picture's text alternative is the chart's description (the route's length in it)
    first = routes.iloc[0]
    assert f"{first['distanceInMeters'] / 1000:.1f} km" in planner._view.value
    assert 'alt="Planned routes: 1 main route and ' in planner._view.value
    # every control is labelled: the boxes, their lists of suggestions
    assert [planner.origin._text.description, planner.origin._list.description,
            planner.destination._text.description] == ["From", "Suggestions", "To"]
    by_name = planner.plan("Andorra la Vella", "Ordino")
    assert by_name["distanceInMeters"].iloc[0] > 3000
    with pytest.raises(toolkit.PlaceNotFoundError, match="no place of that name"):
        planner.locate("Atlantis")


def test_route_planner_places_a_name_it_does_not_know_through_geocode(sandbox) -> None:
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    planner = toolkit.widgets.route_planner(coordinates=TOWNS["Encamp"], debounce=0,
                                            interactive=False, connection=conn)
    with sandbox.recording() as log:
        lon, lat = planner.locate("Ordino")
    assert [entry.path for entry in log] == ["/geocode"]
    found = toolkit.geocode("Ordino", top=1, connection=conn).geometry.iloc[0]
    assert (lon, lat) == (found.x, found.y)
    assert shapely.Point(lon, lat).distance(shapely.Point(TOWNS["Ordino"])) < 0.005


def test_route_planner_shows_the_plan_on_an_interactive_map(sandbox) -> None:
    pytest.importorskip("folium")
    from toolkit.explore import map_summary

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
    assert planner._view.layout.min_height == "420px"  # sized to show in JupyterLab
    assert "<iframe" in planner._view.value and "height:420px" in planner._view.value
    data = planner._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    static = data["text/html"]
    assert "<iframe" in static and "height:420px" in static and "<table" in static
    main = int((routes["route_index"] == 0).sum())
    assert f'title="interactive map: {main} main route' in static
    conn.close()


def test_interactive_is_checked(conn) -> None:
    with pytest.raises(toolkit.ValidationError, match="interactive"):
        toolkit.widgets.route_planner(interactive=1, connection=conn)


def test_a_failed_call_is_shown_as_text_in_the_status_lines_and_the_static_views() -> None:
    import html

    from tests.security.hostile import Answer, Hostile

    said = '<img src=x onerror="alert(1)">'

    def refuse(seen, server) -> Answer:
        return Answer(400, {"error": {"code": "BadRequest", "message": said}})

    with Hostile(refuse) as server:
        conn = toolkit.connect(base_url=server.url, maps_key="k" * 43, progress=False)
        conn.sleep = lambda seconds: None
        places = gpd.GeoDataFrame({"name": list(TOWNS)},
                                  geometry=[shapely.Point(p) for p in TOWNS.values()], crs=4326)
        planner = toolkit.widgets.route_planner(places=places, coordinates=TOWNS["Encamp"],
                                                debounce=0, interactive=False, connection=conn)
        planner.widget  # noqa: B018 - builds the view: the button, the status line
        planner.origin.type("Can")
        planner.origin.place = places.iloc[[0]]
        planner.destination.place = places.iloc[[1]]
        planner.widget.children[1].click()  # "Plan route", refused by the service
        conn.close()
    for box_or_planner, line in ((planner.origin, planner.origin._status.value),
                                 (planner, planner._summary.value)):
        assert said in box_or_planner.error
        assert "<img" not in line and said in html.unescape(line)
        assert "<img" not in box_or_planner.static_html()
        assert said in html.unescape(box_or_planner.static_html())
