"""Every operation that sends a request, under every fault: the same result as without faults,
or a documented error that says what to do; nothing lost, nothing duplicated. Waits are
recorded, not slept."""

from __future__ import annotations

import pytest

from tests.reliability.campaign import FAULTS, baselines, run_one, soak
from tests.reliability.cases import CASES
from toolkit.sandbox.server import Sandbox

# every fault, real read timeouts among them: see tests/conftest.py
pytestmark = pytest.mark.xdist_group("real-time")


@pytest.fixture(scope="module")
def campaign_sandbox():
    with Sandbox(seed=7, lro_polls=3, lro_retry_after=1, frozen_clock=True) as sb:
        yield sb


@pytest.fixture(scope="module")
def world(campaign_sandbox):
    catalog = campaign_sandbox.catalog()
    return catalog, baselines(campaign_sandbox, catalog, CASES)


RUNS = [(c, f) for c in CASES.values() for f in FAULTS if f.applies(c)]


@pytest.mark.parametrize("case, fault", RUNS, ids=[f"{c.name}-{f.name}" for c, f in RUNS])
def test_fault(campaign_sandbox, world, case, fault) -> None:
    catalog, base = world
    result = run_one(case, fault, campaign_sandbox, catalog, base[case.name], lambda s: None)
    assert result.outcome in ("recovered", "failed-clear"), result
    assert result.lost == 0 and result.duplicated == 0
    if case.idempotent and fault.timeout is None and fault.name != "the operation fails":
        # an idempotent call recovers from every transient fault
        assert result.outcome == "recovered", result


def test_soak_loses_and_duplicates_nothing(campaign_sandbox, world) -> None:
    _, base = world  # the world is frozen: the fault-free results read once serve the soak too
    rows = soak(campaign_sandbox, sleep=lambda s: None, threads=4, calls_per_thread=6, base=base)
    calls = rows[rows["outcome"] != "stats"]
    stats = rows[rows["outcome"] == "stats"]
    assert len(calls) == 24
    assert calls["lost"].sum() == 0 and calls["duplicated"].sum() == 0
    assert not calls["outcome"].eq("lost").any()
    assert stats["retries"].sum() > 0  # faults were met and retried
