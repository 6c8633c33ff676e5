"""The report's pages: an executed notebook as a light HTML page that works offline.

JupyterLab's page (nbconvert's HTML exporter) through a template of the package's own
(``templates/offline``) that loads from the web only the scripts the notebook uses: nbconvert's
page asks for require.js and MathJax in its head whatever the notebook holds, which an offline
reader's browser waits on and a firewall may hold for a long time. The pages are made lighter
on the way out: JupyterLab's style sheets, the same in every report, go into one file beside
them (``notebook-<hash>.css``, linked by a relative address), and PNG pictures are written with
a palette of 256 colours where that is smaller (:func:`lighter_pictures`), each checked for its
size before it is decoded.

How the page is drawn is decided in :func:`exporter` alone: the full report (the notebook as
it ran: text, code, prompts and outputs), or the report without code (:data:`NO_CODE`:
``<name>-no-code.html``), for a reader who wants the answer and not how it was computed: the
text, tables, charts and maps, with no code cell's input, no prompt, a warning without the
line of code that raised it and an error without its traceback. Both pages are made for
every reader (:mod:`toolkit.report.accessible`: charts described, tables with header text,
frames named, WCAG 2.1 AA contrast).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import logging
import re
import struct
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import nbformat
    from nbconvert import HTMLExporter

logger = logging.getLogger(__name__)

__all__ = ["MAX_PICTURE_PIXELS", "NO_CODE", "PAGES", "Shrunk", "exporter", "lighter_pictures",
           "page", "page_names", "shared_styles", "web_scripts", "without_code"]

TEMPLATES = Path(__file__).resolve().parent / "templates"
#: A picture larger than this (width times height, read from its header before anything is
#: decoded) is left as it is: a report's charts are a few million pixels at most.
MAX_PICTURE_PIXELS = 40_000_000
#: A style sheet of a report at least this long goes into the style sheet the reports share.
SHARED_STYLE_FROM = 2_000

_MATH = re.compile(r"\$[^$\n]+\$|\\\(|\\\[|\\begin\{")
_AMD = re.compile(r"\brequire(js)?\s*[.(]|\bdefine\s*\(")
#: a frame's own page (a map's), which does not see the report's scripts
_SRCDOC = re.compile(r"""srcdoc=("[^"]*"|'[^']*')""")
_STYLE = re.compile(r"<style[^>]*>(.*?)</style>", re.S)
_PNG_URI = re.compile(r"data:image/png;base64,([A-Za-z0-9+/=\s]+)")
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_css_lock = threading.Lock()
#: What the file name of a report without code adds to the full report's: ``<name>-no-code.html``.
NO_CODE = "-no-code"
#: Which pages a report run writes: both, the full report only, the report without code only.
PAGES = ("both", "full", "no-code")
#: A warning as Python writes it: ``<file>:<line>: <Category>: <message>``, then the line of
#: code that raised it, indented by two spaces.
_WARNING = re.compile(r"^(?P<where>[^\n]+?):(?P<line>\d+): (?P<category>[A-Za-z_][\w.]*): "
                      r"(?P<message>.*)$")


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def web_scripts(nb: nbformat.NotebookNode) -> dict[str, bool]:
    """Tell which of the page's scripts from the web the notebook uses.

    ``needs_mathjax`` when a text cell or an output holds mathematics, ``needs_requirejs`` when
    an output's HTML or JavaScript loads modules with require.js (AMD's ``require``/``define``;
    not counting a frame's own page, as a map's, which does not see the report's scripts).

    Returns
    -------
    dict
        The two flags the offline template reads.
    """
    math = any(_MATH.search(_text(c.source)) for c in nb.cells if c.cell_type == "markdown")
    amd = False
    for cell in nb.cells:
        for out in cell.get("outputs", ()):
            data = out.get("data", {})
            math = math or "text/latex" in data
            for mime in ("text/html", "application/javascript"):
                amd = amd or bool(_AMD.search(_SRCDOC.sub("", _text(data.get(mime, "")))))
    return {"needs_mathjax": math, "needs_requirejs": amd}


