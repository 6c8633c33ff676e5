"""Serve ``policyStates/latest/summarize``: the dashboard's numbers of a scope.

``$filter``, ``$from``, ``$to`` and ``$top`` (the most non-compliant assignments kept): the
non-compliant resources and policies in the scope, per assignment, per definition of an
assignment and per policy group, with the resources and policies in each compliance state, and a
link to the records behind each row. A resource counts once per level with its worst state there.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import numpy as np
import pandas as pd

from toolkit._spec.arm import POLICY_API_VERSIONS
from toolkit.sandbox.arm.common import arm_reply
from toolkit.sandbox.arm.odata import (
    ODataError,
    evaluate_filter,
    parse_filter,
)
from toolkit.sandbox.arm.policy.options import held_window, query_options, resource_word
from toolkit.sandbox.arm.policy.results import record_table, scope_rows
from toolkit.sandbox.arm.policy.scopes import Scope, policy_world
from toolkit.sandbox.http import Reply, Request, SandboxHTTPError

#: What a summary's query links leave unencoded in ``$filter`` (the rest is percent-encoded).
_LINK_SAFE = "'()$="
#: How the summary names the compliance states (the service's own lower-case words).
_SUMMARY_STATES = ("compliant", "noncompliant", "conflict", "exempt", "unknown")
#: Roll-up rank of STATES (worst highest): Unknown < Exempt < Conflict < Compliant < NonCompliant.
_RANK = np.array([3, 4, 2, 1, 0], dtype=np.int8)
_BY_RANK = np.array([4, 3, 2, 0, 1], dtype=np.int8)  # rank -> state code


def details(ranks: np.ndarray) -> list[dict[str, Any]]:
    """Count the states present, worst first.

    Returns
    -------
    list of dict
        ``{"complianceState", "count"}`` per state present.
    """
    counts = np.bincount(ranks, minlength=5)
    return [{"complianceState": _SUMMARY_STATES[_BY_RANK[r]], "count": int(counts[r])}
            for r in range(4, -1, -1) if counts[r]]


def worst(keys: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """Give the worst (highest) rank of each distinct key.

    Returns
    -------
    numpy.ndarray
        One rank per key, in the order the keys first appear (a groupby's maximum, without the
        cost of a groupby: a summary has one level per assignment, definition and group).
    """
    codes, uniques = pd.factorize(keys)
    out = np.zeros(len(uniques), dtype=ranks.dtype)
    np.maximum.at(out, codes, ranks)
    return out


def level_results(frame: pd.DataFrame, uri: str, groups: pd.DataFrame, *,
             policies: bool = True) -> dict[str, Any]:
    """Give the ``results`` of one level of the summary.

    Parameters
    ----------
    frame : pandas.DataFrame
        The level's records: ``res``, ``policy``, ``rank``.
    uri : str
        The link to the records behind the level.
    groups : pandas.DataFrame
        The same rows once per policy group (``group``).
    policies : bool
        Give ``nonCompliantPolicies`` (the scope and assignment levels only, as the service).

    Returns
    -------
    dict
        ``queryResultsUri``, ``nonCompliantResources`` (``nonCompliantPolicies``),
        ``resourceDetails``, ``policyDetails``, ``policyGroupDetails``.
    """
    ranks = frame["rank"].to_numpy()
    worst_res = worst(frame["res"].to_numpy(), ranks)
    worst_pol = worst(frame["policy"].to_numpy(), ranks)
    worst_grp = worst(groups["group"].to_numpy(), groups["rank"].to_numpy())
    nc = 4
    out: dict[str, Any] = {
        "queryResultsUri": uri,
        "nonCompliantResources": int((worst_res == nc).sum()),
    }
    if policies:
        out["nonCompliantPolicies"] = int((worst_pol == nc).sum())
    out.update(resourceDetails=details(worst_res), policyDetails=details(worst_pol),
               policyGroupDetails=details(worst_grp))
    return out


def quoted(value: str) -> str:
    """Quote a string as an OData literal (``'`` doubled).

    Returns
    -------
    str
        The literal.
    """
    return "'" + value.replace("'", "''") + "'"


def summarize(request: Request, scope: Scope) -> Reply:
    """Answer ``summarize`` at ``scope``: the summary of the latest records in the window.

    Returns
    -------
    Reply
        One summary: the scope's results, then each assignment's (the most non-compliant first,
        ``$top`` of them) with its definitions and policy groups.

    Raises
    ------
    SandboxHTTPError
        400 for ``default``, ``$expand`` or a bad option or filter.
    """
    resource_word(request, ("latest",))
    start, end, _offset, top = query_options(request)
    if request.param("$expand"):
        raise SandboxHTTPError(400, "InvalidQueryParameterValue",
                               "The query parameter '$expand' is not supported by summarize.")
    pw = policy_world(request)
    lo, hi = held_window(request, start, end)
    rec, rows = scope_rows(pw, scope, "latest", lo, hi)
    flt = request.param("$filter")
    if flt:
        table = record_table(pw, rec, rows)
        try:
            rows = table.take(np.flatnonzero(evaluate_filter(parse_filter(flt), table))).rows
        except ODataError as err:
            raise SandboxHTTPError(400, "InvalidQueryParameterValue", err.message) from None
    pairs = rec.pair[rows]
    frame = pd.DataFrame({"res": rec.pair_resource[pairs], "policy": rec.pair_policy[pairs],
                          "rank": _RANK[rec.state[rows]]})
    assignment_of = np.array([p.fields["policyAssignmentId"] for p in pw.policies], dtype=object)
    frame["assignment"] = assignment_of[frame["policy"].to_numpy()]
    # a policy outside every group of its set counts in the group "" (as the service counts it)
    group_rows = [(i, g) for i, p in enumerate(pw.policies) for g in (p.groups or [""])]
    group_map = pd.DataFrame(group_rows, columns=["policy", "group"])
    groups = frame.merge(group_map, on="policy")
    # the window as the service's links write it ("2019-10-12 19:48:53Z"), percent-encoded
    window = "&".join(f"{name}={quote(when.strftime('%Y-%m-%d %H:%M:%SZ'), safe=':')}"
                      for name, when in (("$from", start), ("$to", end)))
    base = request.path[:request.path.lower().rindex("/policystates/") + len("/policyStates")]
    version = request.param("api-version") or POLICY_API_VERSIONS[0]

    def uri(*conditions: str) -> str:
        # the records behind a row: the non-compliant ones of its assignment, definition or
        # group, within the request's own filter (as the service's links filter them)
        clauses = ([f"({flt})"] if flt else []) + ["IsCompliant eq false", *conditions]
        return (f"{request.base_url}{base}/latest/queryResults?api-version={version}&{window}"
                f"&$filter={quote(' and '.join(clauses), safe=_LINK_SAFE)}")

    assignments: list[dict[str, Any]] = []
    for aid, part in frame.groupby("assignment", sort=True):
        members = [pw.policies[i] for i in np.unique(part["policy"].to_numpy(dtype=np.int64))]
        first = members[0]
        cond = f"PolicyAssignmentId eq {quoted(str(aid))}"
        a_groups = groups[groups["assignment"] == aid]
        groups_of = dict(iter(a_groups.groupby("policy", sort=False)))
        definitions = []
        for pol, pp in part.groupby("policy", sort=True):
            p = pw.policies[int(pp["policy"].to_numpy(dtype=np.int64)[0])]
            dconds = [cond, f"PolicyDefinitionId eq {quoted(p.fields['policyDefinitionId'])}"]
            if p.reference_id:
                dconds.append(f"PolicyDefinitionReferenceId eq {quoted(p.reference_id)}")
            definition: dict[str, Any] = {
                "policyDefinitionId": p.fields["policyDefinitionId"],
                "policyDefinitionReferenceId": p.reference_id or "",
                "effect": p.definition.effect,
                "results": level_results(pp, uri(*dconds), groups_of[pol], policies=False),
            }
            if p.groups:
                definition["policyDefinitionGroupNames"] = list(p.groups)
            definitions.append(definition)
        policy_groups = []
        for g, gp in a_groups.groupby("group", sort=True):
            inside = [m for m in members if (g in m.groups) or (g == "" and not m.groups)]
            gconds = [cond]
            refs = [m.reference_id for m in inside if m.reference_id]
            if g:  # as the service's links name a group
                gconds.append(f"{quoted(str(g))} IN PolicyDefinitionGroupNames")
            elif len(inside) < len(members) and refs:  # the set's policies in no group
                gconds.append("(" + " or ".join(f"PolicyDefinitionReferenceId eq {quoted(r)}"
                                                for r in refs) + ")")
            policy_groups.append({
                "policyGroupName": g,
                "results": level_results(gp, uri(*gconds), gp, policies=False)})
        assignments.append({
            "policyAssignmentId": aid,
            "policySetDefinitionId": first.fields["policySetDefinitionId"] or "",
            "results": level_results(part, uri(cond), a_groups),
            "policyDefinitions": definitions,
            "policyGroups": policy_groups,
        })
    # the most non-compliant assignments first; $top keeps that many
    assignments.sort(key=lambda a: (-a["results"]["nonCompliantResources"],
                                    a["policyAssignmentId"].lower()))
    if top is not None:
        assignments = assignments[:top]
    context = f"{request.base_url}{base}/$metadata#summary"
    summary = {"@odata.id": None, "@odata.context": f"{context}/$entity",
               "results": level_results(frame, uri(), groups),
               "policyAssignments": assignments}
    return arm_reply(request, {"@odata.context": context, "@odata.count": 1, "value": [summary]})
