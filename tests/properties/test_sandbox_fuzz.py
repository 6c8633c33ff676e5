"""The sandbox under API fuzzing of its own endpoints.

Schemathesis reads the OpenAPI document the sandbox serves of itself (``GET /openapi.json``) and
sends generated requests (valid and invalid parameters, bodies, path values) to every route, with
valid credentials. The sandbox must never answer 5xx when no fault was injected, and its answers
must match the response schemas: the real services' ones where the shipped specification
excerpts cover the operation, the family's error body for every error.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings, strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from toolkit.sandbox.http import family_of
from toolkit.sandbox.openapi import OPENAPI_PATH, build_document
from toolkit.sandbox.server import Sandbox

EXAMPLES = Path(__file__).parents[1] / "examples"

#: Examples per operation: small, since every route is fuzzed (the whole run stays well under a
#: minute on a shared machine); ``TOOLKIT_FUZZ_EXAMPLES`` asks for a longer campaign.
MAX_EXAMPLES = int(os.environ.get("TOOLKIT_FUZZ_EXAMPLES", "40"))

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_headers_conformance, response_schema_conformance]

#: Where the sandbox knowingly departs from the specification excerpt, the check left out there
#: (none at present).
DIVERGENCES: dict[tuple[str, str], Any] = {}


def _checks(method: str, path: str) -> list[Any]:
    return [c for c in CHECKS if DIVERGENCES.get((method, path)) is not c]


@pytest.fixture(scope="module")
def fuzz_sandbox() -> Any:
    """A sandbox of its own: fuzzing creates and changes things (eventstreams, protectors)."""
    with Sandbox(seed=7, lro_polls=1, lro_retry_after=0) as sb:
        yield sb


def _headers(sb: Sandbox) -> dict[str, dict[str, str]]:
    """Valid credentials per family: one token for all, the maps key."""
    token = sb.token(None)
    return {
        "arm": {"Authorization": f"Bearer {token}"},
        "graph": {"Authorization": f"Bearer {token}"},
        "fabric": {"Authorization": f"Bearer {token}"},
        "maps": {"subscription-key": sb.maps_key.reveal()},
    }


@pytest.fixture(scope="module")
def fuzz_headers(fuzz_sandbox: Sandbox) -> dict[str, dict[str, str]]:
    return _headers(fuzz_sandbox)


@pytest.fixture(scope="module")
def example_sandbox() -> Any:
    """A fresh world for the documented examples (the fuzzing may have used their names)."""
    with Sandbox(seed=7, lro_polls=1, lro_retry_after=0) as sb:
        yield sb


@pytest.fixture(scope="module")
def example_schema(example_sandbox: Sandbox) -> Any:
    return schemathesis.openapi.from_url(example_sandbox.url + OPENAPI_PATH)


@pytest.fixture(scope="module")
def sandbox_schema(fuzz_sandbox: Sandbox) -> Any:
    return schemathesis.openapi.from_url(fuzz_sandbox.url + OPENAPI_PATH)


def _described_routes() -> list[tuple[str, str]]:
    # the routes as a sandbox registers them (no server started, no world built)
    return [(r.method, r.pattern) for r in Sandbox().router.routes if r.name != "openapi"]


@pytest.mark.parametrize("method, path", _described_routes(),
                         ids=[f"{m} {p}" for m, p in _described_routes()])
def test_sandbox_never_fails_and_answers_within_its_schemas(
        sandbox_schema: Any, fuzz_headers: dict, method: str, path: str) -> None:
    operation = sandbox_schema[path][method]
    strategies = [*sandbox_schema.get_strategies_from_examples(operation),
                  operation.as_strategy(GenerationMode.POSITIVE),
                  operation.as_strategy(GenerationMode.NEGATIVE)]
    headers = fuzz_headers[family_of(path)]

    @given(case=st.one_of(strategies))
    @settings(max_examples=MAX_EXAMPLES, deadline=None, derandomize=True, database=None,
              phases=[Phase.explicit, Phase.generate],
              suppress_health_check=list(HealthCheck))
    def fuzz(case: Any) -> None:
        response = case.call(headers=headers, timeout=30)
        case.validate_response(response, checks=_checks(method, path))

    fuzz()


def _documented_call(op: dict[str, Any]) -> dict[str, Any] | None:
    """The request an operation's documented examples make, or None when a required value has
    no example (an operation id, known only once an operation was started)."""
    call: dict[str, Any] = {"path_parameters": {}, "query": {}}
    for param in op["parameters"]:
        if "example" not in param:
            if param["required"]:
                return None
            continue
        value = param["example"]
        if isinstance(value, list):
            value = ",".join(str(v) for v in value)
        where = {"path": "path_parameters", "query": "query"}.get(param["in"])
        if where:
            call[where][param["name"]] = value
    body = op.get("requestBody")
    if body is not None:
        media, content = next(iter(body["content"].items()))
        if "example" not in content:
            return None
        call["body"], call["media_type"] = content["example"], media
    return call


#: Routes whose path holds an operation id, known only once an operation was started (their
#: answers are checked by following operations, below).
OPERATION_ROUTES = {"arm_operation_result", "arm_operation_status",
                    "encryption_protector_operation", "fabric_operation_state",
                    "fabric_operation_result"}
EXAMPLE_ROUTES = [(r.method, r.pattern) for r in Sandbox().router.routes
                  if r.name != "openapi" and r.name not in OPERATION_ROUTES]


@pytest.mark.parametrize("method, path", EXAMPLE_ROUTES,
                         ids=[f"{m} {p}" for m, p in EXAMPLE_ROUTES])
def test_documented_examples_find_something(example_sandbox: Sandbox, example_schema: Any,
                                            method: str, path: str) -> None:
    """The description's examples are real: the call they make succeeds, and its answer
    matches the schema."""
    doc = requests.get(example_sandbox.url + OPENAPI_PATH, timeout=10).json()
    call = _documented_call(doc["paths"][path][method.lower()])
    assert call is not None, "every required value has an example"
    operation = example_schema[path][method]
    case = operation.Case(**call)
    response = case.call(headers=_headers(example_sandbox)[family_of(path)], timeout=30)
    assert 200 <= response.status_code < 300, response.text[:300]
    case.validate_response(response, checks=_checks(method, path))


def test_the_description_lists_every_route(fuzz_sandbox: Sandbox) -> None:
    r = requests.get(fuzz_sandbox.url + OPENAPI_PATH, timeout=10)
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/json")
    doc = r.json()
    assert doc["openapi"].startswith("3.")
    described = {(m.upper(), p) for p, item in doc["paths"].items() for m in item}
    served = {(route.method, route.pattern) for route in fuzz_sandbox.router.routes}
    assert served - described == {("GET", OPENAPI_PATH)}
    for route in fuzz_sandbox.router.routes:
        if route.name == "openapi":
            continue
        op = doc["paths"][route.pattern][route.method.lower()]
        assert op["x-family"] == route.family
        version = next(p for p in op["parameters"] if p["name"] == "api-version")
        if route.api_versions:
            assert version["required"] and version["schema"]["enum"] == list(route.api_versions)
        names = {p["name"] for p in op["parameters"] if p["in"] == "path"}
        assert names == set(route.regex.groupindex)
        assert "401" in op["responses"] and "default" in op["responses"]


def test_the_description_is_the_only_public_path(fuzz_sandbox: Sandbox) -> None:
    assert requests.get(fuzz_sandbox.url + OPENAPI_PATH, timeout=10).status_code == 200
    r = requests.post(fuzz_sandbox.url + OPENAPI_PATH, timeout=10)
    assert r.status_code == 401  # other methods on that path still authenticate
    assert requests.get(fuzz_sandbox.url + "/providers/Vendor.Sql/operations?api-version="
                        "2025-01-01", timeout=10).status_code == 401


def test_the_description_follows_the_namespace_setting() -> None:
    with Sandbox(namespace="Contoso", header_prefix="x-contoso-") as sb:
        doc = requests.get(sb.url + OPENAPI_PATH, timeout=10).json()
    assert "/providers/Contoso.Sql/operations" in doc["paths"]
    assert not any("Vendor." in p for p in doc["paths"])
    err = doc["paths"]["/traffic/incident"]["get"]["responses"]["default"]
    assert "x-contoso-error-code" in err["headers"]


#: The real answers of each operation (copies of the shared examples), by route.
REAL_ANSWERS = {
    "backend_health": ("01-backend-health", "*.json", "200"),
    "encryption_protector_update": ("02-sql-encryption-protector", "*.json", "200"),
    "check_name": ("03-sql-check-name-availability", "*.json", "200"),
    "sql_operations": ("04-sql-operations-list", "*.json", "200"),
    "policy_states": ("05-policy-states", "*.json", "200"),
    "problem_classifications": ("06-support-problem-classifications", "*.json", "200"),
    "cluster_monitoring_credentials": ("07-cluster-monitoring-credentials", "*.json", "200"),
    "hosted_cluster_credentials": ("08-hosted-cluster-credentials", "*.json", "200"),
    "autocomplete": ("09-maps-geocode-autocomplete", "*.json", "200"),
    "route_directions_batch": ("10-maps-route-directions-batch", "*.json", "200"),
    "snap_to_roads": ("11-maps-snap-to-roads", "*.json", "200"),
    "traffic_incidents": ("12-maps-traffic-incident", "*.json", "200"),
    "air_quality": ("13-maps-weather-current-air-quality", "*.json", "200"),
    "severe_weather_alerts": ("14-maps-weather-severe-alerts", "*.json", "200"),
    "air_quality_forecast": ("15-maps-weather-daily-air-quality-forecast", "*.json", "200"),
    "authentication_strength_usage": ("16-graph-authentication-strength-usage", "*.json", "200"),
    "create_eventstream": ("17-fabric-create-eventstream", "CreateEventstream*.json", "201"),
    "fabric_operation_state": ("17-fabric-create-eventstream", "GetLongRunningOperationState*",
                               "200"),
}


@pytest.mark.parametrize("route_name", sorted(REAL_ANSWERS))
def test_real_answers_match_the_converted_schemas(fuzz_sandbox: Sandbox,
                                                  route_name: str) -> None:
    """The converted schemas accept the real services' answers, so a sandbox answer they refuse
    is the sandbox's fault, not the conversion's."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    doc = build_document(fuzz_sandbox)
    registry = Registry().with_resource("urn:sandbox", Resource.from_contents(
        {"components": doc["components"]}, default_specification=DRAFT202012))
    route = next(r for r in fuzz_sandbox.router.routes if r.name == route_name)
    op = doc["paths"][route.pattern][route.method.lower()]
    folder, pattern, status = REAL_ANSWERS[route_name]
    files = sorted((EXAMPLES / folder).glob(pattern))
    assert files
    schema = op["responses"][status]["content"]["application/json"]["schema"]
    text = json.dumps(schema).replace('"#/components', '"urn:sandbox#/components')
    validator = Draft202012Validator(json.loads(text), registry=registry)
    for path in files:
        body = json.loads(path.read_text(encoding="utf-8"))["responses"][status]["body"]
        errors = [f"{list(e.absolute_path)}: {e.message[:120]}"
                  for e in validator.iter_errors(body)]
        assert errors == [], path.name


