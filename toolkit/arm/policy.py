"""Policy compliance states (spec 1 §2.8, §4.6) and the analysis helpers on top of them.

:func:`policy_states` reads every page of a ``policyStates/{latest|default}/queryResults`` query
(POSTs to ``@odata.nextLink``) into one typed frame. It is built for large results: the next page
is fetched in a background thread while the current one is parsed, and each page goes straight
into columns (repeated strings as categories, lists shared), so a million records never exist as
a million dicts at once.

:func:`compliance_summary` and :func:`compliance_trend` roll records up the way a compliance
dashboard does; :func:`evaluated_expressions` explodes ``policyEvaluationDetails``.
"""

from __future__ import annotations

import datetime as dt
import gc
import logging
import queue
import re
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
import pandas as pd

from toolkit._core.errors import ProtocolError, ToolkitError, ValidationError
from toolkit._core.frames import _as_text, build_frame, convert_column, empty_frame
from toolkit._core.paging import ODATA, Page, collect_frame, iter_pages
from toolkit._core.pipeline import segment
from toolkit._core.provenance import provenance
from toolkit._core.schemas import (
    COMPLIANCE_STATES,
    EVALUATED_EXPRESSIONS,
    POLICY_STATES,
    Col,
    Schema,
)
from toolkit._core.validate import (
    check_api_version,
    check_choice,
    check_frame,
    check_int,
    check_resource_group,
    check_subscription_id,
)
from toolkit._spec.arm import (
    POLICY_API_VERSIONS,
    POLICY_FIELDS as SPEC_POLICY_FIELDS,
    RESOURCE_FIELDS,
)
from toolkit.connection import get_connection

if TYPE_CHECKING:
    from toolkit._core.pipeline import Pipeline
    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["compliance_summary", "compliance_trend", "evaluated_expressions", "policy_states"]

API_VERSION = POLICY_API_VERSIONS[0]
OPERATION = "policy_states"
EXPAND_VALUES = ("components", "PolicyEvaluationDetails")
SWITCH_INTERVAL = 0.0005
GC_THRESHOLD = 100_000

_BY_LOWER = {c.name.lower(): c for c in POLICY_STATES.columns}
#: Fields that describe the resource, and the assignment-definition pair, of a record: they
#: repeat together, so they are interned together.
#: The policy fields interned together (the list of group names is read per record).
POLICY_FIELDS = tuple(f for f in SPEC_POLICY_FIELDS if f != "policyDefinitionGroupNames")


# ------------------------------------------------------------------------------ validation
def _check_text(value: Any, parameter: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(parameter, value, "must be a non-empty OData expression string")
    return value


def _check_names(value: Any, parameter: str) -> str | None:
    """A comma-separated string or a list of strings, joined with ','."""
    if value is None:
        return None
    if isinstance(value, str):
        items = [value]
    elif isinstance(value, Sequence) and not isinstance(value, bytes):
        items = list(value)
        if not items:
            raise ValidationError(parameter, value, "must name at least one column")
    else:
        raise ValidationError(parameter, value, "must be a string or a list of strings")
    for i, item in enumerate(items):
        if not isinstance(item, str) or not item.strip():
            name = parameter if isinstance(value, str) else f"{parameter}[{i}]"
            raise ValidationError(name, item, "must be a non-empty string")
    return ",".join(i.strip() for i in items)


def _check_time(value: Any, parameter: str) -> pd.Timestamp | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | dt.datetime | dt.date | pd.Timestamp):
        raise ValidationError(parameter, value, "must be a datetime, a pandas Timestamp or an "
                                                "ISO 8601 string")
    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError) as err:
        raise ValidationError(parameter, value, "must be a datetime, a pandas Timestamp or an "
                                                "ISO 8601 string") from err
    if ts is pd.NaT:
        raise ValidationError(parameter, value, "must be a date-time, not NaT")
    return ts.tz_localize("UTC") if ts.tz is None else ts.tz_convert("UTC")


def _iso(ts: pd.Timestamp) -> str:
    text = ts.strftime("%Y-%m-%dT%H:%M:%S")
    if ts.microsecond:
        text += f".{ts.microsecond:06d}"
    return text + "Z"


