"""toolkit.resource_graph against the sandbox: every page read, typed from the service's column
metadata, a result the service cannot page never handed back as whole, subscriptions in batches,
management-group scope, the user quota paced on and shown, bad input refused before any
request."""

from __future__ import annotations

import math
import re
import time
import warnings
from typing import Any

import pandas as pd
import pytest

import toolkit
from toolkit.arm import resourcegraph
from toolkit.sandbox.arm.resourcegraph.quota import quota_of
from toolkit.sandbox.server import Sandbox

ROUTE = "resource_graph"


def _existing(sandbox: Any, subs: set[str] | None = None) -> list[Any]:
    """The resources of the sandbox world that exist now (the world's own list)."""
    pw = sandbox.world.section("policy")
    return [r for r in pw.resources if not r.deleted
            and (subs is None or r.subscription_id.lower() in subs)]


def _queries(log: list[Any]) -> int:
    return sum(1 for r in log if r.route == ROUTE)


def test_every_page_is_read(conn: Any, sandbox: Any) -> None:
    expected = {r.fields["resourceId"] for r in _existing(sandbox)}
    with sandbox.recording() as log:
        df = toolkit.resource_graph("resources | project id, name, type, location",
                                    page_size=250, connection=conn)
    assert set(df["id"]) == expected and len(df) == len(expected)
    assert _queries(log) == math.ceil(len(expected) / 250)
    assert df.attrs["total_records"] == len(expected)
    assert df.attrs["complete"] is True and df.attrs["truncated"] is False
    assert df.attrs["operation"] == "resource_graph" and df.attrs["sandbox"] is True
    assert len(df.attrs["request_ids"]) == _queries(log)


def test_columns_are_typed_from_the_services_metadata(conn: Any) -> None:
    df = toolkit.resource_graph(
        "resources | where type =~ 'vendor.storage/storageaccounts' "
        "| extend https = tobool(properties.supportsHttpsTrafficOnly), size = todouble(1.5), "
        "n = toint(2), seen = todatetime('2026-11-19T08:00:00Z') "
        "| project id, name, https, size, n, seen, tags, properties | take 5", connection=conn)
    assert str(df["name"].dtype) == "string"
    assert str(df["https"].dtype) == "boolean"
    assert df["size"].dtype == "float64"
    assert str(df["n"].dtype) == "Int64"
    assert str(df["seen"].dtype) == "datetime64[ns, UTC]"
    assert (df["seen"] == pd.Timestamp("2026-11-19T08:00:00Z")).all()
    assert df["tags"].dtype == object and isinstance(df["tags"].iloc[0], dict)
    assert isinstance(df["properties"].iloc[0]["supportsHttpsTrafficOnly"], bool)
    assert [c["type"] for c in df.attrs["columns"]] == [
        "string", "string", "boolean", "number", "integer", "datetime", "object", "object"]


def test_an_aggregate_is_complete_without_id(conn: Any, sandbox: Any) -> None:
    df = toolkit.resource_graph("resources | summarize count() by type", connection=conn)
    assert str(df["count_"].dtype) == "Int64"
    assert int(df["count_"].sum()) == len(_existing(sandbox))
    assert df.attrs["complete"] is True


def test_a_result_the_service_cannot_page_raises_with_what_to_change(conn: Any,
                                                                      sandbox: Any) -> None:
    total = len(_existing(sandbox))
    assert total > 1000  # more than one page: the world is large enough for the rule to bite
    with pytest.raises(toolkit.IncompleteResultError) as info:
        toolkit.resource_graph("resources | project name, type", connection=conn)
    text = str(info.value)
    assert f"1000 of {total}" in text and "`id`" in text and "project id" in text
    assert len(info.value.partial) == 1000
    assert info.value.partial.attrs["complete"] is False


def test_a_result_the_service_cannot_page_warns_when_asked(conn: Any, sandbox: Any) -> None:
    with pytest.warns(toolkit.TruncatedResultWarning, match="`id`"):
        df = toolkit.resource_graph("resources | project name, type", incomplete="warn",
                                    connection=conn)
    assert len(df) == 1000
    assert df.attrs["complete"] is False and df.attrs["truncated"] is True
    assert df.attrs["total_records"] == len(_existing(sandbox))


def test_max_items_stops_early_and_says_so(conn: Any, sandbox: Any) -> None:
    with sandbox.recording() as log, \
            pytest.warns(toolkit.TruncatedResultWarning, match="max_items=120"):
        df = toolkit.resource_graph("resources | project id, name", page_size=50,
                                    max_items=120, connection=conn)
    assert len(df) == 120 and _queries(log) == 3
    assert df.attrs["truncated"] is True


