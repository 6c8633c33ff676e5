"""The facts of the resource-management services agree with spec document 1, the schemas and
the real examples; the client and the sandbox hold these very facts and check names alike."""

from __future__ import annotations

import importlib
import re
from typing import Any

import pytest
import requests

import toolkit
from tests._spec.conftest import (
    copies_of,
    imports_beyond_spec,
    schema,
    schema_enum,
    schema_parameter,
    spec_list,
    spec_section,
    spec_versions,
    top_level_statements,
)
from tests.conftest import EXAMPLES, example
from toolkit._core.validate import resource_group_problem
from toolkit._spec import arm
from toolkit.sandbox.arm.common import _resource_group_problem

VERSIONS = {  # the spec's words for the operations of each tuple (spec 1 §9)
    "NETWORK_API_VERSIONS": ["backend health"],
    "SQL_API_VERSIONS": ["encryption protector", "name availability", "operation listing"],
    "POLICY_API_VERSIONS": ["policy states"],
    "SUPPORT_API_VERSIONS": ["problem classifications"],
    "MANAGED_CLUSTER_API_VERSIONS": ["managed cluster credentials"],
    "HOSTED_CLUSTER_API_VERSIONS": ["hosted cluster credentials"],
}
SCHEMAS = {  # the schema excerpt of each tuple's operations
    "NETWORK_API_VERSIONS": ["01-backend-health"],
    "SQL_API_VERSIONS": ["02-sql-encryption-protector", "03-sql-check-name-availability",
                         "04-sql-operations-list"],
    "POLICY_API_VERSIONS": ["05-policy-states"],
    "SUPPORT_API_VERSIONS": ["06-support-problem-classifications"],
    "MANAGED_CLUSTER_API_VERSIONS": ["07-cluster-monitoring-credentials"],
    "HOSTED_CLUSTER_API_VERSIONS": ["08-hosted-cluster-credentials"],
}


def _limit(row: str) -> tuple[int, int]:
    """The ``a to b`` or ``at most b`` characters of a row of spec 1 §8's table."""
    line = next(s for s in spec_section(1, "## 8.").splitlines() if s.startswith(f"| {row} |"))
    if m := re.search(r"(\d+) to (\d+) characters", line):
        return int(m[1]), int(m[2])
    m = re.search(r"at most (\d+) characters", line)
    assert m, line
    return 1, int(m[1])


# ------------------------------------------------------------------------------ data only
def test_the_module_is_data_only() -> None:
    assert imports_beyond_spec(arm) == []
    assert top_level_statements(arm) == []
    assert sorted(arm.__all__) == sorted(n for n in vars(arm) if n.isupper())


def test_no_fact_is_written_again_elsewhere_in_the_package(package_literals) -> None:
    assert copies_of(arm, package_literals) == []


# ------------------------------------------------------------------------------ api-versions
@pytest.mark.parametrize("name", sorted(VERSIONS))
def test_the_newest_version_is_the_one_the_spec_uses(name: str) -> None:
    versions = getattr(arm, name)
    used = spec_versions(1)
    assert {used[op] for op in VERSIONS[name]} == {versions[0]}
    assert list(versions) == sorted(set(versions), reverse=True)  # newest first, no twice
    for version in versions:
        assert re.fullmatch(r"\d{4}-\d\d-\d\d", version)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_the_schemas_and_the_examples_use_accepted_versions(name: str) -> None:
    versions = getattr(arm, name)
    for excerpt in SCHEMAS[name]:
        assert schema(excerpt)["info"]["version"].split(" ")[0] in versions, excerpt
        for path in sorted((EXAMPLES / excerpt).glob("*.json")):
            assert example(excerpt, path.name)["parameters"]["api-version"] in versions, path


