"""The sandbox's KQL: the documented sample queries of Resource Graph, run verbatim on a sandbox
in the public cloud's words, answer what the world holds (counted here from the world, or read
through the policy-insights routes, never from the engine itself)."""

# ruff: noqa: E501  (the documentation's sample queries, as it writes them)

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

import toolkit
from toolkit.sandbox.arm.resourcegraph.engine import Engine, KqlFailure, _column_type
from toolkit.sandbox.arm.resourcegraph.handlers import engine_of
from toolkit.sandbox.server import Sandbox

#: From "Starter Resource Graph query samples"
#: (https://learn.microsoft.com/azure/governance/resource-graph/samples/starter); tag names and
#: values changed to the sandbox world's where a sample names its own.
STARTER = {
    "count resources": "Resources | summarize count()",
    "count key vaults": "Resources | where type =~ 'microsoft.keyvault/vaults' | count",
    "sorted by name": "Resources | project name, type, location | order by name asc",
    "vms by name desc": ("Resources | project name, location, type | where type =~ "
                         "'Microsoft.Compute/virtualMachines' | order by name desc"),
    "first five vms": ("Resources | where type =~ 'Microsoft.Compute/virtualMachines' "
                       "| project name, properties.storageProfile.osDisk.osType "
                       "| top 5 by name desc"),
    "vms by os": ("Resources | where type =~ 'Microsoft.Compute/virtualMachines' "
                  "| summarize count() by tostring(properties.storageProfile.osDisk.osType)"),
    "vms by os, extend": ("Resources | where type =~ 'Microsoft.Compute/virtualMachines' "
                          "| extend os = properties.storageProfile.osDisk.osType "
                          "| summarize count() by tostring(os)"),
    "storage types": "Resources | where type contains 'storage' | distinct type",
    "public ips": ("Resources | where type contains 'publicIPAddresses' and "
                   "isnotempty(properties.ipAddress) | project properties.ipAddress | limit 100"),
    "public ips by subscription": ("Resources | where type contains 'publicIPAddresses' and "
                                   "isnotempty(properties.ipAddress) "
                                   "| summarize count () by subscriptionId"),
    "tag value": "Resources | where tags.env=~'dev' | project name",
    "tag by index": ("Resources | where type =~ 'Microsoft.Storage/storageAccounts' "
                     "| where tags['costCenter'] == 'cc-1007' | project name, tags"),
    "key vaults with subscription name": (
        "Resources | join kind=leftouter (ResourceContainers | where "
        "type=='microsoft.resources/subscriptions' | project SubName=name, subscriptionId) on "
        "subscriptionId | where type == 'microsoft.keyvault/vaults' | project type, name, "
        "SubName"),
    "vm nics": ("Resources | where type =~ 'microsoft.compute/virtualmachines' "
                "| extend nics=array_length(properties.networkProfile.networkInterfaces) "
                "| mv-expand nic=properties.networkProfile.networkInterfaces "
                "| where nics == 1 or nic.properties.primary =~ 'true' or isempty(nic) "
                "| project vmId = id, vmName = name, "
                "vmSize=tolower(properties.hardwareProfile.vmSize), nicId = tostring(nic.id)"),
    "locations in~": ("Resources | where location in~ ('WestEurope', 'NORTHEUROPE') "
                      "| summarize count() by location"),
    "name has": "Resources | where name has 'shop' | project id, name",
}

_WEIGHT = ("iff(complianceState == 'NonCompliant', int(300), iff(complianceState == 'Compliant', "
           "int(200), iff(complianceState == 'Conflict', int(100), iff(complianceState == "
           "'Exempt', int(50), int(0)))))")
_STATE = ("iff({w} == 300, 'noncompliant', iff({w} == 200, 'compliant', iff({w} == 100, "
          "'conflict', iff({w} == 50, 'exempt', 'notstarted'))))")
