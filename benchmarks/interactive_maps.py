"""Interactive maps of large frames: which way of drawing stays responsive.

Builds two large frames against the sandbox (a 20,000-point GPS trace snapped to the roads, and
1,000 routes), draws each with :mod:`toolkit.explore` in two ways:

(a) folium, one SVG element per feature (Leaflet's default renderer);
(b) folium on one canvas (``prefer_canvas``: what ``toolkit.explore`` chooses past
    ``CANVAS_FROM`` features);

and measures, in headless Chromium (the system package, driven by Playwright), the time from
opening the page to the map being drawn and the mean time of one zoom step redrawn (what a user
feels when panning and zooming), beside the Python time to build the page and its size.

lonboard (deck.gl) is not a contender here: it draws through a Jupyter widget whose front end is
loaded from a CDN outside Jupyter, which the offline sandbox world cannot reach.

Run: ``.venv/bin/python benchmarks/interactive_maps.py`` (needs the ``maps`` extra, Chromium at
/usr/bin/chromium and the ``bench`` extra: ``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import toolkit
import toolkit.explore as explore
from toolkit.explore import _common
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
    return {load_ms: nav.loadEventEnd, drawn_ms: drawn, zoom_ms: (performance.now() - t0) / 10,
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


def measure(page: Any, make: Any, canvas: bool, folder: Path, label: str) -> dict[str, Any]:
    saved = _common.CANVAS_FROM
    _common.CANVAS_FROM = 0 if canvas else 10**9
    try:
        started = time.perf_counter()
        m = make()
        html = m.get_root().render()
        build = time.perf_counter() - started
    finally:
        _common.CANVAS_FROM = saved
    path = folder / f"{label}.html"
    path.write_text(html, encoding="utf-8")
    page.goto(path.as_uri(), wait_until="load", timeout=600_000)
    got = page.evaluate(_REDRAW)
    return {"build_s": build, "mb": len(html.encode()) / 1e6, **got}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=20_000)
    parser.add_argument("--routes", type=int, default=1_000)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    with Sandbox(seed=7) as sb, tempfile.TemporaryDirectory() as tmp:
        conn = toolkit.connect(sandbox=sb, progress=False)
        raw, snapped = trace_frames(conn, args.points)
        routes = route_frame(conn, args.routes)
        cases = {
            f"trace {len(raw):,} points": lambda: explore.snapped_trace(raw, snapped),
            f"{int(routes.geometry.notna().sum()):,} routes": lambda: explore.routes(routes),
        }
        rows = []
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium,
                                        args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1000, "height": 700})
            for name, make in cases.items():
                for canvas in (False, True):
                    label = f"{name.split()[0]}-{'canvas' if canvas else 'svg'}"
                    rows.append((name, "(b) canvas" if canvas else "(a) SVG",
                                 measure(page, make, canvas, Path(tmp), label)))
            browser.close()
        conn.close()
    print(f"{'frame':<22} {'renderer':<11} {'build s':>8} {'page MB':>8} {'drawn ms':>9} "
          f"{'zoom step ms':>13} {'SVG paths':>10}")
    for name, renderer, r in rows:
        print(f"{name:<22} {renderer:<11} {r['build_s']:>8.2f} {r['mb']:>8.1f} "
              f"{r['drawn_ms']:>9.0f} {r['zoom_ms']:>13.0f} {r['paths']:>10,}")


if __name__ == "__main__":
    main()
