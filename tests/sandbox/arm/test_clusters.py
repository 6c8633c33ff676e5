"""The sandbox's clusters: the world's managed and hosted clusters and their credentials, the
kubeconfig they are handed in, and the two credential routes over HTTP (the choice of API server,
the refusals)."""

from __future__ import annotations

import base64
import re

import pytest
import yaml

from tests.sandbox.arm.conftest import arm_caller
from toolkit._spec.clouds import get_cloud
from toolkit.sandbox.arm.clusters import (
    _PASSWORD_ALPHABET,
    CLUSTER_NAME_RE,
    HOSTED_API_VERSIONS,
    MANAGED_API_VERSIONS,
    build_world,
    catalog_rows,
    kubeconfig,
    secret_values,
)
from toolkit.sandbox.server import Sandbox
from toolkit.sandbox.world import World

MANAGED_API = f"api-version={MANAGED_API_VERSIONS[0]}"
HOSTED_API = f"api-version={HOSTED_API_VERSIONS[0]}"


@pytest.fixture(scope="module")
def clusters(sandbox):
    return sandbox.world.section("clusters")


def _monitoring(sandbox, c, *, name=None, rg=None) -> str:
    return (f"/subscriptions/{c.subscription_id}/resourceGroups/{rg or c.resource_group}/"
            f"providers/{sandbox.namespace}.ContainerService/managedClusters/{name or c.name}/"
            f"listClusterMonitoringUserCredential?{MANAGED_API}")


def _hosted(sandbox, h, *, name=None) -> str:
    words = sandbox.words
    return (f"/subscriptions/{h.subscription_id}/resourceGroups/{h.resource_group}/providers/"
            f"{words.hosted_cluster_provider}/{words.hosted_cluster_type}/{name or h.name}/"
            f"listCredentials?{HOSTED_API}")


def _kubeconfig_of(response) -> str:
    body = response.json()
    assert [k["name"] for k in body["kubeconfigs"]] == ["clusterMonitoringUser"]
    return base64.b64decode(body["kubeconfigs"][0]["value"]).decode()


def _error(r) -> tuple[int, str, str | None]:
    err = r.json()["error"]
    return r.status_code, err["code"], err.get("target")


# ------------------------------------------------------------------------------ the world
def test_the_clusters_are_the_same_for_the_same_seed_and_differ_for_another() -> None:
    one, two, other = build_world(World(7)), build_world(World(7)), build_world(World(8))
    assert one == two
    assert [c.name for c in other.managed] == [c.name for c in one.managed]
    assert {c.token for c in other.managed}.isdisjoint({c.token for c in one.managed})
    assert {h.password for h in other.hosted}.isdisjoint({h.password for h in one.hosted})


def test_every_cluster_sits_in_a_group_of_its_subscription_and_its_region(world,
                                                                          clusters) -> None:
    for c in [*clusters.managed, *clusters.hosted]:
        group = world.subscription(c.subscription_id).group(c.resource_group)
        assert group is not None and c.location == group.location
        assert CLUSTER_NAME_RE.match(c.name)


def test_api_servers_are_under_the_clouds_suffix_in_the_clusters_region(world,
                                                                        clusters) -> None:
    suffix = world.cloud.k8s_suffix
    hosts = [h for c in clusters.managed for h in (c.public_host, c.private_host)]
    assert len(set(hosts)) == len(hosts)
    for c in clusters.managed:
        assert c.public_host.endswith(f".hcp.{c.location}.{suffix}")
        assert c.private_host.endswith(f".privatelink.{c.location}.{suffix}")
        assert re.fullmatch(r"[a-z0-9.-]+", c.public_host + c.private_host)
    assert {c.auth for c in clusters.managed} == {"token", "exec", "client-certificate"}
    assert any(c.private and c.public_fqdn for c in clusters.managed)
    assert any(c.private and not c.public_fqdn for c in clusters.managed)


def test_a_real_clouds_world_uses_its_suffix() -> None:
    public = get_cloud("public")
    found = build_world(World(7, namespace=public.words.namespace, cloud=public))
    assert all(c.public_host.endswith(f".{public.k8s_suffix}") for c in found.managed)