@pytest.mark.parametrize(("client", "server", "spec"), [
    ("toolkit.arm.network", "toolkit.sandbox.arm.network", "NETWORK_API_VERSIONS"),
    ("toolkit.arm.sql", "toolkit.sandbox.arm.sql", "SQL_API_VERSIONS"),
    ("toolkit.arm.policy", "toolkit.sandbox.arm.policy.handlers", "POLICY_API_VERSIONS"),
    ("toolkit.arm.support", "toolkit.sandbox.arm.support", "SUPPORT_API_VERSIONS"),
])
def test_the_client_sends_the_newest_version_the_sandbox_accepts(
        client: str, server: str, spec: str) -> None:
    versions = getattr(arm, spec)
    assert versions[0] == importlib.import_module(client).API_VERSION
    assert importlib.import_module(server).API_VERSIONS is versions


def test_the_sandbox_accepts_every_version_and_names_them_on_another(sandbox: Any) -> None:
    def operations(version: str) -> requests.Response:
        return requests.get(f"{sandbox.url}/providers/Vendor.Sql/operations",
                            params={"api-version": version}, timeout=10,
                            headers={"Authorization": "Bearer " + sandbox.token("arm")})

    for version in arm.SQL_API_VERSIONS:
        assert operations(version).status_code == 200, version
    refused = operations("2000-01-01")
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "InvalidApiVersionParameter"
    assert all(v in refused.json()["error"]["message"] for v in arm.SQL_API_VERSIONS)


def test_the_cluster_clients_send_the_newest_versions() -> None:
    from toolkit.arm import clusters

    assert arm.MANAGED_CLUSTER_API_VERSIONS[0] == clusters.MANAGED_API_VERSION
    assert arm.HOSTED_CLUSTER_API_VERSIONS[0] == clusters.HOSTED_API_VERSION


# ------------------------------------------------------------------------------ names
@pytest.mark.parametrize(("pattern", "good", "bad"), [
    (arm.SERVER_NAME_PATTERN, ["a", "sql-prod-01", "x" * 63], ["-a", "a-", "A", "a_b", "x" * 64]),
    (arm.RESOURCE_GROUP_PATTERN, ["rg", "my.rg(1)", "x" * 90], ["a/b", "x" * 91, ""]),
    (arm.CLUSTER_NAME_PATTERN, ["a", "aks_prod-1"], ["-a", "a-", "x" * 64]),
])
def test_patterns_mean_what_the_spec_says(pattern: str, good: list[str], bad: list[str]) -> None:
    rx = re.compile(pattern)
    assert all(rx.fullmatch(s) for s in good)
    assert not any(rx.fullmatch(s) for s in bad)


def test_server_names_follow_the_rules_of_the_spec() -> None:
    low, high = _limit("server name")
    rx = re.compile(arm.SERVER_NAME_PATTERN)
    assert rx.fullmatch("a" * low) and rx.fullmatch("a" * high)
    assert not rx.fullmatch("a" * (high + 1)) and not rx.fullmatch("")
    rules = spec_section(1, "### 2.6")  # lower-case letters or digits, inner '-', no '.' or '_'
    assert "no '.' or '_'" in rules and "no leading or trailing '-'" in rules
    for bad in ("Server1", "my.server", "my_server", "-server", "server-"):
        assert not rx.fullmatch(bad), bad
    assert rx.fullmatch("my-server-1")
    named = [example("03-sql-check-name-availability", p.name)["parameters"]["parameters"]["name"]
             for p in sorted((EXAMPLES / "03-sql-check-name-availability").glob("*.json"))]
    named.append(example("02-sql-encryption-protector",
                         "EncryptionProtectorCreateOrUpdateKeyVault.json")["parameters"]["serverName"])
    assert named and all(rx.fullmatch(n) for n in named), named


def test_resource_group_names_are_as_long_as_the_spec_allows() -> None:
    low, high = _limit("resourceGroupName")
    assert high == arm.RESOURCE_GROUP_MAX
    rx = re.compile(arm.RESOURCE_GROUP_PATTERN)
    assert rx.fullmatch("a" * low) and rx.fullmatch("a" * high)
    assert not rx.fullmatch("a" * (high + 1)) and not rx.fullmatch("a" * (low - 1))
    named = {ex["parameters"]["resourceGroupName"]
             for ex in (example(p.parent.name, p.name) for p in sorted(EXAMPLES.glob("0*/*.json")))
             if "resourceGroupName" in ex["parameters"]}
    assert len(named) >= 4 and all(rx.fullmatch(n) for n in named), named


