"""Map pictures and widgets: attribution, what they draw, driving the widgets from code."""

from __future__ import annotations

import geopandas as gpd
import matplotlib
import pytest
import shapely

import toolkit
from tests.maps.conftest import TOWNS, drive
from toolkit._core.errors import ValidationError
from toolkit.plot.maps import ATTRIBUTION
from toolkit.widgets.maps import Debouncer, suggestion_labels

matplotlib.use("Agg")
ANDORRA = (1.40, 42.42, 1.80, 42.66)


def _texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


@pytest.fixture(scope="module")
def planned(sandbox):
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    routes = toolkit.route_directions(
        [{"origin": TOWNS["Andorra la Vella"], "destination": TOWNS["Canillo"]},
         {"origin": (1.30, 42.60), "destination": TOWNS["Canillo"]}],
        max_route_count=2, connection=conn)
    incidents = toolkit.traffic_incidents(ANDORRA, connection=conn)
    return routes, incidents


def test_routes_picture(planned) -> None:
    import matplotlib.pyplot as plt

    routes, incidents = planned
    before = routes.copy()
    ax = toolkit.plot.routes(routes, incidents=incidents)
    assert ATTRIBUTION in _texts(ax)
    widths = sorted({round(line.get_linewidth(), 1) for line in ax.get_lines()})
    assert 3.0 in widths and 1.6 in widths  # main and alternative
    assert len(ax.collections) >= 3  # road background and incident markers
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"main route", "alternative"} <= set(labels)
    assert routes.equals(before)  # the input is never changed
    plt.close(ax.figure)


def test_snapped_trace_picture(sandbox) -> None:
    import matplotlib.pyplot as plt

    conn = toolkit.connect(sandbox=sandbox, progress=False)
    raw = drive([TOWNS["Andorra la Vella"], TOWNS["Encamp"]], spacing_m=50, noise_m=10)
    snapped = toolkit.snap_to_roads(raw, include_speed_limit=True, connection=conn)
    ax = toolkit.plot.snapped_trace(raw, snapped)
    assert ATTRIBUTION in _texts(ax)
    cbar_axes = [a for a in ax.figure.axes if a is not ax]
    assert cbar_axes and "speed limit" in cbar_axes[0].get_ylabel()
    plt.close(ax.figure)


def test_incidents_picture(planned) -> None:
    import matplotlib.pyplot as plt

    _, incidents = planned
    ax = toolkit.plot.incidents(incidents, bbox=ANDORRA)
    assert ATTRIBUTION in _texts(ax)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert set(incidents["incidentType"].astype(str)) <= set(labels)
    assert {"LowImpact", "Serious"} <= set(labels)
    plt.close(ax.figure)
    with pytest.raises(ValidationError, match=r"plot\.incidents needs the columns"):
        toolkit.plot.incidents(incidents.drop(columns="endPoint"))


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
    by_name = planner.plan("Andorra la Vella", "Ordino")
    assert by_name["distanceInMeters"].iloc[0] > 3000
    with pytest.raises(ValidationError, match="no coordinates"):
        planner.locate("Atlantis")
