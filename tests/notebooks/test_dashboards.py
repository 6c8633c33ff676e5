"""The dashboards (dashboards/*.ipynb) served by Voilà, driven by a headless Chromium: one Voilà
server for the three; in each, the page renders, a control is changed as a reader would (a
dropdown, a text box and Enter, two lists and a button) and the output follows; every request
the page makes goes to this machine (127.0.0.1), and axe-core finds no serious or critical
violation in what it shows.

Needs the system Chromium, playwright, axe-playwright-python and voila (the ``dashboard`` extra);
skipped, saying which is missing, otherwise. Screenshots are written to the test's temporary
directory.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import axe
from tests.browser import free_port, launch, serving

ROOT = Path(__file__).parents[2]
DASHBOARDS = ROOT / "dashboards"
#: The longest wait for a dashboard to render, and for it to answer a change.
RENDER_TIMEOUT_MS = 120_000
ANSWER_TIMEOUT_MS = 60_000
#: Settings that would point the dashboards away from the sandbox.
_UNSET = ("TOOLKIT_BASE_URL", "TOOLKIT_ARM_URL", "TOOLKIT_MAPS_URL", "TOOLKIT_GRAPH_URL",
          "TOOLKIT_FABRIC_URL", "TOOLKIT_TOKEN", "TOOLKIT_MAPS_KEY", "TOOLKIT_CREDENTIAL",
          "TOOLKIT_CLOUD")
#: Addresses a page may load from: this machine, and what a page makes itself.
LOCAL = ("http://127.0.0.1:", "ws://127.0.0.1:", "data:", "blob:", "about:")


def _missing() -> str | None:
    if importlib.util.find_spec("voila") is None:
        return "needs voila (pip install -e '.[dashboard]')"
    return axe.missing()


pytestmark = [pytest.mark.slow, pytest.mark.skipif(_missing() is not None, reason=str(_missing()))]


@pytest.fixture(scope="module")
def voila(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One Voilà server on 127.0.0.1 over dashboards/, as `make dashboard` starts it; stopped
    (with its kernels) when the module's tests are done."""
    home = tmp_path_factory.mktemp("voila")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in _UNSET}
    env.update({
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "JUPYTER_PATH": str(DASHBOARDS),  # its template (offline), as the Makefile gives it
        "TOOLKIT_SANDBOX_NOW": os.environ.get("TOOLKIT_SANDBOX_NOW", "2026-11-20T09:00:00Z"),
        "JUPYTER_CONFIG_DIR": str(home / "config"), "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "IPYTHONDIR": str(home / "ipython"),
        "MPLBACKEND": "module://matplotlib_inline.backend_inline"})
    base = f"http://127.0.0.1:{port}/"
    with serving([sys.executable, "-m", "voila", "--no-browser", "--Voila.ip=127.0.0.1",
                  f"--port={port}", "--Voila.port_retries=0", "--template=offline",
                  str(DASHBOARDS)], url=base, env=env, cwd=DASHBOARDS, log=home / "server.log"):
        yield {"base": base, "home": home}


@pytest.fixture(scope="module")
def browser(voila: dict[str, Any]) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = launch(p)
        try:
            yield chromium
        finally:
            chromium.close()


@contextlib.contextmanager
def _dashboard(browser: Any, voila: dict[str, Any], name: str) -> Iterator[Any]:
    """The dashboard rendered in a new page; on leaving, what it asked of the network is
    checked (this machine only) and axe-core is run over what it shows."""
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.set_default_timeout(ANSWER_TIMEOUT_MS)
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.on("websocket", lambda socket: asked.append(socket.url))
    try:
        page.goto(f"{voila['base']}voila/render/{name}.ipynb", timeout=RENDER_TIMEOUT_MS)
        page.wait_for_selector(".widget-vbox", timeout=RENDER_TIMEOUT_MS)
        assert page.locator(".jupyter-widgets-error-widget").count() == 0
        yield page
        page.screenshot(path=str(voila["home"] / f"{name}.png"), full_page=True)
        assert asked and [u for u in asked if not u.startswith(LOCAL)] == []
        assert page.locator(".jupyter-widgets-error-widget").count() == 0
        found = axe.violations(page, name)
        assert found == [], "\n".join(found)
    finally:
        page.close()


def test_the_compliance_dashboard_follows_its_state_dropdown(voila, browser) -> None:
    from playwright.sync_api import expect

    with _dashboard(browser, voila, "compliance") as page:
        state = page.locator(".widget-dropdown:has(label:text-is('state')) select")
        status = page.locator(".widget-html:has-text(' records, ')").first
        expect(status).to_be_visible()
        before = status.inner_text()
        assert page.locator(".widget-html img[alt^='Compliance by policy assignment: ']") \
            .count() == 1
        state.focus()  # from the keyboard: the dropdown takes the choice typed
        state.select_option(label="NonCompliant")
        expect(status).not_to_have_text(before, timeout=ANSWER_TIMEOUT_MS)
        after = status.inner_text()
        assert int(after.split()[0].replace(",", "")) < int(before.split()[0].replace(",", ""))


def test_the_air_quality_dashboard_shows_the_place_typed(voila, browser) -> None:
    from playwright.sync_api import expect

    with _dashboard(browser, voila, "air-quality") as page:
        name = page.locator(".widget-text:has(label:text-is('Place')) input")
        name.focus()
        page.keyboard.type("Canillo")
        page.keyboard.press("Enter")
        title = page.locator(".widget-html h2").first
        expect(title).to_contain_text("Canillo", timeout=ANSWER_TIMEOUT_MS)
        picture = page.locator(".widget-html img[alt^='Canillo: pollutants now: ']")
        expect(picture).to_have_count(1)
        frame = page.locator(".widget-html iframe[title^='interactive map: air quality']")
        expect(frame).to_have_count(1)


def test_the_routes_dashboard_plans_the_places_picked(voila, browser) -> None:
    with _dashboard(browser, voila, "routes") as page:
        for box, text in (("From", "Andorra la V"), ("To", "Canillo")):
            page.locator(f".widget-text:has(label:text-is('{box}')) input").fill(text)
        lists = page.locator(".widget-select select")
        for i in range(2):
            page.wait_for_function("s => s.options.length > 0",
                                   arg=lists.nth(i).element_handle())
            lists.nth(i).select_option(index=0)
        page.locator("button:has-text('Plan route')").click()
        page.wait_for_function(
            "() => [...document.querySelectorAll('.widget-html table')]"
            ".some(t => t.innerText.includes('km'))", timeout=ANSWER_TIMEOUT_MS)
        frame = page.locator(".widget-html iframe[title^='interactive map: ']")
        frame.wait_for()
        content = frame.element_handle().content_frame()
        assert content is not None
        content.wait_for_function(  # the map drawn: Leaflet carried in the page, not fetched
            "() => window.L && document.querySelectorAll('path, canvas').length > 0",
            timeout=ANSWER_TIMEOUT_MS)
