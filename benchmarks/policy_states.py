"""policy_states() against the obvious ways of turning the same pages into a DataFrame, on
loopback and over a modelled wide-area link.

The sandbox runs in its own process, with its policy world scaled up
(``TOOLKIT_SANDBOX_POLICY_SCALE``) so that one resource group holds at least N state records in a
60-day ``default`` query. Each contender then runs in a fresh process and reads exactly N records
of the same query (1000 a page).

Loopback (the sandbox answers as fast as it can, uncompressed):

(a) ``requests`` + ``orjson.loads`` + ``pd.DataFrame(records)``: the lower bound of doing nothing
    clever (an untyped frame of objects);
(b) ``requests`` + ``json`` + ``pd.json_normalize``: what a user writes by hand;
(c) ``toolkit.policy_states()``: the typed frame.

Modelled WAN (``--wan``: the sandbox's network model, 50 ms round trip, the given bandwidth per
connection and for the client's whole link, with and without gzip), reading the whole window:

(n) the naive loop, as (a);
(1) ``policy_states(partitions=1)``: one chain of pages;
(c) ``policy_states()``: time slices read as concurrent chains.

Each is set against the bytes-on-the-wire floor (the bytes the sandbox sent for that read over
the link's bandwidth). Each process reports its wall time (first request to finished frame) and
its peak resident memory.

    .venv/bin/python benchmarks/policy_states.py                       # N = 1,000,000, loopback
    .venv/bin/python benchmarks/policy_states.py --records 100000 --modes a,c
    .venv/bin/python benchmarks/policy_states.py --records 200000 --wan 200,1000 --modes n,1,c
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
RTT_MS = 50.0


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# ------------------------------------------------------------------------------ server process
def serve(records: int, mbit: float | None, compress: bool) -> None:
    """Start a sandbox scaled for ``records`` (behind the modelled link when ``mbit`` is given),
    print how to query it, then answer ``bytes`` lines on stdin with the bytes sent and the CPU
    seconds the sandbox used since the last one, until stdin closes."""
    sys.path.insert(0, ROOT)
    from toolkit.sandbox.network import NetworkModel
    from toolkit.sandbox.server import Sandbox
    from toolkit.sandbox.world import World

    os.environ["TOOLKIT_SANDBOX_POLICY_SCALE"] = "1"
    probe = World(7).section("policy")
    most = max(len(probe.records(sub, group).ts) for sub, group in probe.by_group)
    scale = max(1.0, records / most * 1.1)
    os.environ["TOOLKIT_SANDBOX_POLICY_SCALE"] = f"{scale:.2f}"

    network = (NetworkModel(rtt_ms=RTT_MS, mbit_per_s=mbit, link_mbit_per_s=mbit)
               if mbit else None)
    sandbox = Sandbox(seed=7, network=network, compress=compress, compress_level=1).start()
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
    sandbox.bytes_sent = 0
    cpu = _cpu_s()
    try:
        for line in sys.stdin:
            if line.strip() == "bytes":
                now = _cpu_s()
                print(json.dumps([sandbox.bytes_sent, now - cpu]), flush=True)
                sandbox.bytes_sent, cpu = 0, now
    finally:
        sandbox.stop()


# ------------------------------------------------------------------------------ contenders
def _url(cfg: dict[str, Any], n: int | None) -> str:
    from urllib.parse import quote, urlencode

    params: dict[str, Any] = {"api-version": "2024-10-01", "$from": START, "$to": END}
    if n is not None:
        params["$top"] = n
    return (f"{cfg['url']}/subscriptions/{cfg['subscription']}/resourceGroups/{cfg['group']}/"
            f"providers/Vendor.PolicyInsights/policyStates/default/queryResults?"
            f"{urlencode(params, quote_via=quote, safe='$:')}")


BYTES = [0]


def _records(cfg: dict[str, Any], n: int | None, loads: Any) -> tuple[list[Any], int]:
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


def run_n(cfg: dict[str, Any], n: int) -> tuple[int, int]:
    """The naive loop over the whole window."""
    import orjson
    import pandas as pd

    records, pages = _records(cfg, None, lambda r: orjson.loads(r.content))
    df = pd.DataFrame(records)
    return len(df), pages


def _window_read(cfg: dict[str, Any], partitions: int | None) -> tuple[int, int]:
    sys.path.insert(0, ROOT)
    import toolkit

    conn = toolkit.connect(cfg["url"], token=cfg["token"], progress=False)
    df = toolkit.policy_states(cfg["subscription"], cfg["group"], resource="default",
                               start=START, end=END, partitions=partitions, connection=conn)
    return len(df), len(df.attrs["request_ids"])


def run_1(cfg: dict[str, Any], n: int) -> tuple[int, int]:
    """One chain over the whole window."""
    return _window_read(cfg, 1)


def run_w(cfg: dict[str, Any], n: int) -> tuple[int, int]:
    """The toolkit's read over the whole window (time slices as concurrent chains)."""
    return _window_read(cfg, None)


