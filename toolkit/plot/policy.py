"""Pictures of policy compliance: by assignment or definition, over time, by type and region."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from toolkit._core.errors import ValidationError
from toolkit._core.text import plot_text
from toolkit.plot._common import marks_sandbox, new_axes, require_columns
from toolkit.plot._style import NEUTRAL, PARTIAL, axis_label, series_style
from toolkit.plot.description import counted, listed, sentences, set_description

if TYPE_CHECKING:  # matplotlib is imported when a helper draws, not with the package
    from matplotlib.axes import Axes

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


#: The level of a :func:`toolkit.policy_summary` row each grouping column is read from.
_SUMMARY_LEVELS = {"policyAssignmentName": "assignment", "policyAssignmentId": "assignment",
                   "policyDefinitionId": "definition",
                   "policyDefinitionReferenceId": "definition", "policyGroupName": "group"}


def _from_policy_summary(df: pd.DataFrame, by: str) -> pd.DataFrame:
    """Take the rows of one level of a :func:`toolkit.policy_summary` frame.

    They are counted the way :func:`toolkit.compliance_summary` counts (the service's own resource
    counts).
    """
    if by not in _SUMMARY_LEVELS:
        raise ValidationError("by", by, "with a policy_summary frame must be one of "
                              f"{sorted(_SUMMARY_LEVELS)}")
    require_columns(df, ["level", by, *(f"resources_{s}" for s in _SUMMARY_STATES)],
                    "plot.compliance_by")
    rows = df[df["level"].astype("string") == _SUMMARY_LEVELS[by]]
    out = pd.DataFrame({by: rows[by].astype("string").to_numpy()})
    for key, state in zip(COMPLIANCE_COLORS, _SUMMARY_STATES, strict=True):
        out[key] = rows[f"resources_{state}"].astype("Int64").fillna(0).to_numpy()
    out["resources"] = out[list(COMPLIANCE_COLORS)].sum(axis=1)
    counted = out["compliant"] + out["exempt"] + out["unknown"]
    out["compliance_pct"] = (100.0 * counted / out["resources"].where(out["resources"] > 0)
                             ).astype("float64").round(1)
    return out.sort_values(["compliance_pct", "non_compliant"], ascending=[True, False],
                           kind="stable").reset_index(drop=True)


_SUMMARY_STATES = ("compliant", "noncompliant", "conflict", "exempt", "unknown")


def _summary(df: pd.DataFrame, by: str) -> pd.DataFrame:
    if isinstance(df, pd.DataFrame) and "level" in df.columns and \
            "resources_compliant" in df.columns:
        return _from_policy_summary(df, by)
    if "resources" in df.columns and "compliant" in df.columns:
        return require_columns(df, [by, *COMPLIANCE_COLORS], "plot.compliance_by")
    from toolkit.arm.compliance import compliance_summary

    require_columns(df, ["resourceId", "complianceState", by], "plot.compliance_by")
    return compliance_summary(df, by=by)


@marks_sandbox
def compliance_by(df: pd.DataFrame, by: str = "policyAssignmentName", *, ax: Axes | None = None,
                  title: str | None = None, limit: int | None = 25) -> Axes:
    """Resources per group as stacked bars in compliance colours, worst compliance on top.

    Parameters
    ----------
    df : pandas.DataFrame
        Records from :func:`toolkit.policy_states`, the frame
        :func:`toolkit.compliance_summary` returned for ``by``, or the service's own summary
        from :func:`toolkit.policy_summary` (its assignment rows for ``policyAssignmentName``,
        its definition rows for ``policyDefinitionReferenceId``, its group rows for
        ``policyGroupName``).
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
    labels = [plot_text(v) for v in summary[by].astype(str)]
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
        if pd.notna(pct):
            ax.text(total, y, f"  {pct:.0f}%", va="center", fontsize=8, color="#333333")
    ax.set_xlabel("resources (count, each at its worst state)")
    ax.set_ylabel(axis_label(by))
    ax.set_xlim(0, max(left.max() if len(left) else 1, 1) * 1.12)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, title="state")
    ax.set_title(plot_text(title) if title else f"Compliance by {axis_label(by)}")
    ax.spines[["top", "right"]].set_visible(False)
    set_description(ax, _by_text(ax.get_title(), summary.iloc[::-1], by))
    return ax


