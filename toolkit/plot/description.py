"""Text alternatives of charts: what a chart shows and its key numbers, in words.

Every plot helper writes one for the Axes it draws, made from the very numbers it draws
("Backend health by pool (gateway agw-shop-prod-neu): 16 backend servers: 14 up, 2 down. Pool
web-neu: 6 up, 2 down; ..."). :func:`describe` reads it back, from the Axes or from its figure
(the descriptions of all its charts, in order, and the sandbox mark when the figure carries it);
:func:`set_description` gives a chart of one's own one. A reader who cannot see the picture
gets the same facts: in a notebook the figure's picture carries its description as its
alternative text (``metadata={"image/png": {"alt": ...}}``, see :mod:`toolkit.plot._display`),
and :func:`output_alt` reads it back out of a notebook output for a page that shows the picture.

A description is text from the data, and so from the service: whoever writes it into HTML
escapes it (an ``alt`` attribute included).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from toolkit._core.errors import ValidationError
from toolkit._core.provenance import SANDBOX_MARK
from toolkit.plot._display import IMAGE_TYPES, enable_alt_text

if TYPE_CHECKING:  # matplotlib is imported when a chart is drawn, not with the package
    from matplotlib.axes import Axes

__all__ = ["IMAGE_TYPES", "counted", "describe", "listed", "output_alt", "sentences",
           "set_description"]

#: The attribute of an Axes that holds its description.
ATTRIBUTE = "_toolkit_description"
#: The ``gid`` of the sandbox mark on a figure (:func:`toolkit.plot._common.mark_figure`).
MARK_GID = "toolkit-sandbox-mark"


def set_description(ax: Axes, text: str) -> Axes:
    """Give a chart its text alternative: what it shows and its key numbers, in words.

    The plot helpers describe their own charts; a chart drawn another way (pandas' ``.plot``,
    seaborn, matplotlib itself) gets one here, and in a notebook its picture then carries it as
    its alternative text, as the helpers' do.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The chart.
    text : str
        Its description (a sentence or a few: what is shown, the key numbers).

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``.

    Raises
    ------
    ValidationError
        When ``ax`` is not a matplotlib Axes or ``text`` is not a non-empty string.
    """
    if not hasattr(ax, "figure") or not hasattr(ax, "get_xlim"):
        raise ValidationError("ax", ax, "a matplotlib Axes (the chart to describe)")
    if not isinstance(text, str) or not text.strip():
        raise ValidationError("text", text, "a non-empty description of the chart")
    setattr(ax, ATTRIBUTE, " ".join(text.split()))
    enable_alt_text(describe)
    return ax


def describe(obj: Any) -> str:
    """Give the text alternative of a chart, or of every chart of a figure.

    Parameters
    ----------
    obj : matplotlib Axes, Figure or SubFigure, or folium.Map
        An Axes gives its own description; a figure the descriptions of its Axes in the order
        they were added (those without one left out), followed by "Sandbox data (invented)."
        when the figure carries that mark; an interactive map of :mod:`toolkit.explore` its
        summary (the text its page holds for screen readers).

    Returns
    -------
    str
        The description; empty when nothing in ``obj`` is described.

    Raises
    ------
    ValidationError
        When ``obj`` is neither an Axes, a figure nor a map.

    Examples
    --------
    >>> ax = toolkit.plot.backend_health(health)           # doctest: +SKIP
    >>> toolkit.plot.describe(ax)                           # doctest: +SKIP
    'Backend health by pool (gateway agw-shop-prod-neu): 16 backend servers: 14 up, 2 down. ...'
    """
    if hasattr(obj, "get_xlim") and hasattr(obj, "figure"):
        return str(getattr(obj, ATTRIBUTE, "") or "")
    if hasattr(obj, "get_root"):  # an interactive map (toolkit.explore): its summary
        return str(getattr(obj, "toolkit_description", "") or "")
    if not hasattr(obj, "get_axes") or not hasattr(obj, "texts"):
        raise ValidationError("obj", obj, "a matplotlib Axes or Figure (the chart to describe)")
    parts = [str(getattr(ax, ATTRIBUTE, "") or "") for ax in obj.get_axes()]
    text = " ".join(p if p.endswith((".", "!", "?")) else f"{p}." for p in parts if p)
    root = getattr(obj, "figure", obj) or obj  # a subfigure's mark is on its root figure
    marked = any(t.get_gid() == MARK_GID for t in getattr(root, "texts", ()))
    if text and marked:
        text += f" {SANDBOX_MARK[0].upper()}{SANDBOX_MARK[1:]}."
    return text


def output_alt(output: Mapping[str, Any], mime: str | None = None) -> str | None:
    """Read the alternative text of the picture in a notebook output.

    For a page that shows a notebook's pictures (an HTML report, the documentation site): the
    text to write into the ``alt`` attribute of the ``<img>`` (escaped, like any text).

    Parameters
    ----------
    output : mapping
        One output of a code cell, as nbformat holds it (``output_type``, ``data``,
        ``metadata``).
    mime : str, optional
        The picture's type; by default the first of :data:`IMAGE_TYPES` the output has.

    Returns
    -------
    str or None
        The text (whitespace collapsed), or ``None`` when the output has no picture of that type
        or no text for it.

    Examples
    --------
    >>> output_alt({"output_type": "display_data", "data": {"image/png": "iVBO..."},
    ...             "metadata": {"image/png": {"alt": "Backend health by pool: ..."}}})
    'Backend health by pool: ...'
    """
    if not isinstance(output, Mapping):
        return None
    data = output.get("data")
    if not isinstance(data, Mapping):
        return None
    kinds = [mime] if mime is not None else [k for k in IMAGE_TYPES if k in data]
    if not kinds or kinds[0] not in data:
        return None
    metadata = output.get("metadata")
    entry = metadata.get(kinds[0]) if isinstance(metadata, Mapping) else None
    alt = entry.get("alt") if isinstance(entry, Mapping) else None
    if not isinstance(alt, str) or not alt.strip():
        return None
    return " ".join(alt.split())


# ---------------------------------------------------------------------------------- words
def counted(n: Any, noun: str, plural: str | None = None) -> str:
    """Write a count with its noun: ``1 server``, ``16 servers``, ``1,204 records``."""
    value = int(n)
    return f"{value:,} {noun if value == 1 else plural or noun + 's'}"


def listed(items: Iterable[str], limit: int = 6, more: str = "more") -> str:
    """Join the first ``limit`` of ``items`` with semicolons: ``a; b; c; and 4 more``."""
    items = [str(i) for i in items]
    out = "; ".join(items[:limit])
    return out + f"; and {len(items) - limit} {more}" if len(items) > limit else out


def sentences(*parts: str) -> str:
    """Join the non-empty ``parts`` as sentences, each ending with a full stop."""
    out = [p.strip() for p in parts if p and p.strip()]
    return " ".join(p if p.endswith((".", "!", "?")) else f"{p}." for p in out)