def test_subscriptions_go_in_batches(conn: Any, sandbox: Any,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    subs = [s.id for s in sandbox.world.subscriptions]
    monkeypatch.setattr(resourcegraph, "RESOURCE_GRAPH_SUBSCRIPTION_BATCH", 2)
    with sandbox.recording() as log:
        df = toolkit.resource_graph("resources | project id, subscriptionId", subs,
                                    connection=conn)
    expected = {r.fields["resourceId"] for r in _existing(sandbox)}
    assert set(df["id"]) == expected and len(df) == len(expected)
    assert df.attrs["batches"] == math.ceil(len(subs) / 2)
    assert _queries(log) >= df.attrs["batches"]


def test_a_query_that_cannot_be_split_is_refused_before_any_request(
        conn: Any, sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    subs = [s.id for s in sandbox.world.subscriptions]
    monkeypatch.setattr(resourcegraph, "RESOURCE_GRAPH_SUBSCRIPTION_BATCH", 2)
    for query in ("resources | summarize count() by type", "resources | project id | take 5",
                  "resources | order by name asc | project id"):
        with sandbox.recording() as log, pytest.raises(toolkit.ValidationError) as info:
            toolkit.resource_graph(query, subs, connection=conn)
        assert log == [] and info.value.parameter == "query"
        assert "management_groups" in str(info.value)
    # the operator's name inside a string is not an operator
    df = toolkit.resource_graph("resources | where name != '| summarize' | project id", subs,
                                connection=conn)
    assert len(df) == len(_existing(sandbox))


def test_one_subscription_sees_its_own_rows(conn: Any, sandbox: Any) -> None:
    sub = sandbox.world.subscriptions[1].id
    df = toolkit.resource_graph("resources | project id, subscriptionId", sub, connection=conn)
    assert set(df["subscriptionId"]) == {sub}
    assert len(df) == len(_existing(sandbox, {sub.lower()}))
    assert df.attrs["scope"] == {"subscriptions": 1}


def test_all_subscriptions_are_listed_then_queried(conn: Any, sandbox: Any) -> None:
    with sandbox.recording() as log:
        df = toolkit.resource_graph("resources | project id", "all", connection=conn)
    assert len(df) == len(_existing(sandbox))
    assert any(r.route == "subscriptions" for r in log)


def test_a_management_group_sees_the_subscriptions_below_it(conn: Any, sandbox: Any) -> None:
    world = sandbox.world
    below = {s.id.lower() for s in world.subscriptions if "retail" in world.ancestors(s.name)}
    df = toolkit.resource_graph("resources | project id, subscriptionId",
                                management_groups="retail", connection=conn)
    assert {s.lower() for s in df["subscriptionId"]} == below
    assert len(df) == len(_existing(sandbox, below))
    groups = toolkit.resource_graph(
        "resourcecontainers | where type =~ 'vendor.management/managementgroups' | project name",
        management_groups="retail", connection=conn)
    assert set(groups["name"]) == {"retail", "stores"}


def test_policy_states_are_in_policyresources(conn: Any, sandbox: Any) -> None:
    df = toolkit.resource_graph(
        "policyresources | where type =~ 'vendor.policyinsights/policystates' "
        "| summarize n = count() by state = tostring(properties.complianceState)",
        connection=conn)
    assert set(df["state"]) <= {"Compliant", "NonCompliant", "Conflict", "Exempt", "Unknown"}
    assert int(df["n"].sum()) > 1000


def test_expand_flattens_dynamic_columns(conn: Any) -> None:
    query = ("resources | where type =~ 'vendor.compute/virtualmachines' "
             "| project id, properties, tags | take 20")
    kept = toolkit.resource_graph(query, connection=conn)
    flat = toolkit.resource_graph(query, expand=["properties"], connection=conn)
    assert "properties" not in flat.columns and "tags" in flat.columns
    assert "properties.storageProfile.osDisk.osType" in flat.columns
    assert str(flat["properties.storageProfile.osDisk.osType"].dtype) == "string"
    assert flat["properties.storageProfile.osDisk.osType"].tolist() == [
        p["storageProfile"]["osDisk"]["osType"] for p in kept["properties"]]
    # lists stay whole
    assert isinstance(flat["properties.networkProfile.networkInterfaces"].iloc[0], list)
    every = toolkit.resource_graph(query, expand=True, connection=conn)
    assert "tags.env" in every.columns and "tags" not in every.columns


def test_a_query_the_service_refuses_says_why(conn: Any) -> None:
    with pytest.raises(toolkit.ApiError) as info:
        toolkit.resource_graph("resources | wherex name", connection=conn)
    assert info.value.status == 400
    assert "ParserFailure" in str(info.value)
    with pytest.raises(toolkit.ApiError, match="InvalidQuery"):
        toolkit.resource_graph("resources | project nosuchcolumn", connection=conn)


def test_an_empty_result_has_the_querys_columns(conn: Any) -> None:
    df = toolkit.resource_graph("resources | where name == 'nothing-has-this-name' "
                                "| project id, name, n = toint(1)", connection=conn)
    assert df.empty and list(df.columns) == ["id", "name", "n"]
    assert str(df["n"].dtype) == "Int64"


class Notes:
    def __init__(self) -> None:
        self.notes: list[str] = []
        self.pages = 0

    def update(self, n: int = 1) -> None:
        self.pages += n

    def note(self, text: str) -> None:
        self.notes.append(text)

    def close(self) -> None:
        pass


def test_progress_shows_the_quota(conn: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    bar = Notes()
    monkeypatch.setattr(resourcegraph, "progress_bar", lambda *a, **k: bar)
    toolkit.resource_graph("resources | project id", page_size=500, connection=conn)
    assert bar.pages == len(bar.notes) >= 4
    assert all(re.fullmatch(r"quota \d+/15(, resets in \d+ s)?", n) for n in bar.notes)


@pytest.mark.parametrize(("kwargs", "parameter"), [
    ({"query": ""}, "query"),
    ({"query": "   "}, "query"),
    ({"query": 7}, "query"),
    ({"query": "resources\x00"}, "query"),
    ({"subscriptions": "not-a-uuid"}, "subscriptions"),
    ({"subscriptions": []}, "subscriptions"),
    ({"subscriptions": ["fa45cb68-4748-4b16-94b6-0ce33d13187c", 3]}, "subscriptions[1]"),
    ({"management_groups": "bad name"}, "management_groups"),
    ({"management_groups": ["ok", "x."]}, "management_groups[1]"),
    ({"subscriptions": "all", "management_groups": "retail"}, "management_groups"),
    ({"page_size": 0}, "page_size"),
    ({"page_size": 1001}, "page_size"),
    ({"incomplete": "ignore"}, "incomplete"),
    ({"max_items": -1}, "max_items"),
    ({"expand": 3}, "expand"),
    ({"expand": ["properties", ""]}, "expand[1]"),
    ({"api_version": ""}, "api_version"),
])
def test_bad_input_is_refused_before_any_request(kwargs: dict[str, Any], parameter: str,
                                                 conn: Any, sandbox: Any) -> None:
    args = {"query": "resources | project id", **kwargs}
    with sandbox.recording() as log, pytest.raises(toolkit.ValidationError) as info:
        toolkit.resource_graph(**args, connection=conn)
    assert log == [] and info.value.parameter == parameter


@pytest.mark.xdist_group("real-time")
def test_the_user_quota_is_kept_without_a_refusal() -> None:
    with Sandbox(seed=7, arm_limits=True) as sb:
        quota_of(sb).configure(limit=3, window=1.0)
        conn = toolkit.connect(sandbox=sb, progress=False)
        try:
            with sb.recording() as log:
                started = time.monotonic()
                df = toolkit.resource_graph("resources | project id", page_size=200,
                                            connection=conn)
                took = time.monotonic() - started
        finally:
            conn.close()
    pages = math.ceil(len(df) / 200)
    assert _queries(log) == pages and pages >= 7
    assert [r.status for r in log if r.route == ROUTE] == [200] * pages  # never refused
    # three queries a second: the pages past the first window waited for the next ones
    assert took >= (pages - 1) // 3 * 1.0 - 0.05


@pytest.mark.xdist_group("real-time")
def test_a_refusal_of_the_quota_is_waited_out() -> None:
    with Sandbox(seed=7, arm_limits=True) as sb:
        quota_of(sb).configure(limit=2, window=2.0)
        one = toolkit.connect(sandbox=sb, progress=False)
        two = toolkit.connect(sandbox=sb, progress=False)
        try:
            # another connection of the same user spends the window first
            toolkit.resource_graph("resources | project id | take 1", connection=two)
            toolkit.resource_graph("resources | project id | take 1", connection=two)
            with sb.recording() as log, warnings.catch_warnings():
                warnings.simplefilter("ignore")
                df = toolkit.resource_graph("resources | project id | take 3", connection=one)
        finally:
            one.close()
            two.close()
    assert len(df) == 3
    statuses = [r.status for r in log if r.route == ROUTE]
    assert statuses[-1] == 200 and set(statuses) <= {200, 429}
