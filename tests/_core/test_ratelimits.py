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
        monkeypatch.setattr(ratelimits, "header_count", lambda value: None)
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
        monkeypatch.setattr(ratelimits, "header_count", lambda value: None)
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
    from toolkit._core.ratelimits import _arm_bucket, header_count

    assert _arm_bucket("https://h/subscriptions/AbC/resourceGroups/x", "get") == (False, "abc")
    assert _arm_bucket("https://h/subscriptions/abc/x/queryResults", "POST") == (True, "abc")
    assert _arm_bucket("https://h/subscriptions?api-version=1", "HEAD") == (False, "tenant")
    assert _arm_bucket("https://h/providers/Vendor.Management/x", "PUT") == (True, "tenant")
    assert [header_count(v) for v in (None, " 12 ", "-1", "1e3", "9" * 12)] == \
        [None, 12, None, None, None]


# ------------------------------------------------------------------ a provider's own quota
def test_a_provider_request_draws_on_the_providers_quota_too() -> None:
    from toolkit._core.ratelimits import provider_quota

    base = "https://management.azure.com"
    for path in ("/subscriptions/s/providers/Microsoft.PolicyInsights/policyStates/latest/"
                 "queryResults", "/providers/Microsoft.Management/managementGroups/g/providers/"
                 "microsoft.policyinsights/policyStates/latest/summarize",
                 "/subscriptions/s/providers/Vendor.PolicyInsights/policyEvents/default/x"):
        assert provider_quota(base + path) == "policy-insights"
    for path in ("/subscriptions/s/providers/Microsoft.Sql/servers", "/policyinsights/x",
                 "/subscriptions/s/resourceGroups/policyinsights/providers/Microsoft.Sql/x"):
        assert provider_quota(base + path) is None


def test_both_forms_of_the_quotas_count_are_read() -> None:
    from azure.core.utils import case_insensitive_dict

    from toolkit._core.ratelimits import quotas_left

    # the recorded answers of 2021-2022 name no scope; later ones name the subscription
    for name in ("x-ms-ratelimit-remaining-policy-insights-requests",
                 "X-MS-RateLimit-Remaining-Subscription-Policy-Insights-Requests",
                 "x-ms-ratelimit-remaining-tenant-policy-insights-requests"):
        assert quotas_left(case_insensitive_dict({name: "147"}), "x-ms-") == \
            {"policy-insights": 147}
    assert quotas_left(case_insensitive_dict({"x-ms-ratelimit-remaining-subscription-reads":
                                              "249"}), "x-ms-") == {}
    assert quotas_left(case_insensitive_dict(
        {"x-ms-ratelimit-remaining-policy-insights-requests": "lots"}), "x-ms-") == {}


def test_a_refusal_halves_the_bucket_that_refused() -> None:
    from toolkit._core.concurrency import RateLimiter
    from toolkit._core.ratelimits import BucketPair

    quota, arm = RateLimiter(1.0, 150), RateLimiter(10.0, 200)
    pair = BucketPair(quota, arm, name="policy-insights", header_prefix="x-ms-")
    assert pair.refusing({"x-ms-ratelimit-remaining-policy-insights-requests": "0",
                          "x-ms-ratelimit-remaining-subscription-writes": "12"}) is quota
    assert pair.refusing({"x-ms-ratelimit-remaining-policy-insights-requests": "3",
                          "x-ms-ratelimit-remaining-subscription-writes": "0"}) is arm
    # the resource manager's own refusals name themselves; any other is the provider's
    assert pair.refusing({}, b'{"error":{"code":"SubscriptionRequestsThrottled"}}') is arm
    assert pair.refusing({}, b'{"error": {"code": "TenantRequestsThrottled"}}') is arm
    assert pair.refusing({}, b'{"error":{"code":"TooManyRequests"}}') is quota
    assert pair.refusing({}) is quota
    pair.throttled(2.0)
    assert quota.rate == 0.5 and arm.rate == 5.0


