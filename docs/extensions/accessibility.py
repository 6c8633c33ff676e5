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
- the theme's search box (``role="dialog"``) is named "Search";
- a notebook's picture gets the alt text its output carries (``toolkit.plot.output_alt``: the
  description of the chart, written there when the notebook ran) instead of the renderer's
  "No description has been provided for this image"; matched by the picture's data.

The names are the site's own words; a picture's alt text is the notebook's, written escaped.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

_CELL = re.compile(r'<div class="highlight-ipynb(?P<rest>[^"]*)"(?![^>]*\btabindex=)')
_FRAME = re.compile(r"<iframe(?![^>]*\stitle=)")
_TABLE = re.compile(r"<table\b[^>]*>|</table>")
_WRAPPED = re.compile(r'class="toolkit-table"[^<>]*>\Z')
_NO_ALT = re.compile(r'<img alt="No description has been provided for this image"'
                     r'(?P<between>[^>]*?) '
                     r'src="data:image/(?P<kind>png|jpeg);base64,(?P<data>[^"]+)"')
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
    source = getattr(getattr(page, "file", None), "abs_src_path", None)
    if isinstance(source, str) and source.endswith(".ipynb"):
        output = _pictures(output, Path(source))
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


def _pictures(output: str, notebook: Path) -> str:
    """Give each picture of a notebook's page the alt text its output carries, if any."""
    from toolkit.plot.description import output_alt

    alts: dict[str, str] = {}
    for cell in json.loads(notebook.read_text("utf-8")).get("cells", []):
        for out in cell.get("outputs", []):
            for kind in ("image/png", "image/jpeg"):
                data, alt = out.get("data", {}).get(kind), output_alt(out, kind)
                if alt and data:
                    alts["".join(data if isinstance(data, list) else [data]).replace("\n", "")] \
                        = alt

    def alt_of(match: re.Match[str]) -> str:
        alt = alts.get(match.group("data"))
        if alt is None:
            return match.group(0)
        return (f'<img alt="{html.escape(alt, quote=True)}"{match.group("between")} '
                f'src="data:image/{match.group("kind")};base64,{match.group("data")}"')

    return _NO_ALT.sub(alt_of, output) if alts else output
