"""FaultPlan, FaultRule and the fault header: which requests a rule hits (method, path, skip,
count, seeded rate), at most one status fault per request beside latency, the counts kept."""

from __future__ import annotations

import pytest

from toolkit.sandbox.faults import (
    FAULT_KINDS,
    FaultPlan,
    FaultRule,
    fault_error,
    parse_fault_header,
)


def _kinds(plan: FaultPlan, method: str = "GET", target: str = "/a?x=1") -> list[str]:
    return [r.kind for r in plan.draw(method, target)]


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="fault kind must be one of"):
        FaultRule("418")


def test_method_and_path_select_the_requests() -> None:
    plan = FaultPlan()
    plan.add(FaultRule("503", method="post", path=r"skiptoken"))
    assert _kinds(plan, "GET", "/p?$skiptoken=2") == []
    assert _kinds(plan, "POST", "/p") == []
    assert _kinds(plan, "POST", "/p?$skiptoken=2") == ["503"]


def test_skip_then_count_then_spent() -> None:
    plan = FaultPlan()
    rule = plan.add(FaultRule("500", skip=2, count=2))
    assert [_kinds(plan) for _ in range(6)] == [[], [], ["500"], ["500"], [], []]
    assert rule.spent and rule.fired == 2 and plan.injected == {"500": 2}


def test_one_status_fault_per_request_and_latency_beside_it() -> None:
    plan = FaultPlan()
    plan.add(FaultRule("latency", latency_ms=50))
    plan.add(FaultRule("429", retry_after=2))
    plan.add(FaultRule("503"))
    assert _kinds(plan) == ["latency", "429"]
    assert plan.injected == {"latency": 1, "429": 1}


def test_a_rate_is_drawn_from_the_seed() -> None:
    def run(seed: int) -> list[bool]:
        plan = FaultPlan(seed)
        plan.add(FaultRule("503", rate=0.3))
        return [bool(_kinds(plan)) for _ in range(400)]

    first = run(1)
    assert first == run(1) and first != run(2)
    assert 0.2 < sum(first) / len(first) < 0.4


def test_jitter_stays_around_the_latency_and_never_below_zero() -> None:
    plan = FaultPlan(3)
    rule = FaultRule("latency", latency_ms=10, jitter_ms=30)
    waits = [plan.jitter(rule) for _ in range(200)]
    assert min(waits) == 0.0 and max(waits) <= 40.0 and len(set(waits)) > 100


def test_clear_removes_every_rule() -> None:
    plan = FaultPlan()
    plan.add(FaultRule("503"))
    plan.clear()
    assert _kinds(plan) == []


@pytest.mark.parametrize("header, kind, extra", [
    ("503", "503", {}),
    ("429; retry-after=2", "429", {"retry_after": 2.0}),
    ("latency=150", "latency", {"latency_ms": 150.0}),
    ("latency; ms=80", "latency", {"latency_ms": 80.0}),
    ("drop", "drop", {}),
    ("LRO_FAIL", "lro_fail", {}),
])
def test_the_header_gives_a_one_request_rule(header, kind, extra) -> None:
    rule = parse_fault_header(header)
    assert rule is not None and rule.kind == kind and rule.kind in FAULT_KINDS
    for name, value in extra.items():
        assert getattr(rule, name) == value


@pytest.mark.parametrize("header", ["", " ; ", "teapot", "429; retry-after=soon", "latency=x"])
def test_a_header_it_cannot_read_gives_no_rule(header) -> None:
    assert parse_fault_header(header) is None


@pytest.mark.parametrize(("kind", "status", "code"), [
    ("429", 429, "TooManyRequests"), ("503", 503, "ServiceUnavailable"),
    ("500", 500, "InternalServerError"),
])
def test_a_status_fault_answers_with_its_error(kind, status, code) -> None:
    err = fault_error(FaultRule(kind, retry_after=2.5))
    assert (err.status, err.code, err.headers) == (status, code, {"Retry-After": "2.5"})
    assert fault_error(FaultRule(kind)).headers == {}