def test_credential_material_has_the_shapes_clients_expect(clusters) -> None:
    for c in clusters.managed:
        assert re.fullmatch(r"[0-9a-f]{64}", c.token)
        for data, label in ((c.ca_data, "CERTIFICATE"), (c.client_cert, "CERTIFICATE"),
                            (c.client_key, "RSA PRIVATE KEY")):
            pem = base64.b64decode(data).decode()
            assert pem.startswith(f"-----BEGIN {label}-----\n")
            assert pem.endswith(f"\n-----END {label}-----\n")
            assert all(len(line) <= 64 for line in pem.splitlines())
    for h in clusters.hosted:
        groups = h.password.split("-")
        assert len(h.password) == 23 and len(groups) == 4
        assert all(len(g) == 5 and set(g) <= set(_PASSWORD_ALPHABET) for g in groups)


def test_lookups_ignore_case_and_miss_unknown_clusters(clusters) -> None:
    c, h = clusters.managed[0], clusters.hosted[0]
    assert clusters.find_managed(c.subscription_id.upper(), c.resource_group.upper(),
                                 c.name.upper()) is c
    assert clusters.find_hosted(h.subscription_id, h.resource_group.upper(), h.name.upper()) is h
    assert clusters.find_managed(c.subscription_id, c.resource_group, "aks-gone") is None
    assert clusters.find_hosted(c.subscription_id, c.resource_group, c.name) is None


def test_the_catalog_has_a_row_per_cluster_and_no_credential(world, clusters) -> None:
    rows = catalog_rows(clusters)
    assert [r["name"] for r in rows] == [c.name for c in clusters.managed] + \
        [h.name for h in clusters.hosted]
    assert [r["kind"] for r in rows].count("managed_cluster") == len(clusters.managed)
    text = repr(rows)
    for secret in (*[c.token for c in clusters.managed], *[c.client_key for c in clusters.managed],
                   *[h.password for h in clusters.hosted]):
        assert secret not in text


def test_secret_values_cover_every_credential_and_kubeconfig(world, clusters) -> None:
    values = set(secret_values(world))
    for c in clusters.managed:
        assert {c.token, c.client_key} <= values
        for host in (c.public_host, c.private_host):
            text = kubeconfig(c, host, world.cloud.environment)
            assert {text, base64.b64encode(text.encode()).decode()} <= values
    assert {h.password for h in clusters.hosted} <= values


# ------------------------------------------------------------------------------ kubeconfig
@pytest.mark.parametrize("auth", ["token", "exec", "client-certificate"])
def test_the_kubeconfig_is_one_cluster_context_and_user(clusters, auth) -> None:
    c = next(c for c in clusters.managed if c.auth == auth)
    config = yaml.safe_load(kubeconfig(c, "api.example.test", "SomeCloud"))
    user_name = f"clusterMonitoringUser_{c.resource_group}_{c.name}"
    assert config["kind"] == "Config" and config["current-context"] == c.name
    assert config["clusters"] == [{"cluster": {"certificate-authority-data": c.ca_data,
                                               "server": "https://api.example.test:443"},
                                   "name": c.name}]
    assert config["contexts"] == [{"context": {"cluster": c.name, "user": user_name},
                                   "name": c.name}]
    [user] = config["users"]
    assert user["name"] == user_name
    if auth == "token":
        assert user["user"] == {"token": c.token}
    elif auth == "client-certificate":
        assert user["user"] == {"client-certificate-data": c.client_cert,
                                "client-key-data": c.client_key, "token": c.token}
    else:
        exec_ = user["user"]["exec"]
        assert exec_["command"] == "kubelogin" and "token" not in user["user"]
        args = exec_["args"]
        assert args[args.index("--environment") + 1] == "SomeCloud"
        assert c.token not in kubeconfig(c, "api.example.test", "SomeCloud")


# ------------------------------------------------------------------------------ over HTTP
def test_each_managed_cluster_answers_its_kubeconfig_for_its_default_server(arm, sandbox,
                                                                            clusters) -> None:
    for c in clusters.managed:
        r = arm("POST", _monitoring(sandbox, c))
        assert r.status_code == 200
        host = c.private_host if c.private else c.public_host
        assert _kubeconfig_of(r) == kubeconfig(c, host, sandbox.cloud.environment)
        assert f"{sandbox.header_prefix}ratelimit-remaining-subscription-writes" in r.headers


