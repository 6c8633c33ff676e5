"""What every plot helper shares: imports, column checks, colours."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import wraps
from typing import TYPE_CHECKING, Any, ParamSpec

import pandas as pd

from toolkit._core.provenance import SANDBOX_MARK, from_sandbox
from toolkit._core.validate import check_frame
from toolkit.plot._display import enable_alt_text
from toolkit.plot._style import MIN_FONT_SIZE, finish_axes, report_style
from toolkit.plot.description import MARK_GID, describe

if TYPE_CHECKING:  # matplotlib is imported when a helper draws, not with the package
    from matplotlib.axes import Axes
    from matplotlib.axis import Axis
    from matplotlib.figure import Figure

__all__ = ["HEALTH_COLORS", "integer_ticks", "mark_figure", "marks_sandbox", "new_axes",
           "require_columns", "root_figure"]

_P = ParamSpec("_P")

#: The ``gid`` of the mark, so a figure carries it once however many helpers drew on it.
_MARK_GID = MARK_GID

#: Backend health colours (status-page conventions).
HEALTH_COLORS = {
    "Up": "#2e7d32",
    "Partial": "#f9a825",
    "Draining": "#1e88e5",
    "Down": "#c62828",
    "Unknown": "#9e9e9e",
}


def require_columns(df: Any, columns: Iterable[str], helper: str) -> pd.DataFrame:
    """Check that ``df`` is a frame with ``columns``; name the missing ones."""
    return check_frame(df, list(columns), helper)


def new_axes(ax: Axes | None = None, *, figsize: tuple[float, float] = (8, 4)) -> Axes:
    """Return the given Axes, or a new figure's.

    A new figure has constrained layout, so legends and labels outside the axes stay inside the
    figure.
    """
    if ax is not None:
        return ax
    try:
        import matplotlib.pyplot as plt
    except ImportError as err:  # pragma: no cover - depends on the install
        raise ImportError("plots need matplotlib: pip install 'cloudops-frames[plot]'") from err
    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def fit_height(ax: Axes, *, least: float = 3.0, rounds: int = 5) -> None:
    """Change the height of a figure a helper made to what its map needs.

    A map keeps its aspect (a degree of longitude drawn as long as it is on the ground), so in a
    figure of a fixed size a wide map leaves a blank band above and below it, and the figure's
    lower edge (and the sandbox mark on it) far from the data. The figure is laid out and its
    height searched for (regula falsi, a few ``rounds``: the labels and a colour bar laid out
    beside the map change with its height) until neither a band above and below nor one at the
    sides is left; never above the height it had, nor below ``least`` inches (or that height,
    if less). Only for figures a helper made: an Axes the caller passed keeps the caller's
    figure as it is.
    """
    fig = root_figure(ax)
    tallest = fig.get_figheight()
    lowest = min(least, tallest)
    too_tall: tuple[float, float] | None = None  # (height, band), band > 0
    too_short: tuple[float, float] | None = None  # (height, band), band < 0
    height = tallest
    for _ in range(rounds):
        band = _blank_band(ax)
        if abs(band) < 0.05:
            return
        if band > 0:
            too_tall = (height, band)
        else:
            too_short = (height, band)
        if too_tall and too_short:  # between the two: where the line through them is 0
            (h1, b1), (h0, b0) = too_tall, too_short
            new = h0 - b0 * (h1 - h0) / (b1 - b0)
        else:
            new = height - band
        new = max(lowest, min(tallest, new))
        if abs(new - height) < 0.01:
            return
        height = new
        fig.set_figheight(height)


def _blank_band(ax: Axes) -> float:
    """Lay the figure out and measure the blank band of an aspect-locked Axes, in inches.

    Positive: the height of the band above and below it; negative: the height the Axes would
    take up if it filled the band at its sides.
    """
    fig = root_figure(ax)
    fig.draw_without_rendering()  # the layout, then the aspect applied to the Axes
    width, height = fig.get_size_inches()
    laid_out, drawn = ax.get_position(original=True), ax.get_position(original=False)
    above_below = float((laid_out.height - drawn.height) * height)
    if above_below > 0.005 or drawn.width <= 0:
        return above_below
    sides = float((laid_out.width - drawn.width) * width)
    return -sides * float(drawn.height * height) / float(drawn.width * width)


def integer_ticks(axis: Axis) -> None:
    """Tick ``axis`` at whole numbers only (counts), keeping its automatic tick spacing."""
    from matplotlib.ticker import MaxNLocator

    locator = axis.get_major_locator()
    if isinstance(locator, MaxNLocator):  # matplotlib's default, AutoLocator, is one
        locator.set_params(integer=True)


def root_figure(ax: Axes) -> Figure:
    """Return the figure an Axes is drawn in: the outermost one when the Axes is in a subfigure."""
    return ax.figure.figure


def mark_figure(figure: Figure) -> None:
    """Write :data:`~toolkit._core.provenance.SANDBOX_MARK` in the figure's lower left corner.

    Written once per figure. A figure laid out by matplotlib (constrained or tight layout) keeps a
    strip free for it along its bottom edge, so it covers no label.
    """
    from matplotlib.layout_engine import ConstrainedLayoutEngine, TightLayoutEngine

    if any(t.get_gid() == _MARK_GID for t in figure.texts):
        return
    engine = figure.get_layout_engine()
    if isinstance(engine, ConstrainedLayoutEngine | TightLayoutEngine):
        strip = (MIN_FONT_SIZE + 6) / 72 / figure.get_size_inches()[1]
        left, bottom, width, height = engine.get()["rect"]
        if bottom < strip:
            engine.set(rect=(left, strip, width, height - (strip - bottom)))
    figure.text(0.005, 0.005, SANDBOX_MARK, ha="left", va="bottom", fontsize=MIN_FONT_SIZE,
                color="#b71c1c", fontweight="bold", gid=_MARK_GID,
                bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "none", "pad": 1})


def marks_sandbox(helper: Callable[_P, Axes]) -> Callable[_P, Axes]:
    """Decorate a plot helper: one style, and a visible mark on sandbox figures.

    The helper draws in the one style of the helpers (:func:`~toolkit.plot._style.report_style`, the
    user's ``rcParams`` untouched), and when any frame it is given is the sandbox's
    (``df.attrs["sandbox"]``), the figure of the Axes it returns says so visibly. In an IPython
    kernel, the figure's picture carries the description the helper wrote
    (:mod:`toolkit.plot.description`) as its alt text (:mod:`toolkit.plot._display`).
    """

    @wraps(helper)
    def plotted(*args: _P.args, **kwargs: _P.kwargs) -> Axes:
        with report_style():
            ax = helper(*args, **kwargs)
            finish_axes(ax)
            if from_sandbox(*args, *kwargs.values()):
                mark_figure(root_figure(ax))
        enable_alt_text(describe)
        return ax

    return plotted
