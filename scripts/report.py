"""Execute notebooks and write each as an HTML report, several at a time (``make report``).

What ``jupyter nbconvert --to html --execute`` does for each notebook (nbclient executes it in
its own kernel, from the notebook's directory; nbconvert's HTML exporter writes
``<output-dir>/<name>.html``), with the notebooks run ``--jobs`` at a time in one process: a
notebook spends most of its time waiting (on long-running operations, on its kernel and dask
workers starting), and one process imports nbconvert once instead of once a notebook (about
1.5 s of CPU each). The longest notebooks start first, by how long their committed run took (the
execution times nbclient records in each code cell's metadata), so that no long notebook starts
last.

Each report is made lighter on the way out: JupyterLab's style sheets, the same in every report,
go into one file beside them (``notebook-<hash>.css``, linked by a relative address), and its
PNG pictures are written with a palette of 256 colours where that is smaller. The page loads
from the web only the scripts the notebook uses (``scripts/report_templates/offline``): nbconvert's
JupyterLab page asks for require.js and MathJax in its head whatever the notebook holds, which an
offline reader's browser waits on and a firewall may hold for a long time.

Run: ``.venv/bin/python scripts/report.py --jobs 2 --output-dir reports notebooks/*.ipynb``
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import io
import re
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbconvert import HTMLExporter


def recorded_seconds(nb: nbformat.NotebookNode) -> float:
    """How long the notebook's recorded run took, from its first cell's start to its last
    cell's reply (infinite when it records none: such a notebook starts first)."""
    times = [c.metadata.get("execution") or {} for c in nb.cells if c.cell_type == "code"]
    try:
        first = datetime.fromisoformat(times[0]["iopub.execute_input"].replace("Z", "+00:00"))
        last = datetime.fromisoformat(times[-1]["shell.execute_reply"].replace("Z", "+00:00"))
    except (IndexError, KeyError, ValueError):
        return float("inf")
    return (last - first).total_seconds()


TEMPLATES = Path(__file__).resolve().parent / "report_templates"
_MATH = re.compile(r"\$[^$\n]+\$|\\\(|\\\[|\\begin\{")
_AMD = re.compile(r"\brequire(js)?\s*[.(]|\bdefine\s*\(")
#: a frame's own page (a map's), which does not see the report's scripts
_SRCDOC = re.compile(r"""srcdoc=("[^"]*"|'[^']*')""")


def web_scripts(nb: nbformat.NotebookNode) -> dict[str, bool]:
    """Which of the page's scripts from the web the notebook uses.

    ``needs_mathjax`` when a text cell or an output holds mathematics, ``needs_requirejs`` when
    an output's HTML or JavaScript loads modules with require.js (AMD's ``require``/``define``;
    not counting a frame's own page, as a map's, which does not see the report's scripts).
    """
    math = any(_MATH.search(c.source) for c in nb.cells if c.cell_type == "markdown")
    amd = False
    for cell in nb.cells:
        for out in cell.get("outputs", ()):
            data = out.get("data", {})
            math = math or "text/latex" in data
            for mime in ("text/html", "application/javascript"):
                text = data.get(mime, "")
                text = "".join(text) if isinstance(text, list) else text
                amd = amd or bool(_AMD.search(_SRCDOC.sub("", text)))
    return {"needs_mathjax": math, "needs_requirejs": amd}


_STYLE = re.compile(r"<style[^>]*>(.*?)</style>", re.S)
_PNG = re.compile(r"data:image/png;base64,([A-Za-z0-9+/=]+)")
#: A style sheet of a report at least this long goes into the style sheet the reports share.
SHARED_STYLE_FROM = 2_000
_css_lock = threading.Lock()


def shared_styles(html: str, out_dir: Path) -> str:
    """Move the report's long style sheets (JupyterLab's theme, about 260 kB, the same in every
    report) into one file beside the reports, linked by a relative address (it works offline,
    as the reports directory is kept together)."""
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


def lighter_pictures(html: str) -> str:
    """Write each PNG picture of the report with a palette of 256 colours where that is smaller
    (plots have few colours: a quarter to a third of the bytes, the same to the eye)."""
    from PIL import Image

    def smaller(m: re.Match[str]) -> str:
        raw = base64.b64decode(m.group(1))
        try:
            picture = Image.open(io.BytesIO(raw))
            if picture.mode == "RGBA" and picture.getextrema()[3][0] < 255:
                return m.group(0)  # transparent: kept as it is
            fewer = picture.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT,
                                                    dither=Image.Dither.NONE)
            buffer = io.BytesIO()
            fewer.save(buffer, "PNG", optimize=True)
        except (OSError, ValueError):
            return m.group(0)
        if buffer.tell() >= len(raw):
            return m.group(0)
        return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")

    return _PNG.sub(smaller, html)


def page(nb: nbformat.NotebookNode, path: Path) -> str:
    """The executed notebook at ``path`` as JupyterLab's HTML page, with only the web scripts it
    uses (:func:`web_scripts`)."""
    exporter = HTMLExporter(template_name="offline", extra_template_basedirs=[str(TEMPLATES)])
    html, _ = exporter.from_notebook_node(
        nb, resources={"metadata": {"name": path.stem, "path": str(path.parent)},
                       **web_scripts(nb)})
    return html


async def _report(path: Path, nb: nbformat.NotebookNode, out_dir: Path, timeout: int,
                  jobs: asyncio.Semaphore) -> str | None:
    """Execute one notebook and write its report; the error, if it failed."""
    async with jobs:
        start = time.perf_counter()
        # no widget state: the report shows each widget's static view instead of waiting for a
        # widget manager from the web
        client = NotebookClient(nb, timeout=timeout, store_widget_state=False,
                                resources={"metadata": {"path": str(path.parent)}})
        try:
            await client.async_execute()
        except Exception as err:  # a failing notebook: report it, let the others finish
            print(f"{path}: failed after {time.perf_counter() - start:.1f} s\n{err}",
                  file=sys.stderr, flush=True)
            return f"{path}: {type(err).__name__}"
        ran = time.perf_counter() - start

    def export() -> None:
        html = lighter_pictures(shared_styles(page(nb, path), out_dir))
        (out_dir / f"{path.stem}.html").write_text(html, encoding="utf-8")

    await asyncio.to_thread(export)
    print(f"{path}: executed in {ran:.1f} s, report written in "
          f"{time.perf_counter() - start - ran:.1f} s", flush=True)
    return None


async def _main(paths: list[Path], out_dir: Path, jobs: int, timeout: int) -> int:
    out_dir.mkdir(parents=True, exist_ok=True)
    limit = asyncio.Semaphore(jobs)
    notebooks = [(p, nbformat.read(p, as_version=4)) for p in paths]
    notebooks.sort(key=lambda item: -recorded_seconds(item[1]))  # the longest first
    failed = [f for f in await asyncio.gather(
        *(_report(p, nb, out_dir, timeout, limit) for p, nb in notebooks)) if f]
    for f in failed:
        print(f"failed: {f}", file=sys.stderr)
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--output-dir", type=Path, default=Path("reports"))
    parser.add_argument("--jobs", type=int, default=2, help="notebooks executed at once")
    parser.add_argument("--timeout", type=int, default=300, help="seconds a cell may take")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    code = asyncio.run(_main(args.notebooks, args.output_dir, max(1, args.jobs), args.timeout))
    print(f"{len(args.notebooks)} notebooks in {time.perf_counter() - start:.1f} s "
          f"({args.jobs} at a time)", flush=True)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
