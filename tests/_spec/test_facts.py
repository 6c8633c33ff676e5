"""The facts of the spec are written once, in ``toolkit._spec``: no other module of the package
holds a copy of an enumeration, a pattern or a colour scale, and the client's and the sandbox's
tables are the spec's own objects."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path
from typing import Any

import pytest

import toolkit
from toolkit._spec import arm, clouds, common, fabric, graph, maps

PACKAGE = Path(toolkit.__file__).parent
SPEC_MODULES = (arm, common, fabric, graph, maps)


def _facts() -> dict[str, Any]:
    """Every fact of the spec modules: 'module.NAME' -> value (containers and patterns)."""
    out: dict[str, Any] = {}
    for module in SPEC_MODULES:
        for name in module.__all__:
            value = getattr(module, name)
            container = isinstance(value, tuple | frozenset | dict) and len(value) >= 2
            if container or (isinstance(value, str) and name.endswith("PATTERN")):
                out[f"{module.__name__}.{name}"] = value
    return out


def _literal(node: ast.AST) -> Any:
    try:
        value = ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return value


def _same(value: Any, fact: Any) -> bool:
    if isinstance(fact, frozenset):
        return isinstance(value, set | frozenset) and set(value) == fact
    if isinstance(fact, str):
        return isinstance(value, str) and value == fact
    return type(value) is type(fact) and value == fact


def test_spec_modules_hold_data_only() -> None:
    for module in (*SPEC_MODULES, clouds):
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                root = (node.module or "") if isinstance(node, ast.ImportFrom) else \
                    node.names[0].name
                assert not root.startswith("toolkit") or root.startswith("toolkit._spec"), \
                    f"{module.__name__} imports {root}"
        assert module.__all__, module.__name__


def test_no_fact_of_the_spec_is_written_twice() -> None:
    facts = _facts()
    assert len(facts) > 40
    copies = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "_spec" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Tuple | ast.Set | ast.Dict | ast.Constant | ast.Call):
                continue
            if isinstance(node, ast.Call):  # set('...') / frozenset({...}) / re.compile(r'...')
                if not node.args:
                    continue
                value = _literal(node.args[0])
                if isinstance(node.func, ast.Name) and node.func.id in ("set", "frozenset") \
                        and isinstance(value, str):
                    value = set(value)
            else:
                value = _literal(node)
            if value is None or (isinstance(value, str) and len(value) < 8):
                continue
            for name, fact in facts.items():
                if _same(value, fact):
                    copies.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} "
                                  f"copies {name}")
    assert not copies, "\n".join(copies)


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
    ("toolkit._core.schemas:INCIDENT_TYPES", "toolkit.sandbox.maps.traffic:INCIDENT_TYPES",
     maps.INCIDENT_TYPES),
    ("toolkit._core.schemas:AUTOCOMPLETE_TYPES", "toolkit.sandbox.maps.search:RESULT_TYPES",
     maps.AUTOCOMPLETE_TYPES),
    ("toolkit._core.schemas:AUTOCOMPLETE_TYPE_GROUPS", "toolkit.sandbox.maps.search:GROUPS",
     maps.AUTOCOMPLETE_TYPE_GROUPS),
    ("toolkit.plot.weather:AIR_QUALITY_COLORS",
     "toolkit.sandbox.maps.weather.world:CATEGORY_COLORS", maps.AIR_QUALITY_COLORS),
    ("toolkit._core.schemas:ALERT_STATUSES", "toolkit.sandbox.maps.weather.world:ALERT_STATUSES",
     maps.ALERT_STATUSES),
    ("toolkit.plot.weather:AIR_QUALITY_BANDS",
     "toolkit.sandbox.maps.weather.world:AIR_QUALITY_BANDS", maps.AIR_QUALITY_BANDS),
    ("toolkit.graph.identity:API_VERSIONS", "toolkit.sandbox.graph.identity:VERSIONS",
     graph.API_VERSIONS),
    ("toolkit._core.schemas:COMPLIANCE_STATES", "toolkit._spec.arm:COMPLIANCE_STATES",
     arm.COMPLIANCE_STATES),
    ("toolkit.arm.policy:RESOURCE_FIELDS", "toolkit.sandbox.arm.policy.world:RESOURCE_FIELDS",
     arm.RESOURCE_FIELDS),
    ("toolkit.fabric.eventstream:DESCRIPTION_MAX",
     "toolkit.sandbox.fabric.eventstream:DESCRIPTION_MAX", fabric.DESCRIPTION_MAX),
])
def test_client_and_sandbox_tables_are_the_spec(client: str, server: str, fact: Any) -> None:
    for where in (client, server):
        module, name = where.split(":")
        assert getattr(importlib.import_module(module), name) is fact, where


@pytest.mark.parametrize(("client", "server", "family", "spec"), [
    ("toolkit.arm.network", "toolkit.sandbox.arm.network", arm, "NETWORK_API_VERSIONS"),
    ("toolkit.arm.sql", "toolkit.sandbox.arm.sql", arm, "SQL_API_VERSIONS"),
    ("toolkit.arm.policy", "toolkit.sandbox.arm.policy.handlers", arm, "POLICY_API_VERSIONS"),
    ("toolkit.arm.support", "toolkit.sandbox.arm.support", arm, "SUPPORT_API_VERSIONS"),
    ("toolkit.maps.search", "toolkit.sandbox.maps.search", maps, "SEARCH_API_VERSIONS"),
    ("toolkit.maps.route", "toolkit.sandbox.maps.route", maps, "ROUTE_API_VERSIONS"),
    ("toolkit.maps.traffic", "toolkit.sandbox.maps.traffic", maps, "TRAFFIC_API_VERSIONS"),
    ("toolkit.maps.weather", "toolkit.sandbox.maps.weather.world", maps, "WEATHER_API_VERSIONS"),
])
def test_the_client_sends_the_newest_version_the_sandbox_accepts(
        client: str, server: str, family: Any, spec: str) -> None:
    versions = getattr(family, spec)
    assert versions[0] == importlib.import_module(client).API_VERSION
    assert importlib.import_module(server).API_VERSIONS is versions


def test_the_client_interns_the_scalar_policy_fields_of_the_spec() -> None:
    from toolkit.arm import policy

    assert set(policy.POLICY_FIELDS) <= set(arm.POLICY_FIELDS)
    assert set(arm.POLICY_FIELDS) - set(policy.POLICY_FIELDS) == {"policyDefinitionGroupNames"}
    assert set(arm.RESOURCE_FIELDS) | set(arm.POLICY_FIELDS) <= set(arm.POLICY_STATE_FIELDS)


@pytest.mark.parametrize(("pattern", "good", "bad"), [
    (arm.SERVER_NAME_PATTERN, ["a", "sql-prod-01", "x" * 63], ["-a", "a-", "A", "a_b", "x" * 64]),
    (arm.RESOURCE_GROUP_PATTERN, ["rg", "my.rg(1)", "x" * 90], ["a/b", "x" * 91, ""]),
    (arm.CLUSTER_NAME_PATTERN, ["a", "aks_prod-1"], ["-a", "a-", "x" * 64]),
    (common.UUID_PATTERN, ["00000000-0000-0000-0000-000000000000"], ["0000", "g" * 36]),
    (graph.POLICY_ID_PATTERN, ["00000000-0000-0000-0000-000000000002", "custom.p_1"],
     ["", ".a", "a/b"]),
    (maps.COUNTRY_CODE_PATTERN, ["AD", "fr"], ["A", "AND", "1A"]),
    (fabric.API_VERSION_PATTERN, ["v1", "v1.1"], ["1", "v", "v1."]),
])
def test_patterns_mean_what_the_spec_says(pattern: str, good: list[str], bad: list[str]) -> None:
    rx = re.compile(pattern)
    assert all(rx.fullmatch(s) for s in good)
    assert not any(rx.fullmatch(s) for s in bad)


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