def test_a_bad_schema_answer_is_detected(fuzz_sandbox: Sandbox) -> None:
    """The conformance check the fuzzing relies on does fail on an answer off the schema."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    doc = build_document(fuzz_sandbox)
    registry = Registry().with_resource("urn:sandbox", Resource.from_contents(
        {"components": doc["components"]}, default_specification=DRAFT202012))
    op = doc["paths"]["/providers/Vendor.Sql/operations"]["get"]
    schema = op["responses"]["200"]["content"]["application/json"]["schema"]
    text = json.dumps(schema).replace('"#/components', '"urn:sandbox#/components')
    validator = Draft202012Validator(json.loads(text), registry=registry)
    assert validator.is_valid({"value": [{"name": "Vendor.Sql/servers/read"}]})
    assert not validator.is_valid({"value": [{"name": 12}]})
    assert not validator.is_valid({"value": "not a list"})



def test_the_checks_report_a_server_error(example_sandbox: Sandbox, example_schema: Any) -> None:
    """The fuzzing's checks do fail on a 5xx (here an injected one)."""
    path, method = "/providers/Vendor.Sql/operations", "GET"
    operation = example_schema[path][method]
    case = operation.Case(query={"api-version": "2025-01-01"})
    headers = _headers(example_sandbox)["arm"]
    rule = example_sandbox.inject("500", path="Sql/operations", count=1)
    response = case.call(headers=headers, timeout=30)
    assert response.status_code == 500 and rule.fired == 1
    with pytest.raises(BaseExceptionGroup) as info:
        case.validate_response(response, checks=_checks(method, path))
    assert [type(e).__name__ for e in info.value.exceptions] == ["ServerError"]
    response = case.call(headers=headers, timeout=30)
    case.validate_response(response, checks=_checks(method, path))


