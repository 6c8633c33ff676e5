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


# --------------------------------------------------------------------------------------------
# the sandbox mark: plots of invented data say so on their face


def _marks(fig) -> list[str]:
    return [t.get_text() for t in fig.texts if t.get_gid() == "toolkit-sandbox-mark"]


def test_every_plot_helper_marks_the_sandboxs_frames() -> None:
    import toolkit.plot

    # the mark itself and the descriptions, for charts of one's own, draw no chart
    for name in set(toolkit.plot.__all__) - {"mark_sandbox", "describe", "set_description",
                                              "output_alt"}:
        helper = getattr(toolkit.plot, name)
        assert helper.__code__.co_qualname == "marks_sandbox.<locals>.plotted", name


def test_a_sandbox_frame_is_marked_and_a_real_one_is_not(sandbox, conn, tmp_path) -> None:
    import toolkit
    from toolkit._core.provenance import SANDBOX_MARK

    # (the connection records the backend health operation's polling waits, not sleeping)
    gw = sandbox.catalog().query("kind == 'application_gateway'").iloc[0]
    health = toolkit.backend_health(gw.subscription_id, gw.resource_group, gw["name"],
                                    connection=conn)
    sub = sandbox.catalog().query("kind == 'subscription'").iloc[0].subscription_id
    states = toolkit.policy_states(sub, "rg-web-weu", connection=conn)
    assert health.attrs["sandbox"] is True
    ax = toolkit.plot.backend_health(health)
    assert _marks(ax.figure) == [SANDBOX_MARK]
    ax.figure.savefig(tmp_path / "health.png")  # drawn without error, the mark inside
    trend = toolkit.compliance_trend(states)  # a derived frame keeps the flag
    fig, (left, right) = plt.subplots(1, 2)
    toolkit.plot.compliance_trend(trend, ax=left)
    toolkit.plot.compliance_by(toolkit.compliance_summary(states), ax=right)
    assert _marks(fig) == [SANDBOX_MARK]  # once per figure
    real = health.copy()
    real.attrs["sandbox"] = False
    assert _marks(toolkit.plot.backend_health(real).figure) == []
    plt.close("all")


def test_an_axes_in_a_subfigure_marks_the_whole_figure_once() -> None:
    from toolkit._core.provenance import SANDBOX_MARK
    from toolkit.plot._common import mark_figure, root_figure

    fig = plt.figure(layout="constrained")
    left, right = fig.subfigures(1, 2)
    ax = left.subplots()
    assert root_figure(ax) is fig and ax.figure is left
    mark_figure(root_figure(ax))
    mark_figure(root_figure(right.subplots()))
    assert _marks(fig) == [SANDBOX_MARK] and _marks(left) == []
    assert fig.get_layout_engine().get()["rect"][1] > 0  # a strip kept free along the bottom
    plt.close(fig)


def test_a_sandbox_frame_drawn_in_a_subfigure_is_marked() -> None:
    import toolkit.plot
    from toolkit._core.provenance import SANDBOX_MARK

    df = pd.DataFrame({"backendAddressPool.name": ["web", "web"],
                       "address": ["10.0.0.4", "10.0.0.5"],
                       "health": ["Up", "Down"]})
    df.attrs["sandbox"] = True
    fig = plt.figure(layout="constrained")
    ax = fig.subfigures(1, 2)[1].subplots()
    assert toolkit.plot.backend_health(df, ax=ax) is ax
    assert _marks(fig) == [SANDBOX_MARK]
    plt.close(fig)


def test_integer_ticks_keeps_whole_counts_on_the_automatic_locator() -> None:
    from matplotlib.ticker import FixedLocator

    from toolkit.plot._common import integer_ticks

    _, ax = plt.subplots()
    ax.set_xlim(0, 2.5)
    integer_ticks(ax.xaxis)
    assert all(float(t).is_integer() for t in ax.get_xticks())
    ax.yaxis.set_major_locator(FixedLocator([0.5, 1.5]))
    integer_ticks(ax.yaxis)  # a locator of the caller's own is left alone
    assert list(ax.get_yticks()) == [0.5, 1.5]
    plt.close("all")


# --------------------------------------------------------------------------------------------
# a map's figure as tall as the map


def _bands(ax) -> tuple[float, float]:
    """The blank band (inches) above and below an aspect-locked Axes, and at its sides."""
    fig = ax.figure
    fig.draw_without_rendering()
    width, height = fig.get_size_inches()
    laid_out, drawn = ax.get_position(original=True), ax.get_position(original=False)
    return ((laid_out.height - drawn.height) * height, (laid_out.width - drawn.width) * width)


def test_a_wide_maps_figure_loses_the_blank_band_above_and_below() -> None:
    from toolkit.plot._common import fit_height

    fig, ax = plt.subplots(figsize=(8, 7), layout="constrained")
    ax.set_xlim(0, 2)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_title("a wide map")
    assert _bands(ax)[0] > 2  # a third of the figure's height is blank
    fit_height(ax)
    above_below, sides = _bands(ax)
    assert fig.get_figheight() < 5 and above_below < 0.1 and sides < 0.2
    plt.close(fig)


def test_a_tall_maps_figure_keeps_its_height_and_never_grows() -> None:
    from toolkit.plot._common import fit_height

    fig, ax = plt.subplots(figsize=(8, 7), layout="constrained")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 3)
    ax.set_aspect("equal")
    fit_height(ax)
    assert fig.get_figheight() == 7
    fig, ax = plt.subplots(figsize=(8, 2), layout="constrained")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    fit_height(ax, least=3.0)
    assert fig.get_figheight() == 2  # not below what it was given, nor above
    plt.close("all")
