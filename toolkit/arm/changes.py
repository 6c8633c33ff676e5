"""What changed between two days of the policy history store.

The service keeps a limited window and charts no day-to-day difference; the store
(:mod:`toolkit.arm.history`) keeps each day's states. :func:`policy_changes` reads two stored
days of a scope, rolls each resource up to its worst state per assignment (as
:func:`~toolkit.compliance_summary` counts a dashboard's resources), and names each difference:
a resource newly non-compliant, remediated, exempted, in another state, or no longer evaluated;
an assignment added or removed.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import pandas as pd

from toolkit._core.errors import ValidationError
from toolkit._core.frames import build_frame
from toolkit._core.registry import OperationRecord, register
from toolkit._core.schemas import Col, Schema
from toolkit._core.validate import check_time
from toolkit._spec.arm import COMPLIANCE_STATES
from toolkit.arm.compliance import newest_records, state_rank
from toolkit.arm.history import read_policy_history, stored_days

if TYPE_CHECKING:
    import datetime as dt

logger = logging.getLogger(__name__)

__all__ = ["CHANGES", "policy_changes"]

#: The kinds of change, in the order a report lists them.
CHANGES = ("newly non-compliant", "remediated", "exempted", "other state",
           "no longer evaluated", "assignment added", "assignment removed")

POLICY_CHANGES = Schema(
    "policy_changes",
    (
        Col("change", "category", categories=CHANGES),
        Col("policyAssignmentName", "string"),
        Col("resourceId", "string"),
        Col("resourceType", "string"),
        Col("resourceGroup", "string"),
        Col("before", "category", categories=COMPLIANCE_STATES),
        Col("after", "category", categories=COMPLIANCE_STATES),
        Col("resources", "Int64"),
        Col("policyAssignmentId", "string"),
        Col("day_before", "string"),
        Col("day_after", "string"),
    ),
)

_READ = ["timestamp", "resourceId", "resourceType", "resourceGroup", "policyAssignmentId",
         "policyAssignmentName", "policyDefinitionId", "policyDefinitionReferenceId",
         "complianceState"]
_KEYS = ["resource_key", "assignment_key"]


def _worst(day: pd.DataFrame) -> pd.DataFrame:
    """One row per (resource, assignment): its worst state of the day's newest records.

    Ids are compared without regard to case, as the service treats them; an undocumented
    state is kept as the service wrote it, below every documented one.
    """
    newest = newest_records(day)
    frame = pd.DataFrame({
        "resource_key": newest["resourceId"].astype("string").str.lower(),
        "assignment_key": newest["policyAssignmentId"].astype("string").str.lower(),
        "resourceId": newest["resourceId"].astype("string"),
        "policyAssignmentId": newest["policyAssignmentId"].astype("string"),
        "policyAssignmentName": newest["policyAssignmentName"].astype("string"),
        "resourceType": newest["resourceType"].astype("string"),
        "resourceGroup": newest["resourceGroup"].astype("string"),
        "state": newest["complianceState"].astype("string"),
        "rank": state_rank(newest["complianceState"])})
    worst = frame.sort_values("rank", kind="stable").drop_duplicates(_KEYS, keep="last")
    return worst.drop(columns="rank").set_index(_KEYS)


def _kinds(before: pd.Series, after: pd.Series) -> pd.Series:
    """Name the change of each resource from its state ``before`` to ``after`` (NA: absent)."""
    was, now = before.fillna("\0"), after.fillna("\0")  # "\0": not evaluated that day
    kind = pd.Series(pd.NA, index=before.index, dtype="object")
    moved = was != now
    kind[moved & before.notna()] = "other state"
    kind[moved & (was == "NonCompliant") & (now == "Compliant")] = "remediated"
    kind[moved & (now == "Exempt")] = "exempted"
    kind[moved & (now == "NonCompliant")] = "newly non-compliant"
    kind[moved & after.isna()] = "no longer evaluated"
    return kind


def _day_of(value: Any, parameter: str) -> dt.date:
    when = check_time(value, parameter)
    assert when is not None
    return when.date()


def policy_changes(store: str, start: Any = None, end: Any = None, *,
                   scope: str | None = None,
                   storage_options: dict[str, Any] | None = None) -> pd.DataFrame:
    """List what changed in policy compliance between two days of the history store.

    Each resource is taken at its worst state per assignment on each day (the newest
    evaluation of each of its policies), as the compliance dashboard counts resources.

    Parameters
    ----------
    store : str
        The store of :func:`~toolkit.snapshot_policy_states`.
    start, end : date, datetime, Timestamp or ISO string, optional
        The earlier and the later UTC day. Default: the two latest days the store holds
        (``end`` alone: the latest day before it; ``start`` alone: the latest day).
    scope : str, optional
        Only this scope's partitions (as :func:`~toolkit.read_policy_history` takes it).
    storage_options : dict, optional
        Passed to fsspec.

    Returns
    -------
    pandas.DataFrame
        One row per change, by kind then assignment and resource: ``change`` (category:
        ``newly non-compliant``, ``remediated``, ``exempted``, ``other state``,
        ``no longer evaluated``, ``assignment added``, ``assignment removed``),
        ``policyAssignmentName``, ``resourceId``, ``resourceType``, ``resourceGroup``
        (strings; the resource columns empty on an assignment's row), ``before``, ``after``
        (categories: the worst state on each day; empty where there was none), ``resources``
        (``Int64``: on an assignment's row, the resources it evaluated that day),
        ``policyAssignmentId``, ``day_before``, ``day_after`` (strings, ISO days). Empty, with
        every column, when nothing changed. A resource newly evaluated in a state other than
        non-compliant or exempt is no change.

    Raises
    ------
    ValidationError
        A bad ``start`` or ``end``, or ``start`` not before ``end`` (before reading); a store
        (or scope) holding fewer than two days to compare, said from its partitions' names.
    """
    first = None if start is None else _day_of(start, "start")
    last = None if end is None else _day_of(end, "end")
    if first is not None and last is not None and first >= last:
        raise ValidationError("start", start, f"must be a day before end ({last.isoformat()})")
    if first is None or last is None:
        days = stored_days(store, scope, storage_options)
        if last is not None:
            days = [d for d in days if d < last]
        elif first is not None:
            days = [d for d in days if d > first]
        needed = 1 if first is not None or last is not None else 2
        if len(days) < needed:
            where = f" of {scope}" if scope is not None else ""
            raise ValidationError("store", store, f"must hold two days{where} to compare; it "
                                                  f"holds {len(days)} such day(s)")
        if last is None:
            last = days[-1]
        if first is None:
            first = days[-2] if end is None else days[-1]
    before = read_policy_history(store, start=first, end=first, columns=_READ, scope=scope,
                                 storage_options=storage_options)
    after = read_policy_history(store, start=last, end=last, columns=_READ, scope=scope,
                                storage_options=storage_options)
    old, new = _worst(before), _worst(after)
    span = {"day_before": first.isoformat(), "day_after": last.isoformat()}
    old_assignments = set(old.index.get_level_values("assignment_key"))
    new_assignments = set(new.index.get_level_values("assignment_key"))
    rows: list[dict[str, Any]] = []
    for kind, frame, gone in (("assignment added", new, new_assignments - old_assignments),
                              ("assignment removed", old, old_assignments - new_assignments)):
        for assignment in sorted(gone):
            part = frame.xs(assignment, level="assignment_key")
            rows.append({"change": kind, **span, "resources": len(part),
                         "policyAssignmentName": part["policyAssignmentName"].iloc[0],
                         "policyAssignmentId": part["policyAssignmentId"].iloc[0]})
    both = old_assignments & new_assignments
    joined = old.merge(new, how="outer", left_index=True, right_index=True,
                       suffixes=("_old", "_new"))
    joined = joined[joined.index.get_level_values("assignment_key").isin(both)]
    kinds = _kinds(joined["state_old"], joined["state_new"])
    changed = joined.assign(change=kinds)[kinds.notna()]
    for _, row in changed.iterrows():
        side = "_new" if pd.notna(row["state_new"]) else "_old"
        rows.append({"change": row["change"], **span,
                     **{c: row[f"{c}{side}"] for c in (
                         "policyAssignmentName", "policyAssignmentId", "resourceId",
                         "resourceType", "resourceGroup")},
                     "before": row["state_old"], "after": row["state_new"]})
    order = {k: i for i, k in enumerate(CHANGES)}
    rows.sort(key=lambda r: (order[r["change"]], str(r.get("policyAssignmentName") or ""),
                             str(r.get("resourceId") or "")))
    attrs = {"operation": "policy_changes", "store": store,
             "sandbox": bool(before.attrs.get("sandbox") or after.attrs.get("sandbox"))}
    logger.debug("policy_changes: %d changes from %s to %s", len(rows), first, last)
    return build_frame(rows, POLICY_CHANGES, attrs, flat=True)


RECORD = register(OperationRecord("policy_changes", schema=POLICY_CHANGES,
                                  derived_from="snapshot_policy_states"))
