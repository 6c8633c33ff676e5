"""The report run: papermill executes each notebook with the parameters it declares, keeps the
executed notebook beside its page, and writes every other report when one notebook fails or
holds a picture it cannot make lighter."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import nbformat
import pytest

from tests.report.test_pages import _huge_png_header
from toolkit.report.run import curated_notebooks, declared_parameters, run_reports

pytest.importorskip("papermill")

ROOT = Path(__file__).resolve().parents[2]


def _write(path: Path, *sources: str, parameters: str | None = None) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    if parameters is not None:
        cell = nbformat.v4.new_code_cell(parameters)
        cell.metadata["tags"] = ["parameters"]
        nb.cells.append(cell)
    nb.cells += [nbformat.v4.new_code_cell(s) for s in sources]
    nbformat.write(nb, path)
    return path


def test_each_report_is_written_whatever_another_one_does(tmp_path) -> None:
    huge = base64.b64encode(_huge_png_header()).decode()
    not_png = base64.b64encode(b"not a picture").decode()
    odd = _write(tmp_path / "odd.ipynb",
                 "from IPython.display import display\n"
                 f"display({{'image/png': {not_png!r}, 'text/plain': 'a'}}, raw=True)\n"
                 f"display({{'image/png': {huge!r}, 'text/plain': 'b'}}, raw=True)\n"
                 "print('the odd one went on')")
    told = _write(tmp_path / "told.ipynb", "print(f'scope: {subscriptions}, day {day}')",
                  parameters="subscriptions = None\nday = None")
    fails = _write(tmp_path / "fails.ipynb", "raise RuntimeError('a service said no')")
    lines: list[str] = []
    out = tmp_path / "reports"
    outcomes = run_reports([odd, told, fails], out, jobs=2, timeout=120, say=lines.append,
                           parameters={"subscriptions": ["sub-a", "sub-b"], "places": ["x"]})
    assert [o.notebook.name for o in outcomes] == ["odd.ipynb", "told.ipynb", "fails.ipynb"]
    for name in ("odd", "told", "fails"):
        assert (out / f"{name}.html").is_file() and (out / f"{name}.ipynb").is_file()
        assert (out / f"{name}-no-code.html").is_file()  # both pages by default
    first, second, third = outcomes
    assert [o.no_code_html for o in outcomes] == [out / f"{n}-no-code.html"
                                                  for n in ("odd", "told", "fails")]
    # the failed one's page without code says what failed, without the traceback's code
    def text(page: Path) -> str:
        return re.sub(r"<[^>]+>", "", page.read_text())

    bare = text(third.no_code_html or out)
    assert "RuntimeError: a service said no" in bare and "raise RuntimeError" not in bare
    assert "raise RuntimeError" in text(out / "fails.html")
    assert first.ok and second.ok and not third.ok
    assert "RuntimeError" in (third.error or "") and "a service said no" in (third.error or "")
    assert first.pictures_left[0] == "code cell 1: not a PNG picture"
    assert first.pictures_left[1].startswith("code cell 1: 30000×30000 pixels")
    assert any("odd.ipynb: a picture of code cell 1: 30000×30000" in line for line in lines)
    assert "the odd one went on" in (out / "odd.html").read_text()
    # only the parameters a notebook declares reach it, in papermill's injected cell
    assert second.parameters == {"subscriptions": ["sub-a", "sub-b"]}
    executed = nbformat.read(out / "told.ipynb", as_version=4)
    injected = [c for c in executed.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert len(injected) == 1 and "places" not in injected[0].source
    assert "scope: ['sub-a', 'sub-b'], day None" in json.dumps(executed.cells[-1].outputs)
    assert "scope: [&#x27;sub-a&#x27;, &#x27;sub-b&#x27;]" in (out / "told.html").read_text() \
        or "scope: ['sub-a', 'sub-b']" in (out / "told.html").read_text()


def test_the_curated_notebooks_are_found_and_each_declares_its_parameters() -> None:
    found = curated_notebooks()
    assert [p.name for p in found] == sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    # the reports about a day (compliance, routes, air) take it; the others are about now
    dated = {"02-policy-compliance", "05-routes-and-traffic", "06-air-quality",
             "08-tenant-compliance"}
    for path in found:
        declared = declared_parameters(path)
        assert {"cloud", "credential"} <= set(declared), path.name
        assert ("day" in declared) == (path.stem in dated), path.name
        # with none given, each tells the sandbox's story: every default is None or a value
        # of the story, never a read of the machine's clock or environment
        assert all("os.environ" not in str(v) and "now(" not in str(v)
                   for v in declared.values()), path.name


def test_own_sandboxes_get_a_secret_in_the_kernels_not_in_this_process(tmp_path,
                                                                       monkeypatch) -> None:
    for name in ("TOOLKIT_SANDBOX_SECRET", "TOOLKIT_CLOUD", "TOOLKIT_BASE_URL", "TOOLKIT_TOKEN",
                 "TOOLKIT_CREDENTIAL", "TOOLKIT_MAPS_KEY"):
        monkeypatch.delenv(name, raising=False)
    probe = _write(tmp_path / "probe.ipynb",
                   "import os\nprint('secret' if os.environ.get('TOOLKIT_SANDBOX_SECRET') "
                   "else 'none')")
    [done] = run_reports([probe], tmp_path / "out", jobs=1, timeout=120, say=lambda _: None)
    assert done.ok
    executed = nbformat.read(tmp_path / "out" / "probe.ipynb", as_version=4)
    assert "secret" in json.dumps(executed.cells[-1].outputs)
    import os

    assert "TOOLKIT_SANDBOX_SECRET" not in os.environ
    # a cloud named: the kernels are the user's, with nothing of the sandbox added
    [done] = run_reports([probe], tmp_path / "out2", jobs=1, timeout=120, say=lambda _: None,
                         parameters={"cloud": "public"})
    executed = nbformat.read(tmp_path / "out2" / "probe.ipynb", as_version=4)
    assert "none" in json.dumps(executed.cells[-1].outputs)


def test_the_pages_asked_for_are_written(tmp_path) -> None:
    from toolkit import ValidationError

    probe = _write(tmp_path / "probe.ipynb", "# a comment\nprint('the answer: 42')")
    [done] = run_reports([probe], tmp_path / "out", jobs=1, timeout=120, say=lambda _: None,
                         pages="no-code")
    assert done.ok and done.html is None and done.no_code_html == tmp_path / "out" / \
        "probe-no-code.html"
    assert sorted(p.name for p in (tmp_path / "out").glob("*.html")) == ["probe-no-code.html"]
    page = re.sub(r"<[^>]+>", "", done.no_code_html.read_text())
    assert "the answer: 42" in page and "print(" not in page and "a comment" not in page
    with pytest.raises(ValidationError, match="pages="):
        run_reports([probe], tmp_path / "never", pages="summary")
    assert not (tmp_path / "never").exists()  # refused before anything was made
