"""The documentation site: it builds strictly and offline (no warning, no broken link), its API
reference holds every public name, the notebooks are rendered with their outputs, every page
meets WCAG 2.1 AA as axe-core checks it in Chromium, and the README points at pages that exist
and names the command CI runs."""

from __future__ import annotations

import ast
import inspect
import json
import os
import re
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

import toolkit
import toolkit.explore
import toolkit.plot
import toolkit.sandbox
import toolkit.widgets

ROOT = Path(__file__).parent.parent

pytestmark = pytest.mark.slow  # the site built, or the pages written, then axe in Chromium
DOCS = ROOT / "docs"


def _public_names() -> set[str]:
    """Every public name: the package's and those of its plots, maps, widgets and sandbox."""
    names = {f"toolkit.{n}" for n in toolkit.__all__}
    for package in (toolkit.plot, toolkit.explore, toolkit.widgets, toolkit.sandbox):
        names |= {f"{package.__name__}.{n}" for n in package.__all__}
    return names


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    for module in ("mkdocs", "material", "mkdocstrings_handlers.python", "mkdocs_jupyter"):
        pytest.importorskip(module, reason="the docs extra is not installed "
                                           "(pip install -e '.[docs]')")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
                           cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert build.returncode == 0, build.stdout + build.stderr
    warnings = [line for line in (build.stdout + build.stderr).splitlines()
                if line.startswith(("WARNING", "ERROR"))]
    assert warnings == []
    return out


def _inventory(site: Path) -> set[str]:
    """The object names of the site's inventory (objects.inv, Sphinx's format)."""
    data = (site / "objects.inv").read_bytes()
    header_end = 0
    for _ in range(4):  # four header lines, then the zlib-compressed entries
        header_end = data.index(b"\n", header_end) + 1
    body = zlib.decompress(data[header_end:]).decode("utf-8")
    return {line.split(" ", 1)[0] for line in body.splitlines() if line}


def test_every_public_name_is_in_the_reference(site: Path) -> None:
    missing = sorted(_public_names() - _inventory(site))
    assert missing == [], f"public names missing from docs/reference: {missing}"


def test_the_public_functions_render_their_documented_parameters(site: Path) -> None:
    page = (site / "reference" / "resource-management" / "index.html").read_text("utf-8")
    start = page.index('id="toolkit.policy_states"')
    section = page[start:page.index('id="toolkit.policy_summary"', start)]
    # the numpydoc Parameters section, rendered as a table with a row per parameter
    rows = re.findall(r'<tr class="doc-section-item">\s*<td>\s*<code>(\w+)</code>', section)
    names = [p for p in inspect.signature(toolkit.policy_states).parameters]
    assert rows[:len(names)] == names


def test_the_reference_shows_no_sphinx_role_markup(site: Path) -> None:
    # the docstrings' :func:`...` and :class:`...` roles are shown as code, not as markup
    for page in sorted((site / "reference").glob("*/index.html")):
        assert not re.search(r":(func|class|meth|attr|mod|data|exc):", page.read_text("utf-8")), \
            page


def test_every_notebook_is_rendered_with_its_outputs(site: Path) -> None:
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks
    for nb in notebooks:
        page = site / "notebooks" / nb.stem / "index.html"
        assert page.is_file(), nb.name
        html = page.read_text("utf-8")
        assert "jp-OutputArea-output" in html, f"{nb.name} rendered without outputs"


def test_the_site_loads_nothing_from_the_network(site: Path) -> None:
    # no web fonts, stylesheets or scripts from elsewhere: the pages read offline (a canonical
    # link names the published address and loads nothing)
    pages = [site / "index.html", site / "reference" / "maps" / "index.html",
             *sorted((site / "notebooks").glob("*/index.html"))]
    for page in pages:
        html = page.read_text("utf-8")
        loads = re.findall(r'<script[^>]+src="https?://[^"]*"', html) + [
            tag for tag in re.findall(r'<link[^>]+href="https?://[^"]*"[^>]*>', html)
            if 'rel="canonical"' not in tag]
        assert loads == [], page


def _nav_pages() -> list[str]:
    """Every page of the site's navigation, as its address under the site (``""`` the home)."""
    import yaml

    def walk(entry: object) -> list[str]:
        if isinstance(entry, str):
            return [entry]
        if isinstance(entry, dict):
            return [f for value in entry.values() for f in walk(value)]
        if isinstance(entry, list):
            return [f for item in entry for f in walk(item)]
        return []

    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))["nav"]
    out = []
    for source in walk(nav):
        stem = source.rsplit(".", 1)[0]
        out.append("" if stem == "index" else stem.removesuffix("/index") + "/")
    return out


