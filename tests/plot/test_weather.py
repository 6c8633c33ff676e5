"""plot.air_quality_forecast, pollutants, air_quality_map and alert_timeline: bars, cells and
markers in the service's category and status colours, from the weather functions' frames."""

from __future__ import annotations

import pytest

import toolkit
from toolkit._core.errors import ValidationError
from toolkit.sandbox.maps.weather import world as sw

TOWNS = [(1.5212, 42.5069), (1.5404, 42.5090), (1.5335, 42.5562), (1.5980, 42.5667),
         (1.4921, 42.4667)]  # Andorra la Vella, Escaldes, Ordino, Canillo, Sant Julià (lon, lat)
MOUNTAIN = (1.4500, 42.6000)  # above Arinsal, far from roads and towns
MID_ATLANTIC = (-30.0, 40.0)


@pytest.fixture(scope="module")
def frames(sandbox):
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    conn.sleep = lambda s: None
    places = [*TOWNS, MOUNTAIN, MID_ATLANTIC]
    out = {
        "current": toolkit.air_quality(places, connection=conn),
        "forecast": toolkit.air_quality_forecast(places[:-1], duration=7, connection=conn),
        "alerts": toolkit.severe_weather_alerts(places[:-1], connection=conn),
    }
    yield out
    conn.close()


def _rgba(colour):
    from matplotlib.colors import to_rgba

    return to_rgba(colour)


def test_plot_forecast_bars_in_category_colours_with_band_limits(frames) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fc = frames["forecast"]
    before = fc.copy()
    ax = toolkit.plot.air_quality_forecast(fc, location=0, labels=["Andorra la Vella"])
    one = fc[fc["location_index"] == 0]
    bars = ax.patches
    assert len(bars) == 7
    assert [b.get_height() for b in bars] == one["globalIndex"].tolist()
    assert [b.get_facecolor() for b in bars] == [_rgba(c) for c in one["categoryColor"]]
    limits = sorted(line.get_ydata()[0] for line in ax.get_lines())
    top = ax.get_ylim()[1]
    assert limits == [v for v in (20, 50, 100, 150, 250) if v <= top]
    assert fc.equals(before)
    plt.close("all")


def test_plot_forecast_grid_for_many_places(frames) -> None:
    import matplotlib.pyplot as plt

    fc = frames["forecast"]
    ax = toolkit.plot.air_quality_forecast(fc, labels=["AlV", "Esc", "Ord", "Can", "StJ", "Mt"])
    cells = [p for p in ax.patches]
    assert len(cells) == len(fc)
    assert [c.get_facecolor() for c in cells] == [_rgba(c) for c in fc["categoryColor"]]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["AlV", "Esc", "Ord", "Can", "StJ",
                                                            "Mt"]
    plt.close("all")


def test_plot_pollutants_from_either_frame(frames) -> None:
    import matplotlib.pyplot as plt

    cur = frames["current"]
    for df in (cur, toolkit.air_quality_pollutants(cur)):
        ax = toolkit.plot.pollutants(df, location=1)
        mine = toolkit.air_quality_pollutants(cur).query("location_index == 1")
        widths = sorted(b.get_width() for b in ax.patches)
        assert widths == sorted(mine["globalIndex"].tolist())
        for b in ax.patches:
            assert b.get_facecolor() == _rgba(
                toolkit.plot.weather.AIR_QUALITY_COLORS[sw.category_of(b.get_width())])
        plt.close("all")
    with pytest.raises(ValidationError):
        toolkit.plot.pollutants(cur.drop(columns="pollutants"))


def test_plot_map_colours_each_place_and_marks_failures(frames) -> None:
    import matplotlib.pyplot as plt

    cur = frames["current"]
    ax = toolkit.plot.air_quality_map(cur, labels=["a", "b", "c", "d", "e", "f", "sea"],
                                      background=False)
    dots, crosses = ax.collections[0], ax.collections[1]
    ok = cur[cur["globalIndex"].notna()]
    assert len(dots.get_offsets()) == len(ok) == 6
    assert [tuple(c) for c in dots.get_facecolors()] == [_rgba(c) for c in ok["categoryColor"]]
    assert len(crosses.get_offsets()) == 1
    plt.close("all")


def test_plot_alert_timeline_one_bar_per_area_coloured_by_status(frames) -> None:
    import matplotlib.pyplot as plt

    al = frames["alerts"]
    ax = toolkit.plot.alert_timeline(al, now=frames["current"]["dateTime"].iloc[0])
    areas = al.drop_duplicates(["alertId", "area_index"])
    assert len(ax.patches) == len(areas)
    colours = {_rgba(toolkit.plot.weather.STATUS_COLORS[s])
               for s in areas["latestStatus.english"].astype(str)}
    assert {b.get_facecolor() for b in ax.patches} == colours
    assert len(ax.get_yticklabels()) == len(areas)
    plt.close("all")
    with pytest.raises(ValidationError):
        toolkit.plot.alert_timeline(al.iloc[0:0])


def test_forecast_along_a_route_one_line_per_day(frames) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    week = frames["forecast"].assign(km=lambda d: d["location_index"].astype(float) * 2)
    before = week.copy()
    ax = toolkit.plot.forecast_along(week, "km")
    answered = week.dropna(subset=["globalIndex"])
    days = [line for line in ax.get_lines() if not line.get_label().startswith("_")]
    assert len(days) == answered["dateTime"].nunique()  # the band limits are not days
    for line in days:
        assert list(line.get_xdata()) == sorted(line.get_xdata())  # drawn along the route
    assert len({(line.get_color(), line.get_marker()) for line in days}) == len(days)
    assert week.equals(before)
    plt.close("all")
    with pytest.raises(ValidationError, match="km"):
        toolkit.plot.forecast_along(week.drop(columns="km"))


def test_plot_hourly_forecast_one_line_per_place_each_hour_in_its_colour(sandbox) -> None:
    import matplotlib.pyplot as plt

    conn = toolkit.connect(sandbox=sandbox, progress=False)
    hourly = toolkit.air_quality_hourly_forecast(TOWNS[:2], duration=12, connection=conn)
    before = hourly.copy()
    ax = toolkit.plot.air_quality_hours(hourly, labels="place", tz="Europe/Andorra")
    lines = [line for line in ax.get_lines() if len(line.get_xdata()) > 2]
    assert len(lines) == 2
    for line, (_, rows) in zip(lines, hourly.groupby("location_index"), strict=True):
        assert list(line.get_ydata()) == rows["globalIndex"].tolist()
    dots = ax.collections
    assert [tuple(c) for c in dots[0].get_facecolors()] == [
        _rgba(c) for c in hourly[hourly["location_index"] == 0]["categoryColor"]]
    assert ax.get_xlabel() == "hour (Europe/Andorra)"
    assert hourly.equals(before)
    with pytest.raises(ValidationError):
        toolkit.plot.air_quality_hours(hourly.iloc[0:0])
    plt.close("all")
    conn.close()
