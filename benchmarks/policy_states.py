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

Each is set against the bytes-on-the-wire floor (the bytes the server sent for that read over
the link's bandwidth). Each process reports its wall time (first request to finished frame) and
its peak resident memory; the contenders take turns (``--repeat`` turns).

Who serves the pages (``--server``, default both, one after the other): the sandbox, which
builds and compresses each page as it is asked, on the cores the client runs on; or the replay
server (``replay_server.py``), which records the sandbox's answers once and serves them from
memory behind the same network model, so that the figures measure the client. On it the script
also times msgspec's bare typed decode of the recorded pages, the least CPU a record this design
can cost.

    .venv/bin/python benchmarks/policy_states.py                       # N = 1,000,000, loopback
    .venv/bin/python benchmarks/policy_states.py --records 100000 --modes a,c --server replay
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
def serve(records: int, mbit: float | None, compress: bool, replay: bool = False) -> None:
    """Start a sandbox scaled for ``records`` (behind the modelled link when ``mbit`` is given),
    or, with ``replay``, a :class:`replay_server.ReplayServer` in front of one (the pages of the
    contenders' query recorded up front), print how to query it, then answer ``bytes`` lines on
    stdin with the bytes sent, the CPU seconds used and the answers built since the last one
    (and ``decode`` lines with the bare typed decode of the recorded pages), until stdin
    closes."""
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
    sandbox = Sandbox(seed=7, network=None if replay else network, compress=compress,
                      compress_level=1)
    if not replay:
        sandbox.start()
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
    token = sandbox.token("arm", expires_in=86400)
    cfg: dict[str, Any] = {"token": token, "subscription": sub.id, "group": group,
                           "scale": scale, "world_records": len(rec.ts)}
    player = None
    if replay:
        from replay_server import ReplayServer

        player = ReplayServer(sandbox, token, network=network, compress=compress,
                              compress_level=1).start()
        cfg["url"] = player.url
        # the contenders' query: N records on loopback, the whole window over the WAN
        player.record_chain("POST", _target(cfg, None if mbit else records))
        cfg["recorded_pages"] = len(player.chain)
        cfg["recorded_mb"] = sum(len(a.body) + len(a.gzipped or b"")
                                 for a in player.answers.values()) / 1e6
    else:
        cfg["url"] = sandbox.url
    cfg["build_seconds"] = round(time.perf_counter() - t0, 2)
    print(json.dumps(cfg), flush=True)
    sandbox.bytes_sent = 0
    if player is not None:
        player.take_counts()
    cpu = _cpu_s()
    try:
        for line in sys.stdin:
            command = line.strip()
            if command == "bytes":
                now = _cpu_s()
                if player is not None:
                    sent, built = player.take_counts()
                else:
                    sent, built = sandbox.bytes_sent, 0
                    sandbox.bytes_sent = 0
                print(json.dumps([sent, now - cpu, built]), flush=True)
                cpu = now
            elif command == "decode" and player is not None:
                print(json.dumps(_bare_decode(player)), flush=True)
                cpu = _cpu_s()
    finally:
        if player is not None:
            player.stop()
        sandbox.stop()


def _bare_decode(player: Any, repeat: int = 3) -> dict[str, Any]:
    """msgspec's bare typed decode of the recorded pages: ``msgspec.json.decode(body,
    type=Envelope)``, the envelope a Struct whose records are Structs of the policy states'
    fields, typed as the toolkit's decoder types them (text, categories and date-times as
    ``str``, flags as ``bool``, the rest as it comes); CPU seconds of each of ``repeat`` runs,
    identity and (where recorded) gzip-decompressed first."""
    from functools import partial

    import msgspec
    from replay_server import bare_decode_seconds

    from toolkit.arm._schemas import POLICY_STATES

    kinds = {"category": str | None, "string": str | None, "datetime": str | None,
             "boolean": bool | None}
    record = msgspec.defstruct("Record", [(c.name, kinds.get(c.kind, Any), None)
                                          for c in POLICY_STATES.columns],
                               kw_only=True, gc=False)
    envelope = msgspec.defstruct(
        "Envelope", [("items", list[record] | None,  # type: ignore[valid-type]
                      msgspec.field(default=None, name="value")),
                     ("link", str | None, msgspec.field(default=None, name="@odata.nextLink"))],
        kw_only=True)
    decode = partial(msgspec.json.decode, type=envelope)
    pages = player.chain_pages()
    out: dict[str, Any] = {"pages": len(pages), "identity": [], "gzip": []}
    for _ in range(repeat):
        seconds, records = bare_decode_seconds(pages, decode)
        out["identity"].append(seconds)
        out["records"] = records
        if all(p.gzipped is not None for p in pages):
            out["gzip"].append(bare_decode_seconds(pages, decode, gunzip=True)[0])
    return out


# ------------------------------------------------------------------------------ contenders
def _target(cfg: dict[str, Any], n: int | None) -> str:
    from urllib.parse import quote, urlencode

    params: dict[str, Any] = {"api-version": "2024-10-01", "$from": START, "$to": END}
    if n is not None:
        params["$top"] = n
    return (f"/subscriptions/{cfg['subscription']}/resourceGroups/{cfg['group']}/"
            f"providers/Vendor.PolicyInsights/policyStates/default/queryResults?"
            f"{urlencode(params, quote_via=quote, safe='$:')}")


def _url(cfg: dict[str, Any], n: int | None) -> str:
    return cfg["url"] + _target(cfg, n)


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
HELPER: list[Any] = []  # the second process of (2), started before the clock


def _half(cfg: dict[str, Any], start: str, end: str) -> tuple[Any, int, float]:
    """policy_states() over ``[start, end)`` of the window: the frame, its pages, the CPU
    seconds this process spent on it."""
    sys.path.insert(0, ROOT)
    import toolkit

    c0 = _cpu_s()
    conn = toolkit.connect(cfg["url"], token=cfg["token"], progress=False)
    df = toolkit.policy_states(cfg["subscription"], cfg["group"], resource="default",
                               start=start, end=end, connection=conn)
    return df, len(df.attrs["request_ids"]), _cpu_s() - c0


def run_2(cfg: dict[str, Any], n: int) -> tuple[int, int]:
    """The window read in two processes, each reading half of it with policy_states() (the
    helper process, forked before the clock, reads the older half); the halves joined into
    one frame, newest first, with the categories of both (in the first half's order, so that
    ordered categories stay ordered). An experiment of the benchmark, not the toolkit's."""
    import pandas as pd

    mid = (pd.Timestamp(START) + (pd.Timestamp(END) - pd.Timestamp(START)) / 2).floor("s")
    mid_text = mid.strftime("%Y-%m-%dT%H:%M:%SZ")
    older = HELPER[0].apply_async(_half, (cfg, START, mid_text))
    newer, pages, _ = _half(cfg, mid_text, END)
    old_df, old_pages, helper_cpu = older.get()
    HELPER.append(helper_cpu)
    columns = {}
    for name in newer.columns:
        a, b = newer[name], old_df[name]
        if isinstance(a.dtype, pd.CategoricalDtype) and isinstance(b.dtype, pd.CategoricalDtype):
            both = a.cat.categories.union(b.cat.categories, sort=False)  # a's order first
            columns[name] = pd.concat([a.cat.set_categories(both), b.cat.set_categories(both)],
                                      ignore_index=True)
        else:
            columns[name] = pd.concat([a, b], ignore_index=True)
    df = pd.DataFrame(columns)
    return len(df), pages + old_pages


def _decoding_worker(conn: Any) -> None:
    """The second process of (3): decodes and interns the pages it is sent, one builder per
    chain, exactly as policy_states() would in the reading process; joins and builds on demand.
    """
    sys.path.insert(0, ROOT)
    import importlib

    import orjson

    from toolkit._core.columns import InterningBuilder, page_decoder
    from toolkit.arm._schemas import POLICY_STATES

    policy: Any = importlib.import_module("toolkit.arm.policy")
    groups = (policy.RESOURCE_FIELDS, policy.POLICY_FIELDS)  # the groups policy_states() uses
    columns = list(POLICY_STATES.columns)
    decode = page_decoder(columns, "value", "@odata.nextLink")
    builders: dict[int, Any] = {}

    def builder(chain: int) -> Any:
        if chain not in builders:
            builders[chain] = InterningBuilder(columns, groups=groups)
        return builders[chain]

    while True:
        message = conn.recv()
        if message[0] == "page":
            content = conn.recv_bytes()
            typed = decode(content)
            records = typed[1] if typed is not None else orjson.loads(content)["value"]
            builder(message[1]).add(records)
            del records, typed
        elif message[0] == "absorb":
            builder(message[1]).absorb(builder(message[2]))
        elif message[0] == "build":
            conn.send(builder(message[1]).build())
            builders.clear()
        elif message[0] == "cpu":
            conn.send(_cpu_s())
        else:
            return


def _remote_builders(conn: Any) -> tuple[Any, Any]:
    """A page decoder that hands each page's bytes on undecoded (the next link read from the
    envelope's head), and a stand-in for InterningBuilder that sends them to the second process
    of (3)."""
    import itertools
    import threading

    import orjson

    sys.path.insert(0, ROOT)
    from toolkit._core.paging import ODATA, UNKNOWN, envelope_next_link

    lock = threading.Lock()
    numbers = itertools.count()

    def page_decoder(columns: Any, items_key: str, next_key: str) -> Any:
        def decode(content: bytes) -> tuple[dict[str, Any], list[Any]]:
            link = envelope_next_link(content, ODATA)
            if link is UNKNOWN:
                link = orjson.loads(content).get(next_key)
            return {next_key: link}, [content]
        return decode

    class RemoteBuilder:
        def __init__(self, columns: Any, groups: Any = ()) -> None:
            self.chain = next(numbers)
            self.rows = 0  # pages, here (the records are counted in the other process)

        def add(self, items: list[Any]) -> None:
            with lock:
                conn.send(("page", self.chain))
                conn.send_bytes(items[0])
            self.rows += 1

        def absorb(self, other: Any) -> None:
            with lock:
                conn.send(("absorb", self.chain, other.chain))
            self.rows += other.rows
            other.rows = 0

        def build(self, attrs: Any = None) -> Any:
            with lock:
                conn.send(("build", self.chain))
                df = conn.recv()
            if attrs:
                df.attrs.update(attrs)
            return df

    return page_decoder, RemoteBuilder


def run_3(cfg: dict[str, Any], n: int) -> tuple[int, int]:
    """policy_states() reading the pages, a second process (forked before the clock) decoding
    and interning them: the bodies cross a pipe undecoded, the frame comes back pickled. An
    experiment of the benchmark, not the toolkit's."""
    sys.path.insert(0, ROOT)
    import importlib

    import toolkit

    policy: Any = importlib.import_module("toolkit.arm.policy")
    conn = HELPER[0]
    policy.page_decoder, policy.InterningBuilder = _remote_builders(conn)
    connection = toolkit.connect(cfg["url"], token=cfg["token"], progress=False)
    df = toolkit.policy_states(cfg["subscription"], cfg["group"], resource="default",
                               start=START, end=END, top=n if n else None,
                               connection=connection)
    conn.send(("cpu",))
    HELPER.append(conn.recv())
    return len(df), len(df.attrs["request_ids"])


def run_3w(cfg: dict[str, Any], n: int) -> tuple[int, int]:
    """(3) over the whole window."""
    return run_3(cfg, 0)


RUNS["3"] = run_3
WAN_RUNS = {"n": run_n, "1": run_1, "c": run_w, "2": run_2, "3": run_3w}


def child(mode: str, cfg: dict[str, Any], n: int, wan: bool) -> None:
    """One contender in this (fresh) process; prints one JSON line."""
    import orjson  # noqa: F401 - imports are not part of the timing
    import pandas  # noqa: F401
    import requests  # noqa: F401

    if mode in ("c", "1", "2", "3"):
        sys.path.insert(0, ROOT)
        import toolkit.arm.policy  # noqa: F401
    if mode == "2":
        import multiprocessing

        HELPER.append(multiprocessing.get_context("fork").Pool(1))
        HELPER[0].apply(_cpu_s)  # started and ready before the clock
    worker = None
    if mode == "3":
        import multiprocessing

        ctx = multiprocessing.get_context("fork")
        mine, theirs = ctx.Pipe()
        worker = ctx.Process(target=_decoding_worker, args=(theirs,), daemon=True)
        worker.start()
        mine.send(("cpu",))
        mine.recv()  # started and ready before the clock
        HELPER.append(mine)
    base = _peak_mb()
    t0 = time.perf_counter()
    c0 = _cpu_s()
    rows, pages = (WAN_RUNS if wan else RUNS)[mode](cfg, n)
    seconds = time.perf_counter() - t0
    helper_cpu = float(HELPER[1]) if len(HELPER) > 1 else 0.0
    if worker is not None:
        HELPER[0].send(("stop",))
        worker.join(10)
    elif HELPER:
        HELPER[0].terminate()
    print(json.dumps({"mode": mode, "rows": rows, "pages": pages, "seconds": seconds,
                      "cpu": _cpu_s() - c0 + helper_cpu,
                      "peak_mb": _peak_mb(), "baseline_mb": base, "bytes": BYTES[0]}),
          flush=True)


# ------------------------------------------------------------------------------ driver
LABELS = {
    "a": "(a) requests + orjson.loads + pd.DataFrame(records)",
    "b": "(b) requests + json + pd.json_normalize",
    "c": "(c) toolkit.policy_states() typed frame",
    "3": "(3) (c), a second process decoding and interning",
}
WAN_LABELS = {
    "n": "(n) naive loop (requests + orjson + pd.DataFrame)",
    "1": "(1) policy_states(partitions=1): one chain",
    "c": "(c) policy_states(): concurrent time slices",
    "2": "(2) two processes, half the window each",
    "3": "(3) (c), a second process decoding and interning",
}


class _Server:
    """The sandbox, or the replay server in front of one, in a process of its own."""

    def __init__(self, records: int, mbit: float | None, compress: bool,
                 replay: bool = False) -> None:
        cmd = [sys.executable, __file__, "--serve", "--records", str(records)]
        if mbit:
            cmd += ["--mbit", str(mbit)]
        if compress:
            cmd += ["--compress"]
        if replay:
            cmd += ["--replay"]
        self.kind = "replay" if replay else "sandbox"
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)
        assert self.proc.stdout is not None
        self.cfg = json.loads(self.proc.stdout.readline())

    def _ask(self, command: str) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def bytes_sent(self) -> tuple[int, float, int]:
        """The bytes the server sent, the CPU seconds it used and the answers it had to build
        (the replay server: answers it had not recorded), since the last call."""
        sent, cpu, built = self._ask("bytes")
        return int(sent), float(cpu), int(built)

    def bare_decode(self) -> dict[str, Any]:
        """msgspec's bare typed decode of the recorded pages (the replay server only)."""
        return dict(self._ask("decode"))

    def describe(self) -> str:
        cfg = self.cfg
        text = (f"{self.kind} at {cfg['url']} (own process), policy scale {cfg['scale']:.2f}: "
                f"group {cfg['group']} holds {cfg['world_records']:,} records (ready in "
                f"{cfg['build_seconds']} s)")
        if "recorded_pages" in cfg:
            text += (f"; {cfg['recorded_pages']} pages recorded up front, "
                     f"{cfg['recorded_mb']:,.0f} MB in memory")
        return text

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            self.proc.wait(timeout=30)


