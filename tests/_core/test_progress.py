"""progress_bar: a bar only when the connection's settings allow it and the work is long enough
(counted as it happens when the total is unknown), written to stderr and removed when done."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from toolkit._core import progress
from toolkit._core.progress import progress_bar


def _conn(progress: bool = True, progress_min: int = 5) -> SimpleNamespace:
    return SimpleNamespace(settings=SimpleNamespace(progress=progress, progress_min=progress_min))


def _run(bar, steps: int) -> None:
    for _ in range(steps):
        bar.update()


@pytest.mark.parametrize("connection, total", [
    (_conn(progress=False), 100),   # switched off
    (_conn(), 4),                   # known to be shorter than progress_min
    (object(), 100),                # no settings at all
])
def test_no_bar(capsys, connection, total) -> None:
    bar = progress_bar(connection, desc="pages", total=total)
    _run(bar, total)
    bar.close()
    assert capsys.readouterr().err == ""


@pytest.fixture
def terminal(monkeypatch) -> None:
    """stderr taken for a terminal (capsys's is not one)."""
    monkeypatch.setattr(progress, "bar_kind", lambda: "terminal")


def test_a_known_long_total_shows_a_bar_from_the_first_step(capsys, terminal) -> None:
    bar = progress_bar(_conn(), desc="routes", total=6, unit="batch")
    bar.update()
    assert "routes" in capsys.readouterr().err
    _run(bar, 5)
    assert bar._bar.n == bar._bar.total == 6
    bar.close()


def test_an_unknown_total_shows_a_bar_once_it_reaches_the_minimum(capsys, terminal) -> None:
    bar = progress_bar(_conn(progress_min=5), desc="pages")
    _run(bar, 4)
    assert capsys.readouterr().err == ""
    bar.update()
    assert "pages: 4request" in capsys.readouterr().err  # drawn from the steps already done
    assert bar._bar.n == 5 and bar._bar.total is None
    bar.close()


_TO_A_FILE = """
import sys
from types import SimpleNamespace
from toolkit._core.progress import progress_bar
conn = SimpleNamespace(settings=SimpleNamespace(progress=True, progress_min=5))
for total in (40, None):
    bar = progress_bar(conn, desc="policy_states", total=total, unit="page")
    for _ in range(40):
        bar.update()
    bar.close()
"""


def test_where_stderr_is_a_file_progress_is_plain_lines(tmp_path) -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    log = tmp_path / "job.log"
    root = Path(__file__).resolve().parents[2]
    with log.open("w") as err:
        subprocess.run([sys.executable, "-c", _TO_A_FILE], stderr=err, check=True, timeout=60,
                       env={**os.environ, "PYTHONPATH": str(root)})
    text = log.read_text()
    assert "\x1b[" not in text and "\r" not in text
    lines = text.splitlines()
    assert len(lines) == 4, text  # a start and an end line for each piece of work
    assert lines[0] == "policy_states: started (40 pages)" and lines[2].endswith("started")
    assert lines[1].startswith("policy_states: 40 pages done in ")
    assert lines[3].startswith("policy_states: 40 pages done in ")


def test_a_notebook_without_ipywidgets_gets_the_text_bar_quietly(monkeypatch, capsys) -> None:
    import sys
    import warnings

    from tqdm.std import tqdm as text_tqdm

    monkeypatch.setattr(progress, "_in_notebook", lambda: True)
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # importing it fails
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        bar = progress_bar(_conn(), desc="routes", total=6, unit="batch")
        _run(bar, 6)
        assert type(bar._bar) is text_tqdm
        bar.close()
    assert [str(w.message) for w in seen] == []
    assert "routes" in capsys.readouterr().err


def test_a_notebook_with_ipywidgets_gets_the_widget_bar(monkeypatch) -> None:
    pytest.importorskip("ipywidgets")
    from tqdm.notebook import tqdm as notebook_tqdm

    monkeypatch.setattr(progress, "_in_notebook", lambda: True)
    assert progress.bar_kind() == "notebook"
    assert progress._tqdm_class("notebook") is notebook_tqdm
