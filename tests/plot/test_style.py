"""The one style of the plot helpers: series colours kept off the colours that carry meaning,
and report defaults applied whatever the user's own settings, without changing them."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib.colors import to_rgb

import toolkit
from toolkit._spec.maps import AIR_QUALITY_COLORS
from toolkit.plot._common import HEALTH_COLORS
from toolkit.plot._style import MIN_FONT_SIZE, SERIES_COLORS, axis_label, series_style
from toolkit.plot.maps import INCIDENT_COLORS
from toolkit.plot.policy import COMPLIANCE_COLORS
from toolkit.plot.weather import STATUS_COLORS


def _distance(a: str, b: str) -> float:
    return sum((x - y) ** 2 for x, y in zip(to_rgb(a), to_rgb(b), strict=True)) ** 0.5


@pytest.mark.parametrize("palette", [COMPLIANCE_COLORS, HEALTH_COLORS, AIR_QUALITY_COLORS],
                         ids=["compliance", "health", "air quality"])
def test_series_colours_are_not_the_colours_of_states(palette) -> None:
    # no series colour reads as a state's (RGB distance: 0.25 keeps a green off "compliant")
    for series in SERIES_COLORS:
        for state, colour in palette.items():
            assert _distance(series, colour) > 0.25, (series, state)


def test_series_are_told_apart_by_more_than_colour() -> None:
    styles = [series_style(k) for k in range(30)]
    assert len({(s["color"], s["marker"]) for s in styles}) == 30
    assert len({(s["marker"], s["ls"]) for s in styles[:4]}) == 4


def test_semantic_palettes_exist_for_every_meaning() -> None:
    assert {"compliant", "non_compliant"} <= set(COMPLIANCE_COLORS)
    assert INCIDENT_COLORS and STATUS_COLORS


def test_axis_titles_are_words() -> None:
    assert axis_label("resourceType") == "resource type"
    assert axis_label("policyAssignmentName") == "policy assignment"
    assert axis_label("resource_group") == "resource group"
    assert axis_label("backendAddressPool.name") == "backend address pool name"


def test_report_defaults_whatever_the_users_settings_and_those_left_alone() -> None:
    trend = pd.DataFrame({
        "day": pd.date_range("2026-11-01", periods=5, freq="D", tz="UTC"),
        "compliance_pct": [50.0, 55, 60, 65, 70], "non_compliant": [5, 4, 4, 3, 3],
        "complete": [False, True, True, True, False]})
    with matplotlib.rc_context({"figure.dpi": 72, "font.size": 6, "xtick.labelsize": 5,
                                "ytick.labelsize": 5, "axes.labelsize": 5}):
        ax = toolkit.plot.compliance_trend(trend)
        assert matplotlib.rcParams["figure.dpi"] == 72  # the user's settings, untouched
        fig = ax.figure
        fig.canvas.draw()
        assert fig.dpi >= 100
        texts = [t for t in fig.findobj(matplotlib.text.Text) if t.get_text().strip()
                 and t.get_visible()]
        assert texts and min(t.get_fontsize() for t in texts) >= MIN_FONT_SIZE
    plt.close("all")