def _contend(server: _Server, modes: list[str], records: int, repeat: int, wan: bool,
             labels: dict[str, str]) -> dict[str, list[dict[str, Any]]]:
    """Every contender ``repeat`` times, taking turns (a, c, a, c, ...), each run in a fresh
    process. A run during which the replay server had to build answers it had not recorded
    (the toolkit's counts and time slices, the first time) records them and is run again."""
    results: dict[str, list[dict[str, Any]]] = {m: [] for m in modes}
    failed: set[str] = set()
    for _ in range(repeat):
        for mode in modes:
            if mode in failed:
                continue
            for _attempt in range(2):
                server.bytes_sent()  # reset
                cmd = [sys.executable, __file__, "--child", mode, "--records", str(records),
                       "--config", json.dumps(server.cfg)]
                if wan:
                    cmd.append("--wan-child")
                out = subprocess.run(cmd, capture_output=True, text=True, check=False)
                wire, server_cpu, built = server.bytes_sent()
                if out.returncode != 0:
                    print(f"{labels[mode]} failed:\n{out.stderr[-2000:]}", flush=True)
                    failed.add(mode)
                    break
                got = json.loads(out.stdout.strip().splitlines()[-1])
                got.update(wire=wire, server_cpu=server_cpu, built=built)
                note = f"; recording run ({built} answers built), run again" if built else ""
                print(f"  {server.kind} {mode}: {got['seconds']:.2f} s ({got['cpu']:.2f} s CPU; "
                      f"{server.kind} {server_cpu:.2f} s CPU), peak {got['peak_mb']:,.0f} MB "
                      f"({got['rows']:,} rows, {got['pages']} pages, {wire / 1e6:,.1f} MB on "
                      f"the wire){note}", flush=True)
                if not (built and server.kind == "replay"):
                    results[mode].append(got)
                    break
    return {m: runs for m, runs in results.items() if runs}


