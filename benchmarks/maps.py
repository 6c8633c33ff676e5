"""Route batches and long snap-to-roads traces: concurrent chunking against sequential loops.

The sandbox runs in its own process (as a real service runs elsewhere) with 100 ms of latency
injected into every route call. In the same run the script measures:

* 1,000 route queries: ``route_directions`` (10 batches of 100, sent concurrently within the
  service's documented 10 batch calls per second), the same batches one after another, and a
  plain loop of one query per call;
* a 20,000-point GPS trace (about 200 km): ``snap_to_roads`` (overlapping windows snapped
  concurrently within 50 calls per second), and the same windows one after another;

checks that every method gives the same answer, and prints the speed-ups and the highest number
of calls the sandbox saw in any one second against the documented rates.

Run: ``.venv/bin/python benchmarks/maps.py`` (``--naive 200`` times the one-query loop on 200
queries only and scales it up, to save two minutes).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import random
import sys
import time
from typing import Any

import numpy as np


def _serve(pipe: Any, latency_ms: float) -> None:
    from toolkit.sandbox.maps import peak_rate
    from toolkit.sandbox.maps.roads.network import network
    from toolkit.sandbox.server import Sandbox

    sandbox = Sandbox(seed=7).start()
    sandbox.inject("latency", latency_ms=latency_ms, path="/route/")
    network()  # loaded before the clock starts, as a warm service would have it
    pipe.send((sandbox.url, sandbox.maps_key.reveal()))
    while True:
        cmd, *args = pipe.recv()
        if cmd == "now":
            pipe.send(time.monotonic())
        elif cmd == "peak":
            pipe.send(peak_rate(sandbox, args[0], since=args[1]))
        else:
            sandbox.stop()
            pipe.send("stopped")
            return


def _queries(n: int, seed: int = 1) -> list[dict[str, Any]]:
    from toolkit.sandbox.maps.search import entities

    places = [(e.lon, e.lat, e.name) for e in entities() if e.type == "PopulatedPlace"]
    rng = random.Random(seed)
    out = []
    for i in range(n):
        a, b = rng.sample(places, 2)
        out.append({"origin": (a[0], a[1]), "destination": (b[0], b[1]),
                    "optionalId": f"{i:04d} {a[2]} -> {b[2]}"})
    return out


def _trace(points: int) -> np.ndarray:
    from toolkit.sandbox.maps.roads.matching import sample_trace
    from toolkit.sandbox.maps.roads.network import network
    from toolkit.sandbox.maps.roads.routing import route as plan
    from toolkit.sandbox.maps.search import entities

    towns = {e.name: (e.lon, e.lat) for e in entities() if e.type == "PopulatedPlace"}
    order = ["Sant Julià de Lòria", "Canillo", "Andorra la Vella", "Ordino", "Encamp",
             "La Massana", "Soldeu", "Sant Julià de Lòria", "Ordino", "Canillo",
             "Andorra la Vella", "Encamp", "Soldeu", "Sant Julià de Lòria", "La Massana",
             "Canillo", "Sant Julià de Lòria"]
    stops = [towns[t] for t in order]
    net = network()
    usable = net.usable("driving")
    route = plan(net, stops, snapped=[net.nearest(p, usable)[:2] for p in stops])
    line = [c for leg in route.coordinates for c in leg]
    trace = sample_trace(line, spacing_m=10, noise_m=5, seed=3)
    assert len(trace) >= points, len(trace)
    return trace[:points]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--points", type=int, default=20_000)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--naive", type=int, default=None,
                        help="queries timed in the one-query-per-call loop (default: all)")
    args = parser.parse_args(argv)

    import toolkit
    from toolkit.sandbox.maps import DOCUMENTED_QPS

    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    server = ctx.Process(target=_serve, args=(child, args.latency_ms), daemon=True)
    server.start()
    url, key = parent.recv()

    def ask(*msg: Any) -> Any:
        parent.send(msg)
        return parent.recv()

    one_at_a_time = toolkit.connect(url, maps_key=key, progress=False, max_concurrency=1)
    conn = toolkit.connect(url, maps_key=key, progress=False)
    queries = _queries(args.queries)
    trace = _trace(args.points)
    out = sys.stdout
    out.write(f"sandbox in its own process at {url}; {args.latency_ms:g} ms latency per route "
              f"call; {conn.settings.max_concurrency} concurrent requests\n\n")

    # ---- routes
    toolkit.route_directions(queries[:5], connection=conn)  # warm-up (connections, caches)
    mark = ask("now")
    t0 = time.perf_counter()
    fast = toolkit.route_directions(queries, connection=conn)
    t_fast = time.perf_counter() - t0
    peak_batch = ask("peak", "route_directions_batch", mark)
    t0 = time.perf_counter()
    chunked = toolkit.route_directions(queries, connection=one_at_a_time)
    t_chunked = time.perf_counter() - t0
    naive_n = args.naive or len(queries)
    t0 = time.perf_counter()
    naive_rows = [toolkit.route_directions([q], connection=one_at_a_time) for q in
                  queries[:naive_n]]
    t_naive = (time.perf_counter() - t0) * len(queries) / naive_n
    same = (fast["distanceInMeters"].tolist() == chunked["distanceInMeters"].tolist() and
            fast["optionalId"].tolist() == chunked["optionalId"].tolist() and
            [float(r["distanceInMeters"].iloc[0]) for r in naive_rows] ==
            fast.groupby("query_index")["distanceInMeters"].first().tolist()[:naive_n])

    # ---- snap to roads
    toolkit.snap_to_roads(trace[:200], connection=conn)  # warm-up
    mark = ask("now")
    t0 = time.perf_counter()
    snapped = toolkit.snap_to_roads(trace, connection=conn)
    t_snap = time.perf_counter() - t0
    peak_snap = ask("peak", "snap_to_roads", mark)
    t0 = time.perf_counter()
    snapped_seq = toolkit.snap_to_roads(trace, connection=one_at_a_time)
    t_snap_seq = time.perf_counter() - t0
    same_snap = snapped["inputIndex"].tolist() == snapped_seq["inputIndex"].tolist() and \
        snapped.geometry.equals(snapped_seq.geometry)
    ask("stop")
    server.join(5)

    rows = [
        ("1,000 routes: route_directions (10 batches, concurrent)", t_fast, None),
        ("1,000 routes: the same 10 batches, one after another", t_chunked, t_chunked / t_fast),
        (f"1,000 routes: one query per call, in a loop"
         f"{'' if naive_n == len(queries) else f' ({naive_n} timed, scaled)'}", t_naive,
         t_naive / t_fast),
        (f"{len(trace):,}-point trace: snap_to_roads ({snapped.attrs['windows']} windows, "
         "concurrent)", t_snap, None),
        ("    the same windows, one after another", t_snap_seq, t_snap_seq / t_snap),
    ]
    out.write(f"{'what':<72} {'seconds':>8} {'toolkit is':>11}\n")
    for what, secs, ratio in rows:
        out.write(f"{what:<72} {secs:8.2f} {(f'{ratio:.1f}x faster') if ratio else '':>11}\n")
    out.write("\n")
    out.write(f"routes: {len(fast)} rows, {fast['error.code'].notna().sum()} failed; same "
              f"answers from every method: {same}\n")
    out.write(f"snap: {len(snapped):,} snapped points of {len(trace):,}; same answers: "
              f"{same_snap}\n")
    ok_batch = peak_batch <= DOCUMENTED_QPS["route_directions_batch"]
    ok_snap = peak_snap <= DOCUMENTED_QPS["snap_to_roads"]
    out.write(f"most route batch calls in any second: {peak_batch} (documented limit "
              f"{DOCUMENTED_QPS['route_directions_batch']}): "
              f"{'never exceeded' if ok_batch else 'EXCEEDED'}\n")
    out.write(f"most snap calls in any second: {peak_snap} (documented limit "
              f"{DOCUMENTED_QPS['snap_to_roads']}): "
              f"{'never exceeded' if ok_snap else 'EXCEEDED'}\n")
    conn.close()
    one_at_a_time.close()
    return 0 if (same and same_snap and ok_batch and ok_snap) else 1


if __name__ == "__main__":
    raise SystemExit(main())
