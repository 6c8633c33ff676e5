"""Pictures of identity frames: which conditional-access policies lean on which strength."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from toolkit._core.text import plot_text
from toolkit.plot._common import integer_ticks, marks_sandbox, new_axes, require_columns
from toolkit.plot.description import counted, listed, sentences, set_description

if TYPE_CHECKING:  # matplotlib is imported when a helper draws, not with the package
    from matplotlib.axes import Axes

__all__ = ["REQUIREMENT_COLORS", "authentication_strength_usage"]

#: ``mfa`` policies are locked against weakening; ``none`` ones can be satisfied another way.
REQUIREMENT_COLORS = {"mfa": "#1565c0", "none": "#f9a825"}
_LABELS = {"mfa": "requires MFA (locked)", "none": "MFA or another control"}


@marks_sandbox
def authentication_strength_usage(df: pd.DataFrame, *, ax: Axes | None = None,
                                  title: str | None = None) -> Axes:
    """Conditional-access policies per strength policy, stacked by multi-factor requirement.

    Parameters
    ----------
    df : pandas.DataFrame
        The frame :func:`toolkit.authentication_strength_usage` or
        :func:`toolkit.authentication_strength_audit` returns (columns ``policy_id`` and
        ``requirement``; the audit's ``policy_name`` labels the bars when present). Rows with an
        ``error`` are left out.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
    """
    require_columns(df, ["policy_id", "requirement"], "plot.authentication_strength_usage")
    data = df
    if "error" in data.columns:
        data = data[data["error"].isna()]
    label = data["policy_name"].fillna(data["policy_id"]) if "policy_name" in data.columns \
        else data["policy_id"]
    frame = pd.DataFrame({"policy": label.astype("string"),
                          "requirement": data["requirement"].astype("string")})
    counts = (frame.dropna().groupby(["policy", "requirement"], sort=False).size()
              .unstack("requirement", fill_value=0))
    for req in REQUIREMENT_COLORS:
        if req not in counts.columns:
            counts[req] = 0
    counts = counts[list(REQUIREMENT_COLORS)]
    counts = counts.loc[counts.sum(axis=1).sort_values(kind="stable").index]
    ax = new_axes(ax, figsize=(8, max(2.5, 0.45 * len(counts) + 1.5)))
    left = pd.Series(0.0, index=counts.index)
    for req, color in REQUIREMENT_COLORS.items():
        values = counts[req].astype(float)
        if not values.any():
            continue
        ax.barh([plot_text(p) for p in counts.index], values, left=left, color=color,
                label=_LABELS[req],
                edgecolor="white")
        for y, (v, x0) in enumerate(zip(values, left, strict=True)):
            if v:
                ax.text(x0 + v / 2, y, f"{int(v)}", ha="center", va="center", color="white",
                        fontsize=9, fontweight="bold")
        left = left + values
    ax.set_xlabel("conditional-access policies (count)")
    integer_ticks(ax.xaxis)
    ax.set_ylabel("authentication strength")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_title(plot_text(title) if title else "Who relies on each authentication strength")
    ax.spines[["top", "right"]].set_visible(False)
    set_description(ax, _usage_text(ax.get_title(), counts.iloc[::-1]))
    return ax


def _usage_text(title: str, counts: pd.DataFrame) -> str:
    """Describe the usage chart: the policies in all, and per strength (most first)."""
    def split(row: pd.Series) -> str:
        return ", ".join(f"{int(v):,} {_LABELS[str(r)]}" for r, v in row.items() if v)

    total = counts.sum(axis=0)
    strengths = [f"{name}: {counted(row.sum(), 'policy', 'policies')} ({split(row)})"
                 for name, row in counts.iterrows()]
    policies = counted(total.sum(), "conditional-access policy", "conditional-access policies")
    using = counted(len(counts), "authentication strength")
    return sentences(f"{title}: {policies} using {using}"
                     f"{': ' + split(total) if total.sum() else ''}", listed(strengths, 8))
