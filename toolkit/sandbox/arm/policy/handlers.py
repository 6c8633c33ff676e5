"""The policy insights operations of the sandbox over its policy world (spec 1 §2.8, §4.6).

``POST {scope}/providers/Vendor.PolicyInsights/policyStates/{latest|default}/queryResults`` at
every scope the service answers for: a management group, a subscription, a resource group, a
resource, a policy assignment at subscription or resource-group level, a policy definition and a
policy set definition (both at subscription level). Query options ``$from``/``$to`` (default: the
day before the request), ``$filter``, ``$apply``, ``$orderby``, ``$select``, ``$top``,
``$skiptoken``, and ``$expand`` (``components``, ``components($filter=...;$apply=...)``,
``policyEvaluationDetails``) at resource scope only. ``default`` returns every record in the
window, ``latest`` the newest per (resource, assignment, definition, reference id). Pages hold
1000 records; ``@odata.count`` is the number on the page; ``@odata.nextLink`` (a POST) carries
every option plus a ``$skiptoken`` that pins the window. Bad expressions answer 400
``QueryFailure`` naming the problem.

The service keeps :data:`WINDOW_DAYS` days of evaluations: records older than that are gone, so a
window that starts before it answers the part inside it, and one that ends before it answers no
records (200, an empty page), as a purged store does. Records later than the sandbox clock are not
there yet (so a sandbox whose clock is set back answers as of that day).

``POST {scope}/providers/Vendor.PolicyInsights/policyStates/latest/summarize`` at the same scopes
(``$filter``, ``$from``, ``$to``, ``$top`` = the most non-compliant assignments kept): the
dashboard's numbers, non-compliant resources and policies in the scope, per assignment, per
definition of an assignment and per policy group, with the resources and policies in each
compliance state. A resource counts once per level with its worst state there.
"""

from __future__ import annotations

import base64
import math
import re
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlencode

import numpy as np
import orjson
import pandas as pd

from toolkit._spec.arm import ODATA_NEXT_KEY, POLICY_API_VERSIONS
from toolkit.sandbox.arm.common import arm_reply, find_group, find_subscription
from toolkit.sandbox.arm.odata import (
    FrameTable,
    ODataError,
    Table,
    apply_transformations,
    evaluate_filter,
    order_rows,
    parse_apply,
    parse_filter,
    parse_orderby,
    parse_select,
)
from toolkit.sandbox.arm.policy.world import (
    _C,
    FIELDS,
    RESOURCE_FIELDS,
    STATES,
    TYPES,
    GroupRecords,
    Policy,
    PolicyWorld,
    Resource,
)
from toolkit.sandbox.http import Reply, Request, Route, Router, SandboxHTTPError, SandboxView

if TYPE_CHECKING:
    from toolkit.sandbox.server import Sandbox

__all__ = ["API_VERSIONS", "PAGE_SIZE", "WINDOW_DAYS", "register"]

API_VERSIONS = POLICY_API_VERSIONS
PAGE_SIZE = 1000
#: How many days of evaluations the service keeps.
WINDOW_DAYS = 90
_EXPANDS = ("components", "policyEvaluationDetails")
#: What a summary's query links leave unencoded in ``$filter`` (the rest is percent-encoded).
_LINK_SAFE = "'()$="
#: How the summary names the compliance states (the service's own lower-case words).
_SUMMARY_STATES = ("compliant", "noncompliant", "conflict", "exempt", "unknown")
#: Roll-up rank of STATES (worst highest): Unknown < Exempt < Conflict < Compliant < NonCompliant.
_RANK = np.array([3, 4, 2, 1, 0], dtype=np.int8)
_BY_RANK = np.array([4, 3, 2, 0, 1], dtype=np.int8)  # rank -> state code


# ------------------------------------------------------------------------- scopes
@dataclass
class _Scope:
    """What a scope covers: the groups below it, and the policies and resource it narrows to."""

    path: str  # the scope as it appears in the request path
    groups: list[tuple[str, str]]
    policies: np.ndarray | None = None  # policy indices, None: all
    resource: int | None = None
    kind: str = "resourceGroup"

    @property
    def key(self) -> str:
        return f"{self.path.lower()}|{self.resource}"


