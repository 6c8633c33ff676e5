"""Interactive maps: what each map holds (layers, feature counts, tooltip fields), their
background, and one map drawn by a real headless Chromium."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import toolkit
from tests.browser import chromium, launch, missing, sync_playwright
from tests.explore.conftest import tooltip_labels

folium = pytest.importorskip("folium")
explore = pytest.importorskip("toolkit.explore")
from toolkit.explore import map_summary  # noqa: E402


def test_routes_map_holds_main_and_alternatives_with_curated_tooltips(frames) -> None:
    routes, incidents = frames["routes"], frames["incidents"]
    before = routes.copy()
    m = explore.routes(routes, incidents=incidents)
    summary = map_summary(m).set_index("layer")
    drawn = routes[~(routes.geometry.isna() | routes.geometry.is_empty)]
    assert summary.loc["main routes", "features"] == (drawn["route_index"] == 0).sum()
    assert summary.loc["alternatives", "features"] == (drawn["route_index"] > 0).sum()
    assert summary.loc["main routes", "tooltip_fields"] == tooltip_labels("route_directions")
    assert len(tooltip_labels("route_directions")) <= 8
    ends = summary.loc["start, stops and end", "features"]
    assert ends >= 2 * (drawn["route_index"] == 0).sum()
    severities = [i for i in summary.index if i.startswith("incidents: ")]
    assert sum(summary.loc[severities, "features"]) == len(incidents)
    assert summary.loc["incident extents", "features"] == incidents["endPoint"].notna().sum()
    assert summary.loc["incidents: Serious", "tooltip_fields"] == tooltip_labels(
        "traffic_incidents")
    assert routes.equals(before)


def test_snapped_trace_map(frames) -> None:
    m = explore.snapped_trace(frames["raw"], frames["snapped"])
    summary = map_summary(m).set_index("layer")
    assert summary.loc["recorded", "features"] == len(frames["raw"])
    assert summary.loc["snapped", "features"] == len(frames["snapped"])
    assert summary.loc["snapped", "tooltip_fields"] == tooltip_labels("snap_to_roads")
    assert summary.loc["snapped", "geometry_types"] == ["Point"]


def test_reachable_ranges_map_one_layer_per_budget_and_the_origins(frames) -> None:
    ranges = frames["ranges"]
    before = ranges.copy()
    m = explore.reachable_ranges(ranges)
    summary = map_summary(m).set_index("layer")
    # the failed origin (far out at sea) draws nothing; the others one polygon per budget
    assert summary.loc["within 10 min", "features"] == 2
    assert summary.loc["within 5 min", "features"] == 2
    assert summary.loc["within 5 min", "geometry_types"] == ["Polygon"]
    assert summary.loc["origins", "features"] == 2
    assert summary.loc["within 5 min", "tooltip_fields"] == tooltip_labels("route_range")
    assert list(summary.index[:2]) == ["within 10 min", "within 5 min"]  # largest first
    assert ranges.equals(before)
    with pytest.raises(toolkit.ValidationError, match="polygon"):
        explore.reachable_ranges(ranges[ranges["error.code"].notna()])


def test_suggestions_without_positions_say_so(frames) -> None:
    sugg = frames["suggestions"]
    if sugg.geometry.notna().any():
        summary = map_summary(explore.suggestions(sugg))
        assert summary["features"].sum() == sugg.geometry.notna().sum()
    else:
        with pytest.raises(toolkit.ValidationError, match="geometry"):
            explore.suggestions(sugg)


def test_maps_of_the_sandboxs_frames_draw_on_the_shipped_roads(frames) -> None:
    maps = [explore.incidents(frames["incidents"]), explore.routes(frames["routes"]),
            explore.snapped_trace(frames["raw"], frames["snapped"])]
    assert all(m.toolkit_offline for m in maps)
    assert not explore.incidents(frames["incidents"], tiles="web").toolkit_offline


def test_bad_input(frames) -> None:
    with pytest.raises(toolkit.ValidationError, match="severity"):
        explore.incidents(frames["incidents"].drop(columns=["severity"]))
    with pytest.raises(toolkit.ValidationError):
        explore.routes([1, 2, 3])


def test_import_toolkit_imports_no_map_library() -> None:
    code = ("import sys, toolkit\n"
            "toolkit.explore\n"  # the package itself is light
            "bad = [m for m in ('folium', 'branca', 'offlinefolium', 'lonboard', "
            "'requests_cache', 'pyarrow') if m in sys.modules]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[2])


@pytest.mark.skipif(chromium() is None, reason="needs Chromium from the system packages "
                    "(apt-get install chromium) to draw a map in a real browser")
def test_a_real_headless_chromium_draws_the_features(frames, tmp_path) -> None:
    incidents = frames["incidents"]
    m = explore.incidents(incidents)
    page = tmp_path / "incidents.html"
    m.save(str(page))
    run = subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=10000",
         "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120)
    dom = run.stdout
    assert "leaflet-container" in dom, run.stderr[-2000:]
    drawn = re.findall(r'<path[^>]*class="[^"]*leaflet-interactive', dom)
    # one marker per incident and one line to each end point, drawn as SVG by Leaflet
    assert len(drawn) == len(incidents) + incidents["endPoint"].notna().sum()
    assert len(re.findall(r"<path", dom)) > len(drawn)  # the road background too
    assert "toolkit-legend" in dom and "ODbL" in dom


@pytest.mark.xdist_group("real-time")  # Chromium, driven with waits: see tests/conftest.py
@pytest.mark.skipif(missing() is not None, reason=f"{missing()} to hover over a map in a real "
                    "browser")
def test_hovering_an_alert_in_chromium_shows_the_curated_tooltip(frames, tmp_path) -> None:
    from toolkit.explore._fields import TOOLTIPS

    alerts = frames["alerts"]
    page_file = tmp_path / "alerts.html"
    explore.alerts(alerts).save(str(page_file))
    labels = [f.label for f in TOOLTIPS["severe_weather_alerts"]]
    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 900, "height": 520})
            page.goto(page_file.as_uri(), timeout=30_000)
            markers = page.locator("path.leaflet-interactive")
            markers.first.wait_for(timeout=15_000)
            page.wait_for_function("!document.querySelector('.leaflet-zoom-anim')",
                                   timeout=10_000)
            # every alert is a marker of its own, and the spread ones do not hide each other
            assert markers.count() == alerts["alertId"].notna().sum()
            boxes = [markers.nth(i).bounding_box() for i in range(markers.count())]
            centres = {(round(b["x"] + b["width"] / 2), round(b["y"] + b["height"] / 2))
                       for b in boxes if b}
            assert len(centres) == markers.count()
            markers.last.hover()
            tip = page.locator(".toolkit-tooltip")
            tip.wait_for(timeout=10_000)
            text = tip.inner_text()
            page.screenshot(path=str(tmp_path / "alert-tooltip.png"))
            for label in labels:
                assert label in text
            assert "disclaimer" not in text and "alertDetails" not in text
            assert len(text.splitlines()) <= 2 * len(labels)
            markers.last.click()
            popup = page.locator(".toolkit-popup")
            popup.wait_for(timeout=10_000)
            assert "alertDetails" in popup.inner_text()
        finally:
            browser.close()


def test_route_colours_follow_the_delay_relative_to_the_free_flow_time(frames) -> None:
    import pandas as pd

    from toolkit.explore.maps import DELAY_STEPS, delay_colour, delay_share

    routes = pd.DataFrame({"durationInSeconds": [600, 600, 100, 0, None],
                           "durationTrafficInSeconds": [600, 660, 160, 30, 10]})
    share = delay_share(routes)
    assert share.iloc[:3].tolist() == pytest.approx([0.0, 0.1, 0.6])
    assert share.iloc[3:].isna().all()
    colours = [delay_colour(v) for v in share]
    steps = {label: colour for _, colour, label in DELAY_STEPS}
    assert colours == [steps["under 5 %"], steps["5 to 15 %"], steps["50 % or more"],
                       "#9e9e9e", "#9e9e9e"]
    # a short Andorran trip with a few minutes' delay is no longer "no delay"
    drawn = frames["routes"][frames["routes"]["route_index"] == 0].dropna(
        subset=["durationInSeconds"])
    m = explore.routes(frames["routes"])
    main = next(g for g in m._children.values()
                if isinstance(g, folium.FeatureGroup) and g.layer_name == "main routes")
    spec = next(c.spec for c in main._children.values() if hasattr(c, "spec"))
    colour = spec["color"]
    drawn_colours = [spec["palette"][c] for c in colour] if isinstance(colour, list) \
        else [spec["palette"][colour]] * spec["n"]
    assert drawn_colours == [delay_colour(v) for v in delay_share(drawn)]
    assert set(drawn_colours) != {steps["under 5 %"]}
    page = m.get_root().render()
    for *_, label in DELAY_STEPS:
        assert label in page
    assert "alternative 1 (dashed)" in page and '"dash":"8 6"' in page


def test_addresses_map_holds_a_layer_per_type_and_the_points_asked(sandbox) -> None:
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    df = toolkit.reverse_geocode([(1.5331, 42.5560), (1.5975, 42.5676), (-30.0, 30.0)],
                                 connection=conn)
    conn.close()
    before = df.copy()
    m = explore.addresses(df)
    summary = map_summary(m).set_index("layer")
    kinds = df["type"].dropna().astype(str).value_counts()
    for kind, n in kinds.items():
        assert summary.loc[f"addresses: {kind}", "features"] == n
    assert summary.loc["points asked", "features"] == 3
    assert summary.loc["points asked", "tooltip_fields"] == tooltip_labels("reverse_geocode")
    assert tooltip_labels("reverse_geocode") == ["point", "address", "type", "confidence",
                                                 "distance from the point"]
    assert df.equals(before)
    with pytest.raises(toolkit.ValidationError):
        explore.addresses(df.drop(columns=["input_point"]))
