"""What a widget leaves in a page that has no widget manager: a static view of what it showed.

A widget's display carries, beside the live view (``application/vnd.jupyter.widget-view+json``,
which JupyterLab renders), a ``text/html`` copy of what the widget showed when it was
displayed: its table, its picture and its map. An HTML report (nbconvert without the widgets'
state, as ``make report`` runs it) and a notebook opened without a kernel show that copy instead
of an empty space.
"""

from __future__ import annotations

import base64
from typing import Any

from toolkit._core.text import html_text

__all__ = ["bundle", "map_iframe", "png_tag"]


def png_tag(png: bytes, alt: str) -> str:
    """Write an ``<img>`` holding a PNG picture (empty when there is none)."""
    if not png:
        return ""
    data = base64.b64encode(png).decode("ascii")
    return (f'<img src="data:image/png;base64,{data}" alt="{html_text(alt)}" '
            f'style="max-width:100%"/>')


def map_iframe(m: Any, height: int) -> str:
    """Write a folium map as an ``<iframe>`` of a fixed height (in pixels) and the full width.

    It keeps its size inside widget boxes, where a height in proportion to a width that the
    box has not set yet collapses to a sliver. The frame's title is the map's name (what a
    screen reader announces it by).

    A map of :mod:`toolkit.explore` drawn offline finds Leaflet carried once in the notebook
    (see :mod:`toolkit.explore._page`) instead of carrying it in every view of it; the first
    map of a kernel session carries it.
    """
    from toolkit.explore._page import carrier, carries_now, srcdoc_value

    root = m.get_root()
    carried = ""
    if hasattr(root, "shared_render"):
        page = root.shared_render()
        carried = carrier() if carries_now() else ""
    else:
        page = root.render()
    srcdoc = srcdoc_value(page)
    # named by the map's own name (toolkit.explore), "interactive map: ..."
    name = html_text(getattr(m, "toolkit_name", None) or "interactive map")
    return (f'<div class="toolkit-map">{carried}<iframe srcdoc=\'{srcdoc}\' style="width:100%;'
            f'height:{int(height)}px;border:none" title="{name}"></iframe></div>')


def bundle(widget: Any, static_html: str, **kwargs: Any) -> dict[str, Any]:
    """Return the display data of ``widget`` with ``static_html`` as its HTML fallback."""
    data = widget._repr_mimebundle_(**kwargs)
    if isinstance(data, tuple):
        data = data[0]
    out = dict(data or {})
    out["text/html"] = f'<div class="toolkit-widget-static">{static_html}</div>'
    return out
