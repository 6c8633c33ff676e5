"""Analysis of policy compliance records, the way a compliance dashboard rolls them up.

:func:`compliance_summary` counts resources per group at their worst state, :func:`compliance_trend`
does so per period of a ``default`` query's history, and :func:`evaluated_expressions` explodes
``policyEvaluationDetails`` into one row per evaluated expression. They take the frames
:func:`~toolkit.arm.policy.policy_states` returns and send no request.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from toolkit._core.errors import ValidationError
from toolkit._core.frames import build_frame
from toolkit._core.provenance import keeps_sandbox_flag, provenance_of
from toolkit._core.registry import OperationRecord, register
from toolkit._core.validate import check_frame
from toolkit._spec.arm import COMPLIANCE_STATES
from toolkit.arm._schemas import EVALUATED_EXPRESSIONS

logger = logging.getLogger(__name__)

__all__ = ["compliance_summary", "compliance_trend", "evaluated_expressions"]

_RANK = {s: i for i, s in enumerate(COMPLIANCE_STATES)}
_KEY = ("resourceId", "policyAssignmentId", "policyDefinitionId", "policyDefinitionReferenceId")


def _by(by: Any, df: pd.DataFrame, helper: str) -> list[str]:
    if by is None:
        return []
    names = [by] if isinstance(by, str) else list(by)
    for name in names:
        if not isinstance(name, str) or name not in df.columns:
            raise ValidationError("by", name, f"must name columns of the frame ({helper})")
    return names


def newest_records(df: pd.DataFrame, extra: Sequence[str] = ()) -> pd.DataFrame:
    """Keep the newest record per (resource, assignment, definition, reference id[, extra])."""
    keys = [k for k in _KEY if k in df.columns] + list(extra)
    if "timestamp" not in df.columns or len(keys) < 2:
        return df
    ordered = df.sort_values("timestamp", kind="stable")
    return ordered.drop_duplicates(keys, keep="last")


def state_rank(states: pd.Series) -> np.ndarray:
    """Rank compliance states from the least to the most severe (-1: an undocumented state)."""
    text = states.astype("string")
    return text.map(_RANK).fillna(-1).astype("int64").to_numpy()


def _counts(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per group of ``keys``: resources in each rolled-up state and the compliance percentage."""
    names = {v: k for k, v in _RANK.items()}
    if keys:
        grouped = frame.groupby(keys, observed=True, sort=True)["rank"]
        table = grouped.value_counts().unstack(fill_value=0)
    else:
        table = frame["rank"].value_counts().to_frame().T
    for rank in names:
        if rank not in table.columns:
            table[rank] = 0
    out = pd.DataFrame(index=table.index)
    out["resources"] = table.sum(axis=1)
    out["compliant"] = table[_RANK["Compliant"]]
    out["non_compliant"] = table[_RANK["NonCompliant"]]
    out["conflict"] = table[_RANK["Conflict"]]
    out["exempt"] = table[_RANK["Exempt"]]
    out["unknown"] = table[_RANK["Unknown"]]
    out["other"] = out["resources"] - out["compliant"] - out["non_compliant"]
    counted = out["compliant"] + out["exempt"] + out["unknown"]
    out = out.astype("Int64")
    out["compliance_pct"] = (100.0 * counted / out["resources"]).astype("float64").round(1)
    return out


