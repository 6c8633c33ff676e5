"""policy_states() against the obvious ways of turning the same pages into a DataFrame.

The sandbox runs in its own process, with its policy world scaled up
(``TOOLKIT_SANDBOX_POLICY_SCALE``) so that one resource group holds at least N state records in a
60-day ``default`` query. Each contender then runs in a fresh process and reads exactly N records
(``$top=N``, 1000 a page) of the same query:

(a) ``requests`` + ``orjson.loads`` + ``pd.DataFrame(records)``: the lower bound of doing nothing
    clever (an untyped frame of objects);
(b) ``requests`` + ``json`` + ``pd.json_normalize``: what a user writes by hand;
(c) ``toolkit.policy_states()``: the typed frame.

Each process reports its wall time (first request to finished frame) and its peak resident
memory; the table and the ratios of (c) to (a) are printed at the end.

    .venv/bin/python benchmarks/policy_states.py                 # N = 1,000,000
    .venv/bin/python benchmarks/policy_states.py --records 100000 --modes a,c
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
START = "2026-09-20T09:00:00Z"  # 61 days before the sandbox world's "now"
END = "2026-11-21T00:00:00Z"


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ------------------------------------------------------------------------------ server process
def serve(records: int) -> None:
    """Start a sandbox scaled for ``records``, print how to query it, serve until killed."""
    sys.path.insert(0, ROOT)
    from toolkit.sandbox.server import Sandbox
    from toolkit.sandbox.world import World

    os.environ["TOOLKIT_SANDBOX_POLICY_SCALE"] = "1"
    probe = World(7).section("policy")
    most = max(len(probe.records(sub, group).ts) for sub, group in probe.by_group)
    scale = max(1.0, records / most * 1.1)
    os.environ["TOOLKIT_SANDBOX_POLICY_SCALE"] = f"{scale:.2f}"

    sandbox = Sandbox(seed=7).start()
    pw = sandbox.world.section("policy")
    biggest = max(pw.by_group, key=lambda k: len(pw.records(*k).ts))
    sub_id, _ = biggest
    sub = sandbox.world.subscription(sub_id)
    group = next(g.name for g in sub.resource_groups if g.name.lower() == biggest[1])
    t0 = time.perf_counter()
    rec = pw.records(sub.id, group)
    for r in pw.by_group[biggest]:  # serialize the fragments once, as a warm service would
        pw.resource_fragment(r)
    for p in range(len(pw.policies)):
        pw.policy_fragment(p)
    print(json.dumps({"url": sandbox.url, "token": sandbox.token("arm", expires_in=86400),
                      "subscription": sub.id, "group": group, "scale": scale,
                      "world_records": len(rec.ts),
                      "build_seconds": round(time.perf_counter() - t0, 2)}), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        sandbox.stop()


# ------------------------------------------------------------------------------ contenders
def _url(cfg: dict[str, Any], n: int) -> str:
    from urllib.parse import quote, urlencode

    params = {"api-version": "2024-10-01", "$from": START, "$to": END, "$top": n}
    return (f"{cfg['url']}/subscriptions/{cfg['subscription']}/resourceGroups/{cfg['group']}/"
            f"providers/Vendor.PolicyInsights/policyStates/default/queryResults?"
            f"{urlencode(params, quote_via=quote, safe='$:')}")


BYTES = [0]


def _records(cfg: dict[str, Any], n: int, loads: Any) -> tuple[list[Any], int]:
    """Every record of the query as a list of dicts, the way one writes it by hand: POST each
    page, parse it with ``loads(response)``, follow ``@odata.nextLink``."""
    import requests

    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {cfg['token']}"
    records: list[Any] = []
    url = _url(cfg, n)
    pages = 0
    while url:
        r = session.post(url)
        r.raise_for_status()
        body = loads(r)
        records.extend(body["value"])
        url = body.get("@odata.nextLink")
        pages += 1
        BYTES[0] += len(r.content)
    return records, pages


def run_a(cfg: dict[str, Any], n: int) -> tuple[int, int]:
    import orjson
    import pandas as pd

    records, pages = _records(cfg, n, lambda r: orjson.loads(r.content))
    df = pd.DataFrame(records)
    return len(df), pages


def run_b(cfg: dict[str, Any], n: int) -> tuple[int, int]:
    import json as stdjson

    import pandas as pd

    records, pages = _records(cfg, n, lambda r: stdjson.loads(r.text))
    df = pd.json_normalize(records)
    return len(df), pages


def run_c(cfg: dict[str, Any], n: int) -> tuple[int, int]:
    sys.path.insert(0, ROOT)
    import toolkit

    conn = toolkit.connect(cfg["url"], token=cfg["token"], progress=False)
    df = toolkit.policy_states(cfg["subscription"], cfg["group"], resource="default",
                               start=START, end=END, top=n, connection=conn)
    return len(df), len(df.attrs["request_ids"])


def child(mode: str, cfg: dict[str, Any], n: int) -> None:
    """One contender in this (fresh) process; prints one JSON line."""
    import orjson  # noqa: F401 - imports are not part of the timing
    import pandas  # noqa: F401
    import requests  # noqa: F401

    if mode == "c":
        sys.path.insert(0, ROOT)
        import toolkit.arm.policy  # noqa: F401
    base = _peak_mb()
    t0 = time.perf_counter()
    rows, pages = {"a": run_a, "b": run_b, "c": run_c}[mode](cfg, n)
    seconds = time.perf_counter() - t0
    print(json.dumps({"mode": mode, "rows": rows, "pages": pages, "seconds": seconds,
                      "peak_mb": _peak_mb(), "baseline_mb": base, "bytes": BYTES[0]}),
          flush=True)


# ------------------------------------------------------------------------------ driver
LABELS = {
    "a": "(a) requests + orjson.loads + pd.DataFrame(records)",
    "b": "(b) requests + json + pd.json_normalize",
    "c": "(c) toolkit.policy_states() typed frame",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000, help="N records to read")
    parser.add_argument("--modes", default="a,b,c", help="contenders to run, e.g. a,c")
    parser.add_argument("--repeat", type=int, default=1, help="runs per contender (best kept)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--config", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.records)
        return 0
    if args.child:
        child(args.child, json.loads(args.config), args.records)
        return 0

    server = subprocess.Popen([sys.executable, __file__, "--serve", "--records",
                               str(args.records)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        cfg = json.loads(server.stdout.readline())
        print(f"sandbox at {cfg['url']} (own process), policy scale {cfg['scale']:.2f}: group "
              f"{cfg['group']} holds {cfg['world_records']:,} records (built in "
              f"{cfg['build_seconds']} s); reading N = {args.records:,}", flush=True)
        results: dict[str, dict[str, Any]] = {}
        for mode in args.modes.split(","):
            for _ in range(args.repeat):
                out = subprocess.run(
                    [sys.executable, __file__, "--child", mode, "--records", str(args.records),
                     "--config", json.dumps(cfg)], capture_output=True, text=True, check=False)
                if out.returncode != 0:
                    print(f"{LABELS[mode]} failed:\n{out.stderr[-2000:]}", flush=True)
                    break
                got = json.loads(out.stdout.strip().splitlines()[-1])
                print(f"  {mode}: {got['seconds']:.2f} s, peak {got['peak_mb']:,.0f} MB "
                      f"({got['rows']:,} rows, {got['pages']} pages)", flush=True)
                best = results.get(mode)
                if best is None or got["seconds"] < best["seconds"]:
                    results[mode] = {**got, "peak_mb": max(got["peak_mb"],
                                                           (best or got)["peak_mb"])}
    finally:
        server.terminate()
        server.wait(timeout=30)

    print()
    size = ""
    if results.get("a", {}).get("bytes"):
        a = results["a"]
        size = f", {a['bytes'] / a['rows'] / 1000:.2f} kB a record ({a['bytes'] / 1e9:.2f} GB)"
    print(f"N = {args.records:,} policy state records{size}, 1000 a page, sandbox in its own "
          f"process; best of {args.repeat} run(s) each, every run in a fresh process")
    print(f"{'contender':<58}{'wall s':>9}{'peak MB':>10}{'rows':>11}")
    for mode, r in results.items():
        print(f"{LABELS[mode]:<58}{r['seconds']:>9.2f}{r['peak_mb']:>10,.0f}{r['rows']:>11,}")
    if "a" in results and "c" in results:
        a, c = results["a"], results["c"]
        t_ratio = c["seconds"] / a["seconds"]
        m_ratio = c["peak_mb"] / a["peak_mb"]
        print()
        print(f"time   (c)/(a) = {t_ratio:.2f}  (target <= 0.50: "
              f"{'met' if t_ratio <= 0.5 else 'NOT met'})")
        print(f"memory (c)/(a) = {m_ratio:.2f}  (target <= 0.25: "
              f"{'met' if m_ratio <= 0.25 else 'NOT met'})")
    if "b" in results and "c" in results:
        print(f"time   (c)/(b) = {results['c']['seconds'] / results['b']['seconds']:.2f}, "
              f"memory (c)/(b) = {results['c']['peak_mb'] / results['b']['peak_mb']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