def _world(request: Request) -> PolicyWorld:
    return request.sandbox.world.section("policy")


def _subscription_groups(request: Request, sub_id: str) -> list[tuple[str, str]]:
    sub = request.sandbox.world.subscription(sub_id)
    return [(sub.id, g.name) for g in sub.resource_groups] if sub else []


def _policies_where(pw: PolicyWorld, test: Any) -> np.ndarray:
    return np.array([p.index for p in pw.policies if test(p)], dtype=np.int32)


def _scope_mg(request: Request) -> _Scope:
    world = request.sandbox.world
    name = request.path_params["managementGroupId"]
    try:
        mg = world.management_group(name)
    except KeyError:
        raise SandboxHTTPError(404, "ManagementGroupNotFound",
                               f"The management group '{name}' could not be found.") from None
    groups = [(s.id, g.name) for s in world.subscriptions if mg.name in world.ancestors(s.name)
              for g in s.resource_groups]
    return _Scope(f"/providers/{request.sandbox.namespace}.Management/managementGroups/"
                  f"{mg.name}", groups, kind="managementGroup")


def _scope_subscription(request: Request) -> _Scope:
    sub = find_subscription(request)
    return _Scope(f"/subscriptions/{sub.id}", _subscription_groups(request, sub.id),
                  kind="subscription")


def _scope_group(request: Request) -> _Scope:
    sub, group = find_group(request)
    return _Scope(f"/subscriptions/{sub.id}/resourceGroups/{group.name}", [(sub.id, group.name)])


def _scope_resource(request: Request) -> _Scope:
    sub, group = find_group(request)
    pw = _world(request)
    tail = unquote(request.path_params["resourcePath"])
    rid = (f"/subscriptions/{sub.id}/resourceGroups/{group.name}/providers/"
           f"{request.path_params['resourceProvider']}/{tail}")
    found = _resource_by_id(pw).get(rid.lower())
    if found is None:
        raise SandboxHTTPError(404, "ResourceNotFound",
                               f"The resource '{rid}' could not be found.")
    return _Scope(rid, [(sub.id, group.name)], resource=found, kind="resource")


def _resource_by_id(pw: PolicyWorld) -> dict[str, int]:
    index = getattr(pw, "_by_id", None)
    if index is None:
        index = {r.fields["resourceId"].lower(): r.index for r in pw.resources}
        pw._by_id = index  # type: ignore[attr-defined]
    return index


def _assignment_scope(kind: str) -> Any:
    def resolve(request: Request) -> _Scope:
        if kind == "subscription":
            sub = find_subscription(request)
            scope, groups = f"/subscriptions/{sub.id}", _subscription_groups(request, sub.id)
        else:
            sub, group = find_group(request)
            scope, groups = f"/subscriptions/{sub.id}/resourceGroups/{group.name}", \
                [(sub.id, group.name)]
        name = request.path_params["policyAssignmentName"]
        pw = _world(request)
        chosen = _policies_where(pw, lambda p: p.assignment.name.lower() == name.lower() and
                                 p.fields["policyAssignmentScope"].lower() == scope.lower())
        if not len(chosen):
            raise SandboxHTTPError(404, "PolicyAssignmentNotFound",
                                   f"The policy assignment '{name}' is not found at scope "
                                   f"'{scope}'.")
        path = f"{scope}/providers/{request.sandbox.namespace}.Authorization/policyAssignments/" \
               f"{pw.policies[chosen[0]].assignment.name}"
        return _Scope(path, groups, chosen, kind="policyAssignment")

    return resolve


def _definition_scope(field_name: str, segment: str, code: str) -> Any:
    def resolve(request: Request) -> _Scope:
        sub = find_subscription(request)
        name = request.path_params["definitionName"]
        pw = _world(request)
        chosen = _policies_where(pw, lambda p: (p.fields[field_name] or "").lower() ==
                                 name.lower())
        if not len(chosen):
            raise SandboxHTTPError(404, code, f"The {segment[:-1]} '{name}' could not be found.")
        path = (f"/subscriptions/{sub.id}/providers/{request.sandbox.namespace}.Authorization/"
                f"{segment}/{pw.policies[chosen[0]].fields[field_name]}")
        return _Scope(path, _subscription_groups(request, sub.id), chosen, kind=segment[:-1])

    return resolve


