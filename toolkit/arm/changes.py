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
from toolkit._spec.arm import COMPLIANCE_STATES
from toolkit.arm.compliance import _newest, _rank
from toolkit.arm.history import read_policy_history

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
_NAMES = dict(enumerate(COMPLIANCE_STATES))


def _worst(day: pd.DataFrame) -> pd.DataFrame:
    """One row per (resource, assignment): its worst state of the day's newest records."""
    newest = _newest(day)
    frame = pd.DataFrame({
        "resourceId": newest["resourceId"].astype("string").str.lower(),
        "resource": newest["resourceId"].astype("string"),
        "policyAssignmentId": newest["policyAssignmentId"].astype("string").str.lower(),
        "assignment": newest["policyAssignmentId"].astype("string"),
        "policyAssignmentName": newest["policyAssignmentName"].astype("string"),
        "resourceType": newest["resourceType"].astype("string"),
        "resourceGroup": newest["resourceGroup"].astype("string"),
        "rank": _rank(newest["complianceState"])})
    keys = ["resourceId", "policyAssignmentId"]
    worst = frame.sort_values("rank", kind="stable").drop_duplicates(keys, keep="last")
    return worst.set_index(keys)


def _kind(before: int | None, after: int | None) -> str | None:
    if before == after:
        return None
    if after is None:
        return "no longer evaluated"
    state = _NAMES[after]
    if state == "NonCompliant":
        return "newly non-compliant"
    if state == "Exempt":
        return "exempted"
    if before is not None and _NAMES[before] == "NonCompliant" and state == "Compliant":
        return "remediated"
    if before is None:  # a resource newly evaluated, not non-compliant: no change to report
        return None
    return "other state"


def _stored_days(store: str, scope: str | None,
                 storage_options: dict[str, Any] | None) -> list[str]:
    days = read_policy_history(store, columns=["complianceState"], scope=scope,
                               storage_options=storage_options)["day"]
    return sorted({str(d) for d in days.dropna()})


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
        (``end`` alone: the latest day before it).
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
        every column, when nothing changed.

    Raises
    ------
    ValidationError
        A store with fewer than two days, or ``start`` not before ``end`` (before reading).
    """
    if start is None or end is None:
        days = _stored_days(store, scope, storage_options)
        if end is not None:
            end_day = pd.Timestamp(end).date().isoformat()
            days = [d for d in days if d <= end_day]
        if len(days) < 2:
            raise ValidationError("store", store, "must hold at least two days of the scope to "
                                                  f"compare (it holds {len(days)})")
        start = days[-2] if start is None else start
        end = days[-1] if end is None else end
    first: dt.date = pd.Timestamp(start).date()
    last: dt.date = pd.Timestamp(end).date()
    if first >= last:
        raise ValidationError("start", start, f"must be a day before end ({last.isoformat()})")
    before = read_policy_history(store, start=first, end=first, columns=_READ, scope=scope,
                                 storage_options=storage_options)
    after = read_policy_history(store, start=last, end=last, columns=_READ, scope=scope,
                                storage_options=storage_options)
    old, new = _worst(before), _worst(after)
    rows: list[dict[str, Any]] = []
    span = {"day_before": first.isoformat(), "day_after": last.isoformat()}
    old_assignments = set(old.index.get_level_values("policyAssignmentId"))
    new_assignments = set(new.index.get_level_values("policyAssignmentId"))
    for kind, frame, gone in (("assignment added", new, new_assignments - old_assignments),
                              ("assignment removed", old, old_assignments - new_assignments)):
        for assignment in sorted(gone):
            part = frame.xs(assignment, level="policyAssignmentId")
            rows.append({"change": kind, **span, "resources": len(part),
                         "policyAssignmentName": part["policyAssignmentName"].iloc[0],
                         "policyAssignmentId": part["assignment"].iloc[0]})
    both = old_assignments & new_assignments
    joined = old.join(new, how="outer", lsuffix="_old", rsuffix="_new")
    for key, row in joined.iterrows():
        if not isinstance(key, tuple) or key[1] not in both:
            continue
        was = None if pd.isna(row["rank_old"]) else int(row["rank_old"])
        now = None if pd.isna(row["rank_new"]) else int(row["rank_new"])
        change = _kind(was if was is None or was >= 0 else None,
                     now if now is None or now >= 0 else None)
        if change is None:
            continue
        side = "_new" if now is not None else "_old"
        rows.append({"change": change, **span,
                     "policyAssignmentName": row[f"policyAssignmentName{side}"],
                     "policyAssignmentId": row[f"assignment{side}"],
                     "resourceId": row[f"resource{side}"],
                     "resourceType": row[f"resourceType{side}"],
                     "resourceGroup": row[f"resourceGroup{side}"],
                     "before": None if was is None else _NAMES.get(was),
                     "after": None if now is None else _NAMES.get(now)})
    order = {k: i for i, k in enumerate(CHANGES)}
    rows.sort(key=lambda r: (order[r["change"]], str(r.get("policyAssignmentName") or ""),
                             str(r.get("resourceId") or "")))
    attrs = {"operation": "policy_changes", "store": store,
             "sandbox": bool(before.attrs.get("sandbox") or after.attrs.get("sandbox"))}
    logger.debug("policy_changes: %d changes from %s to %s", len(rows), first, last)
    return build_frame(rows, POLICY_CHANGES, attrs, flat=True)


RECORD = register(OperationRecord("policy_changes", schema=POLICY_CHANGES))
