"""Every interactive map has a name and a text summary made from its data.

The name titles the ``<iframe>`` a notebook shows the map in and the map's own page; the summary
is the page's first paragraph (for screen readers, out of sight). The numbers the summaries
must name are counted from the frames here.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

import toolkit
import toolkit.explore
from toolkit.explore._describe import VISUALLY_HIDDEN, describe_map, named_frame

pytest.importorskip("folium")


def _page(m) -> str:
    return m.get_root().render()


def _summary_paragraph(page: str) -> str:
    found = re.search(r'<p class="toolkit-map-summary" style="([^"]*)">([^<]*)</p>', page)
    assert found is not None, "no summary paragraph"
    assert found.group(1) == VISUALLY_HIDDEN
    return found.group(2)


def _checked(m, what: str, numbers: list[str]) -> str:
    """The map's name and summary: said, in its page and its notebook frame; return the summary."""
    import html

    assert m.toolkit_name == f"interactive map: {what}"
    summary = toolkit.plot.describe(m)
    assert summary.startswith(f"Interactive map of {what}.")
    assert [n for n in numbers if n not in summary] == [], summary
    assert summary.endswith("Sandbox data (invented).")  # the frames are the sandbox's
    page = _page(m)
    assert f"<title>{html.escape(m.toolkit_name)}</title>" in page
    assert html.unescape(_summary_paragraph(page)) == summary
    shown = m._repr_html_()
    frames = re.findall(r"<iframe[^>]*>", shown)
    assert frames and all(f'title="{html.escape(m.toolkit_name)}"' in f for f in frames)
    return summary


def test_the_routes_map(frames) -> None:
    df = frames["routes"]
    drawn = df[[g is not None and not g.is_empty for g in df.geometry]]
    main = drawn[drawn["route_index"] == 0]
    km = main["distanceInMeters"].astype(float) / 1000
    kinds = Counter(frames["incidents"]["incidentType"].astype(str))
    m = toolkit.explore.routes(df, incidents=frames["incidents"])
    _checked(m, f"{len(main)} main routes and {len(drawn) - len(main)} alternatives",
             [f"from {km.min():.1f} to {km.max():.1f} km",
              f"{len(frames['incidents'])} traffic incidents",
              *(f"{n} {k}" for k, n in kinds.items())])


def test_the_snapped_trace_map(frames) -> None:
    snapped = frames["snapped"]
    limits = snapped["speedLimitInKilometersPerHour"].dropna().astype(float)
    m = toolkit.explore.snapped_trace(frames["raw"], snapped)
    _checked(m, f"{len(frames['raw'])} recorded points and {len(snapped)} snapped points",
             [f"from {limits.min():.0f} to {limits.max():.0f} km/h"])


def test_the_incidents_map(frames) -> None:
    df = frames["incidents"]
    m = toolkit.explore.incidents(df)
    _checked(m, f"{len(df)} traffic incidents",
             [*(f"{n} {k}" for k, n in Counter(df["incidentType"].astype(str)).items()),
              *(f"{n} {k}" for k, n in Counter(df["severity"].astype(str)).items())])


def test_the_air_quality_map(frames) -> None:
    df = frames["air"].assign(place=["Andorra la Vella", "Canillo", "Encamp", "Ordino"])
    values = df["globalIndex"].astype(float)
    top = df.loc[values.idxmax()]
    alerts = frames["alerts"].dropna(subset=["alertId"])
    m = toolkit.explore.air_quality(df, alerts=frames["alerts"])
    _checked(m, f"air quality at {len(df)} places",
             [f"from {values.min():.0f} to {values.max():.0f}",
              f"Highest first: {top['place']} {top['globalIndex']:.0f} ({top['category']})",
              f"{alerts['alertId'].nunique()} severe weather alert"])


def test_the_forecast_map_says_which_day_it_opens_on(frames) -> None:
    df = frames["forecast"]
    m = toolkit.explore.air_quality(df)
    days = df["day"].nunique()
    assert m.toolkit_name.startswith(
        f"interactive map: air quality at {df['location_index'].nunique()} places, "
        f"{days} forecast days (layers), ")


def test_the_alerts_map(frames) -> None:
    df = frames["alerts"].dropna(subset=["alertId"])
    placed = df[[g is not None and not g.is_empty for g in df.geometry]]
    statuses = Counter(placed["latestStatus.english"].astype(str))
    m = toolkit.explore.alerts(frames["alerts"])
    _checked(m, f"{placed['alertId'].nunique()} severe weather alerts at {len(placed)} places",
             [f"{n} {s}" for s, n in statuses.items()])


def test_the_suggestions_map(sandbox) -> None:
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    try:  # geocoding's matches have positions (autocomplete's answers often have none)
        df = toolkit.geocode(["Ordino", "Canillo"], top=2, connection=conn)
    finally:
        conn.close()
    placed = df[[g is not None and not g.is_empty for g in df.geometry]]
    m = toolkit.explore.suggestions(df)
    _checked(m, f"{len(placed)} place suggestions for {placed['query'].nunique()} queries",
             [f"{q}: " for q in placed["query"].unique()])


def test_service_text_in_a_summary_is_escaped_in_the_page(frames) -> None:
    df = frames["air"].assign(place=["<script>alert(1)</script>", "b & c", "d", "e"])
    m = toolkit.explore.air_quality(df)
    page = _page(m)
    assert "<script>alert(1)</script>" in toolkit.plot.describe(m)  # the text, as it was
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in _summary_paragraph(page)
    assert "<script>alert(1)" not in page


def test_a_frame_is_named_once_and_quotes_in_its_name_are_escaped() -> None:
    page = "<div><iframe srcdoc='x'></iframe><iframe title=\"kept\" srcdoc='y'></iframe></div>"
    named = named_frame(page, 'a "map" & more')
    assert named.count('title="a &quot;map&quot; &amp; more"') == 1
    assert 'title="kept"' in named


def test_a_map_described_twice_keeps_one_title_and_one_summary(frames) -> None:
    m = toolkit.explore.incidents(frames["incidents"])
    describe_map(m, "something else", "Another summary")
    page = _page(m)
    assert page.count("<title>") == 1 and page.count("toolkit-map-summary") == 1
    assert "<title>interactive map: something else</title>" in page
    assert toolkit.plot.describe(m) == "Interactive map of something else. Another summary."


def test_a_map_not_made_by_the_toolkit_has_no_summary() -> None:
    import folium

    assert toolkit.plot.describe(folium.Map()) == ""


@pytest.mark.slow
def test_a_maps_own_page_has_no_serious_accessibility_violation(frames, tmp_path) -> None:
    # the page of a map saved on its own (Leaflet written in): its title, its language, its
    # summary; axe-core in the system Chromium
    from tests import axe
    from tests.browser import launch

    if axe.missing():
        pytest.skip(axe.missing())
    from playwright.sync_api import sync_playwright

    m = toolkit.explore.routes(frames["routes"], incidents=frames["incidents"], tiles="roads")
    (tmp_path / "map.html").write_text(m.get_root().render(), encoding="utf-8")
    with axe.served(tmp_path) as base, sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page()
            page.goto(base + "map.html")
            page.wait_for_function("() => window.L && document.querySelector('path, canvas')")
            assert page.title() == m.toolkit_name
            assert page.evaluate("() => document.documentElement.lang") == "en"
            assert page.locator("p.toolkit-map-summary").inner_text() == toolkit.plot.describe(m)
            found = axe.violations(page, "map")
        finally:
            browser.close()
    assert found == [], "\n".join(found)
