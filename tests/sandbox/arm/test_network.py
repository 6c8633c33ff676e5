"""The sandbox's application gateways: the world's gateways, pools and probe results, the
``ApplicationGatewayBackendHealth`` body, and the backend health operation over HTTP."""

from __future__ import annotations

import pytest

from toolkit.sandbox.arm.network import (
    _GATEWAYS,
    API_VERSIONS,
    PROBE_LOGS,
    SETTINGS,
    backend_health_body,
    build_world,
    catalog_rows,
)
from toolkit.sandbox.world import World

HEALTH = {"Up", "Down", "Partial", "Draining", "Unknown"}


@pytest.fixture(scope="module")
def gateways(sandbox):
    return sandbox.world.section("network")


def _path(sandbox, gw, *, name=None, rg=None, version=API_VERSIONS[0]) -> str:
    return (f"/subscriptions/{gw.subscription_id}/resourceGroups/{rg or gw.resource_group}/"
            f"providers/{sandbox.namespace}.Network/applicationGateways/{name or gw.name}/"
            f"backendhealth?api-version={version}")


def _run(arm, sandbox, path: str) -> dict:
    """Start the operation and poll its Location to the end; the final body."""
    r = arm("POST", path, headers={f"{sandbox.header_prefix}sandbox-lro-polls": "1"})
    assert r.status_code == 202, r.text[:300]
    final = arm("GET", r.headers["Location"])
    assert final.status_code == 200
    return final.json()


# ------------------------------------------------------------------------------ the world
def test_the_gateways_are_the_same_for_the_same_seed() -> None:
    one, two = build_world(World(7)), build_world(World(7))
    assert one == two
    other = build_world(World(8))
    assert list(other) != list(one)  # addresses and so ids differ with the seed ...
    assert [g.name for g in other.values()] == [g.name for g in one.values()]  # ... names not


def test_gateways_are_keyed_in_lower_case_and_sit_in_their_group(world, gateways) -> None:
    assert len(gateways) == len(_GATEWAYS)
    for key, gw in gateways.items():
        assert key == (gw.subscription_id.lower(), gw.resource_group.lower(), gw.name.lower())
        group = world.subscription(gw.subscription_id).group(gw.resource_group)
        assert group is not None and gw.location == group.location


def test_every_server_has_a_probe_result_for_each_settings_of_its_pool(gateways) -> None:
    seen = set()
    for gw in gateways.values():
        for pool in gw.pools:
            assert pool.servers and pool.settings and set(pool.settings) <= set(SETTINGS)
            addresses = [s.address for s in pool.servers]
            assert len(set(addresses)) == len(addresses)
            for s in pool.servers:
                assert set(s.health) == set(pool.settings)
                for health, log in s.health.values():
                    assert health in HEALTH and log in PROBE_LOGS.values()
                    seen.add(log)
    assert seen == set(PROBE_LOGS.values())  # every probe outcome occurs somewhere


def test_vm_servers_have_a_nic_in_the_gateways_group_and_fqdn_servers_none(world,
                                                                            gateways) -> None:
    for gw in gateways.values():
        for pool in gw.pools:
            for s in pool.servers:
                if s.ip_configuration is None:
                    assert s.address.endswith(".contoso.example")
                else:
                    octets = s.address.split(".")
                    assert len(octets) == 4 and octets[0] == "10"
                    assert all(0 <= int(o) <= 255 for o in octets)
                    assert s.ip_configuration.startswith(
                        f"/subscriptions/{gw.subscription_id}/resourceGroups/{gw.resource_group}"
                        f"/providers/{world.namespace}.Network/networkInterfaces/")
                    assert s.ip_configuration.endswith("/ipConfigurations/ipconfig1")


def test_catalog_counts_add_up(gateways) -> None:
    rows = catalog_rows(gateways)
    assert [r["name"] for r in rows] == [g.name for g in gateways.values()]
    for row, gw in zip(rows, gateways.values(), strict=True):
        servers = sum(len(p.servers) for p in gw.pools)
        assert row["detail"] == f"{len(gw.pools)} pools, {servers} backend servers"


