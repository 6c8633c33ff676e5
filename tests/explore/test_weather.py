"""Interactive weather maps: air quality per place (one layer per forecast day) and alert areas
per category, with the frames' columns as tooltips."""

from __future__ import annotations

import pytest

from tests.explore.conftest import tooltip_labels

explore = pytest.importorskip("toolkit.explore")
pytest.importorskip("folium")
from toolkit.explore import map_summary  # noqa: E402


def test_weather_maps(frames) -> None:
    air = map_summary(explore.air_quality(frames["air"])).set_index("layer")
    assert air.loc["air quality", "features"] == frames["air"].geometry.notna().sum()
    assert air.loc["air quality", "tooltip_fields"] == tooltip_labels("air_quality")

    forecast = map_summary(explore.air_quality(frames["forecast"]))
    # a day's forecast starts at local midnight (23:00 UTC the day before in Andorra's
    # winter): its layer is named by the local date
    starts = frames["forecast"]["dateTime"].dt.tz_convert("Europe/Andorra")
    assert (starts.dt.hour == 0).all()
    days = starts.dt.date.astype(str).unique()
    assert sorted(forecast["layer"]) == sorted(f"air quality {d}" for d in days)
    assert forecast["shown"].tolist() == [True] + [False] * (len(days) - 1)
    assert forecast["features"].sum() == len(frames["forecast"])
    assert forecast["tooltip_fields"].iloc[0] == tooltip_labels("air_quality_forecast")

    alerts = frames["alerts"]
    summary = map_summary(explore.alerts(alerts))
    assert summary["features"].sum() == alerts["alertId"].notna().sum()
    assert set(summary["layer"]) == {f"alerts: {c}" for c in alerts["category"].dropna()}
    assert summary["tooltip_fields"].iloc[0] == tooltip_labels("severe_weather_alerts")


def test_air_quality_with_alerts_has_both_in_its_legend(frames) -> None:
    # the alert markers drawn over the air quality carry their status colours: the legend says
    # which status each colour is, beside the air-quality categories
    m = explore.air_quality(frames["air"], alerts=frames["alerts"])
    html = m.get_root().render()
    legend = html[html.index("toolkit-legend"):]
    statuses = set(frames["alerts"]["latestStatus.english"].dropna().astype(str))
    assert statuses and all(f"alert: {s}" in legend for s in statuses)
    categories = set(frames["air"]["category"].dropna().astype(str))
    assert all(c in legend for c in categories)
    only_air = explore.air_quality(frames["air"]).get_root().render()
    assert "alert: " not in only_air[only_air.index("toolkit-legend"):]
