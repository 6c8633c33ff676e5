"""axe-core (Deque's WCAG engine) run in pages of the system Chromium: the documentation site
(tests/test_docs.py), the dashboards (tests/notebooks/test_dashboards.py), the report pages
(tests/report/test_accessible.py), a map's own page (tests/explore/test_describe.py).

The engine is the axe-core release package-lock.json pins, which ``make browser`` (and so
``make test``) installs with npm into node_modules/; where it is not installed, the older
release the axe-playwright-python package bundles. Both run the same rules (the pinned one
looks closer at some); the pinned one in well under half the time: its colour contrast rule,
most of what axe does on a page, no longer makes each colour an object of private fields.

A violation that counts is one axe rates *serious* or *critical* under the WCAG 2.0/2.1 A and AA
rules; each is reported by its page, its rule and the element (a CSS selector and its HTML).
"""

from __future__ import annotations

import contextlib
import functools
import http.server
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests import browser
from tests._core.loopback import listening

#: axe-core as package-lock.json pins it, once ``make browser`` has installed it.
PINNED = Path(__file__).resolve().parent.parent / "node_modules" / "axe-core" / "axe.min.js"
#: The rules run: WCAG 2.0 and 2.1, levels A and AA.
WCAG_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
#: The impacts that fail a page.
FAILING = ("serious", "critical")


def missing() -> str | None:
    """Why axe cannot run here (a sentence), or ``None``."""
    if PINNED.is_file():
        return browser.missing()
    return browser.missing(("axe_playwright_python", "axe-playwright-python"))


@functools.cache
def script() -> str:
    """axe-core's script: the pinned release where installed, else the bundled one."""
    if PINNED.is_file():
        return PINNED.read_text("utf-8")
    from axe_playwright_python.sync_playwright import Axe

    return str(Axe().axe_script)


def violations(page: Any, where: str, frame: Any = None) -> list[str]:
    """Run axe-core over the page's document (or one of its frames).

    Returns
    -------
    list of str
        One line per element of a serious or critical violation: ``where: rule (impact):
        selector: html``.
    """
    target = frame or page
    target.evaluate(script())
    result = target.evaluate(
        "options => axe.run(document, options)",
        {"resultTypes": ["violations"], "iframes": False,
         "runOnly": {"type": "tag", "values": WCAG_AA}})
    out = []
    for violation in result["violations"]:
        if violation.get("impact") not in FAILING:
            continue
        for node in violation["nodes"]:
            snippet = " ".join(node.get("html", "").split())[:160]
            out.append(f"{where}: {violation['id']} ({violation['impact']}): "
                       f"{', '.join(map(str, node['target']))}: {snippet}")
    return out


@contextlib.contextmanager
def served(folder: Path) -> Iterator[str]:
    """Serve a folder over HTTP on 127.0.0.1 (a free port) while the block runs: its base URL."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    with listening(functools.partial(Quiet, directory=str(folder))) as url:
        yield f"{url}/"
