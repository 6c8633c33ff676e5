"""sql_operations (paging), check_server_names (validation, many names) and
update_encryption_protector (200 for service-managed keys, 202 polled to the end for vault keys,
the documented errors, every client-side rule), over HTTP."""

from __future__ import annotations

import pandas as pd
import pytest

import toolkit
from tests.conftest import example
from tests.replay import Answer, replay_server
from toolkit._core.errors import (
    OperationTimeoutError,
    TruncatedResultWarning,
    ValidationError,
)
from toolkit.arm._schemas import ENCRYPTION_PROTECTOR
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


def test_many_names_concurrently_under_throttling(sandbox, catalog) -> None:
    names = [f"candidate-{i:03d}" for i in range(60)] + ["server1"]
    # more retries than 429s injected: whichever names they hit, none runs out
    conn = toolkit.connect(sandbox=sandbox, progress=False, max_retries=30)
    conn.sleep = lambda seconds: None
    sandbox.inject("429", path="checkNameAvailability", rate=0.3, retry_after=1, count=25)
    try:
        df = toolkit.check_server_names(_sub(catalog), names, connection=conn)
    finally:
        conn.close()
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


EXAMPLE_SUB = "00000000-1111-2222-3333-444444444444"


@pytest.fixture(scope="module")
def servers(catalog):
    return catalog.query("kind == 'sql_server'").set_index("name")


def _where(servers, name):
    row = servers.loc[name]
    return row.subscription_id, row.resource_group, name


def _key(sandbox, vault, key):
    return sandbox.world.section("sql").keys[(vault, key)]


def _statuses(log):
    return [(r.method, r.route, r.status) for r in log]


# ------------------------------------------------------------------------------- real example

def test_example_200_parses_into_the_protector_row(waits) -> None:
    ex = example("02-sql-encryption-protector", "EncryptionProtectorCreateOrUpdateKeyVault.json")
    body = ex["responses"]["200"]["body"]
    sent = ex["parameters"]["parameters"]["properties"]
    with replay_server() as rp:
        rp.add("PUT", "/encryptionProtector/current", Answer(200, body))
        conn = toolkit.connect(base_url=rp.url, token="example-token-0123456789", progress=False)
        conn.sleep = waits
        df = toolkit.update_encryption_protector(
            EXAMPLE_SUB, ex["parameters"]["resourceGroupName"], ex["parameters"]["serverName"],
            server_key_type=sent["serverKeyType"], server_key_name=sent["serverKeyName"],
            auto_rotation_enabled=sent["autoRotationEnabled"], connection=conn)
    assert list(df.columns) == ENCRYPTION_PROTECTOR.names and len(df) == 1
    row = df.iloc[0]
    for col in ("id", "name", "type", "location", "kind"):
        assert row[col] == body[col]
    assert row["serverKeyName"] == body["properties"]["serverKeyName"]
    assert row["serverKeyType"] == "VendorKeyVault" and row["kind"] == "vendorkeyvault"
    assert row["autoRotationEnabled"] is False or row["autoRotationEnabled"] == False  # noqa: E712
    assert pd.isna(row["keyVersion"]) and pd.isna(row["uri"]) and pd.isna(row["thumbprint"])
    assert row["server"] == ex["parameters"]["serverName"]
    for col in ENCRYPTION_PROTECTOR.columns:
        assert str(df[col.name].dtype) == str(col.dtype()), col.name
    assert waits == []


def test_example_202_with_empty_body_is_polled_and_the_protector_read(waits) -> None:
    ex = example("02-sql-encryption-protector", "EncryptionProtectorCreateOrUpdateKeyVault.json")
    body = ex["responses"]["200"]["body"]
    poll = ("/subscriptions/x/providers/Vendor.Sql/locations/westus/"
            "encryptionProtectorOperationResults/1")
    with replay_server() as rp:
        rp.add("PUT", "/encryptionProtector/current",
               Answer(202, ex["responses"]["202"] or {}, {"Location": "{url}" + poll,
                                                          "Retry-After": "15"}))
        rp.add("GET", "encryptionProtectorOperationResults",
               Answer(202, None, {"Location": "{url}" + poll, "Retry-After": "5"}),
               Answer(200, None))
        rp.add("GET", "/encryptionProtector/current", Answer(200, body))
        conn = toolkit.connect(base_url=rp.url, token="example-token-0123456789", progress=False)
        conn.sleep = waits
        df = toolkit.update_encryption_protector(
            EXAMPLE_SUB, "sqlcrudtest-7398", "sqlcrudtest-4645", server_key_type="VendorKeyVault",
            server_key_name=body["properties"]["serverKeyName"], connection=conn)
        seen = [m for m, _ in rp.seen]
    assert seen == ["PUT", "GET", "GET", "GET"]
    assert waits == [15.0, 5.0]
    assert df["id"].tolist() == [body["id"]]


