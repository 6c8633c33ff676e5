"""A history of one's own: policy states kept in a partitioned Parquet dataset.

The service answers for a limited window of past evaluations. :func:`snapshot_policy_states`
writes one day of a scope's states into ``<store>/scope=<scope>/day=<YYYY-MM-DD>/part-0.parquet``
(pyarrow; a local folder or any fsspec URL). A partition is written to a hidden temporary file
first and then renamed over the previous one: writing the same day twice leaves one copy, and a
crash between the write and the rename leaves the previous day as it was (readers skip hidden
files; the next snapshot of that day removes the leftover). :func:`read_policy_history` reads it
back into the typed frame of :func:`~toolkit.arm.policy_states`, opening only the partitions of
the days and scopes asked for and only the columns asked for.
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, overload
from urllib.parse import quote

import numpy as np
import pandas as pd

from toolkit._core.errors import EmptySnapshotWarning, ToolkitError, ValidationError, warn_user
from toolkit._core.registry import OperationRecord, register
from toolkit._core.validate import check_choice, check_expression, check_time
from toolkit.arm._schemas import POLICY_STATES
from toolkit.arm.engine import history_dask
from toolkit.arm.policy import policy_states
from toolkit.arm.scopes import parse_scope, resolve_scope

if TYPE_CHECKING:
    import dask.dataframe as dd

    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["read_policy_history", "service_today", "snapshot_policy_states", "stored_days"]

PART = "part-0.parquet"
#: Columns a snapshot leaves out: nested details answered only at resource scope.
_LEFT_OUT = ("components", "policyEvaluationDetails")
_STORED = [c for c in POLICY_STATES.columns if c.name not in _LEFT_OUT]


#: Parquet metadata key of a stored day: ``true`` when its records are the sandbox's.
_SANDBOX_KEY = b"toolkit.sandbox"


def _imports() -> tuple[Any, Any, Any, Any]:
    try:
        import fsspec
        import pyarrow as pa
        import pyarrow.dataset as ds
        import pyarrow.parquet as pq
    except ImportError as err:  # pragma: no cover - the extra is part of dev
        raise ImportError("the policy history store needs pyarrow and fsspec: "
                          "pip install 'cloudops-frames[parquet]'") from err
    return fsspec, pa, ds, pq


def _filesystem(store: Any, storage_options: dict[str, Any] | None) -> tuple[Any, str]:
    fsspec, *_ = _imports()
    if not isinstance(store, str) or not store.strip():
        raise ValidationError("store", store, "must be a folder path or an fsspec URL "
                                              "(file://, memory://, s3://, abfs://, ...)")
    fs, root = fsspec.core.url_to_fs(store, **(storage_options or {}))
    return fs, root.rstrip("/")


def _day(value: Any, parameter: str) -> dt.date:
    ts = check_time(value, parameter)
    assert ts is not None
    return ts.date()


def _arrow_table(df: pd.DataFrame) -> Any:
    _, pa, _, _ = _imports()
    arrays, fields = [], []
    for col in _STORED:
        s = df[col.name] if col.name in df.columns else pd.Series([None] * len(df))
        if col.kind == "category":
            values = pa.array(_nullable(s.astype("string")), type=pa.string()).dictionary_encode()
            typ = pa.dictionary(pa.int32(), pa.string())
        elif col.kind == "datetime":
            values = pa.array(s.dt.tz_convert("UTC").to_numpy(dtype="datetime64[ns]"),
                              type=pa.timestamp("ns", tz="UTC"))
            typ = values.type
        elif col.kind == "boolean":
            values = pa.array(_nullable(s), type=pa.bool_())
            typ = pa.bool_()
        else:  # list of strings
            values = pa.array([list(v) if isinstance(v, list | tuple | np.ndarray) else None
                               for v in s], type=pa.list_(pa.string()))
            typ = values.type
        arrays.append(values)
        fields.append(pa.field(col.name, typ))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _schema() -> Any:
    """Give the stored columns and the partition columns (so no file is opened to learn it)."""
    _, pa, _, _ = _imports()
    stored = _arrow_table(pd.DataFrame({c.name: pd.Series(dtype=c.dtype())
                                        for c in _STORED}))
    return stored.schema.append(pa.field("scope", pa.string())).append(
        pa.field("day", pa.string()))


def _nullable(s: pd.Series) -> list[Any]:
    """List the values, missing ones as None."""
    return s.astype(object).where(s.notna(), None).tolist()


def _frame(table: Any, attrs: dict[str, Any]) -> pd.DataFrame:
    """Turn an arrow table of stored columns (and partition columns) into the typed frame."""
    data: dict[str, Any] = {}
    by_name = {c.name: c for c in POLICY_STATES.columns}
    for name in table.column_names:
        column = table.column(name)
        col = by_name.get(name)
        if col is None:  # the partition columns
            data[name] = pd.Categorical(column.cast("string").to_pylist())
            continue
        if col.kind == "category":
            values = column.cast("string").to_pylist()
            documented = list(col.categories)
            extra = sorted({v for v in values if v is not None} - set(documented))
            data[name] = pd.Categorical(values, categories=documented + extra,
                                        ordered=col.ordered)
        elif col.kind == "datetime":
            data[name] = pd.Series(column.to_pandas(), copy=False).dt.tz_convert("UTC").array
        elif col.kind == "boolean":
            data[name] = pd.array(column.to_pylist(), dtype="boolean")
        else:
            out = np.empty(len(column), dtype=object)
            out[:] = column.to_pylist()
            data[name] = out
    df = pd.DataFrame(data, index=pd.RangeIndex(table.num_rows))
    df.attrs.update(attrs)
    return df


def service_today(connection: Connection | None = None) -> dt.date:
    """Tell today's UTC date by the resource manager's clock (:func:`toolkit.service_now`).

    The machine's clock only when the service tells no date (logged).

    Parameters
    ----------
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    datetime.date
        The service's UTC date.
    """
    from toolkit.clock import service_now

    try:
        return service_now("arm", connection=connection).date()
    except ToolkitError as err:
        logger.warning("policy history: no date from the service (%s); using the machine's "
                       "clock", err)
        return pd.Timestamp.now("UTC").date()


def _scope_folder(root: str, scope_path: str) -> str:
    return f"{root}/scope={quote(scope_path, safe='')}"


def _partition(root: str, scope_path: str, day: dt.date) -> str:
    return f"{_scope_folder(root, scope_path)}/day={day.isoformat()}"


def snapshot_policy_states(store: str, scope: str, *, day: Any = None,
                           filter: str | None = None, engine: str = "pandas",
                           storage_options: dict[str, Any] | None = None,
                           connection: Connection | None = None) -> pd.DataFrame:
    """Write one day of a scope's policy states (every evaluation of that day) into the store.

    Parameters
    ----------
    store : str
        A folder, or an fsspec URL (``memory://h``, ``s3://bucket/h``, ``abfs://c/h``...).
    scope : str
        The scope, as :func:`~toolkit.arm.policy_states` takes ``scope=`` (a subscription id alone
        is read as that subscription).
    day : date, datetime, Timestamp or ISO string, optional
        The UTC day; defaults to yesterday by the service's clock (the ``Date`` of its answers,
        :func:`service_today`), which may differ from the machine's. It must be inside the
        service's window.
    filter : str, optional
        OData ``$filter`` for the records kept.
    engine : {"pandas", "dask"}
        ``"dask"`` reads the day's slices as dask tasks (see :mod:`toolkit.arm.engine`), then
        gathers them into this process, which writes the partition once: the day is held here
        in full, as with ``"pandas"``.
    storage_options : dict, optional
        Passed to fsspec (credentials for an object store come from its own sources).
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row: ``scope``, ``day`` (strings), ``records`` (``Int64``), ``path`` (string, the
        partition's file).

    Warns
    -----
    EmptySnapshotWarning
        When the day has no records for the scope (the partition is written all the same, with
        the full schema): a day outside what the service holds, or a scope with no evaluations.
    """
    where = _scope_of(scope)
    engine = check_choice(engine, "engine", ("pandas", "dask"))
    check_expression(filter, "filter")
    fs, root = _filesystem(store, storage_options)  # all checked before the clock is asked
    when = service_today(connection) - dt.timedelta(days=1) if day is None else _day(day, "day")
    start = pd.Timestamp(when, tz="UTC")
    end = start + pd.Timedelta(days=1) - pd.Timedelta(microseconds=1)
    read = dict(scope=where.template.replace("{ns}", "Microsoft"), resource="default",
                start=start, end=end, filter=filter, connection=connection)
    df = policy_states(**read, engine="dask").compute() if engine == "dask" else \
        policy_states(**read)
    _, _, _, pq = _imports()
    table = _arrow_table(df)
    # whether the day's records are the sandbox's invented data travels with the file
    table = table.replace_schema_metadata({**(table.schema.metadata or {}),
                                           _SANDBOX_KEY: b"true" if df.attrs.get("sandbox")
                                           else b"false"})
    folder = _partition(root, where.template.replace("{ns}", "Microsoft"), when)
    fs.makedirs(folder, exist_ok=True)
    final = f"{folder}/{PART}"
    tmp = f"{folder}/.{PART}.{uuid.uuid4().hex}.tmp"
    with fs.open(tmp, "wb") as fh:
        pq.write_table(table, fh)
    fs.mv(tmp, final)  # the rename: readers see the old day or the new, never half of one
    for leftover in fs.ls(folder, detail=False):
        name = leftover.rstrip("/").rsplit("/", 1)[-1]
        if name != PART and name.startswith(f".{PART}."):
            fs.rm(leftover)
    logger.info("policy history: %d records of %s on %s written", len(df), scope, when)
    if len(df) == 0:
        warn_user(f"snapshot_policy_states: no policy state records for {scope} on "
                  f"{when.isoformat()} (UTC); the partition written is empty. Is the day inside "
                  "the service's window, and does the scope have evaluations?",
                  EmptySnapshotWarning)
    out = pd.DataFrame({"scope": pd.array([scope], dtype="string"),
                        "day": pd.array([when.isoformat()], dtype="string"),
                        "records": pd.array([len(df)], dtype="Int64"),
                        "path": pd.array([final], dtype="string")})
    out.attrs.update({"operation": "snapshot_policy_states",
                      "sandbox": bool(df.attrs.get("sandbox"))})
    return out


def stored_days(store: str, scope: str | None = None,
                storage_options: dict[str, Any] | None = None) -> list[dt.date]:
    """List the days the store holds (of one scope), from its partitions' names alone.

    Parameters
    ----------
    store : str
        The store of :func:`snapshot_policy_states`.
    scope : str, optional
        Only this scope's days (as :func:`read_policy_history` takes it).
    storage_options : dict, optional
        Passed to fsspec.

    Returns
    -------
    list of datetime.date
        In order, each once; empty for a store (or scope) with nothing written.
    """
    fs, root = _filesystem(store, storage_options)
    if not fs.exists(root):
        return []
    if scope is not None:
        folders = [_scope_folder(root, _scope_of(scope).template.replace("{ns}", "Microsoft"))]
    else:
        folders = [f for f in fs.ls(root, detail=False)
                   if f.rstrip("/").rsplit("/", 1)[-1].startswith("scope=")]
    days: set[dt.date] = set()
    for folder in folders:
        if not fs.exists(folder):
            continue
        for path in fs.ls(folder, detail=False):
            name = path.rstrip("/").rsplit("/", 1)[-1]
            if name.startswith("day=") and fs.exists(f"{path.rstrip('/')}/{PART}"):
                try:
                    days.add(dt.date.fromisoformat(name.removeprefix("day=")))
                except ValueError:  # not a partition of the store's own
                    continue
    return sorted(days)


def _scope_of(scope: Any) -> Any:
    if isinstance(scope, str) and "/" not in scope:
        try:
            return resolve_scope(scope, None, None)
        except ValidationError as err:  # a bare subscription id, named as the caller gave it
            raise ValidationError("scope", scope, "must be a scope string or a subscription id "
                                                  f"({err.rule})") from err
    return parse_scope(scope)


@overload
def read_policy_history(store: str, *, start: Any = None, end: Any = None,
                        columns: Sequence[str] | None = None,
                        filters: Any = None, scope: str | None = None,
                        engine: Literal["pandas"] = "pandas",
                        storage_options: dict[str, Any] | None = None
                        ) -> pd.DataFrame: ...


@overload
def read_policy_history(store: str, *, start: Any = None, end: Any = None,
                        columns: Sequence[str] | None = None,
                        filters: Any = None, scope: str | None = None, engine: Literal["dask"],
                        storage_options: dict[str, Any] | None = None
                        ) -> dd.DataFrame: ...


@overload
def read_policy_history(store: str, *, start: Any = None, end: Any = None,
                        columns: Sequence[str] | None = None,
                        filters: Any = None, scope: str | None = None, engine: str,
                        storage_options: dict[str, Any] | None = None
                        ) -> pd.DataFrame | dd.DataFrame: ...


def read_policy_history(store: str, *, start: Any = None, end: Any = None,
                        columns: Sequence[str] | None = None,
                        filters: Any = None, scope: str | None = None, engine: str = "pandas",
                        storage_options: dict[str, Any] | None = None
                        ) -> pd.DataFrame | dd.DataFrame:
    """Read the kept history back, opening only the partitions and columns needed.

    Parameters
    ----------
    store : str
        The store of :func:`snapshot_policy_states`.
    start, end : date, datetime, Timestamp or ISO string, optional
        The first and last UTC day to read (inclusive); only those days' files are opened.
    columns : list of str, optional
        Columns of :func:`~toolkit.arm.policy_states` to read (others are not read at all).
    filters : list of tuples, optional
        pyarrow row filters, e.g. ``[("complianceState", "==", "NonCompliant")]``; on
        ``scope`` or ``day`` they prune partitions.
    scope : str, optional
        Read only this scope's partitions.
    engine : {"pandas", "dask"}
        ``"dask"`` gives a ``dask.dataframe.DataFrame`` with one partition per file read; on
        a ``distributed.Client`` the files are read by the workers and the partitions stay
        there (see :mod:`toolkit.arm.engine`).
    storage_options : dict, optional
        Passed to fsspec.

    Returns
    -------
    pandas.DataFrame or dask.dataframe.DataFrame
        The columns of :func:`~toolkit.arm.policy_states` (without ``components`` and
        ``policyEvaluationDetails``), typed the same, or those of ``columns``; then ``scope``
        and ``day`` (categories: the partition a row came from).
    """
    _, pa, ds, _ = _imports()
    engine = check_choice(engine, "engine", ("pandas", "dask"))
    fs, root = _filesystem(store, storage_options)
    stored = [c.name for c in _STORED]
    if columns is not None:
        if isinstance(columns, str) or not all(isinstance(c, str) and c in stored
                                               for c in columns):
            raise ValidationError("columns", columns, f"must list stored columns: "
                                                      f"{', '.join(stored)}")
        wanted = list(dict.fromkeys(columns))
    else:
        wanted = stored
    expr = None
    if filters is not None:
        try:
            expr = pq_filters_to_expression(filters)
        except (TypeError, ValueError) as err:
            raise ValidationError("filters", filters, "must be pyarrow filters such as "
                                                      "[('complianceState', '==', "
                                                      "'NonCompliant')]") from err
    days = [ds.field("day") >= _day(start, "start").isoformat()] if start is not None else []
    if end is not None:
        days.append(ds.field("day") <= _day(end, "end").isoformat())
    if scope is not None:
        days.append(ds.field("scope") == _scope_of(scope).template.replace("{ns}", "Microsoft"))
    for part in days:
        expr = part if expr is None else expr & part
    if not fs.exists(root):
        raise ValidationError("store", store, "does not exist (nothing snapshotted there yet)")
    partitioning = ds.partitioning(pa.schema([("scope", pa.string()), ("day", pa.string())]),
                                   flavor="hive")
    from pyarrow.fs import FSSpecHandler, PyFileSystem

    dataset = ds.dataset(root, format="parquet", partitioning=partitioning, schema=_schema(),
                         filesystem=PyFileSystem(FSSpecHandler(fs)))
    attrs: dict[str, Any] = {"operation": "read_policy_history", "store": store}
    if engine == "dask":
        files = [f.path for f in dataset.get_fragments(filter=expr)]
        return history_dask(_read_files, store, files, wanted, expr, storage_options)
    table = dataset.to_table(columns=[*wanted, "scope", "day"], filter=expr)
    attrs["sandbox"] = any((f.physical_schema.metadata or {}).get(_SANDBOX_KEY) == b"true"
                           for f in dataset.get_fragments(filter=expr))
    return _frame(table, attrs)


def pq_filters_to_expression(filters: Any) -> Any:
    """Turn pyarrow's DNF filter tuples into a dataset expression.

    Returns
    -------
    pyarrow.dataset.Expression
        The row filter.
    """
    import pyarrow.parquet as pq

    return pq.filters_to_expression(filters)


def _read_files(store: str, files: list[str], columns: list[str], expr: Any,
                storage_options: dict[str, Any] | None) -> pd.DataFrame:
    """Read some files of the store into the typed frame (one dask task)."""
    _, pa, ds, _ = _imports()
    fs, root = _filesystem(store, storage_options)
    from pyarrow.fs import FSSpecHandler, PyFileSystem

    partitioning = ds.partitioning(pa.schema([("scope", pa.string()), ("day", pa.string())]),
                                   flavor="hive")
    dataset = ds.dataset(files, format="parquet", partitioning=partitioning, schema=_schema(),
                         partition_base_dir=root, filesystem=PyFileSystem(FSSpecHandler(fs)))
    table = dataset.to_table(columns=[*columns, "scope", "day"], filter=expr)
    return _frame(table, {"operation": "read_policy_history", "store": store})


SNAPSHOT_RECORD = register(OperationRecord("snapshot_policy_states"))
READ_RECORD = register(OperationRecord("read_policy_history",
                                       derived_from="snapshot_policy_states"))
