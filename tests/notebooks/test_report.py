"""The report run's lighter pages: one shared style sheet beside the reports, pictures with a
palette where that is smaller."""

from __future__ import annotations

import base64
import importlib.util
import io
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def report() -> Any:
    pytest.importorskip("nbconvert")
    spec = importlib.util.spec_from_file_location("report", ROOT / "scripts" / "report.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _page(body: str) -> str:
    theme = "a{color:red}" * 500  # a long style sheet, as JupyterLab's theme
    return (f"<html><head><style type='text/css'>{theme}</style><style>b{{x:1}}</style>"
            f"<style>{theme.upper()}</style></head><body>{body}</body></html>")


def test_long_style_sheets_go_into_one_shared_file(report, tmp_path) -> None:
    first = report.shared_styles(_page("one"), tmp_path)
    second = report.shared_styles(_page("two"), tmp_path)
    (css,) = tmp_path.glob("notebook-*.css")
    assert f'<link rel="stylesheet" href="{css.name}">' in first
    assert first.count("<link") == 1 and "a{color:red}" not in first and "A{COLOR:RED}" not in first
    assert "<style>b{x:1}</style>" in first  # short ones stay in the page, in their place
    assert first.index("<link") < first.index("b{x:1}")
    assert "a{color:red}" in css.read_text() and "A{COLOR:RED}" in css.read_text()
    assert second.replace("two", "one") == first
    assert report.shared_styles("<html><head></head></html>", tmp_path) == \
        "<html><head></head></html>"


def test_pictures_get_a_palette_where_smaller(report) -> None:
    from PIL import Image, ImageDraw

    picture = Image.new("RGBA", (400, 300), (255, 255, 255, 255))
    draw = ImageDraw.Draw(picture)
    for i in range(0, 400, 7):
        draw.line((i, 0, 400 - i, 300), fill=(i % 256, 80, 160, 255), width=2)
    buffer = io.BytesIO()
    picture.save(buffer, "PNG")
    data = base64.b64encode(buffer.getvalue()).decode()
    page = f'<img src="data:image/png;base64,{data}"/>'
    out = report.lighter_pictures(page)
    written = base64.b64decode(out.split("base64,", 1)[1].split('"', 1)[0])
    assert len(written) < len(buffer.getvalue())
    again = Image.open(io.BytesIO(written))
    assert again.size == (400, 300) and again.mode == "P"
    clear = Image.new("RGBA", (50, 50), (0, 0, 0, 0))  # transparent: left alone
    buffer = io.BytesIO()
    clear.save(buffer, "PNG")
    page = f'data:image/png;base64,{base64.b64encode(buffer.getvalue()).decode()}'
    assert report.lighter_pictures(page) == page


def _notebook(markdown: str, html: str = "<b>a table</b>") -> Any:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(markdown),
                nbformat.v4.new_code_cell("x", outputs=[nbformat.v4.new_output(
                    "display_data", data={"text/html": html, "text/plain": "x"})])]
    return nb


def test_a_page_loads_no_script_from_the_web_that_the_notebook_does_not_use(report) -> None:
    import re

    page = report.page(_notebook("# Routes\nA story in words."), ROOT / "notebooks" / "x.ipynb")
    scripts = re.findall(r"<script[^>]*\bsrc=\"([^\"]*)\"", page)
    assert scripts == [] and "<b>a table</b>" in page and "<title>x</title>" in page
    assert "mathjax" not in page.lower() and "require.min.js" not in page
    # a map's own page in a frame does not count: it does not see the report's scripts
    framed = '<iframe srcdoc="&lt;script&gt;define([], f)&lt;/script&gt;"></iframe>'
    page = report.page(_notebook("text", framed), ROOT / "notebooks" / "x.ipynb")
    assert "require.min.js" not in page


def test_a_page_loads_mathjax_and_requirejs_where_the_notebook_uses_them(report) -> None:
    page = report.page(_notebook("The rate is $r = n / t$."), ROOT / "notebooks" / "x.ipynb")
    assert "mathjax" in page.lower() and "require.min.js" not in page
    amd = "<script>require(['d3'], function (d3) { d3.select('b'); });</script>"
    page = report.page(_notebook("text", amd), ROOT / "notebooks" / "x.ipynb")
    assert "require.min.js" in page and "mathjax" not in page.lower()
