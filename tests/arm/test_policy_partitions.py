"""policy_states read as concurrent time slices gives the frame of one chain: same rows, same
order, same dtypes, at every scope, with and without filter, orderby, select, for latest and
default, under injected throttling and server errors (nothing lost, nothing twice)."""

from __future__ import annotations

from urllib.parse import unquote

import pandas as pd
import pytest

import toolkit
from toolkit.arm import policy

END = pd.Timestamp("2026-11-20T09:00:00Z")


@pytest.fixture(scope="module")
def group(sandbox):
    """The resource group with the longest history, and its subscription."""
    world = sandbox.world
    pw = world.section("policy")
    sub_id, rg = max(pw.by_group, key=lambda k: len(pw.records(*k).ts))
    sub = world.subscription(sub_id)
    name = next(g.name for g in sub.resource_groups if g.name.lower() == rg)
    return sub.id, name


def _slices(log) -> set[str]:
    """The distinct time-slice filters of the chains in a request log."""
    out = set()
    for r in log:
        query = unquote(r.query)
        if ("timestamp ge" in query or "timestamp lt" in query) and "aggregate(" not in query:
            out.add(query.split("$filter=")[1].split("&")[0])
    return out


def _pair(sandbox, group, **kw):
    sub, rg = group
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    conn.sleep = lambda s: None
    try:
        one = toolkit.policy_states(sub, rg, partitions=1, connection=conn, **kw)
        with sandbox.recording() as log:
            many = toolkit.policy_states(sub, rg, partitions=6, connection=conn, **kw)
    finally:
        conn.close()
    return one, many, log


CASES = [
    pytest.param({"resource": "default", "start": END - pd.Timedelta(days=10)}, id="default"),
    pytest.param({"resource": "default", "start": END - pd.Timedelta(days=40),
                  "filter": "complianceState eq 'NonCompliant' or resourceType eq "
                            "'/Vendor.KeyVault/vaults'"}, id="default-filter"),
    pytest.param({"resource": "default", "start": END - pd.Timedelta(days=10),
                  "orderby": "timestamp asc"}, id="default-orderby-asc"),
    pytest.param({"resource": "default", "start": END - pd.Timedelta(days=10),
                  "orderby": ["timestamp desc", "resourceId asc"],
                  "select": ["timestamp", "resourceId", "complianceState",
                             "policyDefinitionGroupNames", "isCompliant"]},
                 id="default-orderby-select"),
    pytest.param({"resource": "default", "start": END - pd.Timedelta(days=10),
                  "filter": "timestamp ge 2026-11-13T00:00:00Z"}, id="default-filter-time"),
]


@pytest.mark.parametrize("kw", CASES)
def test_slices_give_the_frame_of_one_chain(sandbox, group, kw, monkeypatch) -> None:
    monkeypatch.setattr(policy, "PARTITION_MIN_PAGES", 1)  # the latest sets are a few pages
    one, many, log = _pair(sandbox, group, end=END, **kw)
    assert len(_slices(log)) >= 2, "read as one chain"
    assert len(one) > 2500
    pd.testing.assert_frame_equal(many, one)
    assert not many.attrs["truncated"]
    assert len(many.attrs["request_ids"]) == len(set(many.attrs["request_ids"]))


def test_an_order_slices_cannot_keep_reads_one_chain(sandbox, group) -> None:
    one, many, log = _pair(sandbox, group, resource="default", orderby="resourceId asc",
                           start=END - pd.Timedelta(days=10), end=END)
    assert not _slices(log)
    pd.testing.assert_frame_equal(many, one)


@pytest.mark.parametrize("kw", [
    pytest.param({"top": 5_000}, id="top"),
    pytest.param({"max_items": 5_000}, id="max_items"),
    pytest.param({"end": None}, id="open-window"),
])
def test_slices_are_off_where_they_cannot_help(sandbox, group, kw) -> None:
    args = {"resource": "default", "start": END - pd.Timedelta(days=10), "end": END, **kw}
    with pytest.warns(toolkit.TruncatedResultWarning) if "max_items" in kw else _nothing():
        _, _, log = _pair(sandbox, group, **args)
    assert not _slices(log)
    assert not any("aggregate(" in unquote(r.query) for r in log)


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def test_slices_under_faults_lose_and_repeat_nothing(sandbox, group, monkeypatch) -> None:
    monkeypatch.setattr(policy, "PARTITION_MIN_PAGES", 1)
    kw = {"resource": "default", "start": END - pd.Timedelta(days=10), "end": END}
    sandbox.clear_faults()
    sub, rg = group
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    conn.sleep = lambda s: None
    try:
        one = toolkit.policy_states(sub, rg, partitions=1, connection=conn, **kw)
        sandbox.inject("429", path="policyStates", rate=0.2, count=8, retry_after=0)
        sandbox.inject("503", path="policyStates", rate=0.2, count=8, retry_after=0)
        with sandbox.recording() as log:
            many = toolkit.policy_states(sub, rg, partitions=6, connection=conn, **kw)
    finally:
        sandbox.clear_faults()
        conn.close()
    assert {r.status for r in log} >= {200, 429, 503}
    assert len(_slices(log)) >= 2
    pd.testing.assert_frame_equal(many, one)


def test_slices_are_bounded_by_the_setting(sandbox, group, monkeypatch) -> None:
    monkeypatch.setattr(policy, "PARTITION_MIN_PAGES", 1)
    sub, rg = group
    conn = toolkit.connect(sandbox=sandbox, progress=False, max_partitions=3)
    try:
        with sandbox.recording() as log:
            toolkit.policy_states(sub, rg, resource="default", start=END - pd.Timedelta(days=10),
                                  end=END, connection=conn)
    finally:
        conn.close()
    assert 2 <= len(_slices(log)) <= 3
    with pytest.raises(toolkit.ValidationError, match="partitions"):
        toolkit.policy_states(sub, rg, partitions=0, connection=conn)


def test_latest_in_slices_gives_the_frame_of_one_chain(monkeypatch) -> None:
    from toolkit.sandbox.arm.policy.world import SCALE_ENV
    from toolkit.sandbox.server import Sandbox

    # the newest record per (resource, policy) pair: a few pages in a world six times larger
    monkeypatch.setenv(SCALE_ENV, "6")
    monkeypatch.setattr(policy, "PARTITION_MIN_PAGES", 1)
    with Sandbox(seed=7) as sb:  # its world reads the scale
        pw = sb.world.section("policy")
        sub_id, rg = next(iter(pw.by_group))
        sub = sb.world.subscription(sub_id)
        name = next(g.name for g in sub.resource_groups if g.name.lower() == rg)
        for kw in ({}, {"filter": "complianceState ne 'Compliant'"},
                   {"orderby": "timestamp asc", "select": "timestamp,resourceId"}):
            one, many, log = _pair(sb, (sub.id, name), resource="latest",
                                   start=END - pd.Timedelta(days=60), end=END, **kw)
            assert len(_slices(log)) >= 2 and len(one) > 2000, kw
            pd.testing.assert_frame_equal(many, one)
