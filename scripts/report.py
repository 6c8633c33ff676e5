"""Execute notebooks and write each as an HTML report, several at a time (``make report``).

What ``jupyter nbconvert --to html --execute`` does for each notebook (nbclient executes it in
its own kernel, from the notebook's directory; nbconvert's HTML exporter writes
``<output-dir>/<name>.html``), with the notebooks run ``--jobs`` at a time in one process: a
notebook spends most of its time waiting (on long-running operations, on its kernel and dask
workers starting), and one process imports nbconvert once instead of once a notebook (about
1.5 s of CPU each). The longest notebooks start first, by how long their committed run took (the
execution times nbclient records in each code cell's metadata), so that no long notebook starts
last.

Run: ``.venv/bin/python scripts/report.py --jobs 2 --output-dir reports notebooks/*.ipynb``
"""

from __future__ import annotations

import argparse
import asyncio
import sys
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
        html, _ = HTMLExporter().from_notebook_node(
            nb, resources={"metadata": {"name": path.stem, "path": str(path.parent)}})
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
