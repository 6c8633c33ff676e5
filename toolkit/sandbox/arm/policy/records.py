"""Write policy-state records as the service does: JSON bytes, one record at a time.

The plain records are joined from fragments the world keeps per resource and per policy (a page
of a thousand records is the sandbox's busiest answer); ``$select`` and ``$expand``
(``components``, ``components($filter=...;$apply=...)``, ``policyEvaluationDetails``) take the
general path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson
import pandas as pd

from toolkit.sandbox.arm.odata import (
    FrameTable,
    Table,
    apply_transformations,
    evaluate_filter,
    parse_apply,
    parse_filter,
)
from toolkit.sandbox.arm.policy.world import (
    FIELDS,
    STATES,
    TYPES,
    GroupRecords,
    Policy,
    PolicyWorld,
    Resource,
)
from toolkit.sandbox.http import SandboxHTTPError


@dataclass
class Expand:
    """One ``$expand`` item: ``components`` (its ``$filter`` and ``$apply``) or the details."""

    name: str
    filter: str | None = None
    apply: str | None = None


def plain(v: Any) -> Any:
    """Turn a frame's value into JSON's: numbers, ``Z`` times, ``None`` for missing ones.

    Returns
    -------
    Any
        The value, as ``orjson`` writes it the service's way.
    """
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return None if np.isnan(v) else float(v)
    if isinstance(v, pd.Timestamp):
        return v.strftime("%Y-%m-%dT%H:%M:%SZ")
    if v is pd.NA or (isinstance(v, float) and np.isnan(v)):
        return None
    return v


def resolve_select(select: list[str], names: list[str]) -> list[str]:
    """Map ``$select`` names to the columns' own spelling (matched case-insensitively).

    Returns
    -------
    list of str
        The columns, in the order asked.

    Raises
    ------
    SandboxHTTPError
        400 ``InvalidQueryParameterValue`` naming an unknown column.
    """
    by_lower = {n.lower(): n for n in names}
    out = []
    for s in select:
        if s.lower() not in by_lower:
            raise SandboxHTTPError(400, "InvalidQueryParameterValue",
                                   f"Invalid $select expression: unknown column '{s}'; known "
                                   f"columns: {', '.join(names)}")
        out.append(by_lower[s.lower()])
    return out


_STATE_BYTES = [orjson.dumps({"complianceState": s, "isCompliant": s == "Compliant"})[1:-1]
                for s in STATES]


def timestamps(ts: np.ndarray) -> list[bytes]:
    """Write the ``"timestamp":"...Z",`` fragment of each record's time.

    Returns
    -------
    list of bytes
        One fragment per time.
    """
    text = np.datetime_as_string(ts.astype("datetime64[s]"), unit="s")
    return [f'"timestamp":"{t}Z",'.encode() for t in text.tolist()]


def fast_records(pw: PolicyWorld, rec: GroupRecords, rows: np.ndarray,
                  entity_ctx: bytes) -> list[bytes]:
    """Write plain records (every field, no ``$select`` or ``$expand``) from fragments.

    Returns
    -------
    list of bytes
        One JSON object per record, with ``@odata.id`` and ``@odata.context``.
    """
    prefix = b'{"@odata.id":null,"@odata.context":' + entity_ctx + b","
    stamps = timestamps(rec.ts[rows])
    pairs = rec.pair[rows]
    res = rec.pair_resource[pairs].tolist()
    pol = rec.pair_policy[pairs].tolist()
    states = rec.state[rows].tolist()
    rfrag = pw.resource_fragment
    pfrag = pw.policy_fragment
    sbytes = _STATE_BYTES
    return [b"".join((prefix, t, rfrag(r), b",", pfrag(p), b",", sbytes[s], b"}"))
            for t, r, p, s in zip(stamps, res, pol, states, strict=True)]


def generic_records(pw: PolicyWorld, rec: GroupRecords, rows: np.ndarray,
                     select: list[str] | None, expand: list[Expand],
                     entity_ctx: bytes, vault_suffix: str) -> list[bytes]:
    """Write records with ``$select`` and ``$expand``.

    Returns
    -------
    list of bytes
        One JSON object per record: the selected fields, then the expanded details.

    Raises
    ------
    ODataError
        For a ``components(...)`` expression the sandbox cannot read.
    """
    names = resolve_select(select, list(FIELDS)) if select else list(FIELDS)
    pairs = rec.pair[rows]
    res_idx = rec.pair_resource[pairs]
    pol_idx = rec.pair_policy[pairs]
    stamps = [f"{t}Z" for t in np.datetime_as_string(rec.ts[rows].astype("datetime64[s]"),
                                                      unit="s").tolist()]
    ctx = orjson.loads(entity_ctx)
    out = []
    for i in range(len(rows)):
        r = pw.resources[res_idx[i]]
        p = pw.policies[pol_idx[i]]
        state = STATES[rec.state[rows[i]]]
        full = {"timestamp": stamps[i], "complianceState": state,
                "isCompliant": state == "Compliant", **r.fields, **p.fields}
        item: dict[str, Any] = {"@odata.id": None, "@odata.context": ctx}
        item.update({n: full[n] for n in names})
        for exp in expand:
            if exp.name == "components":
                item["components"] = shaped(
                    components_of(r, p, state, stamps[i], vault_suffix), exp)
            else:
                item["policyEvaluationDetails"] = evaluation_details(pw, r, p, state, int(rows[i]))
        out.append(orjson.dumps(item))
    return out


_COMPONENT_FIELDS = ("id", "type", "name", "timestamp", "complianceState")


def shaped(components: list[dict[str, Any]], exp: Expand) -> list[dict[str, Any]]:
    """Pass components through the ``$filter`` and ``$apply`` of ``components(...)``.

    Returns
    -------
    list of dict
        The components (or aggregated rows) left.
    """
    if exp.filter is None and exp.apply is None:
        return components
    table: Table = FrameTable(pd.DataFrame(components, columns=list(_COMPONENT_FIELDS)))
    if exp.filter:
        table = table.take(np.flatnonzero(evaluate_filter(parse_filter(exp.filter), table)))
    if exp.apply:
        table = apply_transformations(parse_apply(exp.apply), table)
    frame = table.frame()
    return [{str(k): plain(v) for k, v in row.items()} for row in frame.to_dict("records")]


def components_of(r: Resource, p: Policy, state: str, stamp: str,
                vault_suffix: str) -> list[dict[str, Any]]:
    """List the components of a record: a key vault's keys and secrets under its policy.

    Returns
    -------
    list of dict
        ``id``, ``type``, ``name``, ``timestamp``, ``complianceState``; none for other resources
        and policies.
    """
    if r.kind != "KV" or p.definition.name not in ("kv-soft-delete", "kv-purge-protection"):
        return []
    vault = r.name
    out = []
    for kind, n in (("Key", 2), ("Secret", 3)):
        for i in range(n):
            name = f"{kind.lower()}-{vault.split('-')[1]}-{i + 1}"
            comp_state = state if state != "NonCompliant" or i == 0 else "Compliant"
            out.append({"id": f"https://{vault}.{vault_suffix}/{kind.lower()}s/{name}",
                        "type": kind, "name": name, "timestamp": stamp,
                        "complianceState": comp_state})
    return out


def evaluation_details(pw: PolicyWorld, r: Resource, p: Policy, state: str,
                row: int) -> dict[str, Any] | None:
    """Describe how a record's policy was evaluated (``policyEvaluationDetails``).

    Returns
    -------
    dict or None
        ``evaluatedExpressions`` (and ``ifNotExistsDetails`` for the if-not-exists effects);
        ``None`` for a state that was not evaluated.
    """
    if state not in ("Compliant", "NonCompliant"):
        return None
    d = p.definition
    ns = pw.namespace
    type_name = f"{ns}.{TYPES[r.kind][0]}"
    expressions: list[dict[str, Any]] = [
        {"result": "True", "expressionKind": "Field", "expression": "type", "path": "type",
         "expressionValue": type_name, "targetValue": type_name, "operator": "Equals"},
    ] if d.applies != ("*",) else []
    ok = state == "Compliant"
    if d.name == "allowed-locations":
        expressions.append({"result": "False" if ok else "True", "expressionKind": "Field",
                            "expression": "location", "path": "location",
                            "expressionValue": r.location, "targetValue": d.expected,
                            "operator": "NotIn"})
    elif isinstance(d.expected, bool):
        expressions.append({"result": "False" if ok else "True", "expressionKind": "Field",
                            "expression": f"{type_name}/{d.path.split('.')[-1]}",
                            "path": d.path, "expressionValue": d.expected if ok else
                            (not d.expected), "targetValue": d.expected,
                            "operator": "NotEquals"})
    elif d.expected == "exists":
        expressions.append({"result": "False" if ok else "True", "expressionKind": "Field",
                            "expression": d.path, "path": d.path,
                            "expressionValue": r.tags.get("costCenter") if ok else None,
                            "targetValue": False, "operator": "Exists"})
    else:
        expressions.append({"result": "False" if ok else "True", "expressionKind": "Field",
                            "expression": d.path, "path": d.path,
                            "expressionValue": d.expected if ok else "",
                            "targetValue": d.expected, "operator": "NotEquals"})
    details: dict[str, Any] = {"evaluatedExpressions": expressions}
    if d.effect in ("auditIfNotExists", "deployIfNotExists"):
        details["ifNotExistsDetails"] = {
            "resourceId": f"{r.fields['resourceId']}/providers/{ns}.Insights/"
                          f"diagnosticSettings/setByPolicy" if ok else None,
            "totalResources": 1 if ok else 0}
    return details
