"""The one style of the plot helpers, and every helper tested as a picture.

The style: series colours kept off the colours that carry meaning, report defaults applied
whatever the user's own settings, without changing them. The pictures: each helper's compared
with a baseline image judged by eye (``tests/plot/baseline/``), no two texts overlapping, no text
under 8 pt, nothing cut at the figure's edge, report dpi, the user's ``rcParams`` left as they
were.

The frames the pictures draw come from a sandbox of their own (a fixed seed and the tests'
pinned day), so they are the same on every run. To redraw the baselines after a deliberate
change, run this module with ``TOOLKIT_UPDATE_BASELINES=1`` and look at every image before
committing it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib.colors import to_rgb
from matplotlib.testing.compare import compare_images
from matplotlib.text import Text

import toolkit
from tests.maps.conftest import TOWNS, drive
from toolkit._core.frames import build_frame
from toolkit._spec.maps import AIR_QUALITY_COLORS
from toolkit.arm._schemas import ENCRYPTION_PROTECTOR
from toolkit.plot._common import HEALTH_COLORS
from toolkit.plot._style import MIN_FONT_SIZE, SERIES_COLORS, axis_label, series_style
from toolkit.plot.maps import INCIDENT_COLORS
from toolkit.plot.policy import COMPLIANCE_COLORS
from toolkit.plot.weather import STATUS_COLORS
from toolkit.sandbox.server import Sandbox


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


def test_what_the_backend_sets_as_it_loads_outlives_the_style(tmp_path) -> None:
    # The first helper of a session loads the backend; IPython's inline backend then turns
    # interactive mode on (figures show at the end of a cell), which the style's context must
    # not undo as it closes.
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).parents[2]
    code = ("import matplotlib, pandas as pd, toolkit.plot\n"
            "df = pd.DataFrame({'policy_id': ['a'], 'requirement': ['mfa']})\n"
            "toolkit.plot.authentication_strength_usage(df)\n"
            "print(matplotlib.is_interactive())\n")
    env = {**os.environ, "MPLBACKEND": "module://tests.plot.interactive_backend",
           "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


# --------------------------------------------------------------------------------------------
# every helper as a picture

BASELINE = Path(__file__).parent / "baseline"
#: RMS difference (0-255) a picture may differ from its baseline by: font hinting and
#: anti-aliasing differ a little between FreeType builds; a moved label or a changed colour
#: does not stay under it.
TOLERANCE = 3.0
ANDORRA = (1.40, 42.42, 1.80, 42.66)


@pytest.fixture(scope="module")
def frames() -> Any:
    """Every frame the pictures draw, from a sandbox of this module's own."""
    with Sandbox(seed=7) as sb:
        conn = toolkit.connect(sandbox=sb, progress=False)
        conn.sleep = lambda s: None
        world = sb.world
        cat = sb.catalog()
        out: dict[str, Any] = {}
        gw = cat.query("kind == 'application_gateway' and name == 'agw-api-prod-weu'").iloc[0]
        out["health"] = toolkit.backend_health(gw.subscription_id, gw.resource_group,
                                               gw["name"], connection=conn)
        records = []
        for s in world.section("sql").servers:
            records.append({"id": f"/subscriptions/{s.subscription_id}/resourceGroups/"
                                  f"{s.resource_group}/providers/Vendor.Sql/servers/{s.name}/"
                                  "encryptionProtector/current",
                            "properties": s.protector["properties"], "server": s.name})
        out["posture"] = build_frame(records, ENCRYPTION_PROTECTOR)
        out["usage"] = pd.DataFrame({
            "policy_id": ["p1", "p1", "p1", "p1", "p2", "p2", "p2", "p3"],
            "policy_name": ["phishing-resistant"] * 4 + ["passwordless"] * 3 + [None],
            "requirement": ["mfa", "mfa", "mfa", "mfa", "mfa", "none", "none", "none"]})
        for built in ("posture", "usage"):  # built here from the sandbox's world: its data
            out[built].attrs["sandbox"] = True
        sub = next(s for s in world.subscriptions if s.name == "retail-prod")
        end = pd.Timestamp(world.epoch)
        out["summary"] = toolkit.policy_summary(sub.id, start=end - pd.Timedelta(days=1),
                                                end=end, connection=conn)
        out["latest"] = toolkit.policy_states(sub.id, "rg-web-weu", start=end - pd.Timedelta(
            days=1), end=end, connection=conn)
        history = toolkit.policy_states(sub.id, "rg-data-weu", resource="default",
                                        start=end - pd.Timedelta(days=21), end=end,
                                        connection=conn)
        out["trend"] = toolkit.compliance_trend(
            history[history["policyAssignmentName"] == "monitoring-baseline"])
        out["trend_by"] = toolkit.compliance_trend(
            history[history["policyAssignmentName"] != "monitoring-baseline"],
            by="policyAssignmentName")
        out["end"] = end
        depot = TOWNS["Andorra la Vella"]
        out["routes"] = toolkit.route_directions(
            [{"origin": depot, "destination": TOWNS[t]} for t in
             ("Canillo", "Ordino", "Sant Julià de Lòria", "Encamp")], connection=conn)
        out["two_ways"] = toolkit.route_directions(
            [{"origin": depot, "destination": TOWNS["Soldeu"]}], max_route_count=2,
            connection=conn)
        out["incidents"] = toolkit.traffic_incidents(ANDORRA, connection=conn)
        out["matrix"] = toolkit.route_matrix(
            ["Andorra la Vella", "Canillo", "Encamp", "Sant Julià de Lòria"],
            ["Ordino", "La Massana", "Soldeu", (1.30, 42.60)], connection=conn)
        out["ranges"] = toolkit.route_range("Encamp", time_budget=[300, 600, 900],
                                            connection=conn)
        out["raw"] = drive([depot, TOWNS["Encamp"]], spacing_m=50, noise_m=10)
        out["snapped"] = toolkit.snap_to_roads(out["raw"], include_speed_limit=True,
                                               connection=conn)
        places = cat[cat["kind"] == "place"]
        lonlat = places["location"].str.split(",", expand=True).astype(float)
        where = list(zip(lonlat[0], lonlat[1], strict=True))
        out["air"] = toolkit.air_quality(where, connection=conn).assign(
            place=places["name"].to_numpy())
        towns = [TOWNS[t] for t in ("Andorra la Vella", "Ordino", "Canillo", "Encamp")]
        out["forecast"] = toolkit.air_quality_forecast(towns, duration=7, connection=conn)
        out["alerts"] = toolkit.severe_weather_alerts(towns, connection=conn)
        out["hourly"] = toolkit.air_quality_hourly_forecast(towns[:3], duration=48,
                                                            connection=conn)
        stops = [TOWNS[t] for t in ("Andorra la Vella", "Ordino", "Canillo", "Encamp")]
        out["addresses"] = toolkit.reverse_geocode(
            [*stops, (1.5240, 42.5090), (1.5350, 42.5575), (1.4500, 42.6000)],
            connection=conn)
        drive_to = out["two_ways"].geometry.iloc[0].geoms[0]
        points = [drive_to.interpolate(f, normalized=True) for f in (0, 0.25, 0.5, 0.75, 1)]
        along = toolkit.air_quality_forecast([(p.x, p.y) for p in points], duration=3,
                                             connection=conn)
        out["along"] = along.assign(km=along["location_index"].astype(float) * 5.0)
        conn.close()
        yield out


