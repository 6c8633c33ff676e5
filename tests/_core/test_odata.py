"""Splitting OData expression text at top-level separators."""

from __future__ import annotations

import pytest

from toolkit._core.odata import split_top_level


def test_separators_inside_parentheses_and_quotes_do_not_split() -> None:
    text = "filter(a eq 'x/y')/groupby((b, c), aggregate($count as n)) / filter(n gt 1)"
    assert split_top_level(text, "/") == [
        "filter(a eq 'x/y')", "groupby((b, c), aggregate($count as n))", "filter(n gt 1)"]


def test_expand_options_split_at_semicolons() -> None:
    assert split_top_level("$filter=type eq 'Key';$apply=groupby((type))", ";") == [
        "$filter=type eq 'Key'", "$apply=groupby((type))"]
    assert split_top_level("components", ",") == ["components"]


@pytest.mark.parametrize("text", ["a(b", "a)b(", "'open", "f(a eq 'x)"])
def test_unbalanced_text_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="unbalanced"):
        split_top_level(text, ",")
