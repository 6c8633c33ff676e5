"""Weather: current air quality, daily and hourly forecasts and severe alerts for one place or
many, over HTTP against the sandbox, the services' real examples (13-15) replayed, and the
sandbox's air and alert model at unit level."""

from __future__ import annotations

import copy
from datetime import datetime, timedelta
from urllib.parse import parse_qs, urlsplit

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import requests
import shapely

import toolkit
from tests.conftest import example
from tests.maps.conftest import spec_category
from tests.replay import Answer, replay_server
from toolkit._core.errors import ApiError, AuthenticationError, ValidationError
from toolkit.maps._schemas import (
    AIR_QUALITY,
    AIR_QUALITY_FORECAST,
    AIR_QUALITY_HOURLY_FORECAST,
    AIR_QUALITY_POLLUTANTS,
    SEVERE_WEATHER_ALERTS,
)
from toolkit.sandbox.maps import peak_rate
from toolkit.sandbox.maps.weather import world as sw
from toolkit.sandbox.server import Sandbox

#: (lon, lat), the toolkit's order everywhere: town centres and a mountain slope.
ANDORRA_LA_VELLA = (1.5212, 42.5069)
ESCALDES = (1.5404, 42.5090)
ORDINO = (1.5335, 42.5562)
CANILLO = (1.5980, 42.5667)
SANT_JULIA = (1.4921, 42.4667)
MOUNTAIN = (1.4500, 42.6000)  # above Arinsal, far from roads and towns
MID_ATLANTIC = (-30.0, 40.0)
TOWNS = [ANDORRA_LA_VELLA, ESCALDES, ORDINO, CANILLO, SANT_JULIA]


def _check_schema(df, schema) -> None:
    assert list(df.columns) == schema.names
    assert str(df.crs) == "EPSG:4326"
    for col in schema.columns:
        if col.kind == "category":
            assert isinstance(df[col.name].dtype, pd.CategoricalDtype), col.name
        elif col.kind in ("string", "Int64", "boolean", "float"):
            assert df[col.name].dtype == col.dtype(), (col.name, df[col.name].dtype)
        elif col.kind == "datetime":
            assert str(df[col.name].dtype).startswith("datetime64") and \
                str(df[col.name].dt.tz) == "UTC", col.name


# ------------------------------------------------------------------------------ real examples


@pytest.fixture
def replay(waits):
    with replay_server() as rp:
        conn = toolkit.connect(base_url=rp.url, token="example-token-0123456789", progress=False,
                               maps_client_id="00000000-0000-0000-0000-0000000000aa")
        conn.sleep = waits
        rp.conn = conn
        yield rp


def _query_of(target: str) -> str:
    return parse_qs(urlsplit(target).query)["query"][0]


def test_current_air_quality_example(replay) -> None:
    ex = example("13-maps-weather-current-air-quality", "GetCurrentAirQuality.json")
    body = ex["responses"]["200"]["body"]
    lat, lon = ex["parameters"]["query"]
    replay.add("GET", "/weather/airQuality/current/json", Answer(200, body))
    df = toolkit.air_quality((lon, lat), connection=replay.conn)
    _check_schema(df, AIR_QUALITY)
    (method, target), = replay.seen
    # latitude first, each to the example's own precision (6 decimals keep its 6)
    assert method == "GET" and _query_of(target) == f"{lat},{lon}" == "47.632346,-122.13887"
    assert parse_qs(urlsplit(target).query)["pollutants"] == ["true"]
    rec = body["results"][0]
    row = df.iloc[0]
    assert len(df) == 1 and row["location_index"] == 0
    assert row["dateTime"] == pd.Timestamp(rec["dateTime"])
    for key in ("index", "globalIndex", "categoryColor", "description"):
        assert row[key] == rec[key], key
    assert row["category"] == "Fair" and row["dominantPollutant"] == "Ozone"
    assert df["category"].cat.ordered
    assert row["geometry"].equals(shapely.Point(lon, lat))

    pol = toolkit.air_quality_pollutants(df)
    _check_schema(pol, AIR_QUALITY_POLLUTANTS)
    want = rec["pollutants"]
    assert len(pol) == len(want)
    assert pol["type"].astype(str).tolist() == [p["type"] for p in want]
    assert pol["name"].tolist() == [p["name"] for p in want]
    assert pol["concentration.value"].tolist() == [p["concentration"]["value"] for p in want]
    assert pol["concentration.unit"].tolist() == ["µg/m³"] * 6  # the non-ASCII unit intact
    assert pol["concentration.unitType"].tolist() == [31] * 6
    assert pol["unit_type_name"].eq("MicrogramsPerCubicMeterOfAir").all()
    assert pol["index"].tolist() == [p["index"] for p in want]
    assert pol["globalIndex"].tolist() == [p["globalIndex"] for p in want]
    assert pol.loc[pol["is_dominant"], "type"].astype(str).tolist() == ["O3"]
    assert pol["location_index"].eq(0).all() and pol["dateTime"].eq(row["dateTime"]).all()


