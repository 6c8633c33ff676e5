"""A build-time hook (mkdocs ``hooks:``) that gives every page of the site what axe-core asks of
it and the theme's templates leave out, so that no page needs a script for it:

- each notebook code cell (a box that scrolls sideways when a line is long) can be reached and
  scrolled with the keyboard: ``tabindex="0"``, and a name (``role="region"``, ``aria-label``
  "Code cell N"), as the theme's own script does for the guides' code blocks;
- each table of a page (which the theme's script puts in a box that scrolls sideways when it
  is wider than the page) sits in a box of the site's own that the keyboard can reach and
  scroll ("Table N"); the theme's box inside it no longer scrolls (docs/stylesheets);
- a frame without a title (a map in a notebook's committed output) is named "interactive map";
  the maps of ``toolkit.explore`` carry names of their own ("interactive map: 12 traffic
  incidents"), which are kept;
- the theme's search box (``role="dialog"``) is named "Search".

The names are the site's own words, never text from a page, so nothing here needs escaping.
"""

from __future__ import annotations

import re
from typing import Any

_CELL = re.compile(r'<div class="highlight-ipynb(?P<rest>[^"]*)"(?![^>]*\btabindex=)')
_FRAME = re.compile(r"<iframe(?![^>]*\stitle=)")
_TABLE = re.compile(r"<table\b[^>]*>|</table>")
_WRAPPED = re.compile(r'class="toolkit-table"[^<>]*>\Z')
_SEARCH = re.compile(r'(<div class="md-search"[^>]*role="dialog")(?![^>]*aria-label)')


def on_post_page(output: str, page: Any = None, config: Any = None) -> str:
    """Name the notebook cells, frames and search dialog of one built page."""
    count = 0

    def cell(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return (f'<div class="highlight-ipynb{match.group("rest")}" tabindex="0" role="region" '
                f'aria-label="Code cell {count}"')

    output = _CELL.sub(cell, output)
    output = _tables(output)
    output = _FRAME.sub('<iframe title="interactive map"', output)
    return _SEARCH.sub(r'\1 aria-label="Search"', output)


def _tables(output: str) -> str:
    """Put each plain table (``<table>``, as Markdown writes one) in a named, focusable box."""
    out: list[str] = []
    wrapped: list[bool] = []
    count, at = 0, 0
    for match in _TABLE.finditer(output):
        out.append(output[at:match.start()])
        tag = match.group(0)
        if tag == "</table>":
            out.append(tag + ("</div>" if wrapped and wrapped.pop() else ""))
        elif tag == "<table>" and not _WRAPPED.search(output, 0, match.start()):
            count += 1
            wrapped.append(True)
            out.append(f'<div class="toolkit-table" tabindex="0" role="region" '
                       f'aria-label="Table {count}">{tag}')
        else:
            wrapped.append(False)
            out.append(tag)
        at = match.end()
    out.append(output[at:])
    return "".join(out)
