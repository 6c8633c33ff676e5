"""What every plot helper shares: imports, column checks, colours."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from toolkit._core.validate import check_frame

__all__ = ["HEALTH_COLORS", "new_axes", "require_columns"]

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


def new_axes(ax: Any = None, *, figsize: tuple[float, float] = (8, 4)) -> Any:
    """The given Axes, or a new figure's."""
    if ax is not None:
        return ax
    try:
        import matplotlib.pyplot as plt
    except ImportError as err:  # pragma: no cover - depends on the install
        raise ImportError("plots need matplotlib: pip install 'cloudops-frames[plot]'") from err
    _, ax = plt.subplots(figsize=figsize)
    return ax
