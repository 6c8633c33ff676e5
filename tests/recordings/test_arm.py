"""The real resource manager's answers (the Azure CLI's recordings), replayed through the
toolkit's functions: a management group's policy states grouped with ``$apply`` (2021, carrying
the policy-insights provider's own quota count) and an OpenShift cluster's kubeadmin credentials
(2023). Each call is made as the recording's, so the replay server answers it, and the frames
hold exactly what the service said."""

from __future__ import annotations

from urllib.parse import unquote

import pytest

import toolkit
from tests.recordings.cassette import load, replaying

TOKEN = "recorded-traffic-token-0123456789"


@pytest.fixture
def connect(waits):
    made = []

    def make(url: str):
        conn = toolkit.connect(arm_url=url, cloud="public", token=TOKEN, progress=False)
        conn.sleep = waits
        made.append(conn)
        return conn

    yield make
    for conn in made:
        conn.close()


def test_a_management_groups_grouped_policy_states_and_the_providers_quota(connect) -> None:
    name = "azure-cli/policy_state_list_management_group.yaml"
    [ex] = load(name)
    asked = dict(ex.query)
    scope = ex.path.split("/providers/Microsoft.PolicyInsights")[0]
    with replaying(name) as replay:
        df = toolkit.policy_states(
            scope=scope, resource="latest", filter=unquote(asked["$filter"]),
            apply=asked["$apply"], select=asked["$select"], orderby=asked["$orderby"],
            top=int(asked["$top"]), start=asked["$from"], end=asked["$to"],
            api_version=asked["api-version"], connection=connect(replay.url))
    assert replay.unmatched == [] and replay.left == []
    records = ex.json()["value"]
    assert len(df) == ex.json()["@odata.count"] == len(records)
    for column in ("policyAssignmentId", "resourceId", "numRecords"):
        assert df[column].tolist() == [r[column] for r in records]
    # the provider's own count of what is left, read from the real header
    assert df.attrs["quota_left"] == {
        "policy-insights": int(ex.header("x-ms-ratelimit-remaining-policy-insights-requests"))}
    assert df.attrs["api_version"] == asked["api-version"]


def test_an_openshift_clusters_credentials_are_read_and_masked(connect) -> None:
    name = "azure-cli/aro_list_credentials.yaml"
    [ex] = load(name)
    parts = ex.path.split("/")
    subscription, group, cluster = parts[2], parts[4], parts[8]
    with replaying(name) as replay:
        df = toolkit.hosted_cluster_credentials(subscription, group, cluster,
                                                api_version=dict(ex.query)["api-version"],
                                                connection=connect(replay.url))
    assert replay.unmatched == [] and replay.left == []
    said = ex.json()
    assert len(df) == 1 and df["kubeadminUsername"].tolist() == [said["kubeadminUsername"]]
    secret = df["kubeadminPassword"].iloc[0]
    assert secret.reveal() == said["kubeadminPassword"]
    assert said["kubeadminPassword"] not in repr(df) + str(df) + df.to_csv()
