"""The real maps service's answers (the Azure SDK for Python's test-proxy recordings, 2024),
replayed through the toolkit's functions: a geocoded address, and the current air quality, the
daily air-quality forecast and the severe-weather alerts at one point past 100 degrees of
longitude (Taipei), where the coordinates must go on the wire to 6 decimals for the request to
be the recorded one."""

from __future__ import annotations

from urllib.parse import unquote

import pandas as pd
import pytest

import toolkit
from tests.recordings.cassette import load, replaying

KEY = "recorded-traffic-key-0123456789"


@pytest.fixture
def connect(waits):
    made = []

    def make(url: str):
        conn = toolkit.connect(maps_url=url, cloud="public", maps_key=KEY, progress=False)
        conn.sleep = waits
        made.append(conn)
        return conn

    yield make
    for conn in made:
        conn.close()


def _point(ex) -> tuple[float, float]:
    lat, lon = (float(v) for v in dict(ex.query)["query"].split(","))
    return lon, lat


def test_a_geocoded_address_is_read_as_the_service_said(connect) -> None:
    name = "azure-sdk-assets/maps_search_geocode.json"
    [ex] = load(name)
    asked = dict(ex.query)
    with replaying(name) as replay:
        df = toolkit.geocode(unquote(asked["query"]), top=int(asked["top"]),
                             api_version=asked["api-version"], connection=connect(replay.url))
    assert replay.unmatched == [] and replay.left == []
    [feature] = ex.json()["features"]
    props, address = feature["properties"], feature["properties"]["address"]
    assert len(df) == 1 and df["rank"].tolist() == [1]
    assert df["type"].astype(str).tolist() == [props["type"]]
    assert df["confidence"].astype(str).tolist() == [props["confidence"]]
    assert df["address.formattedAddress"].tolist() == [address["formattedAddress"]]
    assert df["address.locality"].tolist() == [address["locality"]]
    assert df["address.countryRegion.ISO"].tolist() == [address["countryRegion"]["ISO"]]
    # two districts with short names only: their short names stand for them
    assert [df["admin_district_1"].iloc[0], df["admin_district_2"].iloc[0]] == \
        [d["shortName"] for d in address["adminDistricts"]]
    assert (df.geometry.x.iloc[0], df.geometry.y.iloc[0]) == tuple(
        feature["geometry"]["coordinates"])
    assert df["bbox"].iloc[0] == feature["bbox"]


def test_the_current_air_quality_past_100_degrees_of_longitude(connect) -> None:
    name = "azure-sdk-assets/maps_weather_current_air_quality.json"
    [ex] = load(name)
    # the recorded request names no pollutants flag: the service's default is true
    with replaying(name, defaults={"pollutants": "true"}) as replay:
        df = toolkit.air_quality(_point(ex), api_version=dict(ex.query)["api-version"],
                                 connection=connect(replay.url))
    assert replay.unmatched == [] and replay.left == []
    [result] = ex.json()["results"]
    row = df.iloc[0]
    assert len(df) == 1 and row["location_index"] == 0
    assert row["category"] == result["category"] and row["index"] == result["index"]
    assert row["globalIndex"] == result["globalIndex"]
    assert row["dominantPollutant"] == result["dominantPollutant"]
    assert row["dateTime"] == pd.Timestamp(result["dateTime"])
    assert (df.geometry.x.iloc[0], df.geometry.y.iloc[0]) == _point(ex)
    pollutants = toolkit.air_quality_pollutants(df)
    assert pollutants["type"].astype(str).tolist() == [p["type"] for p in result["pollutants"]]
    assert pollutants["concentration.value"].tolist() == \
        [p["concentration"]["value"] for p in result["pollutants"]]


def test_the_daily_air_quality_forecast(connect) -> None:
    name = "azure-sdk-assets/maps_weather_daily_air_quality_forecast.json"
    [ex] = load(name)
    asked = dict(ex.query)
    with replaying(name) as replay:
        df = toolkit.air_quality_forecast(_point(ex), duration=int(asked["duration"]),
                                          api_version=asked["api-version"],
                                          connection=connect(replay.url))
    assert replay.unmatched == [] and replay.left == []
    results = ex.json()["results"]
    assert len(df) == len(results) == 1
    assert df["category"].astype(str).tolist() == [r["category"] for r in results]
    assert df["dateTime"].tolist() == [pd.Timestamp(r["dateTime"]) for r in results]


def test_no_severe_weather_alert_is_an_empty_frame(connect) -> None:
    name = "azure-sdk-assets/maps_weather_severe_alerts.json"
    [ex] = load(name)
    with replaying(name, defaults={"details": "true"}) as replay:
        df = toolkit.severe_weather_alerts(_point(ex), api_version=dict(ex.query)["api-version"],
                                           connection=connect(replay.url))
    assert replay.unmatched == [] and replay.left == []
    assert ex.json()["results"] == [] and len(df) == 0
    assert "geometry" in df.columns and df.attrs["operation"] == "severe_weather_alerts"


def test_a_request_the_recording_lacks_is_refused() -> None:
    # the replay's own check: 7 significant digits were 4 decimals past 100 degrees (121.564)
    name = "azure-sdk-assets/maps_weather_severe_alerts.json"
    import requests

    with replaying(name) as replay:
        wrong = requests.get(f"{replay.url}/weather/severe/alerts/json?api-version=1.1"
                             "&query=25.03381,121.564", timeout=10)
        right = requests.get(f"{replay.url}/weather/severe/alerts/json?api-version=1.1"
                             "&query=25.033805,121.564009", timeout=10)
    assert wrong.status_code == 404 and wrong.json()["error"]["code"] == "NotRecorded"
    assert right.status_code == 200 and replay.unmatched == [(
        "GET", "/weather/severe/alerts/json?api-version=1.1&query=25.03381,121.564")]
