"""The latest policy states of a scope read through Resource Graph, reconciled with the summary.

:func:`resource_graph_policy_states` reads ``policyresources`` (the latest state of every
resource and policy) through :func:`~toolkit.arm.resource_graph`, every page, at a management
group (the tenant root group: the whole tenant), a subscription or a resource group, into the
frame :func:`~toolkit.arm.policy_states` gives (the same columns and dtypes, those Resource Graph
holds). Completeness is checked, not assumed: the resources and policies in each compliance state
counted from the frame are set against ``policyStates/latest/summarize``
(:func:`~toolkit.arm.policy_summary`) at the same scope, and ``df.attrs["reconciliation"]`` holds
both; a ReconciliationWarning names the counts that differ.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import pandas as pd

from toolkit._core.errors import ReconciliationWarning, ValidationError, warn_user
from toolkit._core.frames import convert_column
from toolkit._core.registry import OperationRecord, register
from toolkit._core.schemas import Schema
from toolkit._core.validate import check_bool, check_int
from toolkit._spec.arm import (
    COMPLIANCE_STATES,
    POLICY_STATE_FIELDS,
    RESOURCE_GRAPH_POLICY_STATES_TYPE,
)
from toolkit.arm._schemas import POLICY_STATES
from toolkit.arm.resourcegraph import resource_graph
from toolkit.arm.scopes import resolve_scope
from toolkit.arm.summary import policy_summary
from toolkit.connection import get_connection

if TYPE_CHECKING:
    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["resource_graph_policy_states"]

OPERATION = "resource_graph_policy_states"
#: The record fields Resource Graph holds in a policy state's ``properties`` (all but the
#: deprecated ``isCompliant``), in the order of the records.
FIELDS = tuple(f for f in POLICY_STATE_FIELDS if f != "isCompliant")
#: The frame: the policy states' columns that Resource Graph holds, typed as policy_states.
SCHEMA = Schema(OPERATION, tuple(c for c in POLICY_STATES.columns if c.name in FIELDS))
_SCOPE_KINDS = ("managementGroup", "subscription", "resourceGroup")
#: How the summary names the states, in the roll-up's rank (worst last).
_WORDS = {s: s.lower() for s in COMPLIANCE_STATES}
_POLICY_KEY = ("policyAssignmentId", "policyDefinitionId", "policyDefinitionReferenceId")


def _query(ns: str, resource_group: str | None) -> str:
    kind = f"{ns}.{RESOURCE_GRAPH_POLICY_STATES_TYPE}".lower()
    where = f"policyresources\n| where type =~ '{kind}'"
    if resource_group is not None:
        where += f"\n| where resourceGroup =~ '{resource_group.lower()}'"
    fields = []
    for name in FIELDS:
        col = SCHEMA[name]
        if col.kind == "datetime":
            fields.append(f"{name} = todatetime(properties.{name})")
        elif col.kind == "list":
            fields.append(f"{name} = properties.{name}")
        else:
            fields.append(f"{name} = tostring(properties.{name})")
    return where + "\n| project id,\n    " + ",\n    ".join(fields)


def _worst(df: pd.DataFrame, key: list[str]) -> dict[str, int]:
    """Count the groups of ``key`` by their worst compliance state."""
    if df.empty:
        return {_WORDS[s]: 0 for s in COMPLIANCE_STATES}
    rank = df["complianceState"].cat.codes.rename("rank")
    frame = pd.concat([df[key].astype(object).fillna(""), rank], axis=1)
    worst = frame.groupby(key, sort=False, dropna=False)["rank"].max()
    counts = worst.value_counts()
    return {_WORDS[s]: int(counts.get(i, 0)) for i, s in enumerate(COMPLIANCE_STATES)}


def _reconcile(df: pd.DataFrame, summary: pd.DataFrame, scope: str) -> dict[str, Any]:
    """Set the frame's counts of resources and policies per state against the summary's."""
    mine = {f"resources_{k}": v for k, v in _worst(df, ["resourceId"]).items()}
    mine.update({f"policies_{k}": v for k, v in _worst(df, list(_POLICY_KEY)).items()})
    top = summary[summary["level"] == "scope"]
    counts: dict[str, dict[str, int | None]] = {}
    for name, value in mine.items():
        theirs = top[name].iloc[0] if len(top) and name in top.columns else None
        counts[name] = {"resource_graph": value,
                        "policy_summary": None if theirs is None or pd.isna(theirs)
                        else int(theirs)}
    differ = {name: c for name, c in counts.items()
              if c["policy_summary"] is not None and c["resource_graph"] != c["policy_summary"]}
    return {"against": "policy_summary", "scope": scope, "matches": not differ,
            "counts": counts, "differences": sorted(differ)}


def resource_graph_policy_states(
    subscription_id: str | None = None,
    resource_group: str | None = None,
    *,
    scope: str | None = None,
    reconcile: bool = True,
    incomplete: str = "raise",
    max_items: int | None = None,
    connection: Connection | None = None,
) -> pd.DataFrame:
    """Read the latest policy states of a scope through Resource Graph, and check them.

    Every page of ``policyresources`` is read (the query projects ``id``, so the service pages
    it); then, with ``reconcile``, the resources and policies in each compliance state counted
    from the frame are set against :func:`~toolkit.arm.policy_summary` at the same scope.

    Parameters
    ----------
    subscription_id, resource_group, scope
        The scope, as :func:`~toolkit.arm.policy_states` takes it: a subscription, a resource
        group, or ``scope=`` a management group (the tenant root group's id is the tenant id:
        the whole tenant), a subscription or a resource group in either vocabulary.
    reconcile : bool
        Compare with the summary (one more request) of the window the states were evaluated in
        (their first ``timestamp`` to their last); ``attrs["reconciliation"]`` holds both counts
        and that window, and a ReconciliationWarning names the counts that differ.
    incomplete : {"raise", "warn"}
        As :func:`~toolkit.arm.resource_graph` (the query projects ``id``: the service pages it
        whole unless it truncates it).
    max_items : int, optional
        Stop after this many states (warns that the result is truncated; no reconciliation).
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row per latest state: ``id`` (the state's Resource Graph id, string), then the
        columns of :func:`~toolkit.arm.policy_states` that Resource Graph holds, typed alike:
        ``timestamp`` (UTC), ``resourceId``, ``policyAssignmentId``, ``policyDefinitionId``,
        ``effectiveParameters``, ``subscriptionId``, ``resourceType``, ``resourceLocation``,
        ``resourceGroup``, ``resourceTags``, ``policyAssignmentName``,
        ``policyAssignmentOwner``, ``policyAssignmentParameters``, ``policyAssignmentScope``,
        ``policyDefinitionName``, ``policyDefinitionAction``, ``policyDefinitionCategory``,
        ``policySetDefinitionId``, ``policySetDefinitionName``, ``policySetDefinitionOwner``,
        ``policySetDefinitionCategory``, ``policySetDefinitionParameters``,
        ``managementGroupIds``, ``policyDefinitionReferenceId`` (categories),
        ``complianceState`` (ordered category), ``policyDefinitionGroupNames`` (list),
        ``policyDefinitionVersion``, ``policySetDefinitionVersion``,
        ``policyAssignmentVersion`` (categories). An empty text is null. ``attrs`` holds
        :func:`~toolkit.arm.resource_graph`'s and ``scope`` and ``reconciliation``
        (``matches``, ``counts``: per ``resources_<state>`` and ``policies_<state>`` the
        frame's count and the summary's, ``differences``).

    Raises
    ------
    ValidationError
        Bad arguments, or a scope other than a management group, subscription or resource group
        (before any request).
    IncompleteResultError
        The service gave part of the states and no way to read the rest.
    """
    where = resolve_scope(subscription_id, resource_group, scope)
    if where.kind not in _SCOPE_KINDS:
        raise ValidationError("scope", scope, "must be a management group, a subscription or a "
                                              f"resource group (not a {where.kind})")
    check_bool(reconcile, "reconcile")
    if max_items is not None:
        max_items = check_int(max_items, "max_items", minimum=0)
    conn = get_connection(connection)
    path = where.path(conn.namespace)
    if where.kind == "managementGroup":
        group = path.rstrip("/").rsplit("/", 1)[-1]
        subs, groups = None, [group]
    else:
        subs, groups = [str(where.subscription_id)], None
    rg = where.resource_group if where.kind == "resourceGroup" else None
    raw = resource_graph(_query(conn.namespace, rg), subs, groups, incomplete=incomplete,
                         max_items=max_items, connection=conn)
    data: dict[str, Any] = {"id": raw["id"].array if "id" in raw else []}
    for col in SCHEMA.columns:
        values = raw[col.name].tolist() if col.name in raw else [None] * len(raw)
        values = [None if v == "" or (v is not None and v is pd.NA) else v for v in values]
        data[col.name] = convert_column(values, col)
    df = pd.DataFrame(data, index=pd.RangeIndex(len(raw)))
    df["id"] = df["id"].astype("string")
    df.attrs.update(raw.attrs)
    df.attrs.update(operation=OPERATION, scope=path)
    if reconcile and not raw.attrs.get("truncated"):
        # the summary of the window the states were evaluated in, from the first to the last
        start = end = None
        if df["timestamp"].notna().any():
            start = df["timestamp"].min()
            end = df["timestamp"].max() + pd.Timedelta(seconds=1)
        summary = policy_summary(scope=path, start=start, end=end, connection=conn)
        result = _reconcile(df, summary, path)
        result["window"] = [None if t is None else t.isoformat() for t in (start, end)]
        df.attrs["reconciliation"] = result
        if not result["matches"]:
            detail = ", ".join(f"{name} {result['counts'][name]['resource_graph']} against "
                               f"{result['counts'][name]['policy_summary']}"
                               for name in result["differences"])
            warn_user(f"{OPERATION}: the states read through Resource Graph and the policy "
                      f"summary at {path} differ ({detail}). Resource Graph holds each pair's "
                      "newest state as its own refresh left it; the summary counts the states "
                      "evaluated in the last day: look at the resources behind the counts "
                      "before trusting either.", ReconciliationWarning)
        else:
            logger.debug("%s: the summary at %s agrees", OPERATION, path)
    return df


RECORD = register(OperationRecord(OPERATION, schema=SCHEMA))
