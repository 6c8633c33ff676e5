"""One record per operation, declared beside its function: the core names no module above it,
every public operation has one record, unknown names say so, and a record declared by a module
the core has never heard of is found by the schema, cache, accessor and resume lookups."""

from __future__ import annotations

import ast
import base64
import re
import sys
import threading
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pytest

import toolkit
from toolkit._core import accessor, registry
from toolkit._core.cache import LIFETIME_HEADER, lifetime_header
from toolkit._core.continuation import decode_token, resume_parser
from toolkit._core.lazy import exports_of
from toolkit._core.registry import (
    OperationRecord,
    UnknownOperationError,
    record,
    records,
    schema_for,
)
from toolkit._core.schemas import Col, Schema

PACKAGE = Path(toolkit.__file__).parent
#: What the core may name: itself and the data beneath it.
BENEATH = {"_core", "_spec", "_data", "_version"}
#: The toolkit's own subpackages and modules, by their first name under ``toolkit.``.
TOP_NAMES = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"} | {
    p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
FAMILIES = ("toolkit.arm.", "toolkit.maps.", "toolkit.graph.", "toolkit.fabric.")
#: Public functions of the families that are no operation (they make no frame).
NOT_OPERATIONS = {"write_kubeconfig"}


def _docstrings(tree: ast.Module) -> set[int]:
    nodes = [tree, *(n for n in ast.walk(tree)
                     if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef))]
    return {id(n.body[0].value) for n in nodes
            if n.body and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)}


def _names_above(text: str) -> list[str]:
    """The module paths ``toolkit.<x>...`` in a string whose ``<x>`` is above the core (a call
    shown to the user, ``toolkit.sandbox.catalog()``, names a function, not a module to load)."""
    return [m.group(0) for m in re.finditer(r"\btoolkit((?:\.\w+)+)(?!\w|\(|\.\w)", text)
            if m.group(1).split(".")[1] in TOP_NAMES - BENEATH]


def test_the_scan_sees_a_module_path_and_not_a_function() -> None:
    assert _names_above('"toolkit.arm.network:_resume_parser"') == ["toolkit.arm.network"]
    assert _names_above("*toolkit.plot:snapped_trace") == ["toolkit.plot"]
    assert _names_above("import_module('toolkit.maps.weather')") == ["toolkit.maps.weather"]
    assert _names_above("see toolkit.connect(), toolkit.sandbox.catalog() and "
                        "toolkit._core.cache") == []


