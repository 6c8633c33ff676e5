"""Every chart a helper draws carries a text alternative made from its data.

Each helper's picture (the frames and the calls of tests/plot/pictures.py) is described, and
the description names the numbers a reader of the picture would read off it: the test computes
them from the frames itself (counts with ``collections.Counter``, extremes with ``min``/``max``
over the frame's own columns), not through the helper's code.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest

import toolkit
from tests.plot.pictures import GROUP, PICTURES
from toolkit._core.errors import ValidationError
from toolkit.plot.description import counted, describe, listed, output_alt, sentences

#: The pictures are drawn once for this module and tests/plot/test_style.py: one worker.
pytestmark = pytest.mark.xdist_group(GROUP)

#: The public names of toolkit.plot that draw no chart.
NOT_CHARTS = {"mark_sandbox", "describe", "set_description", "output_alt"}
#: The order of backend health, best first (the service's documented values).
HEALTH = ["Up", "Partial", "Draining", "Down", "Unknown"]


def _day(value: Any) -> str:
    return f"{pd.Timestamp(value):%d %b %Y}".lstrip("0")


def _forecast_day(value: Any) -> str:
    # the service stamps a forecast day at its local midnight, in UTC
    return f"{pd.Timestamp(value) + pd.Timedelta(hours=12):%a %d %b}"


# ------------------------------------------------------------------- what each picture says
def _backend_health(f: dict[str, Any]) -> list[str]:
    df = f["health"]
    worst: dict[tuple[str, str], str] = {}
    for pool, address, health in zip(df["backendAddressPool.name"], df["address"],
                                     df["health"].astype(str), strict=True):
        key = (pool, address)
        if key not in worst or HEALTH.index(health) > HEALTH.index(worst[key]):
            worst[key] = health
    total = Counter(worst.values())
    out = ["gateway agw-api-prod-weu", f"{len(worst)} backend servers"]
    out += [f"{n} {state.lower()}" for state, n in total.items()]
    for pool in dict.fromkeys(df["backendAddressPool.name"]):
        mine = Counter(h for (p, _), h in worst.items() if p == pool)
        out.append(f"{pool} " + ", ".join(f"{mine[s]} {s.lower()}" for s in HEALTH if mine[s]))
    return out


def _encryption_posture(f: dict[str, Any]) -> list[str]:
    df = f["posture"]
    groups = {re.search(r"/resourceGroups/([^/]+)/", i).group(1) for i in df["id"]}
    managed = sum(t == "ServiceManaged" for t in df["serverKeyType"].astype(str))
    rotated = sum(t != "ServiceManaged" and a is True
                  for t, a in zip(df["serverKeyType"].astype(str),
                                  df["autoRotationEnabled"].astype(object), strict=True))
    return [f"{len(df)} servers in {len(groups)} resource groups",
            f"{managed} service-managed key", f"{rotated} vault key, auto-rotated"]


def _authentication_strength_usage(f: dict[str, Any]) -> list[str]:
    df = f["usage"]
    names = [n if isinstance(n, str) else p for n, p in zip(df["policy_name"], df["policy_id"],
                                                           strict=True)]
    per = Counter(names)
    return [f"{len(df)} conditional-access policies using {len(per)} authentication strengths",
            *(f"{name}: {n} polic{'y' if n == 1 else 'ies'}" for name, n in per.items())]


def _worst_per_resource(df: pd.DataFrame, by: str) -> dict[tuple[str, str], str]:
    order = ["Unknown", "Exempt", "Conflict", "Compliant", "NonCompliant"]  # worst last
    out: dict[tuple[str, str], str] = {}
    for group, rid, state in zip(df[by].astype(str), df["resourceId"],
                                 df["complianceState"].astype(str), strict=True):
        key = (group, rid)
        if key not in out or order.index(state) > order.index(out[key]):
            out[key] = state
    return out


def _compliance_by(f: dict[str, Any]) -> list[str]:
    worst = _worst_per_resource(f["latest"], "resourceType")
    states = Counter(worst.values())
    assert set(states) <= {"Compliant", "NonCompliant"}  # what the checks below assume
    share = {}
    for group in {g for g, _ in worst}:
        mine = [s for (g, _), s in worst.items() if g == group]
        share[group] = 100 * mine.count("Compliant") / len(mine)
    least = min(share, key=lambda g: share[g])
    return [f"{len(share)} resource types, least compliant first",
            f"{least}: {share[least]:.0f}% compliant",
            f"Summed over the bars: {states['Compliant']} compliant, "
            f"{states['NonCompliant']} non-compliant"]


def _compliance_by_summary(f: dict[str, Any]) -> list[str]:
    rows = f["summary"][f["summary"]["level"].astype(str) == "assignment"]
    noncompliant = int(rows["resources_noncompliant"].astype("Int64").fillna(0).sum())
    compliant = int(rows["resources_compliant"].astype("Int64").fillna(0).sum())
    return [f"{len(rows)} policy assignments", f"{compliant:,} compliant",
            f"{noncompliant:,} non-compliant"]


def _noncompliance_heatmap(f: dict[str, Any]) -> list[str]:
    df = f["latest"]
    bad = df[df["complianceState"].astype(str) == "NonCompliant"]
    cells = Counter()
    for (kind, where), rows in bad.groupby(["resourceType", "resourceLocation"], observed=True):
        cells[(str(kind).rsplit("/", 1)[-1], str(where))] = rows["resourceId"].nunique()
    (kind, where), most = cells.most_common(1)[0]
    return [f"{sum(cells.values())} non-compliant resources",
            f"{df['resourceType'].nunique()} resource types",
            f"{df['resourceLocation'].nunique()} regions", f"{kind} in {where}: {most}"]


def _course(days: list[Any], values: list[float], unit: str) -> str:
    pairs = sorted(zip(days, values, strict=True), key=lambda p: p[0])
    low = min(pairs, key=lambda p: p[1])
    high = max(pairs, key=lambda p: p[1])
    return (f"from {pairs[0][1]:.0f}{unit} on {_day(pairs[0][0])} to {pairs[-1][1]:.0f}{unit} "
            f"on {_day(pairs[-1][0])} (lowest {low[1]:.0f}{unit} on {_day(low[0])}, highest "
            f"{high[1]:.0f}{unit} on {_day(high[0])})")


def _compliance_trend(f: dict[str, Any]) -> list[str]:
    t = f["trend"]
    whole = t[t["complete"].astype(bool)]
    return [f"compliant resources "
            f"{_course(list(whole['day']), list(whole['compliance_pct']), '%')}",
            f"Non-compliant resources "
            f"{_course(list(whole['day']), list(whole['non_compliant'].astype(float)), '')}",
            f"{(~t['complete'].astype(bool)).sum()} partial periods",
            f"campaign on {_day(f['end'] - pd.Timedelta(days=10))}"]


def _compliance_trend_by(f: dict[str, Any]) -> list[str]:
    t = f["trend_by"]
    whole = t[t["complete"].astype(bool)]
    out = []
    for name in sorted(set(whole["policyAssignmentName"].astype(str)))[:6]:
        part = whole[whole["policyAssignmentName"].astype(str) == name]
        out.append(f"{name}: {_course(list(part['day']), list(part['compliance_pct']), '%')}")
    return out


def _route_lines(df: pd.DataFrame) -> list[str]:
    out = []
    for _, r in df.iterrows():
        kind = "main route" if r["route_index"] == 0 else f"alternative {r['route_index']}"
        out.append(f"query {r['query_index']}, {kind}: {r['distanceInMeters'] / 1000:.1f} km, "
                   f"{r['durationTrafficInSeconds'] / 60:.0f} min in traffic")
    return out


def _routes(f: dict[str, Any]) -> list[str]:
    df = f["routes"]
    main = sum(df["route_index"] == 0)
    ends = {tuple(g.geoms[-1].coords[-1]) if hasattr(g, "geoms") else tuple(g.coords[-1])
            for g in df.geometry}
    return [f"{main} main routes and 0 alternatives from 1 start place to {len(ends)} end "
            "places", *_route_lines(df)]


def _routes_alternatives(f: dict[str, Any]) -> list[str]:
    kinds = Counter(f["incidents"]["incidentType"].astype(str))
    return [*_route_lines(f["two_ways"]), f"{len(f['incidents'])} traffic incidents drawn",
            *(f"{n} {k}" for k, n in kinds.items())]


def _snapped_trace(f: dict[str, Any]) -> list[str]:
    snapped = f["snapped"]
    limits = [float(v) for v in snapped["speedLimitInKilometersPerHour"].dropna()]
    added = sum(bool(v) for v in snapped["isInterpolated"].fillna(False))
    return [f"{len(f['raw'])} recorded points and {len(snapped)} snapped points",
            f"{added} of them interpolated",
            f"Speed limits from {min(limits):.0f} to {max(limits):.0f} km/h"]


def _incidents(f: dict[str, Any]) -> list[str]:
    df = f["incidents"]
    closed = sum(bool(v) for v in df["isRoadClosed"].fillna(False))
    return [f"{len(df)} traffic incidents",
            *(f"{n} {k}" for k, n in Counter(df["incidentType"].astype(str)).items()),
            *(f"{n} {k}" for k, n in Counter(df["severity"].astype(str)).items()),
            f"{closed} with the road closed"]


def _air_quality_map(f: dict[str, Any]) -> list[str]:
    df = f["air"]
    values = [float(v) for v in df["globalIndex"].dropna()]
    top = df.loc[df["globalIndex"].astype(float).idxmax()]
    return [f"{len(df)} places", f"global index from {min(values):.0f} to {max(values):.0f}",
            f"Highest first: {top['place']} {top['globalIndex']:.0f} ({top['category']})",
            *(f"{n} {c}" for c, n in Counter(df["category"].dropna().astype(str)).items())]


def _pollutants(f: dict[str, Any]) -> list[str]:
    place = int(f["air"]["globalIndex"].idxmax())
    rows = toolkit.air_quality_pollutants(f["air"])
    rows = rows[rows["location_index"] == place]
    out = [f"{len(rows)} pollutants"]
    for _, r in rows.iterrows():
        out.append(f"{r['type']} {r['globalIndex']:.0f} ({r['concentration.value']:g} "
                   f"{r['concentration.unit']})")
    dominant = rows[rows["is_dominant"].fillna(False).astype(bool)]
    return [*out, f"Dominant: {', '.join(dominant['type'].astype(str))}"]


def _air_quality_forecast(f: dict[str, Any]) -> list[str]:
    rows = f["forecast"][f["forecast"]["location_index"] == 0]
    out = [f"{len(rows)} days"]
    for _, r in rows.iterrows():
        out.append(f"{_forecast_day(r['dateTime'])} {r['globalIndex']:.0f} ({r['category']})")
    low = rows.loc[rows["globalIndex"].astype(float).idxmin()]
    return [*out, f"from {low['globalIndex']:.0f} ({low['category']}) on "
                  f"{_forecast_day(low['dateTime'])}"]


def _air_quality_forecast_grid(f: dict[str, Any]) -> list[str]:
    df = f["forecast"]
    top = df.loc[df["globalIndex"].astype(float).idxmax()]
    return [f"{df['location_index'].nunique()} places over {df['dateTime'].nunique()} days",
            f"Highest: place {top['location_index']} on {_forecast_day(top['dateTime'])}, "
            f"{top['globalIndex']:.0f} ({top['category']})"]


def _forecast_along(f: dict[str, Any]) -> list[str]:
    df = f["along"]
    out = [f"{df['location_index'].nunique()} points",
           f"{df['km'].min():g} to {df['km'].max():g}",
           f"{df['dateTime'].nunique()} forecast days"]
    for when, day in df.groupby("dateTime"):
        top = day.loc[day["globalIndex"].astype(float).idxmax()]
        out.append(f"{_forecast_day(when)}: from {day['globalIndex'].min():.0f} to "
                   f"{top['globalIndex']:.0f} ({top['category']}), highest at {top['km']:g} km")
    return out


def _alert_timeline(f: dict[str, Any]) -> list[str]:
    df = f["alerts"].dropna(subset=["alertId", "startTime", "endTime"])
    areas = {(a, i) for a, i in zip(df["alertId"], df["area_index"], strict=True)}
    status = Counter(s for (a, i), s in dict(zip(
        zip(df["alertId"], df["area_index"], strict=True), df["latestStatus.english"],
        strict=False)).items())
    return [f"{len(areas)} alert areas of {df['alertId'].nunique()} alerts",
            f"from {df['startTime'].min():%a %d %b %H:%M} to {df['endTime'].max():%a %d %b %H:%M}",
            *(f"{n} {s}" for s, n in status.items())]


def _air_quality_hours(f: dict[str, Any]) -> list[str]:
    df = f["hourly"].dropna(subset=["globalIndex"])
    names = ["Andorra la Vella", "Ordino", "Canillo"]
    out = [f"{df['location_index'].nunique()} places", "times in Europe/Andorra"]
    for place, rows in df.groupby("location_index"):
        values = [float(v) for v in rows["globalIndex"]]
        best = rows.iloc[values.index(min(values))]
        local = pd.Timestamp(best["dateTime"]).tz_convert("Europe/Andorra")
        out += [f"{names[int(place)]}: best {min(values):.0f} ({best['category']}) at "
                f"{local:%a %H:%M}", f"worst {max(values):.0f}"]
    return out


def _addresses(f: dict[str, Any]) -> list[str]:
    df = f["addresses"]
    asked = sum(g is not None and not g.is_empty for g in df["input_point"])
    found = [g is not None and not g.is_empty for g in df["geometry"]]
    kinds = Counter(str(k) for k, ok in zip(df["type"], found, strict=True) if ok)
    out = [f"{asked} points asked about", f"{sum(found)} addresses found",
           *(f"{n} {k}" for k, n in kinds.items())]
    missing = asked - sum(found)
    if missing:
        out.append(f"{missing} point{'s' if missing != 1 else ''} with no match")
    return out


def _matrix(f: dict[str, Any], first: str, second: str, scale: float, unit: str) -> list[str]:
    df = f["matrix"]
    amounts = {}
    for _, row in df.iterrows():
        value = row[first] if not pd.isna(row[first]) else row[second]
        if not pd.isna(value):
            amounts[(row["origin_place"], row["destination_place"])] = float(value) / scale
    (origin, destination), top = max(amounts.items(), key=lambda kv: kv[1])
    out = [f"{df['originIndex'].nunique()} origins by {df['destinationIndex'].nunique()} "
           f"destinations", f"from {min(amounts.values()):.0f} to {top:.0f} {unit}",
           f"The longest: {origin} to {destination}, {top:.0f} {unit}"]
    missing = len(df) - len(amounts)
    return [*out, f"{missing} trip{'s' if missing != 1 else ''} without a route"] if missing \
        else out


def _reachable_ranges(f: dict[str, Any]) -> list[str]:
    from pyproj import Geod

    df = f["ranges"]
    geod = Geod(ellps="WGS84")
    return [f"{df['timeBudgetInSec'].nunique()} budgets", "1 origin",
            *(f"{b / 60:g} min {abs(geod.geometry_area_perimeter(g)[0]) / 1e6:.1f} km²"
              for b, g in zip(df["timeBudgetInSec"], df.geometry, strict=True))]


EXPECTED: dict[str, Callable[[dict[str, Any]], list[str]]] = {
    "backend_health": _backend_health,
    "encryption_posture": _encryption_posture,
    "authentication_strength_usage": _authentication_strength_usage,
    "compliance_by": _compliance_by,
    "compliance_by__summary": _compliance_by_summary,
    "noncompliance_heatmap": _noncompliance_heatmap,
    "compliance_trend": _compliance_trend,
    "compliance_trend__by": _compliance_trend_by,
    "routes": _routes,
    "routes__alternatives": _routes_alternatives,
    "snapped_trace": _snapped_trace,
    "incidents": _incidents,
    "air_quality_map": _air_quality_map,
    "pollutants": _pollutants,
    "air_quality_forecast": _air_quality_forecast,
    "air_quality_forecast__grid": _air_quality_forecast_grid,
    "forecast_along": _forecast_along,
    "alert_timeline": _alert_timeline,
    "air_quality_hours": _air_quality_hours,
    "addresses": _addresses,
    "travel_times": lambda f: _matrix(f, "durationTrafficInSeconds", "durationInSeconds", 60.0,
                                      "min"),
    "travel_times__distance": lambda f: _matrix(f, "distanceInMeters", "distanceInMeters",
                                                1000.0, "km"),
    "reachable_ranges": _reachable_ranges,
}


def test_every_chart_helper_is_checked() -> None:
    helpers = set(toolkit.plot.__all__) - NOT_CHARTS
    assert helpers == {name.split("__")[0] for name in EXPECTED}
    assert set(EXPECTED) == set(PICTURES)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_chart_is_described_by_its_data(picture_frames, pictures, name) -> None:
    ax = pictures.axes(name)  # the helper's, kept for tests/plot/test_style.py too
    own = describe(ax)
    whole = describe(ax.figure)
    assert own and re.search(r"\d", own), own
    assert own.startswith(ax.get_title())  # says what is shown, as the title does
    missing = [part for part in EXPECTED[name](picture_frames) if part not in own]
    assert missing == [], f"{name}: {own}"
    # the figure's: the chart's, and the mark the sandbox's frames put on its face
    assert whole == f"{own} Sandbox data (invented)."


def test_a_real_services_chart_is_described_without_the_mark() -> None:
    df = pd.DataFrame({"backendAddressPool.name": ["web", "web", "api"],
                       "address": ["10.0.0.4", "10.0.0.5", "10.0.1.4"],
                       "health": pd.Categorical(["Up", "Down", "Up"], categories=HEALTH)})
    df.attrs = {"sandbox": False, "endpoint": "https://management.example/subscriptions/s/"
                "resourceGroups/rg/providers/Microsoft.Network/applicationGateways/agw-1/"
                "backendhealth"}
    ax = toolkit.plot.backend_health(df)
    assert describe(ax.figure) == (
        "Backend health by pool (gateway agw-1): 3 backend servers: 2 up, 1 down. "
        "Per pool: web 1 up, 1 down; api 1 up.")
    plt.close(ax.figure)


def test_a_figure_of_several_charts_says_each_in_order() -> None:
    usage = pd.DataFrame({"policy_id": ["a", "b"], "requirement": ["mfa", "none"]})
    health = pd.DataFrame({"backendAddressPool.name": ["web"], "address": ["10.0.0.4"],
                           "health": ["Down"]})
    fig, (left, right) = plt.subplots(1, 2)
    toolkit.plot.authentication_strength_usage(usage, ax=left, title="Strengths")
    toolkit.plot.backend_health(health, ax=right, title="Health")
    text = describe(fig)
    assert text.index("Strengths: 2 conditional-access policies") < text.index(
        "Health: 1 backend server: 1 down")
    plt.close(fig)


def test_a_chart_of_ones_own_is_described_and_checked() -> None:
    fig, ax = plt.subplots()
    assert describe(ax) == "" and describe(fig) == ""  # nothing said that was not given
    assert toolkit.plot.set_description(ax, "Resources per day:\n 12 to  40") is ax
    assert describe(fig) == "Resources per day: 12 to 40."
    with pytest.raises(ValidationError) as info:
        toolkit.plot.set_description(ax, "  ")
    assert info.value.parameter == "text"
    with pytest.raises(ValidationError) as info:
        toolkit.plot.set_description("not an axes", "x")
    assert info.value.parameter == "ax"
    with pytest.raises(ValidationError) as info:
        describe(42)
    assert info.value.parameter == "obj"
    plt.close(fig)


def test_the_alt_text_of_a_notebook_output() -> None:
    picture = {"output_type": "display_data", "data": {"image/png": "iVBO", "text/plain": "x"},
               "metadata": {"image/png": {"alt": "Health:  2 up\n1 down", "width": 400}}}
    assert output_alt(picture) == "Health: 2 up 1 down"
    assert output_alt(picture, "image/svg+xml") is None
    svg = {"data": {"image/svg+xml": "<svg/>"}, "metadata": {"image/svg+xml": {"alt": "A"}}}
    assert output_alt(svg) == "A"
    assert output_alt({"data": {"image/png": "iVBO"}, "metadata": {}}) is None
    assert output_alt({"data": {"image/png": "iVBO"}, "metadata": {"image/png": {"alt": 3}}}) \
        is None
    assert output_alt({"data": {"text/plain": "x"}, "metadata": {}}) is None
    assert output_alt({"output_type": "stream", "text": "x"}) is None
    assert output_alt("not an output") is None  # type: ignore[arg-type]


def test_the_words_descriptions_are_made_of() -> None:
    assert counted(1, "server") == "1 server"
    assert counted(1204, "record") == "1,204 records"
    assert counted(2, "policy", "policies") == "2 policies"
    assert listed(["a", "b", "c"], 2) == "a; b; and 1 more"
    assert listed(["a"]) == "a" and listed([]) == ""
    assert sentences("One", "", "two.", " ") == "One. two."
