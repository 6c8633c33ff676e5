"""A tenant's latest policy states read through Resource Graph and through
``policyStates/queryResults``, each under its modelled quota: time against the quota's floor.

The sandbox runs in its own process with a tenant of ``--subscriptions`` store subscriptions
besides its own three, its policy world scaled (``TOOLKIT_SANDBOX_POLICY_SCALE``) so that the
tenant holds at least ``--records`` latest states, and its history cut to its last day (only the
latest states are read here; a day of history per pair keeps a million of them in memory). It
enforces both limits as the services document them (``Sandbox(arm_limits=True)``): the resource
manager's bucket of writes per principal (these queries are POSTs: 200 at once, 10 a second) and
Resource Graph's user quota (15 queries in each window of 5 seconds). Each contender runs in a
fresh process and reads the whole tenant from the tenant root group:

(g) ``resource_graph_policy_states(scope=<root group>, reconcile=False)``: ``policyresources``,
    1,000 rows a page, each page a query of the user's quota;
(q) ``policy_states(scope=<root group>)``: ``policyStates/latest/queryResults``, 1,000 records a
    page, each page a request of the bucket of writes.

The sandbox evaluates (g)'s query once before the contenders run (as a warm service would have
its data indexed; the time it took is printed), so that (g) measures its pages under the quota.
Each is set against its floor, the least time its quota allows for its pages: for (g), one
window of 5 s for each 15 pages after the first 15; for (q), a tenth of a second for each page
after the first 200. Printed: records, pages, seconds, the floor, the ratio, records a second,
and the time the client spent waiting for its quota.

    .venv/bin/python benchmarks/resource_graph.py                       # 1,000,000 states
    .venv/bin/python benchmarks/resource_graph.py --records 100000 --modes g,q
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import secrets
import subprocess
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LABELS = {"g": "(g) Resource Graph", "q": "(q) queryResults"}


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ------------------------------------------------------------------------------ server process
def serve(records: int, subscriptions: int) -> None:
    """Start the sandbox tenant (both limits enforced), print how to query it, serve until
    killed."""
    sys.path.insert(0, ROOT)
    import toolkit.sandbox.arm.policy.world as policy_world

    # one evaluation a pair (the last day's): only the latest states are read
    policy_world.HISTORY_DAYS = 1
    os.environ["TOOLKIT_SANDBOX_SUBSCRIPTIONS"] = str(subscriptions)
    os.environ["TOOLKIT_SANDBOX_POLICY_SCALE"] = "1"
    from toolkit.sandbox.arm.resourcegraph.handlers import engine_of
    from toolkit.sandbox.server import Sandbox
    from toolkit.sandbox.world import World

    probe = World(7).section("policy")
    at_one = sum(len(probe.records(*k).ts) for k in probe.by_group)
    scale = max(1.0, records / at_one * 1.03)
    os.environ["TOOLKIT_SANDBOX_POLICY_SCALE"] = f"{scale:.3f}"
    sandbox = Sandbox(seed=7, frozen_clock=True, arm_limits=True,
                      secret=os.environ["TOOLKIT_SANDBOX_SECRET"]).start()
    t0 = time.perf_counter()
    pw = sandbox.world.section("policy")
    latest = len(pw.scope_records(list(pw.by_group)).ts)
    engine_of(sandbox)  # Resource Graph's tables, loaded once, as a warm service holds them
    built = time.perf_counter() - t0
    # the contenders' Resource Graph query evaluated once (its first page asked), so that (g)
    # measures its pages under the quota, not the sandbox's engine evaluating it on one core
    t1 = time.perf_counter()
    import requests

    from toolkit.arm.graphpolicy import _query

    root = sandbox.world.tenant_id
    answer = requests.post(f"{sandbox.url}/providers/Vendor.ResourceGraph/resources",
                           params={"api-version": "2024-04-01"}, timeout=3600,
                           headers={"Authorization": "Bearer " + sandbox.token("arm")},
                           json={"query": _query("Vendor", None), "managementGroups": [root],
                                 "options": {"resultFormat": "table", "$top": 1000}})
    answer.raise_for_status()
    print(json.dumps({"url": sandbox.url, "root": root, "scale": scale,
                      "states": latest, "subscriptions": len(sandbox.world.subscriptions),
                      "build_seconds": round(built, 1),
                      "query_seconds": round(time.perf_counter() - t1, 1),
                      "peak_mb": round(_peak_mb())}), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        sandbox.stop()


# ------------------------------------------------------------------------------ contenders
def child(mode: str, cfg: dict[str, Any]) -> None:
    """One contender in this (fresh) process; prints one JSON line."""
    sys.path.insert(0, ROOT)
    import toolkit
    from toolkit._core.quota import shared_quota
    from toolkit._spec.arm import RESOURCE_GRAPH_QUOTA, RESOURCE_GRAPH_QUOTA_WINDOW_SECONDS
    from toolkit.sandbox.auth import SandboxCredential, TokenAuthority

    credential = SandboxCredential(TokenAuthority(os.environ["TOOLKIT_SANDBOX_SECRET"]))
    conn = toolkit.connect(cfg["url"], credential=credential, progress=False)
    scope = f"/providers/Vendor.Management/managementGroups/{cfg['root']}"
    quota = shared_quota(conn, "arm.resourcegraph", RESOURCE_GRAPH_QUOTA,
                         RESOURCE_GRAPH_QUOTA_WINDOW_SECONDS)
    t0 = time.perf_counter()
    if mode == "g":
        df = toolkit.resource_graph_policy_states(scope=scope, reconcile=False, connection=conn)
    else:
        df = toolkit.policy_states(scope=scope, connection=conn)
    seconds = time.perf_counter() - t0
    print(json.dumps({"mode": mode, "rows": len(df), "seconds": seconds,
                      "requests": len(df.attrs.get("request_ids") or []),
                      "quota_wait": quota.waited, "peak_mb": _peak_mb()}), flush=True)


def floor(mode: str, pages: int) -> float:
    """The least time a quota allows for ``pages`` requests, in seconds."""
    if mode == "g":  # 15 queries in each window of 5 s: a window for each 15 after the first
        return max(0, math.ceil(pages / 15) - 1) * 5.0
    return max(0, pages - 200) / 10.0  # a bucket of 200 writes, refilled 10 a second


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--subscriptions", type=int, default=20,
                        help="store subscriptions added to the sandbox's three")
    parser.add_argument("--modes", default="g,q")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--config", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.records, args.subscriptions)
        return 0
    if args.child:
        child(args.child, json.loads(args.config))
        return 0
    # the sandbox and the contenders share a secret through their environment, never argv
    env = {**os.environ, "TOOLKIT_SANDBOX_SECRET": secrets.token_urlsafe(24)}
    server = subprocess.Popen([sys.executable, __file__, "--serve", "--records",
                               str(args.records), "--subscriptions", str(args.subscriptions)],
                              stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert server.stdout is not None
        cfg = json.loads(server.stdout.readline())
        print(f"sandbox (own process): {cfg['subscriptions']} subscriptions, {cfg['states']:,} "
              f"latest states (policy scale {cfg['scale']:.2f}), built in "
              f"{cfg['build_seconds']} s, the Resource Graph query evaluated once in "
              f"{cfg['query_seconds']} s, peak {cfg['peak_mb']:,} MB; both limits enforced; "
              f"load average {os.getloadavg()[0]:.1f}", flush=True)
        results = {}
        for mode in args.modes.split(","):
            out = subprocess.run([sys.executable, __file__, "--child", mode, "--config",
                                  json.dumps(cfg)], capture_output=True, text=True, env=env,
                                 check=False)
            if out.returncode != 0:
                print(f"{LABELS[mode]} failed:\n{out.stderr[-2000:]}", flush=True)
                continue
            results[mode] = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"\n{'':22}{'records':>11}{'pages':>7}{'seconds':>9}{'floor':>8}{'x floor':>9}"
              f"{'records/s':>11}{'quota wait s':>14}")
        for mode, r in results.items():
            pages = max(r["requests"], math.ceil(r["rows"] / 1000))
            least = floor(mode, pages)
            ratio = f"{r['seconds'] / least:.2f}" if least else "-"
            print(f"{LABELS[mode]:22}{r['rows']:>11,}{pages:>7}{r['seconds']:>9.1f}"
                  f"{least:>8.1f}{ratio:>9}{r['rows'] / r['seconds']:>11,.0f}"
                  f"{r['quota_wait']:>14.1f}")
        if {"g", "q"} <= set(results):
            print(f"\nsame states: {results['g']['rows'] == results['q']['rows']}; Resource "
                  f"Graph / queryResults: {results['g']['seconds'] / results['q']['seconds']:.2f}"
                  "x the time")
    finally:
        server.terminate()
        server.wait(timeout=60)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