def _check_expand(value: Any) -> str | None:
    if value is None:
        return None
    items = [value] if isinstance(value, str) else value
    if isinstance(items, str | bytes) or not isinstance(items, Sequence) or not items:
        raise ValidationError("expand", value, f"must be one of {', '.join(EXPAND_VALUES)} or a "
                                               "list of them")
    out = []
    for item in items:
        for part in (item.split(",") if isinstance(item, str) else [item]):
            out.append(check_choice(part.strip() if isinstance(part, str) else part, "expand",
                                    EXPAND_VALUES, case_insensitive=True))
    return ",".join(dict.fromkeys(out))


# ------------------------------------------------------------------------------ columnar builder
class _Interner(dict):
    """value -> code, assigning the next code to a value not seen yet (``None`` is -1)."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__({None: -1})

    def __missing__(self, key: Any) -> int:
        code = self[key] = len(self) - 1
        return code


def _has(name: str) -> Any:
    """``record -> name in record`` (False for what is not a dict)."""

    def has(record: Any) -> bool:
        return isinstance(record, dict) and name in record

    return has


def _list_key(value: Any) -> Any:
    return tuple(value) if value.__class__ is list else value


def _frozen(value: Any) -> Any:
    """A value that can be a dict key: lists become tuples (all the way down), objects text."""
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return _as_text(value) if isinstance(value, dict) else value


def _hashable(values: Sequence[Any]) -> list[Any]:
    return [_frozen(v) for v in values]


class _Group:
    """Fields that repeat together (those of a resource; those of an assignment and definition),
    interned as one tuple per row: one lookup instead of one per column."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        self.parts: list[np.ndarray] = []
        self._full = itemgetter(*names)
        self._interner = _Interner()

    @property
    def tuples(self) -> list[tuple[Any, ...]]:
        """The distinct tuples, in code order."""
        return list(self._interner)[1:]

    def add(self, records: list[Any]) -> None:
        """Append the codes of one page."""
        lookup = self._interner.__getitem__
        n = len(records)
        try:
            codes = np.fromiter(map(lookup, map(self._full, records)), np.int32, n)
        except (KeyError, TypeError, AttributeError):
            rows = [tuple(_hashable([r.get(c) if isinstance(r, dict) else None
                                     for c in self.names])) for r in records]
            codes = np.fromiter(map(lookup, rows), np.int32, n)
        self.parts.append(codes)


