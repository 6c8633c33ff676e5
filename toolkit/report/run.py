"""Run notebooks as reports: papermill executes each with its parameters, nbconvert writes it.

Each notebook is a template whose first cell, tagged ``parameters`` (the papermill and Quarto
convention), holds what varies. :func:`run_reports` hands each notebook the parameters it
declares (papermill injects them in a cell after that one), executes it in its own kernel from
the notebook's folder (nbclient, as papermill's engine runs it), keeps the executed notebook
(``<name>.ipynb``) beside its pages in the output folder, the full report (``<name>.html``) and
the report without code (``<name>-no-code.html``, :mod:`toolkit.report.pages`), and goes on
with the others when one fails. Several run at once (``jobs``): a notebook spends most of its
time waiting on services and on its kernel, and the longest (by the run its committed outputs
record) start first.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from toolkit.report.pages import lighter_pictures, page, page_names, shared_styles

logger = logging.getLogger(__name__)

__all__ = ["Outcome", "curated_notebooks", "declared_parameters", "run_reports"]

#: Where the curated notebooks are: beside the package in a clone, else where the
#: distribution installs them (``<prefix>/share/cloudops-frames/notebooks``).
_SHARE = ("share", "cloudops-frames", "notebooks")
#: The settings that point a notebook at a real service or another sandbox: with none of
#: them (and no cloud or credential given), the notebooks answer from their own sandboxes.
_CONFIGURED = ("TOOLKIT_CLOUD", "TOOLKIT_BASE_URL", "TOOLKIT_ARM_URL", "TOOLKIT_MAPS_URL",
               "TOOLKIT_GRAPH_URL", "TOOLKIT_FABRIC_URL", "TOOLKIT_TOKEN", "TOOLKIT_CREDENTIAL",
               "TOOLKIT_MAPS_KEY", "TOOLKIT_MAPS_SAS_TOKEN")


def curated_notebooks() -> list[Path]:
    """List the curated notebooks, in their order.

    Returns
    -------
    list of Path
        ``notebooks/*.ipynb`` of the clone the package runs from, else of the installed
        distribution's shared data; empty when neither is there.
    """
    import sys
    import sysconfig

    here = Path(__file__).resolve().parents[2] / "notebooks"
    places = [here, Path(sys.prefix).joinpath(*_SHARE),
              Path(sysconfig.get_path("data")).joinpath(*_SHARE)]
    for place in places:
        found = sorted(place.glob("*.ipynb"))
        if found:
            return found
    return []


def declared_parameters(path: Path) -> dict[str, Any]:
    """Read the parameters a notebook's ``parameters`` cell declares, with their defaults.

    Returns
    -------
    dict
        Name to default (as papermill reads them: the default's source text).
    """
    import papermill

    return {name: spec.get("default") for name, spec in
            papermill.inspect_notebook(str(path)).items()}


def _recorded_seconds(path: Path) -> float:
    """How long the notebook's recorded run took (infinite when it records none)."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    times = [c.metadata.get("execution") or {} for c in nb.cells if c.cell_type == "code"]
    try:
        first = datetime.fromisoformat(times[0]["iopub.execute_input"].replace("Z", "+00:00"))
        last = datetime.fromisoformat(times[-1]["shell.execute_reply"].replace("Z", "+00:00"))
    except (IndexError, KeyError, ValueError):
        return float("inf")
    return (last - first).total_seconds()


@dataclass
class Outcome:
    """What became of one notebook's report."""

    notebook: Path
    html: Path | None = None
    no_code_html: Path | None = None
    executed: Path | None = None
    error: str | None = None
    seconds: float = 0.0
    parameters: dict[str, Any] = field(default_factory=dict)
    pictures_left: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the notebook ran to its end."""
        return self.error is None


async def _one(path: Path, out_dir: Path, parameters: Mapping[str, Any], timeout: int,
               say: Callable[[str], None], jobs: asyncio.Semaphore,
               env: Mapping[str, str] | None, pages: str) -> Outcome:
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    path = path.resolve()
    declared = declared_parameters(path)
    given = {k: v for k, v in parameters.items() if k in declared}
    outcome = Outcome(path, parameters=given)
    nb = load_notebook_node(str(path))  # as papermill reads it (every cell has its tags)
    # papermill's injected cell after the "parameters" one, and its record in the metadata
    if given:
        nb = parameterize_notebook(nb, given)
    async with jobs:
        start = time.perf_counter()
        # the kernel starts in the notebook's folder; no widget state: the page shows each
        # widget's static view instead of waiting for a widget manager from the web
        client = NotebookClient(nb, timeout=timeout, store_widget_state=False,
                                resources={"metadata": {"path": str(path.parent)}})
        try:
            # the kernel's environment: this process's, with a sandbox secret when it has one
            if env is None:
                await client.async_execute()
            else:
                await client.async_execute(env=dict(env))
        except CellExecutionError as err:
            outcome.error = f"{err.ename}: {str(err.evalue)[:300]}"
        except Exception as err:  # a kernel that died, a timeout: the other reports go on
            outcome.error = f"{type(err).__name__}: {str(err)[:300]}"
        outcome.seconds = time.perf_counter() - start

    def write() -> None:
        outcome.executed = out_dir / path.name
        nbformat.write(nb, outcome.executed)
        shrunk = lighter_pictures(nb)
        outcome.pictures_left = shrunk.left
        for left in shrunk.left:
            say(f"{path}: a picture of {left}; written as it was")
        for code, name in page_names(path.stem, pages).items():
            written = out_dir / name
            written.write_text(shared_styles(page(nb, path, code=code), out_dir),
                               encoding="utf-8")
            if code:
                outcome.html = written
            else:
                outcome.no_code_html = written

    await asyncio.to_thread(write)
    state = "executed" if outcome.ok else f"FAILED ({outcome.error})"
    written = " and ".join(str(p) for p in (outcome.html, outcome.no_code_html) if p)
    say(f"{path}: {state} in {outcome.seconds:.1f} s; written to {written}")
    return outcome


async def _all(notebooks: Sequence[Path], out_dir: Path, parameters: Mapping[str, Any],
               jobs: int, timeout: int, say: Callable[[str], None],
               env: Mapping[str, str] | None, pages: str) -> list[Outcome]:
    limit = asyncio.Semaphore(jobs)
    order = sorted(notebooks, key=lambda p: -_recorded_seconds(p))  # the longest first
    tasks = {p: asyncio.ensure_future(_one(p, out_dir, parameters, timeout, say, limit, env,
                                           pages))
             for p in order}
    await asyncio.gather(*tasks.values())
    return [tasks[p].result() for p in notebooks]


def run_reports(notebooks: Sequence[Path], out_dir: Path, *,
                parameters: Mapping[str, Any] | None = None, jobs: int = 2, timeout: int = 300,
                say: Callable[[str], None] | None = None, pages: str = "both") -> list[Outcome]:
    """Execute notebooks with their parameters and write each as a report.

    Parameters
    ----------
    notebooks : sequence of Path
        The notebooks (templates with a ``parameters`` cell).
    out_dir : Path
        Where the executed notebooks and their pages go (made if missing).
    parameters : mapping, optional
        Parameters by name; each notebook is given those its ``parameters`` cell declares.
    jobs : int
        Notebooks executed at once.
    timeout : int
        Seconds one cell may take.
    say : callable, optional
        Where progress lines go (the log otherwise).
    pages : {"both", "full", "no-code"}
        The pages each report is written as: the full report (``<name>.html``) and the report
        without code (``<name>-no-code.html``), or one of them.

    Returns
    -------
    list of Outcome
        One per notebook, in the order given.

    Raises
    ------
    ValidationError
        When ``pages`` is none of the three (before any notebook runs).
    """
    tell = say or logger.info
    page_names("report", pages)  # a pages word that names none: refused before any kernel
    out_dir.mkdir(parents=True, exist_ok=True)
    given = dict(parameters or {})
    env = None
    if not any(os.environ.get(v) for v in _CONFIGURED) and not given.get("cloud") \
            and not given.get("credential") and not os.environ.get("TOOLKIT_SANDBOX_SECRET"):
        # the notebooks answer from sandboxes of their own: a secret for this run, in the
        # kernels' environment (never this process's), lets the dask workers a notebook starts
        # sign in to its sandbox
        env = {**os.environ, "TOOLKIT_SANDBOX_SECRET": secrets.token_urlsafe(24)}
    return asyncio.run(_all(notebooks, out_dir.resolve(), given, max(1, jobs), timeout, tell,
                            env, pages))
