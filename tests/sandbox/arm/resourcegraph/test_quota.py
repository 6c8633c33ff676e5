"""The sandbox's user quota: queries per caller per fixed window, what is left said with every
answer, 429 with Retry-After past it; a window never drawn down when limits are off."""

from __future__ import annotations

import time
from typing import Any

import pytest

from toolkit.sandbox.arm.resourcegraph.quota import UserQuota, _span


def test_a_window_counts_its_queries_then_refuses() -> None:
    quota = UserQuota(limit=3, window=60.0)
    assert [quota.spend("a")[0] for _ in range(3)] == [2, 1, 0]
    left, resets, ok = quota.spend("a")
    assert (left, ok) == (0, False) and 0 < resets <= 60.0
    assert quota.spend("b")[2] is True  # each caller has its own window


def test_a_window_starts_again_when_it_is_over() -> None:
    quota = UserQuota(limit=1, window=0.05)
    assert quota.spend("a")[2] is True
    assert quota.spend("a")[2] is False
    time.sleep(0.06)
    assert quota.spend("a")[2] is True


@pytest.mark.parametrize(("seconds", "text"), [(0, "00:00:00"), (0.2, "00:00:01"),
                                                (4.0, "00:00:04"), (4.01, "00:00:05"),
                                                (3725, "01:02:05")])
def test_the_reset_time_is_rounded_up_to_the_second(seconds: float, text: str) -> None:
    assert _span(seconds) == text


def test_configure_starts_every_window_again() -> None:
    quota = UserQuota(limit=1, window=60.0)
    quota.spend("a")
    quota.configure(limit=2)
    assert quota.spend("a") [:1] == (1,) and quota.limit == 2


def test_the_headers_of_an_unthrottled_sandbox_say_a_full_window(sandbox: Any) -> None:
    import requests

    r = requests.post(f"{sandbox.url}/providers/Vendor.ResourceGraph/resources",
                      params={"api-version": "2024-04-01"}, timeout=30,
                      headers={"Authorization": "Bearer " + sandbox.token("arm")},
                      json={"query": "resources | project id | take 1"})
    assert r.status_code == 200
    assert r.headers["x-vendor-user-quota-remaining"] == "14"
    assert r.headers["x-vendor-user-quota-resets-after"] == "00:00:05"
