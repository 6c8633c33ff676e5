"""Read a tenant with dask: one task per slice of a scope, on a cluster or dask's local scheduler.

The tasks run on the active ``distributed.Client`` when there is one, otherwise on dask's local
scheduler. The engine runs the reader it is given (the policy read, the history store's reader
of files) and imports neither.

Slices: a management group is read one subscription at a time (the group's query filtered on
``subscriptionId``, so each slice is exactly that subscription's part of the group's records); a
subscription one resource group at a time; other scopes, with ``resource="default"``, one day of
the window at a time; otherwise as one task.

Workers never receive a secret. The task graph carries the connection's non-secret settings
(:class:`WorkerSettings`: endpoint, vocabulary, TLS verification, retry and timeout settings);
each worker process rebuilds a connection from them and its own credential source
(:func:`worker_credential`): ``TOOLKIT_TOKEN``, ``TOOLKIT_CREDENTIAL=default`` (azure-identity's
``DefaultAzureCredential``: environment, workload or managed identity), or, against a sandbox on
loopback, the sandbox's token authority derived from ``TOOLKIT_SANDBOX_SECRET``. On dask's local
scheduler the tasks run in this process and read with the very connection the call was given
(found by the settings' ``handle``), never the default one.

The frames of all slices have the dtypes of :func:`~toolkit.arm.policy_states`; category columns
are unified across partitions (the union of the values every partition saw, documented values
first, then in the order the partitions saw them), so a partition's categories equal the others'.

On a cluster the partitions stay on the workers: the driver receives only each partition's
categories and the columns' dtypes, and the result is a ``dask.dataframe`` built from the futures
of the partitions (see :func:`_on_cluster`), usable while that client is connected. On dask's
local scheduler the partitions are read by threads of this process and held in it.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import threading
import uuid
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from toolkit._core.errors import ValidationError
from toolkit.arm._schemas import POLICY_STATES
from toolkit.connection import Connection, Settings, environment_credential, get_connection

if TYPE_CHECKING:
    import dask.dataframe as dd

    from toolkit.arm.scopes import Scope

logger = logging.getLogger(__name__)

__all__ = ["WorkerSettings", "history_dask", "policy_states_dask", "worker_credential"]


@dataclasses.dataclass(frozen=True)
class WorkerSettings:
    """What a worker needs to rebuild a connection: nothing secret.

    ``handle`` names the connection in the process that made these settings (a random id, not
    a secret): a task run in that process (dask's local scheduler) reads with that connection
    itself; any other process rebuilds one from the rest.
    """

    arm_url: str
    namespace: str
    header_prefix: str
    verify: bool | str
    settings: tuple[tuple[str, Any], ...]
    handle: str = ""

    @classmethod
    def of(cls, conn: Connection) -> WorkerSettings:
        """Take the non-secret settings of a connection.

        Returns
        -------
        WorkerSettings
            The settings, with the connection's handle in this process.
        """
        return cls(conn.arm_url, conn.namespace, conn.header_prefix, conn.verify,
                   tuple(dataclasses.asdict(conn.settings).items()), _handle(conn))


def worker_credential(arm_url: str) -> Any:
    """Find the credential a worker process uses, its own (never one sent to it).

    See :func:`toolkit.connection.environment_credential`.

    Returns
    -------
    Any
        A token string or a ``TokenCredential``.
    """
    return environment_credential(arm_url, parameter="engine")


_CONNECTIONS: dict[WorkerSettings, Connection] = {}
_LOCK = threading.Lock()
#: the connections of this process that settings were made of, by handle (and back)
_LIVE: weakref.WeakValueDictionary[str, Connection] = weakref.WeakValueDictionary()
_HANDLES: weakref.WeakKeyDictionary[Connection, str] = weakref.WeakKeyDictionary()


def _handle(conn: Connection) -> str:
    """Name ``conn`` in this process by a random id (made on first use)."""
    with _LOCK:
        handle = _HANDLES.get(conn)
        if handle is None:
            handle = _HANDLES[conn] = uuid.uuid4().hex
            _LIVE[handle] = conn
        return handle


def _worker_connection(spec: WorkerSettings) -> Connection:
    """Give the connection a task reads with.

    The one the settings were made of, when the task runs in its process; otherwise one rebuilt
    from them and this process's own credential (kept per settings).
    """
    with _LOCK:
        conn = _LIVE.get(spec.handle) or _CONNECTIONS.get(spec)
        if conn is None:
            from toolkit._core.secrets import Secret

            found = worker_credential(spec.arm_url)
            token = Secret(found, "token") if isinstance(found, str) else None
            conn = Connection(arm_url=spec.arm_url, maps_url=spec.arm_url,
                              graph_url=spec.arm_url, fabric_url=spec.arm_url,
                              credential=None if token else found, token=token,
                              namespace=spec.namespace, header_prefix=spec.header_prefix,
                              verify=spec.verify,
                              settings=Settings(**dict(spec.settings)))
            _CONNECTIONS[spec] = conn
        return conn


def _read_slice(read: Callable[..., pd.DataFrame], spec: WorkerSettings, scope: str,
                options: Mapping[str, Any]) -> pd.DataFrame:
    """One task: a slice of the scope, read by ``read`` with the worker's own connection."""
    conn = _worker_connection(spec)
    return read(scope=scope, connection=conn, **options)


def _categories_of(df: pd.DataFrame) -> dict[str, list[Any]]:
    return {name: list(df[name].cat.categories) for name in df.columns
            if isinstance(df[name].dtype, pd.CategoricalDtype)}


def _merge(found: list[dict[str, list[Any]]]) -> dict[str, list[Any]]:
    """Unite each column's categories, in first-seen order (documented ones first)."""
    cats: dict[str, list[Any]] = {}
    for one in found:
        for name, values in one.items():
            seen = cats.setdefault(name, [])
            known = set(seen)
            seen.extend(v for v in values if v not in known)
    return cats


def _unify(parts: list[pd.DataFrame]) -> dict[str, list[Any]]:
    return _merge([_categories_of(p) for p in parts])


#: Times a task that raised is run again (a task whose worker died is rerun regardless).
RETRIES = 3


def _given(value: Any) -> Any:
    """Hold a value as a task.

    The scheduler keeps it in the graph, so a worker that lost it gets it again without
    recomputing what it was made from.
    """
    return value


def _on_cluster(client: Any, tasks: list[Any]) -> dd.DataFrame:
    """Run the tasks on the cluster and leave their frames there.

    The driver receives each partition's categories and one empty frame (the columns and
    dtypes); it unifies the categories (:func:`_merge`) and hands them back to the cluster as one
    task of their own, on which each partition's re-categorisation depends. The result is built
    from the futures of the re-categorised partitions: its graph names data held by the workers,
    and computing it is the first time a partition travels to the driver.

    A task whose worker dies is run again elsewhere (so is a task that raised, up to
    ``RETRIES`` times); a partition computed twice is the same slice read twice, and only one
    result is kept under its key.
    """
    import dask.dataframe as dd

    parts = client.compute(tasks, retries=RETRIES)
    # nothing large is passed by keyword to client.map: distributed puts a keyword argument
    # whose estimated size exceeds 100 kB into the graph as a node of its own, named after the
    # keyword, which the scheduler cannot prioritise (the graph fails with "cannot pickle
    # 'weakref.ReferenceType'"); the estimate samples a dict's values, so it failed at random
    # when the categories were passed that way
    found = client.map(_categories_of, parts, retries=RETRIES)
    head = client.submit(_empty, parts[0], retries=RETRIES)
    cats = _merge(client.gather(found))
    meta = _set_categories(head.result(), cats)
    del found, head
    shared = client.submit(_given, cats)
    fixed = [client.submit(_set_categories, p, shared, retries=RETRIES) for p in parts]
    del parts, shared  # the scheduler keeps them while the re-categorisation needs them
    with _as_given():
        frame: dd.DataFrame = dd.from_delayed(fixed, meta=meta, verify_meta=False)
    return frame


def _as_given() -> Any:
    """Keep object columns as they are (dask would turn them into pyarrow strings)."""
    import dask

    return dask.config.set({"dataframe.convert-string": False})


def _frames(parts: list[pd.DataFrame]) -> dd.DataFrame:
    """One dask partition per frame."""
    import dask.dataframe as dd

    with _as_given():
        frame: dd.DataFrame
        if len(parts) == 1:
            frame = dd.from_pandas(parts[0], npartitions=1)
        else:
            frame = dd.concat([dd.from_pandas(p, npartitions=1) for p in parts])
    return frame


def _empty(df: pd.DataFrame) -> pd.DataFrame:
    return df.iloc[:0]


def _set_categories(df: pd.DataFrame, cats: Mapping[str, list[Any]]) -> pd.DataFrame:
    """Set these categories on a frame (a new frame sharing the other columns' data)."""
    out = df.copy(deep=False)
    for name, values in cats.items():
        if name in out.columns and list(out[name].cat.categories) != values:
            out[name] = out[name].cat.set_categories(values)
    return out


def _in_process(parts: list[pd.DataFrame]) -> dd.DataFrame:
    """Unify the frames read in this process into one dask frame.

    The frames are re-categorised one at a time (each original is let go as its re-categorised
    frame replaces it).
    """
    cats = _unify(parts)
    for i, part in enumerate(parts):
        parts[i] = _set_categories(part, cats)
    return _frames(parts)


def _slices(where: Scope, conn: Connection, resource: str, filter: str | None,
            start: pd.Timestamp | None, end: pd.Timestamp | None) -> list[tuple[str, Any]]:
    """(scope, extra options) per task."""
    ns = conn.namespace
    if where.kind == "managementGroup":
        from toolkit.arm.resources import subscriptions

        subs = subscriptions(connection=conn)["subscriptionId"].tolist()
        return [(where.path(ns), {"filter": f"({filter}) and subscriptionId eq '{s}'"
                                  if filter else f"subscriptionId eq '{s}'"}) for s in subs]
    if where.kind == "subscription":
        from toolkit.arm.resources import resource_groups

        groups = resource_groups(where.subscription_id or "", connection=conn)["name"].tolist()
        return [(f"{where.path(ns)}/resourceGroups/{g}", {"filter": filter}) for g in groups]
    if resource == "default" and start is not None and end is not None:
        edges = list(pd.date_range(start, end, freq="D"))
        if edges[-1] < end:
            edges.append(end)
        out = []
        for i, (a, b) in enumerate(itertools.pairwise(edges)):
            # windows are inclusive: each slice but the last stops just before the next
            stop = b if i == len(edges) - 2 else b - pd.Timedelta(microseconds=1)
            out.append((where.path(ns), {"filter": filter, "start": a, "end": stop}))
        return out or [(where.path(ns), {"filter": filter})]
    return [(where.path(ns), {"filter": filter})]


def _client() -> Any:
    try:
        from distributed import get_client
    except ImportError:  # pragma: no cover - the extra installs distributed
        return None
    try:
        return get_client()
    except ValueError:
        return None


def policy_states_dask(read: Callable[..., pd.DataFrame], where: Scope, *, resource: str,
                       filter: str | None, apply: str | None, select: str | None,
                       orderby: str | None, top: int | None,
                       start: pd.Timestamp | None, end: pd.Timestamp | None,
                       expand: str | None, max_items: int | None, api_version: str,
                       connection: Connection | None) -> dd.DataFrame:
    """Read policy states with dask, one task per slice of the scope (arguments already checked).

    This is :func:`~toolkit.arm.policy_states` with ``engine="dask"``. ``read`` is the pandas
    read itself (``policy_states``), which each task calls for its slice: the engine runs it and
    knows nothing of the policy module.

    Returns
    -------
    dask.dataframe.DataFrame
        The columns and dtypes of the pandas read, one partition per slice.

    Raises
    ------
    ValidationError
        For ``apply``, ``top``, ``max_items`` or ``orderby``, which a slice cannot keep.
    """
    try:
        import dask
    except ImportError as err:  # pragma: no cover - the extra is part of dev
        raise ImportError("engine='dask' needs dask: pip install 'cloudops-frames[dask]'") from err
    for name, value in (("apply", apply), ("top", top), ("max_items", max_items),
                        ("orderby", orderby)):
        if value is not None:
            raise ValidationError(name, value, "is not available with engine='dask' (a slice's "
                                               "aggregate, order or cap is not the scope's)")
    conn = get_connection(connection)
    client = _client()
    # in this process the connection itself serves; other processes rebuild their own
    spec = WorkerSettings.of(conn)
    common = {"resource": resource, "select": select, "expand": expand,
              "api_version": api_version, "start": start, "end": end}
    tasks = []
    for scope, extra in _slices(where, conn, resource, filter, start, end):
        options = {**common, **{k: v for k, v in extra.items()}}
        tasks.append(dask.delayed(_read_slice, pure=True)(read, spec, scope, options))
    if client is not None and tasks:
        logger.info("policy_states: %d slices on the cluster", len(tasks))
        return _on_cluster(client, tasks)
    parts = list(dask.compute(*tasks, scheduler="threads"))
    logger.info("policy_states: %d slices read with dask", len(parts))
    if not parts:
        return _frames([pd.DataFrame({c.name: pd.Series(dtype=c.dtype())
                                      for c in POLICY_STATES.columns})])
    return _in_process(parts)


def history_dask(read_files: Callable[..., pd.DataFrame], store: str, files: list[str],
                 columns: list[str], expr: Any, storage_options: dict[str, Any] | None
                 ) -> dd.DataFrame:
    """Read the history store's files with dask: one task per file, categories unified.

    This is :func:`~toolkit.arm.history.read_policy_history` with ``engine="dask"``.

    Parameters
    ----------
    read_files : callable
        The store's reader of some files into the typed frame.
    store : str
        The store.
    files : list of str
        The files to read.
    columns : list of str
        The stored columns to read.
    expr : pyarrow.dataset.Expression or None
        The row filter.
    storage_options : dict, optional
        Passed to fsspec.

    Returns
    -------
    dask.dataframe.DataFrame
        One partition per file.
    """
    import dask

    tasks = [dask.delayed(read_files, pure=True)(store, [f], columns, expr, storage_options)
             for f in files]
    client = _client()
    if client is not None and tasks:
        return _on_cluster(client, tasks)
    parts = list(dask.compute(*tasks, scheduler="threads"))
    if not parts:
        return _frames([read_files(store, [], columns, expr, storage_options)])
    return _in_process(parts)