#: Each helper (one picture per name) and how it is drawn from the frames.
PICTURES: dict[str, Callable[[dict[str, Any]], Any]] = {
    "backend_health": lambda f: toolkit.plot.backend_health(f["health"]),
    "encryption_posture": lambda f: toolkit.plot.encryption_posture(f["posture"]),
    "authentication_strength_usage":
        lambda f: toolkit.plot.authentication_strength_usage(f["usage"]),
    "compliance_by": lambda f: toolkit.plot.compliance_by(f["latest"], by="resourceType"),
    "compliance_by__summary": lambda f: toolkit.plot.compliance_by(f["summary"]),
    "noncompliance_heatmap": lambda f: toolkit.plot.noncompliance_heatmap(f["latest"]),
    "compliance_trend": lambda f: toolkit.plot.compliance_trend(
        f["trend"], events=[(f["end"] - pd.Timedelta(days=10), "campaign")]),
    "compliance_trend__by": lambda f: toolkit.plot.compliance_trend(
        f["trend_by"], by="policyAssignmentName"),
    "routes": lambda f: toolkit.plot.routes(f["routes"]),
    "routes__alternatives": lambda f: toolkit.plot.routes(f["two_ways"],
                                                         incidents=f["incidents"]),
    "snapped_trace": lambda f: toolkit.plot.snapped_trace(f["raw"], f["snapped"]),
    "incidents": lambda f: toolkit.plot.incidents(f["incidents"]),
    "travel_times": lambda f: toolkit.plot.travel_times(f["matrix"]),
    "travel_times__distance": lambda f: toolkit.plot.travel_times(f["matrix"],
                                                                  value="distance"),
    "reachable_ranges": lambda f: toolkit.plot.reachable_ranges(f["ranges"]),
    "air_quality_map": lambda f: toolkit.plot.air_quality_map(f["air"], labels="place"),
    "pollutants": lambda f: toolkit.plot.pollutants(f["air"], location=int(
        f["air"]["globalIndex"].idxmax())),
    "air_quality_forecast": lambda f: toolkit.plot.air_quality_forecast(f["forecast"],
                                                                        location=0),
    "air_quality_forecast__grid": lambda f: toolkit.plot.air_quality_forecast(f["forecast"]),
    "forecast_along": lambda f: toolkit.plot.forecast_along(f["along"], "km"),
    "alert_timeline": lambda f: toolkit.plot.alert_timeline(f["alerts"]),
    "air_quality_hours": lambda f: toolkit.plot.air_quality_hours(
        f["hourly"], labels=["Andorra la Vella", "Ordino", "Canillo"], tz="Europe/Andorra"),
    "addresses": lambda f: toolkit.plot.addresses(f["addresses"]),
}