def shared_styles(html: str, out_dir: Path) -> str:
    """Move the page's long style sheets into one file beside the reports.

    JupyterLab's theme (about 260 kB) is the same in every report: it goes into
    ``notebook-<hash>.css``, linked by a relative address (it works offline, as the reports'
    folder is kept together).

    Returns
    -------
    str
        The page, linking the shared file where its long style sheets were.
    """
    head_end = html.find("</head>")
    found = [m for m in _STYLE.finditer(html, 0, head_end)
             if len(m.group(1)) >= SHARED_STYLE_FROM]
    if not found:
        return html
    css = "\n".join(m.group(1) for m in found)
    name = f"notebook-{hashlib.sha256(css.encode()).hexdigest()[:12]}.css"
    with _css_lock:
        target = out_dir / name
        if not target.exists():
            target.write_text(css, encoding="utf-8")
    out, last = [], 0
    for i, m in enumerate(found):
        out.append(html[last:m.start()])
        if i == 0:
            out.append(f'<link rel="stylesheet" href="{name}">')
        last = m.end()
    out.append(html[last:])
    return "".join(out)


@dataclass
class Shrunk:
    """What :func:`lighter_pictures` did: pictures made lighter, and those it left, with why."""

    lighter: int = 0
    left: list[str] = field(default_factory=list)


def _png_size(raw: bytes) -> tuple[int, int]:
    """Read a PNG's width and height from its header (nothing decoded)."""
    if len(raw) < 24 or not raw.startswith(_PNG_SIGNATURE) or raw[12:16] != b"IHDR":
        raise ValueError("not a PNG picture")
    width, height = struct.unpack(">II", raw[16:24])
    return width, height