#: From "Azure Resource Graph sample queries for Azure Policy"
#: (https://learn.microsoft.com/azure/governance/policy/samples/resource-graph-samples).
POLICY = {
    "compliance by assignment": f"""PolicyResources
| where type =~ 'Microsoft.PolicyInsights/PolicyStates'
| extend complianceState = tostring(properties.complianceState)
| extend
  resourceId = tostring(properties.resourceId),
  policyAssignmentId = tostring(properties.policyAssignmentId),
  policyAssignmentScope = tostring(properties.policyAssignmentScope),
  policyAssignmentName = tostring(properties.policyAssignmentName),
  policyDefinitionId = tostring(properties.policyDefinitionId),
  policyDefinitionReferenceId = tostring(properties.policyDefinitionReferenceId),
  stateWeight = {_WEIGHT}
| summarize max(stateWeight) by resourceId, policyAssignmentId, policyAssignmentScope, policyAssignmentName
| summarize counts = count() by policyAssignmentId, policyAssignmentScope, max_stateWeight, policyAssignmentName
| summarize overallStateWeight = max(max_stateWeight),
nonCompliantCount = sumif(counts, max_stateWeight == 300),
compliantCount = sumif(counts, max_stateWeight == 200),
conflictCount = sumif(counts, max_stateWeight == 100),
exemptCount = sumif(counts, max_stateWeight == 50) by policyAssignmentId, policyAssignmentScope, policyAssignmentName
| extend totalResources = todouble(nonCompliantCount + compliantCount + conflictCount + exemptCount)
| extend compliancePercentage = iff(totalResources == 0, todouble(100), 100 * todouble(compliantCount + exemptCount) / totalResources)
| project policyAssignmentName, scope = policyAssignmentScope,
complianceState = {_STATE.format(w="overallStateWeight")},
compliancePercentage,
compliantCount,
nonCompliantCount,
conflictCount,
exemptCount""",
    "compliance by resource type": f"""PolicyResources
| where type =~ 'Microsoft.PolicyInsights/PolicyStates'
| extend complianceState = tostring(properties.complianceState)
| extend
  resourceId = tostring(properties.resourceId),
  resourceType = tolower(tostring(properties.resourceType)),
  policyAssignmentId = tostring(properties.policyAssignmentId),
  policyDefinitionId = tostring(properties.policyDefinitionId),
  policyDefinitionReferenceId = tostring(properties.policyDefinitionReferenceId),
  stateWeight = {_WEIGHT}
| summarize max(stateWeight) by resourceId, resourceType
| summarize counts = count() by resourceType, max_stateWeight
| summarize overallStateWeight = max(max_stateWeight),
nonCompliantCount = sumif(counts, max_stateWeight == 300),
compliantCount = sumif(counts, max_stateWeight == 200),
conflictCount = sumif(counts, max_stateWeight == 100),
exemptCount = sumif(counts, max_stateWeight == 50) by resourceType
| extend totalResources = todouble(nonCompliantCount + compliantCount + conflictCount + exemptCount)
| extend compliancePercentage = iff(totalResources == 0, todouble(100), 100 * todouble(compliantCount + exemptCount) / totalResources)
| project resourceType,
overAllComplianceState = {_STATE.format(w="overallStateWeight")},
compliancePercentage,
compliantCount,
nonCompliantCount,
conflictCount,
exemptCount""",
    "non-compliant resources": """PolicyResources
| where type == 'microsoft.policyinsights/policystates'
| where properties.complianceState == 'NonCompliant'
| extend NonCompliantResourceId = properties.resourceId, PolicyAssignmentName = properties.policyAssignmentName""",
    "compliance by state": f"""PolicyResources
| where type =~ 'Microsoft.PolicyInsights/PolicyStates'
| extend complianceState = tostring(properties.complianceState)
| extend
  resourceId = tostring(properties.resourceId),
  stateWeight = {_WEIGHT}
| summarize max(stateWeight) by resourceId
| summarize counts = count() by max_stateWeight
| project overAllComplianceState = {_STATE.format(w="max_stateWeight")}, counts""",
    "compliance by state per location": f"""PolicyResources
| where type =~ 'Microsoft.PolicyInsights/PolicyStates'
| extend complianceState = tostring(properties.complianceState)
| extend
  resourceId = tostring(properties.resourceId),
  resourceLocation = tostring(properties.resourceLocation),
  stateWeight = {_WEIGHT}
| summarize max(stateWeight) by resourceId, resourceLocation
| summarize counts = count() by resourceLocation, max_stateWeight
| project resourceLocation, overAllComplianceState = {_STATE.format(w="max_stateWeight")}, counts""",
}


@pytest.fixture(scope="module")
def public() -> Any:
    with Sandbox(seed=7, cloud="public", frozen_clock=True) as sb:
        yield sb


@pytest.fixture(scope="module")
def engine(public: Sandbox) -> Engine:
    return engine_of(public)


