"""The sandbox's network model (bounded, paced by bandwidth) and its gzip answers."""

from __future__ import annotations

import gzip

import pandas as pd
import pytest
import requests

import toolkit
from toolkit.sandbox.network import NetworkModel
from toolkit.sandbox.server import Sandbox

END = pd.Timestamp("2026-11-20T09:00:00Z")


@pytest.mark.parametrize("kw", [{"rtt_ms": -1}, {"rtt_ms": 2001}, {"mbit_per_s": 0.5},
                                {"service_ms": 5001}, {"mbit_per_s": float("nan")}])
def test_the_model_is_bounded(kw) -> None:
    with pytest.raises(ValueError):
        NetworkModel(**kw)


def test_bytes_go_out_no_faster_than_the_bandwidth() -> None:
    now = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    written: list[int] = []
    model = NetworkModel(rtt_ms=50, mbit_per_s=8, service_ms=5)  # 1 MB/s
    model.send(lambda b: written.append(len(b)), b"x" * 1_000_000, sleep=sleep,
               clock=lambda: now[0])
    assert sum(written) == 1_000_000 and max(written) <= 64 * 1024
    assert now[0] == pytest.approx(1.0)
    model.before_answer(sleep)
    model.connected(sleep)
    assert slept[-2:] == [pytest.approx(0.055), pytest.approx(0.05)]


def test_answers_are_gzipped_for_a_client_that_accepts_it(sandbox) -> None:
    pw = sandbox.world.section("policy")
    sub_id, rg = next(iter(pw.by_group))
    url = (f"{sandbox.url}/subscriptions/{sub_id}/resourceGroups/{rg}/providers/"
           f"Vendor.PolicyInsights/policyStates/latest/queryResults?api-version=2024-10-01")
    auth = {"Authorization": f"Bearer {sandbox.token('arm')}"}
    plain = requests.post(url, headers={**auth, "Accept-Encoding": "identity"}, timeout=60)
    packed = requests.post(url, headers={**auth, "Accept-Encoding": "gzip"}, stream=True,
                           timeout=60)
    raw = packed.raw.read(decode_content=False)
    assert "Content-Encoding" not in plain.headers
    assert packed.headers["Content-Encoding"] == "gzip"
    assert int(packed.headers["Content-Length"]) == len(raw) < len(plain.content) / 5
    assert gzip.decompress(raw) == plain.content
    refused = requests.post(url, headers={**auth, "Accept-Encoding": "gzip;q=0"}, timeout=60)
    assert "Content-Encoding" not in refused.headers


def test_frames_are_the_same_with_and_without_compression_and_the_model() -> None:
    frames, sent = [], []
    for kw in ({"compress": False}, {"compress": True},
               {"network": NetworkModel(rtt_ms=5, mbit_per_s=400, service_ms=1)}):
        with Sandbox(seed=7, **kw) as sb:
            pw = sb.world.section("policy")
            sub_id, rg = next(iter(pw.by_group))
            conn = toolkit.connect(sandbox=sb, progress=False)
            try:
                frames.append(toolkit.policy_states(sub_id, rg, resource="default",
                                                    start=END - pd.Timedelta(days=2), end=END,
                                                    connection=conn))
            finally:
                conn.close()
            sent.append(sb.bytes_sent)
    pd.testing.assert_frame_equal(frames[0], frames[1])
    pd.testing.assert_frame_equal(frames[0], frames[2])
    assert sent[1] < sent[0] / 5


def test_connections_share_the_link() -> None:
    now = [0.0]

    def sleep(s: float) -> None:
        now[0] += s

    model = NetworkModel(mbit_per_s=80, link_mbit_per_s=8)  # the link is the narrower
    for _ in range(3):  # three bodies, as if from three connections one after another
        model.send(lambda b: None, b"x" * 500_000, sleep=sleep, clock=lambda: now[0])
    assert now[0] == pytest.approx(1.5)
    with pytest.raises(ValueError):
        NetworkModel(link_mbit_per_s=0)