RUNS = {"a": run_a, "b": run_b, "c": run_c}
WAN_RUNS = {"n": run_n, "1": run_1, "c": run_w}


def child(mode: str, cfg: dict[str, Any], n: int, wan: bool) -> None:
    """One contender in this (fresh) process; prints one JSON line."""
    import orjson  # noqa: F401 - imports are not part of the timing
    import pandas  # noqa: F401
    import requests  # noqa: F401

    if mode in ("c", "1"):
        sys.path.insert(0, ROOT)
        import toolkit.arm.policy  # noqa: F401
    base = _peak_mb()
    t0 = time.perf_counter()
    c0 = _cpu_s()
    rows, pages = (WAN_RUNS if wan else RUNS)[mode](cfg, n)
    seconds = time.perf_counter() - t0
    print(json.dumps({"mode": mode, "rows": rows, "pages": pages, "seconds": seconds,
                      "cpu": _cpu_s() - c0,
                      "peak_mb": _peak_mb(), "baseline_mb": base, "bytes": BYTES[0]}),
          flush=True)


# ------------------------------------------------------------------------------ driver
LABELS = {
    "a": "(a) requests + orjson.loads + pd.DataFrame(records)",
    "b": "(b) requests + json + pd.json_normalize",
    "c": "(c) toolkit.policy_states() typed frame",
}
WAN_LABELS = {
    "n": "(n) naive loop (requests + orjson + pd.DataFrame)",
    "1": "(1) policy_states(partitions=1): one chain",
    "c": "(c) policy_states(): concurrent time slices",
}