# ------------------------------------------------------------------------- the query table
def _record_table(pw: PolicyWorld, rec: GroupRecords, rows: np.ndarray) -> Table:
    def fetch(name: str, at: np.ndarray) -> Any:
        if name == "timestamp":
            return pd.Series(pd.to_datetime(rec.ts[at], unit="s", utc=True))
        if name == "complianceState":
            return pd.Series(pd.Categorical.from_codes(rec.state[at],  # type: ignore[call-overload]
                                                       list(STATES)))
        if name == "isCompliant":
            return pd.Series(rec.state[at] == _C)
        if name in RESOURCE_FIELDS:
            owner = rec.pair_resource[rec.pair[at]]
        else:
            owner = rec.pair_policy[rec.pair[at]]
        codes, values = pw.column_codes(name)
        return pd.Series(pd.Categorical.from_codes(codes[owner], values))

    return Table(FIELDS, fetch, rows)



@dataclass
class _Result:
    rows: np.ndarray | None  # record positions, or
    frame: pd.DataFrame | None  # aggregated rows
    records: GroupRecords

    @property
    def size(self) -> int:
        """How many rows the result holds."""
        found = self.rows if self.rows is not None else self.frame
        return len(found) if found is not None else 0


def _parse_time(request: Request, name: str) -> datetime | None:
    raw = request.param(name)
    if raw is None or raw == "":
        return None
    try:
        ts = pd.Timestamp(raw)
    except ValueError:
        raise SandboxHTTPError(400, "InvalidQueryParameterValue",
                               f"The value '{raw}' of query parameter '{name}' is not a valid "
                               "ISO 8601 date-time.") from None
    ts = ts.tz_localize("UTC") if ts.tz is None else ts.tz_convert("UTC")
    return ts.to_pydatetime()


def _token(offset: int, start: datetime, end: datetime) -> str:
    raw = orjson.dumps({"o": offset, "f": start.isoformat(), "t": end.isoformat()})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _untoken(token: str) -> tuple[int, datetime, datetime]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = orjson.loads(raw)
        return (int(data["o"]), datetime.fromisoformat(data["f"]),
                datetime.fromisoformat(data["t"]))
    except (ValueError, KeyError, TypeError, orjson.JSONDecodeError):
        raise SandboxHTTPError(400, "InvalidSkipToken",
                               f"The $skiptoken '{token[:40]}' is not valid.") from None



def _window(request: Request, start: datetime, end: datetime) -> tuple[float, float]:
    """The part of [start, end] the service still holds and that has happened, in whole
    seconds (the records' times are whole seconds: the same records, and the queries of one
    read made within a second share one cached table though the clock moves on)."""
    now = request.sandbox.now()
    lo = max(start, now - timedelta(days=WINDOW_DAYS))
    hi = min(end, now)
    return float(math.ceil(lo.timestamp())), float(math.floor(hi.timestamp()))


def _options(request: Request) -> tuple[datetime, datetime, int, int | None]:
    token = request.param("$skiptoken")
    if token:
        offset, start, end = _untoken(token)
    else:
        offset = 0
        end = _parse_time(request, "$to") or request.sandbox.now()
        start = _parse_time(request, "$from") or end - timedelta(days=1)
    if start > end:
        raise SandboxHTTPError(400, "InvalidQueryParameterValue",
                               f"The interval is empty: $from ({start.isoformat()}) is after $to "
                               f"({end.isoformat()}).")
    top_raw = request.param("$top")
    top = None
    if top_raw not in (None, ""):
        try:
            top = int(top_raw)
        except ValueError:
            top = -1
        if top < 0:
            raise SandboxHTTPError(400, "InvalidQueryParameterValue",
                                   f"The value '{top_raw}' of query parameter '$top' must be an "
                                   "integer of at least 0.")
    return start, end, offset, top


