"""progress_bar: a bar only when the connection's settings allow it and the work is long enough
(counted as it happens when the total is unknown), written to stderr and removed when done."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

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


def test_a_known_long_total_shows_a_bar_from_the_first_step(capsys) -> None:
    bar = progress_bar(_conn(), desc="routes", total=6, unit="batch")
    bar.update()
    assert "routes" in capsys.readouterr().err
    _run(bar, 5)
    assert bar._bar.n == bar._bar.total == 6
    bar.close()


def test_an_unknown_total_shows_a_bar_once_it_reaches_the_minimum(capsys) -> None:
    bar = progress_bar(_conn(progress_min=5), desc="pages")
    _run(bar, 4)
    assert capsys.readouterr().err == ""
    bar.update()
    assert "pages: 4request" in capsys.readouterr().err  # drawn from the steps already done
    assert bar._bar.n == 5 and bar._bar.total is None
    bar.close()