#: The words a compliance state is described with.
_WORDS = {"compliant": "compliant", "non_compliant": "non-compliant", "conflict": "in conflict",
          "exempt": "exempt", "unknown": "unknown"}


def _states(row: pd.Series) -> str:
    return ", ".join(f"{int(row[k]):,} {w}" for k, w in _WORDS.items()
                     if pd.notna(row[k]) and int(row[k])) or "no resources"


def _by_text(title: str, summary: pd.DataFrame, by: str) -> str:
    """Describe the compliance bars: each group's share and states, least compliant first."""
    groups = []
    for _, row in summary.iterrows():
        pct = row["compliance_pct"]
        share = f"{pct:.0f}% compliant" if pd.notna(pct) else "no resources evaluated"
        groups.append(f"{row[by]}: {share} ({_states(row)})")
    total = summary[list(_WORDS)].astype("float64").fillna(0).sum(axis=0)
    return sentences(f"{title}: {counted(len(summary), axis_label(by))}, least compliant first",
                     listed(groups, 6), f"Summed over the bars: {_states(total)}")


def _covered(parts: list[tuple[Any, pd.DataFrame]], day: pd.Series) -> list[int]:
    """Count for each series how many of the series drawn after it (at most 2) cover it.

    A series covers another with the same value (within half a point) on most of the days both have.
    """
    values = [pd.Series(part["compliance_pct"].to_numpy(dtype=float),
                        index=day[part.index].to_numpy()).groupby(level=0).mean()
              for _, part in parts]
    out = []
    for k, mine in enumerate(values):
        count = 0
        for later in values[k + 1:]:
            both = mine.index.intersection(later.index)
            if len(both) and ((mine[both] - later[both]).abs() < 0.5).mean() > 0.5:
                count += 1
        out.append(min(count, 2))
    return out