def _smaller_png(data: str) -> str:
    """Give the base64 PNG written with a palette where that is smaller, else as it was.

    Raises
    ------
    ValueError
        Text that is not a PNG, or a picture larger than :data:`MAX_PICTURE_PIXELS`.
    """
    from PIL import Image

    try:
        raw = base64.b64decode("".join(data.split()), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("not base64 text") from None
    width, height = _png_size(raw)
    if width * height > MAX_PICTURE_PIXELS:
        raise ValueError(f"{width}×{height} pixels, more than {MAX_PICTURE_PIXELS:,}")
    try:
        with Image.open(io.BytesIO(raw)) as picture:
            extrema: Any = picture.getextrema()
            if picture.mode == "RGBA" and extrema[3][0] < 255:
                return data  # transparent: kept as it is
            fewer = picture.convert("RGB").quantize(
                colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
        buffer = io.BytesIO()
        fewer.save(buffer, "PNG", optimize=True)
    except (OSError, ValueError, SyntaxError, Image.DecompressionBombError) as err:
        raise ValueError(f"could not be decoded ({type(err).__name__})") from None
    if buffer.tell() >= len(raw):
        return data
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def lighter_pictures(nb: nbformat.NotebookNode) -> Shrunk:
    """Write the notebook's PNG pictures with a palette of 256 colours where that is smaller.

    Plots have few colours: a quarter to a third of the bytes, the same to the eye. Both the
    outputs' own pictures and those written into HTML outputs (a widget's static view) are
    done. A picture that is not one, or too large to decode safely (its size is read from its
    header first), is left as it is and named in the result; the others are done all the same.

    Returns
    -------
    Shrunk
        How many were made lighter, and which were left, with why (``cell N: ...``).
    """
    done = Shrunk()

    def shrink(data: str, where: str) -> str:
        try:
            out = _smaller_png(data)
        except ValueError as err:
            done.left.append(f"{where}: {err}")
            return data
        done.lighter += out is not data
        return out

    code = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        code += 1
        for out in cell.get("outputs", ()):
            data = out.get("data")
            if not isinstance(data, dict):
                continue
            where = f"code cell {code}"
            if "image/png" in data:
                data["image/png"] = shrink(_text(data["image/png"]), where)
            if "text/html" in data:
                def inline(m: re.Match[str], w: str = where) -> str:
                    return "data:image/png;base64," + shrink(m.group(1), w)

                data["text/html"] = _PNG_URI.sub(inline, _text(data["text/html"]))
    return done


def without_code(text: Any) -> str:
    """Write a stream's text without the lines of code Python's warnings quote.

    A warning reads ``/tmp/ipykernel_7/123.py:5: SandboxWarning: <message>`` followed by the
    line of code that raised it; the report without code keeps ``SandboxWarning: <message>``.

    Returns
    -------
    str
        The text, each warning's place and quoted line left out; anything else as it was.
    """
    out: list[str] = []
    warned = False
    for line in _text(text).splitlines(keepends=True):
        found = _WARNING.match(line.rstrip("\r\n"))
        if found:
            out.append(f"{found['category']}: {found['message']}\n")
            warned = True
        elif warned and line.startswith("  "):
            warned = False  # the quoted line of code, after the message's last line
        else:
            out.append(line)
    return "".join(out)


def page_names(stem: str, pages: str = "both") -> dict[bool, str]:
    """Name the pages a report is written as: by whether the page shows the code.

    Returns
    -------
    dict
        ``{True: "<stem>.html", False: "<stem>-no-code.html"}``, or the one of them ``pages``
        (one of :data:`PAGES`) asks for.

    Raises
    ------
    ValidationError
        When ``pages`` is none of :data:`PAGES`.
    """
    if pages not in PAGES:
        from toolkit._core.errors import ValidationError

        raise ValidationError("pages", pages, f"one of {', '.join(PAGES)}")
    names = {True: f"{stem}.html", False: f"{stem}{NO_CODE}.html"}
    return {code: name for code, name in names.items()
            if pages == "both" or (pages == "full") == code}


def exporter(*, code: bool = True) -> HTMLExporter:
    """Make the exporter every report page is written with (JupyterLab's page, offline).

    Parameters
    ----------
    code : bool
        The full report (``True``), or the report without code: no code cell's input, no
        ``In [n]:``/``Out[n]:`` prompt, warnings without their quoted line of code, errors
        without their traceback.

    Returns
    -------
    nbconvert.HTMLExporter
        With the package's ``offline`` template and its filters.
    """
    from nbconvert import HTMLExporter

    from toolkit.report.accessible import FILTERS

    return HTMLExporter(template_name="offline", extra_template_basedirs=[str(TEMPLATES)],
                        filters={**FILTERS, "without_code": without_code},
                        exclude_input=not code, exclude_input_prompt=not code,
                        exclude_output_prompt=not code)


#: The exporters of this thread, one of each kind: an exporter compiles its templates once, on
#: its first page (most of a short page's time), and the report command writes its pages from
#: several threads.
_exporters = threading.local()


def _thread_exporter(code: bool) -> HTMLExporter:
    made: dict[bool, HTMLExporter] = _exporters.__dict__.setdefault("made", {})
    if code not in made:
        made[code] = exporter(code=code)
    return made[code]


def page(nb: nbformat.NotebookNode, path: Path, *, code: bool = True) -> str:
    """Write the executed notebook at ``path`` as its report page.

    Parameters
    ----------
    nb : nbformat.NotebookNode
        The executed notebook (not changed).
    path : Path
        Where it was run from (its name is the page's title when it has no heading).
    code : bool
        The full report, or the report without code (:func:`exporter`).

    Returns
    -------
    str
        The HTML page, with only the web scripts the notebook uses (:func:`web_scripts`),
        titled by the notebook's first heading.
    """
    from toolkit.report.accessible import page_title

    title = page_title(nb, path.stem)
    if not code:
        title += " (without code)"
    html, _ = _thread_exporter(code).from_notebook_node(
        nb, resources={"metadata": {"name": title, "path": str(path.parent)},
                       **web_scripts(nb)})
    return html