def test_daily_forecast_example(replay) -> None:
    ex = example("15-maps-weather-daily-air-quality-forecast", "GetDailyAirQuality.json")
    body = ex["responses"]["200"]["body"]
    lat, lon = ex["parameters"]["query"]
    replay.add("GET", "/weather/airQuality/forecasts/daily/json", Answer(200, body))
    df = toolkit.air_quality_forecast((lon, lat), duration=ex["parameters"]["duration"],
                                      connection=replay.conn)
    _check_schema(df, AIR_QUALITY_FORECAST)
    assert parse_qs(urlsplit(replay.seen[0][1]).query)["duration"] == ["3"]
    recs = body["results"]
    assert df["day"].tolist() == [0, 1, 2] and df["location_index"].eq(0).all()
    assert df["dateTime"].tolist() == [pd.Timestamp(r["dateTime"]) for r in recs]
    for key in ("index", "globalIndex", "categoryColor", "description"):
        assert df[key].tolist() == [r[key] for r in recs], key
    assert df["category"].astype(str).tolist() == ["Fair"] * 3
    assert df["dominantPollutant"].astype(str).tolist() == ["Ozone"] * 3
    assert df["error.code"].isna().all()


def test_severe_alerts_example(replay) -> None:
    ex = example("14-maps-weather-severe-alerts", "GetSevereWeatherAlerts.json")
    body = ex["responses"]["200"]["body"]
    lat, lon = (float(v) for v in ex["parameters"]["query"].split(","))
    replay.add("GET", "/weather/severe/alerts/json", Answer(200, body))
    df = toolkit.severe_weather_alerts((lon, lat), connection=replay.conn)
    _check_schema(df, SEVERE_WEATHER_ALERTS)
    assert _query_of(replay.seen[0][1]) == "48.057,-81.091"
    alerts = body["results"]
    assert len(df) == 2  # one area each
    assert df["alertId"].tolist() == [a["alertId"] for a in alerts]
    assert df["alert_rank"].tolist() == [0, 1] and df["area_index"].tolist() == [0, 0]
    for key in ("countryCode", "category", "source"):
        assert df[key].tolist() == [a[key] for a in alerts], key
    assert df["priority"].tolist() == [31, 31] and df["sourceId"].tolist() == [3, 3]
    assert df["description.english"].tolist() == ["Heat Warning"] * 2
    assert df["description.localized"].tolist() == ["Heat Warning"] * 2
    areas = [a["alertAreas"][0] for a in alerts]
    for key in ("name", "summary", "alertDetails", "alertDetailsLanguageCode"):
        assert df[key].tolist() == [a[key] for a in areas], key
    assert df["startTime"].tolist() == [pd.Timestamp(a["startTime"]) for a in areas]
    assert df["endTime"].tolist() == [pd.Timestamp(a["endTime"]) for a in areas]
    assert (df["start_offset"] == pd.Timedelta(0)).all()
    assert df["latestStatus.english"].astype(str).tolist() == ["Continue", "New"]
    assert df["latestStatus.localized"].tolist() == ["Continue", "New"]
    assert df["class"].isna().all() and df["level"].isna().all()
    assert df["disclaimer"].isna().all()


