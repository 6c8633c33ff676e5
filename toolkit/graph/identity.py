"""Authentication-strength usage (spec 3 §2.1, §4.1) and an audit across strength policies.

``GET /beta/policies/authenticationStrengthPolicies/{id}/usage`` answers
``{"mfa": [...], "none": [...]}``: the conditional-access policies that reference the strength
policy, split by whether they require a multi-factor claim. Policies in the ``mfa`` collection
are locked against changes that would weaken that requirement.

This family throttles per tenant (about one request a second for conditional-access resources)
and its 429 answers may carry no ``Retry-After``: the pipeline then backs off on its own, bounded
by ``max_retries``, and says so in the log. Several policy ids are asked one after the other,
paced to that rate.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from toolkit._core.concurrency import FAMILY_RATES, Outcome, settle
from toolkit._core.errors import ToolkitError, ToolkitWarning, ValidationError, warn_user
from toolkit._core.frames import FrameBuilder, build_frame
from toolkit._core.messages import Request, Response
from toolkit._core.paging import PagingStyle, collect_frame, iter_pages
from toolkit._core.provenance import provenance
from toolkit._core.registry import OperationRecord, register
from toolkit._core.schemas import Col, Schema
from toolkit._core.urls import segment
from toolkit._core.validate import check_int, many_strings
from toolkit._spec.graph import (
    API_VERSIONS,
    CA_POLICY_STATES,
    POLICY_ID_PATTERN,
    STRENGTH_POLICY_TYPES,
    STRENGTH_REQUIREMENTS,
)
from toolkit.connection import get_connection

if TYPE_CHECKING:
    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = [
    "authentication_strength_audit",
    "authentication_strength_policies",
    "authentication_strength_usage",
    "usage_rows",
]

API_VERSION = API_VERSIONS[0]
#: Graph collections: items in ``value``, next page by GET on ``@odata.nextLink``.
GRAPH = PagingStyle(items_key="value", next_key="@odata.nextLink", next_method="GET")

POLICY_ID_RE = re.compile(POLICY_ID_PATTERN)
POLICY_ID_RULE = ("an authentication strength policy id: 1 to 128 letters, digits, '.', '_' or "
                  "'-' (built-in ids look like 00000000-0000-0000-0000-000000000002)")
REQUIREMENTS = STRENGTH_REQUIREMENTS

STRENGTH_USAGE = Schema(
    "authentication_strength_usage",
    (
        Col("policy_id", "string"),
        Col("requirement", "category", categories=STRENGTH_REQUIREMENTS),
        Col("displayName", "string"),
        Col("id", "string"),
        Col("state", "category", categories=CA_POLICY_STATES),
        Col("grantControls.operator", "category", categories=("AND", "OR")),
        Col("grantControls.authenticationStrength.id", "string"),
        Col("grantControls.controls", "list"),
        Col("grantControls.builtInControls", "list"),
        Col("error", "string"),
    ),
)

STRENGTH_POLICIES = Schema(
    "authentication_strength_policies",
    (
        Col("id", "string"),
        Col("displayName", "string"),
        Col("description", "string"),
        Col("policyType", "category", categories=STRENGTH_POLICY_TYPES),
        Col("requirementsSatisfied", "category", categories=STRENGTH_REQUIREMENTS),
        Col("allowedCombinations", "list"),
        Col("createdDateTime", "datetime"),
        Col("modifiedDateTime", "datetime"),
    ),
)

STRENGTH_AUDIT = Schema(
    "authentication_strength_audit",
    (
        Col("policy_id", "string"),
        Col("policy_name", "string"),
        Col("policy_type", "category", categories=STRENGTH_POLICY_TYPES),
        Col("requirement", "category", categories=STRENGTH_REQUIREMENTS),
        Col("displayName", "string"),
        Col("id", "string"),
        Col("state", "category", categories=CA_POLICY_STATES),
        Col("grantControls.controls", "list"),
        Col("blocks_mfa_weakening", "boolean"),
        Col("error", "string"),
    ),
)


def _check_policy_id(value: Any, parameter: str) -> str:
    if not isinstance(value, str) or not POLICY_ID_RE.fullmatch(value):
        raise ValidationError(parameter, value, POLICY_ID_RULE)
    return value


def _check_version(value: Any) -> str:
    if not isinstance(value, str) or value not in API_VERSIONS:
        raise ValidationError("api_version", value,
                              f"the identity interface version is one of {', '.join(API_VERSIONS)}"
                              " (the usage query is documented under beta)")
    return value


def _looks_like_id(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True


def usage_rows(body: Any, policy_id: str | None = None) -> list[dict[str, Any]]:
    """Flatten an ``authenticationStrengthUsage`` body to one record per policy reference.

    Each record is the conditional-access policy as the service sent it, plus ``policy_id``
    (the strength policy asked about) and ``requirement`` (``mfa`` or ``none``: the collection it
    came from). Items given as bare strings (a policy id, or a name when it is not an id) are
    kept as records with only that field; a ``controls`` value given as one string becomes a
    list of one.
    """
    rows: list[dict[str, Any]] = []
    if not isinstance(body, dict):
        return rows
    for requirement in REQUIREMENTS:
        items = body.get(requirement)
        if items is None:
            continue
        if isinstance(items, dict | str):
            items = [items]
        if not isinstance(items, list):
            warn_user(f"authentication_strength_usage: the service sent {requirement!r} as a "
                      f"{type(items).__name__}, not a list of policies; those rows are missing",
                      ToolkitWarning)
            continue
        for item in items:
            if isinstance(item, str):
                record: dict[str, Any] = ({"id": item} if _looks_like_id(item)
                                          else {"displayName": item})
            elif isinstance(item, dict):
                record = dict(item)
            else:
                continue
            record["policy_id"] = policy_id
            record["requirement"] = requirement
            rows.append(record)
    return rows


def _paced(connection: Connection, items: Sequence[str], call: Callable[[str], Response],
           rate: float) -> list[Outcome[str, Response]]:
    """Call one item after the other, at most ``rate`` starts a second; errors kept per item."""
    out: list[Outcome[str, Response]] = []
    interval = 1.0 / rate if rate else 0.0
    last: float | None = None
    for index, item in enumerate(items):
        if last is not None and interval:
            gap = interval - (time.monotonic() - last)
            if gap > 0:
                connection.sleep_for(gap)
        last = time.monotonic()
        try:
            out.append(Outcome(index, item, value=call(item)))
        except ToolkitError as err:
            out.append(Outcome(index, item, error=err))
    return out


def authentication_strength_usage(policy_id: str | Sequence[str], *,
                                  api_version: str = API_VERSION,
                                  connection: Connection | None = None) -> pd.DataFrame:
    """Which conditional-access policies reference an authentication strength policy.

    Parameters
    ----------
    policy_id : str or sequence of str
        One strength policy id, or many (asked one after the other, paced to the family's rate;
        a policy that fails becomes a row with ``error`` and the others are kept).
    api_version : str
        The identity interface version path (``beta``, where the query is documented).
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row per conditional-access policy referencing the strength policy: ``policy_id``
        (string, the strength policy asked about), ``requirement`` (category ``mfa``/``none``:
        whether the policy requires a multi-factor claim), ``displayName``, ``id`` (strings),
        ``state`` (category ``enabled``/``disabled``/``enabledForReportingButNotEnforced``,
        when the service sends it), ``grantControls.operator`` (category ``AND``/``OR``),
        ``grantControls.authenticationStrength.id`` (string), ``grantControls.controls`` and
        ``grantControls.builtInControls`` (lists of strings), ``error`` (string; set on the one
        row of a strength policy whose query failed, when several were asked). A strength
        policy nobody references gives no rows (an empty frame with every column).

    Raises
    ------
    ValidationError
        A malformed policy id, or a connection to a cloud that does not offer the query
        (``china``): before any request.
    NotFoundError, AuthenticationError, RateLimitError
        For one policy id, or when every query of several failed (the first failure).
    """
    ids, single = many_strings(policy_id, "policy_id")
    for i, pid in enumerate(ids):
        _check_policy_id(pid, "policy_id" if single else f"policy_id[{i}]")
    _check_version(api_version)
    conn = get_connection(connection)
    conn.check_offered("authentication_strength_usage")
    pipe = conn.pipeline("graph")

    def path(pid: str) -> str:
        return (f"/{api_version}/policies/authenticationStrengthPolicies/"
                f"{segment(pid, 'policy_id')}/usage")

    def call(pid: str) -> Response:
        return pipe.send(Request("GET", path(pid), operation="authentication_strength_usage"))

    results = _paced(conn, list(dict.fromkeys(ids)), call, FAMILY_RATES["graph"])
    settle(results, fatal=(ToolkitError,) if single else ())
    records: list[dict[str, Any]] = []
    request_ids: list[str] = []
    for o in results:
        pid = o.item
        if o.error is not None:
            records.append({"policy_id": pid, "error": str(o.error).split("\n")[0]})
            continue
        resp = o.result()
        if resp.request_id:
            request_ids.append(resp.request_id)
        records.extend(usage_rows(resp.json_object(), pid))
    logger.debug("authentication_strength_usage: %d rows for %d policies", len(records), len(ids))
    return build_frame(records, STRENGTH_USAGE,
                       provenance("authentication_strength_usage", api_version,
                                  pipe.url(path(ids[0])), request_ids))


def authentication_strength_policies(*, max_items: int | None = None,
                                     api_version: str = API_VERSION,
                                     connection: Connection | None = None) -> pd.DataFrame:
    """List the tenant's authentication strength policies (built-in and custom, every page).

    Parameters
    ----------
    max_items : int, optional
        Stop after this many policies (warns that the result is truncated).
    api_version : str
        The identity interface version path.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row per strength policy: ``id``, ``displayName``, ``description`` (strings),
        ``policyType`` (category ``builtIn``/``custom``), ``requirementsSatisfied`` (category
        ``none``/``mfa``), ``allowedCombinations`` (list of strings), ``createdDateTime``,
        ``modifiedDateTime`` (UTC).
    """
    if max_items is not None:
        check_int(max_items, "max_items", minimum=0)
    _check_version(api_version)
    conn = get_connection(connection)
    pipe = conn.pipeline("graph")
    pages = iter_pages(pipe, "GET", f"/{api_version}/policies/authenticationStrengthPolicies",
                       style=GRAPH, operation="authentication_strength_policies")
    return collect_frame(pages, FrameBuilder(STRENGTH_POLICIES),
                         operation="authentication_strength_policies", max_items=max_items,
                         connection=conn, api_version=api_version)


def authentication_strength_audit(policy_ids: str | Sequence[str] | None = None, *,
                                  api_version: str = API_VERSION,
                                  connection: Connection | None = None) -> pd.DataFrame:
    """Audit view: which conditional-access policies would block weakening multi-factor.

    Reads every strength policy (or the ones given), then the usage of each, and joins them.
    A conditional-access policy in a strength policy's ``mfa`` collection is locked by the
    service against changes that would weaken the multi-factor requirement, so changing or
    deleting that strength (or that policy's grant) is blocked while it stays referenced.

    Parameters
    ----------
    policy_ids : str or sequence of str, optional
        Strength policies to audit; all of the tenant's by default.
    api_version : str
        The identity interface version path.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row per (strength policy, conditional-access policy) reference, strength policies in
        the service's order: ``policy_id``, ``policy_name`` (strings), ``policy_type`` (category
        ``builtIn``/``custom``), ``requirement`` (category ``mfa``/``none``), ``displayName``,
        ``id`` (strings, the conditional-access policy), ``state`` (category),
        ``grantControls.controls`` (list), ``blocks_mfa_weakening`` (boolean: true for the
        ``mfa`` collection), ``error`` (string). Strength policies nobody references have no
        rows; a strength policy whose usage query failed is one row with its ``error`` (the
        other usage columns and ``blocks_mfa_weakening`` missing), as in
        :func:`authentication_strength_usage`.
    """
    wanted: list[str] | None = None
    if policy_ids is not None:
        wanted, _ = many_strings(policy_ids, "policy_ids")
        for i, pid in enumerate(wanted):
            _check_policy_id(pid, f"policy_ids[{i}]")
    _check_version(api_version)
    conn = get_connection(connection)
    conn.check_offered("authentication_strength_usage")
    policies = authentication_strength_policies(api_version=api_version, connection=conn)
    ids = wanted if wanted is not None else [str(i) for i in policies["id"].dropna()]
    usage = (authentication_strength_usage(ids if len(ids) > 1 else ids[0],
                                           api_version=api_version, connection=conn)
             if ids else None)
    attrs = provenance("authentication_strength_audit", api_version,
                       conn.pipeline("graph").url(
                           f"/{api_version}/policies/authenticationStrengthPolicies"),
                       [*policies.attrs.get("request_ids", []),
                        *([] if usage is None else usage.attrs.get("request_ids", []))])
    if usage is None:
        return build_frame([], STRENGTH_AUDIT, attrs)
    info = policies.set_index("id")
    records = []
    for row in usage.to_dict("records"):
        pid = row["policy_id"]
        meta = info.loc[pid] if pid in info.index else None
        failed = _none(row["error"]) is not None
        if failed:
            logger.info("authentication_strength_audit: usage of %s failed: %s", pid,
                        row["error"])
        records.append({
            "policy_id": pid,
            "policy_name": None if meta is None else _none(meta.get("displayName")),
            "policy_type": None if meta is None else _none(meta.get("policyType")),
            "requirement": row["requirement"],
            "displayName": _none(row["displayName"]),
            "id": _none(row["id"]),
            "state": _none(row["state"]),
            "grantControls.controls": row["grantControls.controls"],
            # unknown when the lookup failed: the row says so in ``error``
            "blocks_mfa_weakening": None if failed else row["requirement"] == "mfa",
            "error": _none(row["error"]),
        })
    return build_frame(records, STRENGTH_AUDIT, attrs, flat=True)


def _none(value: Any) -> Any:
    return None if value is None or value is pd.NA or (isinstance(value, float)
                                                        and value != value) else value


USAGE_RECORD = register(OperationRecord(
    "authentication_strength_usage", schema=STRENGTH_USAGE, lifetime=600,
    plot="authentication_strength_usage"))
POLICIES_RECORD = register(OperationRecord(
    "authentication_strength_policies", schema=STRENGTH_POLICIES, lifetime=600))
AUDIT_RECORD = register(OperationRecord(
    "authentication_strength_audit", schema=STRENGTH_AUDIT,
    plot="authentication_strength_usage"))