class _StatesBuilder:
    """Pages of records in, one typed frame out; a drop-in for FrameBuilder.

    Category, list and boolean columns are interned page by page (an int32 code per row, each
    distinct value kept once); date-times are parsed page by page; other columns are converted
    to their dtype page by page. The page's dicts can be freed as soon as :meth:`add` returns.
    """

    _INTERNED = ("category", "list", "boolean")

    def __init__(self, columns: Sequence[Col], groups: Sequence[Sequence[str]] = ()) -> None:
        self.columns = list(columns)
        self.rows = 0
        kinds = {c.name: c.kind for c in self.columns}
        # columns that go together (the fields of one resource, of one assignment-definition)
        # are interned as one tuple: one lookup instead of one per column
        self._groups = []
        grouped: set[str] = set()
        for names in groups:
            names = tuple(n for n in names if kinds.get(n) == "category")
            if len(names) > 1:
                self._groups.append(_Group(names))
                grouped.update(names)
        self._grouped = grouped
        self._interned = {c.name: _Interner() for c in self.columns
                          if c.kind in self._INTERNED and c.name not in grouped}
        self._parts: dict[str, list[Any]] = {c.name: [] for c in self.columns}
        self._getters = {c.name: itemgetter(c.name) for c in self.columns}

    def _values(self, records: list[Any], name: str) -> Iterator[Any]:
        """The column's values (fast when every record has the field)."""
        return map(self._getters[name], records)

    def _safe_values(self, records: list[Any], name: str) -> list[Any]:
        return [r.get(name) if isinstance(r, dict) else None for r in records]

    def add(self, records: Sequence[Any]) -> None:
        """Append one page of records (dicts in the service's shape)."""
        records = records if isinstance(records, list) else list(records)
        n = len(records)
        if not n:
            return
        for group in self._groups:
            group.add(records)
        for col in self.columns:
            name = col.name
            if name in self._grouped:
                continue
            interner = self._interned.get(name)
            if interner is not None:
                lookup = interner.__getitem__
                try:
                    values_it = self._values(records, name)
                    if col.kind == "list":
                        values_it = map(_list_key, values_it)
                    codes = np.fromiter(map(lookup, values_it), np.int32, n)
                except (KeyError, TypeError, AttributeError):
                    values = self._safe_values(records, name)
                    try:
                        codes = np.fromiter(map(lookup, values), np.int32, n)
                    except TypeError:  # lists or objects: intern a hashable form
                        codes = np.fromiter(map(lookup, _hashable(values)), np.int32, n)
                self._parts[name].append(codes)
                continue
            if col.kind in ("object", "list") and not any(map(_has(name), records)):
                self._parts[name].append(np.full(n, None, dtype=object))  # not sent
                continue
            try:
                values = list(self._values(records, name))
            except (KeyError, TypeError, AttributeError):
                values = self._safe_values(records, name)
            if col.kind == "datetime":
                self._parts[name].append(_fast_datetimes(values, col))
            else:
                self._parts[name].append(convert_column(values, col))
        self.rows += n

    def add_columns(self, columns: Mapping[str, Sequence[Any]]) -> None:  # pragma: no cover
        raise NotImplementedError

    def _finish(self, col: Col) -> Any:
        parts = self._parts[col.name]
        interner = self._interned.get(col.name)
        if interner is not None:
            codes = np.concatenate(parts) if parts else np.empty(0, np.int32)
            keys = list(interner)[1:]  # in code order, without None
            if col.kind == "list":
                shared = np.empty(len(keys) + 1, dtype=object)
                shared[:-1] = [list(k) if isinstance(k, tuple) else
                               ([k] if k is not None else None) for k in keys]
                shared[-1] = None
                return shared[codes]
            if col.kind == "boolean":
                truth = np.array([k is True for k in keys] + [False])
                known = np.array([isinstance(k, bool) for k in keys] + [False])
                return pd.arrays.BooleanArray(truth[codes], ~known[codes])
            return _categorical(keys, codes, col)
        for group in self._groups:
            if col.name in group.names:
                j = group.names.index(col.name)
                codes = np.concatenate(group.parts) if group.parts else np.empty(0, np.int32)
                return _categorical([t[j] for t in group.tuples], codes, col)
        if not parts:
            return convert_column([], col)
        if isinstance(parts[0], np.ndarray) and parts[0].dtype == object:
            return np.concatenate(parts)
        if col.kind == "datetime":
            return pd.DatetimeIndex(np.concatenate(parts)).tz_localize("UTC").array
        if len(parts) == 1:
            return parts[0]
        return pd.concat([pd.Series(p, copy=False) for p in parts], ignore_index=True).array

    def build(self, attrs: Mapping[str, Any] | None = None) -> pd.DataFrame:
        """The typed frame of every page added."""
        data = {}
        for col in self.columns:
            data[col.name] = self._finish(col)
            self._parts[col.name] = []
        df = pd.DataFrame(data, index=pd.RangeIndex(self.rows), copy=False)
        if attrs:
            df.attrs.update(attrs)
        return df


def _categorical(values: list[Any], codes: np.ndarray, col: Col) -> pd.Categorical:
    """Rows whose code is ``i`` hold ``values[i]`` (-1: null), as the column's categorical:
    documented categories first, the others sorted after them."""
    texts = [_as_text(list(v) if isinstance(v, tuple) else v) for v in values]
    documented = list(col.categories)
    known = set(documented)
    extra = sorted({t for t in texts if t is not None and t not in known})
    if extra and documented:
        logger.debug("column %s: values outside the documented set kept: %s", col.name, extra)
    cats = documented + extra
    pos = {c: i for i, c in enumerate(cats)}
    remap = np.array([pos[t] if t is not None else -1 for t in texts] + [-1], dtype=np.int32)
    return pd.Categorical.from_codes(remap[codes], dtype=pd.CategoricalDtype(
        cats, ordered=col.ordered))


def _fast_datetimes(values: list[Any], col: Col) -> np.ndarray:
    """ISO 8601 UTC strings (``...Z``) to datetime64[ns] with numpy's C parser; anything else
    through the general converter."""
    try:
        if all(v.__class__ is str and v.endswith("Z") for v in values):
            return np.array([v[:-1] for v in values], dtype="datetime64[ns]")
    except ValueError:
        pass
    converted = convert_column(values, col)
    return np.asarray(converted.tz_convert("UTC").tz_localize(None), dtype="datetime64[ns]")