def test_unknown_pollutant_type_and_category_are_kept(replay) -> None:
    ex = example("13-maps-weather-current-air-quality", "GetCurrentAirQuality.json")
    body = copy.deepcopy(ex["responses"]["200"]["body"])
    rec = body["results"][0]
    rec.update(category="Hazy", dominantPollutant="Ammonia", globalIndex=80.0)
    rec["pollutants"].append({"type": "NH3", "name": "Ammonia", "index": 75.0,
                              "globalIndex": 80.0,
                              "concentration": {"value": 120.0, "unit": "µg/m³",
                                                "unitType": 99}})
    replay.add("GET", "/weather/airQuality/current/json", Answer(200, body))
    df = toolkit.air_quality(ex["parameters"]["query"][::-1], connection=replay.conn)
    assert df["category"].iloc[0] == "Hazy"
    assert list(df["category"].cat.categories[:6]) == ["Excellent", "Fair", "Poor", "Unhealthy",
                                                       "Very unhealthy", "Dangerous"]
    assert df["dominantPollutant"].iloc[0] == "Ammonia"
    pol = toolkit.air_quality_pollutants(df)
    assert pol["type"].astype(str).tolist()[-1] == "NH3" and len(pol) == 7
    nh3 = pol.iloc[-1]
    assert nh3["concentration.value"] == 120.0 and bool(nh3["is_dominant"])
    assert pd.isna(nh3["unit_type_name"]) and nh3["concentration.unitType"] == 99


def test_service_error_body_becomes_the_api_error(replay) -> None:
    replay.add("GET", "/weather/", Answer(400, {"error": {
        "code": "BadRequest", "message": "The provided coordinates in query are invalid."}},
        {"x-vendor-error-code": "BadRequest"}))
    with pytest.raises(ApiError) as info:
        toolkit.air_quality_forecast((-140.0, 10.0), connection=replay.conn)
    assert info.value.status == 400 and info.value.code == "BadRequest"


# ------------------------------------------------------------------------------ over HTTP


def test_air_quality_many_places_one_row_each_with_categories_from_the_bands(conn) -> None:
    df = toolkit.air_quality([*TOWNS, MOUNTAIN], connection=conn)
    _check_schema(df, AIR_QUALITY)
    assert df["location_index"].tolist() == list(range(6))
    assert [(p.x, p.y) for p in df.geometry] == [*TOWNS, MOUNTAIN]
    assert df["error.code"].isna().all()
    assert df["dateTime"].nunique() == 1
    assert df["dateTime"].iloc[0].minute == 0  # the observation of the hour
    pol = toolkit.air_quality_pollutants(df)
    assert len(pol) == 6 * 6
    for i, row in df.iterrows():
        mine = pol[pol["location_index"] == i]
        assert set(mine["type"].astype(str)) == {"CO", "NO2", "O3", "PM2.5", "PM10", "SO2"}
        assert row["globalIndex"] == mine["globalIndex"].max()
        top = mine.loc[mine["globalIndex"].idxmax()]
        assert row["dominantPollutant"] == top["name"] and bool(top["is_dominant"])
        assert row["index"] == top["index"]
        assert row["category"] == spec_category(row["globalIndex"])
    # towns breathe more nitrogen dioxide than the mountain slope
    no2 = pol[pol["type"] == "NO2"].set_index("location_index")["concentration.value"]
    assert no2.loc[[0, 1]].min() > 2 * no2.loc[5]


def test_category_and_colour_follow_the_global_index_bands_over_the_week(conn) -> None:
    df = toolkit.air_quality_forecast([*TOWNS, MOUNTAIN], duration=7, connection=conn)
    assert len(df) == 6 * 7
    assert (df["category"].astype(str) == df["globalIndex"].map(spec_category)).all()
    colours = df.groupby("category", observed=True)["categoryColor"].unique()
    assert all(len(c) == 1 for c in colours)  # one colour per category
    assert len(set(colours.map(lambda c: c[0]))) == len(colours)  # and distinct
    assert set(df["category"].astype(str)) >= {"Excellent", "Fair", "Unhealthy"}
    assert df.loc[df["category"] == "Fair", "categoryColor"].iloc[0] == "#FFC300"  # as the
    # service's own example