# ------------------------------------------------------------------------------ the body
@pytest.mark.parametrize("expand", [False, True])
def test_the_body_has_a_server_entry_per_pool_settings_and_server(gateways, expand) -> None:
    for gw in gateways.values():
        body = backend_health_body(gw, "Vendor", expand)
        gw_id = gw.base_id("Vendor")
        assert len(body["backendAddressPools"]) == len(gw.pools)
        for entry, pool in zip(body["backendAddressPools"], gw.pools, strict=True):
            assert entry["backendAddressPool"]["id"] == f"{gw_id}/backendAddressPools/{pool.name}"
            collection = entry["backendHttpSettingsCollection"]
            assert len(collection) == len(pool.settings)
            for item, name in zip(collection, pool.settings, strict=True):
                settings = item["backendHttpSettings"]
                assert settings["id"] == f"{gw_id}/backendHttpSettingsCollection/{name}"
                assert [s["address"] for s in item["servers"]] == [s.address for s in
                                                                    pool.servers]
                for s, server in zip(item["servers"], pool.servers, strict=True):
                    assert (s["health"], s["healthProbeLog"]) == server.health[name]
                    assert ("ipConfiguration" in s) == (server.ip_configuration is not None)
                if expand:
                    protocol, port, path, timeout, pick = SETTINGS[name]
                    props = settings["properties"]
                    assert (props["protocol"], props["port"], props["path"],
                            props["requestTimeout"], props["pickHostNameFromBackendAddress"]) \
                        == (protocol, port, path, timeout, pick)
                    assert settings["etag"].startswith('W/"')
                else:
                    assert set(settings) == {"id"}
            if expand:
                addresses = entry["backendAddressPool"]["properties"]["backendAddresses"]
                assert [a.get("ipAddress") or a.get("fqdn") for a in addresses] == \
                    [s.address for s in pool.servers]
            else:
                assert set(entry["backendAddressPool"]) == {"id"}


def test_the_namespace_names_the_gateways_ids_and_types(gateways) -> None:
    gw = next(iter(gateways.values()))
    body = backend_health_body(gw, "Other", True)
    base = "/providers/Other.Network/applicationGateways/"
    for entry in body["backendAddressPools"]:
        pool = entry["backendAddressPool"]
        assert base in pool["id"] and pool["type"].startswith("Other.Network/")
        for item in entry["backendHttpSettingsCollection"]:
            settings = item["backendHttpSettings"]
            assert base in settings["id"] and settings["type"].startswith("Other.Network/")
            assert base in settings["properties"]["probe"]["id"]


# ------------------------------------------------------------------------------ over HTTP
def test_backend_health_is_an_operation_ending_in_the_body(arm, sandbox, gateways) -> None:
    for gw in gateways.values():
        assert _run(arm, sandbox, _path(sandbox, gw)) == backend_health_body(
            gw, sandbox.namespace, False)


def test_expand_inlines_pools_and_settings(arm, sandbox, gateways) -> None:
    gw = list(gateways.values())[2]
    got = _run(arm, sandbox, _path(sandbox, gw) + "&$expand=backendAddressPool")
    assert got == backend_health_body(gw, sandbox.namespace, True)


def test_the_operation_is_polled_at_the_gateways_region(arm, sandbox, gateways) -> None:
    gw = list(gateways.values())[1]
    r = arm("POST", _path(sandbox, gw))
    assert f"/providers/{sandbox.namespace}.Network/locations/{gw.location}/operationResults/" \
        in r.headers["Location"]


def test_names_are_matched_without_regard_to_case(arm, sandbox, gateways) -> None:
    gw = next(iter(gateways.values()))
    got = _run(arm, sandbox, _path(sandbox, gw, name=gw.name.upper(),
                                   rg=gw.resource_group.upper()))
    assert got == backend_health_body(gw, sandbox.namespace, False)


def test_unknown_gateways_and_groups_are_not_found(arm, sandbox, gateways) -> None:
    gw = next(iter(gateways.values()))
    r = arm("POST", _path(sandbox, gw, name="agw-missing"))
    assert r.status_code == 404 and r.json()["error"]["code"] == "ResourceNotFound"
    assert f"{sandbox.namespace}.Network/applicationGateways/agw-missing" in \
        r.json()["error"]["message"]
    r = arm("POST", _path(sandbox, gw, rg="rg-missing"))
    assert r.status_code == 404 and r.json()["error"]["code"] == "ResourceGroupNotFound"
    # a gateway of another group is not found in this one
    other = next(g for g in gateways.values() if g.resource_group != gw.resource_group)
    r = arm("POST", _path(sandbox, gw, name=other.name))
    assert r.status_code == 404 and r.json()["error"]["code"] == "ResourceNotFound"


def test_every_listed_api_version_is_answered(arm, sandbox, gateways) -> None:
    gw = next(iter(gateways.values()))
    for version in API_VERSIONS:
        assert arm("POST", _path(sandbox, gw, version=version)).status_code == 202
    r = arm("POST", _path(sandbox, gw, version="2019-01-01"))
    assert r.status_code == 400 and r.json()["error"]["code"] == "InvalidApiVersionParameter"
