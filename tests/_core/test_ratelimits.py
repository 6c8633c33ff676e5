"""The resource manager's buckets of reads and writes, per subscription, against the sandbox."""

from __future__ import annotations

from typing import Any

import pytest

import toolkit
from toolkit._core.errors import (
    RateLimitError,
)
from toolkit._core.messages import Request
from toolkit._spec.arm import WRITE_BUCKET


def test_resource_manager_requests_draw_from_the_bucket_of_their_subscription(conn) -> None:
    from toolkit._spec.arm import READ_BUCKET, WRITE_BUCKET

    arm = conn.pipeline("arm")
    base = arm.base_url
    one = arm.limiter(f"{base}/subscriptions/AAA/resourceGroups/x?api-version=1")
    assert one is not None and one.burst == READ_BUCKET
    assert arm.limiter(f"{base}/subscriptions/aaa/providers/y") is one  # any case, any path
    assert arm.limiter(f"{base}/subscriptions/bbb/x") is not one
    tenant = arm.limiter(f"{base}/providers/Vendor.Management/managementGroups")
    assert tenant is not None and tenant is not one
    assert arm.limiter(f"{base}/subscriptions?api-version=1") is tenant
    write = arm.limiter(f"{base}/subscriptions/aaa/x", "PUT")
    assert write is not None and write is not one and write.burst == WRITE_BUCKET
    # a POST (a query or an action) is a write, as the service counts it
    assert arm.limiter(f"{base}/subscriptions/aaa/x/queryResults", "POST") is write
    assert arm.limiter(f"{base}/subscriptions/aaa/x", "HEAD") is one
    assert conn.pipeline("maps").limiter(f"{conn.pipeline('maps').base_url}/x") is None


def _learning(monkeypatch, *, count: bool) -> tuple[list[int], list[float]]:
    """Another client of the caller leaves one read in the service's bucket (which refills only
    while this connection waits); this connection, its own bucket full, then reads three times:
    the statuses the service answered, and the waits the connection asked for."""
    from toolkit._core import ratelimits
    from toolkit.sandbox.arm.common import limits
    from toolkit.sandbox.server import Sandbox

    if not count:
        monkeypatch.setattr(ratelimits, "_remaining", lambda value: None)
    with Sandbox(seed=7, arm_limits=True) as sb:
        reads = limits(sb)["reads"]
        reads.configure(rate=0.0, burst=3)
        other = toolkit.connect(sandbox=sb, progress=False, max_retries=0)
        ours = toolkit.connect(sandbox=sb, progress=False, max_retries=0)
        waits: list[float] = []

        def wait(seconds: float) -> None:  # the service's bucket refills meanwhile
            waits.append(seconds)
            reads.refill()

        ours.sleep = wait
        path = f"/subscriptions/{sb.world.subscriptions[0].id}/resourcegroups"
        params = {"api-version": "2022-09-01"}
        try:
            for _ in range(2):
                other.pipeline("arm").send(Request("GET", path, params=params))
            sb.log.clear()
            for _ in range(3):
                try:
                    ours.pipeline("arm").send(Request("GET", path, params=params))
                except RateLimitError:
                    break
        finally:
            other.close()
            ours.close()
        return [r.status for r in sb.log], waits


def test_a_connection_learns_from_the_services_count_what_others_used(monkeypatch) -> None:
    # the first answer says the bucket is empty, so the connection waits for the refill before
    # its next read instead of being refused, though its own bucket (of the documented size)
    # still held plenty
    statuses, waits = _learning(monkeypatch, count=True)
    assert statuses == [200, 200, 200] and len(waits) >= 1
    # without the count the next read goes at once, and the service refuses it
    statuses, waits = _learning(monkeypatch, count=False)
    assert statuses == [200, 429] and waits == []


