"""The route matrix as a picture: travel times (or distances), origins by destinations."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from toolkit._core.errors import ValidationError
from toolkit._core.text import plot_text
from toolkit.plot._common import marks_sandbox, new_axes, require_columns
from toolkit.plot._style import MIN_FONT_SIZE, NEUTRAL
from toolkit.plot.description import counted, listed, sentences, set_description

if TYPE_CHECKING:  # matplotlib is imported when a helper draws, not with the package
    from matplotlib.axes import Axes

__all__ = ["MATRIX_CMAP", "travel_times"]

#: The colour map of the cells (sequential and colour-blind safe; dark is near, light far).
MATRIX_CMAP = "cividis"
#: The colour of a cell without a route.
NO_ROUTE = "#e0e0e0"
#: Cells are written in figures up to this many a side; beyond, the colours alone tell.
_WRITTEN = 16
_VALUES = {"time": ("durationTrafficInSeconds", "durationInSeconds", 60.0, "travel time",
                    "min"),
           "distance": ("distanceInMeters", "distanceInMeters", 1000.0, "distance", "km")}


def _labels(df: pd.DataFrame, index: str, place: str, end: int, count: int) -> list[str]:
    """Name each origin (or destination): its place name, else its coordinates."""
    out = [f"{'origin' if index == 'originIndex' else 'destination'} {k}" for k in range(count)]
    for row in df.itertuples(index=False):
        k = getattr(row, index)
        if pd.isna(k) or not 0 <= int(k) < count:
            continue
        name = getattr(row, place, None) if place in df.columns else None
        line = getattr(row, "geometry", None)
        if isinstance(name, str) and name:
            out[int(k)] = name
        elif line is not None and not line.is_empty:
            lon, lat = line.coords[end]
            out[int(k)] = f"{lon:.4f}, {lat:.4f}"
    return [plot_text(s) for s in out]


@marks_sandbox
def travel_times(df: pd.DataFrame, *, value: str = "time", ax: Axes | None = None,
                 title: str | None = None) -> Axes:
    """Draw a route matrix as a heat map: origins down, destinations across.

    Each cell is coloured by its travel time in minutes (or distance in km) and, when the matrix
    is small enough to read, written in it; a cell without a route is grey, marked ``×``.

    Parameters
    ----------
    df : GeoDataFrame
        The frame :func:`toolkit.route_matrix` returns (``originIndex``, ``destinationIndex``,
        the durations and ``distanceInMeters``; ``origin_place``, ``destination_place`` and the
        lines name the rows and columns).
    value : {"time", "distance"}
        Travel time (in traffic where the service gave it) or distance.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
    """
    if value not in _VALUES:
        raise ValidationError("value", value, f"must be one of {', '.join(_VALUES)}")
    first, second, scale, words, unit = _VALUES[value]
    require_columns(df, ["originIndex", "destinationIndex", first, second], "plot.travel_times")
    known = df.dropna(subset=["originIndex", "destinationIndex"])
    rows = int(known["originIndex"].max()) + 1 if len(known) else 0
    cols = int(known["destinationIndex"].max()) + 1 if len(known) else 0
    grid = np.full((max(rows, 1), max(cols, 1)), np.nan)
    amounts = known[first].astype("Float64").fillna(known[second].astype("Float64"))
    for (i, j), amount in zip(zip(known["originIndex"], known["destinationIndex"],
                                  strict=True), amounts, strict=True):
        if not pd.isna(amount):
            grid[int(i), int(j)] = float(amount) / scale
    ax = new_axes(ax, figsize=(min(3.2 + 0.75 * cols, 13), min(1.6 + 0.42 * rows, 11)))
    import matplotlib as mpl

    cmap = mpl.colormaps[MATRIX_CMAP].with_extremes(bad=NO_ROUTE)
    image = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, aspect="auto",
                      vmin=0 if np.isfinite(grid).any() else None)
    origins = _labels(known, "originIndex", "origin_place", 0, rows)
    destinations = _labels(known, "destinationIndex", "destination_place", -1, cols)
    ax.set_xticks(range(cols), destinations, rotation=35 if cols > 1 else 0,
                  ha="right" if cols > 1 else "center")
    ax.set_yticks(range(rows), origins)
    if rows <= _WRITTEN and cols <= _WRITTEN:
        _write_cells(ax, grid, image)
    bar = ax.figure.colorbar(image, ax=ax, shrink=0.9, pad=0.02)
    bar.set_label(f"{words} ({unit})")
    ax.set_xlabel("destination")
    ax.set_ylabel("origin")
    routed = int(np.isfinite(grid).sum())
    none = "; × no route" if routed < rows * cols else ""
    ax.set_title(plot_text(title) if title else
                 f"{words.capitalize()} ({unit}), {routed} of {rows * cols} "
                 f"trip{'s' if rows * cols != 1 else ''} routed{none}")
    set_description(ax, _matrix_text(ax.get_title(), grid, origins, destinations, words, unit))
    return ax


def _matrix_text(title: str, grid: np.ndarray, origins: list[str], destinations: list[str],
                 words: str, unit: str) -> str:
    """Describe the matrix: its size, its range, the longest trip and each origin's longest."""
    known = np.isfinite(grid)
    if not known.any():
        return sentences(f"{title}: {counted(grid.size, 'trip')}, none routed")
    i, j = np.unravel_index(np.nanargmax(grid), grid.shape)
    longest = [f"{origins[r]} {np.nanmax(row):.0f}" for r, row in enumerate(grid)
               if np.isfinite(row).any()]
    return sentences(
        f"{title}: {counted(len(origins), 'origin')} by {counted(len(destinations), 'destination')}"
        f", {words} from {np.nanmin(grid):.0f} to {np.nanmax(grid):.0f} {unit}",
        f"The longest: {origins[i]} to {destinations[j]}, {grid[i, j]:.0f} {unit}",
        f"Each origin's longest ({unit}): {listed(longest, 10, 'more origins')}",
        f"{counted(int((~known).sum()), 'trip')} without a route" if (~known).any() else "")


def _write_cells(ax: Axes, grid: np.ndarray, image: Any) -> None:
    """Write each cell's amount in it (``×`` where there is no route), legible on its colour."""
    for (i, j), amount in np.ndenumerate(grid):
        if not np.isfinite(amount):
            ax.text(j, i, "×", ha="center", va="center", fontsize=MIN_FONT_SIZE + 1,
                    color=NEUTRAL)
            continue
        r, g, b, _ = image.cmap(image.norm(amount))
        light = 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.5
        text = f"{amount:.0f}" if amount >= 10 or amount == 0 else f"{amount:.1f}"
        ax.text(j, i, text, ha="center", va="center", fontsize=MIN_FONT_SIZE,
                color="black" if light else "white")
