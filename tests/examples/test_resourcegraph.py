"""The official examples of Resource Graph queries, as published in the public cloud's words,
replayed over HTTP through toolkit.resource_graph on a ``cloud="public"`` connection: the frames
hold the examples' rows, typed from the table format's column metadata (or from the values, for
the object-array format, which has none), and the paged examples are read page after page."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

import toolkit
from tests.conftest import example
from tests.replay import Answer, replay_server

FOLDER = "22-resource-graph"
ROUTE = r"/providers/Microsoft\.ResourceGraph/resources\?api-version=2024-04-01$"


@pytest.fixture
def replay(waits) -> Any:
    with replay_server() as rp:
        conn = toolkit.connect(base_url=rp.url, cloud="public", token="example-token-0123456789",
                               progress=False)
        conn.sleep = waits
        rp.conn = conn
        yield rp
        conn.close()


def _example(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    ex = example(FOLDER, name)
    return ex["parameters"]["query"], ex["responses"]["200"]["body"]


def _rows(body: dict[str, Any]) -> list[dict[str, Any]]:
    data = body["data"]
    if isinstance(data, list):
        return data
    names = [c["name"] for c in data["columns"]]
    return [dict(zip(names, row, strict=True)) for row in data["rows"]]


@pytest.mark.parametrize("name", ["ResourcesBasicQuery.json", "ResourcesMgBasicQuery.json",
                                  "ResourcesSummarizeQuery.json"])
def test_an_object_array_example_is_the_frame(replay, name: str) -> None:
    request, body = _example(name)
    replay.add("POST", ROUTE, Answer(200, body))
    df = toolkit.resource_graph(request["query"], request.get("subscriptions"),
                                request.get("managementGroups"), connection=replay.conn)
    rows = _rows(body)
    assert list(df.columns) == list(rows[0])
    assert df.astype(object).to_dict("records") == rows
    for col in df.columns:
        expected = "object" if col == "tags" else "string"
        assert (df[col].dtype == object) if expected == "object" else \
            isinstance(df[col].dtype, pd.StringDtype), col
    assert df.attrs["total_records"] == body["totalRecords"] and df.attrs["complete"]
    assert len(replay.seen) == 1


@pytest.mark.parametrize("name", ["2019-04-01/ResourcesBasicQuery.json",
                                  "2019-04-01/ResourcesFacetQuery.json"])
def test_a_table_example_is_typed_from_its_columns(replay, name: str) -> None:
    request, body = _example(name)
    replay.add("POST", ROUTE, Answer(200, body))
    df = toolkit.resource_graph(request["query"], request["subscriptions"],
                                connection=replay.conn)
    columns = body["data"]["columns"]
    assert df.attrs["columns"] == columns
    assert list(df.columns) == [c["name"] for c in columns]
    for c in columns:
        if c["type"] == "string":
            assert isinstance(df[c["name"]].dtype, pd.StringDtype)
        else:
            assert df[c["name"]].dtype == object
    assert df.astype(object).to_dict("records") == _rows(body)


def test_the_paged_examples_are_read_page_after_page_and_the_gap_is_said(replay) -> None:
    request, first = _example("ResourcesFirstPageQuery.json")
    _, following = _example("ResourcesNextPageQuery.json")
    last = {k: v for k, v in following.items() if k != "$skipToken"}  # the examples stop here
    replay.add("POST", ROUTE, Answer(200, first), Answer(200, last))
    with pytest.raises(toolkit.IncompleteResultError) as info:
        toolkit.resource_graph(request["query"], request["subscriptions"], page_size=3,
                               connection=replay.conn)
    read = info.value.partial
    assert read["id"].tolist() == [r["id"] for r in _rows(first) + _rows(last)]
    assert f"returned 6 of {first['totalRecords']} rows" in str(info.value)
    assert len(replay.seen) == 2