_NEXT_KEY = b'"@odata.nextLink"'
_NEXT_VALUE = re.compile(rb'\s*:\s*("(?:[^"\\]|\\.)*"|null)')


def _guess_next_link(content: bytes) -> str | None:
    """The ``@odata.nextLink`` of a page, found without parsing the page (checked later)."""
    at = content.find(_NEXT_KEY)
    if at < 0:
        return None
    m = _NEXT_VALUE.match(content, at + len(_NEXT_KEY))
    if m is None:
        return None
    try:
        value = orjson.loads(m.group(1))
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, str) and value else None


class _Fetcher:
    """Fetch pages in a background thread, asking for page k+1 as soon as page k has arrived.

    The next link is found in the raw bytes; the consumer parses the page (the expensive part)
    meanwhile, and checks the link against the parsed page. Errors are handed to the consumer;
    :meth:`close` stops the fetching.
    """

    def __init__(self, pipeline: Pipeline, first: tuple[str, Mapping[str, Any] | None],
                 depth: int = 2) -> None:
        self._pipeline = pipeline
        self._queue: queue.Queue[tuple[str, Any, str | None]] = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=first,
                                        name="policy-states-pages", daemon=True)
        self._thread.start()

    def _put(self, item: tuple[str, Any, str | None]) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _run(self, url: str, params: Mapping[str, Any] | None) -> None:
        seen: set[str] = set()
        try:
            while url and not self._stop.is_set():
                response = self._pipeline.send("POST", url, params=params, operation=OPERATION,
                                               check_json=False)
                guess = _guess_next_link(response.content)
                if guess is not None and guess in seen:
                    guess = None  # the consumer raises the loop error from the parsed page
                if guess is not None:
                    seen.add(guess)
                if not self._put(("page", response, guess)):
                    return
                url, params = guess, None  # type: ignore[assignment]
        except BaseException as err:  # handed to the consumer, with the page that failed
            self._put(("error", err, url))
            return
        self._put(("end", None, None))

    def get(self) -> tuple[str, Any, str | None]:
        return self._queue.get()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def _pages(pipeline: Pipeline, path: str, params: Mapping[str, Any]) -> Iterator[Page]:
    """Every page of the query, fetched ahead in a background thread, parsed here.

    Behaves as :func:`~toolkit._core.paging.iter_pages` with the OData style: a body that is not
    JSON is asked for once more, a repeated next link raises ProtocolError.
    """
    fetcher = _Fetcher(pipeline, (path, params))
    seen: set[str] = set()
    number = 0
    try:
        while True:
            kind, response, guess = fetcher.get()
            if kind == "end":
                return
            if kind == "error":
                if number and isinstance(response, ToolkitError):
                    response.next_link = guess  # type: ignore[attr-defined]
                raise response
            try:
                body = response.json()
            except ProtocolError:
                logger.warning("%s: unreadable page; asking again once", OPERATION)
                pipeline.stats.add(retries=1)
                response = pipeline.send("POST", response.url, operation=OPERATION)
                body = response.json()
            if not isinstance(body, dict):
                raise ProtocolError(f"{OPERATION}: expected a JSON object with 'value', got "
                                    f"{type(body).__name__}", url=response.url)
            items = body.get("value")
            items = [] if items is None else items
            if not isinstance(items, list):
                raise ProtocolError(f"{OPERATION}: 'value' is not a list", url=response.url)
            next_link = body.get("@odata.nextLink") or None
            if next_link is not None and not isinstance(next_link, str):
                raise ProtocolError(f"{OPERATION}: '@odata.nextLink' is not a URL but "
                                    f"{type(next_link).__name__} {next_link!r:.60}; stopping",
                                    url=response.url)
            yield Page(items, body, response, number)
            number += 1
            if next_link is not None:
                if next_link in seen:
                    raise ProtocolError(f"{OPERATION}: the service sent the same next link "
                                        "twice; stopping instead of looping", url=response.url)
                seen.add(next_link)
            if next_link != guess:  # the guess was wrong (or the page was asked again)
                fetcher.close()
                if next_link is None:
                    return
                fetcher = _Fetcher(pipeline, (next_link, None))
    finally:
        fetcher.close()


