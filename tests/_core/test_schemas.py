"""The declared schemas: every column has a known kind and its dtype, names are unique, category
columns list their documented values, and every public function that returns a frame has one."""

from __future__ import annotations

import pandas as pd
import pytest

import toolkit
from toolkit._core.registry import records, schema_for
from toolkit._core.schemas import Col, Schema

KINDS = {"string", "category", "datetime", "Int64", "exactint", "float", "boolean", "timedelta",
         "list", "object", "secret", "geometry"}


def test_a_column_reads_its_dotted_path_or_its_name() -> None:
    assert Col("properties.state", "string").source == ("properties", "state")
    assert Col("state", "string", path="properties.provisioningState").source == (
        "properties", "provisioningState")


@pytest.mark.parametrize("kind, dtype", [
    ("string", pd.StringDtype()), ("datetime", pd.DatetimeTZDtype("ns", "UTC")),
    ("Int64", pd.Int64Dtype()), ("exactint", pd.Int64Dtype()), ("float", "float64"),
    ("boolean", pd.BooleanDtype()), ("timedelta", "timedelta64[ns]"), ("list", "object"),
    ("object", "object"), ("secret", "secret"), ("geometry", "object"),
])
def test_each_kind_has_its_dtype(kind, dtype) -> None:
    assert Col("c", kind).dtype() == dtype


def test_a_category_column_keeps_its_documented_order() -> None:
    col = Col("level", "category", categories=("Low", "High"), ordered=True)
    dtype = col.dtype()
    assert isinstance(dtype, pd.CategoricalDtype) and dtype.ordered
    assert list(dtype.categories) == ["Low", "High"]
    unordered = Col("x", "category", categories=("b", "a")).dtype()
    assert isinstance(unordered, pd.CategoricalDtype) and not unordered.ordered


def test_a_schema_finds_its_columns_by_name() -> None:
    schema = Schema("f", (Col("a", "string"), Col("b", "float")))
    assert schema.names == ["a", "b"] and schema["b"].kind == "float"
    with pytest.raises(KeyError):
        schema["c"]


@pytest.mark.parametrize("name", sorted(n for n, r in records().items() if r.schema))
def test_every_declared_schema_is_well_formed(name) -> None:
    schema = schema_for(name)
    assert schema.name == name
    assert len(set(schema.names)) == len(schema.names), "a column is declared twice"
    assert {c.kind for c in schema.columns} <= KINDS
    for col in schema.columns:
        if col.kind == "category":
            assert len(set(col.categories)) == len(col.categories), col.name
        else:
            assert not col.categories and not col.ordered, col.name
    if schema.geometry is not None:
        assert schema[schema.geometry].kind == "geometry"


def test_the_public_functions_have_their_schemas() -> None:
    for name in ("policy_states", "route_directions", "snap_to_roads", "air_quality",
                 "update_encryption_protector"):
        assert callable(getattr(toolkit, name)) and schema_for(name).names
    with pytest.raises(KeyError, match="no operation named 'no_such_function'"):
        schema_for("no_such_function")
    with pytest.raises(KeyError, match="declares no schema"):
        schema_for("compliance_trend")