def _quota_held(monkeypatch: Any, *, count: bool) -> tuple[list[int], dict[str, float]]:
    """Another client of the caller leaves one request in the provider's quota (which refills
    only while this connection waits); the resource manager's buckets are full. This connection
    then sends three policy queries: the statuses, what it waited for each budget, and the
    frame of a policy read afterwards."""
    from toolkit._core import ratelimits
    from toolkit.sandbox.arm.common import limits
    from toolkit.sandbox.server import Sandbox

    if not count:
        monkeypatch.setattr(ratelimits, "quotas_left", lambda headers, prefix: {})
    with Sandbox(seed=7, arm_limits=True, provider_limits=True) as sb:
        quota = limits(sb)["policy-insights"]
        quota.configure(rate=0.0, burst=3)
        other = toolkit.connect(sandbox=sb, progress=False, max_retries=0)
        ours = toolkit.connect(sandbox=sb, progress=False, max_retries=0)
        ours.sleep = lambda seconds: quota.refill()  # the provider's bucket refills meanwhile
        sub = sb.world.subscriptions[0]
        path = (f"/subscriptions/{sub.id}/providers/{sb.namespace}.PolicyInsights/"
                "policyStates/latest/queryResults")
        params = {"api-version": "2024-10-01", "$top": 1}
        try:
            for _ in range(2):
                other.pipeline("arm").send(Request("POST", path, params=params))
            sb.log.clear()
            for _ in range(3):
                try:
                    ours.pipeline("arm").send(Request("POST", path, params=params))
                except RateLimitError:
                    break
            statuses = [r.status for r in sb.log]
            waited = ours.pipeline("arm")._arm.waited()
        finally:
            other.close()
            ours.close()
    return statuses, waited


def test_a_connection_paces_on_the_providers_count_where_the_managers_has_room(
        monkeypatch) -> None:
    # the provider's answer says one request is left: the connection waits for its refill
    # before the third, though the resource manager's bucket of writes holds 200
    statuses, waited = _quota_held(monkeypatch, count=True)
    assert statuses == [200, 200, 200]
    assert waited.get("policy-insights", 0) > 0 and waited.get("writes", 0) == 0
    # without the count the next query goes at once, and the provider refuses it
    statuses, waited = _quota_held(monkeypatch, count=False)
    assert statuses == [200, 429] and waited.get("policy-insights", 0) == 0


def test_a_policy_read_shows_what_the_providers_quota_has_left(conn, sandbox,
                                                               monkeypatch) -> None:
    import toolkit._core.progress as progress
    from toolkit._spec.arm import POLICY_INSIGHTS_BUCKET

    pw = sandbox.world.section("policy")
    sub_id, rg = next(iter(pw.by_group))
    group = (sub_id, next(g.name for g in sandbox.world.subscription(sub_id).resource_groups
                          if g.name.lower() == rg))

    notes: list[str] = []

    class Bar:
        def __init__(self, **kw: Any) -> None:
            pass

        def update(self, n: int = 1) -> None:
            pass

        def set_postfix_str(self, text: str, refresh: bool = True) -> None:
            notes.append(text)

        def close(self) -> None:
            pass

    monkeypatch.setattr(progress, "bar_kind", lambda: "terminal")
    monkeypatch.setattr(progress, "_tqdm_class", lambda kind: Bar)
    shown = toolkit.connect(sandbox=sandbox, progress=True, progress_min=1)
    try:
        df = toolkit.policy_states(*group, resource="default", connection=shown)
    finally:
        shown.close()
    # the sandbox, not enforcing the quota, says a full bucket less each request
    assert df.attrs["quota_left"] == {"policy-insights": POLICY_INSIGHTS_BUCKET - 1}
    assert notes and notes[-1] == f"policy-insights quota: {POLICY_INSIGHTS_BUCKET - 1} left"
    # a read of another provider says nothing of it
    assert "quota_left" not in toolkit.sql_operations(connection=conn).attrs
