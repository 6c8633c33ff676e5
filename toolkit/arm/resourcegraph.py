"""Resource Graph queries (KQL over the tenant's resources): :func:`resource_graph`.

One ``POST /providers/{ns}.ResourceGraph/resources`` query, every page of it read: the service
pages a result a thousand rows at a time and names the next page with a ``$skipToken`` only when
the query projects ``id``; a result it cannot page (or truncates) raises, or warns, saying what to
change, and is never handed back as if it were whole. Subscriptions go in batches of at most a
thousand; management groups and the tenant are asked at once. Each query takes a place in the
user's quota (a few queries every few seconds, counted by the service in fixed windows and
reported with each answer), kept per connection by :class:`~toolkit._core.quota.QuotaWindow`
and shown beside the progress bar. The frame is typed from the service's own column metadata
(the ``table`` result format).
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from toolkit._core.errors import (
    ApiError,
    IncompleteResultError,
    ProtocolError,
    TruncatedResultWarning,
    ValidationError,
    warn_user,
)
from toolkit._core.frames import FrameBuilder
from toolkit._core.messages import Request, Response
from toolkit._core.paging import EMPTY_PAGE_LIMIT
from toolkit._core.progress import progress_bar
from toolkit._core.provenance import provenance
from toolkit._core.quota import QuotaWindow, shared_quota
from toolkit._core.registry import OperationRecord, register
from toolkit._core.schemas import Col, Schema
from toolkit._core.validate import (
    check_api_version,
    check_choice,
    check_int,
    check_name,
    check_uuid,
)
from toolkit._spec.arm import (
    MANAGEMENT_GROUP_NAME_PATTERN,
    RESOURCE_GRAPH_API_VERSIONS,
    RESOURCE_GRAPH_COLUMN_TYPES,
    RESOURCE_GRAPH_PAGE_MAX,
    RESOURCE_GRAPH_PATH,
    RESOURCE_GRAPH_QUOTA,
    RESOURCE_GRAPH_QUOTA_HEADERS,
    RESOURCE_GRAPH_QUOTA_WINDOW_SECONDS,
    RESOURCE_GRAPH_RESULT_FORMATS,
    RESOURCE_GRAPH_SKIP_TOKEN_KEY,
    RESOURCE_GRAPH_SUBSCRIPTION_BATCH,
)
from toolkit.connection import get_connection

if TYPE_CHECKING:
    from toolkit._core.pipeline import Pipeline
    from toolkit._core.progress import ProgressBar
    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["resource_graph"]

OPERATION = "resource_graph"
API_VERSION = RESOURCE_GRAPH_API_VERSIONS[0]
#: The result format asked for: the one that says each column's type.
_TABLE = RESOURCE_GRAPH_RESULT_FORMATS[1]
#: The column types the service writes, as the frame's column kinds.
_KINDS = dict(zip(RESOURCE_GRAPH_COLUMN_TYPES,
                  ("string", "Int64", "float", "boolean", "object", "datetime"), strict=True))
_GROUP_NAME = re.compile(MANAGEMENT_GROUP_NAME_PATTERN)
_GROUP_RULE = ("must be a management group id: 1 to 90 letters, digits, '-', '_', '(', ')' or "
               "'.', not ending in '.'")
#: Tabular operators whose rows depend on the rows of other subscriptions: a query holding one
#: cannot be split into batches of subscriptions and the batches' rows put together.
_WHOLE_RESULT = re.compile(
    r"\|\s*(summarize|count|top|top-nested|take|limit|sort|order|distinct|sample|"
    r"sample-distinct|make-series|serialize|union)\b", re.IGNORECASE)
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
#: Whether a query projects ``id`` (the service pages only such results), read from its
#: columns.
_ID = "id"


def _scopes(subscriptions: Any, management_groups: Any
            ) -> tuple[list[str] | str | None, list[str] | None]:
    """Check the scope arguments: subscriptions (a list, ``"all"``) or groups, or neither."""
    subs: list[str] | str | None = None
    groups: list[str] | None = None
    if subscriptions is not None:
        if isinstance(subscriptions, str) and subscriptions.lower() == "all":
            subs = "all"
        else:
            items = [subscriptions] if isinstance(subscriptions, str) else _many(
                subscriptions, "subscriptions", "subscription ids (UUID strings)")
            seen: dict[str, str] = {}
            for i, item in enumerate(items):
                where = "subscriptions" if isinstance(subscriptions, str) else \
                    f"subscriptions[{i}]"
                sub = check_uuid(item, where)
                seen.setdefault(sub.lower(), sub)
            subs = list(seen.values())
    if management_groups is not None:
        items = [management_groups] if isinstance(management_groups, str) else _many(
            management_groups, "management_groups", "management group ids")
        groups = []
        for i, item in enumerate(items):
            where = "management_groups" if isinstance(management_groups, str) else \
                f"management_groups[{i}]"
            name = check_name(item, where, max_len=90, pattern=_GROUP_NAME, rule=_GROUP_RULE)
            if name.lower() not in {g.lower() for g in groups}:
                groups.append(name)
    if subs is not None and groups is not None:
        raise ValidationError("management_groups", management_groups,
                              "give subscriptions or management_groups, not both (neither: "
                              "every subscription the caller can see)")
    return subs, groups


def _many(value: Any, parameter: str, what: str) -> list[Any]:
    """Make a non-empty list of a list, tuple, set, Series or other iterable of ``what``."""
    if isinstance(value, bytes | dict) or not isinstance(value, Iterable):
        raise ValidationError(parameter, value, f"must be one or a list of {what}")
    items = list(value)
    if not items:
        raise ValidationError(parameter, value, f"must hold at least one of the {what}")
    return items


def _expand_columns(value: Any) -> bool | list[str]:
    """``expand``: a flag, or the names of the dynamic columns to flatten."""
    if isinstance(value, bool):
        return value
    names = [value] if isinstance(value, str) else _many(value, "expand", "column names")
    for i, name in enumerate(names):
        if not isinstance(name, str) or not name.strip():
            raise ValidationError(f"expand[{i}]" if not isinstance(value, str) else "expand",
                                  name, "must be True, False, or the names of the result's "
                                        "dynamic (object) columns to flatten")
    return names


def _check_query(query: Any) -> str:
    if not isinstance(query, str) or not query.strip():
        raise ValidationError("query", query, "must be a KQL query: a non-empty string such as "
                                              "\"resources | project id, name, type\"")
    if "\x00" in query:
        raise ValidationError("query", query, "must not hold a NUL character")
    return query


def _splits_badly(query: str) -> str | None:
    """Name the operator that keeps a query from being run in batches of subscriptions."""
    m = _WHOLE_RESULT.search(_QUOTED.sub("''", query))
    return m.group(1).lower() if m else None


class _Result:
    """The columns and rows read so far, over every page of every batch."""

    def __init__(self) -> None:
        self.columns: list[dict[str, str]] | None = None
        self.data: list[list[Any]] = []
        self.rows = 0
        self.total = 0
        self.incomplete: list[str] = []
        self.truncated = False
        self.request_ids: list[str] = []
        self.url: str | None = None

    def add(self, response: Response, columns: list[dict[str, str]],
            rows: list[list[Any]], keep: int | None) -> None:
        if self.columns is None:
            self.columns = columns
            self.data = [[] for _ in columns]
        elif [(c["name"], c["type"]) for c in columns] != \
                [(c["name"], c["type"]) for c in self.columns]:
            raise response.refuse(f"{OPERATION}: a page's columns differ from the first page's "
                                  f"({[c['name'] for c in columns][:20]})")
        if keep is not None:
            rows = rows[:keep]
        for i, store in enumerate(self.data):
            store.extend(row[i] for row in rows)
        self.rows += len(rows)


def _table(response: Response, body: dict[str, Any]) -> tuple[list[dict[str, str]],
                                                                list[list[Any]]]:
    """Read a page's ``data``: a table (typed columns) or an object array (typed here)."""
    data = body.get("data")
    if isinstance(data, list):  # the objectArray format (a service that ignored the option)
        return _object_array(response, data)
    if not isinstance(data, dict):
        raise response.refuse(f"{OPERATION}: 'data' is neither a table nor a list of rows")
    columns, rows = data.get("columns"), data.get("rows")
    if not isinstance(columns, list) or not isinstance(rows, list):
        raise response.refuse(f"{OPERATION}: the table has no 'columns' and 'rows' lists")
    out: list[dict[str, str]] = []
    for c in columns:
        name = c.get("name") if isinstance(c, dict) else None
        kind = c.get("type") if isinstance(c, dict) else None
        if not isinstance(name, str) or not name:
            raise response.refuse(f"{OPERATION}: a column has no name")
        if not isinstance(kind, str) or kind not in _KINDS:
            logger.debug("%s: column %s of undocumented type %r kept as objects", OPERATION,
                         name[:100], kind)
            kind = "object"
        out.append({"name": name, "type": kind})
    if len({c["name"] for c in out}) != len(out):
        raise response.refuse(f"{OPERATION}: the table names a column twice")
    for row in rows:
        if not isinstance(row, list) or len(row) != len(out):
            raise response.refuse(f"{OPERATION}: a row does not hold one value per column "
                                  f"({len(out)})")
    return out, rows


