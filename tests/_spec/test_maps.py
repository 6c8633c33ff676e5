"""The facts of the maps services agree with spec document 2, the schemas and the real
examples; the client, the plots and the sandbox hold these very facts."""

from __future__ import annotations

import importlib
import itertools
import math
import re
from bisect import bisect_left
from typing import Any

import pytest
import requests

from tests._spec.conftest import (
    copies_of,
    imports_beyond_spec,
    schema,
    schema_enum,
    schema_parameter,
    spec_list,
    spec_section,
    spec_text,
    spec_versions,
    top_level_statements,
)
from tests.conftest import EXAMPLES, example
from toolkit._spec import maps

VERSIONS = {  # the spec's words for the operations of each tuple (spec 2 §9), their schemas
    "SEARCH_API_VERSIONS": (["autocomplete"], ["09-maps-geocode-autocomplete"]),
    "ROUTE_API_VERSIONS": (["route directions batch", "snap to roads"],
                           ["10-maps-route-directions-batch", "11-maps-snap-to-roads",
                            "30-maps-route-matrix", "31-maps-route-range"]),
    "TRAFFIC_API_VERSIONS": (["traffic incidents"], ["12-maps-traffic-incident"]),
    "WEATHER_API_VERSIONS": (["current air quality", "severe alerts", "daily forecasts"],
                             ["13-maps-weather-current-air-quality",
                              "14-maps-weather-severe-alerts",
                              "15-maps-weather-daily-air-quality-forecast"]),
}
AIR = [("13-maps-weather-current-air-quality", "GetCurrentAirQuality.json"),
       ("15-maps-weather-daily-air-quality-forecast", "GetDailyAirQuality.json")]


def _row(section: str, field: str) -> str:
    """The meaning column of ``field``'s row in a table of spec 2."""
    line = next(s for s in spec_section(2, section).splitlines()
                if s.startswith(f"| {field} |"))
    return line.rstrip(" |").rsplit("|", 1)[1].strip()


def _choices(text: str) -> list[str]:
    """``a (default), b, c`` -> ``[a, b, c]``."""
    return [re.sub(r"\s*\(.*?\)", "", v).strip() for v in text.split(",")]


def _examples(folder: str) -> list[dict[str, Any]]:
    return [example(folder, p.name) for p in sorted((EXAMPLES / folder).glob("*.json"))]


def test_the_module_is_data_only() -> None:
    assert imports_beyond_spec(maps) == []
    assert top_level_statements(maps) == []
    assert sorted(maps.__all__) == sorted(n for n in vars(maps) if n.isupper())


def test_no_fact_is_written_again_elsewhere_in_the_package(package_literals) -> None:
    assert copies_of(maps, package_literals) == []


# ------------------------------------------------------------------------------ api-versions
@pytest.mark.parametrize("name", sorted(VERSIONS))
def test_the_newest_version_is_the_one_the_spec_the_schemas_and_examples_use(name: str) -> None:
    versions = getattr(maps, name)
    operations, excerpts = VERSIONS[name]
    used = spec_versions(2)
    assert {used[op] for op in operations} == {versions[0]}
    assert list(versions) == sorted(set(versions), reverse=True)  # newest first, no twice
    for excerpt in excerpts:
        assert schema(excerpt)["info"]["version"] in versions, excerpt
        for ex in _examples(excerpt):
            assert ex["parameters"]["api-version"] in versions, excerpt


@pytest.mark.parametrize(("client", "server", "spec"), [
    ("toolkit.maps.search", "toolkit.sandbox.maps.search", "SEARCH_API_VERSIONS"),
    ("toolkit.maps.route", "toolkit.sandbox.maps.route", "ROUTE_API_VERSIONS"),
    ("toolkit.maps.matrix", "toolkit.sandbox.maps.matrix", "ROUTE_API_VERSIONS"),
    ("toolkit.maps.reach", "toolkit.sandbox.maps.reach", "ROUTE_API_VERSIONS"),
    ("toolkit.maps.traffic", "toolkit.sandbox.maps.traffic", "TRAFFIC_API_VERSIONS"),
    ("toolkit.maps.weather", "toolkit.sandbox.maps.weather.world", "WEATHER_API_VERSIONS"),
])
def test_the_client_sends_the_newest_version_the_sandbox_accepts(
        client: str, server: str, spec: str) -> None:
    versions = getattr(maps, spec)
    assert versions[0] == importlib.import_module(client).API_VERSION
    assert importlib.import_module(server).API_VERSIONS is versions


