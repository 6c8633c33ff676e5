"""The rules the pictures of a geo frame share: what a map frames, and its colours.

:mod:`toolkit.plot` (matplotlib) and :mod:`toolkit.explore` (folium) draw by them alike, so that
a chart and a map of the same frame agree. Colours carry the service's meaning: an air-quality
reading takes the ``categoryColor`` the service sent with it; where a frame has none, the colour
of its category, else of the band its global index falls in (the bands' limits and colours are
facts of the service, in :mod:`toolkit._spec.maps`). A reading without an index (a place the
service did not answer) has one colour, :data:`NO_READING`, in every picture; so has an alert
status with no documented colour, :data:`UNKNOWN_STATUS`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from toolkit._core.text import css_color
from toolkit._spec.maps import AIR_QUALITY_BANDS, AIR_QUALITY_CATEGORIES, AIR_QUALITY_COLORS

__all__ = ["NO_READING", "STATUS_COLORS", "UNKNOWN_STATUS", "band_colour", "band_name",
           "bounds_of", "reading_colour", "status_colour"]

#: The colour of a place without a reading (no index: the service did not answer for it).
NO_READING = "#9e9e9e"
#: Alert status colours: fresh (New) in red, changes in warm tones, winding down in greys.
STATUS_COLORS = {
    "New": "#d32f2f", "Upgrade": "#7b1fa2", "Update": "#f57c00", "Extend": "#fbc02d",
    "Correct": "#1976d2", "Continue": "#e57373", "Cancel": "#9e9e9e", "Expire": "#616161",
}
#: The colour of a status the service documents no colour for.
UNKNOWN_STATUS = "#8d6e63"


def bounds_of(*series: Iterable[Any]) -> tuple[float, float, float, float] | None:
    """Return west, south, east, north of the non-empty geometries of the series given.

    Returns
    -------
    tuple of float or None
        The bounds, or ``None`` when no series holds a geometry.
    """
    import shapely

    geoms = [g for s in series for g in s if g is not None and not g.is_empty]
    if not geoms:
        return None
    w, s, e, n = (float(v) for v in shapely.total_bounds(np.asarray(geoms, dtype=object)))
    return w, s, e, n


def band_name(index: float) -> str:
    """Return the category whose band holds a global air-quality index."""
    for limit, name in zip(AIR_QUALITY_BANDS, AIR_QUALITY_CATEGORIES, strict=False):
        if index <= limit:
            return name
    return AIR_QUALITY_CATEGORIES[-1]


def band_colour(index: float) -> str:
    """Return the colour of the band a global air-quality index falls in."""
    return AIR_QUALITY_COLORS[band_name(index)]


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or \
        str(value) in ("<NA>", "NaT", "nan")


def reading_colour(colour: Any, category: Any, index: Any) -> str:
    """Return the colour of an air-quality reading.

    Parameters
    ----------
    colour : Any
        The ``categoryColor`` the service sent (a ``#rrggbb`` string), or nothing.
    category : Any
        The reading's ``category``.
    index : Any
        Its ``globalIndex``.

    Returns
    -------
    str
        :data:`NO_READING` without an index; else the service's colour, else its category's,
        else its index band's.
    """
    if _missing(index):
        return NO_READING
    given = css_color(colour, "")  # the service's colour only when it is one
    if given:
        return given
    if not _missing(category) and str(category) in AIR_QUALITY_COLORS:
        return AIR_QUALITY_COLORS[str(category)]
    return band_colour(float(index))


def status_colour(status: Any) -> str:
    """Return the colour of an alert's latest status (:data:`UNKNOWN_STATUS` for another)."""
    return STATUS_COLORS.get(str(status), UNKNOWN_STATUS)
