"""The picture of every plot helper, drawn from the frames of a sandbox of its own, for the
tests that look at the pictures: tests/plot/test_style.py (each read for clashing, small or cut
texts and compared with its baseline image) and tests/plot/test_description.py (each described
by its data).

Each picture is drawn once for all of them (:class:`Pictures`, a fixture of the session in
tests/plot/conftest.py; the two modules share one xdist group, so one worker) and kept; the
tests read it and do not change it: its PNG is saved once, as the baselines were, and its texts
are read where that saving laid them out.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Iterator
from typing import Any

import matplotlib
import pandas as pd

import toolkit
from tests.maps.conftest import TOWNS, drive
from toolkit._core.frames import build_frame
from toolkit.arm._schemas import ENCRYPTION_PROTECTOR
from toolkit.sandbox.server import Sandbox

#: The xdist group of the modules that share the pictures.
GROUP = "plot pictures"
ANDORRA = (1.40, 42.42, 1.80, 42.66)
#: The resolution the pictures are saved and compared at (the helpers' own).
SAVED_DPI = 100


@contextlib.contextmanager
def sandbox_frames() -> Iterator[dict[str, Any]]:
    """Every frame the pictures draw, from a sandbox of their own (a fixed seed and the tests'
    pinned day): the same on every run."""
    with Sandbox(seed=7) as sb:
        conn = toolkit.connect(sandbox=sb, progress=False)
        try:
            out = _read(sb, conn)
        finally:
            conn.close()
        yield out


def _read(sb: Sandbox, conn: Any) -> dict[str, Any]:
    """Read every frame the pictures draw."""
    conn.sleep = lambda s: None
    world = sb.world
    cat = sb.catalog()
    out: dict[str, Any] = {}
    gw = cat.query("kind == 'application_gateway' and name == 'agw-api-prod-weu'").iloc[0]
    out["health"] = toolkit.backend_health(gw.subscription_id, gw.resource_group,
                                           gw["name"], connection=conn)
    records = []
    for s in world.section("sql").servers:
        records.append({"id": f"/subscriptions/{s.subscription_id}/resourceGroups/"
                              f"{s.resource_group}/providers/Vendor.Sql/servers/{s.name}/"
                              "encryptionProtector/current",
                        "properties": s.protector["properties"], "server": s.name})
    out["posture"] = build_frame(records, ENCRYPTION_PROTECTOR)
    out["usage"] = pd.DataFrame({
        "policy_id": ["p1", "p1", "p1", "p1", "p2", "p2", "p2", "p3"],
        "policy_name": ["phishing-resistant"] * 4 + ["passwordless"] * 3 + [None],
        "requirement": ["mfa", "mfa", "mfa", "mfa", "mfa", "none", "none", "none"]})
    for built in ("posture", "usage"):  # built here from the sandbox's world: its data
        out[built].attrs["sandbox"] = True
    sub = next(s for s in world.subscriptions if s.name == "retail-prod")
    end = pd.Timestamp(world.epoch)
    out["summary"] = toolkit.policy_summary(sub.id, start=end - pd.Timedelta(days=1),
                                            end=end, connection=conn)
    out["latest"] = toolkit.policy_states(sub.id, "rg-web-weu", start=end - pd.Timedelta(
        days=1), end=end, connection=conn)
    history = toolkit.policy_states(sub.id, "rg-data-weu", resource="default",
                                    start=end - pd.Timedelta(days=21), end=end,
                                    connection=conn)
    out["trend"] = toolkit.compliance_trend(
        history[history["policyAssignmentName"] == "monitoring-baseline"])
    out["trend_by"] = toolkit.compliance_trend(
        history[history["policyAssignmentName"] != "monitoring-baseline"],
        by="policyAssignmentName")
    out["end"] = end
    depot = TOWNS["Andorra la Vella"]
    out["routes"] = toolkit.route_directions(
        [{"origin": depot, "destination": TOWNS[t]} for t in
         ("Canillo", "Ordino", "Sant Julià de Lòria", "Encamp")], connection=conn)
    out["two_ways"] = toolkit.route_directions(
        [{"origin": depot, "destination": TOWNS["Soldeu"]}], max_route_count=2,
        connection=conn)
    out["incidents"] = toolkit.traffic_incidents(ANDORRA, connection=conn)
    out["matrix"] = toolkit.route_matrix(
        ["Andorra la Vella", "Canillo", "Encamp", "Sant Julià de Lòria"],
        ["Ordino", "La Massana", "Soldeu", (1.30, 42.60)], connection=conn)
    out["ranges"] = toolkit.route_range("Encamp", time_budget=[300, 600, 900],
                                        connection=conn)
    out["raw"] = drive([depot, TOWNS["Encamp"]], spacing_m=50, noise_m=10)
    out["snapped"] = toolkit.snap_to_roads(out["raw"], include_speed_limit=True,
                                           connection=conn)
    places = cat[cat["kind"] == "place"]
    lonlat = places["location"].str.split(",", expand=True).astype(float)
    where = list(zip(lonlat[0], lonlat[1], strict=True))
    out["air"] = toolkit.air_quality(where, connection=conn).assign(
        place=places["name"].to_numpy())
    towns = [TOWNS[t] for t in ("Andorra la Vella", "Ordino", "Canillo", "Encamp")]
    out["forecast"] = toolkit.air_quality_forecast(towns, duration=7, connection=conn)
    out["alerts"] = toolkit.severe_weather_alerts(towns, connection=conn)
    out["hourly"] = toolkit.air_quality_hourly_forecast(towns[:3], duration=48,
                                                        connection=conn)
    stops = [TOWNS[t] for t in ("Andorra la Vella", "Ordino", "Canillo", "Encamp")]
    out["addresses"] = toolkit.reverse_geocode(
        [*stops, (1.5240, 42.5090), (1.5350, 42.5575), (1.4500, 42.6000)],
        connection=conn)
    drive_to = out["two_ways"].geometry.iloc[0].geoms[0]
    points = [drive_to.interpolate(f, normalized=True) for f in (0, 0.25, 0.5, 0.75, 1)]
    along = toolkit.air_quality_forecast([(p.x, p.y) for p in points], duration=3,
                                         connection=conn)
    out["along"] = along.assign(km=along["location_index"].astype(float) * 5.0)
    return out

#: Each helper (one picture per name) and how it is drawn from the frames.
PICTURES: dict[str, Callable[[dict[str, Any]], Any]] = {
    "backend_health": lambda f: toolkit.plot.backend_health(f["health"]),
    "encryption_posture": lambda f: toolkit.plot.encryption_posture(f["posture"]),
    "authentication_strength_usage":
        lambda f: toolkit.plot.authentication_strength_usage(f["usage"]),
    "compliance_by": lambda f: toolkit.plot.compliance_by(f["latest"], by="resourceType"),
    "compliance_by__summary": lambda f: toolkit.plot.compliance_by(f["summary"]),
    "noncompliance_heatmap": lambda f: toolkit.plot.noncompliance_heatmap(f["latest"]),
    "compliance_trend": lambda f: toolkit.plot.compliance_trend(
        f["trend"], events=[(f["end"] - pd.Timedelta(days=10), "campaign")]),
    "compliance_trend__by": lambda f: toolkit.plot.compliance_trend(
        f["trend_by"], by="policyAssignmentName"),
    "routes": lambda f: toolkit.plot.routes(f["routes"]),
    "routes__alternatives": lambda f: toolkit.plot.routes(f["two_ways"],
                                                         incidents=f["incidents"]),
    "snapped_trace": lambda f: toolkit.plot.snapped_trace(f["raw"], f["snapped"]),
    "incidents": lambda f: toolkit.plot.incidents(f["incidents"]),
    "travel_times": lambda f: toolkit.plot.travel_times(f["matrix"]),
    "travel_times__distance": lambda f: toolkit.plot.travel_times(f["matrix"],
                                                                  value="distance"),
    "reachable_ranges": lambda f: toolkit.plot.reachable_ranges(f["ranges"]),
    "air_quality_map": lambda f: toolkit.plot.air_quality_map(f["air"], labels="place"),
    "pollutants": lambda f: toolkit.plot.pollutants(f["air"], location=int(
        f["air"]["globalIndex"].idxmax())),
    "air_quality_forecast": lambda f: toolkit.plot.air_quality_forecast(f["forecast"],
                                                                        location=0),
    "air_quality_forecast__grid": lambda f: toolkit.plot.air_quality_forecast(f["forecast"]),
    "forecast_along": lambda f: toolkit.plot.forecast_along(f["along"], "km"),
    "alert_timeline": lambda f: toolkit.plot.alert_timeline(f["alerts"]),
    "air_quality_hours": lambda f: toolkit.plot.air_quality_hours(
        f["hourly"], labels=["Andorra la Vella", "Ordino", "Canillo"], tz="Europe/Andorra"),
    "addresses": lambda f: toolkit.plot.addresses(f["addresses"]),
}


class Pictures:
    """Each picture of :data:`PICTURES`, drawn from ``frames`` on first asking and kept: the
    tests only read it (its texts, its description), and it is saved once."""

    def __init__(self, frames: dict[str, Any]) -> None:
        self.frames = frames
        self._drawn: dict[str, tuple[Any, dict[str, Any]]] = {}
        self._png: dict[str, bytes] = {}

    def axes(self, name: str) -> Any:
        """The axes the helper returned (its figure out of pyplot's list of open figures,
        drawn on a canvas of its own: more are kept than pyplot would warn about)."""
        return self._draw(name)[0]

    def changed(self, name: str) -> dict[str, Any]:
        """The ``rcParams`` the helper's call changed (name: value after the call)."""
        return self._draw(name)[1]

    def png(self, name: str) -> bytes:
        """The picture saved as the baselines were (at :data:`SAVED_DPI`, the figure's own:
        saving lays the figure out and draws it, which the texts are then read from)."""
        if name not in self._png:
            fig = self.axes(name).figure
            png = io.BytesIO()
            with matplotlib.rc_context({"svg.hashsalt": "toolkit", "path.simplify": True}):
                fig.savefig(png, dpi=SAVED_DPI, metadata={"Software": None})
            self._png[name] = png.getvalue()
        return self._png[name]

    def _draw(self, name: str) -> tuple[Any, dict[str, Any]]:
        if name not in self._drawn:
            import matplotlib.pyplot as plt
            from matplotlib.backends.backend_agg import FigureCanvasAgg

            before = dict(matplotlib.rcParams)
            ax = PICTURES[name](self.frames)
            changed = {k: v for k, v in matplotlib.rcParams.items() if before.get(k) != v}
            plt.close(ax.figure)
            FigureCanvasAgg(ax.figure)  # the canvas pyplot's backend gave it (Agg), anew
            self._drawn[name] = (ax, changed)
        return self._drawn[name]