@pytest.mark.parametrize("duration", [1, 2, 5, 7])
def test_forecast_length_is_the_duration(conn, duration) -> None:
    df = toolkit.air_quality_forecast([ANDORRA_LA_VELLA, ORDINO], duration=duration,
                                      connection=conn)
    assert len(df) == 2 * duration
    assert df["location_index"].tolist() == [0] * duration + [1] * duration
    assert df["day"].tolist() == list(range(duration)) * 2
    steps = df[df["location_index"] == 0]["dateTime"].diff().dropna()
    assert steps.between(pd.Timedelta(hours=23), pd.Timedelta(hours=25)).all()


def test_todays_forecast_agrees_with_the_current_hour(conn, sandbox) -> None:
    now = toolkit.air_quality(TOWNS, connection=conn)
    today = toolkit.air_quality_forecast(TOWNS, duration=1, connection=conn)
    assert (today["dateTime"] <= now["dateTime"]).all()
    assert (now["dateTime"] < today["dateTime"] + pd.Timedelta(days=1)).all()
    # the day's forecast is its worst hour, so never better than the hour now
    assert (today["globalIndex"].to_numpy() >= now["globalIndex"].to_numpy()).all()


@pytest.mark.parametrize("duration", [1, 12, 24])
def test_hourly_forecast_has_the_hours_asked_from_the_current_one(conn, sandbox,
                                                                  duration) -> None:
    with sandbox.recording() as log:
        df = toolkit.air_quality_hourly_forecast([ORDINO, "Canillo"], duration=duration,
                                                 connection=conn)
    hourly = [e for e in log if "forecasts/hourly" in e.path]
    assert len(hourly) == 2 and parse_qs(hourly[0].query)["duration"] == [str(duration)]
    _check_schema(df, AIR_QUALITY_HOURLY_FORECAST)
    assert df["location_index"].tolist() == [0] * duration + [1] * duration
    assert df["hour"].tolist() == list(range(duration)) * 2
    assert df["place"].fillna("").tolist() == [""] * duration + ["Canillo"] * duration
    steps = df[df["location_index"] == 0]["dateTime"].diff().dropna()
    assert (steps == pd.Timedelta(hours=1)).all()
    assert all(len(p) == 6 for p in df["pollutants"])
    assert df.attrs["operation"] == "air_quality_hourly_forecast"
    # the first hour is the current reading
    now = toolkit.air_quality([ORDINO, "Canillo"], connection=conn)
    first = df[df["hour"] == 0].reset_index(drop=True)
    assert first["dateTime"].tolist() == now["dateTime"].tolist()
    assert first["globalIndex"].tolist() == now["globalIndex"].tolist()
    assert first["dominantPollutant"].tolist() == now["dominantPollutant"].tolist()


def test_hourly_forecast_agrees_with_the_daily_forecast_of_each_day(conn) -> None:
    hours = toolkit.air_quality_hourly_forecast(TOWNS, duration=96, connection=conn)
    days = toolkit.air_quality_forecast(TOWNS, duration=5, connection=conn)
    local = hours["dateTime"].dt.tz_convert("Europe/Andorra")
    hours = hours.assign(local_day=local.dt.normalize())
    days = days.assign(local_day=days["dateTime"].dt.tz_convert("Europe/Andorra").dt.normalize())
    full = hours.groupby(["location_index", "local_day"])["hour"].transform("size") == 24
    worst = hours.groupby(["location_index", "local_day"])["globalIndex"].max()
    checked = 0
    for (i, day), value in worst.items():
        daily = days[(days["location_index"] == i) & (days["local_day"] == day)]
        assert len(daily) == 1
        # never worse than the day's forecast; the day's worst hour when all of it is forecast
        assert value <= daily["globalIndex"].iloc[0]
        if full[(hours["location_index"] == i) & (hours["local_day"] == day)].all():
            assert value == daily["globalIndex"].iloc[0]
            checked += 1
    assert checked >= 2 * len(TOWNS)


def test_hourly_pollutants_reshape_and_the_flag(conn, sandbox) -> None:
    df = toolkit.air_quality_hourly_forecast(ORDINO, duration=12, connection=conn)
    long = toolkit.air_quality_pollutants(df)
    assert len(long) == 12 * 6 and long["dateTime"].nunique() == 12
    assert long.groupby("dateTime")["is_dominant"].sum().eq(1).all()
    with sandbox.recording() as log:
        bare = toolkit.air_quality_hourly_forecast(ORDINO, duration=1, pollutants=False,
                                                   connection=conn)
    assert parse_qs(log[0].query)["pollutants"] == ["false"]
    assert bare["pollutants"].isna().all() and bare["globalIndex"].notna().all()


