"""engine="dask": the same rows and dtypes as the single-process read, on dask's local scheduler
and on a two-worker LocalCluster whose workers rebuild their connection from non-secret settings
and their own credential source."""

from __future__ import annotations

import os
import pickle
import signal
import threading
import time
from datetime import timedelta

import pandas as pd
import pytest

import toolkit
from toolkit._core.errors import ValidationError
from toolkit.arm.engine import WorkerSettings, _categories_of
from toolkit.sandbox.server import Sandbox

# a local dask cluster, a worker killed mid-read, real timeouts: see tests/conftest.py
pytestmark = pytest.mark.xdist_group("real-time")

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

SORT = ["timestamp", "resourceId", "policyAssignmentId", "policyDefinitionId",
        "policyDefinitionReferenceId"]
SECRET = "dask-test-sandbox-secret"


def _in_order(df: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """The rows ordered by the text of the ``by`` columns (stable), whatever the order of the
    categories of either frame."""
    order = df[by].astype(str).reset_index(drop=True).sort_values(by, kind="stable").index
    return df.iloc[order].reset_index(drop=True)


def _same(single: pd.DataFrame, parallel: pd.DataFrame, by: list[str] = SORT) -> None:
    assert list(single.columns) == list(parallel.columns)
    assert (single.dtypes == parallel.dtypes).all()
    # every value equal, row by row in the same order (the categories of either frame may come
    # in another order: the values are compared, not the codes)
    pd.testing.assert_frame_equal(_in_order(single, by), _in_order(parallel, by),
                                  check_exact=True, check_categorical=False)


def _partition_keys(ddf) -> set:
    """The keys the result's graph names but does not define."""
    graph = dict(ddf.__dask_graph__())
    assert not any(isinstance(getattr(node, "value", None), pd.DataFrame)
                   for node in graph.values())
    return set().union(*(node.dependencies for node in graph.values())) - set(graph)


def _on_the_workers(client, ddf) -> None:
    """The result's graph carries no frame: its partitions are keys it does not define, each
    held in a worker's memory."""
    outside = _partition_keys(ddf)
    assert len(outside) == ddf.npartitions
    held = [distributed.Future(key, client) for key in outside]
    distributed.wait(held, timeout=120)
    assert all(f.status == "finished" for f in held)
    where = client.who_has(held)
    assert all(where[key] for key in outside)


def _window(world, days: float = 2):
    end = pd.Timestamp(world.epoch) - timedelta(hours=2)
    return end - timedelta(days=days), end


def test_local_scheduler_equals_the_single_process_read(conn, world) -> None:
    start, end = _window(world)
    sub = world.subscriptions[0]
    single = toolkit.policy_states(sub.id, resource="default", start=start, end=end,
                                   connection=conn)
    ddf = toolkit.policy_states(sub.id, resource="default", start=start, end=end,
                                engine="dask", connection=conn)
    assert isinstance(ddf, dd.DataFrame)
    assert ddf.npartitions == len(sub.resource_groups)
    _same(single, ddf.compute())


def test_time_slices_of_a_resource_group(conn, world) -> None:
    start, end = _window(world)
    sub = world.subscriptions[0]
    single = toolkit.policy_states(sub.id, "rg-web-weu", resource="default", start=start,
                                   end=end, connection=conn)
    ddf = toolkit.policy_states(sub.id, "rg-web-weu", resource="default", start=start, end=end,
                                engine="dask", connection=conn)
    assert ddf.npartitions == 2  # one slice per day of the window
    _same(single, ddf.compute())


@pytest.mark.parametrize("kwargs", [{"apply": "aggregate($count as n)"}, {"top": 5},
                                    {"max_items": 5}])
def test_what_slices_cannot_answer_is_refused(conn, sandbox, world, kwargs) -> None:
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        toolkit.policy_states(world.subscriptions[0].id, engine="dask", connection=conn,
                              **kwargs)
    assert info.value.parameter == next(iter(kwargs))
    assert log == []


def test_local_scheduler_reads_with_the_connection_given_not_the_default(
        sandbox, waits) -> None:
    with Sandbox(seed=8) as other:  # another world: other subscriptions, other records
        start, end = _window(other.world)
        sub = other.world.subscriptions[0]
        asked = toolkit.connect(sandbox=other, progress=False)
        asked.sleep = waits
        default = toolkit.connect(sandbox=sandbox, progress=False)  # the default from now on
        try:
            single = toolkit.policy_states(sub.id, resource="default", start=start, end=end,
                                           connection=asked)
            with sandbox.recording() as elsewhere, other.recording() as log:
                ddf = toolkit.policy_states(sub.id, resource="default", start=start, end=end,
                                            engine="dask", connection=asked)
                got = ddf.compute()
        finally:
            asked.close()
            default.close()
    assert elsewhere == []
    assert len(log) >= len(sub.resource_groups)
    assert len(single) > 0
    _same(single, got)


@pytest.fixture(scope="module")
def cluster(monkeypatch_module):
    monkeypatch_module.setenv("TOOLKIT_SANDBOX_SECRET", SECRET)
    with Sandbox(seed=7, secret=SECRET) as sb, \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address=None, host="127.0.0.1") as lc, \
            distributed.Client(lc) as client:
        yield sb, lc, client


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


