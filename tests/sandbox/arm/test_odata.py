"""The OData evaluator on its own: $filter, $apply, $orderby, $select over a small table, each
checked against the same computation written in pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from toolkit.sandbox.arm.odata import (
    FrameTable,
    ODataError,
    apply_transformations,
    evaluate_filter,
    order_rows,
    parse_apply,
    parse_filter,
    parse_orderby,
    parse_select,
)


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 300
    states = ["Compliant", "NonCompliant", "Exempt", "Conflict"]
    return pd.DataFrame({
        "resourceId": [f"/subscriptions/s/resourceGroups/RG/providers/X/r{i % 40}"
                       for i in range(n)],
        "complianceState": pd.Categorical(rng.choice(states, n)),
        "policyDefinitionAction": pd.Categorical(rng.choice(["audit", "deny", "modify"], n)),
        "policyAssignmentName": rng.choice(["a-one", "a-two", "o'brien"], n),
        "isCompliant": rng.random(n) < 0.5,
        "timestamp": pd.Timestamp("2026-11-01", tz="UTC")
        + pd.to_timedelta(rng.integers(0, 20 * 86400, n), unit="s"),
        "count": rng.integers(0, 10, n),
    })


def _filter(df: pd.DataFrame, text: str) -> pd.DataFrame:
    mask = evaluate_filter(parse_filter(text), FrameTable(df))
    return df[mask]


def test_eq_on_a_category_ignores_case_and_accepts_pascal_case_names(frame) -> None:
    got = _filter(frame, "ComplianceState eq 'noncompliant'")
    assert got.index.tolist() == frame.index[frame.complianceState == "NonCompliant"].tolist()
    assert len(got) > 0


def test_and_or_not_and_parentheses(frame) -> None:
    text = ("IsCompliant eq false and (PolicyDefinitionAction eq 'audit' or "
            "PolicyDefinitionAction eq 'deny') and not (complianceState eq 'Exempt')")
    want = frame[~frame.isCompliant & frame.policyDefinitionAction.isin(["audit", "deny"])
                 & (frame.complianceState != "Exempt")]
    assert _filter(frame, text).index.tolist() == want.index.tolist()


@pytest.mark.parametrize("op, func", [("gt", "__gt__"), ("ge", "__ge__"), ("lt", "__lt__"),
                                      ("le", "__le__"), ("ne", "__ne__"), ("eq", "__eq__")])
def test_comparisons_on_dates_and_numbers(frame, op, func) -> None:
    when = pd.Timestamp("2026-11-10T06:00:00Z")
    got = _filter(frame, f"timestamp {op} 2026-11-10T06:00:00Z")
    assert got.index.tolist() == frame.index[getattr(frame.timestamp, func)(when)].tolist()
    got = _filter(frame, f"count {op} 4")
    assert got.index.tolist() == frame.index[getattr(frame["count"], func)(4)].tolist()


def test_datetime_literal_form_and_quoted_quotes(frame) -> None:
    a = _filter(frame, "timestamp ge datetime'2026-11-10T06:00:00Z'")
    b = _filter(frame, "timestamp ge 2026-11-10T06:00:00Z")
    assert a.index.equals(b.index)
    got = _filter(frame, "policyAssignmentName eq 'O''Brien'")
    assert got.index.tolist() == frame.index[frame.policyAssignmentName == "o'brien"].tolist()


def test_literal_on_the_left_is_flipped(frame) -> None:
    assert _filter(frame, "4 lt count").index.equals(_filter(frame, "count gt 4").index)


def test_null_comparisons() -> None:
    df = pd.DataFrame({"policyDefinitionReferenceId": ["x", None, "y"]})
    assert _filter(df, "policyDefinitionReferenceId eq null").index.tolist() == [1]
    assert _filter(df, "policyDefinitionReferenceId ne null").index.tolist() == [0, 2]


@pytest.mark.parametrize("text, problem", [
    ("nosuch eq 'x'", "unknown column 'nosuch'"),
    ("complianceState eq", "ends where a column name or a literal"),
    ("complianceState equals 'x'", "comparison operator"),
    ("(complianceState eq 'x'", "ends where ')' was expected"),
    ("complianceState eq 'x' extra", "unexpected 'extra'"),
    ("count eq 'three'", "is a number"),
    ("isCompliant eq 'yes'", "is a boolean"),
    ("timestamp gt 'not a date'", "not a date-time"),
    ("complianceState eq 'x' #", "unexpected character '#'"),
    ("", "empty"),
])
def test_bad_filters_name_the_problem(frame, text, problem) -> None:
    with pytest.raises(ODataError, match="Invalid \\$filter expression") as info:
        _filter(frame, text)
    assert problem in str(info.value)


def test_groupby_with_count_matches_pandas(frame) -> None:
    steps = parse_apply("groupby((PolicyAssignmentName, ComplianceState), "
                        "aggregate($count as Records))")
    got = apply_transformations(steps, FrameTable(frame)).frame()
    want = (frame.groupby(["policyAssignmentName", "complianceState"], observed=True).size()
            .rename("Records").reset_index())
    assert list(got.columns) == ["policyAssignmentName", "complianceState", "Records"]
    merged = got.merge(want.astype({"complianceState": object}),
                       on=["policyAssignmentName", "complianceState"])
    assert len(merged) == len(want) and (merged.Records_x == merged.Records_y).all()


def test_filter_then_chained_groupby_counts_distinct_resources(frame) -> None:
    text = ("filter(complianceState eq 'NonCompliant')/groupby((policyAssignmentName, resourceId))"
            "/groupby((policyAssignmentName), aggregate($count as NonCompliantResources))")
    got = apply_transformations(parse_apply(text), FrameTable(frame)).frame()
    nc = frame[frame.complianceState == "NonCompliant"]
    want = nc.groupby("policyAssignmentName").resourceId.nunique()
    assert dict(zip(got.policyAssignmentName, got.NonCompliantResources, strict=True)) == \
        want.to_dict()


def test_aggregate_alone_and_with_methods(frame) -> None:
    got = apply_transformations(parse_apply("aggregate($count as N)"), FrameTable(frame)).frame()
    assert got.to_dict("records") == [{"N": len(frame)}]
    text = ("groupby((policyDefinitionAction), aggregate(count with sum as Total, "
            "resourceId with countdistinct as Resources))")
    got = apply_transformations(parse_apply(text), FrameTable(frame)).frame()
    want = frame.groupby("policyDefinitionAction", observed=True).agg(
        Total=("count", "sum"), Resources=("resourceId", "nunique")).reset_index()
    assert got.Total.tolist() == want.Total.tolist()
    assert got.Resources.tolist() == want.Resources.tolist()


def test_groupby_without_aggregate_gives_distinct_rows(frame) -> None:
    got = apply_transformations(parse_apply("groupby((resourceId))"), FrameTable(frame)).frame()
    assert sorted(got.resourceId) == sorted(frame.resourceId.unique())


@pytest.mark.parametrize("text, problem", [
    ("groupby(PolicyAssignmentId)", "expected '('"),
    ("groupby((a), aggregate($count Alias))", "expected 'as'"),
    ("groupby((a), aggregate(x with median as m))", "unknown aggregation method 'median'"),
    ("summarize((a))", "filter(...), groupby((...)) or aggregate(...)"),
    ("groupby((a)) groupby((b))", "expected '/'"),
    ("groupby((nosuch), aggregate($count as n))", "unknown column 'nosuch'"),
])
def test_bad_apply_names_the_problem(frame, text, problem) -> None:
    with pytest.raises(ODataError) as info:
        apply_transformations(parse_apply(text), FrameTable(frame))
    assert problem in str(info.value) and "$apply" in str(info.value)


def test_orderby_several_columns_desc_by_default(frame) -> None:
    keys = parse_orderby("policyAssignmentName asc, count, timestamp asc")
    assert keys == [("policyAssignmentName", True), ("count", False), ("timestamp", True)]
    order = order_rows(FrameTable(frame), keys)
    want = frame.sort_values(["policyAssignmentName", "count", "timestamp"],
                             ascending=[True, False, True], kind="stable").index
    assert frame.index[order].tolist() == want.tolist()


def test_orderby_on_a_category_sorts_by_text(frame) -> None:
    order = order_rows(FrameTable(frame), parse_orderby("complianceState asc"))
    got = frame.complianceState.iloc[order].astype(str).tolist()
    assert got == sorted(got, key=str.lower)


@pytest.mark.parametrize("text", ["a sideways", "a asc desc", "", "1col"])
def test_bad_orderby(text) -> None:
    with pytest.raises(ODataError, match="\\$orderby"):
        parse_orderby(text)


def test_select() -> None:
    assert parse_select("ResourceId, complianceState") == ["ResourceId", "complianceState"]
    with pytest.raises(ODataError, match="\\$select"):
        parse_select("a,,b")


# ------------------------------------------------------------------ 'value' in Column
def test_in_keeps_the_rows_whose_collection_holds_the_value() -> None:
    frame = pd.DataFrame({"groups": pd.Categorical(["NS-1,DP-3", "DP-3", "", None]),
                          "listed": [["a", "B"], [], ["b"], None]})
    table = FrameTable(frame)
    assert evaluate_filter(parse_filter("'dp-3' IN groups"), table).tolist() == \
        [True, True, False, False]
    assert evaluate_filter(parse_filter("'b' in Listed and not ('a' in listed)"),
                           table).tolist() == [False, False, True, False]


@pytest.mark.parametrize("text", ["groups in 'a'", "'a' in 'b'", "1 in groups", "'a' in"])
def test_in_needs_a_quoted_value_and_a_column(text) -> None:
    table = FrameTable(pd.DataFrame({"groups": ["a"]}))
    with pytest.raises(ODataError):
        evaluate_filter(parse_filter(text), table)
