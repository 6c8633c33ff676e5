"""Policy compliance states (spec 1 §2.8, §4.6): :func:`policy_states`.

It reads every page of a ``policyStates/{latest|default}/queryResults`` query (POSTs to
``@odata.nextLink``) into one typed frame, built for large results: each page goes straight into
columns (:class:`~toolkit._core.columns.InterningBuilder`), the next page is asked for while the
current body still streams when the envelope names its link first
(:func:`~toolkit._core.paging.iter_pages` with ``prefetch``), and a large read over a fixed window
is split into time slices read as concurrent chains (:func:`~toolkit._core.partitions.read_chains`),
whose frames joined give the frame of one chain. Every request of a read, in every chain, takes a
token from the pipeline's bucket of resource-manager reads for the subscription (shared with every
other call on the connection, see :meth:`~toolkit._core.pipeline.Pipeline.limiter`), so that
concurrency never sends faster than the service's throttling allows.
``$apply`` results are typed by :mod:`toolkit.arm.aggregates`; the analysis helpers live in
:mod:`toolkit.arm.compliance`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, overload

import pandas as pd

from toolkit._core.columns import InterningBuilder, page_decoder
from toolkit._core.errors import ValidationError
from toolkit._core.messages import Request
from toolkit._core.paging import (
    ODATA,
    collect_frame,
    envelope_next_link,
    iter_pages,
)
from toolkit._core.partitions import read_chains
from toolkit._core.registry import OperationRecord, register
from toolkit._core.schemas import Col
from toolkit._core.validate import (
    check_api_version,
    check_choice,
    check_expression,
    check_int,
    check_names,
    check_time,
    iso_time,
)
from toolkit._spec.arm import (
    POLICY_API_VERSIONS,
    POLICY_FIELDS as SPEC_POLICY_FIELDS,
    RESOURCE_FIELDS,
)
from toolkit.arm._schemas import POLICY_STATES
from toolkit.arm.aggregates import aggregate_frame
from toolkit.arm.engine import policy_states_dask
from toolkit.arm.scopes import check_expand, resolve_scope
from toolkit.arm.slices import Bounds, slice_filter, time_order, time_slices
from toolkit.connection import get_connection

if TYPE_CHECKING:
    import dask.dataframe as dd

    from toolkit._core.pipeline import Pipeline
    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["policy_states"]

API_VERSION = POLICY_API_VERSIONS[0]
OPERATION = "policy_states"
_BY_LOWER = {c.name.lower(): c for c in POLICY_STATES.columns}
#: The fields of a resource (RESOURCE_FIELDS) and of an assignment-definition pair repeat
#: together, so each set is interned together (the list of group names is read per record).
POLICY_FIELDS = tuple(f for f in SPEC_POLICY_FIELDS if f != "policyDefinitionGroupNames")


@overload
def policy_states(
    subscription_id: str | None = None,
    resource_group: str | None = None,
    *,
    scope: str | None = None,
    resource: str = "latest",
    filter: str | None = None,
    apply: str | None = None,
    select: str | Sequence[str] | None = None,
    orderby: str | Sequence[str] | None = None,
    top: int | None = None,
    start: Any = None,
    end: Any = None,
    expand: str | Sequence[str] | None = None,
    max_items: int | None = None,
    partitions: int | None = None,
    engine: Literal["pandas"] = "pandas",
    api_version: str = API_VERSION,
    connection: Connection | None = None,
) -> pd.DataFrame: ...


@overload
def policy_states(
    subscription_id: str | None = None,
    resource_group: str | None = None,
    *,
    scope: str | None = None,
    resource: str = "latest",
    filter: str | None = None,
    apply: str | None = None,
    select: str | Sequence[str] | None = None,
    orderby: str | Sequence[str] | None = None,
    top: int | None = None,
    start: Any = None,
    end: Any = None,
    expand: str | Sequence[str] | None = None,
    max_items: int | None = None,
    partitions: int | None = None,
    engine: Literal["dask"],
    api_version: str = API_VERSION,
    connection: Connection | None = None,
) -> dd.DataFrame: ...


@overload
def policy_states(
    subscription_id: str | None = None,
    resource_group: str | None = None,
    *,
    scope: str | None = None,
    resource: str = "latest",
    filter: str | None = None,
    apply: str | None = None,
    select: str | Sequence[str] | None = None,
    orderby: str | Sequence[str] | None = None,
    top: int | None = None,
    start: Any = None,
    end: Any = None,
    expand: str | Sequence[str] | None = None,
    max_items: int | None = None,
    partitions: int | None = None,
    engine: str,
    api_version: str = API_VERSION,
    connection: Connection | None = None,
) -> pd.DataFrame | dd.DataFrame: ...


def policy_states(
    subscription_id: str | None = None,
    resource_group: str | None = None,
    *,
    scope: str | None = None,
    resource: str = "latest",
    filter: str | None = None,
    apply: str | None = None,
    select: str | Sequence[str] | None = None,
    orderby: str | Sequence[str] | None = None,
    top: int | None = None,
    start: Any = None,
    end: Any = None,
    expand: str | Sequence[str] | None = None,
    max_items: int | None = None,
    partitions: int | None = None,
    engine: str = "pandas",
    api_version: str = API_VERSION,
    connection: Connection | None = None,
) -> pd.DataFrame | dd.DataFrame:
    """Query the policy compliance states at a scope (a resource group, a subscription, ...).

    Every page is read (1000 records a page, next pages POSTed to ``@odata.nextLink``); the next
    page is fetched while the current one is parsed, and records go straight into typed columns.

    Parameters
    ----------
    subscription_id : str, optional
        Subscription (UUID); alone, the subscription is the scope.
    resource_group : str, optional
        Resource group name (1 to 90 characters) in that subscription.
    scope : str, optional
        Instead of the two above, any scope the service answers for, as the ARM scope string the
        portal shows, in either vocabulary: a management group
        (``/providers/Microsoft.Management/managementGroups/<name>``), a subscription, a resource
        group, a resource id, a policy assignment id (subscription or resource-group level), a
        policy definition or policy set definition at subscription level
        (``/subscriptions/<id>/providers/Microsoft.Authorization/policyDefinitions/<name>``).
    resource : {"latest", "default"}
        ``latest``: the newest state per (resource, assignment, definition, reference id) in the
        window; ``default``: every state record in the window (the evaluation history).
    filter : str, optional
        OData ``$filter``, e.g. ``"complianceState eq 'NonCompliant' and
        policyDefinitionAction eq 'audit'"``.
    apply : str, optional
        OData ``$apply``, e.g. ``"groupby((policyAssignmentName, complianceState),
        aggregate($count as records))"``; the frame then holds the grouped columns and the
        aliases.
    select : str or list of str, optional
        Columns to keep (``$select``).
    orderby : str or list of str, optional
        ``"column [asc|desc]"`` items (``$orderby``; the service sorts descending by default).
    top : int, optional
        At most this many records (``$top``, >= 0).
    start, end : datetime, pandas.Timestamp or ISO 8601 str, optional
        The window (``$from``, ``$to``); naive times are UTC. The service defaults ``end`` to the
        time of the request and ``start`` to one day before ``end``.
    expand : {"components", "PolicyEvaluationDetails"} or list, optional
        Nested details to include (``$expand``), at resource scope only (the service's rule);
        ``"components($filter=...;$apply=...)"`` filters or aggregates the components.
    max_items : int, optional
        Stop after this many rows (warns that the result is truncated).
    partitions : int, optional
        At most this many time slices of the window read as concurrent chains (default: the
        ``max_partitions`` setting, 16; ``1`` reads one chain). Used only for a window with both
        ``start`` and ``end``, without ``top``, ``max_items`` or ``apply``, in the service's
        order or ordered by ``timestamp`` first, and when every slice holds at least
        ``slices.PARTITION_MIN_PAGES`` pages; the frame is the one a single chain gives.
    engine : {"pandas", "dask"}
        ``"dask"`` reads the scope as one task per subscription (a management group's) or per
        resource group (a subscription's), or per day of a ``default`` window, on the active
        ``distributed.Client``, else dask's local scheduler, and returns a
        ``dask.dataframe.DataFrame`` with the same columns and dtypes (see
        :mod:`toolkit.arm.engine`).
    api_version : str
        The service version (spec 1 §9).
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row per state record, with the service's field names: ``timestamp`` (datetime UTC),
        ``resourceId``, ``policyAssignmentId``, ``policyDefinitionId``, ``effectiveParameters``,
        ``isCompliant`` (boolean, deprecated by the service), ``subscriptionId``,
        ``resourceType``, ``resourceLocation``, ``resourceGroup``, ``resourceTags``,
        ``policyAssignmentName``, ``policyAssignmentOwner``, ``policyAssignmentParameters``,
        ``policyAssignmentScope``, ``policyDefinitionName``, ``policyDefinitionAction`` (the
        effect), ``policyDefinitionCategory``, ``policySetDefinitionId``,
        ``policySetDefinitionName``, ``policySetDefinitionOwner``,
        ``policySetDefinitionCategory``, ``policySetDefinitionParameters``,
        ``managementGroupIds``, ``policyDefinitionReferenceId``, ``complianceState`` (ordered
        category ``Unknown < Exempt < Conflict < Compliant < NonCompliant``, the roll-up rank;
        other values are kept), ``policyDefinitionGroupNames`` (list; rows with the same names
        share one list, so treat them as read-only), the three
        ``...Version`` columns (all these text columns are categories), ``components`` and
        ``policyEvaluationDetails`` (nested objects, set with ``expand``). The OData annotations
        ``@odata.id`` (always null) and ``@odata.context`` are left out.

        With ``select``, only those columns. With ``apply``, the grouped columns (typed as
        above) and the aggregate aliases (``$count`` aliases ``Int64``). An empty result is an
        empty frame with the same columns. With ``engine="dask"``, a ``dask.dataframe``
        DataFrame with the same columns and dtypes, one partition per slice.
        ``attrs["window"]`` holds the window asked, ``[start, end]`` as ISO 8601 strings
        (``None`` for an end the service chose), which :func:`compliance_trend` reads to tell
        the periods only partly inside it. ``attrs["quota_left"]`` holds the fewest requests
        the policy-insights provider's own quota said it had left during the read
        (``{"policy-insights": 37}``), when its answers counted it.

    Raises
    ------
    ValidationError
        Bad arguments (before any request): ``top`` < 0, ``start`` not before ``end``,
        ``resource`` not latest/default, empty expressions, a malformed scope, ``expand`` at
        another scope than a resource, ...
    ApiError
        ``QueryFailure`` from the service (a bad ``$filter``/``$apply`` names the problem),
        ``NotFoundError`` for an unknown subscription or resource group.
    """
    where = resolve_scope(subscription_id, resource_group, scope)
    engine = check_choice(engine, "engine", ("pandas", "dask"))
    query = _Query.checked(where, resource=resource, filter=filter, apply=apply, select=select,
                           orderby=orderby, top=top, start=start, end=end, expand=expand,
                           max_items=max_items, partitions=partitions, api_version=api_version)
    if engine == "dask":
        if partitions is not None:
            raise ValidationError("partitions", partitions, "is for engine='pandas'; "
                                                            "engine='dask' slices the scope itself")
        return policy_states_dask(policy_states, where, resource=query.resource,
                                  filter=query.filter, apply=query.apply, select=query.select,
                                  orderby=query.orderby, top=top, start=query.start,
                                  end=query.end, expand=query.expand, max_items=max_items,
                                  api_version=api_version, connection=connection)
    conn = get_connection(connection)
    pipe = conn.pipeline("arm")
    path = (f"{where.path(conn.namespace)}/providers/{conn.namespace}.PolicyInsights/"
            f"policyStates/{query.resource}/queryResults")
    read = _read_aggregates if query.apply is not None else _read_records
    return _with_window(read(pipe, path, query, conn), query.start, query.end)


@dataclass(frozen=True)
class _Query:
    """The arguments of a policy states query, checked (before any request)."""

    resource: str
    filter: str | None
    apply: str | None
    select: str | None
    orderby: str | None
    top: int | None
    start: pd.Timestamp | None
    end: pd.Timestamp | None
    expand: str | None
    max_items: int | None
    partitions: int | None
    api_version: str

    @classmethod
    def checked(cls, where: Any, *, resource: Any, filter: Any, apply: Any, select: Any,
                orderby: Any, top: Any, start: Any, end: Any, expand: Any, max_items: Any,
                partitions: Any, api_version: Any) -> _Query:
        """Check every argument, in the order the parameters come."""
        resource = check_choice(resource, "resource", ("latest", "default"),
                                case_insensitive=True)
        filter_ = check_expression(filter, "filter")
        apply_ = check_expression(apply, "apply")
        select_ = check_names(select, "select", fields=True)
        orderby_ = check_names(orderby, "orderby")
        if top is not None:
            check_int(top, "top", minimum=0)
        if max_items is not None:
            check_int(max_items, "max_items", minimum=0)
        if partitions is not None:
            check_int(partitions, "partitions", minimum=1, maximum=64)
        start_ts = check_time(start, "start")
        end_ts = check_time(end, "end")
        if start_ts is not None and end_ts is not None and not start_ts < end_ts:
            raise ValidationError("start", start, f"must be before end ({iso_time(end_ts)})")
        expand_ = check_expand(expand, where)
        check_api_version(api_version)
        return cls(resource, filter_, apply_, select_, orderby_, top, start_ts, end_ts, expand_,
                   max_items, partitions, api_version)

    @property
    def params(self) -> dict[str, Any]:
        """The query string of the first request."""
        return {
            "api-version": self.api_version,
            "$top": self.top,
            "$orderby": self.orderby,
            "$select": self.select,
            "$from": iso_time(self.start) if self.start is not None else None,
            "$to": iso_time(self.end) if self.end is not None else None,
            "$filter": self.filter,
            "$apply": self.apply,
            "$expand": self.expand,
        }

    @property
    def columns(self) -> list[Col]:
        """The columns of the frame: the schema's, or those ``$select`` names."""
        if self.select is None:
            return list(POLICY_STATES.columns)
        return [_BY_LOWER.get(name.lower(), Col(name, "string"))
                for name in dict.fromkeys(s.strip() for s in self.select.split(","))]


class _Aggregates:
    """Keep the records of an ``$apply`` query and type them as a frame once read.

    A frame sink of :func:`~toolkit._core.paging.collect_frame`: its progress bar, ``max_items``
    and partial results on a failure are those of every other read.
    """

    def __init__(self, apply: str) -> None:
        self.apply = apply
        self.records: list[Any] = []

    @property
    def rows(self) -> int:
        return len(self.records)

    def add(self, records: list[Any]) -> None:
        self.records.extend(records)

    def build(self, attrs: Mapping[str, Any] | None = None) -> pd.DataFrame:
        return aggregate_frame(self.records, self.apply, dict(attrs or {}))


def _read_aggregates(pipe: Pipeline, path: str, query: _Query,
                     conn: Connection) -> pd.DataFrame:
    """Read an ``$apply`` query: its rows are the aggregates, typed by the expression."""
    assert query.apply is not None
    pages = iter_pages(pipe, "POST", path, style=ODATA, params=query.params,
                       operation=OPERATION)
    try:
        return collect_frame(pages, _Aggregates(query.apply), operation=OPERATION,
                             max_items=query.max_items, connection=conn,
                             api_version=query.api_version)
    finally:
        pages.close()


def _read_records(pipe: Pipeline, path: str, query: _Query, conn: Connection) -> pd.DataFrame:
    """Read the state records, as one chain of pages or in time slices read concurrently.

    Slices only for a long window: the first page's next link tells, the count then measures.
    """
    columns = query.columns

    def new_builder() -> InterningBuilder:
        return InterningBuilder(columns, groups=(RESOURCE_FIELDS, POLICY_FIELDS))

    decode = page_decoder(columns, ODATA.items_key, ODATA.next_key)
    params = query.params
    limit = conn.settings.max_partitions if query.partitions is None else query.partitions
    descending = time_order(query.orderby)
    first = None
    if (limit > 1 and query.top is None and query.max_items is None and query.start is not None
            and query.end is not None and descending is not None):
        first = pipe.send(Request("POST", path, params=params, operation=OPERATION,
                                  check_json=False))
        if envelope_next_link(first.content, ODATA) is not None:
            slices = time_slices(pipe, path, params, query.filter, query.start, query.end,
                                 limit)
            if len(slices) > 1:
                return _read_slices(pipe, path, params, query.filter, slices, descending,
                                    new_builder, limit, conn, query.api_version, decode)
    pages = iter_pages(pipe, "POST", path, style=ODATA, params=params, operation=OPERATION,
                       prefetch=True, first=first, decode=decode)
    try:
        return collect_frame(pages, new_builder(), operation=OPERATION,
                             max_items=query.max_items, connection=conn,
                             api_version=query.api_version)
    finally:
        pages.close()


def _with_window(df: pd.DataFrame, start: pd.Timestamp | None,
                 end: pd.Timestamp | None) -> pd.DataFrame:
    """Record the window asked, so that periods only partly inside it can be told.

    ``attrs["window"]`` holds the ISO 8601 start and end, ``None`` for an end the service chose
    from its own clock; a list, as a JSON round trip gives it back.
    """
    df.attrs["window"] = [iso_time(start) if start is not None else None,
                          iso_time(end) if end is not None else None]
    return df


def _read_slices(pipe: Pipeline, path: str, params: dict[str, Any], filter_: str | None,
                 slices: Bounds,
                 descending: bool, new_builder: Any, limit: int,
                 conn: Connection, api_version: str, decode: Any) -> pd.DataFrame:
    """Read the query as one chain per time slice, joined in the order of one chain.

    That is newest slice first, or oldest first for an ascending ``timestamp`` order.
    """
    if descending:
        slices = slices[::-1]
    logger.debug("%s: %d time slices read as concurrent chains", OPERATION, len(slices))

    def chain(bounds: tuple[pd.Timestamp | None, pd.Timestamp | None]) -> Any:
        part = {**params, "$filter": slice_filter(filter_, *bounds)}
        return lambda: iter_pages(pipe, "POST", path, style=ODATA, params=part,
                                  operation=OPERATION, decode=decode, prefetch=True)

    df = read_chains([chain(b) for b in slices], new_builder, operation=OPERATION,
                     workers=limit, connection=conn, api_version=api_version)
    df.attrs["truncated"] = False
    return df


RECORD = register(OperationRecord(OPERATION, schema=POLICY_STATES, lifetime=3_600,
                                  plot="compliance_by"))
