"""provenance and provenance_of: the attrs every frame carries (operation, api-version, endpoint
without its query, request ids and whether each answer came from the cache, the time), and their
copy into a derived frame."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pandas as pd

import toolkit
from toolkit._core.provenance import provenance, provenance_of
from toolkit._spec.common import SANDBOX_HEADER


def test_the_endpoint_drops_the_query_and_fragment() -> None:
    attrs = provenance("policy_states", "2024-10-01",
                       "https://127.0.0.1:8443/subscriptions/s/providers/x?api-version=1&$top=5#f",
                       ["r1", "r2"])
    assert attrs["operation"] == "policy_states" and attrs["api_version"] == "2024-10-01"
    assert attrs["endpoint"] == "https://127.0.0.1:8443/subscriptions/s/providers/x"
    assert attrs["request_ids"] == ["r1", "r2"]
    assert attrs["from_cache"] == [False, False]  # ids never answered from the cache
    assert attrs["sandbox"] is False  # ids no sandbox answered


def test_no_url_means_no_endpoint_and_the_time_is_now_in_utc() -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    attrs = provenance("local_helper", None, None)
    retrieved = datetime.fromisoformat(attrs["retrieved_at"])
    assert attrs["endpoint"] is None and attrs["request_ids"] == [] and attrs["from_cache"] == []
    assert retrieved.utcoffset() == timedelta(0)
    assert before <= retrieved <= datetime.now(UTC) + timedelta(seconds=1)


def test_request_ids_are_copied_not_shared() -> None:
    ids = ["r1"]
    attrs = provenance("f", None, None, ids)
    ids.append("r2")
    assert attrs["request_ids"] == ["r1"]


def test_provenance_of_is_a_copy_of_the_frames_attrs() -> None:
    df = pd.DataFrame({"a": [1]})
    df.attrs.update(provenance("f", "v1", "https://127.0.0.1/p", ["r1"]))
    copied = provenance_of(df)
    assert copied == df.attrs
    copied["operation"] = "g"
    assert df.attrs["operation"] == "f"
    assert provenance_of(pd.DataFrame()) == {}


# --------------------------------------------------------------------------------------------
# df.attrs["sandbox"]: invented data is never confused with real data


def test_every_function_marks_the_sandboxs_frames(sandbox) -> None:
    from tests.frames_of_every_function import every_frame

    conn = toolkit.connect(sandbox=sandbox, progress=False)
    conn.sleep = lambda seconds: None
    try:
        frames = every_frame(sandbox, conn)
        unmarked = {name for name, df in frames.items() if df.attrs.get("sandbox") is not True}
        assert unmarked == set()
        assert {"snapshot_policy_states", "read_policy_history"} <= set(frames)
    finally:
        conn.close()


def test_a_sandbox_started_apart_marks_its_answers_by_its_header(sandbox) -> None:
    # connected by URL only (as to `python -m toolkit.sandbox`): the connection holds no Sandbox
    conn = toolkit.connect(base_url=sandbox.url, credential=sandbox.credential(),
                           maps_key=sandbox.maps_key, progress=False)
    try:
        assert conn.sandbox is None
        assert toolkit.sql_operations(connection=conn).attrs["sandbox"] is True
    finally:
        conn.close()


def test_real_answers_are_marked_real_and_no_header_can_unmark_the_sandbox(sandbox) -> None:
    from tests.replay import Answer, replay_server

    body = {"value": [{"name": "Vendor.Sql/servers/read", "isDataAction": False}]}
    with replay_server() as rp:
        rp.add("GET", r"/providers/Vendor\.Sql/operations",
               Answer(200, body, {"x-vendor-request-id": "11111111-0000-0000-0000-000000000001"}),
               Answer(200, body, {"x-vendor-request-id": "11111111-0000-0000-0000-000000000002",
                                  SANDBOX_HEADER: "true"}))
        conn = toolkit.connect(base_url=rp.url, token="t" * 20, progress=False)
        assert toolkit.sql_operations(connection=conn).attrs["sandbox"] is False
        assert toolkit.sql_operations(connection=conn).attrs["sandbox"] is True  # header: True
        conn.close()
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    try:
        df = toolkit.sql_operations(connection=conn)
        assert df.attrs["sandbox"] is True
        assert provenance_of(df)["sandbox"] is True  # derived frames keep it
    finally:
        conn.close()


def test_a_frame_pandas_stripped_of_its_flag_is_taken_as_the_default_connections(
        sandbox, monkeypatch) -> None:
    from toolkit._core import provenance as prov

    a = pd.DataFrame({"x": [1]})
    a.attrs.update({"sandbox": True, "request_ids": ["r1"]})
    b = pd.DataFrame({"x": [2]})
    b.attrs.update({"sandbox": True, "request_ids": ["r2"]})
    joined = pd.concat([a, b])  # different attrs: pandas keeps none of them
    real = a.copy()
    real.attrs["sandbox"] = False
    monkeypatch.setattr(prov, "_default_is_sandbox", False)
    toolkit.connect(sandbox=sandbox, progress=False)  # the default now answers from a sandbox
    assert prov.from_sandbox(joined) and prov.from_sandbox(a)
    assert not prov.from_sandbox(real)  # a frame that says it is real stays real
    toolkit.connect(base_url=sandbox.url, token=sandbox.token("arm"), progress=False)
    assert not prov.from_sandbox(joined)  # nothing says a sandbox: no mark
    assert prov.from_sandbox(a)


def test_the_mark_follows_the_header_whatever_the_prefix(sandbox) -> None:
    # the toolkit's own sandbox started apart, reached in another cloud's header words: its
    # x-vendor-request-id is no id this connection reads
    conn = toolkit.connect(base_url=sandbox.url, credential=sandbox.credential(),
                           maps_key=sandbox.maps_key, header_prefix="x-ms-", progress=False)
    try:
        df = toolkit.sql_operations(connection=conn)
        assert df.attrs["sandbox"] is True
        ids = df.attrs["request_ids"]
        assert ids and all(i.startswith("sandbox-") for i in ids)
    finally:
        conn.close()


def test_the_mark_follows_the_header_of_an_answer_with_no_request_id() -> None:
    from tests.replay import Answer, replay_server

    body = {"value": [{"name": "Vendor.Sql/servers/read", "isDataAction": False}]}
    with replay_server() as rp:
        rp.add("GET", r"/providers/Vendor\.Sql/operations",
               Answer(200, body, {SANDBOX_HEADER: "true"}), Answer(200, body, {}))
        conn = toolkit.connect(base_url=rp.url, token="t" * 20, progress=False)
        try:
            marked = toolkit.sql_operations(connection=conn)
            real = toolkit.sql_operations(connection=conn)
        finally:
            conn.close()
    assert marked.attrs["sandbox"] is True
    assert real.attrs["sandbox"] is False and real.attrs["request_ids"] == []
