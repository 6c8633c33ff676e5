"""The sandbox's air and alert model at unit level: alert statuses over a cycle, ended alerts
leaving the list, rush hours, afternoon ozone and the pollution episode, daily forecasts as the
worst hour, the category bands."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest

from tests.maps.conftest import spec_category
from toolkit.sandbox.maps.weather import world as sw

ANDORRA_LA_VELLA = (42.5069, 1.5212)
ESCALDES = (42.5090, 1.5404)
MOUNTAIN = (42.6000, 1.4500)  # above Arinsal, far from roads and towns


@pytest.fixture(scope="module")
def ww(world):
    return world.section("weather")


def test_every_status_keyword_appears_over_a_cycle(ww) -> None:
    seen: dict[str, set[str]] = {}
    for hour in range(-24, 24 * 10):
        at = sw.ANCHOR + timedelta(hours=hour)
        for parish in ("Andorra la Vella", "Canillo", "Encamp", "La Massana", "Ordino"):
            for _alert, listed in sw.alerts_at(ww, parish, at):
                for area, status in listed:
                    seen.setdefault(status, set()).add(area.name)
    assert set(seen) == set(sw.ALERT_STATUSES)


def test_ended_alerts_leave_the_list(ww) -> None:
    _episode, alerts = ww.cycle(0)
    air = next(a for a in alerts if a.kind == "air")
    end = max(t for area in air.areas for t, _ in area.events)
    after = sw.alerts_at(ww, "Andorra la Vella", end + sw.ALERT_LINGER + timedelta(minutes=1))
    assert air.alert_id not in [a.alert_id for a, _ in after]


def test_rush_hours_ozone_afternoon_and_the_episode(ww) -> None:
    lat, lon = ANDORRA_LA_VELLA
    local = sw.LOCAL
    friday = datetime(2026, 11, 20, tzinfo=local)

    def conc(point, day, hour, kind):
        t = (day + timedelta(hours=hour)).astimezone(UTC)
        return float(sw.concentrations(ww, point[1], point[0], [t])[kind][0])

    assert conc(ANDORRA_LA_VELLA, friday, 8.5, "NO2") > 2 * conc(ANDORRA_LA_VELLA, friday, 3,
                                                                 "NO2")
    assert conc(ANDORRA_LA_VELLA, friday, 18, "NO2") > 1.5 * conc(ANDORRA_LA_VELLA, friday, 13,
                                                                  "NO2")
    assert conc(MOUNTAIN, friday, 15, "O3") > 1.5 * conc(MOUNTAIN, friday, 7, "O3")
    episode, _ = ww.cycle(0)
    peak_day = episode.start + (episode.end - episode.start) / 2
    before = sw.daily_forecast(ww, lon, lat, sw.ANCHOR, 1)[0]["globalIndex"]
    during = sw.daily_forecast(ww, lon, lat, peak_day, 1)[0]["globalIndex"]
    assert during > 2 * before
    assert sw.category_of(during) in ("Unhealthy", "Very unhealthy")
    # the mountain stays clean while the valley suffers
    assert sw.daily_forecast(ww, MOUNTAIN[1], MOUNTAIN[0], peak_day, 1)[0]["globalIndex"] < 50


def test_daily_forecast_is_the_worst_hour_of_the_day(ww) -> None:
    lat, lon = ESCALDES
    day = sw.daily_forecast(ww, lon, lat, sw.ANCHOR, 2)[1]
    start = pd.Timestamp(day["dateTime"]).to_pydatetime()
    hourly = [sw.hourly_reading(ww, lon, lat, start + timedelta(hours=h))["globalIndex"]
              for h in range(24)]
    assert day["globalIndex"] == max(hourly)


def test_the_hourly_forecast_starts_with_the_current_reading(ww) -> None:
    lat, lon = ESCALDES
    at = sw.ANCHOR + timedelta(days=1, hours=7, minutes=41)
    hours = sw.hourly_forecast(ww, lon, lat, at, 12, language="fr")
    assert len(hours) == 12
    assert hours[0] == sw.hourly_reading(ww, lon, lat, at, language="fr")
    for k, rec in enumerate(hours):
        top = (at + timedelta(hours=k)).replace(minute=0)
        assert rec == sw.hourly_reading(ww, lon, lat, top, language="fr")
    bare = sw.hourly_forecast(ww, lon, lat, at, 1, pollutants=False)
    assert "pollutants" not in bare[0] and len(hours[0]["pollutants"]) == 6


def test_category_of_bands_edges() -> None:
    cases = {0: "Excellent", 20: "Excellent", 20.1: "Fair", 50: "Fair", 50.1: "Poor",
             100: "Poor", 101: "Unhealthy", 150: "Unhealthy", 151: "Very unhealthy",
             250: "Very unhealthy", 250.1: "Dangerous", 400: "Dangerous"}
    for value, name in cases.items():
        assert sw.category_of(value) == name == spec_category(value)