@pytest.mark.parametrize(("client", "server", "fact"), [
    ("toolkit.maps.route:OPTIMIZE", "toolkit.sandbox.maps.route:OPTIMIZE",
     maps.ROUTE_OPTIMIZE),
    ("toolkit.maps.route:TRAVEL_MODES", "toolkit.sandbox.maps.route:TRAVEL_MODES",
     maps.ROUTE_TRAVEL_MODES),
    ("toolkit.maps.route:AVOID", "toolkit.sandbox.maps.route:AVOID", maps.ROUTE_AVOID),
    ("toolkit.maps.route:OUTPUT_OPTIONS", "toolkit.sandbox.maps.route:OUTPUT_OPTIONS",
     maps.ROUTE_OUTPUT_OPTIONS),
    ("toolkit.maps.route:SNAP_MAX_GAP_M", "toolkit.sandbox.maps.route:SNAP_MAX_GAP_M",
     maps.SNAP_MAX_GAP_M),
    ("toolkit.maps._schemas:INCIDENT_TYPES", "toolkit.sandbox.maps.traffic:INCIDENT_TYPES",
     maps.INCIDENT_TYPES),
    ("toolkit.maps._schemas:AUTOCOMPLETE_TYPES", "toolkit.sandbox.maps.search:RESULT_TYPES",
     maps.AUTOCOMPLETE_TYPES),
    ("toolkit.maps._schemas:AUTOCOMPLETE_TYPE_GROUPS", "toolkit.sandbox.maps.search:GROUPS",
     maps.AUTOCOMPLETE_TYPE_GROUPS),
    ("toolkit.plot.weather:AIR_QUALITY_COLORS",
     "toolkit.sandbox.maps.weather.world:CATEGORY_COLORS", maps.AIR_QUALITY_COLORS),
    ("toolkit.maps._schemas:ALERT_STATUSES", "toolkit.sandbox.maps.weather.world:ALERT_STATUSES",
     maps.ALERT_STATUSES),
    ("toolkit.plot.weather:AIR_QUALITY_BANDS",
     "toolkit.sandbox.maps.weather.world:AIR_QUALITY_BANDS", maps.AIR_QUALITY_BANDS),
])
def test_client_and_sandbox_tables_are_the_spec(client: str, server: str, fact: Any) -> None:
    for where in (client, server):
        module, name = where.split(":")
        assert getattr(importlib.import_module(module), name) is fact, where


def test_the_client_numbers_incident_severities_from_one() -> None:
    from toolkit.maps import traffic

    assert {i + 1: s for i, s in enumerate(maps.INCIDENT_SEVERITIES)} == traffic.SEVERITY


# ------------------------------------------------------------------------------ search
def test_autocomplete_types_are_the_spec_and_the_schema_in_their_order() -> None:
    documented = spec_list(spec_section(2, "### 2.1"), "AutocompleteResultTypeEnum values: ")
    assert list(maps.AUTOCOMPLETE_TYPES) == documented
    assert list(maps.AUTOCOMPLETE_TYPES) == schema_enum("09-maps-geocode-autocomplete",
                                                        "AutocompleteResultTypeEnum")
    assert list(maps.AUTOCOMPLETE_TYPE_GROUPS) == schema_enum(
        "09-maps-geocode-autocomplete", "AutocompleteResultTypeGroupsEnum")
    assert re.search(" and ".join(maps.AUTOCOMPLETE_TYPE_GROUPS) + " are the groups used",
                     spec_section(2, "### 4.1"))
    for ex in _examples("09-maps-geocode-autocomplete"):
        for feature in ex["responses"]["200"]["body"]["features"]:
            assert feature["properties"]["type"] in maps.AUTOCOMPLETE_TYPES
            assert feature["properties"]["typeGroup"] in maps.AUTOCOMPLETE_TYPE_GROUPS
        for name, known in (("resultTypes", maps.AUTOCOMPLETE_TYPES),
                            ("resultTypeGroups", maps.AUTOCOMPLETE_TYPE_GROUPS)):
            asked = ex["parameters"].get(name)
            assert asked is None or set(asked.split(",")) <= set(known)


