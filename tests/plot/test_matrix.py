"""The route matrix as a heat map: cells placed by their indexes, coloured and written in minutes
(or km), cells without a route grey and marked, rows and columns named by place or position."""

from __future__ import annotations

import geopandas as gpd
import matplotlib
import numpy as np
import pandas as pd
import pytest
import shapely

import toolkit
from toolkit._core.errors import ValidationError

matplotlib.use("Agg")


def _matrix(**extra) -> gpd.GeoDataFrame:
    rows = []
    for i, j, seconds, metres in [(0, 0, 600, 8000.0), (0, 1, 1500, 21000.0),
                                  (1, 0, 240, 3000.0), (1, 1, None, None)]:
        rows.append({"originIndex": i, "destinationIndex": j,
                     "durationInSeconds": seconds, "durationTrafficInSeconds": seconds,
                     "distanceInMeters": metres,
                     "origin_place": ["Ordino", None][i], "destination_place": None,
                     "geometry": shapely.LineString([(1.5 + i / 10, 42.5), (1.6, 42.5 + j / 10)])})
    df = gpd.GeoDataFrame(pd.DataFrame(rows).astype({"durationInSeconds": "Int64",
                                                       "durationTrafficInSeconds": "Int64"}),
                          crs="EPSG:4326")
    df.attrs.update(extra)
    return df


@pytest.fixture(autouse=True)
def _close():
    import matplotlib.pyplot as plt

    yield
    plt.close("all")


def test_cells_are_minutes_in_their_place_and_a_missing_route_is_marked() -> None:
    df = _matrix()
    before = df.copy()
    ax = toolkit.plot.travel_times(df)
    grid = np.ma.filled(ax.images[0].get_array(), np.nan)
    assert grid[:, 0].tolist() == [10.0, 4.0] and grid[0, 1] == 25.0 and np.isnan(grid[1, 1])
    written = {(t.get_position(), t.get_text()) for t in ax.texts}
    assert {((0, 0), "10"), ((1, 0), "25"), ((0, 1), "4.0"), ((1, 1), "×")} <= written
    # rows by place, else by position; columns by the destination's coordinates
    assert [t.get_text() for t in ax.get_yticklabels()] == ["Ordino", "1.6000, 42.5000"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1.6000, 42.5000",
                                                            "1.6000, 42.6000"]
    assert "3 of 4 trips routed" in ax.get_title() and "× no route" in ax.get_title()
    assert ax.figure.axes[1].get_ylabel() == "travel time (min)"
    assert df.equals(before)


def test_distances_in_kilometres() -> None:
    ax = toolkit.plot.travel_times(_matrix(), value="distance")
    grid = np.ma.filled(ax.images[0].get_array(), np.nan)
    assert grid[0].tolist() == [8.0, 21.0]
    assert ax.figure.axes[1].get_ylabel() == "distance (km)"


def test_a_name_from_the_data_is_drawn_as_written() -> None:
    df = _matrix()
    df["origin_place"] = ["$x^2$ town", "$x^2$ town", None, None]
    ax = toolkit.plot.travel_times(df)
    label = ax.get_yticklabels()[0]
    ax.figure.canvas.draw()
    assert label.get_text() == r"\$x^2\$ town"  # literal, no mathtext


def test_a_resumed_matrix_without_places_or_lines_names_by_position() -> None:
    df = _matrix()
    df["origin_place"] = None
    df["geometry"] = None
    ax = toolkit.plot.travel_times(df)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["origin 0", "origin 1"]


def test_bad_frames_and_values_are_refused() -> None:
    with pytest.raises(ValidationError, match=r"plot\.travel_times needs the columns"):
        toolkit.plot.travel_times(pd.DataFrame({"originIndex": [0]}))
    with pytest.raises(ValidationError, match="value"):
        toolkit.plot.travel_times(_matrix(), value="cost")
