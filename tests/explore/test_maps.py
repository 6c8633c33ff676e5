"""Interactive maps: what each map holds (layers, feature counts, tooltip fields), their
background, and one map drawn by a real headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import toolkit
from tests.explore.conftest import tooltip_columns

folium = pytest.importorskip("folium")
explore = pytest.importorskip("toolkit.explore")
from toolkit.explore import map_summary  # noqa: E402


def test_routes_map_holds_main_and_alternatives_with_the_framestooltip_columns(frames) -> None:
    routes, incidents = frames["routes"], frames["incidents"]
    before = routes.copy()
    m = explore.routes(routes, incidents=incidents)
    summary = map_summary(m).set_index("layer")
    drawn = routes[~(routes.geometry.isna() | routes.geometry.is_empty)]
    assert summary.loc["main routes", "features"] == (drawn["route_index"] == 0).sum()
    assert summary.loc["alternatives", "features"] == (drawn["route_index"] > 0).sum()
    assert summary.loc["main routes", "tooltip_fields"] == [*tooltip_columns(routes), "delay_s"]
    severities = [i for i in summary.index if i.startswith("incidents: ")]
    assert sum(summary.loc[severities, "features"]) == len(incidents)
    assert summary.loc["incident extents", "features"] == incidents["endPoint"].notna().sum()
    assert summary.loc["incidents: Serious", "tooltip_fields"] == tooltip_columns(incidents)
    assert routes.equals(before)


def test_snapped_trace_map(frames) -> None:
    m = explore.snapped_trace(frames["raw"], frames["snapped"])
    summary = map_summary(m).set_index("layer")
    assert summary.loc["recorded", "features"] == len(frames["raw"])
    assert summary.loc["snapped", "features"] == len(frames["snapped"])
    assert summary.loc["snapped", "tooltip_fields"] == tooltip_columns(frames["snapped"])
    assert summary.loc["snapped", "geometry_types"] == ["Point"]


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


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(_chromium() is None, reason="needs Chromium from the system packages "
                    "(apt-get install chromium) to draw a map in a real browser")
def test_a_real_headless_chromium_draws_the_features(frames, tmp_path) -> None:
    incidents = frames["incidents"]
    m = explore.incidents(incidents)
    page = tmp_path / "incidents.html"
    m.save(str(page))
    run = subprocess.run(
        [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
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