_TUNING_LOCK = threading.Lock()
_TUNING: list[Any] = []  # [depth, saved switch interval, saved gc thresholds] while tuned


class _tuned:
    """Interpreter settings for reading many pages, restored when the last reader is done.

    The fetching thread needs the interpreter lock briefly and often (each socket read); with the
    default 5 ms switch interval it waits behind the parsing for most of that. Each page also
    allocates a thousand short-lived dicts, after every 700 of which the cyclic collector's young
    generation would run for nothing (they are freed by reference counting).
    """

    def __enter__(self) -> None:
        with _TUNING_LOCK:
            if not _TUNING:
                interval, threshold = sys.getswitchinterval(), gc.get_threshold()
                _TUNING.extend([0, interval, threshold])
                sys.setswitchinterval(min(interval, SWITCH_INTERVAL))
                gc.set_threshold(max(threshold[0], GC_THRESHOLD), *threshold[1:])
            _TUNING[0] += 1

    def __exit__(self, *exc: object) -> None:
        with _TUNING_LOCK:
            _TUNING[0] -= 1
            if _TUNING[0] == 0:
                _, interval, threshold = _TUNING
                sys.setswitchinterval(interval)
                gc.set_threshold(*threshold)
                _TUNING.clear()


# ------------------------------------------------------------------------------ $apply results
def _split_top_level(text: str, sep: str) -> list[str]:
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
    return [p.strip() for p in parts]


def _apply_columns(apply: str) -> list[str] | None:
    """The columns an ``$apply`` result has (None: whole records), from the expression."""
    for step in reversed(_split_top_level(apply, "/")):
        low = step.lower()
        if low.startswith("filter"):
            continue
        aliases = re.findall(r"\bas\s+([A-Za-z_][\w]*)", step, flags=re.IGNORECASE)
        if low.startswith("groupby"):
            m = re.match(r"groupby\s*\(\s*\(([^)]*)\)", step, flags=re.IGNORECASE)
            cols = [c.strip() for c in m.group(1).split(",")] if m else []
            return [_canonical(c) for c in cols if c] + aliases
        return aliases
    return None


def _canonical(name: str) -> str:
    col = _BY_LOWER.get(name.lower())
    return col.name if col is not None else name


def _aggregate_frame(records: list[dict[str, Any]], apply: str,
                     attrs: Mapping[str, Any]) -> pd.DataFrame:
    names: dict[str, None] = {}
    rows = []
    for r in records:
        row = {_canonical(k): v for k, v in r.items() if not str(k).startswith("@odata.")} \
            if isinstance(r, dict) else {}
        names.update(dict.fromkeys(row))
        rows.append(row)
    expected = _apply_columns(apply)
    if not rows and expected is None:
        return empty_frame(POLICY_STATES, attrs)
    order = list(names) if rows else list(expected or [])
    cols = []
    for name in order:
        known = _BY_LOWER.get(name.lower())
        if known is not None and known.name == name:
            cols.append(known)
            continue
        values = [r.get(name) for r in rows]
        if all(v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in values):
            cols.append(Col(name, "Int64"))
        elif all(v is None or (isinstance(v, int | float) and not isinstance(v, bool))
                 for v in values):
            cols.append(Col(name, "float"))
        else:
            cols.append(Col(name, "string"))
    return build_frame(rows, Schema(OPERATION, tuple(cols)), attrs, flat=True)


