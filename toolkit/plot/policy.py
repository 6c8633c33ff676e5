"""Pictures of policy compliance: by assignment or definition, over time, by type and region."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from toolkit._core.errors import ValidationError
from toolkit.plot._common import marks_sandbox, new_axes, require_columns

__all__ = ["COMPLIANCE_COLORS", "compliance_by", "compliance_trend", "noncompliance_heatmap"]

#: Compliance colours (the dashboard convention): green compliant, red non-compliant, amber
#: conflict, blue exempt, grey unknown.
COMPLIANCE_COLORS = {
    "compliant": "#2e7d32",
    "non_compliant": "#c62828",
    "conflict": "#f9a825",
    "exempt": "#1e88e5",
    "unknown": "#9e9e9e",
}
_LABELS = {"compliant": "Compliant", "non_compliant": "NonCompliant", "conflict": "Conflict",
           "exempt": "Exempt", "unknown": "Unknown"}


def _summary(df: pd.DataFrame, by: str) -> pd.DataFrame:
    if "resources" in df.columns and "compliant" in df.columns:
        return require_columns(df, [by, *COMPLIANCE_COLORS], "plot.compliance_by")
    from toolkit.arm.compliance import compliance_summary

    require_columns(df, ["resourceId", "complianceState", by], "plot.compliance_by")
    return compliance_summary(df, by=by)


@marks_sandbox
def compliance_by(df: pd.DataFrame, by: str = "policyAssignmentName", *, ax: Any = None,
                  title: str | None = None, limit: int | None = 25) -> Any:
    """Resources per group as stacked bars in compliance colours, worst compliance on top.

    Parameters
    ----------
    df : pandas.DataFrame
        Records from :func:`toolkit.policy_states`, or the frame
        :func:`toolkit.compliance_summary` returned for ``by``.
    by : str
        The grouping column (``policyAssignmentName``, ``policyDefinitionName``,
        ``resourceType``...).
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted.
    title : str, optional
        Axes title.
    limit : int, optional
        Show at most this many groups (the least compliant).

    Returns
    -------
    matplotlib.axes.Axes
    """
    summary = _summary(df, by)
    if limit is not None:
        summary = summary.head(limit)
    summary = summary.iloc[::-1]
    labels = summary[by].astype(str).tolist()
    created = ax is None
    ax = new_axes(ax, figsize=(10, max(2.5, 0.38 * len(labels) + 1.4)))
    left = np.zeros(len(summary))
    for key, colour in COMPLIANCE_COLORS.items():
        values = summary[key].astype("float64").fillna(0).to_numpy()
        if not values.any():
            continue
        ax.barh(labels, values, left=left, color=colour, label=_LABELS[key], edgecolor="white",
                linewidth=0.5)
        left = left + values
    for y, (total, pct) in enumerate(zip(left, summary["compliance_pct"], strict=True)):
        ax.text(total, y, f"  {pct:.0f}%", va="center", fontsize=8, color="#333333")
    ax.set_xlabel("resources")
    ax.set_ylabel(by)
    ax.set_xlim(0, max(left.max() if len(left) else 1, 1) * 1.12)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=8)
    ax.set_title(title or f"Compliance by {by}")
    ax.spines[["top", "right"]].set_visible(False)
    if created:
        ax.figure.tight_layout()
    return ax


@marks_sandbox
def compliance_trend(trend: pd.DataFrame, *, by: str | None = None, ax: Any = None,
                     title: str | None = None, events: Sequence[tuple[Any, str]] = ()) -> Any:
    """Compliance percentage over time (one line per group with ``by``), with non-compliant
    resources shaded when there is one line.

    Parameters
    ----------
    trend : pandas.DataFrame
        The frame :func:`toolkit.compliance_trend` returned (``day``, ``compliance_pct``,
        ``non_compliant``, and the ``by`` column when given).
    by : str, optional
        The grouping column of ``trend``.
    ax : matplotlib Axes, optional
        Where to draw.
    title : str, optional
        Axes title.
    events : sequence of (time, label)
        Vertical markers (a campaign start, a new assignment...).

    Returns
    -------
    matplotlib.axes.Axes
    """
    require_columns(trend, ["day", "compliance_pct", "non_compliant", *([by] if by else [])],
                    "plot.compliance_trend")
    ax = new_axes(ax, figsize=(9, 4))
    day = pd.to_datetime(trend["day"]).dt.tz_convert(None)
    if by is None:
        ax.plot(day, trend["compliance_pct"], color=COMPLIANCE_COLORS["compliant"], lw=2,
                label="compliance %")
        ax2 = ax.twinx()
        ax2.fill_between(day, trend["non_compliant"].astype("float64"), step="mid",
                         color=COMPLIANCE_COLORS["non_compliant"], alpha=0.15,
                         label="non-compliant resources")
        ax2.set_ylabel("non-compliant resources", color=COMPLIANCE_COLORS["non_compliant"])
        ax2.set_ylim(bottom=0)
        ax2.spines[["top"]].set_visible(False)
    else:
        for name, part in trend.groupby(by, observed=True, sort=True):
            ax.plot(day[part.index], part["compliance_pct"], lw=1.8, label=str(name))
        ax.legend(frameon=False, fontsize=8, loc="lower left")
    for when, label in events:
        at = pd.Timestamp(when)
        at = at.tz_convert(None) if at.tz is not None else at
        ax.axvline(at, color="#555555", ls="--", lw=1)
        ax.text(at, 101, label, rotation=0, fontsize=8, ha="center", va="bottom")
    import matplotlib.dates as mdates

    locator = mdates.AutoDateLocator(maxticks=8)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    ax.set_ylim(0, 100)
    ax.set_ylabel("compliant resources (%)")
    ax.set_title(title or "Compliance over time", pad=16 if events else None)
    ax.spines[["top"]].set_visible(False)
    return ax


@marks_sandbox
def noncompliance_heatmap(df: pd.DataFrame, *, rows: str = "resourceType",
                          columns: str = "resourceLocation", ax: Any = None,
                          title: str | None = None) -> Any:
    """Non-compliant resources by two dimensions (resource type by location) as a heat map.

    Parameters
    ----------
    df : pandas.DataFrame
        Records from :func:`toolkit.policy_states` (``latest``). A resource counts once per
        cell when any of its newest states is NonCompliant.
    rows, columns : str
        The two grouping columns.
    ax : matplotlib Axes, optional
        Where to draw.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
    """
    require_columns(df, ["resourceId", "complianceState", rows, columns],
                    "plot.noncompliance_heatmap")
    if rows == columns:
        raise ValidationError("columns", columns, "must differ from rows")
    bad = df[df["complianceState"].astype("string") == "NonCompliant"]
    table = (bad.groupby([rows, columns], observed=True)["resourceId"].nunique()
             .unstack(columns, fill_value=0))
    row_labels = [str(r).rsplit("/", 1)[-1] if rows == "resourceType" else str(r)
                  for r in table.index]
    created = ax is None
    ax = new_axes(ax, figsize=(max(5, 1.1 * len(table.columns) + 3),
                               max(2.5, 0.42 * len(table.index) + 1.4)))
    values = table.to_numpy(dtype=float)
    image = ax.imshow(values if values.size else np.zeros((1, 1)), cmap="Reds", aspect="auto",
                      vmin=0)
    ax.set_xticks(range(len(table.columns)), [str(c) for c in table.columns], rotation=30,
                  ha="right")
    ax.set_yticks(range(len(table.index)), row_labels)
    top = values.max() if values.size else 0
    for (i, j), v in np.ndenumerate(values):
        if v:
            ax.text(j, i, f"{int(v)}", ha="center", va="center", fontsize=8,
                    color="white" if v > top / 2 else "#333333")
    ax.figure.colorbar(image, ax=ax, label="non-compliant resources")
    ax.set_xlabel(columns)
    ax.set_ylabel(rows)
    ax.set_title(title or "Non-compliant resources")
    if created:
        ax.figure.tight_layout()
    return ax
