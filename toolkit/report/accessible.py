"""What a report page gives a reader with a screen reader or a keyboard (WCAG 2.1 AA).

The offline template (``templates/offline``) reads these through the filters of
:data:`FILTERS`, and the page writing step (:mod:`toolkit.report.pages`) its title:

- a chart's picture gets the description its output carries as its alternative text
  (``output_alt``, :func:`toolkit.plot.output_alt`: the text a plot helper made from the data,
  written into the output's metadata when the notebook ran), instead of nbconvert's
  "No description has been provided for this image";
- a table's empty header cells (pandas writes one above the row labels of every frame, and one
  under each column beside the index's name) get text or stop being headers
  (:func:`table_headers`);
- a frame without a title (a map drawn other than by :mod:`toolkit.explore`, whose maps name
  their frames) gets a name (:func:`named_frames`);
- the page's title is the report's own (its first heading, :func:`page_title`), not its
  file's name.

The contrast of the prompts, of the code's colours and of a traceback's is the template's
style sheet. Text from a notebook is data here: whatever is written back is escaped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolkit._core.text import html_text
from toolkit.plot.description import output_alt

if TYPE_CHECKING:
    import nbformat
    from bs4 import Tag

__all__ = ["FILTERS", "ROW_LABEL", "VISUALLY_HIDDEN", "accessible_html", "named_frames",
           "page_title", "table_headers"]

#: The class of text kept for screen readers and out of sight (the template's style sheet).
VISUALLY_HIDDEN = "toolkit-visually-hidden"
#: The header text of the row labels' column when the frame's index has no name.
ROW_LABEL = "row"
_HEADING = re.compile(r"^\s{0,3}#\s+(.+?)\s*#*\s*$", re.M)
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MARKUP = re.compile(r"[*_`]+|<[^>]+>")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _blank(cell: Tag) -> bool:
    return not cell.get_text().strip() and cell.find(["img", "svg", "input"]) is None


def _columns(row: Tag) -> list[tuple[Tag, range]]:
    """List the cells of a header row, each with the columns it spans."""
    out, at = [], 0
    for cell in row.find_all(["th", "td"], recursive=False):
        try:
            span = max(1, int(str(cell.get("colspan") or 1)))
        except ValueError:
            span = 1
        out.append((cell, range(at, at + span)))
        at += span
    return out


def _row_label_levels(table: Tag) -> int:
    """Count the columns of row labels (the leading ``<th>`` of the table's first row)."""
    body = table.find("tbody")
    first = body.find("tr") if body is not None else None
    levels = 0
    for cell in first.find_all(["th", "td"], recursive=False) if first is not None else ():
        if cell.name != "th":
            break
        levels += 1
    return levels


def _header_text(table: Tag, soup: Any) -> bool:
    head = table.find("thead")
    if head is None:
        return False
    rows = [_columns(r) for r in head.find_all("tr", recursive=False)]
    named = {c for row in rows for cell, cols in row if not _blank(cell) for c in cols}
    levels = _row_label_levels(table)
    labelled: set[int] = set()
    changed = False
    for row in reversed(rows):  # the lowest header row is the one read with the column
        for cell, cols in row:
            if cell.name != "th" or not _blank(cell):
                continue
            changed = True
            column = cols[0]
            if len(cols) == 1 and column < levels and column not in named \
                    and column not in labelled:
                hidden = soup.new_tag("span", attrs={"class": VISUALLY_HIDDEN})
                hidden.string = ROW_LABEL
                cell.clear()
                cell.append(hidden)
                labelled.add(column)
            else:
                cell.name = "td"  # a blank corner or gap heads nothing
    return changed


def table_headers(soup: Any) -> bool:
    """Give every empty header cell of the tables in ``soup`` text, or make it a plain cell.

    pandas writes an empty ``<th>`` above the row labels of every frame (and, when the index
    has a name, one under each column in the row of that name). The one above a column of row
    labels that has no name gets a visually hidden "row"; the others (a corner above the
    index's names, the gaps beside them) head nothing, and become ``<td>``.

    Returns
    -------
    bool
        Whether anything changed.
    """
    changed = False
    for table in soup.find_all("table"):
        changed = _header_text(table, soup) or changed
    return changed


def named_frames(soup: Any) -> bool:
    """Give every ``<iframe>`` in ``soup`` without a title one: what it holds, in general words.

    The maps of :mod:`toolkit.explore` name their frames from their data ("interactive map:
    4 main routes"); those are kept. A Leaflet map drawn otherwise is an "interactive map",
    anything else "embedded content".

    Returns
    -------
    bool
        Whether anything changed.
    """
    changed = False
    for frame in soup.find_all("iframe"):
        if str(frame.get("title") or "").strip():
            continue
        inside = str(frame.get("srcdoc") or frame.get("src") or "")
        frame["title"] = "interactive map" if "leaflet" in inside.lower() else "embedded content"
        changed = True
    return changed


def accessible_html(html: str) -> str:
    """Write an HTML output with header text in its tables and names on its frames.

    Parameters
    ----------
    html : str
        A cell's ``text/html`` output (a frame's table, a map, a widget's static view).

    Returns
    -------
    str
        The same HTML where nothing needed a change; otherwise as parsed and written again
        (as nbconvert writes the whole page), with :func:`table_headers` and
        :func:`named_frames` applied.
    """
    text = html if isinstance(html, str) else "".join(html)
    lowered = text.lower()
    if "<table" not in lowered and "<iframe" not in lowered:
        return text
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(text, features="html.parser")
    changed = table_headers(soup)
    changed = named_frames(soup) or changed
    return str(soup) if changed else text


def page_title(nb: nbformat.NotebookNode, fallback: str) -> str:
    """Read a report's title: the text of its notebook's first top-level heading.

    Returns
    -------
    str
        The heading without its Markdown (links as their text, no emphasis marks); ``fallback``
        (the file's name) when the notebook has none.
    """
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        source = "".join(cell.source) if isinstance(cell.source, list) else str(cell.source)
        fenced = False
        for line in source.splitlines():
            if _FENCE.match(line):
                fenced = not fenced
                continue
            found = None if fenced else _HEADING.match(line)
            if found:
                title = " ".join(_MARKUP.sub("", _LINK.sub(r"\1", found.group(1))).split())
                if title:
                    return title
    return fallback


#: The filters the offline template uses, by name.
FILTERS: dict[str, Callable[..., Any]] = {
    "output_alt": output_alt,
    "accessible_html": accessible_html,
    "html_text": html_text,
}
