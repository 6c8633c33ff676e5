"""A tenant's policy states: one process against dask with two workers, side by side.

The sandbox runs in its own process with a tenant of ``--subscriptions`` store subscriptions
(``TOOLKIT_SANDBOX_SUBSCRIPTIONS``) besides its own three, its policy world scaled
(``TOOLKIT_SANDBOX_POLICY_SCALE``) so that a ``default`` query of the tenant root management group
over the window (59 days, or fewer when the world at its smallest holds more than asked) holds
about ``--records`` state records. Each contender runs in a fresh
process and reads the whole query:

(a) ``policy_states(scope=<root group>, resource="default")`` in the driver process;
(b) the same with ``engine="dask"`` on a two-worker ``LocalCluster`` (one task per subscription;
    the workers rebuild their connection from the non-secret settings and the sandbox secret in
    their environment).

The sandbox throttles the resource manager per principal as the service documents it
(``Sandbox(arm_limits=True)``; these POST queries count as writes: 200 at once, 10 a second), and
the policy-insights provider's own quota as the sandbox models it (``provider_limits=True``: 150
at once, 1 a second, per principal and subscription or tenant; the provider publishes no
numbers, see ``toolkit/_spec/arm.py``), unless ``--no-limits``.

Each prints records a second (first request to the whole frame in the driver for (a); for (b), to
every partition in the workers' memory, counted there with ``len``), the driver's peak resident
memory (the workers' peaks beside (b)), and which budget bound the read: the seconds its
connections' requests waited for a token of each (the resource manager's reads and writes, the
provider's quota; summed over the requests waiting at once), the largest named.

    .venv/bin/python benchmarks/tenant_policy.py                     # 300,000 records
    .venv/bin/python benchmarks/tenant_policy.py --no-limits         # the sandbox not throttling
    .venv/bin/python benchmarks/tenant_policy.py --records 5000000 --modes a,b
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import secrets
import subprocess
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WINDOW_DAYS = 59


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ------------------------------------------------------------------------------ server process
def serve(records: int, subscriptions: int, limits: bool) -> None:
    """Start the sandbox tenant (throttling the resource manager as the service does,
    with ``limits``), print how to query it, serve until killed."""
    sys.path.insert(0, ROOT)
    from datetime import timedelta

    from toolkit.sandbox.server import Sandbox
    from toolkit.sandbox.world import World

    os.environ["TOOLKIT_SANDBOX_SUBSCRIPTIONS"] = str(subscriptions)
    os.environ["TOOLKIT_SANDBOX_POLICY_SCALE"] = "1"
    probe = World(7)
    end = probe.epoch
    start = end - timedelta(days=WINDOW_DAYS)
    pw = probe.section("policy")
    lo, hi = start.timestamp(), end.timestamp()
    at_one = sum(int(((r.ts >= lo) & (r.ts <= hi)).sum())
                 for r in (pw.records(*k) for k in pw.by_group))
    scale = max(1.0, records / at_one * 1.05)
    if records < at_one:  # fewer records than the world holds at its smallest: a shorter window
        start = end - timedelta(days=max(1, round(WINDOW_DAYS * records / at_one)))
    os.environ["TOOLKIT_SANDBOX_POLICY_SCALE"] = f"{scale:.3f}"
    sandbox = Sandbox(seed=7, frozen_clock=True, arm_limits=limits, provider_limits=limits,
                      secret=os.environ["TOOLKIT_SANDBOX_SECRET"]).start()
    world = sandbox.world
    t0 = time.perf_counter()
    pw = world.section("policy")
    pw.scope_records(list(pw.by_group))  # the tenant's records, built once
    for r in range(len(pw.resources)):  # serialized once, as a warm service would
        pw.resource_fragment(r)
    for p in range(len(pw.policies)):
        pw.policy_fragment(p)
    print(json.dumps({"url": sandbox.url, "root": world.tenant_id, "scale": scale,
                      "subscriptions": len(world.subscriptions),
                      "start": start.isoformat(), "end": end.isoformat(),
                      "build_seconds": round(time.perf_counter() - t0, 1)}), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        sandbox.stop()


# ------------------------------------------------------------------------------ contenders
def budget_waits() -> dict[str, float]:
    """Seconds this process's connections waited for each budget (run in workers too)."""
    from toolkit.arm import engine

    out: dict[str, float] = {}
    for conn in list(engine._CONNECTIONS.values()):
        for name, seconds in conn.pipeline("arm")._arm.waited().items():
            out[name] = out.get(name, 0.0) + seconds
    return out