@pytest.mark.parametrize("duration", [0, 2, 6, 25, 97, True, 24.0, "24", None])
def test_hourly_duration_is_one_of_the_services_spans(conn, sandbox, duration) -> None:
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        toolkit.air_quality_hourly_forecast(ORDINO, duration=duration, connection=conn)
    assert log == [] and info.value.parameter == "duration"
    assert "1, 12, 24, 48, 72, 96" in str(info.value)


def test_pollutants_false_sends_the_flag_and_gives_no_pollutant_rows(conn, sandbox) -> None:
    with sandbox.recording() as log:
        df = toolkit.air_quality(ORDINO, pollutants=False, connection=conn)
    assert parse_qs(log[0].query)["pollutants"] == ["false"]
    assert df["pollutants"].isna().all() and df["globalIndex"].notna().all()
    pol = toolkit.air_quality_pollutants(df)
    assert len(pol) == 0 and list(pol.columns) == AIR_QUALITY_POLLUTANTS.names


def test_language_localizes_text_and_keeps_the_names(conn) -> None:
    en = toolkit.air_quality(TOWNS, connection=conn)
    fr = toolkit.air_quality(TOWNS, language="fr", connection=conn)
    assert (fr["globalIndex"] == en["globalIndex"]).all()
    assert set(fr["category"].astype(str)) <= {"Excellent", "Correct", "Médiocre", "Mauvais",
                                               "Très mauvais", "Dangereux"}
    assert (fr["description"] != en["description"]).all()
    alerts = toolkit.severe_weather_alerts(ANDORRA_LA_VELLA, language="ca", connection=conn)
    assert (alerts["description.localized"] != alerts["description.english"]).all()


def test_input_shapes_give_the_same_places(conn) -> None:
    pairs = [ANDORRA_LA_VELLA, ORDINO]
    points = [shapely.Point(lon, lat) for lon, lat in pairs]
    shapes = [
        pairs,
        np.array(pairs),
        points,
        gpd.GeoSeries(points, crs=4326),
        gpd.GeoDataFrame({"town": ["Andorra la Vella", "Ordino"]}, geometry=points, crs=4326),
        pd.DataFrame({"lat": [p[1] for p in pairs], "lon": [p[0] for p in pairs]}),
        pd.DataFrame({"Longitude": [p[0] for p in pairs], "Latitude": [p[1] for p in pairs]}),
        gpd.GeoSeries(points, crs=4326).to_crs(25831),
        gpd.GeoDataFrame(geometry=points, crs=4326).to_crs(3857),
    ]
    first = toolkit.air_quality(shapes[0], pollutants=False, connection=conn)
    for shape in shapes[1:]:
        df = toolkit.air_quality(shape, pollutants=False, connection=conn)
        assert df["location_index"].tolist() == [0, 1]
        assert [g.equals_exact(h, 1e-7) for g, h in
                zip(df.geometry, first.geometry, strict=True)] == [True, True]
        assert df["globalIndex"].tolist() == first["globalIndex"].tolist()
    one = toolkit.air_quality(ORDINO, pollutants=False, connection=conn)
    assert len(one) == 1 and one.geometry.iloc[0].equals(points[1])


