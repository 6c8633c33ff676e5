"""Map pictures: routes, snapped traces and incidents over the service frames, and their
backgrounds (the caller's frame, the bundled roads of Andorra where they overlap the data, or
none), with the credit line only when something was drawn."""

from __future__ import annotations

import geopandas as gpd
import matplotlib
import pytest
import shapely

import toolkit
from tests.maps.conftest import TOWNS, drive
from toolkit._core.errors import ValidationError
from toolkit._data.andorra import ATTRIBUTION, roads
from toolkit.plot.maps import draw_background

matplotlib.use("Agg")

ANDORRA = (1.40, 42.42, 1.80, 42.66)


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
    from matplotlib.colors import to_hex

    drawn = {c.get_gid(): c for c in ax.collections if (c.get_gid() or "").startswith("route")}
    main, alternative = drawn["route-main"], drawn["route-alternative"]
    assert len(main.get_segments()) >= 1  # the main route (the other query fails)
    assert main.get_linewidth()[0] > alternative.get_linewidth()[0]
    # one colour per meaning, the alternatives' not the main routes'
    assert {to_hex(c) for c in main.get_colors()} != {to_hex(c) for c in
                                                         alternative.get_colors()}
    assert len(ax.collections) >= 3  # road background and incident markers
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"main route", "alternative", "start"} <= set(labels)
    assert any(label.startswith("end") for label in labels)
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


def test_reachable_ranges_picture(sandbox) -> None:
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_hex

    conn = toolkit.connect(sandbox=sandbox, progress=False)
    ranges = toolkit.route_range([TOWNS["Canillo"], (-30.0, 10.0)], time_budget=[600, 300],
                                 connection=conn)
    before = ranges.copy()
    ax = toolkit.plot.reachable_ranges(ranges)
    patches = [p for p in ax.patches if p.get_gid() == "range"]
    assert len(patches) == 2  # the origin at sea failed: nothing drawn for it
    # the larger budget first (under), lighter; the smaller on top, darker
    first, second = (to_hex(p.get_facecolor()) for p in patches)
    assert first != second
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["5 min", "10 min", "origin (on the road)"]
    assert "Canillo" not in _texts(ax)  # a position was given, not a name
    assert any(t.startswith("origin 0") for t in _texts(ax))
    assert ATTRIBUTION in _texts(ax)
    assert ax.get_title() == "Reachable within 5 and 10 min from 1 place"
    assert ranges.equals(before)
    plt.close(ax.figure)
    distance = toolkit.route_range(TOWNS["Canillo"], distance_budget=2500, connection=conn)
    ax = toolkit.plot.reachable_ranges(distance, labels=False, background=None)
    assert ax.get_legend().get_texts()[0].get_text() == "2.5 km"
    assert not _texts(ax) or ATTRIBUTION not in _texts(ax)
    plt.close(ax.figure)
    with pytest.raises(ValidationError, match=r"plot\.reachable_ranges needs the columns"):
        toolkit.plot.reachable_ranges(ranges.drop(columns="center"))


def _route_frame(points: list[tuple[float, float]]) -> gpd.GeoDataFrame:
    line = shapely.MultiLineString([points])
    return gpd.GeoDataFrame({"query_index": [0], "route_index": [0]}, geometry=[line],
                            crs="EPSG:4326")


IN_ANDORRA = _route_frame([(1.5212, 42.5069), (1.5334, 42.5561)])
IN_PARIS = _route_frame([(2.35, 48.85), (2.29, 48.86)])


def _texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


def _background(ax) -> list:
    """The collections of the background (not the routes drawn over it)."""
    return [c for c in ax.collections if not (c.get_gid() or "").startswith("route")]


@pytest.fixture(autouse=True)
def _close_figures():
    import matplotlib.pyplot as plt

    yield
    plt.close("all")


def test_bundled_roads_are_drawn_and_credited_where_they_cover_the_data() -> None:
    ax = toolkit.plot.routes(IN_ANDORRA, labels=False)
    assert ATTRIBUTION in _texts(ax)
    drawn = sum(len(c.get_segments()) for c in _background(ax))
    assert drawn == len(roads())


def test_elsewhere_the_bundled_roads_are_not_drawn_nor_credited() -> None:
    ax = toolkit.plot.routes(IN_PARIS, labels=False)
    assert ATTRIBUTION not in _texts(ax)
    assert not _background(ax)


def test_no_background_no_credit() -> None:
    ax = toolkit.plot.routes(IN_ANDORRA, background=None, labels=False)
    assert ATTRIBUTION not in _texts(ax)
    assert not _background(ax)


def test_a_background_of_ones_own_with_its_credit() -> None:
    own = gpd.GeoDataFrame({"highway": ["primary", "residential"]},
                           geometry=[shapely.LineString([(2.3, 48.8), (2.4, 48.9)]),
                                     shapely.MultiLineString([[(2.3, 48.9), (2.35, 48.85)],
                                                              [(2.31, 48.8), (2.32, 48.81)]])])
    own.attrs["attribution"] = "Paris roads, city open data"
    ax = toolkit.plot.routes(IN_PARIS, background=own, labels=False)
    assert "Paris roads, city open data" in _texts(ax)
    assert ATTRIBUTION not in _texts(ax)
    assert sum(len(c.get_segments()) for c in _background(ax)) == 3
    own.attrs.clear()
    ax = toolkit.plot.routes(IN_PARIS, background=own, labels=False)
    assert not any("roads" in t for t in _texts(ax))


def test_draw_background_reports_the_credit_it_owes() -> None:
    import matplotlib.pyplot as plt

    _, ax = plt.subplots()
    assert draw_background(ax, True, (1.5, 42.5, 1.6, 42.6)) == ATTRIBUTION
    _, ax = plt.subplots()
    assert draw_background(ax, True, (2.3, 48.8, 2.4, 48.9)) is None
    _, ax = plt.subplots()
    empty = gpd.GeoDataFrame({"geometry": [shapely.LineString()]})
    empty.attrs["attribution"] = "nothing"
    assert draw_background(ax, empty) is None


@pytest.mark.parametrize("bad", ["roads", 1, [(1.5, 42.5)]])
def test_a_background_that_is_not_lines_is_refused(bad) -> None:
    with pytest.raises(ValidationError, match="background"):
        toolkit.plot.routes(IN_ANDORRA, background=bad)


def test_plot_addresses_joins_each_point_to_its_match_and_counts_the_types(sandbox) -> None:
    import matplotlib.pyplot as plt

    conn = toolkit.connect(sandbox=sandbox, progress=False)
    points = [(1.5331, 42.5560), (1.5975, 42.5676), (-30.0, 30.0)]
    df = toolkit.reverse_geocode(points, connection=conn)
    ax = toolkit.plot.addresses(df, background=None)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    kinds = df["type"].dropna().astype(str).value_counts()
    assert legend[0] == "point asked" and "no match (1)" in legend
    assert all(f"{k} ({n})" in legend for k, n in kinds.items())
    joins = [c for c in ax.collections if c.__class__.__name__ == "LineCollection"]
    assert len(joins) == 1 and len(joins[0].get_segments()) == 2
    texts = {t.get_text() for t in ax.texts}
    assert set(df["address.addressLine"].dropna()) <= texts
    plt.close("all")
    conn.close()
