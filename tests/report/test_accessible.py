"""The report pages for every reader: tables with header text, frames with names, titles from
the report's heading, and axe-core (WCAG 2.1 AA) over every page of the curated notebooks, full
and without code, in the system Chromium, with each chart's picture described from its data.

The pages are written from the committed notebooks as they are (nbconvert only, nothing
executed), once for the module: one page of each kind per notebook.
"""

from __future__ import annotations

import base64
import re
import time
from pathlib import Path
from typing import Any

import nbformat
import pandas as pd
import pytest
from bs4 import BeautifulSoup

from toolkit.plot.description import IMAGE_TYPES, output_alt
from toolkit.report import accessible
from toolkit.report.pages import page, page_names, shared_styles

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow  # the site built, or the pages written, then axe in Chromium
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
NO_DESCRIPTION = "No description has been provided for this image"


def _soup(html: str) -> Any:
    return BeautifulSoup(html, "html.parser")


def _blank_headers(soup: Any) -> list[Any]:
    return [th for th in soup.find_all("th") if not th.get_text().strip()]


def _header_texts(soup: Any) -> list[str]:
    return [th.get_text() for th in soup.find_all("th") if th.get_text().strip()]


# ------------------------------------------------------------------------- tables and frames
def _frames() -> dict[str, pd.DataFrame]:
    plain = pd.DataFrame({"name": ["a", "b"], "count": [1, 2]})
    named = plain.set_index("name")
    two = pd.DataFrame({"change": ["new", "new", "fixed"], "assignment": ["x", "y", "x"],
                        "resources": [4, 18, 5]}).set_index(["change", "assignment"])
    wide = pd.DataFrame([[1, 2, 3]], columns=pd.MultiIndex.from_tuples(
        [("up", "a"), ("up", "b"), ("down", "a")]))
    pivot = pd.DataFrame({"gateway": ["g1", "g2"], "Up": [7, 3], "Down": [1, 0]}) \
        .set_index("gateway").rename_axis(columns="health")
    return {"plain": plain, "named": named, "two levels": two, "columns in two rows": wide,
            "pivot": pivot, "no index": plain}


@pytest.mark.parametrize("kind", list(_frames()))
def test_every_header_cell_of_a_pandas_table_gets_text_or_stops_being_a_header(kind) -> None:
    df = _frames()[kind]
    html = df.to_html(index=kind != "no index")
    before = _soup(html)
    out = _soup(accessible.accessible_html(html))
    assert _blank_headers(out) == []
    # no header of the frame's own is lost, and no cell of data is touched
    hidden = out.find_all("span", class_=accessible.VISUALLY_HIDDEN)
    assert [t for t in _header_texts(out) if t != accessible.ROW_LABEL] == _header_texts(before)
    assert [td.get_text() for td in out.find_all("td") if td.get_text().strip()] == \
        [td.get_text() for td in before.find_all("td")]
    # "row" heads the row labels' column when the index has no name, once a column
    unnamed_levels = 0 if kind == "no index" else sum(n is None for n in df.index.names)
    assert len(hidden) == unnamed_levels
    assert all(span.parent.name == "th" and span.get_text() == accessible.ROW_LABEL
               for span in hidden)
    if hidden:  # in the header row read with the columns: the lowest
        assert hidden[-1].find_parent("tr") is out.find("thead").find_all("tr")[-1]


def test_a_page_without_tables_or_frames_is_left_as_it_is() -> None:
    html = "<p>Nothing to do <b>here</b></p>"
    assert accessible.accessible_html(html) is html
    table = "<table><thead><tr><th>a</th></tr></thead><tbody><tr><td>1</td></tr></tbody></table>"
    assert accessible.accessible_html(table) is table  # nothing needed a change