def _object_array(response: Response, data: list[Any]) -> tuple[list[dict[str, str]],
                                                                 list[list[Any]]]:
    """Type the rows of the ``objectArray`` format, which names no column types."""
    names: dict[str, None] = {}
    for row in data:
        if not isinstance(row, dict):
            raise response.refuse(f"{OPERATION}: a row of 'data' is not an object")
        names.update(dict.fromkeys(row))
    columns = [{"name": n, "type": _type_of(row.get(n) for row in data)} for n in names]
    return columns, [[row.get(n) for n in names] for row in data]


def _type_of(values: Iterable[Any]) -> str:
    """Tell the column type of a column of JSON values (``object`` when they are mixed)."""
    kinds = set()
    for v in values:
        if v is None:
            continue
        if isinstance(v, bool):
            kinds.add("boolean")
        elif isinstance(v, int):
            kinds.add("integer")
        elif isinstance(v, float):
            kinds.add("number")
        elif isinstance(v, str):
            kinds.add("string")
        else:
            kinds.add("object")
    if kinds == {"integer", "number"}:
        return "number"
    return kinds.pop() if len(kinds) == 1 else ("string" if not kinds else "object")


def _flatten(df: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Flatten dynamic columns of objects into ``column.key`` columns (lists stay whole)."""
    out: dict[str, Any] = {}
    for name in df.columns:
        if name not in columns or df[name].dtype != object:
            out[name] = df[name]
            continue
        values = df[name].tolist()
        objects = [v if isinstance(v, dict) else {} for v in values]
        if any(v is not None and not isinstance(v, dict) for v in values):
            out[name] = df[name]  # scalars or lists among the objects: kept as they are
        if any(objects):
            flat = pd.json_normalize(objects, sep=".")
            for sub in flat.columns:
                col = Col(f"{name}.{sub}", _KINDS[_type_of(flat[sub].dropna())])
                out[col.name] = _converted(flat[sub].tolist(), col)
    frame = pd.DataFrame(out, index=df.index)
    frame.attrs.update(df.attrs)
    return frame


def _converted(values: list[Any], col: Col) -> Any:
    builder = FrameBuilder(Schema(OPERATION, (col,)), flat=True)
    builder.add_columns({col.name: [None if isinstance(v, float) and math.isnan(v) else v
                                    for v in values]})
    return builder.build()[col.name].array


def _describe(subs: list[str] | str | None, groups: list[str] | None) -> dict[str, Any]:
    if groups is not None:
        return {"management_groups": list(groups)}
    if isinstance(subs, list):
        return {"subscriptions": len(subs)}
    return {"tenant": True}


def _why_incomplete(result: _Result, read: int, total: int, truncated: bool) -> str:
    names = [c["name"].lower() for c in result.columns or []]
    if _ID not in names:
        return (f"the service returned {read} of {total} rows and no continuation token: it "
                "pages only results that include the `id` column. Project `id` (for example "
                "`| project id, name, type`), or summarize so that the result has at most "
                f"{RESOURCE_GRAPH_PAGE_MAX} rows")
    if truncated:
        return (f"the service returned {read} of {total} rows and said the result is truncated "
                "(resultTruncated); narrow the query (a `where` on type, subscription or "
                "resource group) or ask fewer columns")
    return (f"the service returned {read} of {total} rows and no continuation token; ask again, "
            "or narrow the query")


def _with_details(err: ApiError) -> None:
    """Add the service's details to an error's text.

    Its own message says little more than where to ask for support; the details say what is
    wrong with the query.
    """
    notes = [f"{d.get('code')}: {d.get('message')}" for d in err.details
             if isinstance(d, dict) and isinstance(d.get("message"), str)]
    if notes:
        err.args = (f"{err.args[0] if err.args else ''}\nDetails: {'; '.join(notes)[:2000]}",
                    *err.args[1:])


def _read_batch(pipe: Pipeline, quota: QuotaWindow, bar: ProgressBar, result: _Result,
                body: dict[str, Any], page_size: int, max_items: int | None,
                api_version: str, path: str, prefix: str) -> bool:
    """Read every page of one request's query into ``result``; ``False`` at ``max_items``."""
    seen: set[str] = set()
    empty = 0
    read = 0
    total = None
    options: dict[str, Any] = {"resultFormat": _TABLE, "$top": page_size}
    remaining_header, resets_header = (prefix + h for h in RESOURCE_GRAPH_QUOTA_HEADERS)
    while True:
        quota.acquire()
        response = None
        try:
            response = pipe.send(Request("POST", path, params={"api-version": api_version},
                                         json={**body, "options": options},
                                         operation=OPERATION))
        except ApiError as err:
            _with_details(err)
            raise
        finally:
            quota.finished(response.headers if response is not None else None,
                           remaining_header, resets_header)
        left, resets = quota.status()
        bar.note(f"quota {left}/{quota.limit}" + (f", resets in {resets:.0f} s" if resets else ""))
        page = response.json_object()
        columns, rows = _table(response, page)
        if total is None:
            first_total = page.get("totalRecords")
            total = first_total if isinstance(first_total, int) and \
                not isinstance(first_total, bool) and first_total >= 0 else None
            result.total += total if total is not None else 0
        result.url = result.url or response.url
        if response.request_id:
            result.request_ids.append(response.request_id)
        keep = None if max_items is None else max(0, max_items - result.rows)
        result.add(response, columns, rows, keep)
        read += len(rows)
        bar.update(1)
        token = page.get(RESOURCE_GRAPH_SKIP_TOKEN_KEY)
        if token is not None and (not isinstance(token, str) or not token):
            raise response.refuse(f"{OPERATION}: the continuation token is not a string")
        truncated = str(page.get("resultTruncated", "false")).lower() == "true"
        if max_items is not None and result.rows >= max_items and \
                (token or len(rows) > (keep or 0) or (total or 0) > read):
            result.truncated = True
            return False
        if not token:
            if truncated or (total is not None and read < total):
                result.incomplete.append(_why_incomplete(result, read, total or read,
                                                         truncated))
            return True
        if token in seen:
            raise ProtocolError(f"{OPERATION}: the service sent the same continuation token "
                                "twice; stopping instead of looping", url=response.url)
        seen.add(token)
        empty = empty + 1 if not rows else 0
        if empty >= EMPTY_PAGE_LIMIT:
            raise ProtocolError(f"{OPERATION}: {empty} pages in a row held no rows but named a "
                                "next page; stopping", url=response.url)
        options = {"resultFormat": _TABLE, RESOURCE_GRAPH_SKIP_TOKEN_KEY: token}


def resource_graph(
    query: str,
    subscriptions: str | Sequence[str] | None = None,
    management_groups: str | Sequence[str] | None = None,
    *,
    expand: bool | str | Sequence[str] = False,
    incomplete: str = "raise",
    max_items: int | None = None,
    page_size: int = RESOURCE_GRAPH_PAGE_MAX,
    api_version: str = API_VERSION,
    connection: Connection | None = None,
) -> pd.DataFrame:
    """Run a Resource Graph query (KQL) and read every row of its result.

    Every page is read (``$skipToken``), within the user's quota of queries (paced on the
    service's own count, and shown beside the progress bar). The service pages only results
    that include the ``id`` column: a larger result without it, or one the service truncated,
    is never handed back as if it were whole (see ``incomplete``).

    Parameters
    ----------
    query : str
        The KQL query, over ``resources``, ``resourcecontainers``, ``policyresources`` or any
        other table of the service (e.g. ``"resources | where type =~
        'microsoft.compute/virtualmachines' | project id, name, location"``).
    subscriptions : str or sequence of str, optional
        Subscription ids to query (sent in batches of at most 1,000, each read whole, their rows
        put together), or ``"all"``: every subscription the caller can see (listed first). A
        query that summarizes, counts, orders or takes rows cannot be split so: over more than
        1,000 subscriptions give ``management_groups`` instead.
    management_groups : str or sequence of str, optional
        Management group ids (the tenant root group's id is the tenant id). Not with
        ``subscriptions``. Neither: every subscription the caller can see, as the service
        decides at the tenant's scope.
    expand : bool, str or sequence of str
        ``False`` (default): dynamic (``object``) columns hold Python objects (dicts, lists,
        scalars). ``True``, or the names of some of them: those holding objects are flattened
        into ``column.key`` columns (nested keys joined with ``.``; lists stay whole; a column
        that also holds non-objects is kept beside them), typed from their values.
    incomplete : {"raise", "warn"}
        What to do when the service gives part of the result and no way to read the rest:
        ``"raise"`` IncompleteResultError (its ``partial`` holds the rows that came), or
        ``"warn"`` (TruncatedResultWarning) and return them with ``attrs["complete"] = False``.
        The message says what to change in the query.
    max_items : int, optional
        Stop after this many rows (warns that the result is truncated).
    page_size : int
        Rows a page (``$top``, 1 to 1,000).
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row per result row, the columns the query gives, in its order, typed from the
        service's column metadata: ``string`` (text), ``integer`` (``Int64``), ``number``
        (float), ``boolean``, ``datetime`` (UTC) and ``object`` (Python objects, or flattened
        with ``expand``). ``attrs`` holds the provenance and ``query``, ``scope``,
        ``total_records`` (the service's count of the result's rows), ``columns`` (the service's
        ``{name, type}``), ``batches``, ``complete`` and ``truncated``.

    Raises
    ------
    ValidationError
        Bad arguments, or a query that cannot be split into batches of subscriptions (before
        any request).
    IncompleteResultError
        With ``incomplete="raise"``: the service gave part of the result and no way to read the
        rest (``err.partial`` holds what came).
    ApiError
        From the service (a query it cannot run names the problem; its quota used up and the
        wait longer than ``max_retry_wait``: RateLimitError).
    """
    text = _check_query(query)
    subs, groups = _scopes(subscriptions, management_groups)
    flatten = _expand_columns(expand)
    mode = check_choice(incomplete, "incomplete", ("raise", "warn"))
    if max_items is not None:
        max_items = check_int(max_items, "max_items", minimum=0)
    page_size = check_int(page_size, "page_size", minimum=1, maximum=RESOURCE_GRAPH_PAGE_MAX)
    check_api_version(api_version)
    if isinstance(subs, list):
        _refuse_split(text, len(subs))
    conn = get_connection(connection)
    if subs == "all":
        from toolkit.arm.resources import subscriptions as list_subscriptions

        listed = list_subscriptions(connection=conn)["subscriptionId"].dropna().tolist()
        subs = [str(s) for s in listed] or None  # none: the tenant's scope says the same
        if subs is not None:
            _refuse_split(text, len(subs))
    pipe = conn.pipeline("arm")
    quota = shared_quota(conn, "arm.resourcegraph", RESOURCE_GRAPH_QUOTA,
                         RESOURCE_GRAPH_QUOTA_WINDOW_SECONDS)
    path = f"/providers/{conn.namespace}.{RESOURCE_GRAPH_PATH}"
    bodies: list[dict[str, Any]]
    if isinstance(subs, list):
        step = RESOURCE_GRAPH_SUBSCRIPTION_BATCH
        bodies = [{"query": text, "subscriptions": subs[i:i + step]}
                  for i in range(0, len(subs), step)]
    elif groups is not None:
        bodies = [{"query": text, "managementGroups": groups}]
    else:
        bodies = [{"query": text}]
    result = _Result()
    bar = progress_bar(conn, desc=OPERATION, unit="page")
    try:
        for body in bodies:
            if max_items is not None and result.rows >= max_items and result.columns is not None:
                result.truncated = True
                break
            try:
                more = _read_batch(pipe, quota, bar, result, body, page_size, max_items,
                                   api_version, path, conn.header_prefix)
            except Exception as err:
                if result.rows and hasattr(err, "keep_partial"):
                    err.keep_partial(_frame(result, subs, groups, text, api_version, len(bodies),
                                            False),
                                     f"\n{result.rows} rows were read before the failure "
                                     "(err.partial).")
                raise
            if not more:
                break
    finally:
        bar.close()
    df = _frame(result, subs, groups, text, api_version, len(bodies), not result.incomplete)
    if flatten:
        objects = [c["name"] for c in result.columns or [] if c["type"] == "object"]
        chosen = objects if flatten is True else [n for n in flatten if n in objects]
        unknown = [] if flatten is True else [n for n in flatten if n not in objects]
        if unknown:
            logger.debug("%s: expand names no dynamic column: %s", OPERATION, unknown)
        df = _flatten(df, chosen)
    if result.truncated:
        warn_user(f"{OPERATION}: result truncated at max_items={max_items}; more rows exist. "
                  "Pass a larger max_items (or None) to read them all.", TruncatedResultWarning)
    if result.incomplete:
        message = f"{OPERATION}: " + "; ".join(dict.fromkeys(result.incomplete)) + "."
        if mode == "raise":
            failure = IncompleteResultError(message)
            failure.keep_partial(df, f"\nThe {len(df)} rows that came are in err.partial.")
            raise failure
        warn_user(message, TruncatedResultWarning)
    logger.debug("%s: %d rows in %d batch(es)", OPERATION, len(df), len(bodies))
    return df


def _refuse_split(text: str, count: int) -> None:
    if count <= RESOURCE_GRAPH_SUBSCRIPTION_BATCH:
        return
    operator = _splits_badly(text)
    if operator:
        batches = math.ceil(count / RESOURCE_GRAPH_SUBSCRIPTION_BATCH)
        raise ValidationError(
            "query", text,
            f"uses `{operator}`, whose rows depend on every subscription's rows; over {count} "
            f"subscriptions the query is sent in {batches} batches of at most "
            f"{RESOURCE_GRAPH_SUBSCRIPTION_BATCH}, whose results cannot be put together. Give "
            "management_groups instead, or leave the operator out and aggregate the rows in "
            "pandas")


def _frame(result: _Result, subs: list[str] | str | None, groups: list[str] | None, text: str,
           api_version: str, batches: int, complete: bool) -> pd.DataFrame:
    columns = result.columns or []
    schema = Schema(OPERATION, tuple(Col(c["name"], _KINDS[c["type"]]) for c in columns))
    builder = FrameBuilder(schema, flat=True)
    if columns:
        builder.add_columns({c["name"]: values
                             for c, values in zip(columns, result.data, strict=True)})
    attrs = provenance(OPERATION, api_version, result.url, result.request_ids)
    attrs.update(query=text, scope=_describe(subs, groups), total_records=result.total,
                 columns=[dict(c) for c in columns], batches=batches, complete=complete,
                 truncated=result.truncated or not complete)
    df = builder.build(attrs)
    for c in columns:  # dynamic columns stay Python objects, even when they all hold text
        if c["type"] == "object" and df[c["name"]].dtype != object:
            df[c["name"]] = pd.Series(_values(result, columns, c["name"]),
                                      index=df.index, dtype=object)
    return df


def _values(result: _Result, columns: list[dict[str, str]], name: str) -> list[Any]:
    """Give the values of one column as they came."""
    return result.data[[c["name"] for c in columns].index(name)]


RECORD = register(OperationRecord(OPERATION))
