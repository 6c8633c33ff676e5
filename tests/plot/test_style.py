"""The one style of the plot helpers, and every helper tested as a picture.

The style: series colours kept off the colours that carry meaning, report defaults applied
whatever the user's own settings, without changing them. The pictures: each helper's compared
with a baseline image judged by eye (``tests/plot/baseline/``), no two texts overlapping, no text
under 8 pt, nothing cut at the figure's edge, report dpi, the user's ``rcParams`` left as they
were.

The pictures and the frames they draw are those of tests/plot/pictures.py (a sandbox of their
own, with a fixed seed and the tests' pinned day), so they are the same on every run; each is
drawn once and saved as the baselines were, then read and compared. To redraw the baselines
after a deliberate change, run this module with ``TOOLKIT_UPDATE_BASELINES=1`` and look at
every image before committing it.
"""

from __future__ import annotations

import os
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
from tests.plot.pictures import GROUP, PICTURES, SAVED_DPI
from toolkit._spec.maps import AIR_QUALITY_COLORS
from toolkit.plot._common import HEALTH_COLORS
from toolkit.plot._style import MIN_FONT_SIZE, SERIES_COLORS, axis_label, series_style
from toolkit.plot.maps import INCIDENT_COLORS
from toolkit.plot.policy import COMPLIANCE_COLORS
from toolkit.plot.weather import STATUS_COLORS

#: The pictures are drawn once for this module and tests/plot/test_description.py: one worker.
pytestmark = pytest.mark.xdist_group(GROUP)


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


def test_every_helper_has_a_picture() -> None:
    drawn = {name.split("__")[0] for name in PICTURES}
    # the mark and the descriptions (for charts of one's own) draw no chart
    assert set(toolkit.plot.__all__) - {"mark_sandbox", "describe", "set_description",
                                        "output_alt"} <= drawn


def _texts(fig: Any) -> list[Text]:
    """Every text the figure draws: titles, labels, legends, annotations, marks, and the labels
    of the ticks inside the view (matplotlib keeps others it does not draw); of a figure drawn
    (its texts laid out) at its own dpi."""
    from matplotlib.axis import Tick

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


def overlapping_texts(fig: Any, texts: list[Text]) -> list[tuple[str, str]]:
    """Pairs of the texts (``_texts(fig)``) whose rendered boxes overlap by more than a pixel
    each way."""
    renderer = fig.canvas.get_renderer()
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
    clashes = []
    for i, (a, ba) in enumerate(boxes):
        for b, bb in boxes[i + 1:]:
            dx = min(ba.x1, bb.x1) - max(ba.x0, bb.x0)
            dy = min(ba.y1, bb.y1) - max(ba.y0, bb.y0)
            if dx > 1 and dy > 1:
                clashes.append((a, b))
    return clashes


def small_texts(texts: list[Text]) -> list[tuple[str, float]]:
    return [(t.get_text(), t.get_fontsize()) for t in texts
            if t.get_fontsize() < MIN_FONT_SIZE]


def outside_texts(fig: Any, texts: list[Text]) -> list[str]:
    """The texts (``_texts(fig)``) drawn (partly) outside the figure, which a saved image
    cuts."""
    renderer = fig.canvas.get_renderer()
    w, h = fig.canvas.get_width_height()
    out = []
    for t in texts:
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
def test_picture_reads_cleanly(pictures, name) -> None:
    pictures.png(name)  # saved: laid out and drawn at SAVED_DPI, the texts where it has them
    fig = pictures.axes(name).figure
    assert pictures.changed(name) == {}  # the user's settings are untouched
    assert fig.dpi >= 100
    if fig.dpi != SAVED_DPI:  # laid out again at its own
        fig.canvas.draw()
    texts = _texts(fig)
    assert small_texts(texts) == []
    assert overlapping_texts(fig, texts) == []
    assert outside_texts(fig, texts) == []
    assert legends_on_data(fig) == []


@pytest.mark.parametrize("name", sorted(PICTURES))
def test_picture_matches_its_baseline(pictures, name, tmp_path) -> None:
    expected = BASELINE / f"{name.replace('__', '_')}.png"
    actual = tmp_path / f"{name}.png"
    actual.write_bytes(pictures.png(name))  # at SAVED_DPI, as the baselines were
    if os.environ.get("TOOLKIT_UPDATE_BASELINES"):
        BASELINE.mkdir(exist_ok=True)
        expected.write_bytes(actual.read_bytes())
        pytest.skip(f"baseline {expected.name} written: look at it before committing it")
    assert expected.exists(), f"no baseline {expected.name}: see this module's docstring"
    diff = compare_images(str(expected), str(actual), tol=TOLERANCE)
    assert diff is None, diff