@pytest.mark.parametrize("call, parameter, words", [
    (lambda c: toolkit.air_quality((1.5, 91.0), connection=c), "locations",
     "must be (longitude, latitude) with latitude in [-90, 90]"),
    (lambda c: toolkit.air_quality((47.632346, -122.13887), connection=c), "locations",
     "looks like (latitude, longitude)"),
    (lambda c: toolkit.severe_weather_alerts([ORDINO, (242.0, 1.52)], connection=c),
     "locations[1]", "must be (longitude, latitude) with longitude in [-180, 180]"),
    (lambda c: toolkit.air_quality_forecast(ORDINO, duration=0, connection=c), "duration",
     "between 1 and 7"),
    (lambda c: toolkit.air_quality_forecast(ORDINO, duration=8, connection=c), "duration",
     "between 1 and 7"),
    (lambda c: toolkit.air_quality_forecast(ORDINO, duration=2.5, connection=c), "duration",
     "integer"),
    (lambda c: toolkit.air_quality([], connection=c), "locations", "at least 1 point"),
    (lambda c: toolkit.severe_weather_alerts([], connection=c), "locations",
     "at least 1 point"),
    (lambda c: toolkit.air_quality(b"Ordino", connection=c), "locations", "points"),
    (lambda c: toolkit.air_quality(["Ordino", "  "], connection=c), "locations[1]",
     "must not be empty"),
    (lambda c: toolkit.air_quality(["Ordino", (195.0, 42.5)], connection=c), "locations[1]",
     "longitude in [-180, 180]"),
    (lambda c: toolkit.air_quality((float("nan"), 1.5), connection=c), "locations",
     "finite"),
    (lambda c: toolkit.air_quality(pd.DataFrame({"town": ["Ordino"]}), connection=c),
     "locations", "latitude columns"),
    (lambda c: toolkit.air_quality(ORDINO, language="", connection=c), "language",
     "language tag"),
    (lambda c: toolkit.air_quality(ORDINO, pollutants="no", connection=c), "pollutants",
     "True or False"),
    (lambda c: toolkit.severe_weather_alerts(ORDINO, details=None, connection=c), "details",
     "True or False"),
    (lambda c: toolkit.air_quality(ORDINO, api_version="", connection=c), "api_version",
     "required"),
])
def test_bad_input_is_refused_before_any_request(conn, sandbox, call, parameter, words) -> None:
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        call(conn)
    assert log == []
    assert info.value.parameter == parameter
    assert words in str(info.value)


def test_swapped_pair_message_says_which_order(conn) -> None:
    with pytest.raises(ValidationError) as info:
        toolkit.air_quality((47.632346, -122.13887), connection=conn)
    assert str(info.value) == (
        "locations=(47.632346, -122.13887): must be (longitude, latitude) with latitude in "
        "[-90, 90]; this pair looks like (latitude, longitude): pass (-122.139, 47.6323) "
        "instead")


def test_a_pair_valid_both_ways_is_taken_as_longitude_latitude(conn, sandbox) -> None:
    # Andorra la Vella written (lat, lon) is a valid (lon, lat) in East Africa: asked as such
    lat_first = (ANDORRA_LA_VELLA[1], ANDORRA_LA_VELLA[0])
    with sandbox.recording() as log:
        df = toolkit.air_quality(lat_first, pollutants=False, connection=conn)
    assert [parse_qs(e.query)["query"] for e in log] == [["1.5212,42.5069"]]
    assert (df.geometry.iloc[0].x, df.geometry.iloc[0].y) == lat_first


def test_far_at_sea_one_place_raises_the_service_error(conn, sandbox) -> None:
    with pytest.raises(ApiError) as info:
        toolkit.air_quality(MID_ATLANTIC, connection=conn)
    assert info.value.status == 400 and info.value.code == "BadRequest"
    assert "coverage" in info.value.message
    # the body and header as the spec's ErrorResponse: code mirrored in x-vendor-error-code
    raw = requests.get(f"{sandbox.url}/weather/airQuality/current/json",
                       params={"api-version": "1.1", "query": "40,-30",
                               "subscription-key": sandbox.maps_key.reveal()}, timeout=10)
    assert raw.status_code == 400 and raw.headers["x-vendor-error-code"] == "BadRequest"
    assert set(raw.json()["error"]) >= {"code", "message", "target", "details"}


def test_far_at_sea_among_many_is_a_row_and_the_others_keep_their_results(conn) -> None:
    places = [ORDINO, MID_ATLANTIC, ANDORRA_LA_VELLA]
    for func in (toolkit.air_quality, toolkit.air_quality_forecast):
        df = func(places, connection=conn)
        assert df["location_index"].tolist() == [0, 1, 2]
        assert df["error.code"].isna().tolist() == [True, False, True]
        assert df.loc[1, "error.code"] == "BadRequest" and pd.isna(df.loc[1, "globalIndex"])
        assert df.loc[[0, 2], "globalIndex"].notna().all()
    alerts = toolkit.severe_weather_alerts(places, connection=conn)
    assert alerts.loc[alerts["location_index"] == 1, "error.code"].tolist() == ["BadRequest"]


