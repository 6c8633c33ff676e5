"""A name and a text summary for every interactive map, made from its data.

A map is a page of its own in an ``<iframe>``: a screen reader announces the frame by its
title, and reads what is inside it. So a map gets

- a **name** ("interactive map: 4 main routes and 3 alternatives"): the ``title`` of the
  ``<iframe>`` a notebook, a report or a widget shows it in, and the ``<title>`` of its page;
- a language (English, the toolkit's words) for its page;
- a **summary** (what is drawn and the key numbers, like the charts' descriptions of
  :mod:`toolkit.plot.description`): the first paragraph of its page, visually hidden (the map
  and its legend show the same to a sighted reader).

:func:`toolkit.plot.describe` reads the summary back (``m.toolkit_description``), the name is
``m.toolkit_name``. Both are text from the data, so from the service: written into HTML escaped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, TypeVar

from toolkit._core.provenance import SANDBOX_MARK, from_sandbox
from toolkit._core.text import html_text
from toolkit.plot.description import sentences

__all__ = ["VISUALLY_HIDDEN", "describe_map", "named_frame"]

#: Kept in the page for screen readers, out of sight (the usual visually-hidden rule).
VISUALLY_HIDDEN = ("position:absolute;width:1px;height:1px;margin:-1px;padding:0;"
                   "overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0")
_Map = TypeVar("_Map")
_FRAME = re.compile(r"<iframe(?![^>]*\stitle=)", re.IGNORECASE)


def named_frame(page: str, name: str) -> str:
    """Give the ``<iframe>`` elements of ``page`` that have no title the title ``name``."""
    return _FRAME.sub(lambda _m: f'<iframe title="{html_text(name)}"', page)


def describe_map(m: _Map, what: str, *details: str, frames: Iterable[Any] = ()) -> _Map:
    """Name a map and write its summary into its page.

    Parameters
    ----------
    m : folium.Map
        The map (its page: ``m.get_root()``).
    what : str
        What it shows, in a few words ("4 main routes and 3 alternatives"): the name is
        ``interactive map: <what>``.
    *details : str
        Sentences of the summary after the first (``what``), empty ones left out.
    frames : iterable of frames
        The frames drawn: when any is the sandbox's the summary says so, as the map does.

    Returns
    -------
    folium.Map
        ``m``, with ``toolkit_name`` and ``toolkit_description``.
    """
    from branca.element import Element

    name = f"interactive map: {what}"
    mark = f"{SANDBOX_MARK[0].upper()}{SANDBOX_MARK[1:]}" if from_sandbox(*frames) else ""
    summary = sentences(f"Interactive map of {what}", *details, mark)
    m.toolkit_name, m.toolkit_description = name, summary  # type: ignore[attr-defined]
    root = m.get_root()  # type: ignore[attr-defined]
    root.toolkit_name = name
    root.header.add_child(Element(f"<title>{html_text(name)}</title>"), name="toolkit_title")
    # the page's language, which branca's template does not write on <html>
    root.header.add_child(Element('<script>document.documentElement.lang = "en";</script>'),
                          name="toolkit_lang")
    root.html.add_child(Element(f'<p class="toolkit-map-summary" style="{VISUALLY_HIDDEN}">'
                                f"{html_text(summary)}</p>"), name="toolkit_summary", index=0)
    shown = type(root)._repr_html_

    def named(**kwargs: Any) -> str:  # the frame a notebook shows the page in, named
        return named_frame(shown(root, **kwargs), name)

    root._repr_html_ = named  # this page's, whichever figure class holds it
    return m
