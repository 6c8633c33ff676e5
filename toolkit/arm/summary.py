"""The compliance dashboard's numbers: ``policyStates/latest/summarize`` at any scope.

:func:`policy_summary` answers what the portal's compliance page shows for a scope: non-compliant
resources and policies overall, per assignment, per definition of an assignment and per policy
group, with the resources and policies in each compliance state, as one typed frame with a
``level`` column. A resource counts once per level with its worst state there, as
:func:`~toolkit.arm.compliance_summary` counts it from the records.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import pandas as pd

from toolkit._core.errors import ProtocolError, ValidationError
from toolkit._core.frames import build_frame
from toolkit._core.messages import Request
from toolkit._core.provenance import provenance
from toolkit._core.ratelimits import quotas_left
from toolkit._core.registry import OperationRecord, register
from toolkit._core.validate import (
    check_api_version,
    check_expression,
    check_int,
    check_time,
    iso_time,
)
from toolkit.arm._schemas import POLICY_SUMMARY
from toolkit.arm.policy import API_VERSION
from toolkit.arm.scopes import resolve_scope
from toolkit.connection import get_connection

if TYPE_CHECKING:
    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["policy_summary"]

OPERATION = "policy_summary"
_STATES = ("compliant", "noncompliant", "conflict", "exempt", "unknown")


def _counts(results: Any, row: dict[str, Any]) -> None:
    if not isinstance(results, dict):
        raise ProtocolError(f"{OPERATION}: 'results' is not an object")
    row["nonCompliantResources"] = results.get("nonCompliantResources")
    row["nonCompliantPolicies"] = results.get("nonCompliantPolicies")
    row["queryResultsUri"] = results.get("queryResultsUri")
    for what, key in (("resources", "resourceDetails"), ("policies", "policyDetails"),
                      ("groups", "policyGroupDetails")):
        details = results.get(key)
        if details is None:
            continue  # not given (older versions give no group details): null counts
        for state in _STATES:
            row[f"{what}_{state}"] = 0
        for item in details if isinstance(details, list) else []:
            state = str(item.get("complianceState", "")).lower() if isinstance(item, dict) else ""
            if state in _STATES:
                row[f"{what}_{state}"] = item.get("count")


def _rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    top: dict[str, Any] = {"level": "scope"}
    _counts(summary.get("results") or {}, top)
    rows = [top]
    for a in summary.get("policyAssignments") or []:
        if not isinstance(a, dict):
            continue
        aid = a.get("policyAssignmentId")
        base = {"policyAssignmentId": aid,
                "policyAssignmentName": aid.rsplit("/", 1)[-1] if isinstance(aid, str) else None,
                "policySetDefinitionId": a.get("policySetDefinitionId") or None}
        row = {"level": "assignment", **base}
        _counts(a.get("results") or {}, row)
        rows.append(row)
        for d in a.get("policyDefinitions") or []:
            if isinstance(d, dict):
                row = {"level": "definition", **base,
                       "policyDefinitionId": d.get("policyDefinitionId"),
                       "policyDefinitionReferenceId": d.get("policyDefinitionReferenceId") or None,
                       "policyDefinitionGroupNames": d.get("policyDefinitionGroupNames"),
                       "effect": d.get("effect")}
                _counts(d.get("results") or {}, row)
                rows.append(row)
        for g in a.get("policyGroups") or []:
            if isinstance(g, dict):
                row = {"level": "group", **base,
                       "policyGroupName": g.get("policyGroupName") or None}
                _counts(g.get("results") or {}, row)
                rows.append(row)
    return rows


def policy_summary(
    subscription_id: str | None = None,
    resource_group: str | None = None,
    *,
    scope: str | None = None,
    filter: str | None = None,
    start: Any = None,
    end: Any = None,
    top: int | None = None,
    api_version: str = API_VERSION,
    connection: Connection | None = None,
) -> pd.DataFrame:
    """Summarize the latest policy states at a scope, as the compliance dashboard does.

    Parameters
    ----------
    subscription_id, resource_group, scope
        The scope, as :func:`~toolkit.arm.policy_states` takes it (a subscription alone, a
        resource group, or ``scope=`` any ARM scope string in either vocabulary).
    filter : str, optional
        OData ``$filter`` applied to the records before summarizing.
    start, end : datetime, pandas.Timestamp or ISO 8601 str, optional
        The window (``$from``, ``$to``; the service defaults to the day before the request).
    top : int, optional
        Keep the ``top`` assignments with the most non-compliant resources (``$top``, >= 0).
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row for the scope (``level`` ``"scope"``), one per assignment (``"assignment"``),
        per definition of an assignment (``"definition"``) and per policy group of an
        assignment (``"group"``): ``level`` (ordered category), ``policyAssignmentId``,
        ``policyAssignmentName``, ``policySetDefinitionId``, ``policyDefinitionId``,
        ``policyDefinitionReferenceId``, ``policyGroupName``, ``effect`` (categories; null where
        the level has none), ``policyDefinitionGroupNames`` (list), ``nonCompliantResources``,
        ``nonCompliantPolicies`` (the service gives it at the scope and assignment levels only),
        then ``resources_<state>``, ``policies_<state>`` and ``groups_<state>`` for each state
        ``compliant``, ``noncompliant``, ``conflict``, ``exempt``, ``unknown`` (``Int64``:
        resources, policies, or policy groups, whose worst state at that level is that state;
        null where the answer has no such details),
        and ``queryResultsUri`` (string: the query that lists the records behind the row, those
        that are not compliant). An empty ``policySetDefinitionId``,
        ``policyDefinitionReferenceId`` or ``policyGroupName`` (the service's ``""`` for an
        assignment of a single definition, and for the group of policies in no group) is null.
        ``attrs["quota_left"]``: what the policy-insights provider's own quota had left, when
        the answer counted it.

    Raises
    ------
    ValidationError
        Bad arguments (before any request).
    ApiError
        From the service (a bad ``$filter`` names the problem).
    """
    where = resolve_scope(subscription_id, resource_group, scope)
    filter_ = check_expression(filter, "filter")
    if top is not None:
        check_int(top, "top", minimum=0)
    start_ts = check_time(start, "start")
    end_ts = check_time(end, "end")
    if start_ts is not None and end_ts is not None and not start_ts < end_ts:
        raise ValidationError("start", start, f"must be before end ({iso_time(end_ts)})")
    check_api_version(api_version)
    conn = get_connection(connection)
    pipe = conn.pipeline("arm")
    path = (f"{where.path(conn.namespace)}/providers/{conn.namespace}.PolicyInsights/"
            "policyStates/latest/summarize")
    params = {"api-version": api_version, "$top": top, "$filter": filter_,
              "$from": iso_time(start_ts) if start_ts is not None else None,
              "$to": iso_time(end_ts) if end_ts is not None else None}
    response = pipe.send(Request("POST", path, params=params, operation=OPERATION))
    body = response.json_object()
    values = body.get("value")
    if not isinstance(values, list):
        raise response.refuse(f"{OPERATION}: 'value' is not a list")
    rows = [r for v in values if isinstance(v, dict) for r in _rows(v)]
    attrs = provenance(OPERATION, api_version, response.url,
                       [response.request_id] if response.request_id else [])
    attrs["scope"] = where.path(conn.namespace)
    left = quotas_left(response.headers, response.header_prefix)
    if left:
        attrs["quota_left"] = left
    return build_frame(rows, POLICY_SUMMARY, attrs, flat=True)


RECORD = register(OperationRecord(OPERATION, schema=POLICY_SUMMARY))