def test_coverage_near_coasts_inland_seas_and_far_out(conn) -> None:
    near = [(-9.8, 38.7), (51.0, 42.0), (2.35, 48.85)]  # off Lisbon, the Caspian, Paris
    df = toolkit.air_quality([*near, (-120.0, -45.0)], pollutants=False, connection=conn)
    assert df["error.code"].isna().tolist() == [True, True, True, False]
    assert not sw.covered(-30.0, 40.0) and sw.covered(-9.8, 38.7)


def test_many_places_under_throttling_keep_order_and_lose_nothing(conn, sandbox, waits) -> None:
    rng = np.random.default_rng(3)
    places = [(1.42 + 0.3 * b, 42.43 + 0.2 * a) for a, b in rng.random((40, 2))]
    calm = toolkit.air_quality(places, pollutants=False, connection=conn)
    # ten throttled answers over the first requests: they may all fall on one place (its retry
    # can come first again once the wait is over), so the connection has retries for all ten
    patient = toolkit.connect(sandbox=sandbox, progress=False, max_retries=10)
    patient.sleep = waits
    sandbox.inject("429", rate=1.0, count=10, path="/weather/airQuality/current", retry_after=1)
    with sandbox.recording() as log:
        stormy = toolkit.air_quality(places, pollutants=False, connection=patient)
    patient.close()
    throttled = [r for r in log if r.status == 429]
    assert len(throttled) == 10 and waits.count(1.0) >= 10
    assert stormy["location_index"].tolist() == list(range(40))
    assert stormy["error.code"].isna().all()
    assert [g.equals(h) for g, h in zip(stormy.geometry, calm.geometry, strict=True)] == \
        [True] * 40
    assert stormy["globalIndex"].tolist() == calm["globalIndex"].tolist()
    answered = [r for r in log if r.status == 200]
    assert len(answered) == 40  # each place asked until answered once, never twice
    assert len({r.query for r in answered}) == 40


@pytest.mark.xdist_group("real-time")  # measures real time: see tests/conftest.py
def test_many_places_stay_within_the_documented_rate(sandbox) -> None:
    import time

    real = toolkit.connect(sandbox=sandbox, progress=False)  # waits really waited
    places = [(1.50 + 0.001 * i, 42.45 + 0.002 * i) for i in range(80)]
    since = time.monotonic()
    try:
        df = toolkit.severe_weather_alerts(places, details=False, connection=real)
    finally:
        real.close()
    assert set(df["location_index"].dropna()) == set(range(80))
    assert peak_rate(sandbox, "severe_weather_alerts", since=since) <= sw.WEATHER_QPS


def test_a_refused_credential_is_raised_not_turned_into_rows(sandbox) -> None:
    bad = toolkit.connect(maps_url=sandbox.url, maps_key="not-the-key", progress=False)
    try:
        with pytest.raises(AuthenticationError):
            toolkit.air_quality([ORDINO, ANDORRA_LA_VELLA], connection=bad)
    finally:
        bad.close()


def test_unsupported_api_version_is_the_service_error(conn) -> None:
    with pytest.raises(ApiError) as info:
        toolkit.severe_weather_alerts(ORDINO, api_version="1.0", connection=conn)
    assert info.value.status == 400 and "1.1" in info.value.message


# ------------------------------------------------------------------------------ alerts


def test_alerts_one_row_per_area_in_priority_order(conn) -> None:
    df = toolkit.severe_weather_alerts([ORDINO, ANDORRA_LA_VELLA, MOUNTAIN], connection=conn)
    _check_schema(df, SEVERE_WEATHER_ALERTS)
    assert df["error.code"].isna().all()
    for _, rows in df.groupby("location_index"):
        firsts = rows.drop_duplicates("alertId")
        assert firsts["priority"].is_monotonic_increasing
        assert firsts["alert_rank"].tolist() == list(range(len(firsts)))
        for _, areas in rows.groupby("alertId"):
            assert areas["area_index"].tolist() == list(range(len(areas)))
            assert areas[["description.english", "priority", "source"]].nunique().max() == 1
    assert df.groupby("alertId").size().max() >= 3  # several areas per alert
    assert set(df["latestStatus.english"].astype(str)) <= set(sw.ALERT_STATUSES)
    assert df["alertDetails"].notna().all()
    assert df["alertDetailsLanguageCode"].eq("ca-AD").all()  # the provider's language
    assert df["countryCode"].eq("AD").all()
    air = df["description.english"] == "Air Quality Alert"  # optional fields only where given
    assert air.any() and df.loc[air, "disclaimer"].notna().all() and \
        df.loc[~air, "disclaimer"].isna().all()
    assert df.loc[air, "class"].isna().all() and df.loc[~air, "class"].notna().all()