def _best(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The fastest run, with the range of wall times and the highest peak of all runs."""
    best = min(runs, key=lambda r: r["seconds"])
    return {**best, "slowest": max(r["seconds"] for r in runs), "runs": len(runs),
            "peak_mb": max(r["peak_mb"] for r in runs)}


def _span(values: list[float], fmt: str = ".2f") -> str:
    lo, hi = min(values), max(values)
    return f"{lo:{fmt}}" if len(values) == 1 or f"{lo:{fmt}}" == f"{hi:{fmt}}" \
        else f"{lo:{fmt}}-{hi:{fmt}}"


def _pair_ratios(runs: dict[str, list[dict[str, Any]]], num: str, den: str,
                 key: str = "seconds") -> list[float]:
    """``num``/``den`` for each turn (the runs of one turn ran one after the other)."""
    return [n[key] / d[key] for n, d in zip(runs.get(num, []), runs.get(den, []), strict=False)]


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


def _decode_line(server: _Server, client: dict[str, Any], gunzip: bool) -> str:
    """The client's CPU a record beside msgspec's bare typed decode of the same pages."""
    floor = server.bare_decode()
    times = floor["gzip" if gunzip else "identity"]
    if not times:
        return ""
    per = [t / floor["records"] * 1e6 for t in times]
    mine = client["cpu"] / client["rows"] * 1e6
    what = "gunzip + msgspec typed decode" if gunzip else "msgspec typed decode"
    ratio = mine / min(per)
    return (f"client CPU a record (c): {mine:.2f} us; {what} of the same {floor['pages']} "
            f"pages ({floor['records']:,} records): {_span(per)} us (runs: {len(per)}); "
            f"ratio {ratio:.2f} (aim <= 1.5: {'met' if ratio <= 1.5 else 'NOT met'})")


def loopback(args: argparse.Namespace) -> None:
    results: dict[str, dict[str, list[dict[str, Any]]]] = {}
    notes: list[str] = []
    for kind in args.kinds:
        server = _Server(args.records, None, False, replay=kind == "replay")
        try:
            print(f"{server.describe()}; reading N = {args.records:,}", flush=True)
            results[kind] = _contend(server, args.modes.split(","), args.records, args.repeat,
                                     False, LABELS)
            if kind == "replay" and "c" in results[kind]:
                notes.append(_decode_line(server, _best(results[kind]["c"]), False))
        finally:
            server.close()
    print()
    for kind, runs in results.items():
        best = {m: _best(r) for m, r in runs.items()}
        size = ""
        if best.get("a", {}).get("wire"):
            a = best["a"]
            size = (f", {a['wire'] / a['rows'] / 1000:.2f} kB a record "
                    f"({a['wire'] / 1e9:.2f} GB)")
        print(f"N = {args.records:,} policy state records{size}, 1000 a page, loopback, served "
              f"by the {kind} in its own process; {args.repeat} turn(s), contenders taking "
              "turns, every run in a fresh process; best and range of wall times")
        print(f"{'contender':<58}{'wall s':>8}{'range':>13}{'CPU s':>8}{kind + ' CPU s':>15}"
              f"{'peak MB':>9}{'rows':>11}")
        for mode, r in best.items():
            print(f"{LABELS[mode]:<58}{r['seconds']:>8.2f}"
                  f"{_span([x['seconds'] for x in runs[mode]]):>13}{r['cpu']:>8.2f}"
                  f"{r['server_cpu']:>15.2f}{r['peak_mb']:>9,.0f}{r['rows']:>11,}")
        if "a" in best and "c" in best:
            a, c = best["a"], best["c"]
            t_ratio = c["seconds"] / a["seconds"]
            m_ratio = c["peak_mb"] / a["peak_mb"]
            print(f"{kind}: time (c)/(a) = {t_ratio:.3f} best against best, "
                  f"{_span(_pair_ratios(runs, 'c', 'a'), '.3f')} turn by turn (target <= 0.25: "
                  f"{'met' if t_ratio <= 0.25 else 'NOT met'}); client CPU (c)/(a) = "
                  f"{_span(_pair_ratios(runs, 'c', 'a', 'cpu'))}")
            print(f"{kind}: memory (c)/(a) = {m_ratio:.2f}  (target <= 0.10: "
                  f"{'met' if m_ratio <= 0.10 else 'NOT met'})")
        if "b" in best and "c" in best:
            print(f"{kind}: time (c)/(b) = {best['c']['seconds'] / best['b']['seconds']:.2f}, "
                  f"memory (c)/(b) = {best['c']['peak_mb'] / best['b']['peak_mb']:.2f}")
        print()
    for note in notes:
        if note:
            print(f"replay: {note}")


def wan(args: argparse.Namespace) -> None:
    rows: list[tuple[str, str, str, str, dict[str, Any], list[dict[str, Any]]]] = []
    notes: list[str] = []
    for mbit in [float(m) for m in args.wan.split(",")]:
        for compress in [body == "gzip" for body in args.bodies.split(",")]:
            for kind in args.kinds:
                server = _Server(args.records, mbit, compress, replay=kind == "replay")
                try:
                    link = f"{RTT_MS:g} ms, {mbit:g} Mbit/s, {'gzip' if compress else 'identity'}"
                    print(f"{link}: {server.describe()}", flush=True)
                    results = _contend(server, args.modes.split(","), args.records,
                                       args.repeat, True, WAN_LABELS)
                    if kind == "replay" and "c" in results:
                        line = _decode_line(server, _best(results["c"]), compress)
                        if line:
                            notes.append(f"{link}: {line}")
                finally:
                    server.close()
                for mode, runs in results.items():
                    r = _best(runs)
                    floor = r["wire"] * 8 / (mbit * 1e6)
                    rows.append((kind, f"{mbit:g} Mbit/s", "gzip" if compress else "identity",
                                 mode, {**r, "floor": floor}, runs))
    print()
    print(f"Modelled WAN: {RTT_MS:g} ms round trip, bandwidth per connection = the link's "
          f"(shared by all connections); whole 60-day window of the group; {args.repeat} "
          "turn(s), contenders taking turns, fresh processes; best and range of wall times")
    print(f"{'server':<8}{'link':<14}{'body':<10}{'contender':<46}{'wall s':>8}{'range':>12}"
          f"{'CPU s':>7}{'server':>7}{'MB wire':>9}{'floor s':>8}{'x floor':>8}{'rows':>9}")
    naive: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for kind, link, body, mode, r, runs in rows:
        if mode == "n":
            naive[(kind, link, body)] = runs
        print(f"{kind:<8}{link:<14}{body:<10}{WAN_LABELS[mode]:<46}{r['seconds']:>8.2f}"
              f"{_span([x['seconds'] for x in runs]):>12}{r['cpu']:>7.2f}"
              f"{r['server_cpu']:>7.2f}{r['wire'] / 1e6:>9.1f}{r['floor']:>8.2f}"
              f"{r['seconds'] / r['floor']:>8.2f}{r['rows']:>9,}")
    print()
    for kind, link, body, mode, r, runs in rows:
        if mode != "c":
            continue
        ratio = r["seconds"] / r["floor"]
        if body == "identity":
            print(f"{kind} {link} identity: toolkit {ratio:.2f}x the floor (target <= 1.1: "
                  f"{'met' if ratio <= 1.1 else 'NOT met'})")
            continue
        n_runs = naive.get((kind, link, body), [])
        speedup = (min(x["seconds"] for x in n_runs) / r["seconds"]) if n_runs \
            else float("nan")
        turns = [n["seconds"] / c["seconds"] for n, c in zip(n_runs, runs, strict=False)]
        print(f"{kind} {link} gzip: toolkit {ratio:.2f}x the floor (target <= 4: "
              f"{'met' if ratio <= 4 else 'NOT met'}), {speedup:.1f}x faster than the naive "
              f"loop best against best, {_span(turns, '.1f') if turns else '-'} turn by turn "
              f"(target >= 6: {'met' if speedup >= 6 else 'NOT met'})")
    for note in notes:
        print(f"replay {note}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000, help="N records to read")
    parser.add_argument("--modes", default=None,
                        help="contenders to run: a,b,c on loopback (default all), n,1,c with "
                             "--wan (default), or 2 (two processes, half the window each)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per contender (best kept)")
    parser.add_argument("--wan", default=None,
                        help="modelled links to run, Mbit/s, e.g. 200,1000 (instead of loopback)")
    parser.add_argument("--bodies", default="identity,gzip",
                        help="with --wan: the bodies to read, identity, gzip or both "
                             "(default identity,gzip)")
    parser.add_argument("--server", choices=("sandbox", "replay", "both"), default="both",
                        help="who serves the pages: the sandbox (building each page as asked), "
                             "the replay server (the sandbox's pages recorded once, served "
                             "from memory), or both, one after the other (default)")
    parser.add_argument("--replay", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--mbit", type=float, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--compress", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--wan-child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--config", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.records, args.mbit, args.compress, replay=args.replay)
        return 0
    if args.child:
        child(args.child, json.loads(args.config), args.records, args.wan_child)
        return 0
    args.kinds = ["sandbox", "replay"] if args.server == "both" else [args.server]
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
