"""The maps operations through the vendor's maps clients' own pipelines (azure-maps-search
and azure-maps-route ``send_request``, with their authentication policies), against the sandbox
in the public cloud's words: no typed client covers these api-versions, so each answer is checked
against the operation's response schema (the services' specifications, as shipped in
``toolkit/sandbox/openapi_data``: the same files as the specification's schemas)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conformance.conftest import NOT_INSTALLED

pytest.importorskip("azure.maps.route", reason=NOT_INSTALLED)
pytest.importorskip("azure.maps.search", reason=NOT_INSTALLED)

from azure.core.credentials import AzureKeyCredential
from azure.core.rest import HttpRequest
from azure.maps.route import MapsRouteClient
from azure.maps.search import MapsSearchClient
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from toolkit.sandbox.openapi import _SOURCES, build_document

#: The routes of an operation the service hands out (their id exists once it was started):
#: followed in the asynchronous matrix's own test.
OPERATION_ROUTES = ("route_operation_status", "route_operation_result")
#: Every maps route the sandbox describes from the specification's own excerpt.
MAPS_ROUTES = sorted(name for name, source in _SOURCES.items()
                     if "-maps-" in source.file and name not in OPERATION_ROUTES)


@pytest.fixture(scope="module")
def document(cloud_sandbox) -> dict[str, Any]:
    return build_document(cloud_sandbox)


@pytest.fixture(scope="module")
def clients(cloud_sandbox) -> dict[str, Any]:
    key = AzureKeyCredential(cloud_sandbox.maps_key.reveal())
    common = {"endpoint": cloud_sandbox.url, "connection_verify": cloud_sandbox.ca_file}
    return {"search": MapsSearchClient(key, **common), "route": MapsRouteClient(key, **common),
            "bearer": MapsSearchClient(cloud_sandbox.credential(),
                                       client_id=cloud_sandbox.authority.maps_client_id,
                                       **common)}


def _route(sandbox, name):
    return next(r for r in sandbox.router.routes if r.name == name)


def _request(route, op: dict[str, Any]) -> HttpRequest:
    """The request the operation's documented examples make."""
    path, query = route.pattern, {}
    for param in op["parameters"]:
        if "example" not in param:
            assert not param["required"], param["name"]
            continue
        value = param["example"]
        value = ",".join(map(str, value)) if isinstance(value, list) else value
        if param["in"] == "path":
            path = path.replace("{" + param["name"] + "}", str(value))
        elif param["in"] == "query":
            query[param["name"]] = value
    body = op.get("requestBody")
    if body is None:
        return HttpRequest(route.method, path, params=query)
    media, content = next(iter(body["content"].items()))
    return HttpRequest(route.method, path, params=query, json=content["example"],
                       headers={"Content-Type": media})


def _success(document, route) -> str:
    """The success status the excerpt describes for the route (202 for an accepted operation)."""
    op = document["paths"][route.pattern][route.method.lower()]
    return next(status for status in op["responses"] if status.startswith("2"))


def _validator(document, route) -> Draft202012Validator:
    registry = Registry().with_resource("urn:sandbox", Resource.from_contents(
        {"components": document["components"]}, default_specification=DRAFT202012))
    op = document["paths"][route.pattern][route.method.lower()]
    # the media type the excerpt names (geocoding answers application/geo+json)
    schema = next(iter(op["responses"]["200"]["content"].values()))["schema"]
    text = json.dumps(schema).replace('"#/components', '"urn:sandbox#/components')
    return Draft202012Validator(json.loads(text), registry=registry)


@pytest.mark.parametrize("name", MAPS_ROUTES)
def test_the_clients_pipeline_request_is_answered_within_the_schema(cloud_sandbox, document,
                                                                   clients, name) -> None:
    route = _route(cloud_sandbox, name)
    op = document["paths"][route.pattern][route.method.lower()]
    client = clients["route"] if route.pattern.startswith("/route/") else clients["search"]
    response = client.send_request(_request(route, op))
    status = _success(document, route)
    assert response.status_code == int(status), response.text()[:300]
    assert response.headers.get("x-ms-request-id")
    if "content" not in op["responses"][status]:  # accepted: followed in its own test
        assert response.headers["Operation-Location"]
        return
    body = response.json()
    errors = [f"{list(e.absolute_path)}: {e.message[:120]}"
              for e in _validator(document, route).iter_errors(body)]
    assert errors == []


def test_the_asynchronous_matrix_is_followed_through_the_clients_pipeline(
        cloud_sandbox, document, clients) -> None:
    """The 202 names the status at ``Operation-Location`` on the sandbox's own origin; the status
    (within its schema) goes on until ``Completed`` and names the result, which is within the
    result's schema: the route client's pipeline and key go all the way."""
    from urllib.parse import urlsplit

    start = _route(cloud_sandbox, "route_matrix_async")
    accepted = clients["route"].send_request(
        _request(start, document["paths"][start.pattern]["post"]))
    assert accepted.status_code == 202, accepted.text()[:300]
    url = accepted.headers["Operation-Location"]
    assert urlsplit(url).netloc == urlsplit(cloud_sandbox.url).netloc
    status_check = _validator(document, _route(cloud_sandbox, "route_operation_status"))
    seen = []
    for _ in range(10):
        status = clients["route"].send_request(HttpRequest("GET", url))
        assert status.status_code == 200, status.text()[:300]
        assert list(status_check.iter_errors(status.json())) == []
        seen.append(status.json()["status"])
        if seen[-1] == "Completed":
            break
    assert seen[-1] == "Completed" and set(seen) <= {"NotStarted", "Running", "Completed"}
    result = clients["route"].send_request(
        HttpRequest("GET", status.json()["result"]["resultUrl"]))
    assert result.status_code == 200, result.text()[:300]
    body = result.json()
    assert body["kind"] == "RouteMatrix" and body["properties"]["summary"]["totalCount"] == 1
    errors = list(_validator(document, _route(cloud_sandbox, "route_operation_result"))
                  .iter_errors(body))
    assert errors == []


def test_a_bearer_token_for_the_real_audience_and_the_client_id(cloud_sandbox, document,
                                                                clients) -> None:
    route = _route(cloud_sandbox, "autocomplete")
    request = _request(route, document["paths"][route.pattern]["get"])
    request.headers["x-ms-client-id"] = cloud_sandbox.authority.maps_client_id
    response = clients["bearer"].send_request(request)
    assert response.status_code == 200, response.text()[:300]


@pytest.mark.parametrize("name", ["autocomplete", "air_quality"])
def test_errors_surface_with_their_code(cloud_sandbox, clients, name) -> None:
    route = _route(cloud_sandbox, name)
    path = route.pattern.replace("{format}", "json")
    response = clients["search"].send_request(HttpRequest("GET", path,
                                                          params={"api-version": "1999-01-01"}))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "InvalidApiVersion"
    assert response.headers["x-ms-error-code"] == "InvalidApiVersion"