def child(mode: str, cfg: dict[str, Any]) -> None:
    """One contender in this (fresh) process; prints one JSON line."""
    sys.path.insert(0, ROOT)
    import toolkit
    from toolkit.sandbox.auth import SandboxCredential, TokenAuthority

    credential = SandboxCredential(TokenAuthority(os.environ["TOOLKIT_SANDBOX_SECRET"]))
    conn = toolkit.connect(cfg["url"], credential=credential, progress=False)
    scope = f"/providers/Microsoft.Management/managementGroups/{cfg['root']}"
    workers: dict[str, float] = {}
    waited: dict[str, float] = {}
    base = _peak_mb()
    if mode == "a":
        t0 = time.perf_counter()
        df = toolkit.policy_states(scope=scope, resource="default", start=cfg["start"],
                                   end=cfg["end"], connection=conn)
        rows, seconds = len(df), time.perf_counter() - t0
        waited = conn.pipeline("arm")._arm.waited()
    else:
        import distributed

        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None, host="127.0.0.1") as cluster, \
                distributed.Client(cluster) as client:
            t0 = time.perf_counter()
            ddf = toolkit.policy_states(scope=scope, resource="default", start=cfg["start"],
                                        end=cfg["end"], engine="dask", connection=conn)
            rows, seconds = len(ddf), time.perf_counter() - t0
            workers = client.run(_peak_mb)
            for each in client.run(budget_waits).values():
                for name, secs in each.items():
                    waited[name] = waited.get(name, 0.0) + secs
    print(json.dumps({"mode": mode, "rows": rows, "seconds": seconds, "peak_mb": _peak_mb(),
                      "baseline_mb": base, "workers_peak_mb": list(workers.values()),
                      "waited": waited}),
          flush=True)


def _bound_by(waited: dict[str, float]) -> str:
    """Name the budget the read waited for most (none when it never waited)."""
    if not waited or max(waited.values()) <= 0:
        return "none (never waited for a token)"
    name = max(waited, key=lambda k: waited[k])
    label = {"reads": "resource manager's reads", "writes": "resource manager's writes"}
    spent = ", ".join(f"{label.get(k, k + ' quota')} {v:,.1f} s" for k, v in
                      sorted(waited.items(), key=lambda kv: -kv[1]) if v > 0)
    return f"{label.get(name, name + ' quota')} (waits: {spent})"


LABELS = {"a": "(a) one process", "b": "(b) dask, 2 workers"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--subscriptions", type=int, default=20, help="store subscriptions "
                        "added to the sandbox's three")
    parser.add_argument("--modes", default="a,b")
    parser.add_argument("--no-limits", action="store_true",
                        help="the sandbox does not throttle (by default it enforces the resource "
                             "manager's documented buckets per principal, as the service does, "
                             "and its model of the policy-insights provider's quota)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--config", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.records, args.subscriptions, not args.no_limits)
        return 0
    if args.child:
        child(args.child, json.loads(args.config))
        return 0
    # the sandbox and the workers share a secret through their environment, never argv
    env = {**os.environ, "TOOLKIT_SANDBOX_SECRET": secrets.token_urlsafe(24)}
    server = subprocess.Popen([sys.executable, __file__, "--serve", "--records",
                               str(args.records), "--subscriptions", str(args.subscriptions)]
                              + (["--no-limits"] if args.no_limits else []),
                              stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert server.stdout is not None
        cfg = json.loads(server.stdout.readline())
        print(f"sandbox (own process): {cfg['subscriptions']} subscriptions, policy scale "
              f"{cfg['scale']:.2f}, built in {cfg['build_seconds']} s, "
              f"{'not throttling' if args.no_limits else 'throttling per principal'}; "
              f"reading the root group's default states {cfg['start'][:10]} .. "
              f"{cfg['end'][:10]}", flush=True)
        results = {}
        for mode in args.modes.split(","):
            out = subprocess.run([sys.executable, __file__, "--child", mode, "--config",
                                  json.dumps(cfg)], capture_output=True, text=True, env=env,
                                 check=False)
            if out.returncode != 0:
                print(f"{LABELS[mode]} failed:\n{out.stderr[-2000:]}", flush=True)
                continue
            results[mode] = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"\n{'':24}{'records':>12}{'seconds':>10}{'records/s':>12}{'driver peak MB':>16}"
              f"  workers' peak MB")
        for mode, r in results.items():
            rate = r["rows"] / r["seconds"]
            workers = ", ".join(f"{w:,.0f}" for w in r["workers_peak_mb"]) or "-"
            print(f"{LABELS[mode]:24}{r['rows']:>12,}{r['seconds']:>10.1f}{rate:>12,.0f}"
                  f"{r['peak_mb']:>16,.0f}  {workers}")
        for mode, r in results.items():
            print(f"{LABELS[mode]}: bound by {_bound_by(r['waited'])}")
        if {"a", "b"} <= set(results):
            ratio = results["b"]["seconds"] and results["a"]["seconds"] / results["b"]["seconds"]
            print(f"\ndask / one process: {ratio:.2f}x the records a second; same rows: "
                  f"{results['a']['rows'] == results['b']['rows']}")
    finally:
        server.terminate()
        server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
