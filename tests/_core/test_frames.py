"""Records to typed frames from declared schemas."""

from __future__ import annotations

import pandas as pd

from toolkit._core.frames import FrameBuilder, build_frame, empty_frame
from toolkit._core.registry import records
from toolkit._core.schemas import Col, Schema

SCHEMA = Schema("t", (
    Col("id", "string"),
    Col("when", "datetime"),
    Col("state", "category", categories=("Up", "Down"), ordered=True),
    Col("n", "Int64"),
    Col("flag", "boolean"),
    Col("big", "exactint"),
    Col("name", "string", path="properties.name"),
    Col("tags", "list"),
    Col("secret", "secret"),
))


def test_dtypes_follow_the_schema() -> None:
    df = build_frame([
        {"id": "a", "when": "2026-11-20T09:00:00.1234567Z", "state": "Up", "n": 3, "flag": True,
         "big": 9223372036854775000, "properties": {"name": "x"}, "tags": ["t"], "secret": "pw"},
        {"id": None, "when": "2026-11-20T10:00:00+02:00", "state": "Maintenance", "n": None,
         "flag": None, "big": "12", "tags": None},
    ], SCHEMA)
    assert str(df["when"].dtype) == "datetime64[ns, UTC]"
    assert df["when"][1] == pd.Timestamp("2026-11-20T08:00:00Z")
    assert df["when"][0].nanosecond == 700
    assert df["n"].dtype == "Int64" and df["n"].isna()[1]
    assert df["flag"].dtype == "boolean"
    assert df["big"][0] == 9223372036854775000 and df["big"][1] == 12
    assert df["name"][0] == "x" and pd.isna(df["name"][1])
    assert df["tags"][0] == ["t"] and df["tags"][1] is None
    assert df["secret"][0].reveal() == "pw" and "pw" not in repr(df)


def test_unknown_category_is_kept_after_the_documented_ones() -> None:
    df = build_frame([{"state": "Down"}, {"state": "Maintenance"}, {"state": "Up"}], SCHEMA)
    assert list(df["state"].cat.categories) == ["Up", "Down", "Maintenance"]
    assert df["state"].cat.ordered
    assert df["state"].tolist() == ["Down", "Maintenance", "Up"]


def test_wrong_types_become_missing_not_errors() -> None:
    df = build_frame([{"n": "seven", "flag": "yes", "when": 12, "big": 1.5}], SCHEMA)
    assert df["n"].isna().all() and df["flag"].isna().all()
    assert df["when"].isna().all() and df["big"].isna().all()


def test_non_integral_count_is_missing() -> None:
    df = build_frame([{"n": 2.5}, {"n": 4.0}], SCHEMA)
    assert df["n"].isna()[0] and df["n"][1] == 4


def test_empty_frames_have_every_column_and_dtype() -> None:
    for schema in (r.schema for r in records().values() if r.schema is not None):
        df = empty_frame(schema)
        assert list(df.columns) == schema.names
        assert len(df) == 0
        for col in schema.columns:
            want = col.dtype()
            if col.kind == "category":
                assert isinstance(df[col.name].dtype, pd.CategoricalDtype)
                assert list(df[col.name].cat.categories) == list(col.categories)
            else:
                assert df[col.name].dtype == want, col.name


def test_builder_adds_pages_and_selected_columns() -> None:
    builder = FrameBuilder(SCHEMA, columns=["ID", "state", "extra"])
    builder.add([{"id": "a", "state": "Up", "extra": 1}])
    builder.add([{"id": "b", "state": "Down", "extra": None}])
    df = builder.build({"operation": "t"})
    assert list(df.columns) == ["id", "state", "extra"]
    assert df["id"].tolist() == ["a", "b"]
    assert df["extra"].tolist()[0] == "1"
    assert df.attrs["operation"] == "t"


def test_an_object_column_of_strings_stays_an_object_column() -> None:
    # a nested field (tags) that a service sent as text in every record is kept as given: pandas
    # would infer a str column, and the frame would no longer have its declared dtypes
    schema = Schema("t", (Col("tags", "object"), Col("name", "string")))
    df = build_frame([{"tags": "env=prod", "name": "a"}, {"tags": "x", "name": "b"}], schema)
    assert df["tags"].dtype == object and df["tags"].tolist() == ["env=prod", "x"]
    assert df["name"].dtype == "string"
