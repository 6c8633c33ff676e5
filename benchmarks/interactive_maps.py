"""Interactive maps of large frames: first draw, a zoom step and a pan step in a real browser.

Builds two large frames against the sandbox (a 20,000-point GPS trace snapped to the roads, and
1,000 routes), draws each with :mod:`toolkit.explore` (compact layers: encoded geometry thinned
per zoom level, one record table per layer, one canvas past ``CANVAS_FROM`` features) and
measures, in headless Chromium (the system package, driven by Playwright), the time from opening
the page to the map being drawn, the mean time of one zoom step and of one pan step redrawn
(what a user feels when panning and zooming), beside the Python time to build the page and its
size. The figures of the previous way of drawing (one GeoJSON feature per row with its own
tooltip and popup HTML, Leaflet and the roads written into every map) are printed beside them
with ``--before`` a checkout of the previous code (``git worktree add /tmp/before <commit>``),
measured by this same script in a process of its own, in the same run.

lonboard (deck.gl) is not a contender here: it draws through a Jupyter widget whose front end is
loaded from a CDN outside Jupyter, which the offline sandbox world cannot reach.

Run: ``.venv/bin/python benchmarks/interactive_maps.py [--before CHECKOUT]`` (needs the ``maps``
extra, Chromium at /usr/bin/chromium and the ``bench`` extra: ``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import toolkit
import toolkit.explore as explore
from toolkit.sandbox.maps.roads.matching import sample_trace
from toolkit.sandbox.maps.roads.network import network
from toolkit.sandbox.maps.roads.routing import route as road_route
from toolkit.sandbox.server import Sandbox

TOWNS = [(1.5218, 42.5075), (1.5975, 42.5676), (1.4906, 42.4636), (1.5331, 42.5560),
         (1.5148, 42.5450), (1.5804, 42.5345), (1.6675, 42.5766)]

_REDRAW = """async () => {
    const name = Object.keys(window).find(k => k.startsWith("map_"));
    const m = window[name];
    const frame = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
    await frame();
    const nav = performance.getEntriesByType("navigation")[0];
    const drawn = performance.now();
    const t0 = performance.now();
    for (let i = 0; i < 5; i++) {
        m.setZoom(m.getZoom() + 1, {animate: false}); await frame();
        m.setZoom(m.getZoom() - 1, {animate: false}); await frame();
    }
    const zoom = (performance.now() - t0) / 10;
    const t1 = performance.now();
    for (let i = 0; i < 5; i++) {
        m.panBy([150, 0], {animate: false}); await frame();
        m.panBy([-150, 0], {animate: false}); await frame();
    }
    return {load_ms: nav.loadEventEnd, drawn_ms: drawn, zoom_ms: zoom,
            pan_ms: (performance.now() - t1) / 10,
            paths: document.querySelectorAll("path.leaflet-interactive").length,
            canvases: document.querySelectorAll("canvas.leaflet-zoom-animated").length};
}"""


def trace_frames(conn: Any, points: int) -> tuple[np.ndarray, Any]:
    net = network()
    usable = net.usable("driving")
    stops = TOWNS * 8
    snapped = [net.nearest(p, usable)[:2] for p in stops]
    found = road_route(net, stops, snapped=snapped)
    line = [c for leg in found.coordinates for c in leg]
    length_m = sum(np.hypot(*(np.diff(np.array(line), axis=0) * [82_000, 111_000]).T))
    raw = sample_trace(line, spacing_m=length_m / points, noise_m=4, seed=3)[:points]
    return raw, toolkit.snap_to_roads(raw, include_speed_limit=True, connection=conn)


def route_frame(conn: Any, count: int) -> Any:
    rng = np.random.default_rng(5)
    queries = []
    for _ in range(count):
        a, b = rng.choice(len(TOWNS), 2, replace=False)
        jitter = rng.normal(0, 0.003, 4)
        queries.append({"origin": (TOWNS[a][0] + jitter[0], TOWNS[a][1] + jitter[1]),
                        "destination": (TOWNS[b][0] + jitter[2], TOWNS[b][1] + jitter[3])})
    return toolkit.route_directions(queries, connection=conn)


def measure(page: Any, make: Any, folder: Path, label: str) -> dict[str, Any]:
    started = time.perf_counter()
    m = make()
    html = m.get_root().render()
    build = time.perf_counter() - started
    path = folder / f"{label}.html"
    path.write_text(html, encoding="utf-8")
    page.goto(path.as_uri(), wait_until="load", timeout=600_000)
    got = page.evaluate(_REDRAW)
    return {"build_s": build, "mb": len(html.encode()) / 1e6, **got}


def run(points: int, count: int) -> list[tuple[str, dict[str, Any]]]:
    """Measure both maps with the toolkit imported here."""
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    with Sandbox(seed=7) as sb, tempfile.TemporaryDirectory() as tmp:
        conn = toolkit.connect(sandbox=sb, progress=False)
        raw, snapped = trace_frames(conn, points)
        routes = route_frame(conn, count)
        cases = {
            "trace": (f"trace {len(raw):,} points", lambda: explore.snapped_trace(raw, snapped)),
            "routes": (f"{int(routes.geometry.notna().sum()):,} routes",
                       lambda: explore.routes(routes)),
        }
        rows = []
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium,
                                        args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1000, "height": 700})
            for key, (name, make) in cases.items():
                rows.append((name, measure(page, make, Path(tmp), key)))
            browser.close()
        conn.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=20_000)
    parser.add_argument("--routes", type=int, default=1_000)
    parser.add_argument("--before", type=Path, default=None,
                        help="a checkout of the previous code (e.g. a git worktree of the "
                             "previous commit): measured too, in a process of its own")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.json:  # the measurement of another checkout, for --before
        print(json.dumps(run(args.points, args.routes)))
        return
    before: dict[str, dict[str, Any]] = {}
    if args.before is not None:
        env = {**os.environ, "PYTHONPATH": str(args.before.resolve())}
        done = subprocess.run([sys.executable, __file__, "--json", "--points", str(args.points),
                               "--routes", str(args.routes)], env=env, capture_output=True,
                              text=True, check=True)
        before = {name: r for name, r in json.loads(done.stdout.strip().splitlines()[-1])}
    rows = run(args.points, args.routes)
    print(f"load average (1, 5, 15 min): {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    head = (f"{'frame':<22} {'code':<7} {'build s':>8} {'page MB':>8} {'drawn ms':>9} "
            f"{'zoom step ms':>13} {'pan step ms':>12} {'SVG paths':>10}")
    print(head)
    for name, r in rows:
        for label, got in (("before", before.get(name)), ("now", r)):
            if got is None:
                continue
            print(f"{name:<22} {label:<7} {got['build_s']:>8.2f} {got['mb']:>8.2f} "
                  f"{got['drawn_ms']:>9.0f} {got['zoom_ms']:>13.0f} {got['pan_ms']:>12.0f} "
                  f"{got['paths']:>10,}")


if __name__ == "__main__":
    main()
