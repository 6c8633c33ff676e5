"""The real Fabric service creating an eventstream (the Fabric CLI's recording, 2026), replayed
through ``create_eventstream``: the 202 names a cluster redirect host in ``Location``, which the
toolkit follows at the configured endpoint; the poll, its ``Retry-After``, the result and the ids
are read as recorded, and no request goes anywhere the recording does not."""

from __future__ import annotations

import pandas as pd
import pytest

import toolkit
from tests.recordings.cassette import load, replaying

RECORDING = "fabric-cli/create_eventstream.yaml"
TOKEN = "recorded-traffic-token-0123456789"


@pytest.fixture
def recorded():
    post, state, result = load(RECORDING)
    return post, state, result


def test_the_real_creation_is_followed_past_the_redirect_host(recorded, waits) -> None:
    post, state, result = recorded
    workspace = post.path.split("/")[3]
    assert "redirect.analysis.windows.net" in (post.header("Location") or "")
    with replaying(RECORDING) as replay:
        conn = toolkit.connect(fabric_url=replay.url, cloud="public", token=TOKEN,
                               progress=False)
        conn.sleep = waits
        try:
            df = toolkit.create_eventstream(workspace, post.body["displayName"],
                                            connection=conn)
        finally:
            conn.close()
    assert replay.unmatched == [] and replay.left == []
    # the poll and the result were asked at the configured endpoint, on the recorded paths
    assert [path for _, path in replay.seen] == [post.path, state.path, result.path]
    item = result.json()
    assert len(df) == 1
    assert df["id"].tolist() == [item["id"]] and df["type"].tolist() == [item["type"]]
    assert df["displayName"].tolist() == [item["displayName"]]
    assert df["workspaceId"].tolist() == [item["workspaceId"]] == [workspace]
    assert df["operation_id"].tolist() == [post.header("x-ms-operation-id")]
    assert pd.isna(df["description"].iloc[0])  # the recorded item has none
    assert waits == [float(post.header("Retry-After"))]  # the service's 20 s, sat out once
    assert df.attrs["request_ids"] == [result.header("RequestId")]
    assert df.attrs["sandbox"] is False


def test_the_recorded_creation_resumes_from_its_token_without_a_second_post(recorded,
                                                                           waits) -> None:
    post, _, result = recorded
    workspace = post.path.split("/")[3]
    with replaying(RECORDING) as replay:
        conn = toolkit.connect(fabric_url=replay.url, cloud="public", token=TOKEN,
                               progress=False)
        conn.sleep = waits
        try:
            op = toolkit.create_eventstream(workspace, post.body["displayName"], wait=False,
                                            connection=conn)
            token = op.continuation_token
            df = toolkit.resume_operation(token, connection=conn)
        finally:
            conn.close()
    assert replay.unmatched == [] and replay.left == []
    assert [m for m, _ in replay.seen].count("POST") == 1
    assert df["id"].tolist() == [result.json()["id"]]
