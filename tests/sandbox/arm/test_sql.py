"""The sandbox's SQL servers: the world's servers, taken names, operations catalogue and vault keys;
name availability, the paged catalogue and the encryption protectors over HTTP (the protector
body, the change as an operation, the conflict, the clock, the refusals)."""

from __future__ import annotations

import hashlib
import re
from datetime import timedelta

import pytest

from tests.sandbox.arm.conftest import arm_caller
from toolkit.sandbox.arm.sql import (
    _KEYS,
    _PROTECTORS,
    INVALID_MESSAGE,
    KEY_NAME_RE,
    OPERATIONS_PAGE_SIZE,
    OTHER_TENANTS,
    SERVER_NAME_RE,
    TAKEN_MESSAGE,
    build_world,
    catalog_rows,
)
from toolkit.sandbox.server import Sandbox
from toolkit.sandbox.world import World

API = "api-version=2025-01-01"


@pytest.fixture(scope="module")
def sql(sandbox):
    return sandbox.world.section("sql")


@pytest.fixture(scope="module")
def own():
    """A sandbox of its own for the tests that change protectors, its clock held."""
    with Sandbox(seed=7, lro_polls=2, lro_retry_after=5) as sb:
        sb.hold_clock(sb.now())
        yield sb


@pytest.fixture
def fresh():
    """A sandbox whose protectors are still the world's (the shared one's may have changed)."""
    with Sandbox(seed=7) as sb:
        yield sb


def _server(sandbox, name):
    return next(s for s in sandbox.world.section("sql").servers if s.name == name)


def _protector(sandbox, server, *, name="current", rg=None, server_name=None) -> str:
    return (f"/subscriptions/{server.subscription_id}/resourceGroups/"
            f"{rg or server.resource_group}/providers/{sandbox.namespace}.Sql/servers/"
            f"{server_name or server.name}/encryptionProtector/{name}?{API}")


def _vault(name: str) -> dict:
    return {"properties": {"serverKeyType": "VendorKeyVault", "serverKeyName": name}}


def _error(r) -> tuple[int, str]:
    return r.status_code, r.json()["error"]["code"]


# ------------------------------------------------------------------------------ the world
def test_the_sql_world_is_the_same_for_the_same_seed() -> None:
    one, two = build_world(World(7)), build_world(World(7))
    assert one == two
    other = build_world(World(8))
    assert [s.name for s in other.servers] == [s.name for s in one.servers]
    versions = {v.version for k in one.keys.values() for v in k.versions}
    assert versions.isdisjoint({v.version for k in other.keys.values() for v in k.versions})


def test_servers_sit_in_their_groups_and_their_names_are_taken(world, sql) -> None:
    names = [s.name for s in sql.servers]
    assert len(set(names)) == len(names)
    for s in sql.servers:
        group = world.subscription(s.subscription_id).group(s.resource_group)
        assert group is not None and s.location == group.location
        assert SERVER_NAME_RE.match(s.name)
    assert sql.taken == frozenset(names) | frozenset(OTHER_TENANTS)
    assert sql.server(sql.servers[0].subscription_id.upper(), sql.servers[0].resource_group.upper(),
                      sql.servers[0].name.upper()) is sql.servers[0]
    assert sql.server(sql.servers[0].subscription_id, "rg-other", sql.servers[0].name) is None


def test_vault_keys_have_their_versions_oldest_first(world, sql) -> None:
    assert set(sql.keys) == {(v, k) for v, k, *_ in _KEYS}
    for vault, name, n, newest_enabled, deleted in _KEYS:
        key = sql.keys[(vault, name)]
        assert len(key.versions) == n and key.deleted == deleted
        assert all(re.fullmatch(r"[0-9a-f]{32}", v.version) for v in key.versions)
        created = [v.created_at for v in key.versions]
        assert created == sorted(created) and created[-1] < world.epoch
        assert key.latest is key.versions[-1] and key.latest.enabled == newest_enabled
        assert all(v.enabled for v in key.versions[:-1])
        assert key.latest_enabled() is next(v for v in reversed(key.versions) if v.enabled)
        assert key.version(key.versions[0].version.upper()) is key.versions[0]
        assert key.version("0" * 32) is None


def test_each_protector_names_a_key_the_world_holds(world, sql) -> None:
    for s in sql.servers:
        props = s.protector["properties"]
        assert s.created_at <= s.protector["lastModifiedAt"] < world.epoch
        if s.name not in _PROTECTORS:
            assert props == {"serverKeyName": "ServiceManaged", "serverKeyType": "ServiceManaged",
                             "autoRotationEnabled": False}
            continue
        m = KEY_NAME_RE.match(props["serverKeyName"])
        assert m is not None
        key = sql.keys[(m["vault"], m["key"])]
        assert not key.deleted
        assert m["version"] is None or key.version(m["version"]) is not None