# ------------------------------------------------------------------------------- sandbox

def test_service_managed_key_is_set_at_once(conn, sandbox, servers, waits) -> None:
    where = _where(servers, "sql-orders-prod")
    before = toolkit.encryption_protector(*where, connection=conn)
    assert before["serverKeyType"].iloc[0] == "VendorKeyVault"
    with sandbox.recording() as log:
        df = toolkit.update_encryption_protector(*where, server_key_type="ServiceManaged",
                                                 connection=conn)
    assert [r.status for r in log] == [200] and waits == []
    row = df.iloc[0]
    assert row["serverKeyType"] == "ServiceManaged" and row["serverKeyName"] == "ServiceManaged"
    assert row["kind"] == "servicemanaged" and pd.isna(row["uri"])
    assert row["systemData.lastModifiedAt"] > before["systemData.lastModifiedAt"].iloc[0]
    assert row["systemData.lastModifiedBy"] == "analyst@contoso.example"
    assert str(df["systemData.lastModifiedAt"].dtype) == "datetime64[ns, UTC]"
    after = toolkit.encryption_protector(*where, connection=conn)
    assert after["serverKeyType"].iloc[0] == "ServiceManaged"


def test_vault_key_change_is_polled_then_the_protector_read(conn, sandbox, servers,
                                                            waits) -> None:
    where = _where(servers, "sql-inventory-prod")
    key = _key(sandbox, "kv-retail-prod-weu", "tde-primary")
    pinned = key.versions[0].version
    name = f"kv-retail-prod-weu_tde-primary_{pinned}"
    with sandbox.recording() as log:
        df = toolkit.update_encryption_protector(*where, server_key_type="VendorKeyVault",
                                                 server_key_name=name,
                                                 auto_rotation_enabled=False, connection=conn)
    # the 202 names the async-operation status (followed first, as ARM clients do) and
    # Location; once the status says Succeeded the protector is read
    assert _statuses(log) == (
        [("PUT", "encryption_protector_update", 202)]
        + [("GET", "arm_operation_status", 200)] * sandbox.lro_polls
        + [("GET", "encryption_protector_get", 200)])
    assert waits == [float(sandbox.lro_retry_after)] * sandbox.lro_polls
    row = df.iloc[0]
    assert row["serverKeyName"] == name and row["serverKeyType"] == "VendorKeyVault"
    assert row["uri"] == f"https://kv-retail-prod-weu.vault.vendor.net/keys/tde-primary/{pinned}"
    assert pd.isna(row["keyVersion"])  # pinned: the name says the version
    assert row["autoRotationEnabled"] == False  # noqa: E712
    assert len(row["thumbprint"]) == 40 and row["server"] == "sql-inventory-prod"
    assert row["id"].endswith("/servers/sql-inventory-prod/encryptionProtector/current")


def test_versionless_key_reports_the_version_in_use(conn, sandbox, servers) -> None:
    where = _where(servers, "sql-dwh-staging-neu")
    key = _key(sandbox, "kv-retail-prod-neu", "tde-analytics")
    df = toolkit.update_encryption_protector(*where, server_key_type="VendorKeyVault",
                                             server_key_name="kv-retail-prod-neu_tde-analytics",
                                             auto_rotation_enabled=True, connection=conn)
    row = df.iloc[0]
    assert row["keyVersion"] == key.latest_enabled().version
    assert row["uri"] == "https://kv-retail-prod-neu.vault.vendor.net/keys/tde-analytics"
    assert row["autoRotationEnabled"] == True  # noqa: E712


def test_second_change_during_a_running_one_is_a_conflict(conn, sandbox, servers) -> None:
    where = _where(servers, "sql-shop-neu-01")
    key = _key(sandbox, "kv-retail-prod-neu", "tde-analytics")
    op = toolkit.update_encryption_protector(*where, server_key_type="VendorKeyVault",
                                             server_key_name="kv-retail-prod-neu_tde-analytics",
                                             wait=False, connection=conn)
    assert isinstance(op, toolkit.Operation) and op.status == "InProgress"
    assert "/operations/" in op.url  # the async-operation status URL
    with pytest.raises(toolkit.ConflictError) as info:
        toolkit.update_encryption_protector(*where, server_key_type="ServiceManaged",
                                            connection=conn)
    assert info.value.status == 409 and info.value.code == "EncryptionProtectorChangeInProgress"
    during = toolkit.encryption_protector(*where, connection=conn)
    assert during["serverKeyType"].iloc[0] == "ServiceManaged"  # the old protector until done
    df = op.result()
    assert op.status == "Succeeded" and df["keyVersion"].iloc[0] == key.latest.version
    again = toolkit.update_encryption_protector(*where, server_key_type="ServiceManaged",
                                                connection=conn)
    assert again["serverKeyType"].iloc[0] == "ServiceManaged"