def test_the_core_holds_no_string_naming_a_module_above_it() -> None:
    found = []
    for path in sorted((PACKAGE / "_core").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    id(node) not in docs:
                found += [f"{path.name}:{node.lineno} {n}" for n in _names_above(node.value)]
    assert found == []


def test_every_public_operation_has_exactly_one_record_beside_its_function() -> None:
    exported = exports_of(toolkit.__file__)
    operations = {name for name, module in exported.items()
                  if module.startswith(FAMILIES)} - NOT_OPERATIONS
    declared = records()
    assert set(declared) == operations
    for name, rec in declared.items():
        assert rec.name == name
        module = sys.modules[exported[name]]
        # the module defining the function holds its record (one object, by identity)
        assert [v for v in vars(module).values() if v is rec], name
        if rec.schema is not None:
            assert rec.schema.name == name


def test_the_records_carry_what_the_core_asked_for() -> None:
    assert record("policy_states").lifetime == 3_600 and record("policy_states").plot == \
        "compliance_by"
    assert record("snap_to_roads").input_first and record("snap_to_roads").explore == \
        "snapped_trace"
    assert {n for n, r in records().items() if r.resume is not None} == {
        "backend_health", "update_encryption_protector", "create_eventstream", "route_matrix"}
    never_cached = {"cluster_monitoring_credentials", "hosted_cluster_credentials",
                    "update_encryption_protector", "create_eventstream", "backend_health",
                    "route_matrix"}
    assert all(record(n).lifetime is None for n in never_cached)
    assert schema_for("encryption_protector").names == schema_for(
        "update_encryption_protector").names


def test_a_derived_operation_names_a_requesting_one_and_sends_nothing() -> None:
    derived = {n: r.derived_from for n, r in records().items() if r.derived_from is not None}
    assert derived == {"compliance_summary": "policy_states", "compliance_trend": "policy_states",
                       "evaluated_expressions": "policy_states",
                       "classification_consents": "problem_classifications",
                       "air_quality_pollutants": "air_quality",
                       "read_policy_history": "snapshot_policy_states",
                       "policy_changes": "snapshot_policy_states"}
    assert set(registry.requesting()) == set(records()) - set(derived)
    assert set(derived.values()) <= set(registry.requesting())


def test_an_unknown_name_says_which_names_exist() -> None:
    with pytest.raises(UnknownOperationError) as err:
        record("polcy_states")
    assert isinstance(err.value, KeyError)
    message = str(err.value)
    assert message.startswith("no operation named 'polcy_states' is declared")
    assert "policy_states" in message and "route_directions" in message
    assert registry.find("polcy_states") is None and registry.find(None) is None
    assert lifetime_header("polcy_states", "GET") == {}


def test_a_second_record_of_the_same_name_is_refused(monkeypatch) -> None:
    monkeypatch.setattr(registry, "_records", dict(registry._records))
    first = registry.register(OperationRecord("twice", lifetime=10))
    assert registry.register(OperationRecord("twice", lifetime=10)) == first  # the same: fine
    with pytest.raises(ValueError, match="declared twice"):
        registry.register(OperationRecord("twice", lifetime=20))
    with pytest.raises(ValueError, match="declared twice"):
        registry.register(OperationRecord("policy_states"))


def test_the_loader_runs_once_and_a_lookup_meanwhile_waits_for_it(monkeypatch) -> None:
    monkeypatch.setattr(registry, "_records", {})
    monkeypatch.setattr(registry, "_loaded", False)
    calls: list[str] = []
    started, release = threading.Event(), threading.Event()

    def load() -> None:
        calls.append("load")
        started.set()
        assert release.wait(10)
        registry.register(OperationRecord("late", lifetime=5))

    monkeypatch.setattr(registry, "_loader", load)
    found: list[OperationRecord] = []
    first = threading.Thread(target=lambda: found.append(record("late")))
    first.start()
    assert started.wait(10)
    second = threading.Thread(target=lambda: found.append(record("late")))
    second.start()
    release.set()
    first.join(10)
    second.join(10)
    assert [r.lifetime for r in found] == [5, 5]
    with pytest.raises(UnknownOperationError, match="operations are late"):
        record("never")
    assert calls == ["load"]


@pytest.mark.parametrize(("fields", "message"), [
    ({"name": "toolkit.arm.policy:policy_states"}, "function name"),
    ({"name": "x", "lifetime": 0}, "positive"),
    ({"name": "x", "lifetime": True}, "positive"),
    ({"name": "x", "lifetime": 1.5}, "positive"),
    ({"name": "x", "derived_from": "x"}, "another operation"),
    ({"name": "x", "derived_from": "toolkit.arm.policy"}, "another operation"),
])
def test_a_record_is_checked_when_declared(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        OperationRecord(**fields)


def test_a_helper_is_a_plot_or_an_explorer() -> None:
    assert registry.helper("plot", "compliance_by") is toolkit.plot.compliance_by
    with pytest.raises(LookupError, match="plot, explore"):
        registry.helper("widgets", "policy_explorer")


# ------------------------------------------------------------------ an operation added by copying
NEW_MODULE = '''
"""A family module the core has never heard of: its function and its record."""

import pandas as pd

from toolkit._core.registry import OperationRecord, register
from toolkit._core.schemas import Col, Schema

CENSUS = Schema("cat_census", (Col("name", "string"), Col("cats", "Int64")))


def cat_census():
    """Count the cats."""
    df = pd.DataFrame({"name": ["Ordino"], "cats": [3]})
    df.attrs["operation"] = "cat_census"
    return df


def _resume_parser(connection, operation, *, town):
    return lambda response: town


RECORD = register(OperationRecord("cat_census", schema=CENSUS, lifetime=42, plot="census",
                                  explore="census", resume=_resume_parser))
'''


@pytest.fixture
def new_operation(tmp_path, monkeypatch) -> Any:
    """Import a throwaway module declaring an operation; the registry forgets it afterwards."""
    monkeypatch.setattr(registry, "_records", dict(registry._records))
    (tmp_path / "cat_family.py").write_text(NEW_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    module = importlib.import_module("cat_family")
    yield module
    sys.modules.pop("cat_family", None)


def test_a_new_operation_is_found_by_every_lookup(new_operation, monkeypatch) -> None:
    assert record("cat_census") is new_operation.RECORD
    assert schema_for("cat_census") is new_operation.CENSUS
    assert lifetime_header("cat_census", "GET") == {LIFETIME_HEADER: "42"}
    # the accessor finds the helpers the record names, through the package's hook
    drawn: list[tuple[str, str, pd.DataFrame]] = []

    def helpers(kind: str, name: str) -> Any:
        return lambda df, *args, **kwargs: drawn.append((kind, name, df)) or kind

    monkeypatch.setattr(registry, "_helpers", helpers)
    accessor.register()
    df = new_operation.cat_census()
    assert df.toolkit.plot() == "plot" and df.toolkit.explore() == "explore"
    assert [(k, n) for k, n, _ in drawn] == [("plot", "census"), ("explore", "census")]
    assert all(frame is df for _, _, frame in drawn)
    # and a continuation token of it resumes with the record's parser
    state = {"v": 2, "kind": "item", "family": "fabric", "name": "cat_census", "method": "POST",
             "url": "https://fabric.example/operations/1", "args": {"town": "Ordino"}}
    token = "tkop1." + base64.urlsafe_b64encode(orjson.dumps(state)).decode().rstrip("=")
    decoded = decode_token(token)
    assert resume_parser(decoded) is new_operation._resume_parser


def test_a_frame_of_an_operation_without_a_picture_lists_those_with_one(new_operation) -> None:
    accessor.register()
    df = pd.DataFrame({"a": [1]})
    df.attrs["operation"] = "sql_operations"
    with pytest.raises(toolkit.ValidationError, match="cat_census") as err:
        df.toolkit.plot()
    assert "sql_operations" in str(err.value)


def test_a_schema_the_record_does_not_declare_is_a_key_error() -> None:
    with pytest.raises(KeyError, match="declares no schema"):
        schema_for("compliance_summary")
    assert Schema("x", (Col("a", "string"),)).names == ["a"]
