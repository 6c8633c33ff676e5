"""A chart of one's own marked as sandbox data, as the plot helpers mark theirs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolkit._core.errors import ValidationError
from toolkit._core.provenance import from_sandbox
from toolkit.plot._common import mark_figure, root_figure

if TYPE_CHECKING:  # matplotlib is imported when a chart is drawn, not with the package
    from matplotlib.axes import Axes

__all__ = ["mark_sandbox"]


def mark_sandbox(ax: Axes, *data: Any) -> Axes:
    """Say on a chart drawn from the toolkit's frames that its numbers are the sandbox's.

    The plot helpers mark their own figures; a chart drawn another way (pandas' ``.plot``,
    seaborn, matplotlib itself) gets the same mark here, so that a picture of invented data pasted
    into a report still says so. Nothing changes when the data are a real service's.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The chart.
    *data : pandas.DataFrame or pandas.Series
        The frames it was drawn from (or frames derived from them). Any one the sandbox answered
        (``attrs["sandbox"]``) marks the chart; so does one that no longer says where it came from
        while the default connection is the sandbox.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``, its figure marked "sandbox data (invented)" in its lower left corner when any of
        ``data`` is the sandbox's.

    Raises
    ------
    ValidationError
        When no frame is given, or ``ax`` is not a matplotlib Axes.
    """
    if not hasattr(ax, "figure") or not hasattr(ax, "get_xlim"):
        raise ValidationError("ax", ax, "a matplotlib Axes (the chart to mark)")
    if not data:
        raise ValidationError("data", data, "name the frames the chart was drawn from: "
                                            "mark_sandbox(ax, df)")
    if from_sandbox(*data):
        mark_figure(root_figure(ax))
    return ax