def test_the_catalog_rows_say_the_state_of_each_key(sql) -> None:
    rows = catalog_rows(sql)
    assert [r["name"] for r in rows if r["kind"] == "sql_server"] == [s.name for s in sql.servers]
    keys = {r["name"]: r["detail"] for r in rows if r["kind"] == "key_vault_key"}
    for (vault, name), key in sql.keys.items():
        detail = keys[f"{vault}_{name}"]
        assert detail.startswith(f"{len(key.versions)} versions, ")
        assert ("deleted" in detail) == key.deleted
        assert ("disabled" in detail) == (not key.deleted and not key.latest.enabled)


def test_the_operations_catalogue_names_each_operation_once(sandbox, sql) -> None:
    names = [op["name"] for op in sql.operations]
    assert len(set(names)) == len(names) > 2 * OPERATIONS_PAGE_SIZE
    assert all(n.startswith(f"{sandbox.namespace}.Sql/") for n in names)
    assert all(n.rsplit("/", 1)[1] in ("read", "write", "delete", "action") for n in names)
    assert {op["origin"] for op in sql.operations} == {"user", "system", "user,system"}


# ------------------------------------------------------------------------------ name availability
def _check(arm, sandbox, body, sub=None):
    sub = sub or sandbox.world.subscriptions[0].id
    return arm("POST", f"/subscriptions/{sub}/providers/{sandbox.namespace}.Sql/"
                       f"checkNameAvailability?{API}", json=body)


def test_name_availability_answers_available_taken_and_invalid(arm, sandbox, sql) -> None:
    kind = f"{sandbox.namespace}.Sql/servers"
    fresh = _check(arm, sandbox, {"name": "brand-new-server-42", "type": kind})
    assert fresh.status_code == 200
    assert fresh.json() == {"name": "brand-new-server-42", "available": True}
    for taken in (sql.servers[0].name, OTHER_TENANTS[0]):
        r = _check(arm, sandbox, {"name": taken, "type": kind})
        assert r.json() == {"name": taken, "available": False, "reason": "AlreadyExists",
                            "message": TAKEN_MESSAGE}
    for bad in ("Upper", "a" * 64, "-lead", "trail-", "under_score", "dot.ted", ""):
        r = _check(arm, sandbox, {"name": bad, "type": kind})
        assert r.status_code == 200
        assert r.json() == {"name": bad, "available": False, "reason": "Invalid",
                            "message": INVALID_MESSAGE}
    assert _check(arm, sandbox, {"name": "a" * 63, "type": kind}).json()["available"]


@pytest.mark.parametrize("body, code", [
    ([], "InvalidRequestContent"),
    ({"type": "Vendor.Sql/servers"}, "InvalidRequestContent"),
    ({"name": 7, "type": "Vendor.Sql/servers"}, "InvalidRequestContent"),
    ({"name": "ok"}, "UnknownNameType"),
    ({"name": "ok", "type": "Vendor.Sql/databases"}, "UnknownNameType"),
])
def test_name_availability_refuses_a_bad_body(arm, sandbox, body, code) -> None:
    r = _check(arm, sandbox, body)
    assert _error(r) == (400, code)


def test_name_availability_checks_the_subscription(arm, sandbox) -> None:
    body = {"name": "ok", "type": f"{sandbox.namespace}.Sql/servers"}
    assert _error(_check(arm, sandbox, body, sub="nope")) == (400, "InvalidSubscriptionId")
    assert _error(_check(arm, sandbox, body, sub="00000000-0000-4000-8000-000000000000")) == \
        (404, "SubscriptionNotFound")