def _resource_word(request: Request, allowed: tuple[str, ...]) -> str:
    resource = request.path_params["policyStatesResource"]
    if resource.lower() not in allowed:
        raise SandboxHTTPError(400, "InvalidPolicyStatesResource",
                               f"The policy states resource '{resource}' is not supported here; "
                               f"use {' or '.join(repr(a) for a in allowed)}.")
    return resource.lower()


@dataclass
class _Expand:
    name: str
    filter: str | None = None
    apply: str | None = None


_EXPAND_ITEM = re.compile(r"^\s*(?P<name>\w+)\s*(?:\((?P<inner>.*)\))?\s*$", re.DOTALL)


def _split_top(text: str, sep: str) -> list[str]:
    parts, depth, quoted, start = [], 0, False, 0
    for i, ch in enumerate(text):
        if ch == "'":
            quoted = not quoted
        elif not quoted and ch == "(":
            depth += 1
        elif not quoted and ch == ")":
            depth -= 1
        elif not quoted and depth == 0 and ch == sep:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in (p.strip() for p in parts) if p]


def _parse_expand(request: Request, scope: _Scope) -> list[_Expand]:
    raw = request.param("$expand") or ""
    items = _split_top(raw, ",")
    if items and scope.kind != "resource":
        raise SandboxHTTPError(400, "InvalidQueryParameterValue",
                               "The query parameter '$expand' is supported only for policy states "
                               "of a single resource.")
    by_lower = {e.lower(): e for e in _EXPANDS}
    out = []
    for item in items:
        m = _EXPAND_ITEM.match(item)
        name = by_lower.get(m["name"].lower()) if m else None
        if m is None or name is None or (m["inner"] is not None and name != "components"):
            raise SandboxHTTPError(400, "InvalidQueryParameterValue",
                                   f"The $expand value '{item}' is not supported; use "
                                   f"{' or '.join(_EXPANDS)}, or components($filter=...;"
                                   "$apply=...).")
        exp = _Expand(name)
        for part in _split_top(m["inner"] or "", ";"):
            key, _, value = part.partition("=")
            if key.strip().lower() == "$filter":
                exp.filter = value.strip()
            elif key.strip().lower() == "$apply":
                exp.apply = value.strip()
            else:
                raise SandboxHTTPError(400, "InvalidQueryParameterValue",
                                       f"The $expand option '{key.strip()}' is not supported "
                                       "inside components(...); use $filter and $apply.")
        out.append(exp)
    return out


def _serve_query(request: Request, scope: _Scope) -> Reply:
    sandbox = request.sandbox
    resource = _resource_word(request, ("latest", "default"))
    start, end, offset, top = _options(request)
    expand = _parse_expand(request, scope)
    options = {k: request.param(k) for k in ("$filter", "$apply", "$orderby", "$select")}
    pw = _world(request)
    if request.param("$skiptoken"):
        # the window was fixed by the first page (and carried in the token), so that the pages
        # of one query agree while the clock and the service's window move on
        lo, hi = start.timestamp(), end.timestamp()
    else:
        lo, hi = _window(request, start, end)
    try:
        result = _cached_result(sandbox, pw, scope, resource, lo, hi, options)
        select = parse_select(options["$select"]) if options["$select"] else None
    except ODataError as err:
        raise SandboxHTTPError(400, "InvalidQueryParameterValue", err.message) from None
    total = result.size
    limit = total if top is None else min(total, top)
    stop = min(offset + PAGE_SIZE, limit)
    base = request.path[:request.path.lower().rindex("/policystates/") + len("/policyStates")]
    context = f"{request.base_url}{base}/$metadata#{resource}"
    next_link = None
    if stop < limit:
        params = [(k, v) for k, v in request.query if k.lower() != "$skiptoken"]
        params.append(("$skiptoken", _token(stop, datetime.fromtimestamp(lo, UTC),
                                            datetime.fromtimestamp(hi, UTC))))
        query = urlencode(params, quote_via=quote, safe="$,:")
        next_link = f"{request.base_url}{request.path}?{query}"
    envelope = {ODATA_NEXT_KEY: next_link, "@odata.context": context,
                "@odata.count": max(0, stop - offset)}
    entity_ctx = orjson.dumps(f"{context}/$entity")
    if result.frame is not None:
        page = result.frame.iloc[offset:stop]
        if select:
            cols = _resolve_select(select, list(result.frame.columns))
            page = page[cols]
        values = [{"@odata.id": None, "@odata.context": f"{context}/$entity",
                   **{k: _plain(v) for k, v in row.items()}}
                  for row in page.to_dict("records")]
        body = orjson.dumps({**envelope, "value": values})
    else:
        rows = result.rows[offset:stop]  # type: ignore[index]
        if select or expand:
            try:
                items = _generic_records(pw, result.records, rows, select, expand, entity_ctx,
                                         sandbox.cloud.vault_suffix)
            except ODataError as err:
                raise SandboxHTTPError(400, "InvalidQueryParameterValue", err.message) from None
        else:
            items = _fast_records(pw, result.records, rows, entity_ctx)
        body = _page_body(envelope, items)
    reply = arm_reply(request, None)
    reply.raw = body
    return reply


