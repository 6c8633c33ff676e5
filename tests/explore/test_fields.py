"""The tooltips and popups of the interactive maps: a handful of labelled fields with units per
operation, the local time, long text left to the popup, the local date of a forecast day."""

from __future__ import annotations

import pandas as pd
import pytest
import shapely

gpd = pytest.importorskip("geopandas")


def _op_frame(operation: str, **columns):
    df = gpd.GeoDataFrame(columns, geometry=[shapely.Point(1.5, 42.5)] * len(
        next(iter(columns.values()))), crs="EPSG:4326")
    df.attrs["operation"] = operation
    return df


def test_route_tooltips_say_minutes_kilometres_and_the_delay_share() -> None:
    from toolkit.explore._fields import TOOLTIPS, tooltip_texts

    df = _op_frame("route_directions", route_index=[0], distanceInMeters=[11777.8],
                durationInSeconds=[600], durationTrafficInSeconds=[750],
                departureAt=[pd.Timestamp("2026-11-20T09:00:00Z")],
                arrivalAt=[pd.Timestamp("2026-11-20T09:12:30Z")],
                legs=[[{"distanceInMeters": 1.0}]], resourceId=["sbx,1,r0"])
    texts = {k: v[0] for k, v in tooltip_texts(df, TOOLTIPS["route_directions"]).items()}
    assert texts["distance"] == "11.8 km"
    assert texts["time, no traffic"] == "10 min" and texts["time in traffic"] == "12 min"
    assert texts["delay"] == "2 min (+25 %)"
    assert texts["departs"] == "Fri 20 Nov 09:00 UTC"
    local = tooltip_texts(df, TOOLTIPS["route_directions"], tz="Europe/Andorra")
    assert local["departs"] == ["Fri 20 Nov 10:00 CET"]
    assert not any("legs" in k or "resourceId" in k for k in texts)


def test_alert_tooltips_use_the_alerts_own_local_time_and_leave_long_text_to_the_popup() -> None:
    from toolkit.explore._fields import POPUP_TEXT, TOOLTIPS, popup_html, tooltip_texts

    details = "Situació d'inversió tèrmica persistent <b>" + "x" * 400
    df = _op_frame("severe_weather_alerts", alertId=[1], **{"description.english": ["Snow"]},
                name=["Canillo"], level=["Moderate"], **{"latestStatus.english": ["New"]},
                startTime=[pd.Timestamp("2026-11-21T16:00:00Z")],
                start_offset=[pd.Timedelta(hours=1)], endTime=[pd.NaT], end_offset=[pd.NaT],
                alertDetails=[details], disclaimer=["d"], **{"error.code": [pd.NA]})
    texts = tooltip_texts(df, TOOLTIPS["severe_weather_alerts"])
    assert len(texts) == 6
    assert texts["from (local)"] == ["Sat 21 Nov 17:00 UTC+1"]
    assert texts["until (local)"] == [""]
    popup = popup_html(df.drop(columns="geometry").iloc[0])
    assert "<details>" in popup and "&lt;b&gt;" in popup and "<b>" + "x" not in popup
    assert popup.index("<details>") < popup.index("x" * (POPUP_TEXT // 4))
    assert "error.code" not in popup  # empty values are left out


def test_a_frame_of_no_known_operation_gets_its_first_columns() -> None:
    from toolkit.explore._fields import fields_for

    df = gpd.GeoDataFrame({f"c{i}": [i] for i in range(9)},
                          geometry=[shapely.Point(0, 0)], crs="EPSG:4326")
    assert [f.label for f in fields_for(df)] == [f"c{i}" for i in range(6)]


def test_forecast_days_are_named_by_their_local_date() -> None:
    from toolkit.explore._fields import local_date

    assert local_date(pd.Timestamp("2026-11-19T23:00:00Z")) == "2026-11-20"   # Andorra, CET
    assert local_date(pd.Timestamp("2026-11-20T05:00:00Z")) == "2026-11-20"   # New York
    assert local_date(pd.NaT) == ""
