"""mark_sandbox: a chart of one's own says it shows the sandbox's numbers, as the helpers do."""

from __future__ import annotations

from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest

import toolkit.plot
from toolkit._core.errors import ValidationError
from toolkit._core.provenance import SANDBOX_MARK


def _marks(fig) -> list[Any]:
    return [t for t in fig.texts if t.get_gid() == "toolkit-sandbox-mark"]


def _frame(sandbox: bool) -> pd.DataFrame:
    df = pd.DataFrame({"service": ["Maps", "Maps", "SQL Database", "Backup"],
                       "name": ["a", "b", "c", "d"]})
    df.attrs["sandbox"] = sandbox
    return df


def test_a_pandas_chart_of_sandbox_data_is_marked_once_and_real_data_is_not() -> None:
    df = _frame(True)
    counts = df.groupby("service").size()  # pandas drops attrs here: name the frame drawn from
    assert counts.attrs == {}
    ax = counts.plot.barh(ax=plt.subplots(figsize=(6, 3))[1])
    assert toolkit.plot.mark_sandbox(ax, df) is ax
    toolkit.plot.mark_sandbox(ax, df[df["service"] == "Maps"])  # a selection keeps the flag
    assert [t.get_text() for t in _marks(ax.figure)] == [SANDBOX_MARK]
    real = _frame(False)
    ax = real.groupby("service").size().plot.barh(ax=plt.subplots()[1])
    assert toolkit.plot.mark_sandbox(ax, real) is ax and _marks(ax.figure) == []
    # any one frame of the sandbox among several marks the chart
    ax = real.groupby("service").size().plot.barh(ax=plt.subplots()[1])
    toolkit.plot.mark_sandbox(ax, real, _frame(True))
    assert len(_marks(ax.figure)) == 1
    plt.close("all")


def test_the_mark_covers_no_text_of_the_chart() -> None:
    df = _frame(True)
    counts = df.groupby("service").size().sort_values()
    ax = counts.plot.barh(ax=plt.subplots(figsize=(7, 4))[1],
                          title="Services with the most problem classifications")
    ax.set_xlabel("classifications")
    ax.figure.tight_layout()
    toolkit.plot.mark_sandbox(ax, df)
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    (mark,) = _marks(fig)
    box = mark.get_window_extent(renderer)
    texts = [ax.title, ax.xaxis.label, ax.yaxis.label,
             *ax.get_xticklabels(), *ax.get_yticklabels()]
    shown = [t.get_window_extent(renderer) for t in texts if t.get_visible() and t.get_text()]
    assert shown and not any(box.overlaps(other) for other in shown)
    assert box.x0 >= 0 and box.x1 <= fig.bbox.width and box.y0 >= 0  # inside the figure
    plt.close(fig)


def test_bad_input_is_refused_naming_the_parameter() -> None:
    ax = _frame(True).groupby("service").size().plot.barh(ax=plt.subplots()[1])
    with pytest.raises(ValidationError) as info:
        toolkit.plot.mark_sandbox(ax)
    assert info.value.parameter == "data" and "drawn from" in info.value.rule
    with pytest.raises(ValidationError) as info:
        toolkit.plot.mark_sandbox(_frame(True), ax)  # the arguments swapped
    assert info.value.parameter == "ax" and "Axes" in info.value.rule
    assert _marks(ax.figure) == []
    plt.close("all")
