"""The reports' pages: one shared style sheet beside the reports, pictures with a palette where
that is smaller (each checked for its size before it is decoded), only the web scripts a
notebook uses, and the report without code: the text, tables, charts and maps without a line of
code."""

from __future__ import annotations

import base64
import io
import struct
import zlib
from pathlib import Path
from typing import Any

import nbformat
import pytest

from toolkit.report import pages as report

ROOT = Path(__file__).resolve().parents[2]


def _page(body: str) -> str:
    theme = "a{color:red}" * 500  # a long style sheet, as JupyterLab's theme
    return (f"<html><head><style type='text/css'>{theme}</style><style>b{{x:1}}</style>"
            f"<style>{theme.upper()}</style></head><body>{body}</body></html>")


def test_long_style_sheets_go_into_one_shared_file(tmp_path) -> None:
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


def _lines_png() -> bytes:
    from PIL import Image, ImageDraw

    picture = Image.new("RGBA", (400, 300), (255, 255, 255, 255))
    draw = ImageDraw.Draw(picture)
    for i in range(0, 400, 7):
        draw.line((i, 0, 400 - i, 300), fill=(i % 256, 80, 160, 255), width=2)
    buffer = io.BytesIO()
    picture.save(buffer, "PNG")
    return buffer.getvalue()


