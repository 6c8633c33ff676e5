"""Cluster credentials: kubeconfigs and passwords masked everywhere, written safely, over HTTP."""

from __future__ import annotations

import io
import logging
import os
import stat

import pytest
import yaml

import toolkit
from tests.conftest import example
from tests.replay import Answer, replay_server
from toolkit._core.errors import ValidationError
from toolkit._core.secrets import MASK, Secret
from toolkit.arm._schemas import HOSTED_CREDENTIALS, MONITORING_CREDENTIALS
from toolkit.sandbox.arm.clusters import kubeconfig


@pytest.fixture(scope="module")
def clusters(sandbox):
    return sandbox.world.section("clusters")


def _where(c):
    return c.subscription_id, c.resource_group, c.name


def _managed(clusters, name):
    return next(c for c in clusters.managed if c.name == name)


@pytest.fixture
def replay_conn(waits):
    with replay_server() as rp:
        conn = toolkit.connect(base_url=rp.url, token="example-token-0123456789", progress=False)
        conn.sleep = waits
        rp.conn = conn
        yield rp


# ------------------------------------------------------------------------------- real examples

def test_monitoring_example_parses(replay_conn) -> None:
    ex = example("07-cluster-monitoring-credentials",
                 "ManagedClustersListClusterMonitoringUserCredentials.json")
    body = ex["responses"]["200"]["body"]
    replay_conn.add("POST", "/listClusterMonitoringUserCredential", Answer(200, body))
    p = ex["parameters"]
    df = toolkit.cluster_monitoring_credentials(
        p["subscriptionId"], p["resourceGroupName"], p["resourceName"],
        api_version=p["api-version"], connection=replay_conn.conn)
    assert list(df.columns) == MONITORING_CREDENTIALS.names and len(df) == 1
    assert df["name"].tolist() == ["credentialName1"]
    value = df["value"].iloc[0]
    assert isinstance(value, Secret) and value.reveal() == "credentialValue1"
    assert MASK in repr(df) and "credentialValue1" not in df.to_html()
    # not a kubeconfig: nothing to read from it, and no failure
    assert df[["cluster_name", "server_url", "context", "user_name"]].isna().all().all()
    assert df["auth_kind"].isna().all()
    assert "api-version=2025-10-01" in replay_conn.seen[0][1]


def test_hosted_example_parses(replay_conn) -> None:
    ex = example("08-hosted-cluster-credentials", "OpenShiftClusters_ListCredentials.json")
    replay_conn.add("POST", "/listCredentials", Answer(200, ex["responses"]["200"]["body"]))
    p = ex["parameters"]
    df = toolkit.hosted_cluster_credentials(p["subscriptionId"], p["resourceGroupName"],
                                            p["resourceName"], connection=replay_conn.conn)
    assert list(df.columns) == HOSTED_CREDENTIALS.names and len(df) == 1
    assert df["kubeadminUsername"].tolist() == ["kubeadmin"]
    assert str(df["kubeadminUsername"].dtype) == "string"
    password = df["kubeadminPassword"].iloc[0]
    assert isinstance(password, Secret) and password.reveal() == "password"
    assert password.label == "password"
    assert "/hostedClusters/resourceName/listCredentials" in replay_conn.seen[0][1]


# ------------------------------------------------------------------------------- sandbox

def test_every_cluster_gives_its_kubeconfig(conn, clusters) -> None:
    kinds = set()
    for c in clusters.managed:
        df = toolkit.cluster_monitoring_credentials(*_where(c), connection=conn)
        assert len(df) == 1
        row = df.iloc[0]
        host = c.private_host if c.private else c.public_host
        assert row["value"].reveal() == kubeconfig(c, host, conn.sandbox.cloud.environment)
        assert row["name"] == "clusterMonitoringUser"
        assert row["cluster_name"] == c.name and row["context"] == c.name
        assert row["server_url"] == f"https://{host}:443"
        assert row["user_name"] == f"clusterMonitoringUser_{c.resource_group}_{c.name}"
        assert row["auth_kind"] == c.auth
        kinds.add(c.auth)
        config = yaml.safe_load(row["value"].reveal())
        assert config["kind"] == "Config" and config["current-context"] == c.name
    assert kinds == {"token", "exec", "client-certificate"}


