"""The policy history store: one copy per scope and day, write-then-rename, partition and column
pruning (files counted), the typed frame back, and a long past built day by day."""

from __future__ import annotations

from datetime import timedelta

import pandas as pd
import pytest

import toolkit
from toolkit._core.errors import ValidationError
from toolkit.arm.history import service_today, stored_days

fsspec = pytest.importorskip("fsspec")
pytest.importorskip("pyarrow")
from fsspec.implementations.local import LocalFileSystem  # noqa: E402


@pytest.fixture(scope="module")
def days(world):
    last = (pd.Timestamp(world.epoch) - timedelta(days=2)).normalize()
    return [last - timedelta(days=i) for i in (2, 1, 0)]


@pytest.fixture
def rg_scope(world):
    sub = world.subscriptions[0]
    return f"/subscriptions/{sub.id}/resourceGroups/rg-web-weu"


def _parquet_files(root) -> list:
    return sorted(p for p in root.rglob("*") if p.is_file())


def test_same_day_twice_is_one_copy(conn, tmp_path, rg_scope, days) -> None:
    first = toolkit.snapshot_policy_states(str(tmp_path), rg_scope, day=days[0], connection=conn)
    again = toolkit.snapshot_policy_states(str(tmp_path), rg_scope, day=days[0], connection=conn)
    assert first["records"].iloc[0] == again["records"].iloc[0] > 0
    assert len(_parquet_files(tmp_path)) == 1
    back = toolkit.read_policy_history(str(tmp_path))
    day_end = days[0] + timedelta(days=1) - timedelta(microseconds=1)
    live = toolkit.policy_states(scope=rg_scope, resource="default", start=days[0], end=day_end,
                                 connection=conn)
    assert len(back) == len(live)
    cols = [c for c in back.columns if c not in ("scope", "day")]
    left = back[cols].sort_values(["timestamp", "resourceId", "policyAssignmentId",
                                   "policyDefinitionReferenceId"]).reset_index(drop=True)
    right = live[cols].sort_values(["timestamp", "resourceId", "policyAssignmentId",
                                    "policyDefinitionReferenceId"]).reset_index(drop=True)
    assert (left.dtypes == right.dtypes).all()
    pd.testing.assert_frame_equal(left.astype(str), right.astype(str))


def test_a_crash_between_write_and_rename_keeps_the_previous_day(conn, tmp_path, rg_scope, days,
                                                                 monkeypatch) -> None:
    toolkit.snapshot_policy_states(str(tmp_path), rg_scope, day=days[1], connection=conn)
    before = toolkit.read_policy_history(str(tmp_path))
    original = _parquet_files(tmp_path)[0].read_bytes()

    def crash(self, *args, **kwargs):
        raise OSError("the machine stopped here")

    monkeypatch.setattr(LocalFileSystem, "mv", crash)
    with pytest.raises(OSError, match="stopped"):
        toolkit.snapshot_policy_states(str(tmp_path), rg_scope, day=days[1],
                                       filter="complianceState eq 'NonCompliant'",
                                       connection=conn)
    monkeypatch.undo()
    files = _parquet_files(tmp_path)
    assert len(files) == 2  # the old day and the unrenamed new one (hidden)
    assert (tmp_path.rglob("part-0.parquet").__next__()).read_bytes() == original
    after = toolkit.read_policy_history(str(tmp_path))
    assert len(after) == len(before)
    toolkit.snapshot_policy_states(str(tmp_path), rg_scope, day=days[1], connection=conn)
    assert len(_parquet_files(tmp_path)) == 1  # the leftover is cleaned up


def test_pruning_opens_only_the_needed_files_and_columns(conn, tmp_path, world, rg_scope, days,
                                                         monkeypatch) -> None:
    sub_scope = f"/subscriptions/{world.subscriptions[1].id}"
    for day in days:
        toolkit.snapshot_policy_states(str(tmp_path), rg_scope, day=day, connection=conn)
        toolkit.snapshot_policy_states(str(tmp_path), sub_scope, day=day, connection=conn)
    assert len(_parquet_files(tmp_path)) == 6
    opened: list[str] = []
    real_open = LocalFileSystem._open

    def counting(self, path, *args, **kwargs):
        opened.append(str(path))
        return real_open(self, path, *args, **kwargs)

    monkeypatch.setattr(LocalFileSystem, "_open", counting)
    df = toolkit.read_policy_history(str(tmp_path), start=days[1], end=days[1], scope=rg_scope,
                                     columns=["resourceId", "complianceState"])
    assert len({p for p in opened if p.endswith(".parquet")}) == 1
    assert list(df.columns) == ["resourceId", "complianceState", "scope", "day"]
    assert set(df["day"].astype(str)) == {days[1].date().isoformat()}
    assert set(df["scope"].astype(str)) == {rg_scope}
    opened.clear()
    two = toolkit.read_policy_history(str(tmp_path), start=days[1],
                                      filters=[("complianceState", "==", "NonCompliant")])
    assert len({p for p in opened if p.endswith(".parquet")}) == 4
    assert set(two["complianceState"].astype(str)) == {"NonCompliant"}
    assert two["complianceState"].dtype.ordered


def test_bad_store_arguments_are_refused(tmp_path) -> None:
    with pytest.raises(ValidationError) as info:
        toolkit.read_policy_history(str(tmp_path / "nothing"))
    assert info.value.parameter == "store"
    with pytest.raises(ValidationError) as info:
        toolkit.read_policy_history(str(tmp_path), columns=["nope"])
    assert info.value.parameter == "columns"


