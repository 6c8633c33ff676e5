"""Text from a service or a caller is drawn as written by every plot helper and by the
air-quality explorer: a name holding ``$`` is never parsed as mathtext (an unbalanced
``$\\frac{$`` stopped the figure from drawing, deep braces recursed), and a colour that is no
colour is not drawn."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from typing import Any

import pandas as pd
import pytest

import toolkit
from tests.frames_of_every_function import TOWNS, World

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.text import Text  # noqa: E402

#: Names a service (or a caller) may send: unbalanced mathtext, balanced mathtext, braces deep
#: enough to recurse, and HTML for good measure.
HOSTILE = ["Fire risk $\\frac{$ high", "cost $x^2$ & <b>more</b>",
           "$" + "{" * 400 + "x" + "}" * 400 + "$"]


@pytest.fixture(scope="module")
def frames(sandbox) -> Iterator[World]:
    """The frame of every operation, each read from the sandbox when a case first asks for it
    (the cases draw a third of them)."""
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    conn.sleep = lambda seconds: None
    try:
        with tempfile.TemporaryDirectory(prefix="hostile-plots-") as store:
            yield World(sandbox, conn, store)
    finally:
        conn.close()


def _poisoned(df: pd.DataFrame, columns: dict[str, Any]) -> pd.DataFrame:
    """A copy of ``df`` with each named column's values cycling through the first two of
    ``HOSTILE`` (or the given value)."""
    out = df.copy()
    for name, value in columns.items():
        if value is None:
            value = [HOSTILE[i % 2] for i in range(len(out))]
        out[name] = pd.Series(value, index=out.index, dtype=object) if isinstance(value, list) \
            else value
    return out


def _cases(f: World, text: str) -> dict[str, Callable[[], Any]]:
    plot = toolkit.plot
    trend = toolkit.compliance_trend(_poisoned(f["policy_states"],
                                               {"policyAssignmentName": None}),
                                     by="policyAssignmentName")
    aq = _poisoned(f["air_quality"], {"categoryColor": "<script>"})
    forecast = _poisoned(f["air_quality_forecast"], {"dominantPollutant": None,
                                                     "categoryColor": "#zzz"})
    along = forecast.assign(km=forecast["location_index"].astype(float))
    pollutants = _poisoned(f["air_quality_pollutants"], {"type": None,
                                                         "concentration.unit": text})
    incidents = _poisoned(f["traffic_incidents"], {"incidentType": None})
    from toolkit._data.andorra import roads as andorra_roads

    # lines of one's own, credited in the service's words: a few of the bundled roads (what is
    # checked is the credit line, drawn as written; all 2,000 roads only take longer to draw)
    background = andorra_roads().iloc[:200].copy()
    background.attrs["attribution"] = text
    return {
        "backend_health": lambda: plot.backend_health(
            _poisoned(f["backend_health"], {"backendAddressPool.name": None}), title=text),
        "encryption_posture": lambda: plot.encryption_posture(
            _poisoned(f["encryption_protector"], {"team": text}), by="team", title=text),
        "authentication_strength_usage": lambda: plot.authentication_strength_usage(
            _poisoned(f["authentication_strength_audit"], {"policy_name": None}), title=text),
        "compliance_by": lambda: plot.compliance_by(
            _poisoned(f["policy_states"], {"policyAssignmentName": None}), title=text),
        "compliance_trend": lambda: plot.compliance_trend(
            trend, by="policyAssignmentName", title=text, events=[(trend["day"].iloc[0], text)]),
        "noncompliance_heatmap": lambda: plot.noncompliance_heatmap(
            _poisoned(f["policy_states"], {"resourceType": None, "resourceLocation": None,
                                           "complianceState": "NonCompliant"}), title=text),
        "routes": lambda: plot.routes(f["route_directions"], incidents=incidents, title=text,
                                      background=background),
        "snapped_trace": lambda: plot.snapped_trace(list(TOWNS.values())[:2],
                                                    f["snap_to_roads"], title=text),
        "incidents": lambda: plot.incidents(incidents, title=text),
        "travel_times": lambda: plot.travel_times(
            _poisoned(f["route_matrix"], {"origin_place": None, "destination_place": text})),
        "reachable_ranges": lambda: plot.reachable_ranges(
            _poisoned(f["route_range"], {"place": None}), background=background),
        "air_quality_forecast": lambda: plot.air_quality_forecast(
            forecast, labels=[text, text + " 2"], title=text),
        "air_quality_forecast, one place": lambda: plot.air_quality_forecast(
            forecast, location=0, labels=[text]),
        "forecast_along": lambda: plot.forecast_along(along, title=text, xlabel=text),
        "pollutants": lambda: plot.pollutants(pollutants, title=text),
        "air_quality_map": lambda: plot.air_quality_map(aq, labels=[text] * 4, title=text),
        "air_quality_hours": lambda: plot.air_quality_hours(
            _poisoned(f["air_quality_hourly_forecast"], {"categoryColor": "#zzz"}),
            labels=[text, text + " 2"], title=text),
        "addresses": lambda: plot.addresses(
            _poisoned(f["reverse_geocode"], {"type": None, "address.addressLine": None}),
            title=text, background=background),
        "alert_timeline": lambda: plot.alert_timeline(
            _poisoned(f["severe_weather_alerts"], {"name": None, "description.english": text,
                                                   "latestStatus.english": None}),
            title=text),
    }


def _shown(fig: Any) -> list[tuple[str, bool]]:
    """Every text of the figure as matplotlib draws it, and whether it is read as mathtext."""
    fig.canvas.draw()  # raises, on mathtext it cannot parse
    return [t._preprocess_math(t.get_text()) for t in fig.findobj(Text) if t.get_text()]


@pytest.mark.parametrize("text", HOSTILE[:2])
def test_every_plot_helper_draws_a_services_text_as_written(frames, text) -> None:
    cases = _cases(frames, text)
    drawn = {name.split(",")[0] for name in cases}
    # every helper that draws is tried (the others mark or describe a chart)
    assert drawn == set(toolkit.plot.__all__) - {"mark_sandbox", "describe", "set_description",
                                                 "output_alt"}
    for name, draw in cases.items():
        ax = draw()
        fig = ax.figure.figure
        try:
            shown = _shown(fig)
            assert [s for s, math in shown if math] == [], name  # nothing read as mathtext
            assert any(text in s or any(h in s for h in HOSTILE) for s, _ in shown), name
        finally:
            plt.close(fig)


def test_braces_deep_enough_to_recurse_are_drawn_as_written(frames) -> None:
    deep = HOSTILE[2]
    fig, ax = plt.subplots(figsize=(60, 4))  # no layout engine: the label is 800 characters
    try:
        toolkit.plot.alert_timeline(
            _poisoned(frames["severe_weather_alerts"], {"name": deep}), title=deep, ax=ax)
        assert (deep, False) in _shown(fig)
    finally:
        plt.close(fig)


def test_the_air_quality_explorer_draws_a_services_names_as_written(sandbox) -> None:
    pytest.importorskip("ipywidgets")
    from toolkit.widgets.weather import AirQualityExplorer

    conn = toolkit.connect(sandbox=sandbox, progress=False)
    conn.sleep = lambda seconds: None
    try:
        explorer = AirQualityExplorer(interactive=False, connection=conn)
        result = explorer.select(TOWNS["Ordino"], label=HOSTILE[1])
        result.alerts = _poisoned(result.alerts, {"name": HOSTILE[0]})
        fig = result.figure()
        try:
            shown = _shown(fig)
            assert [s for s, math in shown if math] == []
            assert any(HOSTILE[0] in s for s, _ in shown)
        finally:
            plt.close(fig)
        explorer._render(result)  # the picture the widget shows is drawn
        assert explorer.picture_png[:4] == b"\x89PNG"
        # its description names the place, as text in the picture's alt
        assert "<b>" not in explorer.picture.value
        assert "&lt;b&gt;more&lt;/b&gt;" in explorer.picture.value
    finally:
        conn.close()