def test_server_fqdn_chooses_the_address(conn, clusters) -> None:
    both = next(c for c in clusters.managed if c.private and c.public_fqdn)
    public = toolkit.cluster_monitoring_credentials(*_where(both), server_fqdn="public",
                                                    connection=conn)
    private = toolkit.cluster_monitoring_credentials(*_where(both), server_fqdn="private",
                                                     connection=conn)
    assert public["server_url"].iloc[0] == f"https://{both.public_host}:443"
    assert private["server_url"].iloc[0] == f"https://{both.private_host}:443"
    assert ".privatelink." in private["server_url"].iloc[0]
    private_only = next(c for c in clusters.managed if c.private and not c.public_fqdn)
    with pytest.raises(toolkit.ApiError) as info:
        toolkit.cluster_monitoring_credentials(*_where(private_only), server_fqdn="public",
                                               connection=conn)
    assert (info.value.status, info.value.code) == (400, "PublicFQDNNotEnabled")
    public_only = next(c for c in clusters.managed if not c.private)
    with pytest.raises(toolkit.ApiError) as info:
        toolkit.cluster_monitoring_credentials(*_where(public_only), server_fqdn="private",
                                               connection=conn)
    assert (info.value.status, info.value.code) == (400, "PrivateFQDNNotAvailable")
    with pytest.raises(toolkit.ApiError) as info:
        toolkit.cluster_monitoring_credentials(*_where(public_only), server_fqdn="internal",
                                               connection=conn)
    assert info.value.code == "InvalidParameter" and info.value.target == "server-fqdn"


def test_unknown_clusters_are_not_found(conn, clusters) -> None:
    c = clusters.managed[0]
    with pytest.raises(toolkit.NotFoundError) as info:
        toolkit.cluster_monitoring_credentials(c.subscription_id, c.resource_group, "aks-gone",
                                               connection=conn)
    assert info.value.code == "ResourceNotFound" and "managedClusters/aks-gone" in str(info.value)
    h = clusters.hosted[0]
    with pytest.raises(toolkit.NotFoundError) as info:
        toolkit.hosted_cluster_credentials(h.subscription_id, h.resource_group, "aro-gone",
                                           connection=conn)
    assert info.value.code == "ResourceNotFound" and "hostedClusters/aro-gone" in str(info.value)
    with pytest.raises(toolkit.NotFoundError, match="ResourceGroupNotFound"):
        toolkit.hosted_cluster_credentials(h.subscription_id, "rg-nope", h.name, connection=conn)


def test_hosted_credentials(conn, clusters) -> None:
    for h in clusters.hosted:
        df = toolkit.hosted_cluster_credentials(*_where(h), connection=conn)
        assert df["kubeadminUsername"].tolist() == ["kubeadmin"]
        assert df["kubeadminPassword"].iloc[0].reveal() == h.password


def test_masking_holds_in_every_rendering_and_in_logs(conn, clusters, caplog) -> None:
    c = _managed(clusters, "aks-ingress-hub")
    h = clusters.hosted[0]
    secrets = [c.token, c.client_key, h.password]
    with caplog.at_level(logging.DEBUG):
        creds = toolkit.cluster_monitoring_credentials(*_where(c), connection=conn)
        hosted = toolkit.hosted_cluster_credentials(*_where(h), connection=conn)
        logging.getLogger("toolkit.test").info("credentials: %s / %s", creds.iloc[0]["value"],
                                               hosted.iloc[0]["kubeadminPassword"])
    renderings = [caplog.text]
    for df in (creds, hosted):
        buf = io.StringIO()
        df.to_csv(buf)
        renderings += [repr(df), str(df), df.to_html(), df.to_string(), buf.getvalue(),
                       df.to_json(), df.to_json(orient="records"), repr(df.iloc[0]),
                       str(df.to_dict()), df._repr_html_() or ""]
    try:
        raise RuntimeError(f"failed with {hosted.iloc[0]['kubeadminPassword']}")
    except RuntimeError as err:
        renderings.append(str(err))
    text = "\n".join(renderings)
    for secret in secrets:
        assert secret not in text
    assert creds["value"].iloc[0].reveal().count(c.token) == 1  # .reveal() is the way out