def test_client_and_sandbox_refuse_the_same_resource_group_names() -> None:
    """Each side writes its own check on the spec's pattern and limit: they agree."""
    names = ["rg", "my.rg(1)", "rg.", "a/b", "", "x" * arm.RESOURCE_GROUP_MAX,
             "x" * (arm.RESOURCE_GROUP_MAX + 1), "été", "a b", "_-()"]
    client = {n for n in names if resource_group_problem(n) is not None}
    sandbox = {n for n in names if _resource_group_problem(n) is not None}
    assert client == sandbox
    assert {"rg.", "a/b", "", "x" * (arm.RESOURCE_GROUP_MAX + 1), "a b"} <= client
    assert not {"rg", "my.rg(1)", "x" * arm.RESOURCE_GROUP_MAX} & client


def test_cluster_names_are_the_schemas_pattern_and_lengths() -> None:
    declared = schema_parameter("07-cluster-monitoring-credentials", "resourceName")
    assert declared["pattern"] == arm.CLUSTER_NAME_PATTERN
    rx = re.compile(arm.CLUSTER_NAME_PATTERN)
    low, high = declared["minLength"], declared["maxLength"]
    assert (low, high) == _limit("managed cluster resourceName")
    assert rx.fullmatch("a" * low) and rx.fullmatch("a" * high)
    assert not rx.fullmatch("a" * (high + 1))
    ex = example("07-cluster-monitoring-credentials",
                 "ManagedClustersListClusterMonitoringUserCredentials.json")
    assert rx.fullmatch(ex["parameters"]["resourceName"])


def test_vault_key_names_have_the_forms_of_the_spec() -> None:
    rules = spec_section(1, "### 2.5")
    assert "<vault>_<key>_<key_version>" in rules and "<vault>_<key> (versionless)" in rules
    rx = re.compile(arm.VAULT_KEY_NAME_PATTERN)
    ex = example("02-sql-encryption-protector", "EncryptionProtectorCreateOrUpdateKeyVault.json")
    sent = ex["parameters"]["parameters"]["properties"]["serverKeyName"]
    answered = ex["responses"]["200"]["body"]["properties"]["serverKeyName"]
    pinned = rx.fullmatch(sent)
    assert pinned and pinned["vault"] == "someVault" and pinned["key"] == "someKey"
    assert pinned["version"] == sent.rsplit("_", 1)[1]
    assert rx.fullmatch(answered)
    versionless = rx.fullmatch(sent.rsplit("_", 1)[0])
    assert versionless and versionless["version"] is None
    assert not rx.fullmatch("ServiceManaged")  # the service-managed key's literal name


def test_both_sides_refuse_the_same_server_names(sandbox: Any, catalog: Any) -> None:
    """The client's check and the sandbox's, each written on its own side, agree."""
    sub = catalog.query("kind == 'subscription'").iloc[0].subscription_id
    conn = toolkit.connect(sandbox=sandbox)
    names = ["ok-name", "Bad_Name", "-lead", "trail-", "x" * 63, "x" * 64, "a.b", "7"]
    try:
        local = toolkit.check_server_names(sub, names, connection=conn)
        remote = toolkit.check_server_names(sub, names, send_invalid=True, connection=conn)
    finally:
        conn.close()
    local_invalid = set(local.loc[local["reason"] == "Invalid", "name"])
    remote_invalid = set(remote.loc[remote["reason"] == "Invalid", "name"])
    assert local_invalid == remote_invalid == {"Bad_Name", "-lead", "trail-", "x" * 64, "a.b"}


# ------------------------------------------------------------------------------ enumerations
def test_health_states_are_the_spec_and_the_schemas() -> None:
    table = spec_section(1, "### 2.1")
    line = next(s for s in table.splitlines() if "| health | enum |" in s)
    documented = [v.strip() for v in line.split("| enum |")[1].strip(" |").split(",")]
    assert set(arm.HEALTH_STATES) == set(documented)
    assert set(arm.HEALTH_STATES) == set(
        schema_enum("01-backend-health", "ApplicationGatewayBackendHealthServerHealth"))
    assert set(arm.HEALTH_STATES) == set(spec_list(spec_section(1, "## 3."),
                                                   "Backend server health values: "))
    assert len(set(arm.HEALTH_STATES)) == len(arm.HEALTH_STATES)
    ex = example("01-backend-health", "ApplicationGatewayBackendHealthGet.json")
    seen = {s["health"] for p in ex["responses"]["200"]["body"]["backendAddressPools"]
            for c in p["backendHttpSettingsCollection"] for s in c["servers"]}
    assert seen and seen <= set(arm.HEALTH_STATES)


