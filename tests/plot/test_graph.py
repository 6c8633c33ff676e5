"""plot.authentication_strength_usage: one bar per strength policy, stacked by multi-factor
requirement, errors left out, the input unchanged."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib.colors import to_rgba

import toolkit
from toolkit._core.errors import ValidationError
from toolkit.plot.graph import REQUIREMENT_COLORS


@pytest.fixture
def usage() -> pd.DataFrame:
    # strength "phishing-resistant": 4 mfa; "passwordless": 1 mfa + 2 none; p3 (no name): 1 none;
    # one failed row that must not be drawn
    return pd.DataFrame({
        "policy_id": ["p1", "p1", "p1", "p1", "p2", "p2", "p2", "p3", "p4"],
        "policy_name": ["phishing-resistant"] * 4 + ["passwordless"] * 3 + [None, "broken"],
        "requirement": ["mfa", "mfa", "mfa", "mfa", "mfa", "none", "none", "none", "mfa"],
        "error": [None] * 8 + ["Forbidden"],
    })


def _bars(ax) -> dict[tuple[str, str], float]:
    labels = [t.get_text() for t in ax.get_yticklabels()]
    colour_of = {to_rgba(c): r for r, c in REQUIREMENT_COLORS.items()}
    out: dict[tuple[str, str], float] = {}
    for patch in ax.patches:
        label = labels[round(patch.get_y() + patch.get_height() / 2)]
        out[(label, colour_of[patch.get_facecolor()])] = patch.get_width()
    return out


def test_bars_count_policies_per_strength_and_requirement(usage) -> None:
    before = usage.copy()
    ax = toolkit.plot.authentication_strength_usage(usage)
    bars = {k: v for k, v in _bars(ax).items() if v}
    assert bars == {("phishing-resistant", "mfa"): 4, ("passwordless", "mfa"): 1,
                    ("passwordless", "none"): 2, ("p3", "none"): 1}
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert "broken" not in labels  # the failed row is left out
    assert labels[-1] == "phishing-resistant" and labels[0] == "p3"  # biggest total on top
    pd.testing.assert_frame_equal(usage, before)
    plt.close("all")


def test_a_requirement_nobody_has_draws_no_bars(usage) -> None:
    only_mfa = usage[usage["requirement"] == "mfa"]
    ax = toolkit.plot.authentication_strength_usage(only_mfa.drop(columns=["error"]))
    widths = [p.get_width() for p in ax.patches]
    assert sum(widths) == len(only_mfa)
    assert {t.get_text() for t in ax.get_legend().get_texts()} == {"requires MFA (locked)"}
    plt.close("all")


def test_missing_columns_are_refused(usage) -> None:
    with pytest.raises(ValidationError, match="requirement"):
        toolkit.plot.authentication_strength_usage(usage.drop(columns=["requirement"]))
