"""The widgets in a real JupyterLab, driven by a headless Chromium: notebooks 02, 05 and 06 run
in one JupyterLab server; in each, a control of the widget is changed as a reader would (a
dropdown, a text box and Enter, a list and a button) and the widget's output follows.

Needs the system Chromium, the playwright package and jupyterlab (with the ipywidgets
extension, jupyterlab_widgets); skipped, saying which is missing, otherwise. Screenshots of each
step are written to the test's temporary directory.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import free_port, launch, missing, serving

ROOT = Path(__file__).parents[2]
NOTEBOOKS = ("02-policy-compliance.ipynb", "05-routes-and-traffic.ipynb",
             "06-air-quality.ipynb")
#: The longest wait for one notebook's cells to run (the three run in well under a minute).
RUN_TIMEOUT_MS = 120_000
#: The longest wait for a widget to answer a change.
ANSWER_TIMEOUT_MS = 60_000


_MISSING = missing(("jupyterlab", "jupyterlab"), ("jupyterlab_widgets", "jupyterlab_widgets"),
                   ("ipykernel", "ipykernel"))
# JupyterLab and Chromium, waits bounded in real time: in the real-time group (tests/conftest.py)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("real-time"),
              pytest.mark.skipif(_MISSING is not None, reason=str(_MISSING))]


def _notebook_copy(source: Path, target: Path) -> None:
    """The notebook without its outputs, so that every output seen comes from this run."""
    nb = json.loads(source.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
    nb.get("metadata", {}).pop("widgets", None)
    target.write_text(json.dumps(nb), encoding="utf-8")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One JupyterLab server on 127.0.0.1 (a free port, a token, no browser) over copies of
    the notebooks; stopped (with its kernels) when the module's tests are done."""
    home = tmp_path_factory.mktemp("lab")
    work = home / "notebooks"
    work.mkdir()
    for name in NOTEBOOKS:
        _notebook_copy(ROOT / "notebooks" / name, work / name)
    port, token = free_port(), secrets.token_hex(16)
    env = {**os.environ,
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "TOOLKIT_SANDBOX_NOW": os.environ.get("TOOLKIT_SANDBOX_NOW",
                                                 "2026-11-20T09:00:00Z"),
           "JUPYTER_CONFIG_DIR": str(home / "config"),
           "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
           "IPYTHONDIR": str(home / "ipython"),
           "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    base = f"http://127.0.0.1:{port}"
    args = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}", f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={work}", "--ServerApp.port_retries=0",
            "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=",
            f"--LabApp.workspaces_dir={home / 'workspaces'}",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.extension_manager=readonly",
            *(["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else [])]
    with serving(args, url=f"{base}/api/status?token={token}", env=env, cwd=work,
                 log=home / "server.log"):
        yield {"base": base, "token": token, "home": home}


@pytest.fixture(scope="module")
def browser(lab: dict[str, Any]) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = launch(p)
        try:
            yield chromium
        finally:
            chromium.close()


def _assert_draws(frame: Any) -> None:
    """The map in this ``<iframe>`` is drawn: Leaflet found (carried once in the notebook, never
    fetched) and its features on the map."""
    content = frame.element_handle().content_frame()
    assert content is not None
    content.wait_for_function(
        "() => window.L && document.querySelector('.leaflet-container')"
        " && document.querySelectorAll('path, canvas').length > 0", timeout=ANSWER_TIMEOUT_MS)


def _open_and_run(browser: Any, lab: dict[str, Any], name: str) -> Any:
    """A page with the notebook open in JupyterLab, all its cells run (waits for the kernel
    to finish: every cell has its execution count)."""
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.set_default_timeout(ANSWER_TIMEOUT_MS)
    # reset: a fresh workspace, with no tab of the notebooks opened before
    page.goto(f"{lab['base']}/lab/tree/{name}?reset&token={lab['token']}",
              timeout=ANSWER_TIMEOUT_MS)
    page.wait_for_function(
        "name => window.jupyterapp && window.jupyterapp.shell.currentWidget"
        " && window.jupyterapp.shell.currentWidget.context"
        " && window.jupyterapp.shell.currentWidget.context.path === name"
        " && window.jupyterapp.shell.currentWidget.sessionContext"
        " && window.jupyterapp.shell.currentWidget.sessionContext.session"
        " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel"
        " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status"
        " === 'idle'", arg=name, timeout=ANSWER_TIMEOUT_MS)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    try:
        _wait_for_all_cells(page)
    except Exception:  # a timeout: say which cells did not run
        _shot(page, lab, f"{name}-not-run")
        raise AssertionError(f"{name}: cells not run: {_cell_report(page)}") from None
    report = _cell_report(page)
    if report != "[]":
        _shot(page, lab, f"{name}-error")
    assert report == "[]", f"{name}: cells failed or not run: {report}"
    return page


def _cell_report(page: Any) -> str:
    """The cells that have not run, and any error outputs (for a failure message)."""
    return str(page.evaluate("""() => {
        const cells = window.jupyterapp.shell.currentWidget.content.model.cells;
        const out = [];
        for (let i = 0; i < cells.length; i++) {
            const c = cells.get(i);
            if (c.type !== 'code') continue;
            const errs = c.toJSON().outputs.filter(o => o.output_type === 'error')
                .map(o => o.ename + ': ' + o.evalue);
            if (!c.executionCount || errs.length) out.push([i, c.executionCount, errs]);
        }
        return JSON.stringify(out).slice(0, 3000);
    }"""))


def _wait_for_all_cells(page: Any) -> None:
    page.wait_for_function(
        """() => {
            const nb = window.jupyterapp.shell.currentWidget;
            const cells = nb.content.model.cells;
            for (let i = 0; i < cells.length; i++) {
                const c = cells.get(i);
                if (c.type !== 'code') continue;
                if (c.toJSON().outputs.some(o => o.output_type === 'error')) return true;
                if (!c.executionCount) return false;
            }
            return nb.sessionContext.session.kernel.status === 'idle';
        }""", timeout=RUN_TIMEOUT_MS, polling=500)


def _wait_idle(page: Any) -> None:
    """Wait for the notebook's kernel to have finished what it was asked (bounded)."""
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status"
        " === 'idle'", timeout=ANSWER_TIMEOUT_MS, polling=200)


def _selected(select: Any) -> str:
    """The label a dropdown shows (ipywidgets writes spaces as no-break spaces)."""
    return str(select.evaluate("s => s.options[s.selectedIndex].text")).replace("\xa0", " ")


def _shot(page: Any, lab: dict[str, Any], name: str) -> None:
    page.screenshot(path=str(lab["home"] / f"{name}.png"), full_page=False)


def test_the_compliance_explorer_follows_its_state_dropdown(lab, browser) -> None:
    from playwright.sync_api import expect

    page = _open_and_run(browser, lab, NOTEBOOKS[0])
    try:
        state = page.locator(".widget-dropdown:has(label:text-is('state')) select")
        state.wait_for()
        state.scroll_into_view_if_needed()
        # the first choice shows its label ("all states"), not a blank
        assert _selected(state) == "all states"
        status = page.locator(".widget-html:has-text(' records, ')").first
        before = status.inner_text()
        _shot(page, lab, "02-before")
        state.select_option(label="NonCompliant")
        expect(status).not_to_have_text(before, timeout=ANSWER_TIMEOUT_MS)
        after = status.inner_text()
        assert int(after.split()[0].replace(",", "")) < int(before.split()[0].replace(",", ""))
        _wait_idle(page)
        _shot(page, lab, "02-after")
    finally:
        page.close()


def _first_place(name: str) -> str:
    """The first of the places a notebook's ``parameters`` cell declares."""
    import ast

    import nbformat

    nb = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    for node in ast.parse(cell.source).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "places":
            return str(ast.literal_eval(node.value)[0])
    raise AssertionError(f"{name} declares no places")


def test_the_air_quality_explorer_shows_the_place_typed(lab, browser) -> None:
    from playwright.sync_api import expect

    page = _open_and_run(browser, lab, NOTEBOOKS[2])
    try:
        title = page.locator(".widget-html h2").first
        title.wait_for()
        title.scroll_into_view_if_needed()
        # the explorer opens on the first place of the notebook's parameters
        assert _first_place(NOTEBOOKS[2]) in title.inner_text()
        frame = page.locator(".widget-html iframe[title^='interactive map']").first
        box = frame.bounding_box()
        assert box is not None and box["height"] >= 300 and box["width"] >= 300
        _shot(page, lab, "06-before")
        name = page.locator(".widget-text:has(label:text-is('Place')) input")
        name.fill("Canillo")
        name.press("Enter")
        expect(title).to_contain_text("Canillo", timeout=ANSWER_TIMEOUT_MS)
        assert "Encamp" not in title.inner_text()
        picked = page.locator(".widget-dropdown:has(label:text-is('Pick')) select")
        page.wait_for_function("s => s.selectedIndex >= 0", arg=picked.element_handle())
        assert _selected(picked) == "Canillo"
        _wait_idle(page)
        # the map follows the one selected place too
        assert "Canillo" in (frame.get_attribute("srcdoc") or "")
        _assert_draws(frame)
        title.scroll_into_view_if_needed()
        _shot(page, lab, "06-after")
        frame.scroll_into_view_if_needed()
        _shot(page, lab, "06-after-map")
    finally:
        page.close()


def test_the_route_planner_plans_the_places_picked(lab, browser) -> None:
    page = _open_and_run(browser, lab, NOTEBOOKS[1])
    try:
        to_box = page.locator(".widget-text:has(label:text-is('To')) input")
        to_box.wait_for()
        to_box.scroll_into_view_if_needed()
        summary = page.locator(".widget-html:has(table)").last
        before = summary.inner_text() if summary.count() else ""
        to_box.fill("Canillo")
        choices = page.locator(".widget-select select").nth(1)
        page.wait_for_function("s => s.options.length > 0", arg=choices.element_handle())
        choices.select_option(index=0)
        page.locator("button:has-text('Plan route')").click()
        page.wait_for_function(
            "([old]) => [...document.querySelectorAll('.widget-html table')]"
            ".some(t => t.innerText !== old && t.innerText.includes('km'))", arg=[before])
        _wait_idle(page)
        frame = page.locator(".widget-html iframe[title^='interactive map']").last
        frame.wait_for()
        frame.scroll_into_view_if_needed()
        box = frame.bounding_box()
        assert box is not None and box["height"] >= 400
        _assert_draws(frame)
        # the notebook's own maps too: only the first carries Leaflet, all of them draw
        maps = page.locator(".jp-OutputArea-output iframe:not(.widget-html iframe)")
        assert maps.count() >= 2
        for i in range(maps.count()):
            maps.nth(i).scroll_into_view_if_needed()
            _assert_draws(maps.nth(i))
        _shot(page, lab, "05-after")
    finally:
        page.close()