def test_compliance_states_hold_the_examples_and_rank_non_compliance_worst() -> None:
    ex = example("05-policy-states", "PolicyStates_QueryResourceGroupScope.json")
    records = ex["responses"]["200"]["body"]["value"]
    assert {r["complianceState"] for r in records} <= set(arm.COMPLIANCE_STATES)
    for r in records:  # the deprecated flag agrees with the state the examples carry
        assert r["isCompliant"] == (r["complianceState"] == "Compliant")
    assert len(set(arm.COMPLIANCE_STATES)) == len(arm.COMPLIANCE_STATES)
    assert arm.COMPLIANCE_STATES[-1] == "NonCompliant"  # a roll-up's highest rank


def test_policy_state_fields_are_those_the_service_sends_in_its_order() -> None:
    for name in ("PolicyStates_QueryResourceGroupScope.json",):
        for record in example("05-policy-states", name)["responses"]["200"]["body"]["value"]:
            sent = [k for k in record if not k.startswith("@odata.")]
            assert tuple(sent) == arm.POLICY_STATE_FIELDS
    declared = list(schema("05-policy-states")["definitions"]["PolicyState"]["properties"])
    assert [f for f in declared if f in arm.POLICY_STATE_FIELDS] == list(arm.POLICY_STATE_FIELDS)
    documented = spec_section(1, "### 2.8")
    for field in arm.POLICY_STATE_FIELDS:
        assert re.search(rf"\b{field}\b", documented), field


def test_resource_and_policy_fields_split_the_records_fields() -> None:
    resource, policy = set(arm.RESOURCE_FIELDS), set(arm.POLICY_FIELDS)
    assert not resource & policy
    assert resource | policy <= set(arm.POLICY_STATE_FIELDS)
    for field in arm.POLICY_STATE_FIELDS:
        if field.startswith("policy"):
            assert field in policy, field
        if field.startswith("resource"):
            assert field in resource, field
    assert len(arm.RESOURCE_FIELDS) == len(resource) and len(arm.POLICY_FIELDS) == len(policy)


def test_the_client_interns_the_scalar_policy_fields_of_the_spec() -> None:
    from toolkit.arm import policy

    assert set(policy.POLICY_FIELDS) <= set(arm.POLICY_FIELDS)
    assert set(arm.POLICY_FIELDS) - set(policy.POLICY_FIELDS) == {"policyDefinitionGroupNames"}
    assert set(arm.RESOURCE_FIELDS) | set(arm.POLICY_FIELDS) <= set(arm.POLICY_STATE_FIELDS)


@pytest.mark.parametrize(("where", "fact"), [
    ("toolkit.arm._schemas:COMPLIANCE_STATES", "COMPLIANCE_STATES"),
    ("toolkit.arm.compliance:COMPLIANCE_STATES", "COMPLIANCE_STATES"),
    ("toolkit.arm._schemas:HEALTH_STATES", "HEALTH_STATES"),
    ("toolkit.arm.policy:RESOURCE_FIELDS", "RESOURCE_FIELDS"),
    ("toolkit.sandbox.arm.policy.world:RESOURCE_FIELDS", "RESOURCE_FIELDS"),
    ("toolkit.sandbox.arm.policy.world:POLICY_STATE_FIELDS", "POLICY_STATE_FIELDS"),
    ("toolkit.arm.policy:SPEC_POLICY_FIELDS", "POLICY_FIELDS"),
])
def test_client_and_sandbox_tables_are_the_spec(where: str, fact: str) -> None:
    module, name = where.split(":")
    assert getattr(importlib.import_module(module), name) is getattr(arm, fact), where