@pytest.mark.parametrize(("good", "bad"), [(["AD", "fr"], ["A", "AND", "1A"])])
def test_patterns_mean_what_the_spec_says(good: list[str], bad: list[str]) -> None:
    rx = re.compile(maps.COUNTRY_CODE_PATTERN)
    assert all(rx.fullmatch(s) for s in good)
    assert not any(rx.fullmatch(s) for s in bad)


def test_country_codes_of_the_examples_are_accepted() -> None:
    rx = re.compile(maps.COUNTRY_CODE_PATTERN)
    codes = [f["properties"]["address"]["countryRegion"]["ISO"]
             for ex in _examples("09-maps-geocode-autocomplete")
             for f in ex["responses"]["200"]["body"]["features"]]
    codes += [ex["responses"]["200"]["body"]["results"][0]["countryCode"]
              for ex in _examples("14-maps-weather-severe-alerts")]
    assert len(codes) >= 3 and all(rx.fullmatch(c) for c in codes), codes
    assert "ISO 3166-1 Alpha-2" in _row("### 4.1", "countryRegion")


def test_reverse_geocoding_facts_are_the_schemas() -> None:
    excerpt = "28-maps-reverse-geocode"
    assert list(maps.REVERSE_GEOCODE_TYPES) == schema(excerpt)["parameters"][
        "ReverseGeocodingResultTypes"]["items"]["enum"]
    item = schema(excerpt)["definitions"]["ReverseGeocodingBatchRequestItem"]["properties"]
    assert item["resultTypes"]["items"]["enum"] == list(maps.REVERSE_GEOCODE_TYPES)
    batch = schema(excerpt)["paths"]["/reverseGeocode:batch"]["post"]
    assert f"up to **{maps.REVERSE_GEOCODE_BATCH_SIZE}** queries" in batch["description"]
    assert schema(excerpt)["info"]["version"] == maps.GEOCODE_API_VERSIONS[0]
    for ex in _examples(excerpt):
        assert ex["parameters"]["api-version"] in maps.GEOCODE_API_VERSIONS
        body = ex["parameters"].get("reverseGeocodingBatchRequestBody", {"batchItems": []})
        for asked in body["batchItems"]:
            assert set(asked.get("resultTypes", [])) <= set(maps.REVERSE_GEOCODE_TYPES)
    # the types reverse geocoding answers are among those forward geocoding documents
    assert set(maps.REVERSE_GEOCODE_TYPES) <= set(maps.GEOCODE_TYPES)


def test_hourly_durations_are_the_schemas() -> None:
    excerpt = "29-maps-weather-hourly-air-quality-forecast"
    duration = schema_parameter(excerpt, "duration")
    assert duration["enum"] == list(maps.AIR_QUALITY_HOURLY_DURATIONS)
    assert ", ".join(map(str, maps.AIR_QUALITY_HOURLY_DURATIONS)) in duration["description"]
    (ex,) = _examples(excerpt)
    assert ex["parameters"]["duration"] in maps.AIR_QUALITY_HOURLY_DURATIONS
    assert ex["parameters"]["api-version"] in maps.WEATHER_API_VERSIONS
    results = ex["responses"]["200"]["body"]["results"]
    assert len(results) == ex["parameters"]["duration"]
    for result in results:  # each hour's category follows its index by the spec's bands
        assert result["category"] == maps.AIR_QUALITY_CATEGORIES[
            bisect_left(maps.AIR_QUALITY_BANDS, result["globalIndex"])]
        assert {p["type"] for p in result["pollutants"]} == set(maps.POLLUTANT_TYPES)