class _Server:
    """The sandbox in a process of its own."""

    def __init__(self, records: int, mbit: float | None, compress: bool) -> None:
        cmd = [sys.executable, __file__, "--serve", "--records", str(records)]
        if mbit:
            cmd += ["--mbit", str(mbit)]
        if compress:
            cmd += ["--compress"]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)
        assert self.proc.stdout is not None
        self.cfg = json.loads(self.proc.stdout.readline())

    def bytes_sent(self) -> tuple[int, float]:
        """The bytes the sandbox sent, and the CPU seconds it used, since the last call."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("bytes\n")
        self.proc.stdin.flush()
        sent, cpu = json.loads(self.proc.stdout.readline())
        return int(sent), float(cpu)

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            self.proc.wait(timeout=30)


def _contend(server: _Server, modes: list[str], records: int, repeat: int, wan: bool,
             labels: dict[str, str]) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    for mode in modes:
        for _ in range(repeat):
            server.bytes_sent()  # reset
            cmd = [sys.executable, __file__, "--child", mode, "--records", str(records),
                   "--config", json.dumps(server.cfg)]
            if wan:
                cmd.append("--wan-child")
            out = subprocess.run(cmd, capture_output=True, text=True, check=False)
            wire, server_cpu = server.bytes_sent()
            if out.returncode != 0:
                print(f"{labels[mode]} failed:\n{out.stderr[-2000:]}", flush=True)
                break
            got = json.loads(out.stdout.strip().splitlines()[-1])
            got["wire"] = wire
            got["server_cpu"] = server_cpu
            print(f"  {mode}: {got['seconds']:.2f} s ({got['cpu']:.2f} s CPU; sandbox "
                  f"{server_cpu:.2f} s CPU), peak "
                  f"{got['peak_mb']:,.0f} MB "
                  f"({got['rows']:,} rows, {got['pages']} pages, {wire / 1e6:,.1f} MB on the "
                  "wire)", flush=True)
            best = results.get(mode)
            if best is None or got["seconds"] < best["seconds"]:
                results[mode] = {**got, "peak_mb": max(got["peak_mb"],
                                                       (best or got)["peak_mb"])}
    return results


def _environment() -> str:
    import platform

    import pandas as pd

    try:
        import pyarrow  # noqa: F401

        arrow = "pyarrow installed"
    except ImportError:
        arrow = "no pyarrow"
    return (f"Python {platform.python_version()}, pandas {pd.__version__}, {arrow}, "
            f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at the start")


def loopback(args: argparse.Namespace) -> None:
    server = _Server(args.records, None, False)
    cfg = server.cfg
    try:
        print(f"sandbox at {cfg['url']} (own process), policy scale {cfg['scale']:.2f}: group "
              f"{cfg['group']} holds {cfg['world_records']:,} records (built in "
              f"{cfg['build_seconds']} s); reading N = {args.records:,}", flush=True)
        results = _contend(server, args.modes.split(","), args.records, args.repeat, False,
                           LABELS)
    finally:
        server.close()
    print()
    size = ""
    if results.get("a", {}).get("wire"):
        a = results["a"]
        size = f", {a['wire'] / a['rows'] / 1000:.2f} kB a record ({a['wire'] / 1e9:.2f} GB)"
    print(f"N = {args.records:,} policy state records{size}, 1000 a page, loopback, sandbox in "
          f"its own process; best of {args.repeat} run(s) each, every run in a fresh process")
    print(f"{'contender':<58}{'wall s':>9}{'CPU s':>8}{'sandbox CPU s':>14}{'peak MB':>10}"
          f"{'rows':>11}")
    for mode, r in results.items():
        print(f"{LABELS[mode]:<58}{r['seconds']:>9.2f}{r['cpu']:>8.2f}{r['server_cpu']:>14.2f}"
              f"{r['peak_mb']:>10,.0f}{r['rows']:>11,}")
    if "a" in results and "c" in results:
        a, c = results["a"], results["c"]
        t_ratio = c["seconds"] / a["seconds"]
        c_ratio = c["cpu"] / a["cpu"]
        m_ratio = c["peak_mb"] / a["peak_mb"]
        print()
        print(f"time   (c)/(a) = {t_ratio:.2f}  (target <= 0.25: "
              f"{'met' if t_ratio <= 0.25 else 'NOT met'}); client CPU (c)/(a) = {c_ratio:.2f}")
        print(f"memory (c)/(a) = {m_ratio:.2f}  (target <= 0.10: "
              f"{'met' if m_ratio <= 0.10 else 'NOT met'})")
    if "b" in results and "c" in results:
        print(f"time   (c)/(b) = {results['c']['seconds'] / results['b']['seconds']:.2f}, "
              f"memory (c)/(b) = {results['c']['peak_mb'] / results['b']['peak_mb']:.2f}")


def wan(args: argparse.Namespace) -> None:
    rows: list[tuple[str, str, str, dict[str, Any]]] = []
    for mbit in [float(m) for m in args.wan.split(",")]:
        for compress in (False, True):
            server = _Server(args.records, mbit, compress)
            try:
                link = f"{RTT_MS:g} ms, {mbit:g} Mbit/s, {'gzip' if compress else 'identity'}"
                print(f"{link}: group {server.cfg['group']}, {server.cfg['world_records']:,} "
                      "records in the window", flush=True)
                results = _contend(server, args.modes.split(","), args.records, args.repeat,
                                   True, WAN_LABELS)
            finally:
                server.close()
            for mode, r in results.items():
                floor = r["wire"] * 8 / (mbit * 1e6)
                rows.append((f"{mbit:g} Mbit/s", "gzip" if compress else "identity", mode,
                             {**r, "floor": floor}))
    print()
    print(f"Modelled WAN: {RTT_MS:g} ms round trip, bandwidth per connection = the link's "
          f"(shared by all connections); whole 60-day window of the group; best of "
          f"{args.repeat} run(s), fresh processes")
    print(f"{'link':<14}{'body':<10}{'contender':<48}{'wall s':>8}{'CPU s':>7}{'sandbox':>8}"
          f"{'MB wire':>9}{'floor s':>9}{'x floor':>9}{'rows':>10}")
    naive: dict[tuple[str, str], float] = {}
    for link, body, mode, r in rows:
        if mode == "n":
            naive[(link, body)] = r["seconds"]
        print(f"{link:<14}{body:<10}{WAN_LABELS[mode]:<48}{r['seconds']:>8.2f}{r['cpu']:>7.2f}"
              f"{r['server_cpu']:>8.2f}{r['wire'] / 1e6:>9.1f}{r['floor']:>9.2f}"
              f"{r['seconds'] / r['floor']:>9.2f}"
              f"{r['rows']:>10,}")
    print()
    for link, body, mode, r in rows:
        if mode != "c":
            continue
        ratio = r["seconds"] / r["floor"]
        speedup = naive.get((link, body), float("nan")) / r["seconds"]
        if body == "identity":
            print(f"{link} identity: toolkit {ratio:.2f}x the floor (target <= 1.1: "
                  f"{'met' if ratio <= 1.1 else 'NOT met'})")
        else:
            print(f"{link} gzip: toolkit {ratio:.2f}x the floor (target <= 4: "
                  f"{'met' if ratio <= 4 else 'NOT met'}), {speedup:.1f}x faster than the naive "
                  f"loop (target >= 6: {'met' if speedup >= 6 else 'NOT met'})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000, help="N records to read")
    parser.add_argument("--modes", default=None,
                        help="contenders to run: a,b,c on loopback (default all), n,1,c with "
                             "--wan (default all)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per contender (best kept)")
    parser.add_argument("--wan", default=None,
                        help="modelled links to run, Mbit/s, e.g. 200,1000 (instead of loopback)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--mbit", type=float, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--compress", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--wan-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--config", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.records, args.mbit, args.compress)
        return 0
    if args.child:
        child(args.child, json.loads(args.config), args.records, args.wan_child)
        return 0
    print(_environment(), flush=True)
    if args.wan:
        args.modes = args.modes or "n,1,c"
        wan(args)
    else:
        args.modes = args.modes or "a,b,c"
        loopback(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