def test_a_frame_without_a_title_is_named_and_a_named_one_kept() -> None:
    leaflet = '<iframe srcdoc="&lt;script src=&quot;leaflet.js&quot;&gt;&lt;/script&gt;">'
    html = (f"{leaflet}</iframe><iframe src='https://example.com/x'></iframe>"
            '<iframe title="interactive map: 3 routes &amp; 2 incidents"></iframe>'
            "<iframe title='  '></iframe>")
    frames = _soup(accessible.accessible_html(html)).find_all("iframe")
    assert [f["title"] for f in frames] == ["interactive map", "embedded content",
                                            "interactive map: 3 routes & 2 incidents",
                                            "embedded content"]
    # the frame's own page is kept whole
    assert frames[0]["srcdoc"] == '<script src="leaflet.js"></script>'


@pytest.mark.parametrize("markdown, title", [
    ("# Routes and *traffic*\nA story.", "Routes and traffic"),
    ("Some text\n\n# [Air](https://x.example) quality `now` #", "Air quality now"),
    ("```python\n# a comment, not a heading\n```\n\n# The title", "The title"),
    ("## A section only", "x"),
    ("#NotAHeading", "x"),
])
def test_a_pages_title_is_its_notebooks_first_heading(markdown, title) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("# a comment in code"),
                nbformat.v4.new_markdown_cell(markdown)]
    assert accessible.page_title(nb, "x") == title


# ------------------------------------------------------------------ the curated notebooks
def _variants() -> list[tuple[str, bool]]:
    return [(nb.stem, code) for nb in NOTEBOOKS for code in (True, False)]


@pytest.fixture(scope="module")
def report_pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The committed notebooks' pages, full and without code, as the report writes them."""
    out = tmp_path_factory.mktemp("reports")
    start = time.perf_counter()
    written = {}
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        for code, name in page_names(path.stem).items():
            (out / name).write_text(shared_styles(page(nb, path, code=code), out),
                                    encoding="utf-8")
            written[name] = (path, code)
    return {"folder": out, "pages": written, "seconds": time.perf_counter() - start}


def _outputs(path: Path) -> list[dict[str, Any]]:
    nb = nbformat.read(path, as_version=4)
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", ())]


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_chart_of_a_notebook_carries_its_description(notebook: Path) -> None:
    # the plot helpers write each chart's description into its output's metadata when the
    # notebook runs: a committed notebook executed before that has none
    pictures = [o for o in _outputs(notebook) if any(k in o.get("data", {}) for k in IMAGE_TYPES)]
    assert pictures, f"{notebook.name} draws no chart"
    missing = [i for i, o in enumerate(pictures) if output_alt(o) is None]
    assert missing == [], (f"{notebook.name}: pictures {missing} of {len(pictures)} have no "
                           "description in their metadata (re-execute the notebook)")


def _data(value: Any) -> str:
    return "".join(value if isinstance(value, list) else [value]).replace("\n", "")


@pytest.mark.parametrize("name, code", _variants(),
                         ids=[page_names(s)[c] for s, c in _variants()])
def test_every_picture_of_a_page_has_the_description_its_output_carries(
        report_pages: dict[str, Any], name: str, code: bool) -> None:
    path = ROOT / "notebooks" / f"{name}.ipynb"
    soup = _soup((report_pages["folder"] / page_names(name)[code]).read_text("utf-8"))
    alts = {}
    for out in _outputs(path):
        for kind in ("image/png", "image/jpeg"):
            if kind in out.get("data", {}):
                alts[_data(out["data"][kind])] = output_alt(out, kind)
    pictures = soup.select("div.jp-RenderedImage img")
    assert len(pictures) == len(alts)
    for img in pictures:
        data = img["src"].split("base64,", 1)[1]
        assert img.get("alt") == alts[data], img.get("alt")
    # the pictures a widget's static view writes into its HTML: described there
    for img in soup.select("div.jp-RenderedHTML img"):
        assert (img.get("alt") or "").strip() and img["alt"] != NO_DESCRIPTION
    assert NO_DESCRIPTION not in str(soup)


