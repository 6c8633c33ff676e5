"""Buckets: a burst is served at once, then one token per 1/rate seconds, per key; the answer to
an empty bucket is the whole seconds until a token is back. The clock is a stand-in: no waiting."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from toolkit.sandbox import buckets as buckets_module
from toolkit.sandbox.buckets import Buckets


@pytest.fixture
def clock(monkeypatch):
    now = SimpleNamespace(t=1000.0)
    monkeypatch.setattr(buckets_module, "time", SimpleNamespace(monotonic=lambda: now.t))
    return now


def test_a_burst_then_retry_after_until_a_token_is_back(clock) -> None:
    b = Buckets(rate=0.5, burst=3)  # one token every 2 s
    assert [b.take("t") for _ in range(3)] == [None, None, None]
    assert b.take("t") == 2
    clock.t += 1.0  # half a token back
    assert b.take("t") == 1
    clock.t += 1.0
    assert b.take("t") is None and b.take("t") == 2


def test_keys_have_their_own_buckets(clock) -> None:
    b = Buckets(rate=1, burst=1)
    assert b.take("a") is None and b.take("a") == 1
    assert b.take("b") is None


def test_a_long_pause_refills_only_up_to_the_burst(clock) -> None:
    b = Buckets(rate=10, burst=2)
    b.take("t")
    clock.t += 3600
    assert [b.take("t") for _ in range(3)] == [None, None, 1]


def test_no_rate_never_refills(clock) -> None:
    b = Buckets(rate=0, burst=1)
    assert b.take("t") is None
    clock.t += 10_000
    assert b.take("t") == 3600


def test_configure_and_refill_start_afresh(clock) -> None:
    b = Buckets(rate=1, burst=1)
    b.take("t")
    b.refill()
    assert b.take("t") is None and b.take("t") == 1
    b.configure(burst=3)
    assert [b.take("t") for _ in range(4)] == [None, None, None, 1]
    b.configure(rate=0.25)
    assert [b.take("t") for _ in range(4)] == [None, None, None, 4]


def test_left_counts_the_whole_tokens_without_spending_one(clock) -> None:
    b = Buckets(rate=2.0, burst=4)
    assert b.left("k") == 4  # a key not seen has a full bucket
    b.take("k")
    b.take("k")
    assert b.left("k") == 2 and b.left("k") == 2
    clock.t += 0.75  # one and a half tokens back
    assert b.left("k") == 3
    clock.t += 10
    assert b.left("k") == 4  # never beyond the burst