def test_timeout_leaves_an_operation_to_resume(conn, sandbox, servers) -> None:
    where = _where(servers, "sql-identity-audit")
    with pytest.raises(OperationTimeoutError) as info:
        toolkit.update_encryption_protector(*where, server_key_type="VendorKeyVault",
                                            server_key_name="kv-retail-prod-weu_tde-primary",
                                            timeout=1, connection=conn)
    df = info.value.operation.result()
    assert df["serverKeyName"].iloc[0] == "kv-retail-prod-weu_tde-primary"


def test_faults_on_the_put_and_the_polls_change_the_key_once(conn, sandbox, servers) -> None:
    where = _where(servers, "sql-retail-dev")
    sandbox.inject("429", path="encryptionProtector/current", method="PUT", count=1,
                   retry_after=1)
    sandbox.inject("503", path="/operations/", count=1, retry_after=1)
    with sandbox.recording() as log:
        df = toolkit.update_encryption_protector(*where, server_key_type="VendorKeyVault",
                                                 server_key_name="kv-retail-dev_tde-dev",
                                                 connection=conn)
    puts = [r for r in log if r.method == "PUT"]
    assert [r.status for r in puts] == [429, 202]  # throttled once, then accepted once
    assert conn.stats.retries >= 2
    assert df["serverKeyName"].iloc[0] == "kv-retail-dev_tde-dev"


@pytest.mark.parametrize("kwargs, param", [
    ({"server_key_type": "Managed"}, "server_key_type"),
    ({"server_key_type": None}, "server_key_type"),
    ({"server_key_type": "ServiceManaged", "server_key_name": "kv_key"}, "server_key_name"),
    ({"server_key_type": "VendorKeyVault"}, "server_key_name"),
    ({"server_key_type": "VendorKeyVault", "server_key_name": "ServiceManaged"},
     "server_key_name"),
    ({"server_key_type": "VendorKeyVault", "server_key_name": "kv_key_1234"},
     "server_key_name"),                                        # version not 32 hex digits
    ({"server_key_type": "VendorKeyVault", "server_key_name": "kv_key_" + "g" * 32},
     "server_key_name"),
    ({"server_key_type": "VendorKeyVault", "server_key_name": "k_key"}, "server_key_name"),
    ({"server_key_type": "VendorKeyVault", "server_key_name": "1vault_key"},
     "server_key_name"),                                        # vault starts with a digit
    ({"server_key_type": "VendorKeyVault", "server_key_name": "vault_"}, "server_key_name"),
    ({"server_key_type": "VendorKeyVault", "server_key_name": 7}, "server_key_name"),
    ({"server_key_type": "ServiceManaged", "auto_rotation_enabled": "yes"},
     "auto_rotation_enabled"),
    ({"server_key_type": "ServiceManaged", "timeout": -1}, "timeout"),
    ({"server_key_type": "ServiceManaged", "wait": "no"}, "wait"),
    ({"server_key_type": "ServiceManaged", "api_version": ""}, "api_version"),
])
def test_bad_arguments_fail_before_any_request(conn, sandbox, servers, kwargs, param) -> None:
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        toolkit.update_encryption_protector(*_where(servers, "sql-shop-sessions"),
                                            connection=conn, **kwargs)
    assert info.value.parameter == param and log == []
    assert info.value.rule


@pytest.mark.parametrize("sub, rg, server, param", [
    ("not-a-uuid", "rg", "srv", "subscription_id"),
    (None, 123, "srv", "resource_group"),
    (None, "", "srv", "resource_group"),
    (None, "rg", "Upper-Case", "server"),
    (None, "rg", "under_score", "server"),
    (None, "rg", "-lead", "server"),
    (None, "rg", "x" * 64, "server"),
    (None, "rg", None, "server"),
])
def test_bad_identifiers_fail_before_any_request(conn, sandbox, catalog, sub, rg, server,
                                                 param) -> None:
    sub = sub or catalog.query("kind == 'subscription'").iloc[0].subscription_id
    with sandbox.recording() as log:
        for func in (toolkit.update_encryption_protector, toolkit.encryption_protector):
            kw = {"server_key_type": "ServiceManaged"} \
                if func is toolkit.update_encryption_protector else {}
            with pytest.raises(ValidationError) as info:
                func(sub, rg, server, connection=conn, **kw)
            assert info.value.parameter == param
    assert log == []


def test_valid_key_names_pass_the_client_rules(conn, servers) -> None:
    # accepted by the client, so the service answers (key unknown there)
    for name in ("abc_k", "a-b-c_key-1_" + "AbCdEf0123456789" * 2):
        with pytest.raises(toolkit.NotFoundError, match="ServerKeyNotFound"):
            toolkit.update_encryption_protector(*_where(servers, "sql-shop-sessions"),
                                                server_key_type="vendorkeyvault",
                                                server_key_name=name, connection=conn)