# ------------------------------------------------------------------------------ routing
def test_route_options_are_the_specs_and_the_schemas() -> None:
    assert list(maps.ROUTE_OPTIMIZE) == _choices(_row("### 2.2", "optimizeRoute"))
    assert list(maps.ROUTE_TRAVEL_MODES) == _choices(_row("### 2.2", "travelMode"))
    assert set(maps.ROUTE_TRAVEL_MODES) <= set(schema_enum("10-maps-route-directions-batch",
                                                           "RoutePathTravelModeEnum"))
    assert list(maps.ROUTE_AVOID) == schema_enum("10-maps-route-directions-batch",
                                                 "AvoidEnum (request)")
    named = re.findall(r"(\w+) and (\w+) are values", _row("### 2.2", "avoid"))
    assert named and set(named[0]) <= set(maps.ROUTE_AVOID)
    named = re.findall(r"(\w+) is a value", _row("### 2.2", "routeOutputOptions"))
    assert named and set(named) <= set(maps.ROUTE_OUTPUT_OPTIONS)
    for ex in _examples("10-maps-route-directions-batch"):
        for item in ex["parameters"]["routeDirectionsBatchRequest"]["batchItems"]:
            assert item["optimizeRoute"] in maps.ROUTE_OPTIMIZE
            assert item["travelMode"] in maps.ROUTE_TRAVEL_MODES
            assert set(item["routeOutputOptions"]) <= set(maps.ROUTE_OUTPUT_OPTIONS)


def test_the_route_defaults_come_first() -> None:
    for field, values in (("optimizeRoute", maps.ROUTE_OPTIMIZE),
                          ("travelMode", maps.ROUTE_TRAVEL_MODES)):
        default = re.search(r"(\w+) \(default\)", _row("### 2.2", field))
        assert default and values[0] == default[1], field


def test_congestion_values_are_those_the_spec_shows() -> None:
    shown = re.search(r"values beyond (\w+) and (\w+)", spec_section(2, "### 2.2"))
    assert shown and list(maps.TRAFFIC_CONGESTION) == [shown[1], shown[2]]


def test_batch_and_snap_limits_are_the_specs() -> None:
    limits = spec_section(2, "## 8.")
    batch = re.search(r"\| directions batch \| 1 to (\d+) items", limits)
    assert batch and int(batch[1]) == maps.ROUTE_BATCH_SIZE
    items = schema("10-maps-route-directions-batch")["definitions"][
        "DirectionsBatchRequestBody"]["properties"]["batchItems"]
    assert (items["minItems"], items["maxItems"]) == (1, maps.ROUTE_BATCH_SIZE)
    snap = re.search(r"\| snap to roads \| (\d+) to (\d+) points; consecutive points within "
                     r"(\d+) km", limits)
    assert snap and int(snap[2]) == maps.SNAP_MAX_POINTS
    assert float(snap[3]) * 1000 == maps.SNAP_MAX_GAP_M
    assert 1 <= int(snap[1]) <= maps.SNAP_MAX_POINTS and maps.SNAP_MAX_GAP_M > 0


def test_the_snap_example_keeps_within_the_limits() -> None:
    (ex,) = _examples("11-maps-snap-to-roads")
    points = [f["geometry"]["coordinates"] for f in ex["parameters"]["snapToRoadsRequest"]
              ["features"]]
    assert 2 <= len(points) <= maps.SNAP_MAX_POINTS

    def metres(a: list[float], b: list[float]) -> float:
        (lon1, lat1), (lon2, lat2) = map(math.radians, a[:2]), map(math.radians, b[:2])
        h = (math.sin((lat2 - lat1) / 2) ** 2
             + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2)
        return 2 * 6_371_008.8 * math.asin(math.sqrt(h))

    assert all(metres(a, b) <= maps.SNAP_MAX_GAP_M for a, b in itertools.pairwise(points))