# ------------------------------------------------------------------------------ operations
def test_the_operations_pages_join_into_the_catalogue(arm, sandbox, sql) -> None:
    url = f"/providers/{sandbox.namespace}.Sql/operations?{API}"
    got, pages = [], 0
    while url:
        body = arm("GET", url).json()
        assert len(body["value"]) <= OPERATIONS_PAGE_SIZE
        got += body["value"]
        pages += 1
        url = body.get("nextLink")
    assert got == sql.operations
    assert pages == -(-len(sql.operations) // OPERATIONS_PAGE_SIZE)


@pytest.mark.parametrize("token, status", [("x", 400), ("-1", 400), ("past", 400),
                                           ("end", 200)])
def test_operations_skip_tokens(arm, sandbox, sql, token, status) -> None:
    n = len(sql.operations)
    token = {"past": str(n + 1), "end": str(n)}.get(token, token)
    r = arm("GET", f"/providers/{sandbox.namespace}.Sql/operations?{API}&$skiptoken={token}")
    assert r.status_code == status
    if status == 400:
        assert r.json()["error"]["code"] == "InvalidSkipToken"
    else:
        assert r.json() == {"value": []}


# ------------------------------------------------------------------------------ protectors
def test_each_servers_protector_describes_its_key(fresh) -> None:
    sandbox, arm = fresh, arm_caller(fresh)
    sql = sandbox.world.section("sql")
    vault_suffix = sandbox.cloud.vault_suffix
    for s in sql.servers:
        r = arm("GET", _protector(sandbox, s))
        assert r.status_code == 200
        body = r.json()
        props = body["properties"]
        assert body["id"].endswith(f"/servers/{s.name}/encryptionProtector/current")
        assert body["name"] == "current"
        assert props["serverKeyName"] == s.protector["properties"]["serverKeyName"]
        if props["serverKeyType"] == "ServiceManaged":
            assert body["kind"] == "servicemanaged" and "uri" not in props
            continue
        m = KEY_NAME_RE.match(props["serverKeyName"])
        key = sql.keys[(m["vault"], m["key"])]
        auto = props["autoRotationEnabled"]
        in_use = key.version(m["version"]) if m["version"] and not auto else key.latest_enabled()
        base = f"https://{key.vault}.{vault_suffix}/keys/{key.name}"
        assert props["uri"] == (base if m["version"] is None else f"{base}/{in_use.version}")
        assert props["thumbprint"] == hashlib.sha1(in_use.version.encode()).hexdigest().upper()
        # the version in use is said when the name does not say it
        assert props.get("keyVersion") == (None if m["version"] == in_use.version
                                           else in_use.version)
        assert body["kind"] == sandbox.words.key_vault_kind


def test_auto_rotation_uses_the_newest_version_of_a_pinned_key(fresh) -> None:
    sandbox, arm = fresh, arm_caller(fresh)
    sql = sandbox.world.section("sql")
    server = _server(sandbox, "sql-analytics-neu")  # pinned, auto-rotation on, in the world
    key = sql.keys[("kv-retail-prod-neu", "tde-analytics")]
    props = arm("GET", _protector(sandbox, server)).json()["properties"]
    assert props["autoRotationEnabled"]
    assert props["uri"].endswith(key.latest_enabled().version)


def test_a_service_managed_key_is_set_at_once_by_the_caller(own) -> None:
    call = arm_caller(own)
    server = _server(own, "sql-retail-prod-weu-01")
    before = call("GET", _protector(own, server)).json()
    r = call("PUT", _protector(own, server),
             json={"properties": {"serverKeyType": "ServiceManaged"}})
    assert r.status_code == 200
    body = r.json()
    assert body["properties"]["serverKeyName"] == "ServiceManaged"
    assert body["kind"] == "servicemanaged" and "uri" not in body["properties"]
    assert body["systemData"]["lastModifiedAt"] > before["systemData"]["lastModifiedAt"]
    assert body["systemData"]["createdAt"] == before["systemData"]["createdAt"]
    assert call("GET", _protector(own, server)).json() == body


def test_a_vault_key_change_is_an_operation_and_blocks_a_second_one(own) -> None:
    call = arm_caller(own)
    server = _server(own, "sql-orders-dev")
    path = _protector(own, server)
    before = call("GET", path).json()
    started = call("PUT", path, json=_vault("kv-retail-dev_tde-dev"))
    assert started.status_code == 202
    location = started.headers["Location"]
    assert "/encryptionProtectorOperationResults/" in location
    assert "/operations/" in started.headers[own.words.async_header]
    second = call("PUT", path, json={"properties": {"serverKeyType": "ServiceManaged"}})
    assert _error(second) == (409, "EncryptionProtectorChangeInProgress")
    assert call("GET", path).json() == before  # the old protector until the change is done
    assert call("GET", location).status_code == 202
    done = call("GET", location)
    assert done.status_code == 200
    assert done.json()["properties"]["serverKeyName"] == "kv-retail-dev_tde-dev"
    assert call("GET", path).json() == done.json()
    assert call("PUT", path, json={"properties": {"serverKeyType": "ServiceManaged"}}
                ).status_code == 200


def test_a_change_completes_on_the_sandbox_clock_without_polling(own) -> None:
    call = arm_caller(own)
    server = _server(own, "sql-loadtest-01")
    path = _protector(own, server)
    start = own.now()
    assert call("PUT", path, json=_vault("kv-retail-dev_tde-dev")).status_code == 202
    try:
        own.hold_clock(start + timedelta(seconds=own.lro_polls * own.lro_retry_after - 1))
        assert call("GET", path).json()["properties"]["serverKeyName"] == "ServiceManaged"
        own.hold_clock(start + timedelta(seconds=own.lro_polls * own.lro_retry_after))
        assert call("GET", path).json()["properties"]["serverKeyName"] == "kv-retail-dev_tde-dev"
    finally:
        own.hold_clock(start)


def test_a_failed_change_changes_nothing_even_once_its_time_has_passed(own) -> None:
    call = arm_caller(own)
    server = _server(own, "sql-sandbox-alice")
    path = _protector(own, server)
    before = call("GET", path).json()
    start = own.now()
    r = call("PUT", path, json=_vault("kv-retail-dev_tde-dev"),
             headers={f"{own.header_prefix}sandbox-fault": "lro_fail"})
    assert r.status_code == 202
    try:
        own.hold_clock(start + timedelta(hours=1))
        assert call("GET", path).json() == before
        states = [call("GET", r.headers[own.words.async_header]).json()["status"]
                  for _ in range(own.lro_polls)]
        assert states[-1] == "Failed"
        assert call("GET", path).json() == before
        assert call("PUT", path, json=_vault("kv-retail-dev_tde-dev")).status_code == 202
    finally:
        own.hold_clock(start)


def test_the_service_checks_the_body_and_the_protector_name(arm, sandbox) -> None:
    server = _server(sandbox, "sql-shop-sessions")
    cases = [
        ("current", {"properties": {"serverKeyType": "Managed"}}, "InvalidKeyType"),
        ("current", {"properties": {"serverKeyType": "ServiceManaged",
                                    "serverKeyName": "other"}}, "InvalidKeyName"),
        ("current", {"properties": {"serverKeyType": "VendorKeyVault",
                                    "serverKeyName": "no-underscore"}}, "InvalidKeyName"),
        ("current", {"properties": {"serverKeyType": "VendorKeyVault"}}, "InvalidKeyName"),
        ("current", {"properties": {"serverKeyType": "ServiceManaged",
                                    "autoRotationEnabled": "yes"}}, "InvalidKeyUpsertRequest"),
        ("current", {}, "InvalidKeyUpsertRequest"),
        ("current", [], "InvalidKeyUpsertRequest"),
        ("previous", {"properties": {"serverKeyType": "ServiceManaged"}},
         "InvalidEncryptionProtectorName"),
    ]
    for name, body, code in cases:
        r = arm("PUT", _protector(sandbox, server, name=name), json=body)
        assert _error(r) == (400, code), (body, r.text[:200])
    assert _error(arm("GET", _protector(sandbox, server, name="previous"))) == \
        (400, "InvalidEncryptionProtectorName")


def test_disabled_key_version_is_refused(arm, sandbox, sql) -> None:
    server = _server(sandbox, "sql-shop-sessions")
    key = sql.keys[("kv-retail-prod-weu", "tde-legacy")]
    assert not key.latest.enabled and key.versions[0].enabled
    before = arm("GET", _protector(sandbox, server)).json()
    for name in ("kv-retail-prod-weu_tde-legacy",
                 f"kv-retail-prod-weu_tde-legacy_{key.latest.version}"):
        r = arm("PUT", _protector(sandbox, server), json=_vault(name))
        assert _error(r) == (400, sandbox.words.key_disabled_code)
        assert r.json()["error"]["target"] == "serverKeyName"
    assert arm("GET", _protector(sandbox, server)).json() == before


@pytest.mark.parametrize("name", [
    "kv-retail-prod-neu_tde-archived",                      # deleted from its vault
    "kv-retail-prod-weu_no-such-key",
    "kv-unknown-vault_tde-primary",
    "kv-retail-prod-weu_tde-primary_" + "0" * 32,            # no such version
])
def test_missing_keys_are_not_found(arm, sandbox, name) -> None:
    r = arm("PUT", _protector(sandbox, _server(sandbox, "sql-shop-sessions")), json=_vault(name))
    assert _error(r) == (404, "ServerKeyNotFound")
    assert name.split("_")[0] in r.json()["error"]["message"]


def test_unknown_server_and_group_are_not_found(arm, sandbox) -> None:
    server = _server(sandbox, "sql-shop-sessions")
    managed = {"properties": {"serverKeyType": "ServiceManaged"}}
    r = arm("PUT", _protector(sandbox, server, server_name="sql-not-here"), json=managed)
    assert _error(r) == (404, "ServerNotInSubscriptionResourceGroup")
    r = arm("PUT", _protector(sandbox, server, rg="rg-missing"), json=managed)
    assert _error(r) == (404, "ResourceGroupNotFound")
    r = arm("GET", _protector(sandbox, server, server_name="sql-not-here"))
    assert _error(r) == (404, "ServerNotInSubscriptionResourceGroup")
    # a server of another group is not in this one
    other = next(s for s in sandbox.world.section("sql").servers
                 if s.resource_group != server.resource_group
                 and s.subscription_id == server.subscription_id)
    r = arm("GET", _protector(sandbox, server, server_name=other.name))
    assert _error(r) == (404, "ServerNotInSubscriptionResourceGroup")
