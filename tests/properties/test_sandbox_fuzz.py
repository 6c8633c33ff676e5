"""The sandbox under API fuzzing of its own endpoints (the description itself is tested in
tests/sandbox/test_openapi.py).

Schemathesis reads the OpenAPI document the sandbox serves of itself (``GET /openapi.json``) and
sends generated requests (valid and invalid parameters, bodies, path values) to every route, with
valid credentials. The sandbox must never answer 5xx when no fault was injected, and its answers
must match the response schemas: the real services' ones where the shipped specification
excerpts cover the operation, the family's error body for every error.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
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
from schemathesis.transport.requests import ManagedCookiesSession

from tests.sandbox.test_openapi import _documented_call, credentials
from toolkit.sandbox.http import family_of
from toolkit.sandbox.openapi import OPENAPI_PATH
from toolkit.sandbox.server import Sandbox

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


@pytest.fixture(scope="module")
def fuzz_headers(fuzz_sandbox: Sandbox) -> dict[str, dict[str, str]]:
    return credentials(fuzz_sandbox)


@pytest.fixture(scope="module")
def fuzz_session() -> Iterator[ManagedCookiesSession]:
    """One keep-alive session for every generated request, its cookies dropped after each (as
    schemathesis does with a session of its own): a session per request cost a connection, and
    a server thread to serve it, per example."""
    with ManagedCookiesSession() as session:
        yield session


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


ROUTES = _described_routes()


@pytest.mark.parametrize("method, path", ROUTES, ids=[f"{m} {p}" for m, p in ROUTES])
def test_sandbox_never_fails_and_answers_within_its_schemas(
        sandbox_schema: Any, fuzz_headers: dict, fuzz_session: ManagedCookiesSession, method: str,
        path: str) -> None:
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
        response = case.call(headers=headers, timeout=30, session=fuzz_session)
        case.validate_response(response, checks=_checks(method, path))

    fuzz()





















@pytest.mark.parametrize("path", ["/reverseGeocode:batch", "/route/directions:batch"])
def test_a_batch_item_id_that_is_not_text_is_not_echoed(example_sandbox: Sandbox,
                                                        example_schema: Any, path: str) -> None:
    """A case the fuzzing found: an item's ``optionalId`` that is not a string was echoed as
    sent, outside the answer's schema (a string)."""
    operation = example_schema[path]["POST"]
    case = operation.Case(query={"api-version": "2025-01-01"}, media_type="application/json",
                          body={"batchItems": [{"optionalId": True, "coordinates": False},
                                               {"optionalId": "kept", "coordinates": False}]})
    response = case.call(headers=credentials(example_sandbox)["maps"], timeout=30)
    assert response.status_code == 200, response.text[:300]
    case.validate_response(response, checks=CHECKS)
    items = response.json()["batchItems"]
    assert "optionalId" not in items[0] and items[1]["optionalId"] == "kept"
    assert all("error" in item for item in items)


def test_the_checks_report_a_server_error(example_sandbox: Sandbox, example_schema: Any) -> None:
    """The fuzzing's checks do fail on a 5xx (here an injected one)."""
    path, method = "/providers/Vendor.Sql/operations", "GET"
    operation = example_schema[path][method]
    case = operation.Case(query={"api-version": "2025-01-01"})
    headers = credentials(example_sandbox)["arm"]
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
        headers = credentials(example_sandbox)[route.family]
        case = example_schema[route.pattern][route.method].Case(**call)
        first = case.call(headers=headers, timeout=30)
        assert first.status_code == 202, first.text[:300]
        case.validate_response(first, checks=CHECKS)
        last = _follow(example_sandbox, example_schema, first, headers, seen)
        assert last.status_code == 200, (route.name, dict(last.headers), seen)
    assert {"arm_operation_result", "encryption_protector_operation",
            "fabric_operation_state", "fabric_operation_result"} <= seen
