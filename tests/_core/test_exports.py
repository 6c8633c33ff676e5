"""Parquet exports: every function's frame round-trips with its dtypes; secrets stay masked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

import toolkit
from tests.frames_of_every_function import every_frame
from toolkit._core.registry import records
from toolkit._core.secrets import MASK, Secret

pq = pytest.importorskip("pyarrow.parquet")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def frames(sandbox):
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    conn.sleep = lambda seconds: None
    try:
        yield every_frame(sandbox, conn)
    finally:
        conn.close()


def _secret_columns(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if any(isinstance(v, Secret) for v in df[c])]


def test_every_operation_is_covered(frames) -> None:
    assert set(frames) == set(records())


def test_every_frame_round_trips_with_its_dtypes(frames, tmp_path) -> None:
    for name, df in frames.items():
        path = tmp_path / f"{name}.parquet"
        toolkit.to_parquet(df, path)
        back = toolkit.read_parquet(path)
        assert type(back) is type(df), name
        assert list(back.columns) == list(df.columns), name
        secret = _secret_columns(df)
        # a secret column written masked comes back as the mask, as text
        assert back.drop(columns=secret).dtypes.to_dict() == \
            df.drop(columns=secret).dtypes.to_dict(), name
        assert back.attrs == df.attrs, name
        for col in secret:
            assert (back[col] == MASK).all(), (name, col)
        # exactly: what was written is read back value for value (and pandas compares the
        # categorical columns as whole arrays, not one value at a time)
        pd.testing.assert_frame_equal(back.drop(columns=secret), df.drop(columns=secret),
                                      obj=name, check_exact=True)


def test_lists_nested_objects_and_categories_survive(frames, tmp_path) -> None:
    states = frames["policy_states"]
    toolkit.to_parquet(states, tmp_path / "s.parquet")
    back = toolkit.read_parquet(tmp_path / "s.parquet")
    assert isinstance(back["policyDefinitionGroupNames"].dropna().iloc[0], list)
    details = back["policyEvaluationDetails"].dropna()
    assert len(details) and isinstance(details.iloc[0], dict)
    assert back["complianceState"].cat.ordered
    assert list(back["complianceState"].cat.categories) == list(
        states["complianceState"].cat.categories)
    assert str(back["timestamp"].dt.tz) == "UTC"


def test_geo_frames_are_geoparquet_with_both_incident_geometries(frames, tmp_path) -> None:
    path = tmp_path / "incidents.parquet"
    toolkit.to_parquet(frames["traffic_incidents"], path)
    geo = json.loads(pq.read_schema(path).metadata[b"geo"])
    assert set(geo["columns"]) == {"geometry", "endPoint"}
    assert geo["primary_column"] == "geometry"
    back = toolkit.read_parquet(path)
    assert back.crs == frames["traffic_incidents"].crs
    assert back["endPoint"].geom_equals(frames["traffic_incidents"]["endPoint"]).all()


def test_secrets_are_written_as_the_mask_unless_revealed(frames, tmp_path) -> None:
    creds = frames["cluster_monitoring_credentials"]
    values = [str(v.reveal()) for v in creds["value"]]
    masked = tmp_path / "masked.parquet"
    toolkit.to_parquet(creds, masked)
    data = masked.read_bytes()
    assert all(v.encode() not in data for v in values)
    assert all(v[:40].encode() not in data for v in values)

    revealed = tmp_path / "revealed.parquet"
    with pytest.warns(toolkit.RevealedSecretsWarning, match="in clear") as seen:
        toolkit.to_parquet(creds, revealed, reveal=True)
    assert all(v not in str(w.message) for w in seen for v in values)
    back = toolkit.read_parquet(revealed)
    assert all(isinstance(v, Secret) for v in back["value"])
    assert [str(v.reveal()) for v in back["value"]] == values
    assert MASK in repr(back[["value"]]) and values[0] not in repr(back[["value"]])


def test_a_revealed_export_is_readable_by_its_owner_only(frames, tmp_path, recwarn) -> None:
    import stat

    creds = frames["hosted_cluster_credentials"]
    wide = tmp_path / "wide.parquet"
    wide.write_bytes(b"")
    wide.chmod(0o644)  # an existing file with a wider mode is narrowed too
    for path in (tmp_path / "new.parquet", wide):
        toolkit.to_parquet(creds, path, reveal=True)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    masked = tmp_path / "masked.parquet"
    toolkit.to_parquet(creds, masked)
    assert not [w for w in recwarn if issubclass(w.category, toolkit.RevealedSecretsWarning)
                and str(masked) in str(w.message)]


def test_bad_input_is_refused(tmp_path) -> None:
    with pytest.raises(toolkit.ValidationError, match="df"):
        toolkit.to_parquet([1, 2], tmp_path / "x.parquet")
    with pytest.raises(toolkit.ValidationError, match="reveal"):
        toolkit.to_parquet(pd.DataFrame({"a": [1]}), tmp_path / "x.parquet", reveal="yes")


_DTYPES_SCRIPT = textwrap.dedent("""
    import json, sys
    sys.modules["pyarrow"] = None  # importing it now fails, as if it were not installed
    import toolkit
    from toolkit.sandbox.server import Sandbox
    from tests.frames_of_every_function import NEEDS_PARQUET, every_frame
    with Sandbox(seed=7, lro_polls=1, lro_retry_after=0) as sb:
        conn = toolkit.connect(sandbox=sb, progress=False)
        conn.sleep = lambda s: None
        frames = every_frame(sb, conn, without=NEEDS_PARQUET)
    import pandas as pd
    print(json.dumps({"storage": str(pd.Series(["a"], dtype="string").dtype.storage),
                      "frames": {n: {c: str(t) for c, t in df.dtypes.items()}
                                 for n, df in frames.items()}}))
""")


@pytest.mark.slow
def test_frames_have_the_same_dtypes_with_and_without_pyarrow(frames) -> None:
    # with pyarrow: the frames of this process (the module's); without: a process of its own
    from tests.frames_of_every_function import NEEDS_PARQUET

    env = {**os.environ, "PYTHONPATH": str(ROOT), "TOOLKIT_PROGRESS": "0"}
    run = subprocess.run([sys.executable, "-c", _DTYPES_SCRIPT], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stderr[-2000:]
    without = json.loads(run.stdout.strip().splitlines()[-1])
    assert str(pd.Series(["a"], dtype="string").dtype.storage) == "pyarrow"
    assert without["storage"] == "python"
    assert {n: {c: str(t) for c, t in df.dtypes.items()} for n, df in frames.items()
            if n not in NEEDS_PARQUET} == without["frames"]
