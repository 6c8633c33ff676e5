"""The planner of policy-states time slices: slices of about the same number of records, found
in few rounds of counts, covering the window whatever the counts say."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import toolkit
from toolkit.arm import slices

END = pd.Timestamp("2026-11-20T09:00:00Z")


def test_the_filter_of_a_slice_joins_the_users() -> None:
    lo, hi = pd.Timestamp("2026-11-01T00:00:00Z"), pd.Timestamp("2026-11-02T00:00:00Z")
    assert slices.slice_filter(None, lo, hi) == \
        "timestamp ge 2026-11-01T00:00:00Z and timestamp lt 2026-11-02T00:00:00Z"
    assert slices.slice_filter("x eq 1", None, hi) == \
        "(x eq 1) and (timestamp lt 2026-11-02T00:00:00Z)"


def test_only_a_time_order_can_be_kept_by_slices() -> None:
    assert slices.time_order(None) is True
    assert slices.time_order("timestamp asc, resourceId") is False
    assert slices.time_order("timestamp desc") is True
    assert slices.time_order("resourceId asc") is None


def test_cuts_fall_on_whole_seconds_inside_the_part() -> None:
    lo = pd.Timestamp("2026-11-01T00:00:00Z")
    cuts = slices.cut_seconds(lo, lo + pd.Timedelta(seconds=10), 4)
    assert cuts == sorted(cuts) and all(c == c.floor("s") and lo < c for c in cuts)
    assert len(cuts) == 3
    assert slices.cut_seconds(lo, lo + pd.Timedelta(seconds=1), 4) == []


def test_slices_hold_about_the_same_number_of_records(sandbox, group, monkeypatch) -> None:
    # the longest chain sets the read's time: no slice holds much more than its share, though
    # the records come in bursts (evaluations of many resources at one time)
    monkeypatch.setattr(slices, "PARTITION_MIN_PAGES", 1)
    sub, rg = group
    start = END - pd.Timedelta(days=60)
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    try:
        whole = toolkit.policy_states(sub, rg, resource="default", start=start, end=END,
                                      partitions=1, connection=conn)
        pipe = conn.pipeline("arm")
        path = (f"/subscriptions/{sub}/resourceGroups/{rg}/providers/"
                f"{sandbox.namespace}.PolicyInsights/policyStates/default/queryResults")
        params = {"api-version": "2024-10-01", "$from": start.isoformat(),
                  "$to": END.isoformat()}
        bounds = slices.time_slices(pipe, path, params, None, start, END, 8)
    finally:
        conn.close()
    seconds = (whole["timestamp"] - pd.Timestamp(0, tz="UTC")).dt.total_seconds().to_numpy()
    counts = _held(seconds, bounds)
    assert len(bounds) == 8 and sum(counts) == len(whole)
    assert max(counts) <= 1.2 * len(whole) / len(bounds), counts


class _Counter:
    """``count_all`` over known timestamps (epoch seconds): the records in each ``[lo, hi)``;
    remembers each call (one call is one round of requests sent at once)."""

    def __init__(self, seconds: np.ndarray) -> None:
        self.ts = np.sort(seconds)
        self.rounds: list[int] = []

    def __call__(self, asked):
        self.rounds.append(len(asked))
        lo = np.searchsorted(self.ts, [a[0].timestamp() for a in asked])
        hi = np.searchsorted(self.ts, [a[1].timestamp() for a in asked])
        return (hi - lo).tolist()


PLAN_START, PLAN_END = pd.Timestamp("2026-09-20T09:00:00Z"), pd.Timestamp("2026-11-21T00:00:00Z")


def _spread(kind: str) -> np.ndarray:
    rng = np.random.default_rng(7)
    lo, hi = PLAN_START.timestamp(), PLAN_END.timestamp()
    if kind == "even":
        return rng.uniform(lo, hi, 236_000).astype(np.int64)
    # daily evaluation runs at 09:00 lasting minutes, more resources in the last weeks
    days = np.arange(lo, hi, 86_400)
    sizes = np.linspace(1_000, 8_000, len(days)).astype(int)
    return np.concatenate([d + rng.exponential(600, n).astype(np.int64)
                           for d, n in zip(days, sizes, strict=True)])


def _held(ts: np.ndarray, bounds) -> list[int]:
    out = []
    for lo, hi in bounds:
        inside = np.ones(len(ts), bool)
        if lo is not None:
            inside &= ts >= lo.timestamp()
        if hi is not None:
            inside &= ts < hi.timestamp()
        out.append(int(inside.sum()))
    return out


def _contiguous(bounds) -> bool:
    return (bounds[0][0] is None and bounds[-1][1] is None
            and all(a[1] == b[0] for a, b in itertools.pairwise(bounds)))


@pytest.mark.parametrize("kind", ["even", "bursts"])
def test_slices_are_planned_in_few_rounds_of_counts(kind) -> None:
    # each round of counts is a round trip to the service (an aggregate query, often slow):
    # evenly spread records take one round, daily bursts a few; the slices stay even (within a
    # tenth of a share for even records, a fifth between bursts a day apart)
    ts = _spread(kind)
    count = _Counter(ts)
    bounds = slices.plan_slices(count, PLAN_START, PLAN_END, len(ts), 8)
    held = _held(ts, bounds)
    assert len(bounds) == 8 and _contiguous(bounds) and sum(held) == len(ts)
    assert max(held) <= (1.1 if kind == "even" else 1.2) * len(ts) / 8, held
    assert len(count.rounds) <= (1 if kind == "even" else 3), count.rounds
    assert sum(count.rounds) <= 64, count.rounds  # requests, within the read budget


@pytest.mark.parametrize("kind", ["even", "bursts"])
def test_more_slices_than_counted_shares_cost_no_more_counts(kind) -> None:
    # 16 chains read at once keep a fast link busy to the end; their slices are placed inside
    # the parts counted for 8, as evenly as counting for 16 would place them
    ts = _spread(kind)
    eight, sixteen, counted16 = _Counter(ts), _Counter(ts), _Counter(ts)
    slices.plan_slices(eight, PLAN_START, PLAN_END, len(ts), 8)
    bounds = slices.plan_slices(sixteen, PLAN_START, PLAN_END, len(ts), 16, counted=8)
    fully = slices.plan_slices(counted16, PLAN_START, PLAN_END, len(ts), 16)
    held = _held(ts, bounds)
    assert len(bounds) == 16 and _contiguous(bounds) and sum(held) == len(ts)
    assert sixteen.rounds == eight.rounds and sum(counted16.rounds) > sum(eight.rounds)
    assert max(held) <= max(_held(ts, fully)) * 1.01, (held, _held(ts, fully))
    assert max(held) <= (1.1 if kind == "even" else 1.3) * len(ts) / 16, held


def test_a_burst_in_one_second_stays_whole_and_the_plan_ends() -> None:
    ts = np.concatenate([np.full(100_000, int(PLAN_END.timestamp()) - 3_600),
                         _spread("even")[:20_000]])
    count = _Counter(ts)
    bounds = slices.plan_slices(count, PLAN_START, PLAN_END, len(ts), 8)
    held = _held(ts, bounds)
    assert _contiguous(bounds) and sum(held) == len(ts) and max(held) >= 100_000
    assert len(count.rounds) <= slices.PARTITION_ROUNDS


@pytest.mark.parametrize("answer", [lambda n: [-5] * n, lambda n: [10**9] * n,
                                    lambda n: list(range(n, 0, -1))])
def test_counts_that_make_no_sense_still_give_slices_that_cover_the_window(answer) -> None:
    calls = []

    def count_all(asked):
        calls.append(len(asked))
        return answer(len(asked))

    bounds = slices.plan_slices(count_all, PLAN_START, PLAN_END, 236_000, 8)
    assert _contiguous(bounds) and len(bounds) <= 8
    assert len(calls) <= slices.PARTITION_ROUNDS and sum(calls) <= 8 * 64
