"""Text from a service, a file or a caller is data: escaped for HTML, JSON that stays inside its
script, labels matplotlib draws as written, colours only when they are colours."""

from __future__ import annotations

import html
import json

import pytest

from toolkit._core.text import css_color, html_text, plot_text, script_json

HOSTILE = ["<img src=x onerror=alert(1)>", "</script><script>alert(1)</script>",
           "<!--<script>", "\" onmouseover=\"x", "' onfocus='x", "a & b", "\u2028\u2029",
           "$\\frac{$ high", "_0123456789abcdef0123456789abcdef", "\\$5 and $6"]


@pytest.mark.parametrize("text", HOSTILE)
def test_html_text_reads_back_as_the_same_text_and_holds_no_markup(text: str) -> None:
    out = html_text(text)
    assert html.unescape(out) == text
    assert not set("<>\"'") & set(out)


def test_html_text_writes_any_value_as_its_str() -> None:
    assert html_text(3) == "3" and html_text(None) == "None"


@pytest.mark.parametrize("text", HOSTILE)
def test_script_json_reads_back_and_holds_nothing_a_page_would_take_for_a_tag(text: str) -> None:
    value = {"name": text, "list": [text, 1, None], text: "key"}
    out = script_json(value)
    assert json.loads(out) == value
    for forbidden in ("<", ">", "&", "\u2028", "\u2029"):
        assert forbidden not in out


@pytest.mark.parametrize("text", HOSTILE)
def test_plot_text_is_drawn_as_written(text: str) -> None:
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    try:
        ax.set_title(plot_text(text))
        ax.set_xticks([0, 1], [plot_text(text), plot_text(text + "$")])
        fig.canvas.draw()  # mathtext would raise on an unbalanced $\frac{$
        title = ax.title
        assert title._preprocess_math(title.get_text()) == (text, False)
        for tick in ax.get_xticklabels():
            shown, math = tick._preprocess_math(tick.get_text())
            assert math is False and shown in (text, text + "$")
    finally:
        plt.close(fig)


def test_plot_text_of_deep_braces_draws_without_recursion() -> None:
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    deep = "$" + "{" * 3000 + "x" + "}" * 3000 + "$"
    fig, ax = plt.subplots()
    try:
        ax.set_ylabel(plot_text(deep))
        fig.canvas.draw()
    finally:
        plt.close(fig)


@pytest.mark.parametrize(("value", "kept"), [
    ("#00e400", True), ("#ABC", True), ("#abcd", True), ("#11223344", True), (" #00ff00 ", True),
    ("red", False), ("<script>", False), ("#12", False), ("#1234567", False),
    ("red;background:url(https://x)", False), ("#fff;x", False), (None, False), (7, False),
])
def test_css_color_keeps_only_hexadecimal_colours(value: object, kept: bool) -> None:
    out = css_color(value, "#9e9e9e")
    assert out == (value.strip() if kept and isinstance(value, str) else "#9e9e9e")
