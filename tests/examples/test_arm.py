"""The services' real example responses (operations 01, 03, 04), replayed over HTTP through the
public functions, become the right frames."""

from __future__ import annotations

import pandas as pd
import pytest

import toolkit
from tests.conftest import example
from tests.replay import Answer, replay_server

SUB = "00000000-1111-2222-3333-444444444444"


@pytest.fixture
def replay(waits):
    with replay_server() as rp:
        conn = toolkit.connect(base_url=rp.url, token="example-token-0123456789", progress=False)
        conn.sleep = waits
        rp.conn = conn
        yield rp


def test_backend_health_example(replay, waits) -> None:
    ex = example("01-backend-health", "ApplicationGatewayBackendHealthGet.json")
    location = ex["responses"]["202"]["headers"]["location"]
    poll_path = location.split("management.vendor.com", 1)[1].split("?")[0]
    replay.add("POST", "/backendhealth", Answer(202, None, {
        "Location": "{url}" + location.split("management.vendor.com", 1)[1],
        "Retry-After": "10"}))
    replay.add("GET", poll_path, Answer(200, ex["responses"]["200"]["body"]))
    df = toolkit.backend_health("00000000-0000-0000-0000-000000000000", "appgw", "appgw",
                                connection=replay.conn)
    servers = [(p["backendAddressPool"]["id"], s["address"], s["health"])
               for p in ex["responses"]["200"]["body"]["backendAddressPools"]
               for c in p["backendHttpSettingsCollection"] for s in c["servers"]]
    assert list(zip(df["backendAddressPool.id"], df["address"], df["health"].astype(str),
                    strict=True)) == servers
    assert df["backendAddressPool.name"].tolist() == ["MFAnalyticsPool", "MFPool", "MFPool"]
    assert df["backendHttpSettings.name"].eq("MFPoolSettings").all()
    assert df["health"].cat.ordered and df["ipConfiguration.id"].isna().all()
    assert waits == [10.0]  # the Retry-After of the 202


@pytest.mark.parametrize("name, available", [
    ("CheckNameAvailabilityServerAlreadyExists.json", False),
    ("CheckNameAvailabilityServerAvailable.json", True),
])
def test_name_availability_examples(replay, name, available) -> None:
    ex = example("03-sql-check-name-availability", name)
    body = ex["responses"]["200"]["body"]
    replay.add("POST", "/checkNameAvailability", Answer(200, body))
    df = toolkit.check_server_names(SUB, ex["parameters"]["parameters"]["name"],
                                    connection=replay.conn)
    row = df.iloc[0]
    assert row["name"] == body["name"] and bool(row["available"]) is available
    if available:
        assert pd.isna(row["reason"]) and pd.isna(row["message"])
    else:
        assert row["reason"] == body["reason"] and row["message"] == body["message"]
    assert str(df["available"].dtype) == "boolean"


def test_operations_example(replay) -> None:
    ex = example("04-sql-operations-list", "ListOperations.json")
    body = ex["responses"]["200"]["body"]
    replay.add("GET", "/operations", Answer(200, body))
    df = toolkit.sql_operations(connection=replay.conn)
    assert len(df) == len(body["value"])
    assert df["name"].tolist() == [op["name"] for op in body["value"]]
    for key in ("provider", "resource", "operation", "description"):
        assert df[f"display.{key}"].tolist() == [op["display"][key] for op in body["value"]]
        assert isinstance(df[f"display.{key}"].dtype, pd.StringDtype)
    assert df["origin"].isna().all() and isinstance(df["origin"].dtype, pd.CategoricalDtype)