def _code_lines(path: Path) -> list[str]:
    """The code cells' lines a reader would recognise as code (not those the text quotes)."""
    nb = nbformat.read(path, as_version=4)
    prose = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    lines = {line.strip() for c in nb.cells if c.cell_type == "code"
             for line in c.source.splitlines()}
    return sorted(line for line in lines
                  if len(line) >= 12 and not line.startswith("#") and line not in prose)


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_report_without_code_has_no_line_of_code_and_everything_else(
        report_pages: dict[str, Any], notebook: Path) -> None:
    folder, names = report_pages["folder"], page_names(notebook.stem)
    full = _soup((folder / names[True]).read_text("utf-8"))
    bare = _soup((folder / names[False]).read_text("utf-8"))
    assert full.select(".jp-InputArea pre") and full.select(".jp-InputPrompt")
    assert bare.select(".jp-InputArea") == [] and bare.select(".jp-CodeMirrorEditor") == []
    assert bare.select(".jp-InputPrompt, .jp-OutputPrompt") == []
    # the text, tables, charts and maps are all there
    for kind in ("h1", "h2", "h3", "table", "img", "iframe"):
        assert len(bare.find_all(kind)) == len(full.find_all(kind)), kind
    marked = [m.get_text() for m in full.select(".jp-MarkdownCell .jp-RenderedMarkdown")]
    assert [m.get_text() for m in bare.select(".jp-MarkdownCell .jp-RenderedMarkdown")] == marked
    # and not one line of the code cells, nor a prompt
    for tag in bare.find_all(["style", "script", "iframe"]):
        tag.decompose()
    text = bare.get_text("\n")
    code = _code_lines(notebook)
    assert code, notebook.name
    assert [line for line in code if line in text] == []
    assert not re.search(r"\bIn\s*\[\d*\]:|\bOut\[\d+\]:", text)


# ------------------------------------------------------------------------- axe in Chromium
@pytest.fixture(scope="module")
def browser_page(report_pages: dict[str, Any]) -> Any:
    """One Chromium page (the system's) for every report page, and the address they are at."""
    from tests import axe
    from tests.browser import launch

    if axe.missing():
        pytest.skip(axe.missing())
    from playwright.sync_api import sync_playwright

    with axe.served(report_pages["folder"]) as base, sync_playwright() as p:
        browser = launch(p)
        try:
            yield browser.new_page(viewport={"width": 1280, "height": 900}), base
        finally:
            browser.close()


@pytest.mark.parametrize("name, code", _variants(),
                         ids=[page_names(s)[c] for s, c in _variants()])
def test_no_report_page_has_a_serious_accessibility_violation(browser_page: Any, name: str,
                                                               code: bool) -> None:
    # axe-core over the page as a reader's browser opens it: contrast of the prompts and the
    # code, header text of the tables, names of the frames and pictures, the page's language
    from tests import axe

    page_, base = browser_page
    address = page_names(name)[code]
    page_.goto(base + address, wait_until="load")
    assert page_.evaluate("() => document.documentElement.lang") == "en"
    found = axe.violations(page_, address)
    assert found == [], "\n".join(found[:60])


def test_the_pages_checked_are_every_page_the_report_writes(report_pages: dict[str, Any]) -> None:
    written = {p.name for p in report_pages["folder"].glob("*.html")}
    assert written == {page_names(s)[c] for s, c in _variants()}
    assert len(written) == 2 * len(NOTEBOOKS) >= 16
    # one shared style sheet for all of them
    assert len(list(report_pages["folder"].glob("notebook-*.css"))) == 1


def test_a_pictures_description_is_written_as_text(tmp_path: Path) -> None:
    # a description is made from the service's data: in the alt attribute it is text
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 16).decode()
    hostile = 'Pool "web" <script>alert(1)</script> & co'
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x", outputs=[nbformat.v4.new_output(
        "display_data", data={"image/png": png, "text/plain": "<Figure>"},
        metadata={"image/png": {"alt": hostile, "width": 300}})])]
    html = page(nb, tmp_path / "x.ipynb")
    [img] = _soup(html).select("div.jp-RenderedImage img")
    assert img["alt"] == hostile and img["width"] == "300"
    assert "<script>alert(1)</script>" not in html