# ------------------------------------------------------------------------------ matrix, range
MATRIX, RANGE = "30-maps-route-matrix", "31-maps-route-range"


def _request_field(excerpt: str, definition: str, field: str) -> dict[str, Any]:
    return schema(excerpt)["definitions"][definition]["properties"][field]


def _description(excerpt: str, path: str) -> str:
    return next(iter(schema(excerpt)["paths"][path].values()))["description"]


def test_matrix_enumerations_are_the_specifications_with_the_default_first() -> None:
    assert list(maps.MATRIX_TRAVEL_MODES) == schema_enum(MATRIX, "RouteMatrixTravelModeEnum")
    assert list(maps.MATRIX_TRAFFIC) == schema_enum(MATRIX, "RouteMatrixTrafficEnum")
    assert list(maps.MATRIX_AVOID) == schema_enum(MATRIX, "RouteMatrixAvoidEnum")
    for definition in ("RouteMatrixTravelModeEnum", "RouteMatrixTrafficEnum"):
        declared = schema(MATRIX)["definitions"][definition]
        assert declared["enum"][0] == declared["default"], definition
    sync = _request_field(MATRIX, "RouteMatrixRequest", "optimizeRoute")
    asynchronous = _request_field(MATRIX, "RouteMatrixAsyncRequest", "optimizeRoute")
    assert sync["enum"] == [maps.MATRIX_OPTIMIZE[0]] == [sync["default"]]
    assert set(asynchronous["enum"]) == set(maps.MATRIX_OPTIMIZE)
    assert asynchronous["default"] == maps.MATRIX_OPTIMIZE[0]
    for word in maps.MATRIX_TIME_WORDS:
        assert f"`{word}`" in _request_field(MATRIX, "RouteMatrixRequest", "departAt")[
            "description"]
    assert "`now`" not in _request_field(MATRIX, "RouteMatrixRequest", "arriveAt")["description"]
    assert list(maps.ROUTE_OPERATION_STATUSES) == _request_field(MATRIX, "RouteOperation",
                                                                 "status")["enum"]


@pytest.mark.parametrize(("path", "rows"), [("/route/matrix", "MATRIX_SYNC_LIMITS"),
                                            ("/route/matrix:async", "MATRIX_ASYNC_LIMITS")])
def test_matrix_limits_are_the_rows_of_the_specifications_tables(path: str, rows: str) -> None:
    text = _description(MATRIX, path)
    found = [(int(c), int(o), int(d)) for c, o, d in re.findall(
        r"(\d+) cells \((\d+)(?: origins)?, (\d+)(?: destinations)?\)", text)]
    assert found == [row[:3] for row in getattr(maps, rows)]
    for _, _, _, condition in getattr(maps, rows):
        assert condition in ("options", "region", "defaults")
        if condition == "region":
            assert f"{maps.MATRIX_REGION_KM} km x {maps.MATRIX_REGION_KM} km box" in text
        if condition == "defaults":
            assert "traffic historical" in text and "no other parameter" in text


def test_the_matrix_examples_stay_within_the_facts() -> None:
    for name, key in (("PostRouteMatrix.json", "routeMatrixRequest"),
                      ("PostRouteMatrixAsync.json", "routeMatrixAsyncRequest")):
        request = example(MATRIX, name)["parameters"][key]
        assert request["travelMode"] in maps.MATRIX_TRAVEL_MODES
        assert request["traffic"] in maps.MATRIX_TRAFFIC
        assert request["optimizeRoute"] in maps.MATRIX_OPTIMIZE
        assert set(request["avoid"]) <= set(maps.MATRIX_AVOID)
    status = example(MATRIX, "GetRouteOperationStatusCompleted.json")["responses"]["200"]
    assert status["body"]["status"] in maps.ROUTE_OPERATION_STATUSES