@pytest.mark.timeout(240)
def test_two_worker_cluster_equals_the_single_process_read(cluster) -> None:
    sb, _lc, client = cluster
    conn = toolkit.connect(sandbox=sb, progress=False)
    # half a day of the whole tenant: every subscription a partition, and categories of most
    # of its resources and policies
    start, end = _window(sb.world, days=0.5)
    scope = f"/providers/Microsoft.Management/managementGroups/{sb.world.tenant_id}"
    single = toolkit.policy_states(scope=scope, resource="default", start=start, end=end,
                                   connection=conn)
    ddf = toolkit.policy_states(scope=scope, resource="default", start=start, end=end,
                                engine="dask", connection=conn)
    assert ddf.npartitions == len(sb.world.subscriptions)
    # the unified categories are larger than what distributed keeps inside a task (100 kB), so
    # the way they reach the workers is exercised
    assert len(pickle.dumps(_categories_of(single))) > 100_000
    _on_the_workers(client, ddf)
    _same(single, ddf.compute())
    # both workers read, and no secret travelled: workers found their own credential
    assert len(client.scheduler_info()["workers"]) == 2
    spec = pickle.dumps(WorkerSettings.of(conn))
    token = conn.credential.get_token(conn.scope_for("arm")).token
    assert SECRET.encode() not in spec and token.encode() not in spec


@pytest.mark.timeout(240)
def test_a_worker_dying_mid_read_loses_and_duplicates_nothing(cluster) -> None:
    sb, lc, client = cluster
    conn = toolkit.connect(sandbox=sb, progress=False)
    start, end = _window(sb.world)
    sub = sb.world.subscriptions[0]
    single = toolkit.policy_states(sub.id, resource="default", start=start, end=end,
                                   connection=conn)
    # the first policy requests of the next read (one a worker) are slowed, and a worker is
    # killed as soon as the first of them has reached the service: the read is under way; dask
    # reruns that worker's tasks on the other one (and on its replacement)
    slowed = sb.inject("latency", path="policyStates", count=2, latency_ms=600)
    killed: list[int] = []

    def kill_one() -> None:
        began = time.monotonic()
        while not slowed.fired and time.monotonic() - began < 60:
            time.sleep(0.01)
        nanny = next(iter(lc.workers.values()))
        pid = nanny.process.process.pid
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    killer = threading.Thread(target=kill_one)
    killer.start()
    ddf = toolkit.policy_states(sub.id, resource="default", start=start, end=end,
                                engine="dask", connection=conn)
    killer.join()
    sb.clear_faults()
    assert killed
    _on_the_workers(client, ddf)
    _same(single, ddf.compute())


@pytest.mark.timeout(240)
def test_the_driver_receives_categories_not_partitions(cluster) -> None:
    sb, _lc, client = cluster
    conn = toolkit.connect(sandbox=sb, progress=False)
    start, end = _window(sb.world)
    sub = sb.world.subscriptions[1]
    single = toolkit.policy_states(sub.id, resource="default", start=start, end=end,
                                   connection=conn)
    ddf = toolkit.policy_states(sub.id, resource="default", start=start, end=end,
                                engine="dask", connection=conn)
    _on_the_workers(client, ddf)
    # the declared dtypes, unified categories included, are known without computing anything
    assert (ddf.dtypes == single.dtypes).all()
    # counted where the partitions are: each worker reports its own partitions' rows
    counts = ddf.map_partitions(len).compute()
    assert counts.sum() == len(single) and (counts > 0).all()


@pytest.mark.timeout(240)
def test_history_on_the_cluster_equals_the_single_process_read(cluster, tmp_path) -> None:
    pytest.importorskip("pyarrow")
    sb, _lc, client = cluster
    conn = toolkit.connect(sandbox=sb, progress=False)
    scope = f"/subscriptions/{sb.world.subscriptions[2].id}"
    last = (pd.Timestamp(sb.world.epoch) - timedelta(days=2)).normalize()
    for day in (last - timedelta(days=1), last):
        toolkit.snapshot_policy_states(str(tmp_path), scope, day=day, connection=conn)
    single = toolkit.read_policy_history(str(tmp_path))
    ddf = toolkit.read_policy_history(str(tmp_path), engine="dask")
    assert ddf.npartitions == 2
    _on_the_workers(client, ddf)
    parallel = ddf.compute()
    assert len(single)
    _same(single, parallel, [*SORT, "day"])


@pytest.mark.timeout(240)
def test_a_worker_dying_after_the_read_loses_nothing(cluster) -> None:
    sb, lc, client = cluster
    conn = toolkit.connect(sandbox=sb, progress=False)
    start, end = _window(sb.world)
    sub = sb.world.subscriptions[0]
    single = toolkit.policy_states(sub.id, "rg-web-weu", resource="default", start=start,
                                   end=end, connection=conn)
    ddf = toolkit.policy_states(sub.id, "rg-web-weu", resource="default", start=start, end=end,
                                engine="dask", connection=conn)
    _on_the_workers(client, ddf)
    # the worker holding a partition dies: that partition is read again when it is needed
    key = next(iter(_partition_keys(ddf)))
    holder = client.who_has([distributed.Future(key, client)])[key][0]
    nanny = next(n for n in lc.workers.values() if n.worker_address == holder)
    os.kill(nanny.process.process.pid, signal.SIGKILL)
    _same(single, ddf.compute())
