"""The reliability campaign: every operation that sends a request, under every fault, and a soak.

Run it with ``make reliability`` (real waits, a table of figures) or through
``tests/reliability/test_campaign.py`` (waits recorded, not slept). Each run either returns exactly
the fault-free result (same rows, no duplicates, same order) or raises a documented error that
says what happened and what to do; ``lost`` and ``duplicated`` must stay 0.
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

import toolkit
from tests.reliability.cases import CASES, Case, judge
from toolkit._core.errors import (
    OperationFailedError,
    OperationTimeoutError,
    ProtocolError,
    RateLimitError,
    ServiceError,
    ToolkitError,
    TransportError,
)
from toolkit.sandbox.faults import FaultRule
from toolkit.sandbox.server import Sandbox

#: Retry-After the injected throttling and unavailability ask for, seconds.
RETRY_AFTER = 1


@dataclass(frozen=True)
class Fault:
    """A fault of the campaign: how to inject it for a case, and the errors that may report
    it when the toolkit cannot recover (non-idempotent requests are not sent twice)."""

    name: str
    rules: Callable[[Case], list[FaultRule]]
    applies: Callable[[Case], bool] = lambda case: True
    clear_errors: tuple[type[ToolkitError], ...] = ()
    timeout: float | None = None


FAULTS: tuple[Fault, ...] = (
    Fault("429 with Retry-After",
          lambda c: [FaultRule("429", path=c.path, count=2, retry_after=RETRY_AFTER)],
          clear_errors=(RateLimitError,)),
    Fault("429 without Retry-After", lambda c: [FaultRule("429", path=c.path, count=2)],
          clear_errors=(RateLimitError,)),
    Fault("500", lambda c: [FaultRule("500", path=c.path, count=2)],
          clear_errors=(ServiceError,)),
    Fault("503", lambda c: [FaultRule("503", path=c.path, count=2, retry_after=RETRY_AFTER)],
          clear_errors=(ServiceError,)),
    Fault("latency with jitter",
          lambda c: [FaultRule("latency", path=c.path, latency_ms=40, jitter_ms=30)]),
    Fault("connection dropped mid-body", lambda c: [FaultRule("drop", path=c.path, count=1)],
          clear_errors=(TransportError,)),
    Fault("malformed JSON body", lambda c: [FaultRule("malformed", path=c.path, count=1)],
          clear_errors=(ProtocolError,)),
    Fault("truncated JSON body", lambda c: [FaultRule("truncate", path=c.path, count=1)],
          clear_errors=(ProtocolError,)),
    Fault("a middle page fails once",
          lambda c: [FaultRule("503", path=c.paged, count=1, retry_after=RETRY_AFTER)],
          applies=lambda c: c.paged is not None, clear_errors=(ServiceError,)),
    Fault("the operation fails",
          lambda c: [FaultRule("lro_fail", path=c.path, method=c.start_method, count=1)],
          applies=lambda c: c.lro, clear_errors=(OperationFailedError,)),
    Fault("the operation outlasts the timeout", lambda c: [], applies=lambda c: c.lro,
          timeout=1.5),
)


@dataclass
class Result:
    """One run of one case under one fault."""

    operation: str
    fault: str
    requests: int
    retries: int
    outcome: str          # recovered | failed-clear | wrong-error | lost | not-injected
    lost: int
    duplicated: int
    detail: str = ""


def _connection(sandbox: Sandbox, sleep: Callable[[float], None]) -> Any:
    conn = toolkit.connect(sandbox=sandbox, progress=False, max_retries=4)
    conn.sleep = sleep
    return conn


def run_one(case: Case, fault: Fault, sandbox: Sandbox, catalog: pd.DataFrame,
            baseline: pd.DataFrame, sleep: Callable[[float], None]) -> Result:
    """Run ``case`` once under ``fault`` and judge the outcome."""
    conn = _connection(sandbox, sleep)
    rules = [sandbox.faults.add(r) for r in fault.rules(case)]
    kw: dict[str, Any] = {"timeout": fault.timeout} if fault.timeout is not None else {}
    detail = ""
    try:
        with sandbox.recording() as log:
            try:
                frame = case.call(conn, catalog, **kw)
            except OperationTimeoutError as err:
                if fault.timeout is None or not err.operation_url:
                    raise
                detail = f"timed out; resumed from err.operation ({err.operation_url[-40:]})"
                frame = err.operation.result()
    except ToolkitError as err:
        sandbox.faults.rules[:] = [r for r in sandbox.faults.rules if r not in rules]
        fired = sum(r.fired for r in rules)
        text = str(err)
        documented = isinstance(err, fault.clear_errors) or (
            not case.idempotent and isinstance(err, ServiceError | TransportError))
        outcome = "failed-clear" if documented and text and fired else "wrong-error"
        return Result(case.name, fault.name, len(log), conn.stats.retries, outcome, 0, 0,
                      f"{type(err).__name__}: {text.splitlines()[0][:100]}")
    sandbox.faults.rules[:] = [r for r in sandbox.faults.rules if r not in rules]
    fired = sum(r.fired for r in rules) + (1 if fault.timeout is not None else 0)
    lost, duplicated, failed, order_kept = judge(frame, case, baseline)
    if lost or duplicated or not order_kept:
        outcome = "lost"
    elif not fired:
        outcome = "not-injected"
    elif failed:
        outcome = "failed-clear"
        detail = f"{failed} item(s) kept as rows with their error"
    else:
        outcome = "recovered"
    return Result(case.name, fault.name, len(log), conn.stats.retries, outcome, lost,
                  duplicated, detail)


def baselines(sandbox: Sandbox, catalog: pd.DataFrame,
              cases: dict[str, Case]) -> dict[str, pd.DataFrame]:
    """The fault-free result of every case."""
    conn = _connection(sandbox, lambda s: None)
    return {name: case.call(conn, catalog) for name, case in cases.items()}


def run_matrix(sandbox: Sandbox, *, sleep: Callable[[float], None],
               cases: dict[str, Case] | None = None) -> pd.DataFrame:
    """Every case under every fault that applies to it."""
    cases = cases or CASES
    catalog = sandbox.catalog()
    base = baselines(sandbox, catalog, cases)
    rows = [run_one(case, fault, sandbox, catalog, base[name], sleep).__dict__
            for name, case in cases.items() for fault in FAULTS if fault.applies(case)]
    return pd.DataFrame(rows)


def soak(sandbox: Sandbox, *, sleep: Callable[[float], None], threads: int = 6,
         calls_per_thread: int = 12, fault_rate: float = 0.2, seed: int = 1,
         cases: dict[str, Case] | None = None,
         base: dict[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """Every case called concurrently from several threads sharing one connection while 20% of
    requests fail (429, 500, 503, dropped connections, malformed bodies); one row per call and a
    last row with the connection's request counts. ``base``: the fault-free results of the
    cases (``baselines``) when they are already at hand, else they are read first."""
    cases = cases or CASES
    catalog = sandbox.catalog()
    base = base or baselines(sandbox, catalog, cases)
    for kind in ("429", "500", "503", "drop", "malformed"):
        sandbox.inject(kind, rate=fault_rate / 5, retry_after=RETRY_AFTER
                       if kind in ("429", "503") else None)
    names = list(cases)
    results: list[dict[str, Any]] = []
    lock = threading.Lock()
    conn = _connection(sandbox, sleep)

    def worker(index: int) -> None:
        rng = random.Random(seed * 1000 + index)
        for _ in range(calls_per_thread):
            case = cases[rng.choice(names)]
            row: dict[str, Any] = {"operation": case.name, "thread": index}
            try:
                lost, dup, failed, order_kept = judge(case.call(conn, catalog), case,
                                                      base[case.name])
                outcome = "lost" if lost or dup or not order_kept else (
                    "failed-clear" if failed else "ok")
                row.update(outcome=outcome, lost=lost, duplicated=dup, failed_items=failed)
            except ToolkitError as err:
                row.update(outcome="failed-clear", lost=0, duplicated=0,
                           detail=type(err).__name__)
            with lock:
                results.append(row)

    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    try:
        for t in pool:
            t.start()
        for t in pool:
            t.join()
    finally:
        sandbox.clear_faults()
    results.append({"operation": "(connection)", "outcome": "stats", **conn.stats.as_dict()})
    return pd.DataFrame(results)


def summary(matrix: pd.DataFrame, by: str = "fault") -> pd.DataFrame:
    """The matrix summed by fault (or by operation): runs, requests, retries, recovered, failed
    with a clear error, lost or duplicated rows."""
    m = matrix.assign(runs=1, recovered=matrix["outcome"].eq("recovered").astype(int),
                      failed_clear=matrix["outcome"].eq("failed-clear").astype(int),
                      lost=matrix["lost"] + matrix["duplicated"])
    return m.groupby(by, sort=False)[["runs", "requests", "retries", "recovered",
                                      "failed_clear", "lost"]].sum()


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.reliability.campaign``: run the campaign with real waits and print
    the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--soak-threads", type=int, default=6)
    parser.add_argument("--soak-calls", type=int, default=12)
    parser.add_argument("--csv", default="reports/reliability.csv",
                        help="where to write every run of the matrix")
    args = parser.parse_args(argv)
    started = time.monotonic()
    with Sandbox(seed=7, lro_polls=3, lro_retry_after=1, frozen_clock=True) as sandbox:
        matrix = run_matrix(sandbox, sleep=time.sleep)
        soaked = soak(sandbox, sleep=time.sleep, threads=args.soak_threads,
                      calls_per_thread=args.soak_calls)
    pd.set_option("display.width", 160)
    if args.csv:
        from pathlib import Path

        Path(args.csv).parent.mkdir(parents=True, exist_ok=True)
        matrix.to_csv(args.csv, index=False)
    print(f"Fault matrix: {matrix['operation'].nunique()} operations x "
          f"{matrix['fault'].nunique()} faults, {len(matrix)} runs (every run: {args.csv})")
    print(summary(matrix).to_string())
    print()
    print(summary(matrix, "operation").to_string())
    bad = matrix[~matrix["outcome"].isin(["recovered", "failed-clear"])]
    calls = soaked[soaked["outcome"] != "stats"]
    counted = ["requests", "attempts", "retries", "throttled", "server_errors",
               "transport_errors"]
    stats = soaked.loc[soaked["outcome"] == "stats", counted].sum().astype(int)
    print(f"\nSoak: {len(calls)} calls from {args.soak_threads} threads at a 20% fault rate")
    print(f"  requests {stats['requests']}, attempts {stats['attempts']}, retries "
          f"{stats['retries']} (throttled {stats['throttled']}, server errors "
          f"{stats['server_errors']}, transport errors {stats['transport_errors']})")
    print(f"  calls ok {int(calls['outcome'].eq('ok').sum())}, failed with a clear error "
          f"{int(calls['outcome'].eq('failed-clear').sum())}, lost rows "
          f"{int(calls['lost'].sum())}, duplicated rows {int(calls['duplicated'].sum())}")
    print(f"\n{time.monotonic() - started:.0f} s")
    if len(bad) or calls["outcome"].eq("lost").any():
        print("\nRuns that neither recovered nor failed clearly:")
        print(bad.to_string())
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