def test_range_facts_are_the_specifications() -> None:
    assert list(maps.RANGE_AVOID) == schema_enum(RANGE, "RouteRangeAvoidEnum")
    props = schema(RANGE)["definitions"]["InputRouteRangeProperties"]["properties"]
    assert props["timeBudgetInSec"]["maximum"] == maps.RANGE_MAX_TIME_S
    assert props["distanceBudgetInMeters"]["maximum"] == maps.RANGE_MAX_DISTANCE_M
    # the range takes the route's travel modes and optimizations, the default first
    assert props["travelMode"]["enum"] == list(maps.ROUTE_TRAVEL_MODES)
    assert set(props["optimizeRoute"]["enum"]) == set(maps.ROUTE_OPTIMIZE)
    assert props["optimizeRoute"]["default"] == maps.ROUTE_OPTIMIZE[0]
    (ex,) = _examples(RANGE)
    budget = ex["parameters"]["routeRangeRequest"]["properties"]["timeBudgetInSec"]
    assert 0 < budget <= maps.RANGE_MAX_TIME_S


# ------------------------------------------------------------------------------ traffic
def test_incident_types_are_the_schemas_and_hold_the_specs() -> None:
    assert list(maps.INCIDENT_TYPES) == schema_enum("12-maps-traffic-incident",
                                                    "IncidentTypeEnum")
    documented = [v.strip() for v in _row("### 2.4", "incidentType").split(",")]
    assert set(documented) <= set(maps.INCIDENT_TYPES)
    (ex,) = _examples("12-maps-traffic-incident")
    features = ex["responses"]["200"]["body"]["features"]
    assert {f["properties"]["incidentType"] for f in features} <= set(maps.INCIDENT_TYPES)
    assert all(1 <= f["properties"]["severity"] <= len(maps.INCIDENT_SEVERITIES)
               for f in features)
    assert len(set(maps.INCIDENT_SEVERITIES)) == len(maps.INCIDENT_SEVERITIES)


# ------------------------------------------------------------------------------ weather
def _categories() -> list[tuple[float, float, str]]:
    """Spec 2 §2.5's ``0-20 Excellent; 21-50 Fair; ...; 251+ Dangerous``."""
    text = spec_section(2, "### 2.5").split("Categories: ", 1)[1].split(".\n", 1)[0]
    out = []
    for part in text.split("; "):
        m = re.fullmatch(r"(\d+)(?:-(\d+)|\+) (.+)", part.strip().rstrip("."))
        assert m, part
        out.append((float(m[1]), float(m[2]) if m[2] else math.inf, m[3]))
    return out


def test_air_quality_categories_and_bands_are_the_specs() -> None:
    documented = _categories()
    assert list(maps.AIR_QUALITY_CATEGORIES) == [name for _, _, name in documented]
    assert list(maps.AIR_QUALITY_BANDS) == [high for _, high, _ in documented[:-1]]
    assert list(maps.AIR_QUALITY_BANDS) == sorted(set(maps.AIR_QUALITY_BANDS))
    for (_, high, _), (low, _, _) in itertools.pairwise(documented):
        assert low == high + 1  # the bands of the spec leave no index out


def test_the_examples_categories_agree_with_their_index_and_colour() -> None:
    seen = 0
    for folder, name in AIR:
        for result in example(folder, name)["responses"]["200"]["body"]["results"]:
            category = maps.AIR_QUALITY_CATEGORIES[
                bisect_left(maps.AIR_QUALITY_BANDS, result["globalIndex"])]
            assert result["category"] == category
            assert result["categoryColor"].upper() == maps.AIR_QUALITY_COLORS[category]
            assert result["dominantPollutant"] in maps.DOMINANT_POLLUTANTS
            seen += 1
    assert seen >= 4