def test_every_helper_has_a_picture() -> None:
    drawn = {name.split("__")[0] for name in PICTURES}
    # the mark and the descriptions (for charts of one's own) draw no chart
    assert set(toolkit.plot.__all__) - {"mark_sandbox", "describe", "set_description",
                                        "output_alt"} <= drawn


def _texts(fig: Any) -> list[Text]:
    """Every text the figure draws: titles, labels, legends, annotations, marks, and the labels
    of the ticks inside the view (matplotlib keeps others it does not draw)."""
    from matplotlib.axis import Tick

    fig.canvas.draw()
    ticks: list[Text] = []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if not (ax.get_visible() and axis.get_visible()):
                continue
            for tick in axis._update_ticks():
                ticks += [t for t in (tick.label1, tick.label2) if t.get_visible()]
    others = [t for t in fig.findobj(Text)
              if not isinstance(getattr(t, "_parent_tick", None), Tick)]
    tick_labels = {id(t) for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
                   for tick in axis.get_major_ticks() + axis.get_minor_ticks()
                   for t in (tick.label1, tick.label2)}
    out = ticks + [t for t in others if id(t) not in tick_labels]
    return [t for t in out if t.get_visible() and t.get_text().strip()
            and (t.axes is None or not t.get_clip_on() or _inside(t))]


def _inside(t: Text) -> bool:
    """Whether a text clipped to its axes is drawn (its anchor in the axes' box)."""
    renderer = t.figure.canvas.get_renderer()
    box = t.get_window_extent(renderer)
    return bool(t.axes.bbox.overlaps(box))


def overlapping_texts(fig: Any) -> list[tuple[str, str]]:
    """Pairs of texts whose rendered boxes overlap by more than a pixel each way."""
    renderer = fig.canvas.get_renderer()
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in _texts(fig)]
    clashes = []
    for i, (a, ba) in enumerate(boxes):
        for b, bb in boxes[i + 1:]:
            dx = min(ba.x1, bb.x1) - max(ba.x0, bb.x0)
            dy = min(ba.y1, bb.y1) - max(ba.y0, bb.y0)
            if dx > 1 and dy > 1:
                clashes.append((a, b))
    return clashes


def small_texts(fig: Any) -> list[tuple[str, float]]:
    return [(t.get_text(), t.get_fontsize()) for t in _texts(fig)
            if t.get_fontsize() < MIN_FONT_SIZE]


def outside_texts(fig: Any) -> list[str]:
    """Texts drawn (partly) outside the figure, which a saved image cuts."""
    renderer = fig.canvas.get_renderer()
    w, h = fig.canvas.get_width_height()
    out = []
    for t in _texts(fig):
        box = t.get_window_extent(renderer)
        if box.x0 < -1 or box.y0 < -1 or box.x1 > w + 1 or box.y1 > h + 1:
            out.append(t.get_text())
    return out


def legends_on_data(fig: Any) -> list[str]:
    """Legends drawn over an axes' data area (rather than beside it)."""
    renderer = fig.canvas.get_renderer()
    out = []
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None or not legend.get_visible():
            continue
        box, area = legend.get_window_extent(renderer), ax.get_window_extent(renderer)
        dx = min(box.x1, area.x1) - max(box.x0, area.x0)
        dy = min(box.y1, area.y1) - max(box.y0, area.y0)
        if dx > 1 and dy > 1:
            out.append(legend.get_title().get_text() or "legend")
    return out


@pytest.mark.parametrize("name", sorted(PICTURES))
def test_picture_reads_cleanly(frames, name) -> None:
    before = dict(matplotlib.rcParams)
    ax = PICTURES[name](frames)
    fig = ax.figure
    try:
        assert dict(matplotlib.rcParams) == before  # the user's settings are untouched
        assert fig.dpi >= 100
        assert small_texts(fig) == []
        assert overlapping_texts(fig) == []
        assert outside_texts(fig) == []
        assert legends_on_data(fig) == []
    finally:
        plt.close(fig)


@pytest.mark.parametrize("name", sorted(PICTURES))
def test_picture_matches_its_baseline(frames, name, tmp_path) -> None:
    ax = PICTURES[name](frames)
    expected = BASELINE / f"{name.replace('__', '_')}.png"
    actual = tmp_path / f"{name}.png"
    with matplotlib.rc_context({"svg.hashsalt": "toolkit", "path.simplify": True}):
        ax.figure.savefig(actual, dpi=100, metadata={"Software": None})
    plt.close(ax.figure)
    if os.environ.get("TOOLKIT_UPDATE_BASELINES"):
        BASELINE.mkdir(exist_ok=True)
        expected.write_bytes(actual.read_bytes())
        pytest.skip(f"baseline {expected.name} written: look at it before committing it")
    assert expected.exists(), f"no baseline {expected.name}: see this module's docstring"
    diff = compare_images(str(expected), str(actual), tol=TOLERANCE)
    assert diff is None, diff