@marks_sandbox
def compliance_trend(trend: pd.DataFrame, *, by: str | None = None, ax: Axes | None = None,
                     title: str | None = None, events: Sequence[tuple[Any, str]] = ()) -> Axes:
    """Draw the compliance percentage over time (one line per group with ``by``).

    Non-compliant resources are shaded when there is one line.

    Periods only partly inside the window asked (``complete`` false: the first and last day of
    a window that does not start and end at midnight) are not joined to the line: they are
    drawn as hollow grey-edged markers, labelled in the legend, so their lower counts never
    read as a change.

    Parameters
    ----------
    trend : pandas.DataFrame
        The frame :func:`toolkit.compliance_trend` returned (``day``, ``compliance_pct``,
        ``non_compliant``, ``complete`` when it has it, and the ``by`` column when given).
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
    import matplotlib.dates as mdates
    from matplotlib.lines import Line2D

    require_columns(trend, ["day", "compliance_pct", "non_compliant", *([by] if by else [])],
                    "plot.compliance_trend")
    ax = new_axes(ax, figsize=(9, 4.2))
    day = pd.Series(pd.to_datetime(trend["day"]).dt.tz_convert(None).to_numpy(),
                    index=trend.index)
    complete = (trend["complete"].fillna(False).astype(bool) if "complete" in trend.columns
                else pd.Series(True, index=trend.index))
    handles: list[Any] = []
    if by is None:
        whole = trend[complete]
        colour = COMPLIANCE_COLORS["compliant"]
        ax2 = ax.twinx()
        ax2.fill_between(day[whole.index], whole["non_compliant"].astype("float64"),
                         step="mid", color=COMPLIANCE_COLORS["non_compliant"], alpha=0.15,
                         lw=0)
        ax2.set_ylabel("non-compliant resources (count)",
                       color=COMPLIANCE_COLORS["non_compliant"])
        ax2.set_ylim(bottom=0)
        ax2.spines[["top"]].set_visible(False)
        ax2.tick_params(labelsize=8)
        ax.set_zorder(ax2.get_zorder() + 1)
        ax.patch.set_visible(False)
        ax.plot(day[whole.index], whole["compliance_pct"], color=colour, lw=2, marker="o",
                ms=3)
        handles += [Line2D([], [], color=colour, lw=2, marker="o", ms=3,
                           label="compliant resources (%)"),
                    Line2D([], [], color=COMPLIANCE_COLORS["non_compliant"], alpha=0.3, lw=8,
                           label="non-compliant resources (count)")]
        groups: list[tuple[Any, pd.DataFrame, dict[str, Any]]] = [
            (None, trend, {"color": colour, "marker": "o"})]
    else:
        groups = []
        parts = list(trend.groupby(by, observed=True, sort=True))
        under = _covered(parts, day)
        for k, (name, part) in enumerate(parts):
            style = series_style(k)
            # a series that a later one draws over (the same values) is drawn larger, so it
            # shows round the edges of the one on top
            ms, lw = 4 + 2.4 * under[k], 1.4 + 1.1 * under[k]
            whole = part[complete[part.index]]
            ax.plot(day[whole.index], whole["compliance_pct"], color=style["color"],
                    ls=style["ls"], marker=style["marker"], zorder=3 + 0.01 * k, ms=ms, lw=lw)
            handles.append(Line2D([], [], color=style["color"], ls=style["ls"],
                                  marker=style["marker"], label=plot_text(name), ms=ms, lw=lw))
            groups.append((name, part, style))
    partial_drawn = False
    for _, part, style in groups:
        cut = part[~complete[part.index]]
        if len(cut):
            ax.scatter(day[cut.index], cut["compliance_pct"], marker=style["marker"], s=30,
                       facecolors="white", edgecolors=style["color"], linewidths=1.2,
                       zorder=4)
            partial_drawn = True
    if partial_drawn:
        handles.append(Line2D([], [], ls="", marker="o", ms=6, markerfacecolor="white",
                              markeredgecolor=PARTIAL if by else COMPLIANCE_COLORS["compliant"],
                              label="partial period (window edge),\nnot a change"))
    for when, label in events:
        at = pd.Timestamp(when)
        at = at.tz_convert(None) if at.tz is not None else at
        ax.axvline(mdates.date2num(at), color=NEUTRAL, ls="--", lw=1)
        ax.annotate(plot_text(label), (mdates.date2num(at), 1.0),
                    xycoords=("data", "axes fraction"),
                    xytext=(0, 3), textcoords="offset points", fontsize=8, ha="center",
                    va="bottom", color=NEUTRAL)
    locator = mdates.AutoDateLocator(minticks=4, maxticks=8)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    ax.set_ylim(0, 104)  # a line at 100% drawn whole
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel("compliant resources (%)")
    ax.set_xlabel("day (UTC)")
    side = 1.12 if by is None else 1.01
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(side, 1.0), frameon=False,
              title=axis_label(by) if by else None)
    ax.set_title(plot_text(title) if title else "Compliance over time",
                 pad=18 if events else None)
    ax.spines[["top"]].set_visible(False)
    set_description(ax, _trend_text(ax.get_title(), trend, day, complete, by, events))
    return ax


def _day(value: Any) -> str:
    return f"{pd.Timestamp(value):%d %b %Y}".lstrip("0")


def _course(days: pd.Series, values: pd.Series, unit: str) -> str:
    """Describe a series over days: first and last value, lowest and highest."""
    if values.dropna().empty:
        return "no complete day"
    data = pd.DataFrame({"day": days.to_numpy(), "v": values.astype("float64").to_numpy()}
                        ).dropna().sort_values("day", kind="stable")
    first, last = data.iloc[0], data.iloc[-1]
    low, high = data.iloc[int(data["v"].argmin())], data.iloc[int(data["v"].argmax())]
    return (f"from {first['v']:.0f}{unit} on {_day(first['day'])} to {last['v']:.0f}{unit} on "
            f"{_day(last['day'])} (lowest {low['v']:.0f}{unit} on {_day(low['day'])}, highest "
            f"{high['v']:.0f}{unit} on {_day(high['day'])})")


def _trend_text(title: str, trend: pd.DataFrame, day: pd.Series, complete: pd.Series,
                by: str | None, events: Sequence[tuple[Any, str]]) -> str:
    """Describe the trend: how compliance went over the complete days, per group with ``by``."""
    whole = trend[complete]
    span = (f", {_day(day.min())} to {_day(day.max())} (UTC)" if len(day) else "")
    if by is None:
        parts = [f"{title}{span}: compliant resources "
                 f"{_course(day[whole.index], whole['compliance_pct'], '%')}",
                 "Non-compliant resources "
                 f"{_course(day[whole.index], whole['non_compliant'], '')}"]
    else:
        lines = [f"{name}: {_course(day[part.index], part['compliance_pct'], '%')}"
                 for name, part in whole.groupby(by, observed=True, sort=True)]
        parts = [f"{title}{span}: compliant resources (%) per {axis_label(by)}",
                 listed(lines, 6)]
    partial = int((~complete).sum())
    if partial:
        parts.append(f"{counted(partial, 'partial period')} at the window's edges, marked "
                     "apart and not a change")
    parts += [f"Marked: {label} on {_day(when)}" for when, label in events]
    return sentences(*parts)


@marks_sandbox
def noncompliance_heatmap(df: pd.DataFrame, *, rows: str = "resourceType",
                          columns: str = "resourceLocation", ax: Axes | None = None,
                          title: str | None = None) -> Axes:
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
    row_labels = [plot_text(str(r).rsplit("/", 1)[-1] if rows == "resourceType" else r)
                  for r in table.index]
    ax = new_axes(ax, figsize=(max(5, 1.1 * len(table.columns) + 3),
                               max(2.5, 0.42 * len(table.index) + 1.4)))
    values = table.to_numpy(dtype=float)
    image = ax.imshow(values if values.size else np.zeros((1, 1)), cmap="Reds", aspect="auto",
                      vmin=0)
    ax.set_xticks(range(len(table.columns)), [plot_text(c) for c in table.columns], rotation=30,
                  ha="right")
    ax.set_yticks(range(len(table.index)), row_labels)
    top = values.max() if values.size else 0
    for (i, j), v in np.ndenumerate(values):
        if v:
            ax.text(j, i, f"{int(v)}", ha="center", va="center", fontsize=8,
                    color="white" if v > top / 2 else "#333333")
    ax.figure.colorbar(image, ax=ax, label="non-compliant resources (count)")
    ax.set_xlabel(axis_label(columns))
    ax.set_ylabel(axis_label(rows))
    ax.set_title(plot_text(title) if title else "Non-compliant resources")
    set_description(ax, _heatmap_text(ax.get_title(), table, row_labels, rows, columns))
    return ax


def _heatmap_text(title: str, table: pd.DataFrame, row_labels: list[str], rows: str,
                  columns: str) -> str:
    """Describe the heat map: its size, its total and its largest cells."""
    cells = [(int(v), r, str(c)) for r, values in zip(row_labels, table.to_numpy(), strict=True)
             for c, v in zip(table.columns, values, strict=True) if v]
    cells.sort(key=lambda x: -x[0])
    top = [f"{r} in {c}: {v:,}" for v, r, c in cells]
    return sentences(
        f"{title} by {axis_label(rows)} and {axis_label(columns)}: "
        f"{counted(sum(v for v, _, _ in cells), 'non-compliant resource')} counted over "
        f"{counted(len(table.index), axis_label(rows))} and "
        f"{counted(len(table.columns), axis_label(columns))}",
        f"The most: {listed(top, 5, 'more cells')}" if top else "")