def test_each_category_has_one_valid_colour_of_its_own() -> None:
    assert list(maps.AIR_QUALITY_COLORS) == list(maps.AIR_QUALITY_CATEGORIES)
    assert all(re.fullmatch(r"#[0-9A-F]{6}", c) for c in maps.AIR_QUALITY_COLORS.values())
    assert len(set(maps.AIR_QUALITY_COLORS.values())) == len(maps.AIR_QUALITY_COLORS)
    assert "hexadecimal colour code" in spec_section(2, "### 2.5")


def test_pollutants_are_the_specs_and_the_schemas_and_pair_as_the_example_does() -> None:
    assert list(maps.DOMINANT_POLLUTANTS) == spec_list(spec_text(2), "DominantPollutant values: ")
    assert list(maps.POLLUTANT_TYPES) == spec_list(spec_text(2), "PollutantType values: ")
    for excerpt in ("13-maps-weather-current-air-quality",
                    "15-maps-weather-daily-air-quality-forecast"):
        assert list(maps.DOMINANT_POLLUTANTS) == schema_enum(excerpt, "DominantPollutant")
        assert list(maps.POLLUTANT_TYPES) == schema_enum(excerpt, "PollutantType")
    (result,) = example(*AIR[0])["responses"]["200"]["body"]["results"]
    paired = {p["name"]: p["type"] for p in result["pollutants"]}
    assert paired == maps.POLLUTANT_SHORT_NAMES


def test_alert_statuses_are_the_eight_of_the_spec_in_its_order() -> None:
    documented = spec_list(spec_section(2, "## 3."), "exactly eight values: ")
    assert list(maps.ALERT_STATUSES) == documented and len(documented) == 8
    assert set(maps.ALERT_STATUSES) == set(schema_enum("14-maps-weather-severe-alerts",
                                                       "LatestStatusKeyword"))
    statuses = {area["latestStatus"]["english"]
                for ex in _examples("14-maps-weather-severe-alerts")
                for alert in ex["responses"]["200"]["body"]["results"]
                for area in alert["alertAreas"]}
    assert statuses and statuses <= set(maps.ALERT_STATUSES)


@pytest.mark.parametrize(("where", "fact"), [
    ("toolkit.maps._schemas:AIR_QUALITY_CATEGORIES", "AIR_QUALITY_CATEGORIES"),
    ("toolkit.sandbox.maps.weather.world:AIR_QUALITY_CATEGORIES", "AIR_QUALITY_CATEGORIES"),
    ("toolkit.maps._schemas:DOMINANT_POLLUTANTS", "DOMINANT_POLLUTANTS"),
    ("toolkit.maps._schemas:POLLUTANT_TYPES", "POLLUTANT_TYPES"),
    ("toolkit.maps._schemas:INCIDENT_SEVERITIES", "INCIDENT_SEVERITIES"),
    ("toolkit.maps._schemas:TRAFFIC_CONGESTION", "TRAFFIC_CONGESTION"),
    ("toolkit.maps.weather:POLLUTANT_SHORT_NAMES", "POLLUTANT_SHORT_NAMES"),
    ("toolkit.maps.route:ROUTE_BATCH_SIZE", "ROUTE_BATCH_SIZE"),
    ("toolkit.maps.matrix:TRAVEL_MODES", "MATRIX_TRAVEL_MODES"),
    ("toolkit.maps.matrix:OPTIMIZE", "MATRIX_OPTIMIZE"),
    ("toolkit.maps.matrix:TRAFFIC", "MATRIX_TRAFFIC"),
    ("toolkit.maps.matrix:AVOID", "MATRIX_AVOID"),
    ("toolkit.maps.reach:AVOID", "RANGE_AVOID"),
    ("toolkit.maps.reach:TRAVEL_MODES", "ROUTE_TRAVEL_MODES"),
    ("toolkit.maps.reach:OPTIMIZE", "ROUTE_OPTIMIZE"),
    ("toolkit.sandbox.maps.route:SNAP_MAX_POINTS", "SNAP_MAX_POINTS"),
    ("toolkit._core.validate:COUNTRY_CODE_PATTERN", "COUNTRY_CODE_PATTERN"),
    ("toolkit.sandbox.maps.search:COUNTRY_CODE_PATTERN", "COUNTRY_CODE_PATTERN"),
    ("toolkit.sandbox.maps.reverse:COUNTRY_CODE_PATTERN", "COUNTRY_CODE_PATTERN"),
    ("toolkit.maps.reverse:REVERSE_GEOCODE_TYPES", "REVERSE_GEOCODE_TYPES"),
    ("toolkit.sandbox.maps.reverse:REVERSE_GEOCODE_TYPES", "REVERSE_GEOCODE_TYPES"),
    ("toolkit.maps.reverse:REVERSE_GEOCODE_BATCH_SIZE", "REVERSE_GEOCODE_BATCH_SIZE"),
    ("toolkit.sandbox.maps.reverse:REVERSE_GEOCODE_BATCH_SIZE", "REVERSE_GEOCODE_BATCH_SIZE"),
    ("toolkit.maps.weather:AIR_QUALITY_HOURLY_DURATIONS", "AIR_QUALITY_HOURLY_DURATIONS"),
    ("toolkit.sandbox.maps.weather.handlers:AIR_QUALITY_HOURLY_DURATIONS",
     "AIR_QUALITY_HOURLY_DURATIONS"),
])
def test_the_other_tables_are_the_spec(where: str, fact: str) -> None:
    module, name = where.split(":")
    assert getattr(importlib.import_module(module), name) is getattr(maps, fact), where