# ------------------------------------------------------------------------------ the operation
def policy_states(
    subscription_id: str,
    resource_group: str,
    *,
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
    api_version: str = API_VERSION,
    connection: Connection | None = None,
) -> pd.DataFrame:
    """Query the policy compliance states of the resources in a resource group.

    Every page is read (1000 records a page, next pages POSTed to ``@odata.nextLink``); the next
    page is fetched while the current one is parsed, and records go straight into typed columns.

    Parameters
    ----------
    subscription_id : str
        Subscription (UUID).
    resource_group : str
        Resource group name (1 to 90 characters).
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
        Nested details to include (``$expand``).
    max_items : int, optional
        Stop after this many rows (warns that the result is truncated).
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
        empty frame with the same columns.

    Raises
    ------
    ValidationError
        Bad arguments (before any request): ``top`` < 0, ``start`` not before ``end``,
        ``resource`` not latest/default, empty expressions, ...
    ApiError
        ``QueryFailure`` from the service (a bad ``$filter``/``$apply`` names the problem),
        ``NotFoundError`` for an unknown subscription or resource group.
    """
    check_subscription_id(subscription_id)
    check_resource_group(resource_group)
    resource = check_choice(resource, "resource", ("latest", "default"), case_insensitive=True)
    filter_ = _check_text(filter, "filter")
    apply_ = _check_text(apply, "apply")
    select_ = _check_names(select, "select")
    orderby_ = _check_names(orderby, "orderby")
    if top is not None:
        check_int(top, "top", minimum=0)
    if max_items is not None:
        check_int(max_items, "max_items", minimum=0)
    start_ts = _check_time(start, "start")
    end_ts = _check_time(end, "end")
    if start_ts is not None and end_ts is not None and not start_ts < end_ts:
        raise ValidationError("start", start, f"must be before end ({_iso(end_ts)})")
    expand_ = _check_expand(expand)
    check_api_version(api_version)

    conn = get_connection(connection)
    pipe = conn.pipeline("arm")
    path = (f"/subscriptions/{segment(subscription_id, 'subscription_id')}/resourceGroups/"
            f"{segment(resource_group, 'resource_group')}/providers/"
            f"{conn.namespace}.PolicyInsights/policyStates/{resource}/queryResults")
    params = {
        "api-version": api_version,
        "$top": top,
        "$orderby": orderby_,
        "$select": select_,
        "$from": _iso(start_ts) if start_ts is not None else None,
        "$to": _iso(end_ts) if end_ts is not None else None,
        "$filter": filter_,
        "$apply": apply_,
        "$expand": expand_,
    }
    if apply_ is not None:
        pages = iter_pages(pipe, "POST", path, style=ODATA, params=params, operation=OPERATION)
        records: list[Any] = []
        request_ids: list[str] = []
        endpoint = None
        for page in pages:
            endpoint = endpoint or page.response.url
            if page.response.request_id:
                request_ids.append(page.response.request_id)
            records.extend(page.items)
        truncated = max_items is not None and len(records) > max_items
        if truncated:
            import warnings

            from toolkit._core.errors import TruncatedResultWarning

            warnings.warn(f"{OPERATION}: result truncated at max_items={max_items}; more rows "
                          "exist. Pass a larger max_items (or None) to read them all.",
                          TruncatedResultWarning, stacklevel=2)
            records = records[:max_items]
        df = _aggregate_frame(records, apply_,
                              provenance(OPERATION, api_version, endpoint, request_ids))
        df.attrs["truncated"] = truncated
        return df
    if select_ is not None:
        columns = []
        for name in dict.fromkeys(s.strip() for s in select_.split(",")):
            columns.append(_BY_LOWER.get(name.lower(), Col(name, "string")))
    else:
        columns = list(POLICY_STATES.columns)
    builder = _StatesBuilder(columns, groups=(RESOURCE_FIELDS, POLICY_FIELDS))
    fast = _pages(pipe, path, params)
    # The fetching thread needs the GIL briefly and often (each socket read); with the default
    # 5 ms switch interval it waits behind the parsing for most of that. A shorter interval for
    # the duration of the call keeps the next page coming.
    try:
        with _tuned():
            return collect_frame(fast, builder, operation=OPERATION,  # type: ignore[arg-type]
                                 max_items=max_items, connection=conn, api_version=api_version)
    finally:
        fast.close()


# ------------------------------------------------------------------------------ helpers
_RANK = {s: i for i, s in enumerate(COMPLIANCE_STATES)}
_KEY = ("resourceId", "policyAssignmentId", "policyDefinitionId", "policyDefinitionReferenceId")


def _by(by: Any, df: pd.DataFrame, helper: str) -> list[str]:
    if by is None:
        return []
    names = [by] if isinstance(by, str) else list(by)
    for name in names:
        if not isinstance(name, str) or name not in df.columns:
            raise ValidationError("by", name, f"must name columns of the frame ({helper})")
    return names


def _newest(df: pd.DataFrame, extra: Sequence[str] = ()) -> pd.DataFrame:
    """The newest record per (resource, assignment, definition, reference id[, extra])."""
    keys = [k for k in _KEY if k in df.columns] + list(extra)
    if "timestamp" not in df.columns or len(keys) < 2:
        return df
    ordered = df.sort_values("timestamp", kind="stable")
    return ordered.drop_duplicates(keys, keep="last")