@pytest.fixture(scope="module")
def browser_page(site: Path) -> Any:
    """A Chromium page (the system's) and the base address the built site is served at."""
    from tests import axe
    from tests.browser import launch

    if axe.missing():
        pytest.skip(axe.missing())
    from playwright.sync_api import sync_playwright

    # The theme's search reads the whole site's index (about 1 MB of text) into a worker on
    # every page it opens; the page shows the same once the worker is ready with an index
    # of no pages (the site's own index settings): what a reader's browser shows a moment
    # after the page opens, where with the whole index axe raced the worker
    index = json.loads((site / "search" / "search_index.json").read_text("utf-8"))
    no_pages = json.dumps({"config": index["config"], "docs": []})
    with axe.served(site) as base, sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.route(base + "search/search_index.json",
                       lambda route: route.fulfill(body=no_pages,
                                                   content_type="application/json"))
            yield page, base
        finally:
            browser.close()


def test_the_accessibility_check_covers_every_page(site: Path) -> None:
    built = {p.relative_to(site).parent.as_posix() for p in site.rglob("index.html")}
    built = {"" if b == "." else f"{b}/" for b in built} - {"404/"}
    assert built == set(_nav_pages())


@pytest.mark.parametrize("address", _nav_pages())
def test_no_page_has_a_serious_accessibility_violation(browser_page: Any, address: str) -> None:
    # axe-core over the page as a reader's browser shows it (the theme's scripts run), in the
    # light scheme the site opens in: contrast, names, keyboard reach, landmarks...
    from tests import axe

    page, base = browser_page
    page.goto(base + address, wait_until="load")
    found = axe.violations(page, address or "index")
    assert found == [], "\n".join(found[:60])


def test_the_accessibility_check_finds_what_it_looks_for(browser_page: Any) -> None:
    # the engine the pages are checked with (tests/axe.py) reports a page that fails: faint
    # text (serious) and a picture without a text alternative (critical), and nothing milder
    from tests import axe

    page, _ = browser_page
    page.set_content("<!DOCTYPE html><html lang='en'><head><title>A failing page</title></head>"
                     "<body><main><h1>Failing</h1><p style='color:#c8c8c8'>faint text</p>"
                     "<img src='data:image/gif;base64,R0lGODlhAQABAAAAACw='></main></body>"
                     "</html>")
    found = axe.violations(page, "failing")
    assert {line.split(": ")[1] for line in found} == {"color-contrast (serious)",
                                                       "image-alt (critical)"}, found


def test_the_accessibility_hook_names_cells_tables_frames_and_search() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "accessibility", DOCS / "extensions" / "accessibility.py")
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    page = ('<div class="md-search" data-md-component="search" role="dialog">'
            '<div class="highlight-ipynb hl-python"><pre>a</pre></div>'
            '<div class="highlight-ipynb hl-python" tabindex="-1"><pre>b</pre></div>'
            "<table><tr><td><table class='x'></table></td></tr></table><table></table>"
            "<iframe srcdoc='x'></iframe><iframe title=\"interactive map: 3 routes\"></iframe>")
    out = hook.on_post_page(page)
    assert 'role="dialog" aria-label="Search"' in out
    assert ('<div class="highlight-ipynb hl-python" tabindex="0" role="region" '
            'aria-label="Code cell 1">') in out
    assert 'tabindex="-1"' in out and "Code cell 2" not in out  # one of its own: kept
    assert out.count('class="toolkit-table"') == 2 and 'aria-label="Table 2"' in out
    assert "<table class='x'></table></td></tr></table></div>" in out  # the nested one: as is
    assert '<iframe title="interactive map" srcdoc=' in out
    assert 'title="interactive map: 3 routes"' in out
    assert hook.on_post_page(out) == out  # once