def _page_body(envelope: dict[str, Any], items: list[bytes]) -> bytes:
    """The page's JSON from its envelope and its serialized records, built as one buffer (a
    page of megabytes copied again for each part costs more than building it)."""
    head = orjson.dumps(envelope)[:-1] + b',"value":['
    if not items:
        return head + b"]}"
    parts = list(items)
    parts[0] = head + parts[0]
    parts[-1] = parts[-1] + b"]}"
    return b",".join(parts)


def _plain(v: Any) -> Any:
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return None if np.isnan(v) else float(v)
    if isinstance(v, pd.Timestamp):
        return v.strftime("%Y-%m-%dT%H:%M:%SZ")
    if v is pd.NA or (isinstance(v, float) and np.isnan(v)):
        return None
    return v


def _resolve_select(select: list[str], names: list[str]) -> list[str]:
    by_lower = {n.lower(): n for n in names}
    out = []
    for s in select:
        if s.lower() not in by_lower:
            raise SandboxHTTPError(400, "InvalidQueryParameterValue",
                                   f"Invalid $select expression: unknown column '{s}'; known "
                                   f"columns: {', '.join(names)}")
        out.append(by_lower[s.lower()])
    return out


_RESULTS_KEY = "policy_results"
_RESULTS_MAX = 64
_RESULTS_MAX_ROWS = 8_000_000


def _kept(sandbox: SandboxView, name: str, key: Any, make: Callable[[], Any],
          full: Callable[[OrderedDict[Any, Any]], bool]) -> Any:
    """The value of ``key`` in the sandbox's cache ``name``, made when missing; the cache keeps
    those used last, dropping the oldest while ``full`` says so (one always stays)."""
    with sandbox.state_lock:
        cache: OrderedDict[Any, Any] = sandbox.state.setdefault(name, OrderedDict())
        hit = cache.get(key)
        if hit is not None:
            cache.move_to_end(key)
            return hit
    value = make()
    with sandbox.state_lock:
        cache[key] = value
        while len(cache) > 1 and full(cache):
            cache.popitem(last=False)
    return value


def _cached_result(sandbox: SandboxView, pw: PolicyWorld, scope: _Scope, resource: str, lo: float,
                   hi: float, options: dict[str, str | None]) -> _Result:
    key = (scope.key, resource, lo, hi, tuple(sorted((k, v or "") for k, v in options.items())))
    # a few whole results, or many small ones (the slices of one query read concurrently)
    return _kept(sandbox, _RESULTS_KEY, key,
                 lambda: _evaluate(sandbox, pw, scope, resource, lo, hi, options),
                 lambda cache: len(cache) > _RESULTS_MAX
                 or sum(r.size for r in cache.values()) > _RESULTS_MAX_ROWS)