def _follow(sb: Sandbox, schema: Any, response: Any, headers: dict, seen: set) -> Any:
    """Poll a long-running operation's Location to its end; every answer on the way is
    checked against the description of the route that gave it."""
    for _ in range(20):
        location = (response.headers.get("location") or [None])[0]
        if response.status_code not in (200, 202) or not location:
            return response
        target = location.removeprefix(sb.url)
        path, _, query = target.partition("?")
        route, params, _ = sb.router.match("GET", path)
        assert route is not None, location
        seen.add(route.name)
        operation = schema[route.pattern]["GET"]
        case = operation.Case(path_parameters=params,
                              query=dict(q.split("=", 1) for q in query.split("&") if q))
        response = case.call(headers=headers, timeout=30)
        assert response.status_code in (200, 202), response.text[:300]
        case.validate_response(response, checks=CHECKS)
    return response


def test_long_running_operations_answer_within_their_schemas(example_sandbox: Sandbox,
                                                             example_schema: Any) -> None:
    """The routes an operation's id leads to (operation results, states, eventstream results)
    answer within the description all the way, for every operation that starts one."""
    doc = requests.get(example_sandbox.url + OPENAPI_PATH, timeout=10).json()
    seen: set[str] = set()
    starts = ["backend_health", "encryption_protector_update", "create_eventstream"]
    for route in example_sandbox.router.routes:
        if route.name not in starts:
            continue
        call = _documented_call(doc["paths"][route.pattern][route.method.lower()])
        assert call is not None
        if route.name == "create_eventstream":  # with a definition: the 202 operation flow
            call["body"] = {"displayName": "described-stream-flow", "definition": {"parts": [
                {"path": "eventstream.json", "payloadType": "InlineBase64",
                 "payload": "eyJzb3VyY2VzIjpbXSwiZGVzdGluYXRpb25zIjpbXSwic3RyZWFtcyI6W119"}]}}
        if route.name == "encryption_protector_update":  # a vault key: the 202 flow
            call["body"] = {"properties": {"serverKeyType": "VendorKeyVault",
                                           "serverKeyName": "kv-retail-prod-weu_tde-primary"}}
        headers = _headers(example_sandbox)[route.family]
        case = example_schema[route.pattern][route.method].Case(**call)
        first = case.call(headers=headers, timeout=30)
        assert first.status_code == 202, first.text[:300]
        case.validate_response(first, checks=CHECKS)
        last = _follow(example_sandbox, example_schema, first, headers, seen)
        assert last.status_code == 200, (route.name, dict(last.headers), seen)
    assert {"arm_operation_result", "encryption_protector_operation",
            "fabric_operation_state", "fabric_operation_result"} <= seen
