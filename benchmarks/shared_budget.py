"""Several clients of one caller on one budget: pacing after a refusal against sending at once.

The resource manager counts a caller's requests in one bucket however many processes send them
(the workers of a cluster each hold a connection of their own). Each connection keeps its own
bucket and learns of the others only through the service's count and its 429s. After a 429 the
toolkit empties the bucket of the connection it answered until its ``Retry-After`` and halves its
rate, coming back with each answer (:meth:`toolkit._core.concurrency.RateLimiter.throttled`).

The sandbox runs in its own process, throttling the resource manager per caller as the service
does (``Sandbox(arm_limits=True)``), its bucket of writes made small (``--burst`` at once,
``--refill`` a second) so that a run is short. Then ``--readers`` connections each read the
largest resource group's policy states over ``--days`` days in ``--partitions`` time slices, all
at once, with the default retries, two ways taking turns (``--repeat``):

paced
    the toolkit as it is;
at once
    the same, except that a 429 leaves the connection's bucket as it was and the refused request
    is sent again after its ``Retry-After`` only (azure-core's own ``RetryPolicy.sleep``): the
    other requests of that connection go on at the connection's rate.

For each run it prints the requests the service answered, how many it refused (429), the reads
that failed, and the time the reads took; then the medians side by side.

    .venv/bin/python benchmarks/shared_budget.py
    .venv/bin/python benchmarks/shared_budget.py --readers 4 --repeat 5
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import secrets
import statistics
import sys
import threading
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _serve(pipe: Any, burst: int, refill: float) -> None:
    sys.path.insert(0, ROOT)
    from toolkit.sandbox.arm.common import limits
    from toolkit.sandbox.server import Sandbox

    sandbox = Sandbox(seed=7, arm_limits=True,
                      secret=os.environ["TOOLKIT_SANDBOX_SECRET"]).start()
    world = sandbox.world
    pw = world.section("policy")
    sub_id, rg = max(pw.by_group, key=lambda k: len(pw.records(*k).ts))
    sub = world.subscription(sub_id)
    assert sub is not None
    name = next(g.name for g in sub.resource_groups if g.name.lower() == rg)
    pipe.send((sandbox.url, sub.id, name, world.epoch.isoformat()))
    while True:
        cmd = pipe.recv()
        if cmd == "reset":  # a full bucket, and the count of answers from zero
            limits(sandbox)["writes"].configure(rate=refill, burst=burst)
            sandbox.log.clear()
            pipe.send("ok")
        elif cmd == "statuses":
            pipe.send([r.status for r in sandbox.log if "policyStates" in r.path])
        else:
            sandbox.stop()
            pipe.send("stopped")
            return


def _run(pipe: Any, server: tuple[str, str, str, str], args: argparse.Namespace,
         paced: bool) -> dict[str, Any]:
    import pandas as pd
    from azure.core.pipeline.policies import RetryPolicy

    import toolkit
    from toolkit._core.concurrency import RateLimiter
    from toolkit._core.policies import ToolkitRetryPolicy
    from toolkit.arm import slices
    from toolkit.sandbox.auth import SandboxCredential, TokenAuthority

    url, sub_id, name, epoch = server
    end = pd.Timestamp(epoch)
    saved = ToolkitRetryPolicy.sleep, RateLimiter.throttled, slices.PARTITION_MIN_PAGES
    slices.PARTITION_MIN_PAGES = 1  # the time slices are read at once however small
    if not paced:
        ToolkitRetryPolicy.sleep = RetryPolicy.sleep  # type: ignore[method-assign]
        RateLimiter.throttled = lambda self, wait: None  # type: ignore[method-assign]
    pipe.send("reset")
    pipe.recv()
    credential = SandboxCredential(TokenAuthority(os.environ["TOOLKIT_SANDBOX_SECRET"]))
    conns = [toolkit.connect(url, credential=credential, progress=False)
             for _ in range(args.readers)]
    failed: list[BaseException] = []

    def read(conn: Any) -> None:
        try:
            toolkit.policy_states(sub_id, name, resource="default",
                                  start=end - pd.Timedelta(days=args.days), end=end,
                                  partitions=args.partitions, connection=conn)
        except toolkit.ToolkitError as err:
            failed.append(err)

    try:
        began = time.perf_counter()
        threads = [threading.Thread(target=read, args=(c,)) for c in conns]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        took = time.perf_counter() - began
    finally:
        for c in conns:
            c.close()
        ToolkitRetryPolicy.sleep = saved[0]  # type: ignore[method-assign]
        RateLimiter.throttled = saved[1]  # type: ignore[method-assign]
        slices.PARTITION_MIN_PAGES = saved[2]
    pipe.send("statuses")
    statuses = pipe.recv()
    return {"requests": len(statuses), "refused": statuses.count(429),
            "failed": len(failed), "seconds": took}


def main() -> None:
    """Run the contenders in turns and print their figures side by side."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--readers", type=int, default=3, help="connections reading at once")
    ap.add_argument("--partitions", type=int, default=6, help="time slices of each read")
    ap.add_argument("--days", type=int, default=20, help="days each read covers")
    ap.add_argument("--burst", type=int, default=4, help="the service's bucket of writes")
    ap.add_argument("--refill", type=float, default=10.0, help="its refill a second")
    ap.add_argument("--repeat", type=int, default=3, help="turns of both contenders")
    args = ap.parse_args()
    sys.path.insert(0, ROOT)
    os.environ.setdefault("TOOLKIT_SANDBOX_NOW", "2026-11-20T09:00:00Z")
    # the sandbox and the client share a secret through their environment, never argv
    os.environ["TOOLKIT_SANDBOX_SECRET"] = secrets.token_urlsafe(24)

    here, there = mp.Pipe()
    proc = mp.get_context("spawn").Process(target=_serve, args=(there, args.burst, args.refill),
                                           daemon=True)
    proc.start()
    server = here.recv()
    print(f"{args.readers} connections of one caller, {args.partitions} slices of {args.days} "
          f"days each, at once; the service's bucket: {args.burst} at once, "
          f"{args.refill:g} a second")
    print(f"{'turn':>4}  {'contender':<8} {'requests':>8} {'refused':>8} {'failed':>7} "
          f"{'seconds':>8}")
    runs: dict[str, list[dict[str, Any]]] = {"paced": [], "at once": []}
    try:
        for turn in range(1, args.repeat + 1):
            for label in runs:
                r = _run(here, server, args, paced=label == "paced")
                runs[label].append(r)
                print(f"{turn:>4}  {label:<8} {r['requests']:>8} {r['refused']:>8} "
                      f"{r['failed']:>7} {r['seconds']:>8.1f}", flush=True)
    finally:
        here.send("stop")
        here.recv()
        proc.join(10)
    print("\nmedians")
    for label, rs in runs.items():
        print(f"  {label:<8} requests {statistics.median(r['requests'] for r in rs):>6.0f}  "
              f"refused {statistics.median(r['refused'] for r in rs):>5.0f}  "
              f"failed {sum(r['failed'] for r in rs):>2}  "
              f"seconds {statistics.median(r['seconds'] for r in rs):>5.1f}")
    paced = statistics.median(r["refused"] for r in runs["paced"])
    at_once = statistics.median(r["refused"] for r in runs["at once"])
    if paced:
        print(f"sending at once is refused {at_once / paced:.1f} times as often")


if __name__ == "__main__":
    main()