def _scope_rows(pw: PolicyWorld, scope: _Scope, resource: str, lo: float,
                hi: float) -> tuple[GroupRecords, np.ndarray]:
    """The records of the scope in the window (``latest``: the newest per pair), newest first."""
    rec = pw.scope_records(scope.groups)
    keep = (rec.ts >= lo) & (rec.ts <= hi)
    if scope.policies is not None or scope.resource is not None:
        pair_ok = np.ones(len(rec.pair_resource), dtype=bool)
        if scope.policies is not None:
            pair_ok &= np.isin(rec.pair_policy, scope.policies)
        if scope.resource is not None:
            pair_ok &= rec.pair_resource == scope.resource
        keep &= pair_ok[rec.pair]
    rows = np.flatnonzero(keep)
    if resource == "latest" and len(rows):
        pairs = rec.pair[rows]
        # records are ordered by pair then time: the last of each pair is the newest
        is_last = np.append(pairs[1:] != pairs[:-1], True)
        rows = rows[is_last]
    # newest first, as the service lists states
    rows = rows[np.argsort(-rec.ts[rows], kind="stable")]
    return rec, rows


_TABLES_KEY = "policy_scope_tables"
_TABLES_MAX = 4


def _scope_table(sandbox: SandboxView, pw: PolicyWorld, scope: _Scope, resource: str, lo: float,
                 hi: float) -> tuple[GroupRecords, Table]:
    """The scope's records in the window as a query table, kept for the few scopes and windows
    asked last: the queries of one read (counts, slices, filters) share it instead of sorting
    the scope's records again each."""

    def make() -> tuple[GroupRecords, Table]:
        rec, rows = _scope_rows(pw, scope, resource, lo, hi)
        return rec, _record_table(pw, rec, rows)

    return _kept(sandbox, _TABLES_KEY, (scope.key, resource, lo, hi),
                 make, lambda cache: len(cache) > _TABLES_MAX)


def _evaluate(sandbox: SandboxView, pw: PolicyWorld, scope: _Scope, resource: str, lo: float,
              hi: float, options: dict[str, str | None]) -> _Result:
    rec, table = _scope_table(sandbox, pw, scope, resource, lo, hi)
    if options["$filter"]:
        mask = evaluate_filter(parse_filter(options["$filter"]), table)
        table = table.take(np.flatnonzero(mask))
    if options["$apply"]:
        out = apply_transformations(parse_apply(options["$apply"]), table)
        if options["$orderby"]:
            out = out.take(order_rows(out, parse_orderby(options["$orderby"])))
        if isinstance(out, Table) and out.names == list(FIELDS):
            frame = out.frame()
            frame["timestamp"] = frame["timestamp"].dt.strftime("%Y-%m-%dT%H:%M:%SZ")
            return _Result(None, frame.astype(object).where(frame.notna(), None), rec)
        return _Result(None, out.frame(), rec)
    if options["$orderby"]:
        table = table.take(order_rows(table, parse_orderby(options["$orderby"])))
    return _Result(table.rows, None, rec)


_STATE_BYTES = [orjson.dumps({"complianceState": s, "isCompliant": s == "Compliant"})[1:-1]
                for s in STATES]


def _timestamps(ts: np.ndarray) -> list[bytes]:
    text = np.datetime_as_string(ts.astype("datetime64[s]"), unit="s")
    return [f'"timestamp":"{t}Z",'.encode() for t in text.tolist()]


def _fast_records(pw: PolicyWorld, rec: GroupRecords, rows: np.ndarray,
                  entity_ctx: bytes) -> list[bytes]:
    prefix = b'{"@odata.id":null,"@odata.context":' + entity_ctx + b","
    stamps = _timestamps(rec.ts[rows])
    pairs = rec.pair[rows]
    res = rec.pair_resource[pairs].tolist()
    pol = rec.pair_policy[pairs].tolist()
    states = rec.state[rows].tolist()
    rfrag = pw.resource_fragment
    pfrag = pw.policy_fragment
    sbytes = _STATE_BYTES
    return [b"".join((prefix, t, rfrag(r), b",", pfrag(p), b",", sbytes[s], b"}"))
            for t, r, p, s in zip(stamps, res, pol, states, strict=True)]


def _generic_records(pw: PolicyWorld, rec: GroupRecords, rows: np.ndarray,
                     select: list[str] | None, expand: list[_Expand],
                     entity_ctx: bytes, vault_suffix: str) -> list[bytes]:
    names = _resolve_select(select, list(FIELDS)) if select else list(FIELDS)
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
                item["components"] = _shaped(
                    _components(r, p, state, stamps[i], vault_suffix), exp)
            else:
                item["policyEvaluationDetails"] = _evaluation(pw, r, p, state, int(rows[i]))
        out.append(orjson.dumps(item))
    return out


