"""The report's pages: an executed notebook as a light HTML page that works offline.

JupyterLab's page (nbconvert's HTML exporter) through a template of the package's own
(``templates/offline``) that loads from the web only the scripts the notebook uses: nbconvert's
page asks for require.js and MathJax in its head whatever the notebook holds, which an offline
reader's browser waits on and a firewall may hold for a long time. The pages are made lighter
on the way out: JupyterLab's style sheets, the same in every report, go into one file beside
them (``notebook-<hash>.css``, linked by a relative address), and PNG pictures are written with
a palette of 256 colours where that is smaller (:func:`lighter_pictures`), each checked for its
size before it is decoded.

How the page is drawn is decided in :func:`exporter` alone, the one place where other views of
a report (without its code cells, say) would be chosen.
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

__all__ = ["MAX_PICTURE_PIXELS", "Shrunk", "exporter", "lighter_pictures", "page",
           "shared_styles", "web_scripts"]

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


def exporter() -> HTMLExporter:
    """Make the exporter every report page is written with (JupyterLab's page, offline).

    Returns
    -------
    nbconvert.HTMLExporter
        With the package's ``offline`` template.
    """
    from nbconvert import HTMLExporter

    return HTMLExporter(template_name="offline", extra_template_basedirs=[str(TEMPLATES)])


def page(nb: nbformat.NotebookNode, path: Path) -> str:
    """Write the executed notebook at ``path`` as its report page.

    Returns
    -------
    str
        The HTML page, with only the web scripts the notebook uses (:func:`web_scripts`).
    """
    html, _ = exporter().from_notebook_node(
        nb, resources={"metadata": {"name": path.stem, "path": str(path.parent)},
                       **web_scripts(nb)})
    return html