# ------------------------------------------------------------------------------ the sandbox
def _maps_get(sandbox: Any, path: str, **params: Any) -> requests.Response:
    params["subscription-key"] = sandbox.maps_key.reveal()
    return requests.get(sandbox.url + path, params=params, timeout=10)


def test_the_sandboxs_air_quality_answers_in_the_specs_scale(sandbox: Any) -> None:
    results = []
    for lat, lon in ((42.5075, 1.5218), (42.5676, 1.5975), (42.4636, 1.4906)):
        query = f"{lat},{lon}"
        for path, extra in (("/weather/airQuality/current/json", {}),
                            ("/weather/airQuality/forecasts/daily/json", {"duration": 7})):
            answer = _maps_get(sandbox, path, query=query, **extra,
                               **{"api-version": maps.WEATHER_API_VERSIONS[0]})
            assert answer.status_code == 200, answer.text[:200]
            results += answer.json()["results"]
    assert len(results) == 3 * (1 + 7)
    for r in results:
        category = maps.AIR_QUALITY_CATEGORIES[bisect_left(maps.AIR_QUALITY_BANDS,
                                                           r["globalIndex"])]
        assert (r["category"], r["categoryColor"]) == (category, maps.AIR_QUALITY_COLORS[category])
        assert r["dominantPollutant"] in maps.DOMINANT_POLLUTANTS
        for p in r.get("pollutants", []):
            assert maps.POLLUTANT_SHORT_NAMES[p["name"]] == p["type"]


def test_the_sandbox_refuses_another_weather_version_naming_the_specs(sandbox: Any) -> None:
    answer = _maps_get(sandbox, "/weather/airQuality/current/json", query="42.5,1.5",
                       **{"api-version": "9.9"})
    assert answer.status_code == 400
    assert all(v in answer.json()["error"]["message"] for v in maps.WEATHER_API_VERSIONS)


def test_the_sandboxs_incidents_use_the_types_and_severities(sandbox: Any) -> None:
    answer = _maps_get(sandbox, "/traffic/incident", bbox="1.40,42.42,1.80,42.66",
                       **{"api-version": maps.TRAFFIC_API_VERSIONS[0]})
    features = answer.json()["features"]
    assert features
    assert {f["properties"]["incidentType"] for f in features} <= set(maps.INCIDENT_TYPES)
    assert {f["properties"]["severity"] for f in features} <= set(
        range(1, len(maps.INCIDENT_SEVERITIES) + 1))