_COMPONENT_FIELDS = ("id", "type", "name", "timestamp", "complianceState")


def _shaped(components: list[dict[str, Any]], exp: _Expand) -> list[dict[str, Any]]:
    """Components through the ``$filter`` and ``$apply`` of ``components(...)``."""
    if exp.filter is None and exp.apply is None:
        return components
    table: Table = FrameTable(pd.DataFrame(components, columns=list(_COMPONENT_FIELDS)))
    if exp.filter:
        table = table.take(np.flatnonzero(evaluate_filter(parse_filter(exp.filter), table)))
    if exp.apply:
        table = apply_transformations(parse_apply(exp.apply), table)
    frame = table.frame()
    return [{str(k): _plain(v) for k, v in row.items()} for row in frame.to_dict("records")]


def _components(r: Resource, p: Policy, state: str, stamp: str,
                vault_suffix: str) -> list[dict[str, Any]]:
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


def _evaluation(pw: PolicyWorld, r: Resource, p: Policy, state: str,
                row: int) -> dict[str, Any] | None:
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




# ------------------------------------------------------------------------- summarize
def _details(ranks: np.ndarray) -> list[dict[str, Any]]:
    """``[{complianceState, count}]`` for the states present, worst first."""
    counts = np.bincount(ranks, minlength=5)
    return [{"complianceState": _SUMMARY_STATES[_BY_RANK[r]], "count": int(counts[r])}
            for r in range(4, -1, -1) if counts[r]]


def _results(frame: pd.DataFrame, uri: str, groups: pd.DataFrame, *,
             policies: bool = True) -> dict[str, Any]:
    """The ``results`` of one level: ``frame`` has res, policy, rank rows, ``groups`` the same
    rows once per policy group (``group``). ``nonCompliantPolicies`` is given at the scope and
    assignment levels only, as the service gives it."""
    worst_res = frame.groupby("res", sort=False)["rank"].max().to_numpy()
    worst_pol = frame.groupby("policy", sort=False)["rank"].max().to_numpy()
    worst_grp = groups.groupby("group", sort=False)["rank"].max().to_numpy()
    nc = 4
    out: dict[str, Any] = {
        "queryResultsUri": uri,
        "nonCompliantResources": int((worst_res == nc).sum()),
    }
    if policies:
        out["nonCompliantPolicies"] = int((worst_pol == nc).sum())
    out.update(resourceDetails=_details(worst_res), policyDetails=_details(worst_pol),
               policyGroupDetails=_details(worst_grp))
    return out


