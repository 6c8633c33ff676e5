"""sql_operations (paging) and check_server_names (validation, many names), over HTTP."""

from __future__ import annotations

import pytest

import toolkit
from toolkit._core.errors import TruncatedResultWarning, ValidationError
from toolkit.sandbox.arm.sql import OPERATIONS_PAGE_SIZE


def test_every_page_is_followed(conn, sandbox) -> None:
    catalogue = sandbox.world.section("sql").operations
    assert len(catalogue) > 2 * OPERATIONS_PAGE_SIZE  # several pages
    with sandbox.recording() as log:
        df = toolkit.sql_operations(connection=conn)
    assert df["name"].tolist() == [op["name"] for op in catalogue]
    assert len(log) == -(-len(catalogue) // OPERATIONS_PAGE_SIZE)
    assert df["display.operation"].notna().all()
    assert set(df["origin"].dropna()) <= {"user", "system", "user,system"}
    assert df.attrs["operation"] == "sql_operations" and len(df.attrs["request_ids"]) == len(log)


def test_max_items_truncates_with_a_warning(conn, sandbox) -> None:
    with pytest.warns(TruncatedResultWarning, match="max_items=45"):
        df = toolkit.sql_operations(max_items=45, connection=conn)
    assert len(df) == 45 and df.attrs["truncated"]
    total = len(sandbox.world.section("sql").operations)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        whole = toolkit.sql_operations(max_items=total, connection=conn)
    assert len(whole) == total and not whole.attrs["truncated"]


@pytest.mark.parametrize("kind", ["429", "503"])
def test_paging_under_faults_loses_and_duplicates_nothing(conn, sandbox, kind) -> None:
    expected = toolkit.sql_operations(connection=conn)
    rule = sandbox.inject(kind, path="skiptoken", retry_after=1, skip=1, count=2)
    got = toolkit.sql_operations(connection=conn)
    assert rule.fired == 2 and conn.stats.retries == 2
    assert got["name"].tolist() == expected["name"].tolist()


def test_bad_inputs_are_refused_before_any_request(conn, sandbox) -> None:
    with sandbox.recording() as log:
        with pytest.raises(ValidationError, match="max_items"):
            toolkit.sql_operations(max_items=-1, connection=conn)
        with pytest.raises(ValidationError, match="api_version"):
            toolkit.sql_operations(api_version="", connection=conn)
    assert log == []


def _sub(catalog) -> str:
    return catalog.query("kind == 'subscription'").iloc[0].subscription_id


def test_names_in_input_order_with_taken_available_and_invalid(conn, sandbox, catalog) -> None:
    taken = catalog.query("kind == 'sql_server'")["name"].iloc[0]
    names = ["brand-new-server-42", taken, "Upper", taken, "brand-new-server-42"]
    with sandbox.recording() as log:
        df = toolkit.check_server_names(_sub(catalog), names, connection=conn)
    assert df["name"].tolist() == names
    assert df["available"].tolist() == [True, False, False, False, True]
    assert df["reason"].tolist()[1:4] == ["AlreadyExists", "Invalid", "AlreadyExists"]
    assert df["answered_by"].tolist() == ["service", "service", "toolkit", "service", "service"]
    assert len(log) == 2  # each distinct valid name once; the invalid one not sent
    assert str(df["available"].dtype) == "boolean"


@pytest.mark.parametrize("name, rule", [
    ("", "empty"), ("a" * 64, "more than 63"), ("MyServer", "upper-case"), ("my_server", "'_'"),
    ("my.server", "'.'"), ("-server", "starts or ends"), ("server-", "starts or ends"),
    ("sérver", "other than"),
])
def test_invalid_names_are_answered_without_a_request(conn, sandbox, catalog, name,
                                                      rule) -> None:
    with sandbox.recording() as log:
        df = toolkit.check_server_names(_sub(catalog), name, connection=conn)
    assert log == []
    row = df.iloc[0]
    assert not row["available"] and row["reason"] == "Invalid" and rule in row["message"]


def test_invalid_names_can_be_sent_and_the_service_agrees(conn, sandbox, catalog) -> None:
    names = ["MyServer", "my_server", "a" * 64, "ok-name-7"]
    df = toolkit.check_server_names(_sub(catalog), names, send_invalid=True, connection=conn)
    assert df["answered_by"].eq("service").all()
    assert df["reason"].tolist()[:3] == ["Invalid"] * 3 and df["available"].tolist()[3]


def test_many_names_concurrently_under_throttling(conn, sandbox, catalog) -> None:
    names = [f"candidate-{i:03d}" for i in range(60)] + ["server1"]
    sandbox.inject("429", path="checkNameAvailability", rate=0.3, retry_after=1)
    df = toolkit.check_server_names(_sub(catalog), names, connection=conn)
    assert df["name"].tolist() == names
    assert df["error"].isna().all()
    assert df["available"].sum() == 60 and conn.stats.throttled > 0


def test_unknown_subscription_raises_not_found(conn) -> None:
    with pytest.raises(toolkit.NotFoundError, match="SubscriptionNotFound"):
        toolkit.check_server_names("00000000-0000-4000-8000-000000000000", ["abc"],
                                   connection=conn)


@pytest.mark.parametrize("sub, names, param", [
    ("not-a-uuid", ["abc"], "subscription_id"),
    ("00000000-0000-4000-8000-000000000000", [], "names"),
    ("00000000-0000-4000-8000-000000000000", ["ok", 3], "names[1]"),
    ("00000000-0000-4000-8000-000000000000", None, "names"),
])
def test_bad_arguments_name_the_parameter(conn, sandbox, sub, names, param) -> None:
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        toolkit.check_server_names(sub, names, connection=conn)
    assert info.value.parameter == param and log == []


def test_a_page_that_keeps_failing_leaves_the_rows_read_and_where_to_resume(sandbox) -> None:
    conn = toolkit.connect(sandbox=sandbox, progress=False, max_retries=1)
    conn.sleep = lambda s: None
    sandbox.inject("500", path="skiptoken", skip=1)  # the third page, and every retry of it
    with pytest.raises(toolkit.ServiceError) as info:
        toolkit.sql_operations(connection=conn)
    err = info.value
    whole = sandbox.world.section("sql").operations
    assert err.partial["name"].tolist() == [op["name"] for op in whole[:2 * OPERATIONS_PAGE_SIZE]]
    assert "$skiptoken=" in err.next_link and err.next_link in str(err)
    assert f"{2 * OPERATIONS_PAGE_SIZE} records were read" in str(err)