def _rank(states: pd.Series) -> np.ndarray:
    text = states.astype("string")
    return text.map(_RANK).fillna(-1).astype("int64").to_numpy()


def _counts(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per group of ``keys``: resources in each rolled-up state and the compliance percentage."""
    names = {v: k for k, v in _RANK.items()}
    if keys:
        grouped = frame.groupby(keys, observed=True, sort=True)["rank"]
        table = grouped.value_counts().unstack(fill_value=0)
    else:
        table = frame["rank"].value_counts().to_frame().T
    for rank in names:
        if rank not in table.columns:
            table[rank] = 0
    out = pd.DataFrame(index=table.index)
    out["resources"] = table.sum(axis=1)
    out["compliant"] = table[_RANK["Compliant"]]
    out["non_compliant"] = table[_RANK["NonCompliant"]]
    out["conflict"] = table[_RANK["Conflict"]]
    out["exempt"] = table[_RANK["Exempt"]]
    out["unknown"] = table[_RANK["Unknown"]]
    out["other"] = out["resources"] - out["compliant"] - out["non_compliant"]
    counted = out["compliant"] + out["exempt"] + out["unknown"]
    out = out.astype("Int64")
    out["compliance_pct"] = (100.0 * counted / out["resources"]).astype("float64").round(1)
    return out


def _rollup(df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame({k: df[k] for k in keys})
    frame["resourceId"] = df["resourceId"]
    frame["rank"] = _rank(df["complianceState"])
    worst = frame.groupby([*keys, "resourceId"], observed=True, sort=False)["rank"].max()
    return worst.reset_index()


def compliance_summary(df: pd.DataFrame, by: str | Sequence[str] = "policyAssignmentName"
                       ) -> pd.DataFrame:
    """Resources compliant, non-compliant and other per group, as a compliance dashboard shows.

    Records are first reduced to the newest per (resource, assignment, definition, reference
    id), so the frame of a ``default`` query works too. A resource counts once per group, with
    its worst state there (NonCompliant > Compliant > Conflict > Exempt > Unknown).

    Parameters
    ----------
    df : pandas.DataFrame
        Records from :func:`policy_states` (needs ``resourceId`` and ``complianceState``).
    by : str or list of str
        Grouping columns, e.g. ``"policyAssignmentName"``, ``"policyDefinitionName"``,
        ``"resourceType"``, ``"resourceLocation"``; ``None`` for one overall row.

    Returns
    -------
    pandas.DataFrame
        One row per group (worst compliance first): the ``by`` columns, then ``resources``,
        ``compliant``, ``non_compliant``, ``conflict``, ``exempt``, ``unknown``, ``other``
        (resources neither compliant nor non-compliant) as ``Int64``, and ``compliance_pct``
        (float): compliant, exempt and unknown resources over all resources, in percent, the
        way the service's dashboard computes it.
    """
    check_frame(df, ["resourceId", "complianceState"], "compliance_summary", "policy_states")
    keys = _by(by, df, "compliance_summary")
    latest = _newest(df)
    if latest.empty:
        cols = {k: df[k].iloc[:0] for k in keys}
        out = pd.DataFrame(cols)
        for c in ("resources", "compliant", "non_compliant", "conflict", "exempt", "unknown",
                  "other"):
            out[c] = pd.array([], dtype="Int64")
        out["compliance_pct"] = np.array([], dtype="float64")
        return out
    rolled = _rollup(latest, keys)
    out = _counts(rolled, keys)
    out = out.sort_values(["compliance_pct", "non_compliant"], ascending=[True, False],
                          kind="stable")
    out = out.reset_index() if keys else out.reset_index(drop=True)
    for k in keys:
        if isinstance(df[k].dtype, pd.CategoricalDtype):
            out[k] = out[k].astype(df[k].dtype)
    return out.reset_index(drop=True)


def compliance_trend(df: pd.DataFrame, by: str | Sequence[str] | None = None, *,
                     freq: str = "D") -> pd.DataFrame:
    """Compliance per day (or another period) from the records of a ``default`` query.

    Each period counts the (resource, policy) pairs evaluated in it at their last evaluation of
    the period, rolled up per resource as :func:`compliance_summary` does.

    Parameters
    ----------
    df : pandas.DataFrame
        Records from ``policy_states(..., resource="default", start=...)`` (needs
        ``timestamp``, ``resourceId`` and ``complianceState``).
    by : str or list of str, optional
        Extra grouping columns (e.g. ``"policyAssignmentName"``).
    freq : str
        The period, as pandas spells it (``"D"`` days, ``"W"`` weeks...).

    Returns
    -------
    pandas.DataFrame
        One row per period (and group): ``day`` (datetime UTC, start of the period), the ``by``
        columns, ``resources``, ``compliant``, ``non_compliant``, ``conflict``, ``exempt``,
        ``unknown``, ``other`` (``Int64``) and ``compliance_pct`` (float).
    """
    check_frame(df, ["timestamp", "resourceId", "complianceState"], "compliance_trend",
                "policy_states")
    keys = _by(by, df, "compliance_trend")
    if not isinstance(freq, str) or not freq:
        raise ValidationError("freq", freq, "must be a pandas frequency such as 'D' or 'W'")
    try:
        day = df["timestamp"].dt.tz_convert(None).dt.to_period(freq).dt.start_time
    except (ValueError, AttributeError) as err:
        raise ValidationError("freq", freq, "must be a pandas frequency such as 'D' or 'W'") \
            from err
    day = day.dt.tz_localize("UTC") if day.dt.tz is None else day
    frame = df.assign(day=day.to_numpy())
    latest = _newest(frame, extra=["day"])
    if latest.empty:
        out = pd.DataFrame({"day": pd.Series([], dtype="datetime64[ns, UTC]")})
        for k in keys:
            out[k] = df[k].iloc[:0]
        for c in ("resources", "compliant", "non_compliant", "conflict", "exempt", "unknown",
                  "other"):
            out[c] = pd.array([], dtype="Int64")
        out["compliance_pct"] = np.array([], dtype="float64")
        return out
    rolled = _rollup(latest, ["day", *keys])
    out = _counts(rolled, ["day", *keys]).reset_index()
    out["day"] = pd.to_datetime(out["day"], utc=True)
    for k in keys:
        if isinstance(df[k].dtype, pd.CategoricalDtype):
            out[k] = out[k].astype(df[k].dtype)
    return out.sort_values(["day", *keys], kind="stable").reset_index(drop=True)


def evaluated_expressions(df: pd.DataFrame) -> pd.DataFrame:
    """Explode ``policyEvaluationDetails`` into one row per evaluated expression.

    Parameters
    ----------
    df : pandas.DataFrame
        Records from ``policy_states(..., expand="PolicyEvaluationDetails")``.

    Returns
    -------
    pandas.DataFrame
        ``record`` (``Int64``, the row of ``df`` the expression belongs to), ``timestamp``,
        ``resourceId``, ``policyAssignmentName``, ``policyDefinitionName``,
        ``policyDefinitionReferenceId``, ``complianceState`` (from the record), then the
        expression's ``result``, ``expressionKind``, ``expression``, ``path``, ``operator``
        (categories/strings) and ``expressionValue``, ``targetValue`` (objects, as sent).
    """
    check_frame(df, ["policyEvaluationDetails"], "evaluated_expressions", "policy_states")
    carried = [c for c in ("timestamp", "resourceId", "policyAssignmentName",
                           "policyDefinitionName", "policyDefinitionReferenceId",
                           "complianceState") if c in df.columns]
    rows = []
    details = df["policyEvaluationDetails"].to_numpy()
    for i, item in enumerate(details):
        if not isinstance(item, dict):
            continue
        exprs = item.get("evaluatedExpressions") or []
        if not exprs:
            continue
        base = {"record": i, **{c: df[c].iat[i] for c in carried}}
        for e in exprs:
            if isinstance(e, dict):
                rows.append({**base, **{k: e.get(k) for k in (
                    "result", "expressionKind", "expression", "path", "operator",
                    "expressionValue", "targetValue")}})
    out = build_frame(rows, EVALUATED_EXPRESSIONS, dict(df.attrs), flat=True)
    for c in carried:
        if isinstance(df[c].dtype, pd.CategoricalDtype) and c != "complianceState":
            out[c] = out[c].astype(df[c].dtype)
    return out
