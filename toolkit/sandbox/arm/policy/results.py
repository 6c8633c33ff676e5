"""Evaluate a policy-states query over a scope's records, and keep the results of the last ones.

A query's result is the scope's records in the window (``latest``: the newest per resource,
assignment, definition and reference id), newest first, through ``$filter``, ``$apply`` and
``$orderby``; the few scope tables and results asked last are kept in the sandbox's state, so the
queries of one read (counts, slices, pages) share them.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from toolkit.sandbox.arm.odata import (
    Table,
    apply_transformations,
    evaluate_filter,
    order_rows,
    parse_apply,
    parse_filter,
    parse_orderby,
)
from toolkit.sandbox.arm.policy.scopes import Scope
from toolkit.sandbox.arm.policy.world import (
    _C,
    FIELDS,
    RESOURCE_FIELDS,
    STATES,
    GroupRecords,
    PolicyWorld,
)
from toolkit.sandbox.http import SandboxView


def record_table(pw: PolicyWorld, rec: GroupRecords, rows: np.ndarray) -> Table:
    """Make the query table of some records: their fields read on demand, per column.

    Parameters
    ----------
    pw : PolicyWorld
        The policy world (the resources' and policies' fields).
    rec : GroupRecords
        The records of the scope's groups.
    rows : numpy.ndarray
        The positions of the records in the table.

    Returns
    -------
    Table
        The columns of :data:`~toolkit.sandbox.arm.policy.world.FIELDS`.
    """
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
class Result:
    """A query's result: record positions (a plain query), or aggregated rows (``$apply``)."""

    rows: np.ndarray | None  # record positions, or
    frame: pd.DataFrame | None  # aggregated rows
    records: GroupRecords

    @property
    def size(self) -> int:
        """How many rows the result holds."""
        found = self.rows if self.rows is not None else self.frame
        return len(found) if found is not None else 0


#: The cache of query results in the sandbox's state: at most this many, or rows in all.
_RESULTS_KEY = "policy_results"
_RESULTS_MAX = 64
_RESULTS_MAX_ROWS = 8_000_000


def kept(sandbox: SandboxView, name: str, key: Any, make: Callable[[], Any],
         full: Callable[[OrderedDict[Any, Any]], bool]) -> Any:
    """Give the value of ``key`` in the sandbox's cache ``name``, made when missing.

    The cache keeps the values used last, dropping the oldest while ``full`` says so (one always
    stays); ``make`` runs outside the lock.

    Returns
    -------
    Any
        The cached or made value.
    """
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


def cached_result(sandbox: SandboxView, pw: PolicyWorld, scope: Scope, resource: str,
                  lo: float, hi: float, options: dict[str, str | None]) -> Result:
    """Evaluate a query over a scope and window, or give the result kept from the same query.

    A few whole results are kept, or many small ones (the slices of one query read concurrently).

    Returns
    -------
    Result
        The query's rows.
    """
    key = (scope.key, resource, lo, hi, tuple(sorted((k, v or "") for k, v in options.items())))
    # a few whole results, or many small ones (the slices of one query read concurrently)
    return kept(sandbox, _RESULTS_KEY, key,
                lambda: evaluate(sandbox, pw, scope, resource, lo, hi, options),
                lambda cache: len(cache) > _RESULTS_MAX
                or sum(r.size for r in cache.values()) > _RESULTS_MAX_ROWS)


def scope_rows(pw: PolicyWorld, scope: Scope, resource: str, lo: float,
               hi: float) -> tuple[GroupRecords, np.ndarray]:
    """Select the records of the scope in the window, newest first.

    Returns
    -------
    tuple of (GroupRecords, numpy.ndarray)
        The records of the scope's groups and the positions chosen (``latest``: the newest per
        resource and policy).
    """
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


#: The cache of scope tables in the sandbox's state: at most this many.
_TABLES_KEY = "policy_scope_tables"
_TABLES_MAX = 4


def scope_table(sandbox: SandboxView, pw: PolicyWorld, scope: Scope, resource: str, lo: float,
                hi: float) -> tuple[GroupRecords, Table]:
    """Give the scope's records in the window as a query table, kept for the few asked last.

    The queries of one read (counts, slices, filters) share it instead of sorting the scope's
    records again each.

    Returns
    -------
    tuple of (GroupRecords, Table)
        The records and their table.
    """

    def make() -> tuple[GroupRecords, Table]:
        rec, rows = scope_rows(pw, scope, resource, lo, hi)
        return rec, record_table(pw, rec, rows)

    return kept(sandbox, _TABLES_KEY, (scope.key, resource, lo, hi),
                make, lambda cache: len(cache) > _TABLES_MAX)


def evaluate(sandbox: SandboxView, pw: PolicyWorld, scope: Scope, resource: str, lo: float,
             hi: float, options: dict[str, str | None]) -> Result:
    """Run ``$filter``, ``$apply`` and ``$orderby`` over the scope's records in the window.

    Returns
    -------
    Result
        Record positions, or aggregated rows (record fields as the service writes them when
        ``$apply`` keeps whole records).

    Raises
    ------
    ODataError
        For an expression the sandbox cannot read.
    """
    rec, table = scope_table(sandbox, pw, scope, resource, lo, hi)
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
            return Result(None, frame.astype(object).where(frame.notna(), None), rec)
        return Result(None, out.frame(), rec)
    if options["$orderby"]:
        table = table.take(order_rows(table, parse_orderby(options["$orderby"])))
    return Result(table.rows, None, rec)