# ------------------------------------------------------------------------------ a long past
@pytest.fixture(scope="module")
def long_past():
    mp = pytest.MonkeyPatch()
    mp.setenv("TOOLKIT_SANDBOX_POLICY_HISTORY_DAYS", "365")
    from toolkit.sandbox.server import Sandbox

    with Sandbox(seed=7) as sb:
        sb.world.section("policy")  # built while the variable is set
        yield sb
    mp.undo()


def test_a_year_of_history_built_day_by_day(long_past, tmp_path) -> None:
    sb = long_past
    conn = toolkit.connect(sandbox=sb, progress=False)
    sub = sb.world.subscriptions[0]
    scope = f"/subscriptions/{sub.id}/resourceGroups/rg-data-weu"
    epoch = pd.Timestamp(sb.world.epoch).normalize()
    days = [epoch - timedelta(days=n) for n in (330, 250, 180, 120, 45, 10)]
    # today, the service no longer answers for the old days
    old = toolkit.policy_states(scope=scope, resource="default", start=days[0],
                                end=days[0] + timedelta(days=1), connection=conn)
    assert len(old) == 0
    written = []
    try:
        for day in days:  # the sandbox as it answered the morning after each day
            sb.hold_clock((day + timedelta(days=1, hours=6)).to_pydatetime())
            written.append(toolkit.snapshot_policy_states(str(tmp_path), scope, day=day,
                                                          connection=conn))
    finally:
        sb.hold_clock(None)
    counts = pd.concat(written)["records"].astype(int).tolist()
    assert all(counts)
    # beyond 60 days a pair is evaluated one day in seven
    assert max(counts[:4]) * 4 < min(counts[4:])
    history = toolkit.read_policy_history(str(tmp_path))
    assert len(history) == sum(counts)
    trend = toolkit.compliance_trend(history, by="policyAssignmentName")
    assert sorted(set(trend["day"].dt.normalize())) == days
    # the tagging assignment was made 300 days ago: absent on the first day, there later
    tagging = trend[trend["policyAssignmentName"].astype(str) == "tagging-retail"]
    assert tagging["day"].min() == days[1]


# ------------------------------------------------------------------------------ dask
def test_dask_read_and_snapshot_equal_the_single_process_ones(conn, tmp_path, world, days
                                                              ) -> None:
    pytest.importorskip("dask.dataframe")
    scope = f"/subscriptions/{world.subscriptions[2].id}"
    single = tmp_path / "single"
    parallel = tmp_path / "parallel"
    for day in days[:2]:
        toolkit.snapshot_policy_states(str(single), scope, day=day, connection=conn)
        toolkit.snapshot_policy_states(str(parallel), scope, day=day, engine="dask",
                                       connection=conn)
    a = toolkit.read_policy_history(str(single))
    ddf = toolkit.read_policy_history(str(parallel), engine="dask")
    assert ddf.npartitions == 2
    b = ddf.compute()
    assert (a.dtypes == b.dtypes).all()
    keys = ["timestamp", "resourceId", "policyAssignmentId", "policyDefinitionId",
            "policyDefinitionReferenceId"]
    a = a.astype(str).sort_values(keys).reset_index(drop=True)
    b = b.astype(str).sort_values(keys).reset_index(drop=True)
    assert len(a) and a.equals(b)


# ------------------------------------------------------------------------------ the clock
def test_the_default_day_is_yesterday_by_the_services_clock(conn, sandbox, tmp_path,
                                                            rg_scope) -> None:
    # the sandbox is pinned to its world's day, not the machine's: the service's Date decides
    service_day = pd.Timestamp(sandbox.now()).date()
    assert service_today(conn) == service_day
    with sandbox.recording() as log:
        out = toolkit.snapshot_policy_states(str(tmp_path), rg_scope, connection=conn)
    # the service told its clock in its answer to service_today: it is not asked again
    assert "/subscriptions" not in [e.path for e in log]
    assert out["day"].iloc[0] == (service_day - timedelta(days=1)).isoformat()
    assert out["records"].iloc[0] > 0


def test_a_day_with_no_records_says_so(conn, tmp_path, rg_scope, world) -> None:
    empty_day = (pd.Timestamp(world.epoch) + timedelta(days=3)).normalize()
    with pytest.warns(toolkit.EmptySnapshotWarning) as caught:
        out = toolkit.snapshot_policy_states(str(tmp_path), rg_scope, day=empty_day,
                                             connection=conn)
    assert out["records"].iloc[0] == 0
    text = str(caught[0].message)
    assert rg_scope in text and empty_day.date().isoformat() in text
    assert issubclass(toolkit.EmptySnapshotWarning, UserWarning)


def test_the_stored_days_come_from_the_partitions_names(conn, tmp_path, world, rg_scope,
                                                        days) -> None:
    sub = world.subscriptions[0].id
    for day in days[:2]:
        toolkit.snapshot_policy_states(str(tmp_path), rg_scope, day=day, connection=conn)
    toolkit.snapshot_policy_states(str(tmp_path), sub, day=days[2], connection=conn)
    # a folder that is no partition of the store's, and a day never finished, are no days
    (tmp_path / "notes").mkdir()
    unfinished = next(tmp_path.glob("scope=*")) / "day=2020-01-01"
    unfinished.mkdir()
    (unfinished / ".part-0.parquet.0123.tmp").write_bytes(b"")
    want = [d.date() for d in days]
    assert stored_days(str(tmp_path)) == want
    assert stored_days(str(tmp_path), rg_scope) == want[:2]
    assert stored_days(str(tmp_path), sub) == want[2:]
    assert stored_days(str(tmp_path / "nothing")) == []