def _quoted(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _summarize(request: Request, scope: _Scope) -> Reply:
    _resource_word(request, ("latest",))
    start, end, _offset, top = _options(request)
    if request.param("$expand"):
        raise SandboxHTTPError(400, "InvalidQueryParameterValue",
                               "The query parameter '$expand' is not supported by summarize.")
    pw = _world(request)
    lo, hi = _window(request, start, end)
    rec, rows = _scope_rows(pw, scope, "latest", lo, hi)
    flt = request.param("$filter")
    if flt:
        table = _record_table(pw, rec, rows)
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
    version = request.param("api-version") or API_VERSIONS[0]

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
        cond = f"PolicyAssignmentId eq {_quoted(str(aid))}"
        a_groups = groups[groups["assignment"] == aid]
        groups_of = dict(iter(a_groups.groupby("policy", sort=False)))
        definitions = []
        for pol, pp in part.groupby("policy", sort=True):
            p = pw.policies[int(pp["policy"].to_numpy(dtype=np.int64)[0])]
            dconds = [cond, f"PolicyDefinitionId eq {_quoted(p.fields['policyDefinitionId'])}"]
            if p.reference_id:
                dconds.append(f"PolicyDefinitionReferenceId eq {_quoted(p.reference_id)}")
            definition: dict[str, Any] = {
                "policyDefinitionId": p.fields["policyDefinitionId"],
                "policyDefinitionReferenceId": p.reference_id or "",
                "effect": p.definition.effect,
                "results": _results(pp, uri(*dconds), groups_of[pol], policies=False),
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
                gconds.append(f"{_quoted(str(g))} IN PolicyDefinitionGroupNames")
            elif len(inside) < len(members) and refs:  # the set's policies in no group
                gconds.append("(" + " or ".join(f"PolicyDefinitionReferenceId eq {_quoted(r)}"
                                                for r in refs) + ")")
            policy_groups.append({
                "policyGroupName": g,
                "results": _results(gp, uri(*gconds), gp, policies=False)})
        assignments.append({
            "policyAssignmentId": aid,
            "policySetDefinitionId": first.fields["policySetDefinitionId"] or "",
            "results": _results(part, uri(cond), a_groups),
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
               "results": _results(frame, uri(), groups),
               "policyAssignments": assignments}
    return arm_reply(request, {"@odata.context": context, "@odata.count": 1, "value": [summary]})


# ------------------------------------------------------------------------- routes
_INSIGHTS = "/providers/{ns}.PolicyInsights/policyStates/{policyStatesResource}"
_AUTH = "/providers/{ns}.Authorization"
#: (scope pattern, how a request names its scope, route name suffix)
_SCOPES: tuple[tuple[str, Any, str], ...] = (
    ("/providers/{ns}.Management/managementGroups/{managementGroupId}", _scope_mg,
     "management_group"),
    ("/subscriptions/{subscriptionId}", _scope_subscription, "subscription"),
    ("/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}", _scope_group, ""),
    (f"/subscriptions/{{subscriptionId}}{_AUTH}/policyAssignments/{{policyAssignmentName}}",
     _assignment_scope("subscription"), "subscription_assignment"),
    (f"/subscriptions/{{subscriptionId}}/resourceGroups/{{resourceGroupName}}{_AUTH}/"
     "policyAssignments/{policyAssignmentName}", _assignment_scope("resourceGroup"),
     "resource_group_assignment"),
    (f"/subscriptions/{{subscriptionId}}{_AUTH}/policyDefinitions/{{definitionName}}",
     _definition_scope("policyDefinitionName", "policyDefinitions",
                       "PolicyDefinitionNotFound"), "definition"),
    (f"/subscriptions/{{subscriptionId}}{_AUTH}/policySetDefinitions/{{definitionName}}",
     _definition_scope("policySetDefinitionName", "policySetDefinitions",
                       "PolicySetDefinitionNotFound"), "set_definition"),
)
_RESOURCE_SCOPE = (r"/subscriptions/(?P<subscriptionId>[^/]*)/resourceGroups/"
                   r"(?P<resourceGroupName>[^/]*)/providers/(?P<resourceProvider>[^/]+)/"
                   r"(?P<resourcePath>[^?#]+?)")


def _handler(resolve: Any, serve: Any) -> Any:
    def handle(request: Request) -> Reply:
        return serve(request, resolve(request))

    return handle


def register(router: Router, sandbox: Sandbox) -> None:
    """Add the policy states query and summarize routes at every scope."""
    for action, serve in (("queryResults", _serve_query), ("summarize", _summarize)):
        for pattern, resolve, suffix in _SCOPES:
            name = "policy_states" if action == "queryResults" else "policy_summary"
            router.add("POST", f"{pattern}{_INSIGHTS}/{action}", _handler(resolve, serve),
                       family="arm", api_versions=API_VERSIONS,
                       name=f"{name}_{suffix}" if suffix else name)
        # a resource id has any number of segments: a pattern of its own, tried last
        route = Route("POST", "/subscriptions/{subscriptionId}/resourceGroups/"
                      "{resourceGroupName}/providers/{resourceProvider}/{resourcePath}"
                      f"{_INSIGHTS.replace('{ns}', router.namespace)}/{action}",
                      _handler(_scope_resource, serve), "arm", API_VERSIONS,
                      f"{'policy_states' if action == 'queryResults' else 'policy_summary'}"
                      "_resource")
        ns = re.escape(router.namespace)
        route.regex = re.compile(
            f"^{_RESOURCE_SCOPE}/providers/{ns}\\.PolicyInsights/policyStates/"
            f"(?P<policyStatesResource>[^/]*)/{action}$", re.IGNORECASE)
        router.routes.append(route)