def _huge_png_header(width: int = 30_000, height: int = 30_000) -> bytes:
    """A PNG that announces a huge picture: its signature and header, and one tiny data chunk."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data)))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + chunk(b"IEND", b""))


def _picture_notebook(*pngs: str, html: str | None = None) -> Any:
    nb = nbformat.v4.new_notebook()
    outputs = [nbformat.v4.new_output("display_data", data={"image/png": p, "text/plain": "x"})
               for p in pngs]
    if html is not None:
        outputs.append(nbformat.v4.new_output("display_data", data={"text/html": html}))
    nb.cells = [nbformat.v4.new_code_cell("x", outputs=outputs)]
    return nb


def test_pictures_get_a_palette_where_smaller() -> None:
    from PIL import Image

    raw = _lines_png()
    data = base64.b64encode(raw).decode()
    nb = _picture_notebook(data, html=f'<img src="data:image/png;base64,{data}"/>')
    done = report.lighter_pictures(nb)
    outputs = nb.cells[0].outputs
    written = base64.b64decode(outputs[0].data["image/png"])
    in_html = base64.b64decode(outputs[1].data["text/html"].split("base64,", 1)[1]
                               .split('"', 1)[0])
    assert done.lighter == 2 and done.left == []
    assert len(written) < len(raw) and in_html == written
    again = Image.open(io.BytesIO(written))
    assert again.size == (400, 300) and again.mode == "P"
    clear = Image.new("RGBA", (50, 50), (0, 0, 0, 0))  # transparent: left alone
    buffer = io.BytesIO()
    clear.save(buffer, "PNG")
    data = base64.b64encode(buffer.getvalue()).decode()
    nb = _picture_notebook(data)
    assert report.lighter_pictures(nb).lighter == 0
    assert nb.cells[0].outputs[0].data["image/png"] == data


def test_an_odd_picture_is_left_as_it_is_and_named_and_the_others_are_done(monkeypatch) -> None:
    from PIL import Image

    opened: list[Any] = []
    real_open = Image.open
    monkeypatch.setattr(Image, "open", lambda *a, **k: opened.append(a) or real_open(*a, **k))
    not_png = base64.b64encode(b"plain text, not a picture").decode()
    not_base64 = "%%% not base64 at all %%%"
    huge = base64.b64encode(_huge_png_header()).decode()
    good = base64.b64encode(_lines_png()).decode()
    nb = _picture_notebook(not_png, huge, good,
                           html=f'<img src="data:image/png;base64,{not_base64}">')
    done = report.lighter_pictures(nb)
    outputs = nb.cells[0].outputs
    assert outputs[0].data["image/png"] == not_png and outputs[1].data["image/png"] == huge
    assert outputs[2].data["image/png"] != good and done.lighter == 1
    assert len(done.left) == 2  # the HTML's text never matched as a picture at all
    assert done.left[0] == "code cell 1: not a PNG picture"
    assert done.left[1].startswith("code cell 1: 30000×30000 pixels, more than")
    assert len(opened) == 1  # only the good picture was ever opened to decode


def _notebook(markdown: str, html: str = "<b>a table</b>") -> Any:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(markdown),
                nbformat.v4.new_code_cell("x", outputs=[nbformat.v4.new_output(
                    "display_data", data={"text/html": html, "text/plain": "x"})])]
    return nb


def test_a_page_loads_no_script_from_the_web_that_the_notebook_does_not_use() -> None:
    import re

    page = report.page(_notebook("# Routes\nA story in words."), ROOT / "notebooks" / "x.ipynb")
    scripts = re.findall(r"<script[^>]*\bsrc=\"([^\"]*)\"", page)
    assert scripts == [] and "<b>a table</b>" in page and "<title>Routes</title>" in page
    assert "mathjax" not in page.lower() and "require.min.js" not in page
    # a map's own page in a frame does not count: it does not see the report's scripts
    framed = '<iframe srcdoc="&lt;script&gt;define([], f)&lt;/script&gt;"></iframe>'
    page = report.page(_notebook("text", framed), ROOT / "notebooks" / "x.ipynb")
    assert "require.min.js" not in page


def test_a_page_loads_mathjax_and_requirejs_where_the_notebook_uses_them() -> None:
    page = report.page(_notebook("The rate is $r = n / t$."), ROOT / "notebooks" / "x.ipynb")
    assert "mathjax" in page.lower() and "require.min.js" not in page
    amd = "<script>require(['d3'], function (d3) { d3.select('b'); });</script>"
    page = report.page(_notebook("text", amd), ROOT / "notebooks" / "x.ipynb")
    assert "require.min.js" in page and "mathjax" not in page.lower()


def _story() -> Any:
    """A notebook as a report holds one: text, code, a warning, a table, a picture, an error."""
    nb = nbformat.v4.new_notebook()
    warning = ("/tmp/ipykernel_7/123.py:5: SandboxWarning: toolkit: invented data,\n"
               "not your cloud's\n  conn = toolkit.connect(cloud=cloud)\n"
               "C:\\Users\\me\\x.py:12: UserWarning: a second one\n  warnings.warn(msg)\n"
               "an ordinary line\n")
    png = base64.b64encode(_lines_png()).decode()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Compliance\nWhere are we `not` compliant?"),
        nbformat.v4.new_code_cell("parameters_cell_without_output = None"),
        nbformat.v4.new_code_cell("conn = toolkit.connect(cloud=cloud)", execution_count=2,
                                  outputs=[nbformat.v4.new_output("stream", name="stderr",
                                                                  text=warning)]),
        nbformat.v4.new_code_cell("summary_of_compliance_by_assignment", execution_count=3,
                                  outputs=[nbformat.v4.new_output(
                                      "execute_result", execution_count=3,
                                      data={"text/html": "<table><thead><tr><th></th><th>n</th>"
                                                         "</tr></thead><tbody><tr><th>0</th>"
                                                         "<td>4</td></tr></tbody></table>",
                                            "text/plain": "n 4"})]),
        nbformat.v4.new_code_cell("toolkit.plot.compliance_by(summary)", execution_count=4,
                                  outputs=[nbformat.v4.new_output(
                                      "display_data", data={"image/png": png},
                                      metadata={"image/png": {"alt": "4 resources: 1 down"}})]),
        nbformat.v4.new_code_cell("raise_an_error_on_purpose()", execution_count=5,
                                  outputs=[nbformat.v4.new_output(
                                      "error", ename="ApiError", evalue="HTTP 403 refused",
                                      traceback=["\x1b[31mTraceback\x1b[0m",
                                                 "----> 1 raise_an_error_on_purpose()"])]),
    ]
    return nb


def test_the_report_without_code_keeps_the_story_and_no_code() -> None:
    from bs4 import BeautifulSoup

    nb = _story()
    full = report.page(nb, ROOT / "notebooks" / "x.ipynb")
    bare = report.page(nb, ROOT / "notebooks" / "x.ipynb", code=False)
    soup = BeautifulSoup(bare, "html.parser")
    full_text, bare_text = BeautifulSoup(full, "html.parser").get_text(), soup.get_text()
    for line in ("conn = toolkit.connect(cloud=cloud)", "summary_of_compliance_by_assignment",
                 "raise_an_error_on_purpose()", "toolkit.plot.compliance_by(summary)",
                 "parameters_cell_without_output = None", "warnings.warn(msg)"):
        assert line in full_text and line not in bare_text, line
    assert "In\xa0[2]:" in full_text and "Out[3]:" in full_text
    assert "In\xa0[" not in bare_text and "Out[" not in bare_text
    assert soup.select(".jp-InputArea, .jp-InputPrompt, .jp-OutputPrompt, "
                       ".jp-CodeMirrorEditor, .highlight") == []
    assert BeautifulSoup(full, "html.parser").select(".jp-CodeMirrorEditor .highlight pre")
    # one code cell left on the page per code cell with outputs, and nothing of those without
    assert len(soup.select(".jp-CodeCell")) == 4
    assert soup.find("h1").get_text().startswith("Compliance")
    assert soup.find("code").get_text() == "not"  # the text's own code words are text
    assert soup.select_one(".jp-RenderedImage img")["alt"] == "4 resources: 1 down"
    assert soup.find("table") is not None
    stderr = [e.get_text() for e in
              soup.select('[data-mime-type="application/vnd.jupyter.stderr"] pre')]
    assert stderr == [
        "SandboxWarning: toolkit: invented data,\nnot your cloud's\n"
        "UserWarning: a second one\nan ordinary line\n",
        "ApiError: HTTP 403 refused"]
    assert "<title>Compliance (without code)</title>" in bare
    assert "<title>Compliance</title>" in full


def test_a_warnings_line_of_code_is_left_out_and_nothing_else() -> None:
    text = ("/tmp/ipykernel_1/2.py:3: FutureWarning: old\n  df.append(x)\n"
            "plain: 1: not a warning's place\n  indented output stays\n")
    assert report.without_code(text) == ("FutureWarning: old\nplain: 1: not a warning's "
                                         "place\n  indented output stays\n")
    assert report.without_code(["a ", "list\n"]) == "a list\n"
    assert report.without_code("") == ""


def test_the_pages_a_report_is_written_as() -> None:
    from toolkit import ValidationError

    assert report.page_names("02-policy") == {True: "02-policy.html",
                                              False: "02-policy-no-code.html"}
    assert report.page_names("x", "full") == {True: "x.html"}
    assert report.page_names("x", "no-code") == {False: "x-no-code.html"}
    with pytest.raises(ValidationError) as info:
        report.page_names("x", "summary")
    assert info.value.parameter == "pages" and "both, full, no-code" in info.value.rule
