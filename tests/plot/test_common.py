"""require_columns and new_axes: what every plot checks and draws on."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from toolkit._core.errors import ValidationError
from toolkit.plot._common import new_axes, require_columns


def test_require_columns_passes_a_frame_holding_them_through() -> None:
    df = pd.DataFrame({"a": [1], "b": [2]})
    assert require_columns(df, iter(["a", "b"]), "plot.x") is df


def test_require_columns_names_the_missing_ones_and_the_helper() -> None:
    with pytest.raises(ValidationError) as info:
        require_columns(pd.DataFrame({"a": [1]}), ["a", "b", "c"], "plot.x")
    assert info.value.parameter == "df"
    assert "plot.x" in info.value.rule and "['b', 'c']" in info.value.rule
    with pytest.raises(ValidationError, match="needs a DataFrame"):
        require_columns([{"a": 1}], ["a"], "plot.x")


def test_new_axes_keeps_the_given_axes_or_makes_a_figure_of_the_size() -> None:
    _, ax = plt.subplots()
    assert new_axes(ax) is ax
    made = new_axes(figsize=(5, 3))
    assert made is not ax and tuple(made.figure.get_size_inches()) == (5, 3)
    plt.close("all")