def test_write_kubeconfig_is_owner_only_and_refuses_to_overwrite(conn, clusters,
                                                                  tmp_path) -> None:
    c = _managed(clusters, "aks-web-prod-weu")
    df = toolkit.cluster_monitoring_credentials(*_where(c), connection=conn)
    path = tmp_path / "config"
    written = toolkit.write_kubeconfig(df, path)
    assert written == path
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert path.read_text() == df["value"].iloc[0].reveal()
    assert yaml.safe_load(path.read_text())["users"][0]["user"]["token"] == c.token
    with pytest.raises(FileExistsError, match="overwrite=True"):
        toolkit.write_kubeconfig(df.iloc[0], path)
    other = tmp_path / "loose"
    other.write_text("old")
    os.chmod(other, 0o644)
    toolkit.write_kubeconfig(df.iloc[0], other, overwrite=True)
    assert stat.S_IMODE(os.stat(other).st_mode) == 0o600
    assert other.read_text() == path.read_text()
    toolkit.write_kubeconfig(df["value"].iloc[0], tmp_path / "from-secret")
    assert (tmp_path / "from-secret").read_text() == path.read_text()


def test_write_kubeconfig_wants_one_kubeconfig(conn, clusters, tmp_path) -> None:
    c = clusters.managed[0]
    df = toolkit.cluster_monitoring_credentials(*_where(c), connection=conn)
    import pandas as pd

    for bad in (pd.concat([df, df], ignore_index=True), df.iloc[0:0], "a kubeconfig",
                df.drop(columns=["value"]).iloc[0]):
        with pytest.raises(ValidationError) as info:
            toolkit.write_kubeconfig(bad, tmp_path / "x")
        assert info.value.parameter == "row_or_frame"
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("cluster", ["", "-aks", "aks-", "aks_", "a" * 64, "aks.prod", "aks prod",
                                     None, "aks/x"])
def test_bad_cluster_names_fail_before_any_request(conn, sandbox, clusters, cluster) -> None:
    c = clusters.managed[0]
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        toolkit.cluster_monitoring_credentials(c.subscription_id, c.resource_group, cluster,
                                               connection=conn)
    assert info.value.parameter == "cluster" and log == []


@pytest.mark.parametrize("name", ["a", "A_b-C", "a" * 63, "9z"])
def test_edge_cluster_names_reach_the_service(conn, clusters, name) -> None:
    c = clusters.managed[0]
    with pytest.raises(toolkit.NotFoundError):
        toolkit.cluster_monitoring_credentials(c.subscription_id, c.resource_group, name,
                                               connection=conn)


@pytest.mark.parametrize("func, args, kwargs, param", [
    ("monitoring", ("bad-sub", "rg", "aks"), {}, "subscription_id"),
    ("monitoring", (None, "", "aks"), {}, "resource_group"),
    ("monitoring", (None, "rg", "aks"), {"server_fqdn": ""}, "server_fqdn"),
    ("monitoring", (None, "rg", "aks"), {"server_fqdn": "pub lic"}, "server_fqdn"),
    ("monitoring", (None, "rg", "aks"), {"api_version": ""}, "api_version"),
    ("hosted", ("bad-sub", "rg", "aro"), {}, "subscription_id"),
    ("hosted", (None, "r" * 91, "aro"), {}, "resource_group"),
    ("hosted", (None, "rg", ""), {}, "cluster"),
    ("hosted", (None, "rg", "a/b"), {}, "cluster"),
    ("hosted", (None, "rg", None), {}, "cluster"),
])
def test_bad_arguments_fail_before_any_request(conn, sandbox, clusters, func, args, kwargs,
                                               param) -> None:
    fn = toolkit.cluster_monitoring_credentials if func == "monitoring" \
        else toolkit.hosted_cluster_credentials
    args = (args[0] or clusters.managed[0].subscription_id, *args[1:])
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        fn(*args, connection=conn, **kwargs)
    assert info.value.parameter == param and log == []


def test_credentials_survive_throttling(conn, sandbox, clusters) -> None:
    c = clusters.managed[1]
    sandbox.inject("429", path="listClusterMonitoringUserCredential", count=2, retry_after=1)
    df = toolkit.cluster_monitoring_credentials(*_where(c), connection=conn)
    assert len(df) == 1 and conn.stats.throttled >= 2
