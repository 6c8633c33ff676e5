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
from toolkit.arm.engine import WorkerSettings
from toolkit.sandbox.server import Sandbox

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

SORT = ["timestamp", "resourceId", "policyAssignmentId", "policyDefinitionId",
        "policyDefinitionReferenceId"]
SECRET = "dask-test-sandbox-secret"


def _same(single: pd.DataFrame, parallel: pd.DataFrame) -> None:
    assert list(single.columns) == list(parallel.columns)
    assert (single.dtypes == parallel.dtypes).all()
    a = single.astype(str).sort_values(SORT, kind="stable").reset_index(drop=True)
    b = parallel.astype(str).sort_values(SORT, kind="stable").reset_index(drop=True)
    assert a.equals(b)


def _window(world):
    end = pd.Timestamp(world.epoch) - timedelta(hours=2)
    return end - timedelta(days=2), end


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
    start, end = _window(sb.world)
    scope = f"/providers/Microsoft.Management/managementGroups/{sb.world.tenant_id}"
    single = toolkit.policy_states(scope=scope, resource="default", start=start, end=end,
                                   connection=conn)
    ddf = toolkit.policy_states(scope=scope, resource="default", start=start, end=end,
                                engine="dask", connection=conn)
    assert ddf.npartitions == len(sb.world.subscriptions)
    _same(single, ddf.compute())
    # both workers read, and no secret travelled: workers found their own credential
    assert len(client.scheduler_info()["workers"]) == 2
    spec = pickle.dumps(WorkerSettings.of(conn))
    token = conn.credential.get_token(conn.scope_for("arm")).token
    assert SECRET.encode() not in spec and token.encode() not in spec


@pytest.mark.timeout(240)
def test_a_worker_dying_mid_read_loses_and_duplicates_nothing(cluster) -> None:
    sb, lc, _client = cluster
    conn = toolkit.connect(sandbox=sb, progress=False)
    start, end = _window(sb.world)
    sub = sb.world.subscriptions[0]
    single = toolkit.policy_states(sub.id, resource="default", start=start, end=end,
                                   connection=conn)
    # every policy request of the next read is slowed, so the read is under way when a worker
    # is killed; dask reruns that worker's tasks on the other one (and on its replacement)
    sb.inject("latency", path="policyStates", count=6, latency_ms=1500)
    killed: list[int] = []

    def kill_one() -> None:
        time.sleep(1.0)
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
    _same(single, ddf.compute())