def test_a_notebooks_pictures_get_the_alt_text_of_their_outputs(tmp_path: Path) -> None:
    import importlib.util
    from types import SimpleNamespace

    import nbformat

    spec = importlib.util.spec_from_file_location(
        "accessibility", DOCS / "extensions" / "accessibility.py")
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x", outputs=[
        nbformat.v4.new_output("display_data", data={"image/png": "AAAA\nBBBB"},
                               metadata={"image/png": {"alt": 'Health: 2 up, 1 "down" <b>'}}),
        nbformat.v4.new_output("display_data", data={"image/png": "CCCC"})])]
    source = tmp_path / "n.ipynb"
    nbformat.write(nb, source)
    page = SimpleNamespace(file=SimpleNamespace(abs_src_path=str(source)))
    none = "No description has been provided for this image"
    html = (f'<img alt="{none}" class="" src="data:image/png;base64,AAAABBBB"/>'
            f'<img alt="{none}" class="" src="data:image/png;base64,CCCC"/>')
    out = hook.on_post_page(html, page)
    assert ('<img alt="Health: 2 up, 1 &quot;down&quot; &lt;b&gt;" class="" '
            'src="data:image/png;base64,AAAABBBB"/>') in out
    assert f'<img alt="{none}" class="" src="data:image/png;base64,CCCC"/>' in out  # none given


def _documented_signatures() -> list[tuple[str, str]]:
    """``name(parameters)`` as the operations page writes each function in its table."""
    text = (DOCS / "operations.md").read_text("utf-8")
    rows = [line for line in text.splitlines() if line.startswith("|")]
    return re.findall(r"`(\w+)\(([^`]*)\)`", "\n".join(rows))


def _split_parameters(text: str) -> list[str]:
    out, depth, current = [], 0, ""
    for char in text:
        depth += char in "([{"
        depth -= char in ")]}"
        if char == "," and depth == 0:
            out.append(current.strip())
            current = ""
        else:
            current += char
    return [p for p in [*out, current.strip()] if p]


def test_the_operations_table_gives_each_signature_as_the_code_has_it() -> None:
    documented = _documented_signatures()
    assert len(documented) >= 30
    wrong = {}
    for name, text in documented:
        # api_version= and connection= are named once for all, under the table
        actual = [p for p in inspect.signature(getattr(toolkit, name)).parameters.values()
                  if p.name not in ("api_version", "connection")]
        expected = []
        for param in actual:
            if param.kind is param.KEYWORD_ONLY and "*" not in expected:
                expected.append("*")
            default = "" if param.default is param.empty else f"={param.default!r}"
            expected.append(f"{param.name}{default}")
        written = []
        for part in _split_parameters(text):
            key, eq, default = part.partition("=")
            written.append(f"{key}={ast.literal_eval(default)!r}" if eq else key)
        if written != expected:
            wrong[name] = {"written": written, "code": expected}
    assert wrong == {}


def test_the_settings_table_names_every_setting_and_variable() -> None:
    import dataclasses

    from toolkit.connection import Settings

    text = (DOCS / "connecting.md").read_text("utf-8")
    keywords = set(re.findall(r"^\|[^|]*\| `(\w+)", text, re.MULTILINE))
    assert {f.name for f in dataclasses.fields(Settings)} - keywords == set()
    # every environment variable the package reads is documented somewhere on the site
    read = set()
    for module in (ROOT / "toolkit").rglob("*.py"):
        read |= set(re.findall(r"[\"'](TOOLKIT_[A-Z_]+)[\"']", module.read_text("utf-8")))
    documented = set()
    for page in DOCS.glob("*.md"):
        documented |= set(re.findall(r"TOOLKIT_[A-Z_]+", page.read_text("utf-8")))
    assert read
    assert read - documented == set()


def test_getting_started_lists_every_extra() -> None:
    import tomllib

    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
                 ["project"]["optional-dependencies"])
    text = (DOCS / "getting-started.md").read_text("utf-8")
    listed = set(re.findall(r"^\| `([\w-]+)` \|", text, re.MULTILINE))
    assert listed == extras


def test_the_readme_links_to_pages_that_exist() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    links = [link for link in re.findall(r"\]\(([^)#]+)", readme)
             if not link.startswith(("http://", "https://"))]
    assert [link for link in links if link.startswith("docs/")], \
        "the README points at no documentation page"
    assert [link for link in links if not (ROOT / link).exists()] == []


def test_the_readme_names_the_command_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    commands = [line for line in ci.splitlines()
                if line.strip() and not line.startswith(("#", "set ", "cd "))]
    assert commands == ["make test"]
    readme = (ROOT / "README.md").read_text("utf-8")
    assert re.search(r"^make test\b", readme, re.MULTILINE)
