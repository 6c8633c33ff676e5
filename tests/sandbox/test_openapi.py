"""The sandbox's description of itself (``GET /openapi.json``): every route it serves, the one
public path, its examples finding things of the world, the real services' schemas converted so
that they accept the real answers and refuse others, the namespace and header words of the
sandbox."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import requests
import schemathesis
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from toolkit.sandbox.http import family_of
from toolkit.sandbox.openapi import (
    _DATA as DATA,
    _SOURCES,
    OPENAPI_PATH,
    _nullable,
    _schema,
    build_document,
)
from toolkit.sandbox.server import Sandbox

EXAMPLES = Path(__file__).parents[1] / "examples"

#: The checks an answer must pass: no server error, and within the described statuses, media
#: types, headers and schemas.
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_headers_conformance, response_schema_conformance]


def credentials(sb: Sandbox) -> dict[str, dict[str, str]]:
    """Valid credentials per family: one token for all, the maps key."""
    token = sb.token(None)
    return {
        "arm": {"Authorization": f"Bearer {token}"},
        "graph": {"Authorization": f"Bearer {token}"},
        "fabric": {"Authorization": f"Bearer {token}"},
        "maps": {"subscription-key": sb.maps_key.reveal()},
    }


@pytest.fixture(scope="module")
def described_sandbox() -> Any:
    """A fresh world for the documented examples (other tests may have used their names)."""
    with Sandbox(seed=7, lro_polls=1, lro_retry_after=0) as sb:
        yield sb


@pytest.fixture(scope="module")
def described_doc(described_sandbox: Sandbox) -> Any:
    return requests.get(described_sandbox.url + OPENAPI_PATH, timeout=10).json()


@pytest.fixture(scope="module")
def described_schema(described_sandbox: Sandbox) -> Any:
    return schemathesis.openapi.from_url(described_sandbox.url + OPENAPI_PATH)


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
#: answers are checked by following operations, in tests/properties/test_sandbox_fuzz.py).
OPERATION_ROUTES = {"arm_operation_result", "arm_operation_status",
                    "encryption_protector_operation", "fabric_operation_state",
                    "fabric_operation_result", "route_operation_status",
                    "route_operation_result"}


EXAMPLE_ROUTES = [(r.method, r.pattern) for r in Sandbox().router.routes
                  if r.name != "openapi" and r.name not in OPERATION_ROUTES]


@pytest.mark.parametrize("method, path", EXAMPLE_ROUTES,
                         ids=[f"{m} {p}" for m, p in EXAMPLE_ROUTES])
def test_documented_examples_find_something(described_sandbox: Sandbox, described_doc: Any,
                                            described_schema: Any, method: str,
                                            path: str) -> None:
    """The description's examples are real: the call they make succeeds, and its answer
    matches the schema."""
    call = _documented_call(described_doc["paths"][path][method.lower()])
    assert call is not None, "every required value has an example"
    operation = described_schema[path][method]
    case = operation.Case(**call)
    response = case.call(headers=credentials(described_sandbox)[family_of(path)], timeout=30)
    assert 200 <= response.status_code < 300, response.text[:300]
    case.validate_response(response, checks=CHECKS)


def test_the_description_lists_every_route(sandbox: Sandbox) -> None:
    r = requests.get(sandbox.url + OPENAPI_PATH, timeout=10)
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/json")
    doc = r.json()
    assert doc["openapi"].startswith("3.")
    described = {(m.upper(), p) for p, item in doc["paths"].items() for m in item}
    served = {(route.method, route.pattern) for route in sandbox.router.routes}
    assert served - described == {("GET", OPENAPI_PATH)}
    for route in sandbox.router.routes:
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


def test_the_description_is_the_only_public_path(sandbox: Sandbox) -> None:
    assert requests.get(sandbox.url + OPENAPI_PATH, timeout=10).status_code == 200
    r = requests.post(sandbox.url + OPENAPI_PATH, timeout=10)
    assert r.status_code == 401  # other methods on that path still authenticate
    assert requests.get(sandbox.url + "/providers/Vendor.Sql/operations?api-version="
                        "2025-01-01", timeout=10).status_code == 401


def test_the_description_follows_the_namespace_setting() -> None:
    with Sandbox(namespace="Contoso", header_prefix="x-contoso-") as sb:
        doc = requests.get(sb.url + OPENAPI_PATH, timeout=10).json()
    assert "/providers/Contoso.Sql/operations" in doc["paths"]
    assert not any("Vendor." in p for p in doc["paths"])
    err = doc["paths"]["/traffic/incident"]["get"]["responses"]["default"]
    assert "x-contoso-error-code" in err["headers"]


def real_answers(route_name: str, described: dict[str, Any], *, bodies: bool = True
                 ) -> list[tuple[Path, str]]:
    """The real answers of a route described from an excerpt: the examples the excerpt names for
    its operation (every example of its folder when it names none) that ship in
    ``tests/examples/<excerpt>/``, each with the success statuses the description has a schema
    for (``bodies``), or else that it describes without a body (an accepted operation's 202)."""
    source = _SOURCES[route_name]
    excerpt = json.loads((DATA / f"{source.file}.json").read_text(encoding="utf-8"))
    named = excerpt["paths"][source.path][source.method].get("x-vendor-examples", {})
    folder = EXAMPLES / source.file
    files = sorted({folder / Path(v["$ref"]).name for v in named.values()} if named
                   else folder.glob("*.json"))
    out = []
    for path in (f for f in files if f.is_file()):
        answers = json.loads(path.read_text(encoding="utf-8"))["responses"]
        out += [(path, status) for status in sorted(answers)
                if "content" in described.get(status, {}) or
                (status.startswith("2") and status in described and not bodies)]
    return out


@pytest.mark.parametrize("route_name", sorted(_SOURCES))
def test_real_answers_match_the_converted_schemas(sandbox: Sandbox,
                                                  route_name: str) -> None:
    """The converted schemas accept the real services' answers, so a sandbox answer they refuse
    is the sandbox's fault, not the conversion's. The answers are the examples the excerpts
    themselves name: a route added to the sandbox's description brings its own."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    doc = build_document(sandbox)
    registry = Registry().with_resource("urn:sandbox", Resource.from_contents(
        {"components": doc["components"]}, default_specification=DRAFT202012))
    route = next(r for r in sandbox.router.routes if r.name == route_name)
    op = doc["paths"][route.pattern][route.method.lower()]
    answers = real_answers(route_name, op["responses"])
    if not answers:  # an operation that answers without a body: its statuses are described
        bodiless = real_answers(route_name, op["responses"], bodies=False)
        assert bodiless, f"no real answer of {route_name} ships in tests/examples/"
        for path, status in bodiless:
            assert "body" not in json.loads(path.read_text(encoding="utf-8"))["responses"][
                status], (path.name, status)
        return
    for path, status in answers:
        # the media type the excerpt names (geocoding answers application/geo+json)
        schema = next(iter(op["responses"][status]["content"].values()))["schema"]
        text = json.dumps(schema).replace('"#/components', '"urn:sandbox#/components')
        validator = Draft202012Validator(json.loads(text), registry=registry)
        body = json.loads(path.read_text(encoding="utf-8"))["responses"][status]["body"]
        errors = [f"{list(e.absolute_path)}: {e.message[:120]}"
                  for e in validator.iter_errors(body)]
        assert errors == [], (path.name, status)


def test_a_bad_schema_answer_is_detected(sandbox: Sandbox) -> None:
    """The conformance check the fuzzing relies on does fail on an answer off the schema."""
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    doc = build_document(sandbox)
    registry = Registry().with_resource("urn:sandbox", Resource.from_contents(
        {"components": doc["components"]}, default_specification=DRAFT202012))
    op = doc["paths"]["/providers/Vendor.Sql/operations"]["get"]
    schema = op["responses"]["200"]["content"]["application/json"]["schema"]
    text = json.dumps(schema).replace('"#/components', '"urn:sandbox#/components')
    validator = Draft202012Validator(json.loads(text), registry=registry)
    assert validator.is_valid({"value": [{"name": "Vendor.Sql/servers/read"}]})
    assert not validator.is_valid({"value": [{"name": 12}]})
    assert not validator.is_valid({"value": "not a list"})


def test_the_description_is_served_without_credentials(sandbox: Sandbox) -> None:
    r = requests.get(sandbox.url + OPENAPI_PATH, timeout=10)
    assert r.status_code == 200
    assert sandbox.maps_key.reveal() not in r.text


def test_the_served_description_is_the_built_one(sandbox: Sandbox) -> None:
    served = requests.get(sandbox.url + OPENAPI_PATH, timeout=10).json()
    assert served == build_document(sandbox)
    assert served["servers"] == [{"url": sandbox.url}]
    # asked again, the same document (built once per sandbox)
    assert requests.get(sandbox.url + OPENAPI_PATH, timeout=10).json() == served


def test_every_operation_has_its_own_id_and_its_familys_security(sandbox: Sandbox) -> None:
    doc = build_document(sandbox)
    ops = [op for item in doc["paths"].values() for op in item.values()]
    ids = [op["operationId"] for op in ops]
    assert len(ids) == len(set(ids)) == len(sandbox.router.routes) - 1
    schemes = set(doc["components"]["securitySchemes"])
    for op in ops:
        family = op["x-family"]
        assert op["tags"] == [family]
        assert {name for alternative in op["security"] for name in alternative} <= schemes
        ref = op["responses"]["default"]["content"]["application/json"]["schema"]["$ref"]
        assert ref == f"#/components/schemas/{family}.Error"
        if family == "maps":
            assert {"subscriptionKey"} in [set(a) for a in op["security"]]
        else:
            assert op["security"] == [{"bearer": []}]


def test_every_reference_resolves(sandbox: Sandbox) -> None:
    doc = build_document(sandbox)
    text = json.dumps(doc)
    names = {ref.removeprefix("#/components/schemas/")
             for ref in _refs(doc) if ref.startswith("#/components/schemas/")}
    assert names and names <= set(doc["components"]["schemas"])
    assert '"#/definitions/' not in text  # nothing left of the Swagger 2.0 excerpts' refs


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        out = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return out + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def test_the_description_speaks_the_clouds_words() -> None:
    sb = Sandbox(cloud="public")  # the document needs no server running
    doc = build_document(sb)
    assert "/providers/Microsoft.Sql/operations" in doc["paths"]
    text = json.dumps(doc)
    assert "Vendor." not in text and "x-vendor-" not in text
    maps = doc["paths"]["/traffic/incident"]["get"]["responses"]["default"]
    assert "x-ms-error-code" in maps["headers"]
    assert doc["components"]["securitySchemes"]["mapsClientId"]["name"] == "x-ms-client-id"


@pytest.mark.parametrize("schema, value, admitted", [
    ({"type": "string"}, None, True),
    ({"type": "string"}, "x", True),
    ({"type": "string"}, 3, False),
    ({"type": "string", "enum": ["a", "b"]}, None, True),
    ({"type": "string", "enum": ["a", "b"]}, "c", False),
    ({"type": ["integer", "string"]}, None, True),
    ({"$ref": "#/components/schemas/X"}, None, True),
])
def test_nullable_admits_null_and_nothing_else_new(schema: dict, value: Any,
                                                   admitted: bool) -> None:
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT202012

    out = _nullable(schema)
    registry = Registry().with_resource("urn:x", Resource.from_contents(
        {"components": {"schemas": {"X": {"type": "object"}}}},
        default_specification=DRAFT202012))
    text = json.dumps(out).replace('"#/components', '"urn:x#/components')
    assert Draft202012Validator(json.loads(text), registry=registry).is_valid(value) is admitted
    if "type" in out:
        assert _nullable(out) == out  # admitting null twice changes nothing


def test_schema_conversion_rules() -> None:
    stem = "02-sql-encryption-protector"
    converted = _schema({
        "type": "object", "required": ["kept"],
        "properties": {
            "kept": {"type": "string"},
            "optional": {"type": "integer", "x-nullable": False},
            "kind": {"type": "string", "enum": ["A", "B"],
                     "x-vendor-enum": {"name": "Kind", "modelAsString": True}},
            "closed": {"type": "string", "enum": ["A", "B"],
                       "x-vendor-enum": {"name": "Closed", "modelAsString": False}},
            "missing": {"$ref": "#/definitions/NoSuchModel"},
            "blob": {"type": "file"},
        },
        "example": {"kept": "x"},
    }, stem)
    props = converted["properties"]
    assert props["kept"] == {"type": "string"}                      # required: as it was
    assert props["optional"]["type"] == ["integer", "null"]         # optional: admits null
    assert props["kind"]["x-extensible-enum"] == ["A", "B"] and "enum" not in props["kind"]
    assert props["closed"]["enum"] == ["A", "B", None]
    assert props["missing"] == {"anyOf": [{}, {"type": "null"}]}   # a model left out: open
    assert "type" not in props["blob"]["anyOf"][0]                  # any body
    assert "example" not in converted
