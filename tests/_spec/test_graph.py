"""The facts of the identity service agree with spec document 3, its schema and the real
example; the client and the sandbox hold these very facts and the sandbox answers in them."""

from __future__ import annotations

import importlib
import re
from typing import Any

import pytest
import requests

from tests._spec.conftest import (
    copies_of,
    imports_beyond_spec,
    schema,
    spec_section,
    top_level_statements,
)
from tests.conftest import example
from toolkit._spec import graph

EXAMPLE = ("16-graph-authentication-strength-usage", "authenticationstrengthpolicy-usage.json")
RX = re.compile(graph.POLICY_ID_PATTERN)


def _get(sandbox: Any, path: str) -> requests.Response:
    return requests.get(sandbox.url + path, timeout=10,
                        headers={"Authorization": "Bearer " + sandbox.token("graph")})


def test_the_module_is_data_only() -> None:
    assert imports_beyond_spec(graph) == []
    assert top_level_statements(graph) == []
    assert sorted(graph.__all__) == sorted(n for n in vars(graph) if n.isupper())


def test_no_fact_is_written_again_elsewhere_in_the_package(package_literals) -> None:
    assert copies_of(graph, package_literals) == []


# ------------------------------------------------------------------------------ versions
def test_the_usage_query_is_on_the_first_version_as_the_spec_documents() -> None:
    endpoint = spec_section(3, "### 4.1")
    path = re.search(r"GET \{base_url\}/([^/]+)/policies/authenticationStrengthPolicies/", endpoint)
    assert path and graph.API_VERSIONS[0] == path[1]
    assert f"under the {graph.API_VERSIONS[0]} path prefix" in spec_section(3, "## 9.")
    assert schema(EXAMPLE[0])["info"]["version"] == graph.API_VERSIONS[0]
    request = example(*EXAMPLE)["x-converted-from"]["request"]
    assert f"/{graph.API_VERSIONS[0]}/policies/" in request
    assert len(set(graph.API_VERSIONS)) == len(graph.API_VERSIONS)


def test_the_sandbox_answers_under_every_version_and_no_other(sandbox: Any) -> None:
    for version in graph.API_VERSIONS:
        answer = _get(sandbox, f"/{version}/policies/authenticationStrengthPolicies")
        assert answer.status_code == 200, (version, answer.text[:200])
    assert _get(sandbox, "/v9.9/policies/authenticationStrengthPolicies").status_code >= 400


@pytest.mark.parametrize(("client", "server"), [
    ("toolkit.graph.identity:API_VERSIONS", "toolkit.sandbox.graph.identity:VERSIONS"),
])
def test_client_and_sandbox_tables_are_the_spec(client: str, server: str) -> None:
    for where in (client, server):
        module, name = where.split(":")
        assert getattr(importlib.import_module(module), name) is graph.API_VERSIONS, where
    assert graph.API_VERSIONS[0] == importlib.import_module("toolkit.graph.identity").API_VERSION


# ------------------------------------------------------------------------------ ids
@pytest.mark.parametrize(("good", "bad"), [
    (["00000000-0000-0000-0000-000000000002", "custom.p_1"], ["", ".a", "a/b"]),
])
def test_patterns_mean_what_the_spec_says(good: list[str], bad: list[str]) -> None:
    assert all(RX.fullmatch(s) for s in good)
    assert not any(RX.fullmatch(s) for s in bad)


def test_policy_ids_of_the_example_and_of_the_sandbox_are_accepted(sandbox: Any) -> None:
    body = example(*EXAMPLE)["responses"]["200"]["body"]
    ids = [p["grantControls"]["authenticationStrength"]["id"]
           for requirement in body.values() for p in requirement]
    listed = _get(sandbox, f"/{graph.API_VERSIONS[0]}/policies/authenticationStrengthPolicies")
    ids += [p["id"] for p in listed.json()["value"]]
    assert len(ids) >= 4 and all(RX.fullmatch(i) for i in ids), ids
    for bad in ("a b", "a?b", "-a", "a#", "é"):
        assert not RX.fullmatch(bad), bad


# ------------------------------------------------------------------------------ enumerations
def test_requirements_are_the_usage_answers_groups() -> None:
    table = spec_section(3, "### 2.1")
    documented = re.findall(r"^\| (\w+) \| array of conditional-access policy \|", table, re.M)
    assert list(graph.STRENGTH_REQUIREMENTS) == documented
    assert list(example(*EXAMPLE)["responses"]["200"]["body"]) == list(graph.STRENGTH_REQUIREMENTS)


def test_conditional_access_states_are_those_the_schema_names() -> None:
    described = schema(EXAMPLE[0])["definitions"]
    text = " ".join(str(d.get("description", "")) for d in described.values())
    states = re.search(r"state \(([\w|]+)\)", text)
    assert states and list(graph.CA_POLICY_STATES) == states[1].split("|")


def test_the_sandbox_answers_in_the_enumerations(sandbox: Any) -> None:
    root = f"/{graph.API_VERSIONS[0]}/policies/authenticationStrengthPolicies"
    policies = _get(sandbox, root).json()["value"]
    assert {p["policyType"] for p in policies} == set(graph.STRENGTH_POLICY_TYPES)
    assert {p["requirementsSatisfied"] for p in policies} <= set(graph.STRENGTH_REQUIREMENTS)
    states = set()
    for policy in policies:
        usage = _get(sandbox, f"{root}/{policy['id']}/usage").json()
        assert [k for k in usage if not k.startswith("@")] == list(graph.STRENGTH_REQUIREMENTS)
        states |= {p["state"] for group in graph.STRENGTH_REQUIREMENTS for p in usage[group]}
    assert states and states <= set(graph.CA_POLICY_STATES)


@pytest.mark.parametrize(("where", "fact"), [
    ("toolkit.graph.identity:POLICY_ID_PATTERN", "POLICY_ID_PATTERN"),
    ("toolkit.graph.identity:REQUIREMENTS", "STRENGTH_REQUIREMENTS"),
    ("toolkit.graph.identity:STRENGTH_REQUIREMENTS", "STRENGTH_REQUIREMENTS"),
    ("toolkit.graph.identity:STRENGTH_POLICY_TYPES", "STRENGTH_POLICY_TYPES"),
    ("toolkit.graph.identity:CA_POLICY_STATES", "CA_POLICY_STATES"),
])
def test_the_clients_tables_are_the_spec(where: str, fact: str) -> None:
    module, name = where.split(":")
    assert getattr(importlib.import_module(module), name) is getattr(graph, fact), where
