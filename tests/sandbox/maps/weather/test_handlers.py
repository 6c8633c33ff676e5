"""The sandbox's weather service refuses what the real one refuses, with the error code in the
header and the body."""

from __future__ import annotations

import pytest
import requests


@pytest.mark.parametrize("path, params, words", [
    ("/weather/airQuality/current/xml", {"query": "42.5,1.5"}, "json"),
    ("/weather/airQuality/current/json", {}, "'query' parameter is required"),
    ("/weather/airQuality/current/json", {"query": "1.5"}, "latitude,longitude"),
    ("/weather/airQuality/current/json", {"query": "95,1.5"}, "out of range"),
    ("/weather/airQuality/current/json", {"query": "42.5,1.5", "pollutants": "maybe"},
     "true or false"),
    ("/weather/airQuality/forecasts/daily/json", {"query": "42.5,1.5", "duration": "9"},
     "duration"),
    ("/weather/severe/alerts/json", {"query": "42.5,1.5", "details": "yes"}, "true or false"),
    ("/weather/airQuality/forecasts/hourly/json", {"query": "42.5,1.5", "duration": "2"},
     "1, 12, 24, 48, 72, 96"),
    ("/weather/airQuality/forecasts/hourly/json", {"query": "42.5,1.5", "duration": "a"},
     "duration"),
    ("/weather/airQuality/forecasts/hourly/json", {"query": "42.5,1.5", "pollutants": "no"},
     "true or false"),
])
def test_the_sandbox_refuses_what_the_service_refuses(sandbox, path, params, words) -> None:
    raw = requests.get(f"{sandbox.url}{path}",
                       params={"api-version": "1.1", **params,
                               "subscription-key": sandbox.maps_key.reveal()}, timeout=10)
    assert raw.status_code == 400
    assert raw.headers["x-vendor-error-code"] == raw.json()["error"]["code"]
    assert words in raw.json()["error"]["message"]