def test_server_fqdn_picks_the_public_or_private_server(arm, sandbox, clusters) -> None:
    both = next(c for c in clusters.managed if c.private and c.public_fqdn)
    for kind, host in (("public", both.public_host), ("PRIVATE", both.private_host),
                       ("", both.private_host)):
        r = arm("POST", _monitoring(sandbox, both) + f"&server-fqdn={kind}")
        assert _kubeconfig_of(r) == kubeconfig(both, host, sandbox.cloud.environment), kind
    public_only = next(c for c in clusters.managed if not c.private)
    r = arm("POST", _monitoring(sandbox, public_only) + "&server-fqdn=Public")
    assert f"https://{public_only.public_host}:443" in _kubeconfig_of(r)


def test_server_fqdn_refusals(arm, sandbox, clusters) -> None:
    private_only = next(c for c in clusters.managed if c.private and not c.public_fqdn)
    public_only = next(c for c in clusters.managed if not c.private)
    r = arm("POST", _monitoring(sandbox, private_only) + "&server-fqdn=public")
    assert _error(r) == (400, "PublicFQDNNotEnabled", "server-fqdn")
    r = arm("POST", _monitoring(sandbox, public_only) + "&server-fqdn=private")
    assert _error(r) == (400, "PrivateFQDNNotAvailable", "server-fqdn")
    r = arm("POST", _monitoring(sandbox, public_only) + "&server-fqdn=internal")
    assert _error(r) == (400, "InvalidParameter", "server-fqdn")
    assert "'internal'" in r.json()["error"]["message"]


@pytest.mark.parametrize("name", ["-aks", "aks-", "aks_", "a" * 64, "aks.prod"])
def test_a_bad_cluster_name_is_400_naming_the_resource_name(arm, sandbox, clusters,
                                                            name) -> None:
    r = arm("POST", _monitoring(sandbox, clusters.managed[0], name=name))
    assert _error(r) == (400, "InvalidParameter", "resourceName")


@pytest.mark.parametrize("name", ["a", "A_b-C", "a" * 63, "9z"])
def test_edge_cluster_names_are_looked_up(arm, sandbox, clusters, name) -> None:
    r = arm("POST", _monitoring(sandbox, clusters.managed[0], name=name))
    assert _error(r)[:2] == (404, "ResourceNotFound")


def test_unknown_clusters_are_404_naming_the_resource(arm, sandbox, clusters) -> None:
    c, h = clusters.managed[0], clusters.hosted[0]
    r = arm("POST", _monitoring(sandbox, c, name="aks-gone"))
    assert _error(r)[:2] == (404, "ResourceNotFound")
    assert f"{sandbox.namespace}.ContainerService/managedClusters/aks-gone" in \
        r.json()["error"]["message"]
    r = arm("POST", _hosted(sandbox, h, name="aro-gone"))
    assert _error(r)[:2] == (404, "ResourceNotFound")
    words = sandbox.words
    assert f"{words.hosted_cluster_provider}/{words.hosted_cluster_type}/aro-gone" in \
        r.json()["error"]["message"]
    r = arm("POST", _monitoring(sandbox, c, rg="rg-nope"))
    assert _error(r)[:2] == (404, "ResourceGroupNotFound")


def test_hosted_clusters_answer_the_kubeadmin_credentials(arm, sandbox, clusters) -> None:
    for h in clusters.hosted:
        r = arm("POST", _hosted(sandbox, h, name=h.name.upper()))
        assert r.status_code == 200
        assert r.json() == {"kubeadminPassword": h.password, "kubeadminUsername": "kubeadmin"}


def test_in_a_real_clouds_words_the_hosted_route_is_the_real_providers() -> None:
    with Sandbox(seed=7, cloud="public") as sb:
        h = sb.world.section("clusters").hosted[0]
        assert sb.words.hosted_cluster_provider == "Microsoft.RedHatOpenShift"
        r = arm_caller(sb)("POST", _hosted(sb, h))
        assert r.status_code == 200 and r.json()["kubeadminPassword"] == h.password
        c = sb.world.section("clusters").managed[0]
        text = _kubeconfig_of(arm_caller(sb)("POST", _monitoring(sb, c)))
        assert f".{sb.cloud.k8s_suffix}:443" in text
        assert text == kubeconfig(c, c.private_host if c.private else c.public_host,
                                  sb.cloud.environment)