def run(engine: Engine, query: str) -> list[dict[str, Any]]:
    result = engine.run(query, None, None)
    names = [c["name"] for c in result.columns]
    return [dict(zip(names, row, strict=True)) for row in result.rows]


def existing(sb: Sandbox) -> list[Any]:
    return [r for r in sb.world.section("policy").resources if not r.deleted]


@pytest.mark.parametrize("name", sorted(STARTER))
def test_every_starter_sample_runs(name: str, engine: Engine) -> None:
    rows = run(engine, STARTER[name])
    assert rows, name


@pytest.mark.parametrize("name", sorted(POLICY))
def test_every_policy_sample_runs(name: str, engine: Engine) -> None:
    assert run(engine, POLICY[name]), name


def test_the_inventory_samples_count_what_the_world_holds(
        public: Sandbox, engine: Engine) -> None:
    live = existing(public)
    assert run(engine, STARTER["count resources"]) == [{"count_": len(live)}]
    vaults = sum(1 for r in live if r.kind == "KV")
    assert run(engine, STARTER["count key vaults"]) == [{"Count": vaults}]
    names = [r["name"] for r in run(engine, STARTER["sorted by name"])]
    assert names == sorted(names) and len(names) == len(live)
    vms = [r for r in live if r.kind == "VM"]
    by_os = {r["properties_storageProfile_osDisk_osType"]: r["count_"]
             for r in run(engine, STARTER["vms by os"])}
    assert sum(by_os.values()) == len(vms) and set(by_os) <= {"Linux", "Windows"}
    assert {r["os"]: r["count_"] for r in run(engine, STARTER["vms by os, extend"])} \
        == by_os
    top = run(engine, STARTER["first five vms"])
    assert [r["name"] for r in top] == sorted((r.name for r in vms), reverse=True)[:5]
    # a table's name in quotes is text, not the table
    assert run(engine, "Resources | where name == 'Resources' | count") == [{"Count": 0}]
    assert all(r["properties_storageProfile_osDisk_osType"] in by_os for r in top)
    dev = {r.fields["resourceId"].rsplit("/", 1)[-1] for r in live if r.tags.get("env") == "dev"}
    assert {r["name"] for r in run(engine, STARTER["tag value"])} == dev
    by_location = Counter(r.location for r in live if r.location in ("westeurope",
                                                                     "northeurope"))
    assert {r["location"]: r["count_"] for r in run(engine, STARTER["locations in~"])} \
        == dict(by_location)
    subs = {s.id: s.name for s in public.world.subscriptions}
    vaults_named = run(engine, STARTER["key vaults with subscription name"])
    assert len(vaults_named) == vaults
    assert all(r["SubName"] in subs.values() for r in vaults_named)
    nics = run(engine, STARTER["vm nics"])
    assert {r["vmId"] for r in nics} == {r.fields["resourceId"] for r in vms}
    assert all(r["nicId"] for r in nics)


def test_the_compliance_samples_agree_with_the_policy_states(
        public: Sandbox, engine: Engine) -> None:
    conn = toolkit.connect(sandbox=public, progress=False)
    try:
        root = public.world.tenant_id
        latest = toolkit.policy_states(
            scope=f"/providers/Microsoft.Management/managementGroups/{root}", connection=conn)
    finally:
        conn.close()
    worst = latest.groupby("resourceId", observed=True)["complianceState"].max()
    expected = {str(s).lower(): int(n) for s, n in worst.value_counts().items() if n}
    by_state = {r["overAllComplianceState"]: r["counts"]
                for r in run(engine, POLICY["compliance by state"])}
    assert by_state == expected
    per_assignment = run(engine, POLICY["compliance by assignment"])
    for row in per_assignment:
        mine = latest[latest["policyAssignmentName"] == row["policyAssignmentName"]]
        w = mine.groupby("resourceId", observed=True)["complianceState"].max()
        assert row["nonCompliantCount"] == int((w == "NonCompliant").sum())
        assert row["compliantCount"] == int((w == "Compliant").sum())
    assert len(per_assignment) == latest["policyAssignmentName"].nunique()
    noncompliant = run(engine, POLICY["non-compliant resources"])
    assert len(noncompliant) == int((latest["complianceState"] == "NonCompliant").sum())