def test_alerts_without_details_have_no_details(conn, sandbox) -> None:
    with sandbox.recording() as log:
        df = toolkit.severe_weather_alerts(ORDINO, details=False, connection=conn)
    assert parse_qs(log[0].query)["details"] == ["false"]
    assert len(df) > 0
    assert df["alertDetails"].isna().all() and df["alertDetailsLanguageCode"].isna().all()


def test_alert_times_are_utc_with_the_offset_the_service_wrote(conn, sandbox) -> None:
    df = toolkit.severe_weather_alerts(ORDINO, connection=conn)
    raw = requests.get(f"{sandbox.url}/weather/severe/alerts/json",
                       params={"api-version": "1.1", "query": "42.5562,1.5335",
                               "subscription-key": sandbox.maps_key.reveal()}, timeout=10)
    areas = [a for r in raw.json()["results"] for a in r["alertAreas"]]
    assert len(areas) == len(df)
    for (_, row), area in zip(df.iterrows(), areas, strict=True):
        local = datetime.fromisoformat(area["startTime"])
        assert local.utcoffset() == timedelta(hours=1)  # Andorra in winter
        assert row["startTime"] == pd.Timestamp(local).tz_convert("UTC")
        assert row["start_offset"] == pd.Timedelta(hours=1)
        assert (row["startTime"] + row["start_offset"]).strftime("%H:%M") == \
            local.strftime("%H:%M")


def test_alert_statuses_move_over_the_sandbox_clock() -> None:
    later = sw.ANCHOR + timedelta(hours=60)
    with Sandbox(seed=7, epoch=later) as sb:
        conn = toolkit.connect(sandbox=sb, progress=False)
        try:
            df = toolkit.severe_weather_alerts([ANDORRA_LA_VELLA, SANT_JULIA], connection=conn)
            aq = toolkit.air_quality(ANDORRA_LA_VELLA, connection=conn)
        finally:
            conn.close()
    statuses = dict(zip(df["name"], df["latestStatus.english"].astype(str), strict=False))
    assert statuses["Andorra la Vella"] == "Upgrade" and statuses["Sant Julià de Lòria"] == \
        "Continue"
    assert df["level"].eq("High").all()
    assert aq["dateTime"].iloc[0] == pd.Timestamp(later)  # the sandbox clock


def test_the_catalog_lists_the_weather_world(catalog) -> None:
    rows = catalog[catalog["kind"].isin(["weather_alert", "air_quality_episode"])]
    assert (rows["kind"] == "weather_alert").sum() == 4
    assert rows["detail"].str.contains("alertId").sum() == 4


def test_a_place_without_results_keeps_its_row(replay) -> None:
    replay.add("GET", "/weather/airQuality/current/json", Answer(200, {"results": []}))
    df = toolkit.air_quality([ORDINO, CANILLO], connection=replay.conn)
    assert df["location_index"].tolist() == [0, 1] and df["globalIndex"].isna().all()
    replay.add("GET", "/weather/severe/alerts/json", Answer(200, {"results": []}))
    alerts = toolkit.severe_weather_alerts([ORDINO, CANILLO], connection=replay.conn)
    assert len(alerts) == 0 and list(alerts.columns) == SEVERE_WEATHER_ALERTS.names


def test_unknown_language_falls_back_to_english(conn) -> None:
    en = toolkit.air_quality(ORDINO, connection=conn)
    other = toolkit.air_quality(ORDINO, language="tlh-Latn", connection=conn)
    assert other["description"].tolist() == en["description"].tolist()
    assert other["category"].astype(str).tolist() == en["category"].astype(str).tolist()