def test_a_service_with_room_to_spare_is_not_held_to_the_documented_bucket(
        conn, sandbox, waits) -> None:
    # the sandbox, not enforcing limits, says every time that the bucket is full: past the
    # documented bucket of reads the connection does not wait
    sub = sandbox.world.subscriptions[0]
    arm = conn.pipeline("arm")
    bucket = arm.limiter(f"{arm.base_url}/subscriptions/{sub.id}")
    assert bucket is not None and bucket.follows_service
    for _ in range(bucket.burst):  # the documented bucket, used up by others of this caller
        bucket.acquire()
    for _ in range(5):
        toolkit.resource_groups(sub.id, connection=conn)
    assert len(waits) == 1  # the first request only, before any answer


def _posts_after_writes_used_up(sandbox, conn, waits, monkeypatch, *, header: bool
                                ) -> tuple[list[int], list[float], Any, Any]:
    """The service counts POST queries as reads (the sandbox made to); the connection's bucket
    of writes is used up by others of the caller: five POST queries, their statuses, the waits,
    and the connection's buckets for POSTs and for GETs afterwards."""
    from toolkit._core import ratelimits

    if not header:
        monkeypatch.setattr(ratelimits, "_remaining", lambda value: None)
    monkeypatch.setattr(sandbox, "arm_read_methods", frozenset({"GET", "HEAD", "POST"}))
    sub = sandbox.world.subscriptions[0]
    arm = conn.pipeline("arm")
    path = (f"/subscriptions/{sub.id}/providers/{sandbox.namespace}.PolicyInsights/"
            "policyStates/latest/queryResults")
    writes = arm.limiter(arm.url(path), "POST")
    assert writes is not None and writes.burst == WRITE_BUCKET
    for _ in range(writes.burst):
        writes.acquire()
    with sandbox.recording() as log:
        for _ in range(5):
            arm.send(Request("POST", path, params={"api-version": "2024-10-01", "$top": 1}))
    return ([r.status for r in log], list(waits), arm.limiter(arm.url(path), "POST"),
            arm.limiter(arm.url(path), "GET"))


def test_a_method_the_service_counts_otherwise_follows_its_header(
        sandbox, conn, waits, monkeypatch) -> None:
    # the first POST waits for a write token; its answer names the bucket of reads, which has
    # room: the other four go at once, counted where the service counts them
    statuses, waited, posts, reads = _posts_after_writes_used_up(sandbox, conn, waits,
                                                                monkeypatch, header=True)
    assert statuses == [200] * 5 and len(waited) == 1
    assert posts is reads


def test_without_the_header_a_post_waits_for_the_bucket_of_writes(
        sandbox, conn, waits, monkeypatch) -> None:
    statuses, waited, posts, reads = _posts_after_writes_used_up(sandbox, conn, waits,
                                                                monkeypatch, header=False)
    assert statuses == [200] * 5 and len(waited) >= 5
    assert posts is not reads and posts.burst == WRITE_BUCKET


@pytest.mark.xdist_group("real-time")  # measures real time: see tests/conftest.py
def test_every_resource_manager_request_takes_a_token(conn, sandbox, waits) -> None:
    sub = sandbox.world.subscriptions[0]
    arm = conn.pipeline("arm")
    arm.limiter(f"{arm.base_url}/subscriptions/{sub.id}").configure(4.0, 1)
    import time

    began = time.monotonic()
    for _ in range(3):
        toolkit.resource_groups(sub.id, connection=conn)
    elapsed = time.monotonic() - began  # the bucket refills with real time as well
    # three starts at 4 a second from a bucket of one: two waits of about a quarter second
    assert len(waits) >= 2 and sum(waits) + elapsed >= 0.5 - 1e-9


def test_a_request_is_counted_by_its_method_in_its_subscription_or_the_tenant() -> None:
    from toolkit._core.ratelimits import _arm_bucket, _remaining

    assert _arm_bucket("https://h/subscriptions/AbC/resourceGroups/x", "get") == (False, "abc")
    assert _arm_bucket("https://h/subscriptions/abc/x/queryResults", "POST") == (True, "abc")
    assert _arm_bucket("https://h/subscriptions?api-version=1", "HEAD") == (False, "tenant")
    assert _arm_bucket("https://h/providers/Vendor.Management/x", "PUT") == (True, "tenant")
    assert [_remaining(v) for v in (None, " 12 ", "-1", "1e3", "9" * 12)] == \
        [None, 12, None, None, None]
