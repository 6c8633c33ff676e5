"""policy_states over HTTP against the sandbox world: windows, latest vs default, paging, every
$filter/$apply form checked against pandas over the same world, errors, faults, the shared real
examples, expansion, every kind of scope and its rules, reads in concurrent time slices."""

from __future__ import annotations

import warnings
from contextlib import nullcontext
from datetime import timedelta
from typing import Any
from urllib.parse import unquote

import numpy as np
import pandas as pd
import pytest

import toolkit
from tests.arm.conftest import policy_window
from tests.conftest import example
from toolkit._core.columns import InterningBuilder
from toolkit._core.errors import TruncatedResultWarning, ValidationError
from toolkit._core.messages import Request
from toolkit.arm import slices
from toolkit.arm._schemas import POLICY_STATES
from toolkit.arm.policy import POLICY_FIELDS, RESOURCE_FIELDS
from toolkit.sandbox.arm.policy.handlers import PAGE_SIZE
from toolkit.sandbox.arm.policy.world import SCALE_ENV, STATES
from toolkit.sandbox.server import Sandbox

FOLDER = "05-policy-states"

#: Frames read twice from the same records are equal value for value, floats too. Compared
#: exactly, pandas compares their categorical columns as whole arrays; its default compares them
#: one value at a time (seconds for a frame of ten thousand rows).
EXACT = True


def _in_window(rec, start, end) -> np.ndarray:
    return np.flatnonzero((rec.ts >= start.timestamp()) & (rec.ts <= end.timestamp()))