def _rollup(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame({k: df[k] for k in keys})
    frame["resourceId"] = df["resourceId"]
    frame["rank"] = state_rank(df["complianceState"])
    worst = frame.groupby([*keys, "resourceId"], observed=True, sort=False)["rank"].max()
    return worst.reset_index()


@keeps_sandbox_flag
def compliance_summary(df: pd.DataFrame, by: str | Sequence[str] = "policyAssignmentName"
                       ) -> pd.DataFrame:
    """Resources compliant, non-compliant and other per group, as a compliance dashboard shows.

    Records are first reduced to the newest per (resource, assignment, definition, reference
    id), so the frame of a ``default`` query works too. A resource counts once per group, with
    its worst state there (NonCompliant > Compliant > Conflict > Exempt > Unknown).

    Parameters
    ----------
    df : pandas.DataFrame
        Records from :func:`policy_states` (needs ``resourceId`` and ``complianceState``).
    by : str or list of str
        Grouping columns, e.g. ``"policyAssignmentName"``, ``"policyDefinitionName"``,
        ``"resourceType"``, ``"resourceLocation"``; ``None`` for one overall row.

    Returns
    -------
    pandas.DataFrame
        One row per group (worst compliance first): the ``by`` columns, then ``resources``,
        ``compliant``, ``non_compliant``, ``conflict``, ``exempt``, ``unknown``, ``other``
        (resources neither compliant nor non-compliant) as ``Int64``, and ``compliance_pct``
        (float): compliant, exempt and unknown resources over all resources, in percent, the
        way the service's dashboard computes it.
    """
    check_frame(df, ["resourceId", "complianceState"], "compliance_summary", "policy_states")
    keys = _by(by, df, "compliance_summary")
    latest = newest_records(df)
    if latest.empty:
        cols = {k: df[k].iloc[:0] for k in keys}
        out = pd.DataFrame(cols)
        for c in ("resources", "compliant", "non_compliant", "conflict", "exempt", "unknown",
                  "other"):
            out[c] = pd.array([], dtype="Int64")
        out["compliance_pct"] = np.array([], dtype="float64")
        return out
    rolled = _rollup(latest, keys)
    out = _counts(rolled, keys)
    out = out.sort_values(["compliance_pct", "non_compliant"], ascending=[True, False],
                          kind="stable")
    out = out.reset_index() if keys else out.reset_index(drop=True)
    for k in keys:
        if isinstance(df[k].dtype, pd.CategoricalDtype):
            out[k] = out[k].astype(df[k].dtype)
    return out.reset_index(drop=True)


@keeps_sandbox_flag
def compliance_trend(df: pd.DataFrame, by: str | Sequence[str] | None = None, *,
                     freq: str = "D", window: Any = None) -> pd.DataFrame:
    """Compliance per day (or another period) from the records of a ``default`` query.

    Each period counts the (resource, policy) pairs evaluated in it at their last evaluation of
    the period, rolled up per resource as :func:`compliance_summary` does.

    Parameters
    ----------
    df : pandas.DataFrame
        Records from ``policy_states(..., resource="default", start=...)`` (needs
        ``timestamp``, ``resourceId`` and ``complianceState``).
    by : str or list of str, optional
        Extra grouping columns (e.g. ``"policyAssignmentName"``).
    freq : str
        The period, as pandas spells it (``"D"`` days, ``"W"`` weeks...).
    window : (start, end), optional
        The window the records were asked for (datetimes or ISO 8601 strings; naive times are
        UTC). By default the window :func:`policy_states` recorded in ``df.attrs["window"]``.

    Returns
    -------
    pandas.DataFrame
        One row per period (and group): ``day`` (datetime UTC, start of the period), the ``by``
        columns, ``resources``, ``compliant``, ``non_compliant``, ``conflict``, ``exempt``,
        ``unknown``, ``other`` (``Int64``), ``compliance_pct`` (float) and ``complete``
        (``boolean``): whether the whole period lies inside the window. The first and last
        periods of a window usually do not (a window from 09:00 to 09:00 holds 15 hours of its
        first day and 9 of its last), so they count fewer evaluations and are no change of
        compliance; :func:`toolkit.plot.compliance_trend` draws them apart. An end of the window
        the service chose itself (``start``/``end`` not given) is unknown: the first (or last)
        period then counts as incomplete.
    """
    check_frame(df, ["timestamp", "resourceId", "complianceState"], "compliance_trend",
                "policy_states")
    keys = _by(by, df, "compliance_trend")
    if not isinstance(freq, str) or not freq:
        raise ValidationError("freq", freq, "must be a pandas frequency such as 'D' or 'W'")
    try:
        day = df["timestamp"].dt.tz_convert(None).dt.to_period(freq).dt.start_time
    except (ValueError, AttributeError) as err:
        raise ValidationError("freq", freq, "must be a pandas frequency such as 'D' or 'W'") \
            from err
    day = day.dt.tz_localize("UTC") if day.dt.tz is None else day
    lo, hi = _window(df if window is None else None, window)
    frame = df.assign(day=day.to_numpy())
    latest = newest_records(frame, extra=["day"])
    if latest.empty:
        out = pd.DataFrame({"day": pd.Series([], dtype="datetime64[ns, UTC]")})
        for k in keys:
            out[k] = df[k].iloc[:0]
        for c in ("resources", "compliant", "non_compliant", "conflict", "exempt", "unknown",
                  "other"):
            out[c] = pd.array([], dtype="Int64")
        out["compliance_pct"] = np.array([], dtype="float64")
        out["complete"] = pd.array([], dtype="boolean")
        return out
    rolled = _rollup(latest, ["day", *keys])
    out = _counts(rolled, ["day", *keys]).reset_index()
    out["day"] = pd.to_datetime(out["day"], utc=True)
    out["complete"] = _complete(out["day"], freq, lo, hi)
    for k in keys:
        if isinstance(df[k].dtype, pd.CategoricalDtype):
            out[k] = out[k].astype(df[k].dtype)
    return out.sort_values(["day", *keys], kind="stable").reset_index(drop=True)


def _timestamp(value: Any, parameter: str) -> pd.Timestamp | None:
    if value is None or (not isinstance(value, str | pd.Timestamp) and pd.isna(value)):
        return None
    try:
        ts = pd.Timestamp(value)
    except (TypeError, ValueError) as err:
        raise ValidationError(parameter, value, "must be a datetime or an ISO 8601 string") \
            from err
    return ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")


def _window(df: pd.DataFrame | None, window: Any) -> tuple[pd.Timestamp | None,
                                                             pd.Timestamp | None]:
    """Give the window's start and end (UTC): given, or recorded by :func:`policy_states`."""
    if df is not None:
        window = df.attrs.get("window")
        if not isinstance(window, tuple | list) or len(window) != 2:
            return None, None
    elif not isinstance(window, tuple | list) or len(window) != 2:
        raise ValidationError("window", window, "must be a pair (start, end)")
    return _timestamp(window[0], "window"), _timestamp(window[1], "window")


def _complete(day: pd.Series, freq: str, lo: pd.Timestamp | None,
              hi: pd.Timestamp | None) -> pd.Series:
    """Tell whether each period starting at ``day`` lies wholly inside ``[lo, hi]``.

    An unknown end leaves the period at that end incomplete.
    """
    periods = day.dt.tz_convert(None).dt.to_period(freq)
    starts = periods.dt.start_time.dt.tz_localize("UTC")
    ends = (periods + 1).dt.start_time.dt.tz_localize("UTC")
    first, last = starts.min(), starts.max()
    ok = pd.Series(True, index=day.index)
    ok &= starts >= lo if lo is not None else starts > first
    ok &= ends <= hi if hi is not None else starts < last
    flags: pd.Series = ok.astype("boolean")
    return flags


def evaluated_expressions(df: pd.DataFrame) -> pd.DataFrame:
    """Explode ``policyEvaluationDetails`` into one row per evaluated expression.

    Parameters
    ----------
    df : pandas.DataFrame
        Records from ``policy_states(..., expand="PolicyEvaluationDetails")``.

    Returns
    -------
    pandas.DataFrame
        ``record`` (``Int64``, the row of ``df`` the expression belongs to), ``timestamp``,
        ``resourceId``, ``policyAssignmentName``, ``policyDefinitionName``,
        ``policyDefinitionReferenceId``, ``complianceState`` (from the record), then the
        expression's ``result``, ``expressionKind``, ``expression``, ``path``, ``operator``
        (categories/strings) and ``expressionValue``, ``targetValue`` (objects, as sent).
    """
    check_frame(df, ["policyEvaluationDetails"], "evaluated_expressions", "policy_states")
    carried = [c for c in ("timestamp", "resourceId", "policyAssignmentName",
                           "policyDefinitionName", "policyDefinitionReferenceId",
                           "complianceState") if c in df.columns]
    rows = []
    details = df["policyEvaluationDetails"].to_numpy()
    for i, item in enumerate(details):
        if not isinstance(item, dict):
            continue
        exprs = item.get("evaluatedExpressions") or []
        if not exprs:
            continue
        base = {"record": i, **{c: df[c].iat[i] for c in carried}}
        for e in exprs:
            if isinstance(e, dict):
                rows.append({**base, **{k: e.get(k) for k in (
                    "result", "expressionKind", "expression", "path", "operator",
                    "expressionValue", "targetValue")}})
    out = build_frame(rows, EVALUATED_EXPRESSIONS, provenance_of(df), flat=True)
    for c in carried:
        if isinstance(df[c].dtype, pd.CategoricalDtype) and c != "complianceState":
            out[c] = out[c].astype(df[c].dtype)
    return out


SUMMARY_RECORD = register(OperationRecord("compliance_summary", plot="compliance_by",
                                                  derived_from="policy_states"))
TREND_RECORD = register(OperationRecord("compliance_trend", plot="compliance_trend",
                                                derived_from="policy_states"))
EXPRESSIONS_RECORD = register(OperationRecord("evaluated_expressions",
                                              schema=EVALUATED_EXPRESSIONS,
                                              derived_from="policy_states"))