def test_the_scope_of_a_query_is_its_subscriptions(public: Sandbox, engine: Engine) -> None:
    sub = public.world.subscriptions[0].id
    result = engine.run("resources | project subscriptionId", [sub], None)
    assert {r[0] for r in result.rows} == {sub}
    none = engine.run("resources | project id", ["00000000-0000-0000-0000-000000000000"], None)
    assert none.rows == [] and none.columns == [{"name": "id", "type": "string"}]


def test_a_query_naming_no_table_reads_resources(engine: Engine) -> None:
    assert engine.run("where type contains 'storage' | count", None, None).rows == \
        engine.run("resources | where type contains 'storage' | count", None, None).rows


@pytest.mark.parametrize(("query", "kind"), [
    ("resources | wherex", "ParserFailure"),
    ("resources | project nosuchcolumn", "InvalidQuery"),
    ("resources | evaluate bag_unpack(tags)", "UnsupportedOperator"),
    ("externaldata (x: string) [@'file:///etc/passwd'] with (format='csv')", None),
])
def test_what_the_engine_cannot_run_is_refused_with_its_reason(
        query: str, kind: str | None, engine: Engine) -> None:
    with pytest.raises(KqlFailure) as info:
        engine.run(query, None, None)
    assert info.value.message
    if kind is not None:
        assert info.value.kind == kind


@pytest.mark.parametrize(("duck", "service"), [
    ("VARCHAR", "string"), ("BIGINT", "integer"), ("INTEGER", "integer"),
    ("HUGEINT", "integer"), ("DOUBLE", "number"), ("DECIMAL(18,3)", "number"),
    ("BOOLEAN", "boolean"), ("TIMESTAMP", "datetime"), ("TIMESTAMP WITH TIME ZONE", "datetime"),
    ("JSON", "object"), ("STRUCT(a INTEGER)", "object"), ("VARCHAR[]", "object"),
    ("MAP(VARCHAR, VARCHAR)", "object"), ("UUID", "string"),
])
def test_duckdb_types_are_the_services_column_types(duck: str, service: str) -> None:
    assert _column_type(duck) == service


def test_the_operators_the_documentation_names(public: Sandbox, engine: Engine) -> None:
    """Each operator and function docs/resource-management.md lists, checked against the
    world's own rows."""
    live = existing(public)
    vms = [r for r in live if r.kind == "VM"]
    types = Counter(f"microsoft.{r.fields['resourceId'].split('/providers/Microsoft.')[1]}"
                    .rsplit("/", 1)[0].lower() for r in live)

    def one(query: str) -> list[dict[str, Any]]:
        return run(engine, query)

    assert one("resources | summarize n = countif(type =~ 'microsoft.compute/virtualmachines'),"
               " d = dcount(location), m = min(name)")[0] == {
        "n": len(vms), "d": len({r.location for r in live}),
        "m": min(r.fields["resourceId"].rsplit("/", 1)[-1] for r in live)}
    assert one("resources | where type !~ 'MICROSOFT.COMPUTE/VIRTUALMACHINES' | count") == [
        {"Count": len(live) - len(vms)}]
    assert one("resources | where name startswith 'vm-' | project-away properties, tags, sku "
               "| take 1")[0].keys() >= {"id", "name", "type"}
    kinds = one("resources | extend k = case(type =~ 'microsoft.compute/virtualmachines', 'vm',"
                " type =~ 'microsoft.compute/disks', 'disk', 'other') | summarize n = count() "
                "by k")
    assert {r["k"]: r["n"] for r in kinds}["vm"] == len(vms)
    assert one("resources | where properties['storageProfile']['osDisk']['osType'] == 'Linux' "
               "| summarize s = sum(toint(1))")[0]["s"] == sum(
        1 for r in vms if run(engine, "resources | where id == '" + r.fields["resourceId"]
                              + "' | project os = tostring(properties.storageProfile.osDisk."
                                "osType)")[0]["os"] == "Linux")
    assert one("resources | where isnull(properties.nothingHere) | count") == [
        {"Count": len(live)}]
    both = one("union (resources | project id), (resourcecontainers | project id) | count")
    assert both == [{"Count": len(live) + len(public.world.management_groups)
                     + len(public.world.subscriptions) + len(public.world.resource_groups())}]
    assert one("resources | extend t = tobool(properties.supportsHttpsTrafficOnly) "
               "| where isnotnull(t) | count")[0]["Count"] == types["microsoft.storage/"
                                                                    "storageaccounts"]