# ------------------------------------------------------------------------------ windows, paging
def test_default_pages_return_exactly_the_records_of_the_window(conn, sandbox, scope) -> None:
    sub, rg, _, rec = scope
    start, end = policy_window(sandbox.world, 0.2, 3)
    rows = _in_window(rec, start, end)
    assert len(rows) > 2 * PAGE_SIZE  # several pages
    with sandbox.recording() as log:
        df = toolkit.policy_states(sub, rg, resource="default", start=start, end=end,
                                   connection=conn)
    assert len(df) == len(rows)
    # too few records for time slices: one aggregate count after the first page, then the chain
    counts = [r for r in log if "%24apply=aggregate" in r.query or "$apply=aggregate" in r.query]
    assert len(counts) == 1 and log[1] == counts[0]
    log = [r for r in log if r not in counts]
    assert len(log) == -(-len(rows) // PAGE_SIZE)
    assert all(r.method == "POST" for r in log)
    assert all("$skiptoken=" in r.query for r in log[1:])
    # nothing lost or repeated: each (pair, time) of the world once
    got = set(zip(df["resourceId"].astype(str), df["policyAssignmentName"].astype(str),
                  df["policyDefinitionReferenceId"].astype(str),
                  df["timestamp"].astype("int64") // 10**9, strict=True))
    assert len(got) == len(rows)
    want_ts = np.sort(rec.ts[rows])
    assert np.array_equal(np.sort(df["timestamp"].astype("int64").to_numpy() // 10**9), want_ts)
    assert df["timestamp"].between(start, end).all()
    assert df.attrs["operation"] == "policy_states" and len(df.attrs["request_ids"]) == len(log)


def test_latest_keeps_the_newest_record_per_pair(conn, sandbox, scope) -> None:
    sub, rg, _, rec = scope
    start, end = policy_window(sandbox.world, 0, 5)
    rows = _in_window(rec, start, end)
    pairs = np.unique(rec.pair[rows])
    latest = toolkit.policy_states(sub, rg, resource="latest", start=start, end=end,
                                   connection=conn)
    default = toolkit.policy_states(sub, rg, resource="default", start=start, end=end,
                                    connection=conn)
    assert len(latest) == len(pairs) < len(default) == len(rows)
    key = ["resourceId", "policyAssignmentId", "policyDefinitionId",
           "policyDefinitionReferenceId"]
    assert not latest.duplicated(key).any()
    newest = (default.sort_values("timestamp").drop_duplicates(key, keep="last")
              .set_index(key)["timestamp"])
    joined = latest.set_index(key)["timestamp"]
    assert joined.sort_index().equals(newest.reindex(joined.index).sort_index())


def test_window_defaults_to_the_day_before_the_request(conn, sandbox, scope) -> None:
    sub, rg, _, rec = scope
    df = toolkit.policy_states(sub, rg, connection=conn)
    now = pd.Timestamp(sandbox.now())
    assert df["timestamp"].min() >= now - timedelta(days=1, minutes=5)
    # every pair still alive was evaluated in the last day: about one record each
    alive = np.unique(rec.pair[rec.ts >= (now - timedelta(days=1)).timestamp() + 60])
    assert len(alive) <= len(df) <= len(np.unique(rec.pair))


def test_top_limits_across_pages_and_orderby_sorts(conn, sandbox, scope) -> None:
    sub, rg, _, _ = scope
    start, end = policy_window(sandbox.world, 0, 4)
    df = toolkit.policy_states(sub, rg, resource="default", start=start, end=end, top=1500,
                               orderby=["resourceLocation asc", "timestamp desc"],
                               connection=conn)
    assert len(df) == 1500
    loc = df["resourceLocation"].astype(str).str.lower()
    assert loc.is_monotonic_increasing
    for _, part in df.groupby(loc, sort=False):
        assert part["timestamp"].is_monotonic_decreasing


def test_select_keeps_only_those_columns(conn, sandbox, scope) -> None:
    sub, rg, _, _ = scope
    df = toolkit.policy_states(sub, rg, select="ResourceId, complianceState, timestamp",
                               top=20, connection=conn)
    assert list(df.columns) == ["resourceId", "complianceState", "timestamp"]
    assert str(df["timestamp"].dtype) == "datetime64[ns, UTC]"
    assert isinstance(df["complianceState"].dtype, pd.CategoricalDtype)


def test_full_frame_has_the_declared_dtypes(conn, scope) -> None:
    sub, rg, _, _ = scope
    df = toolkit.policy_states(sub, rg, connection=conn)
    assert list(df.columns) == POLICY_STATES.names
    for col in POLICY_STATES.columns:
        if col.kind == "category":
            assert isinstance(df[col.name].dtype, pd.CategoricalDtype), col.name
        else:
            assert df[col.name].dtype == col.dtype(), col.name
    assert list(df["complianceState"].cat.categories[:5]) == list(POLICY_STATES[
        "complianceState"].categories)
    assert df["complianceState"].cat.ordered
    assert df["isCompliant"].eq(df["complianceState"] == "Compliant").all()
    lists = df["policyDefinitionGroupNames"]
    assert lists.map(lambda v: isinstance(v, list)).all()
    sets = df[df["policySetDefinitionName"].notna()]
    assert sets["policyDefinitionReferenceId"].notna().all() and len(sets) > 0


def test_empty_result_is_an_empty_frame_with_the_schema(conn, scope) -> None:
    sub, rg, _, _ = scope
    df = toolkit.policy_states(sub, rg, filter="resourceLocation eq 'antarctica'",
                               connection=conn)
    assert len(df) == 0 and list(df.columns) == POLICY_STATES.names
    assert str(df["timestamp"].dtype) == "datetime64[ns, UTC]"
    agg = toolkit.policy_states(sub, rg, filter="resourceLocation eq 'antarctica'",
                                apply="groupby((resourceType), aggregate($count as n))",
                                connection=conn)
    assert list(agg.columns) == ["resourceType", "n"] and len(agg) == 0
    assert str(agg["n"].dtype) == "Int64"


# ------------------------------------------------------------------------------ $filter, $apply


@pytest.mark.parametrize("text, want", [
    ("ComplianceState eq 'NonCompliant'", lambda d: d.complianceState == "NonCompliant"),
    ("complianceState eq 'noncompliant'", lambda d: d.complianceState == "NonCompliant"),
    ("IsCompliant eq false and (PolicyDefinitionAction eq 'audit' or "
     "PolicyDefinitionAction eq 'deny')",
     lambda d: ~d.isCompliant.astype(bool) & d.policyDefinitionAction.isin(["audit", "deny"])),
    ("not (complianceState eq 'Compliant') and resourceType ne '/Vendor.Web/sites'",
     lambda d: (d.complianceState != "Compliant") & (d.resourceType != "/Vendor.Web/sites")),
    ("policyDefinitionReferenceId eq null", lambda d: d.policyDefinitionReferenceId.isna()),
    ("timestamp ge 2026-11-19T21:00:00Z", lambda d: d.timestamp >= "2026-11-19T21:00:00Z"),
    ("timestamp lt datetime'2026-11-19T21:00:00Z' and isCompliant eq true",
     lambda d: (d.timestamp < "2026-11-19T21:00:00Z") & d.isCompliant.astype(bool)),
])
def test_filters_match_pandas_over_the_same_records(conn, scope, latest_frame, text,
                                                    want) -> None:
    sub, rg, _, _ = scope
    full, (start, end) = latest_frame
    got = toolkit.policy_states(sub, rg, filter=text, start=start, end=end, connection=conn)
    expected = full[want(full).to_numpy(dtype=bool)]
    assert 0 < len(got) < len(full) or text.startswith("policyDefinitionReferenceId")
    key = ["resourceId", "policyAssignmentName", "policyDefinitionReferenceId"]
    assert sorted(map(tuple, got[key].astype(str).to_numpy())) == \
        sorted(map(tuple, expected[key].astype(str).to_numpy()))


def test_groupby_with_count_matches_pandas(conn, scope, latest_frame) -> None:
    sub, rg, _, _ = scope
    full, (start, end) = latest_frame
    got = toolkit.policy_states(
        sub, rg, start=start, end=end,
        apply="groupby((PolicyAssignmentName, ComplianceState), aggregate($count as Records))",
        orderby="Records desc", connection=conn)
    assert list(got.columns) == ["policyAssignmentName", "complianceState", "Records"]
    assert str(got["Records"].dtype) == "Int64"
    assert got["Records"].is_monotonic_decreasing
    want = full.groupby(["policyAssignmentName", "complianceState"], observed=True).size()
    got_counts = got.set_index(["policyAssignmentName", "complianceState"])["Records"]
    assert {k: int(v) for k, v in got_counts.items()} == {k: int(v) for k, v in want.items()}


def test_the_example_filter_and_apply_form(conn, scope, latest_frame) -> None:
    sub, rg, _, _ = scope
    full, (start, end) = latest_frame
    got = toolkit.policy_states(
        sub, rg, start=start, end=end,
        filter="IsCompliant eq false and (PolicyDefinitionAction eq 'audit' or "
               "PolicyDefinitionAction eq 'deny')",
        apply="groupby((PolicyAssignmentId, PolicyDefinitionId, PolicyDefinitionAction, "
              "ResourceId), aggregate($count as NumAuditDenyNonComplianceRecords))",
        orderby="NumAuditDenyNonComplianceRecords desc", top=2, connection=conn)
    assert list(got.columns) == ["policyAssignmentId", "policyDefinitionId",
                                 "policyDefinitionAction", "resourceId",
                                 "NumAuditDenyNonComplianceRecords"]
    assert len(got) == 2
    nc = full[~full.isCompliant.astype(bool) & full.policyDefinitionAction.isin(["audit",
                                                                                  "deny"])]
    top = nc.groupby(["policyAssignmentId", "policyDefinitionId", "policyDefinitionAction",
                      "resourceId"], observed=True).size().max()
    assert got["NumAuditDenyNonComplianceRecords"].iloc[0] == top


def test_chained_apply_counts_non_compliant_resources(conn, scope, latest_frame) -> None:
    sub, rg, _, _ = scope
    full, (start, end) = latest_frame
    got = toolkit.policy_states(
        sub, rg, start=start, end=end,
        apply="filter(complianceState eq 'NonCompliant')/groupby((policyAssignmentName, "
              "resourceId))/groupby((policyAssignmentName), aggregate($count as Resources))",
        connection=conn)
    want = (full[full.complianceState == "NonCompliant"]
            .groupby("policyAssignmentName", observed=True)["resourceId"].nunique())
    assert dict(zip(got["policyAssignmentName"].astype(str), got["Resources"].astype(int),
                    strict=True)) == {str(k): int(v) for k, v in want.items()}


def test_aggregate_alone_counts_the_window(conn, sandbox, scope) -> None:
    sub, rg, _, rec = scope
    start, end = policy_window(sandbox.world, 1, 7)
    got = toolkit.policy_states(sub, rg, resource="default", start=start, end=end,
                                apply="aggregate($count as Records)", connection=conn)
    assert got["Records"].tolist() == [len(_in_window(rec, start, end))]


@pytest.mark.parametrize("kw, problem", [
    ({"filter": "nosuch eq 'x'"}, "unknown column 'nosuch'"),
    ({"filter": "complianceState eq"}, "the expression ends"),
    ({"filter": "complianceState is 'x'"}, "comparison operator"),
    ({"apply": "groupby((resourceId), aggregate($count Records))"}, "expected 'as'"),
    ({"apply": "pivot((resourceId))"}, "groupby((...))"),
    ({"orderby": "timestamp sideways"}, "not a direction"),
    ({"select": "resourceId, nosuch"}, "unknown column 'nosuch'"),
])
def test_bad_expressions_give_a_query_failure_naming_the_problem(conn, scope, kw,
                                                                 problem) -> None:
    sub, rg, _, _ = scope
    with pytest.raises(toolkit.ApiError) as info:
        toolkit.policy_states(sub, rg, connection=conn, **kw)
    err = info.value
    assert err.status == 400 and err.code == "InvalidQueryParameterValue"
    assert problem in err.message


def test_unknown_group_and_subscription(conn) -> None:
    world_sub = toolkit.sandbox.catalog().query("kind == 'subscription'").iloc[0]
    with pytest.raises(toolkit.NotFoundError, match="ResourceGroupNotFound"):
        toolkit.policy_states(world_sub.subscription_id, "rg-nowhere", connection=conn)
    with pytest.raises(toolkit.NotFoundError, match="SubscriptionNotFound"):
        toolkit.policy_states("00000000-0000-4000-8000-000000000000", "rg-web-weu",
                              connection=conn)


# ------------------------------------------------------------------------------ faults, limits
@pytest.fixture(scope="module")
def fault_free_window(sandbox, scope):
    """Four days of ``scope``'s records read without faults, and that window (read once: the
    reads under faults compare with it)."""
    sub, rg, _, _ = scope
    start, end = policy_window(sandbox.world, 2, 4)
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    try:
        frame = toolkit.policy_states(sub, rg, resource="default", start=start, end=end,
                                      connection=conn)
    finally:
        conn.close()
    return frame, (start, end)


@pytest.mark.parametrize("kind", ["429", "503", "malformed", "drop"])
def test_paging_under_faults_loses_and_duplicates_nothing(conn, sandbox, scope, kind,
                                                          fault_free_window) -> None:
    sub, rg, _, _ = scope
    expected, (start, end) = fault_free_window
    sandbox.inject(kind, path="skiptoken", rate=0.5, retry_after=1, count=3)
    got = toolkit.policy_states(sub, rg, resource="default", start=start, end=end,
                                connection=conn)
    assert conn.stats.retries >= 1
    pd.testing.assert_frame_equal(got, expected, check_exact=EXACT)


def test_max_items_truncates_with_a_warning(conn, sandbox, scope) -> None:
    sub, rg, _, _ = scope
    start, end = policy_window(sandbox.world, 0, 3)
    with pytest.warns(TruncatedResultWarning, match="max_items=1200"):
        df = toolkit.policy_states(sub, rg, resource="default", start=start, end=end,
                                   max_items=1200, connection=conn)
    assert len(df) == 1200 and df.attrs["truncated"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        small = toolkit.policy_states(sub, rg, top=10, max_items=10, connection=conn)
    assert len(small) == 10 and not small.attrs["truncated"]


@pytest.mark.parametrize("kw, parameter, rule", [
    ({"top": -1}, "top", "at least 0"),
    ({"top": 2.5}, "top", "integer"),
    ({"resource": "all"}, "resource", "latest, default"),
    ({"start": "2026-11-10", "end": "2026-11-01"}, "start", "before end"),
    ({"start": "2026-11-10", "end": "2026-11-10"}, "start", "before end"),
    ({"start": "yesterday-ish"}, "start", "ISO 8601"),
    ({"end": 12}, "end", "ISO 8601"),
    ({"filter": ""}, "filter", "non-empty"),
    ({"apply": 3}, "apply", "non-empty"),
    ({"select": []}, "select", "at least one"),
    ({"select": ["resourceId", ""]}, "select[1]", "non-empty"),
    ({"orderby": 5}, "orderby", "string or a list"),
    ({"expand": "everything"}, "expand", "components, PolicyEvaluationDetails"),
    ({"max_items": -3}, "max_items", "at least 0"),
    ({"api_version": ""}, "api_version", "required"),
])
def test_bad_arguments_are_refused_before_any_request(conn, sandbox, scope, kw, parameter,
                                                      rule) -> None:
    sub, rg, _, _ = scope
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        toolkit.policy_states(sub, rg, connection=conn, **kw)
    assert info.value.parameter == parameter and rule in info.value.rule
    assert log == []


def test_bad_identifiers_are_refused_before_any_request(conn, sandbox) -> None:
    with sandbox.recording() as log:
        with pytest.raises(ValidationError) as info:
            toolkit.policy_states("not-a-uuid", "rg", connection=conn)
        assert info.value.parameter == "subscription_id"
        with pytest.raises(ValidationError) as info:
            toolkit.policy_states("00000000-0000-4000-8000-000000000000", "bad/name",
                                  connection=conn)
        assert info.value.parameter == "resource_group"
    assert log == []


# ------------------------------------------------------------------------------ scopes
def test_every_kind_of_scope_in_either_vocabulary_is_asked_of_the_service(conn, sandbox, world,
                                                                          window) -> None:
    sub = next(s for s in world.subscriptions if s.name == "retail-prod")
    start, end = window
    group = toolkit.policy_states(sub.id, "rg-data-weu", resource="default", start=start,
                                  end=end, connection=conn)
    first = group.iloc[0]
    auth = f"/subscriptions/{sub.id}/providers/Microsoft.Authorization"
    scopes = {
        "/providers/Microsoft.Management/managementGroups/platform": None,
        f"/subscriptions/{sub.id}": None,
        f"/subscriptions/{sub.id}/resourceGroups/rg-data-weu": None,
        str(first["resourceId"]).replace("/providers/Vendor.", "/providers/Microsoft."):
            ("resourceId", str(first["resourceId"])),
        f"{auth}/policyAssignments/sec-baseline-prod":
            ("policyAssignmentName", "sec-baseline-prod"),
        f"/subscriptions/{sub.id}/resourceGroups/rg-data-weu/providers/Vendor.Authorization/"
        "policyAssignments/sql-auditing-data": ("policyAssignmentName", "sql-auditing-data"),
        f"{auth}/policyDefinitions/{first['policyDefinitionName']}":
            ("policyDefinitionName", str(first["policyDefinitionName"])),
        f"{auth}/policySetDefinitions/{first['policySetDefinitionName']}":
            ("policySetDefinitionName", str(first["policySetDefinitionName"])),
    }
    for scope, narrowed in scopes.items():
        with sandbox.recording() as log:
            df = toolkit.policy_states(scope=scope, resource="default", start=start, end=end,
                                       connection=conn)
        asked = scope.replace("/providers/Microsoft.", "/providers/Vendor.")
        assert log and all(r.status == 200 for r in log)
        assert all(r.path == f"{asked}/providers/Vendor.PolicyInsights/policyStates/default/"
                              "queryResults" for r in log), scope
        assert len(df) > 0
        if narrowed is not None:
            column, value = narrowed
            assert (df[column].astype(str) == value).all(), scope


@pytest.mark.parametrize(("kwargs", "parameter", "rule"), [
    ({"scope": "/subscriptions/nope"}, "scope", "ARM scope"),
    ({"scope": "/providers/Microsoft.Management/managementGroups/"}, "scope", "ARM scope"),
    ({"scope": "/subscriptions/00000000-0000-4000-8000-000000000000/resourceGroups/bad name"},
     "scope", "ARM scope"),
    ({"subscription_id": "00000000-0000-4000-8000-000000000000",
      "scope": "/subscriptions/00000000-0000-4000-8000-000000000000"}, "scope", "not with"),
    ({}, "subscription_id", "scope="),
    ({"subscription_id": "00000000-0000-4000-8000-000000000000", "expand": "components"},
     "expand", "resource scope"),
    ({"scope": "/providers/Vendor.Management/managementGroups/retail",
      "expand": "PolicyEvaluationDetails"}, "expand", "resource scope"),
    ({"scope": "/subscriptions/00000000-0000-4000-8000-000000000000/resourceGroups/rg/providers/"
               "Vendor.KeyVault/vaults/kv", "expand": "components($top=3)"}, "expand", "$filter"),
    ({"subscription_id": "00000000-0000-4000-8000-000000000000", "engine": "spark"}, "engine",
     "dask"),
])
def test_scope_rules_are_refused_before_any_request(conn, sandbox, kwargs, parameter,
                                                    rule) -> None:
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        toolkit.policy_states(**kwargs, connection=conn)
    assert info.value.parameter == parameter
    assert rule in str(info.value)
    assert log == []


# ------------------------------------------------------------------------------ expand
def _resource_of(conn, sub, rg, kind: str, state: str = "NonCompliant") -> str:
    df = toolkit.policy_states(sub, rg, filter=f"complianceState eq '{state}'", connection=conn)
    ids = df.loc[df["resourceType"].astype(str).str.endswith(kind), "resourceId"]
    return str(ids.value_counts().index[0])


def test_expand_evaluation_details_and_the_exploding_helper(conn, scope) -> None:
    sub, rg, _, _ = scope
    rid = _resource_of(conn, sub, rg, "storageAccounts")
    df = toolkit.policy_states(scope=rid, expand="PolicyEvaluationDetails",
                               filter="complianceState eq 'NonCompliant'", connection=conn)
    assert len(df) >= 1 and (df["resourceId"].astype(str) == rid).all()
    assert df["policyEvaluationDetails"].map(lambda v: isinstance(v, dict)).all()
    ex = toolkit.evaluated_expressions(df)
    per_record = df["policyEvaluationDetails"].map(lambda v: len(v["evaluatedExpressions"]))
    assert len(ex) == per_record.sum()
    assert ex["record"].between(0, len(df) - 1).all()
    assert set(ex["result"].dropna()) <= {"True", "False"}
    first = ex[ex["record"] == 0]
    assert (first["resourceId"].astype(str) == str(df["resourceId"].iloc[0])).all()
    assert isinstance(ex["operator"].dtype, pd.CategoricalDtype)


def test_expand_components_for_key_vaults(conn, scope) -> None:
    sub, rg, _, _ = scope
    rid = _resource_of(conn, sub, rg, "vaults", "Compliant")
    df = toolkit.policy_states(scope=rid, expand=["components"], connection=conn)
    comps = df["components"].dropna()
    assert len(comps) == len(df) > 0
    some = [c for v in comps for c in v]
    assert some and {"id", "type", "name", "timestamp", "complianceState"} <= set(some[0])


# ------------------------------------------------------------------------------ the real examples
def test_real_example_records_parse_into_the_frame() -> None:
    body = example(FOLDER, "PolicyStates_QueryResourceGroupScope.json")["responses"]["200"][
        "body"]
    builder = InterningBuilder(POLICY_STATES.columns, groups=(RESOURCE_FIELDS, POLICY_FIELDS))
    builder.add(body["value"])
    df = builder.build()
    assert len(df) == body["@odata.count"] == 2
    assert list(df.columns) == POLICY_STATES.names
    for i, record in enumerate(body["value"]):
        for name, value in record.items():
            if name.startswith("@odata"):
                continue
            got = df[name].iloc[i]
            if name == "timestamp":
                assert got == pd.Timestamp(value)
            elif value is None:
                assert got is None or pd.isna(got), name
            elif isinstance(value, list):
                assert got == value, name
            else:
                assert got == value, name
    assert str(df["timestamp"].dtype) == "datetime64[ns, UTC]"
    assert df["isCompliant"].tolist() == [False, True]
    assert df["complianceState"].tolist() == ["NonCompliant", "Compliant"]
    assert df["components"].isna().all() and df["policyEvaluationDetails"].isna().all()


# ------------------------------------------------------------------------------ helpers, story
def _states_of(rec, rows) -> pd.Series:
    return pd.Series(np.asarray(STATES)[rec.state[rows]])


# ------------------------------------------------------------------------------ plots, widget


def test_interpreter_settings_are_never_changed(conn, scope, monkeypatch) -> None:
    import gc
    import sys

    sub, rg, _, _ = scope
    changes: list[str] = []
    monkeypatch.setattr(sys, "setswitchinterval", lambda *a: changes.append("switch"))
    monkeypatch.setattr(gc, "set_threshold", lambda *a: changes.append("gc"))
    monkeypatch.setattr(gc, "disable", lambda: changes.append("gc off"))
    interval, threshold = sys.getswitchinterval(), gc.get_threshold()
    end = pd.Timestamp("2026-11-20T09:00:00Z")
    toolkit.policy_states(sub, rg, top=5, connection=conn)
    toolkit.policy_states(sub, rg, resource="default", start=end - pd.Timedelta(days=30),
                          end=end, connection=conn)
    with pytest.raises(toolkit.ApiError):
        toolkit.policy_states(sub, rg, filter="nosuch eq 1", connection=conn)
    assert changes == []
    assert sys.getswitchinterval() == interval and gc.get_threshold() == threshold


def test_a_failing_page_leaves_the_rows_read_and_the_next_link(sandbox) -> None:
    conn = toolkit.connect(sandbox=sandbox, progress=False, max_retries=1)
    conn.sleep = lambda s: None
    sub = sandbox.catalog().query("kind == 'subscription' and name == 'retail-prod'")
    end = pd.Timestamp("2026-11-20T09:00:00Z")
    sandbox.inject("503", path="policyStates.*skiptoken")
    with pytest.raises(toolkit.ServiceError) as info:
        toolkit.policy_states(sub.subscription_id.iloc[0], "rg-web-weu", resource="default",
                              start=end - pd.Timedelta(days=3), end=end, connection=conn)
    err = info.value
    assert len(err.partial) == 1000 and "$skiptoken" in err.next_link
    assert "err.partial" in str(err) and err.next_link in str(err)


# ------------------------------------------------------------------------------ partitions
# policy_states read as concurrent time slices gives the frame of one chain: same rows, same
# order, same dtypes, with and without filter, orderby, select, for latest and default, under
# injected throttling and server errors (nothing lost, nothing twice).
END = pd.Timestamp("2026-11-20T09:00:00Z")


def _slices(log) -> set[str]:
    """The distinct time-slice filters of the chains in a request log."""
    out = set()
    for r in log:
        query = unquote(r.query)
        if ("timestamp ge" in query or "timestamp lt" in query) and "aggregate(" not in query:
            out.add(query.split("$filter=")[1].split("&")[0])
    return out


def _pair(sandbox, group, **kw):
    sub, rg = group
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    conn.sleep = lambda s: None
    try:
        one = toolkit.policy_states(sub, rg, partitions=1, connection=conn, **kw)
        with sandbox.recording() as log:
            many = toolkit.policy_states(sub, rg, partitions=6, connection=conn, **kw)
    finally:
        conn.close()
    return one, many, log


PARTITION_CASES = [
    pytest.param({"resource": "default", "start": END - pd.Timedelta(days=10)}, id="default"),
    pytest.param({"resource": "default", "start": END - pd.Timedelta(days=40),
                  "filter": "complianceState eq 'NonCompliant' or resourceType eq "
                            "'/Vendor.KeyVault/vaults'"}, id="default-filter"),
    pytest.param({"resource": "default", "start": END - pd.Timedelta(days=10),
                  "orderby": "timestamp asc"}, id="default-orderby-asc"),
    pytest.param({"resource": "default", "start": END - pd.Timedelta(days=10),
                  "orderby": ["timestamp desc", "resourceId asc"],
                  "select": ["timestamp", "resourceId", "complianceState",
                             "policyDefinitionGroupNames", "isCompliant"]},
                 id="default-orderby-select"),
    pytest.param({"resource": "default", "start": END - pd.Timedelta(days=10),
                  "filter": "timestamp ge 2026-11-13T00:00:00Z"}, id="default-filter-time"),
]


@pytest.mark.parametrize("kw", PARTITION_CASES)
def test_slices_give_the_frame_of_one_chain(sandbox, group, kw, monkeypatch) -> None:
    monkeypatch.setattr(slices, "PARTITION_MIN_PAGES", 1)  # the latest sets are a few pages
    one, many, log = _pair(sandbox, group, end=END, **kw)
    assert len(_slices(log)) >= 2, "read as one chain"
    assert len(one) > 2500
    pd.testing.assert_frame_equal(many, one, check_exact=EXACT)
    assert not many.attrs["truncated"]
    assert len(many.attrs["request_ids"]) == len(set(many.attrs["request_ids"]))


def test_an_order_slices_cannot_keep_reads_one_chain(sandbox, group) -> None:
    one, many, log = _pair(sandbox, group, resource="default", orderby="resourceId asc",
                           start=END - pd.Timedelta(days=10), end=END)
    assert not _slices(log)
    pd.testing.assert_frame_equal(many, one, check_exact=EXACT)


@pytest.mark.parametrize("kw", [
    pytest.param({"top": 5_000}, id="top"),
    pytest.param({"max_items": 5_000}, id="max_items"),
    pytest.param({"end": None}, id="open-window"),
])
def test_slices_are_off_where_they_cannot_help(sandbox, group, kw) -> None:
    args = {"resource": "default", "start": END - pd.Timedelta(days=10), "end": END, **kw}
    with pytest.warns(toolkit.TruncatedResultWarning) if "max_items" in kw else nullcontext():
        _, _, log = _pair(sandbox, group, **args)
    assert not _slices(log)
    assert not any("aggregate(" in unquote(r.query) for r in log)


@pytest.mark.parametrize("kinds", [("429", "503"), ("malformed", "truncate", "drop")])
def test_slices_under_faults_lose_and_repeat_nothing(sandbox, group, monkeypatch,
                                                     kinds) -> None:
    monkeypatch.setattr(slices, "PARTITION_MIN_PAGES", 1)
    kw = {"resource": "default", "start": END - pd.Timedelta(days=10), "end": END}
    sandbox.clear_faults()
    sub, rg = group
    # more retries than faults injected: whichever requests they hit, none runs out
    conn = toolkit.connect(sandbox=sandbox, progress=False, max_retries=30)
    conn.sleep = lambda s: None
    try:
        one = toolkit.policy_states(sub, rg, partitions=1, connection=conn, **kw)
        before = dict(sandbox.faults.injected)
        for kind in kinds:
            sandbox.inject(kind, path="policyStates", rate=0.2, count=8, retry_after=0)
        with sandbox.recording() as log:
            many = toolkit.policy_states(sub, rg, partitions=6, connection=conn, **kw)
        injected = {k: n - before.get(k, 0) for k, n in sandbox.faults.injected.items()
                    if n > before.get(k, 0)}
    finally:
        sandbox.clear_faults()
        conn.close()
    assert set(injected) == set(kinds), injected
    assert len(_slices(log)) >= 2
    pd.testing.assert_frame_equal(many, one, check_exact=EXACT)


def test_slices_are_bounded_by_the_setting(sandbox, group, monkeypatch) -> None:
    monkeypatch.setattr(slices, "PARTITION_MIN_PAGES", 1)
    sub, rg = group
    conn = toolkit.connect(sandbox=sandbox, progress=False, max_partitions=3)
    try:
        with sandbox.recording() as log:
            toolkit.policy_states(sub, rg, resource="default", start=END - pd.Timedelta(days=10),
                                  end=END, connection=conn)
    finally:
        conn.close()
    assert 2 <= len(_slices(log)) <= 3
    with pytest.raises(toolkit.ValidationError, match="partitions"):
        toolkit.policy_states(sub, rg, partitions=0, connection=conn)


def test_latest_in_slices_gives_the_frame_of_one_chain(monkeypatch) -> None:
    # the newest record per (resource, policy) pair: a few pages in a world six times larger
    monkeypatch.setenv(SCALE_ENV, "6")
    monkeypatch.setattr(slices, "PARTITION_MIN_PAGES", 1)
    with Sandbox(seed=7) as sb:  # its world reads the scale
        pw = sb.world.section("policy")
        sub_id, rg = next(iter(pw.by_group))
        sub = sb.world.subscription(sub_id)
        name = next(g.name for g in sub.resource_groups if g.name.lower() == rg)
        for kw in ({}, {"filter": "complianceState ne 'Compliant'"},
                   {"orderby": "timestamp asc", "select": "timestamp,resourceId"}):
            one, many, log = _pair(sb, (sub.id, name), resource="latest",
                                   start=END - pd.Timedelta(days=60), end=END, **kw)
            assert len(_slices(log)) >= 2 and len(one) > 2000, kw
            pd.testing.assert_frame_equal(many, one, check_exact=EXACT)


def _read_at_once(sandbox, conn, group, days: tuple[int, ...], partitions: int
                  ) -> tuple[list[pd.DataFrame], list[Any], list[Any]]:
    """Partitioned ``default`` reads of the group over the last ``days`` each, all at once on
    ``conn`` (or one connection each, for a list): their frames, what they raised, and the
    sandbox's log of their requests."""
    import threading

    sub_id, name = group
    conns = conn if isinstance(conn, list) else [conn] * len(days)
    frames: list[pd.DataFrame] = []
    errors: list[Any] = []

    def read(d: int, c: Any) -> None:
        try:
            frames.append(toolkit.policy_states(sub_id, name, resource="default",
                                                start=END - pd.Timedelta(days=d), end=END,
                                                partitions=partitions, connection=c))
        except toolkit.ToolkitError as err:
            errors.append(err)

    with sandbox.recording() as log:
        threads = [threading.Thread(target=read, args=(d, c))
                   for d, c in zip(days, conns, strict=True)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    return frames, errors, log


@pytest.mark.xdist_group("real-time")  # measures real time: see tests/conftest.py
def test_concurrent_reads_on_one_connection_share_the_resource_managers_bucket(
        sandbox, group) -> None:
    # two partitioned reads at once on one connection: every request of both (first pages,
    # counts, every chain's pages: POST queries, which the service counts as writes) takes a
    # token from the connection's one bucket, so together they wait as long as their requests
    # need at its rate
    import time

    sub_id = group[0]
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    waits: list[float] = []
    conn.sleep = waits.append
    rate, burst = 4.0, 3
    bucket = conn.pipeline("arm").limiter(f"{sandbox.url}/subscriptions/{sub_id}/x", "POST")
    assert bucket is not None
    bucket.configure(rate, burst)
    taken: list[int] = []
    take = bucket.started

    def counted() -> int:
        taken.append(1)
        return take()

    bucket.started = counted  # type: ignore[method-assign]
    began = time.monotonic()
    try:
        frames, errors, log = _read_at_once(sandbox, conn, group, (20, 30), partitions=4)
    finally:
        conn.close()
    assert errors == []
    elapsed = time.monotonic() - began  # the bucket refills with real time as well
    sent = [r for r in log if "policyStates" in r.path]
    assert len(frames) == 2 and all(len(f) for f in frames)
    assert len(sent) > 2 * burst
    assert len(taken) == len(sent)  # every request of both reads drew from the one bucket
    assert sum(waits) + elapsed >= (len(sent) - burst) / rate - 1e-6


def _two_reads_after_another_client(group, monkeypatch, refill: float = 10.0
                                    ) -> tuple[list[int], list[Any]]:
    """Another client of the caller leaves three requests in the service's bucket of writes,
    where it counts POST queries (refilled ``refill`` a second: 10 as documented); then two
    partitioned reads at once on a fresh connection, whose bucket is left as it starts (the
    documented 200), without retries: the statuses the service answered them, and what the
    reads raised."""
    from toolkit.sandbox.arm.common import limits
    from toolkit.sandbox.server import Sandbox

    monkeypatch.setattr(slices, "PARTITION_MIN_PAGES", 1)
    sub_id = group[0]
    with Sandbox(seed=7, arm_limits=True) as sb:
        limits(sb)["writes"].configure(rate=refill, burst=40)
        other = toolkit.connect(sandbox=sb, progress=False)
        try:
            for _ in range(37):
                other.pipeline("arm").send(Request(
                    "POST", f"/subscriptions/{sub_id}/providers/{sb.namespace}.PolicyInsights/"
                            "policyStates/latest/queryResults",
                    params={"api-version": "2024-10-01", "$top": 1}))
        finally:
            other.close()
        conn = toolkit.connect(sandbox=sb, progress=False, max_retries=0)
        try:
            _, errors, log = _read_at_once(sb, conn, group, (3, 4), partitions=3)
        finally:
            conn.close()
    return [r.status for r in log], errors


@pytest.mark.xdist_group("real-time")  # measures real time: see tests/conftest.py
def test_concurrent_reads_follow_the_services_count_of_what_is_left(group, monkeypatch) -> None:
    # the first answers say how little is left, so the reads wait for the refill and are never
    # refused, though they need several times what was left
    statuses, errors = _two_reads_after_another_client(group, monkeypatch)
    assert errors == [] and len(statuses) > 3 * 5 and 429 not in statuses
    # the same reads with the count ignored spend the connection's own bucket, and are refused
    # (here the service refills slowly, so that it shows however fast this machine runs them)
    from toolkit._core import ratelimits

    monkeypatch.setattr(ratelimits, "header_count", lambda value: None)
    statuses, errors = _two_reads_after_another_client(group, monkeypatch, refill=1.0)
    assert 429 in statuses and errors


#: The days each caller of ``_callers_at_once`` reads: a page or so per slice, about thirty
#: requests in all, which the small bucket of the service (room for 4, 10 a second) keeps to
#: about three seconds; their six slices at once overdraw it whatever the load on the machine.
SHARED_DAYS = 3


def _callers_at_once(group, monkeypatch) -> tuple[list[pd.DataFrame], list[Any], list[int]]:
    """Three connections of one caller (the workers of a cluster) each read the group in six
    time slices at once, from a service whose bucket for them is small (room for 4, 10 a
    second), with the default retries: their frames, what they raised, and the statuses the
    service answered."""
    from toolkit.sandbox.arm.common import limits
    from toolkit.sandbox.server import Sandbox

    monkeypatch.setattr(slices, "PARTITION_MIN_PAGES", 1)
    with Sandbox(seed=7, arm_limits=True) as sb:
        limits(sb)["writes"].configure(rate=10.0, burst=4)
        conns = [toolkit.connect(sandbox=sb, progress=False) for _ in range(3)]
        try:
            frames, errors, log = _read_at_once(sb, conns, group, (SHARED_DAYS,) * 3,
                                                partitions=6)
        finally:
            for c in conns:
                c.close()
    return frames, errors, [r.status for r in log]


@pytest.mark.xdist_group("real-time")  # measures real time: see tests/conftest.py
def test_clients_sharing_a_budget_pace_themselves_after_a_refusal(sandbox, group,
                                                                  monkeypatch) -> None:
    # each connection keeps its own bucket, so together they overdraw the caller's budget and are
    # refused now and then: every 429 empties the bucket of the connection it answered until its
    # Retry-After and halves its rate, and every read still ends whole (how many fewer refusals
    # this gives than sending again at once: benchmarks/shared_budget.py)
    from toolkit._core.concurrency import RateLimiter

    refusals: list[tuple[float, float, float, float]] = []  # wait, rate before and after, floor
    throttled = RateLimiter.throttled

    def noted(self: RateLimiter, wait: float | None) -> None:
        before = self.rate
        throttled(self, wait)
        refusals.append((wait or 0.0, before, self.rate, self.base_rate / 16))

    monkeypatch.setattr(RateLimiter, "throttled", noted)
    frames, errors, statuses = _callers_at_once(group, monkeypatch)
    assert errors == [] and statuses.count(200) > 3 * 6
    assert 429 in statuses  # the scenario does overdraw the budget
    assert len(refusals) == statuses.count(429)  # every refusal reached its connection's bucket
    for wait, before, after, floor in refusals:
        assert wait > 0 and after == max(floor, before / 2)
    # nothing lost, nothing read twice: each frame is the read of the same days alone
    sub_id, name = group
    conn = toolkit.connect(sandbox=sandbox, progress=False)
    try:
        alone = toolkit.policy_states(sub_id, name, resource="default",
                                      start=END - pd.Timedelta(days=SHARED_DAYS), end=END,
                                      connection=conn)
    finally:
        conn.close()
    key = ["resourceId", "policyAssignmentId", "policyDefinitionReferenceId", "timestamp"]
    want = alone[key].astype(str).sort_values(key).reset_index(drop=True)
    assert len(frames) == 3 and len(want)
    for frame in frames:
        got = frame[key].astype(str).sort_values(key).reset_index(drop=True)
        pd.testing.assert_frame_equal(got, want)


@pytest.mark.xdist_group("real-time")  # measures real time: see tests/conftest.py
def test_concurrent_reads_stay_inside_the_services_bucket(group, monkeypatch) -> None:
    # the sandbox throttles as the service does (its buckets here made small so the test is
    # short); two partitioned reads at once on one connection, whose shared bucket is a little
    # slower than the service's, are never answered 429
    from toolkit.sandbox.arm.common import limits
    from toolkit.sandbox.server import Sandbox

    monkeypatch.setattr(slices, "PARTITION_MIN_PAGES", 1)
    with Sandbox(seed=7, arm_limits=True) as sb:
        limits(sb)["writes"].configure(rate=10.0, burst=6)
        sub_id = group[0]  # the same world as the session's sandbox (same seed)
        conn = toolkit.connect(sandbox=sb, progress=False)
        bucket = conn.pipeline("arm").limiter(f"{sb.url}/subscriptions/{sub_id}/x", "POST")
        assert bucket is not None
        bucket.configure(8.0, 3)
        try:
            frames, errors, log = _read_at_once(sb, conn, group, (3, 4), partitions=3)
        finally:
            conn.close()
    assert errors == [] and len(frames) == 2 and all(len(f) for f in frames)
    statuses = [r.status for r in log]
    assert len(statuses) > 6 and 429 not in statuses


# ------------------------------------------------------------------ $apply on the common paging
def test_an_apply_read_pages_like_every_read_with_partial_results_on_a_failure() -> None:
    """An ``$apply`` result is read as every collection is: a page that still fails after its
    retries raises with the aggregates read before it (``err.partial``) and the link where the
    rest starts; a progress bar counts its pages."""
    from tests.replay import Answer, replay_server

    sub = "00000000-1111-2222-3333-444444444444"
    expression = "groupby((complianceState), aggregate($count as records))"
    with replay_server() as rp:
        link = f"{rp.url}/subscriptions/{sub}/providers/Vendor.PolicyInsights/policyStates/" \
               "latest/queryResults?api-version=2024-10-01&$skiptoken=page2"
        rp.add("POST", r"skiptoken=page2", Answer(500, {"error": {"code": "Boom",
                                                                  "message": "down"}}))
        rp.add("POST", r"/policyStates/latest/queryResults", Answer(200, {
            "value": [{"complianceState": "NonCompliant", "records": 7}],
            "@odata.nextLink": link}))
        conn = toolkit.connect(base_url=rp.url, token="t", progress=False, max_retries=1)
        conn.sleep = lambda seconds: None
        with pytest.raises(toolkit.ServiceError) as err:
            toolkit.policy_states(sub, apply=expression, connection=conn)
        conn.close()
    partial = err.value.partial
    assert partial is not None and list(partial.columns) == ["complianceState", "records"]
    assert partial["records"].tolist() == [7] and str(partial["records"].dtype) == "Int64"
    assert err.value.next_link == link
    assert "1 records were read before the failure" in str(err.value)


def test_an_apply_read_stops_at_max_items_with_the_warning_of_every_read(conn, scope) -> None:
    expression = "groupby((resourceId), aggregate($count as n))"
    whole = toolkit.policy_states(*scope[:2], apply=expression, connection=conn)
    assert len(whole) > 2 and whole.attrs["truncated"] is False
    with pytest.warns(toolkit.TruncatedResultWarning, match="max_items=2"):
        two = toolkit.policy_states(*scope[:2], apply=expression, max_items=2, connection=conn)
    assert two.attrs["truncated"] is True
    assert two.astype(object).values.tolist() == whole.head(2).astype(object).values.tolist()
