"""The one style of every plot helper: report defaults and the colours series are drawn in.

Each helper draws inside :func:`report_style` (a :func:`matplotlib.rc_context`), so a figure it
makes is report-ready (100 dpi, text of at least 8 pt, DejaVu Sans) while the user's own
``rcParams`` stay as they were.

Colours carry meaning in these pictures (compliance states, backend health, incident types,
alert statuses, the air-quality bands): those palettes live beside the helpers that use them
and are never used for series. Series (one line per assignment...) take :data:`SERIES_COLORS`:
colour-blind-safe colours (Paul Tol's indigo, teal and cyan, ColorBrewer's ochre and magenta,
black) chosen away from every colour of a state, so no series reads as *compliant*,
*non-compliant*, *conflict* or an air-quality band. Lines also differ by marker and line style
(:data:`SERIES_MARKERS`, :data:`SERIES_LINESTYLES`), so a reader who cannot tell two colours
apart, and two series drawn on top of each other, still can.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # matplotlib is imported when a helper draws, not with the package
    from matplotlib.axes import Axes

logger = logging.getLogger(__name__)

__all__ = ["MIN_FONT_SIZE", "NEUTRAL", "PARTIAL", "REPORT_RC", "SERIES_COLORS",
           "SERIES_LINESTYLES", "SERIES_MARKERS", "axis_label", "finish_axes", "report_style",
           "series_style"]

#: No text in a helper's figure is smaller than this (points).
MIN_FONT_SIZE = 8.0

#: Series colours: colour-blind-safe, and none close to a colour that means a state.
SERIES_COLORS = ("#332288", "#44AA99", "#000000", "#A6761D", "#88CCEE", "#E7298A")
SERIES_MARKERS = ("o", "s", "^", "D", "v", "P")
SERIES_LINESTYLES = ("-", "--", "-.", ":")

#: Text and reference lines that carry no meaning of their own.
NEUTRAL = "#555555"
#: What a period only partly inside the window is drawn in.
PARTIAL = "#9e9e9e"

#: The report defaults every helper draws with.
REPORT_RC: dict[str, Any] = {
    "figure.dpi": 100,
    "savefig.dpi": 150,
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],
    "font.size": 9,
    "axes.titlesize": 11,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "legend.title_fontsize": 8,
    "figure.titlesize": 11,
    "axes.titlepad": 8,
    "lines.linewidth": 1.8,
    # text is drawn by matplotlib's own renderer, "$" escaped where text comes from data
    # (toolkit._core.text.plot_text): never handed to LaTeX, mathtext read the same way always
    "text.usetex": False,
    "text.parse_math": True,
}

#: Column names (the service's own) and the words an axis is titled with.
_WORDS = {
    "policyAssignmentName": "policy assignment",
    "policyDefinitionName": "policy definition",
    "policyDefinitionReferenceId": "policy in the set",
    "policySetDefinitionName": "policy set",
    "resourceType": "resource type",
    "resourceLocation": "region",
    "resourceGroup": "resource group",
    "resource_group": "resource group",
    "subscriptionId": "subscription",
}


def axis_label(column: str) -> str:
    """Word an axis title for a grouping column (``resourceType`` -> ``resource type``).

    A column of the caller's own is worded the same way and drawn as written
    (:func:`~toolkit._core.text.plot_text`).
    """
    from toolkit._core.text import plot_text

    if column in _WORDS:
        return _WORDS[column]
    words = []
    for part in column.replace("_", " ").replace(".", " ").split():
        out = ""
        for ch in part:
            out += f" {ch.lower()}" if ch.isupper() and out and not out[-1].isupper() else ch
        words.append(out.strip().lower() if not part.isupper() else part)
    return plot_text(" ".join(words))


def series_style(k: int) -> dict[str, Any]:
    """Give the colour, marker and line style of the ``k``-th series."""
    shift = k // len(SERIES_COLORS)  # past the last colour, the markers move on by one
    return {"color": SERIES_COLORS[k % len(SERIES_COLORS)],
            "marker": SERIES_MARKERS[(k + shift) % len(SERIES_MARKERS)],
            "ls": SERIES_LINESTYLES[k % len(SERIES_LINESTYLES)]}


@contextmanager
def report_style() -> Iterator[None]:
    """Draw with :data:`REPORT_RC` and the series palette, restoring the user's settings after."""
    import matplotlib as mpl
    import matplotlib.pyplot as plt
    from cycler import cycler

    # Load the backend first: loading it can set rcParams of its own (IPython's inline backend
    # turns interactive mode on, so figures show at the end of a cell), which must outlive
    # this context.
    load_backend = getattr(plt, "_get_backend_mod", None)
    if load_backend is not None:
        load_backend()
    rc = {**REPORT_RC, "axes.prop_cycle": cycler(color=list(SERIES_COLORS))}
    with mpl.rc_context(rc):  # type: ignore[arg-type]
        yield


def finish_axes(ax: Axes) -> None:
    """Settle at the report sizes what matplotlib makes only when the figure is drawn.

    That is, after the helper returned: tick labels, the offset text of an axis.
    """
    ax.tick_params(labelsize=REPORT_RC["xtick.labelsize"])
    for axis in (ax.xaxis, ax.yaxis):
        axis.get_offset_text().set_fontsize(MIN_FONT_SIZE)
