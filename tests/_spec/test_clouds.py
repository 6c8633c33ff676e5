"""One cloud setting: hosts, token scopes and words per cloud, for the client and the sandbox."""

from __future__ import annotations

import time
from typing import Any

import pytest
from azure.core.credentials import AccessToken

import toolkit
from toolkit._core.errors import ValidationError
from toolkit._spec.clouds import CLOUDS, NEUTRAL, PUBLIC, get_cloud
from toolkit.sandbox.server import Sandbox

REAL_SCOPES = {
    "arm": "https://management.azure.com/.default",
    "maps": "https://atlas.microsoft.com/.default",
    "graph": "https://graph.microsoft.com/.default",
    "fabric": "https://api.fabric.microsoft.com/.default",
}


class RecordingCredential:
    """Records every scope asked for; tokens come from a sandbox when one is given."""

    def __init__(self, sandbox: Sandbox | None = None) -> None:
        self.sandbox = sandbox
        self.asked: list[tuple[str, ...]] = []

    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        self.asked.append(scopes)
        token = self.sandbox.authority.mint(scopes[0]) if self.sandbox else "t" * 40
        return AccessToken(token, int(time.time()) + 3600)


@pytest.fixture(autouse=True)
def _no_cloud_env(monkeypatch) -> None:
    for var in ("TOOLKIT_CLOUD", "TOOLKIT_BASE_URL", "TOOLKIT_ARM_URL", "TOOLKIT_MAPS_URL",
                "TOOLKIT_GRAPH_URL", "TOOLKIT_FABRIC_URL", "TOOLKIT_TOKEN", "TOOLKIT_CREDENTIAL",
                "TOOLKIT_MAPS_KEY", "TOOLKIT_NAMESPACE", "TOOLKIT_HEADER_PREFIX",
                "TOOLKIT_SANDBOX"):
        monkeypatch.delenv(var, raising=False)


def test_a_credential_alone_means_the_public_cloud() -> None:
    conn = toolkit.connect(credential=RecordingCredential(), progress=False)
    assert conn.sandbox is None and conn.cloud is PUBLIC
    assert {f: conn.url_for(f) for f in REAL_SCOPES} == {
        "arm": "https://management.azure.com", "maps": "https://atlas.microsoft.com",
        "graph": "https://graph.microsoft.com", "fabric": "https://api.fabric.microsoft.com"}
    assert {f: conn.scope_for(f) for f in REAL_SCOPES} == REAL_SCOPES
    assert (conn.namespace, conn.header_prefix, conn.async_header) == (
        "Microsoft", "x-ms-", "Azure-AsyncOperation")
    conn.close()


def test_the_credential_is_asked_for_exactly_the_real_scopes() -> None:
    with Sandbox(cloud="public") as sb:
        cred = RecordingCredential(sb)
        conn = toolkit.connect(base_url=sb.url, cloud="public", credential=cred,
                               maps_client_id=sb.authority.maps_client_id, progress=False)
        toolkit.sql_operations(connection=conn)
        toolkit.autocomplete("Can", coordinates=(1.5218, 42.5075), connection=conn)
        toolkit.authentication_strength_policies(connection=conn)
        workspace = sb.catalog().query("kind == 'fabric_workspace'").iloc[0]["name"]
        toolkit.create_eventstream(workspace, "scopes-check", connection=conn)
        conn.close()
    assert {s for scopes in cred.asked for s in scopes} == set(REAL_SCOPES.values())
    assert all(len(scopes) == 1 for scopes in cred.asked)


@pytest.mark.parametrize("name, arm, graph", [
    ("usgov", "https://management.usgovcloudapi.net", "https://graph.microsoft.us"),
    ("china", "https://management.chinacloudapi.cn", "https://microsoftgraph.chinacloudapi.cn"),
])
def test_sovereign_clouds_take_their_hosts_and_scopes(name, arm, graph, monkeypatch) -> None:
    monkeypatch.setenv("TOOLKIT_CLOUD", name)
    conn = toolkit.connect(credential=RecordingCredential(), progress=False)
    assert conn.cloud.name == name
    assert conn.url_for("arm") == arm and conn.scope_for("arm") == f"{arm}/.default"
    assert conn.url_for("graph") == graph and conn.scope_for("graph") == f"{graph}/.default"
    conn.close()


def test_a_family_the_cloud_does_not_offer_is_refused_when_called() -> None:
    cred = RecordingCredential()
    conn = toolkit.connect(cloud="china", credential=cred, progress=False)
    with pytest.raises(ValidationError) as info:
        toolkit.autocomplete("Can", coordinates=(1.52, 42.51), connection=conn)
    assert info.value.parameter == "maps_url" and "china" in str(info.value)
    with pytest.raises(ValidationError) as info:
        toolkit.create_eventstream("00000000-0000-0000-0000-000000000001", "x", connection=conn)
    assert info.value.parameter == "fabric_url"
    assert cred.asked == []  # nothing asked, nothing sent
    conn.close()


def test_a_url_given_for_a_family_the_cloud_lacks_needs_its_scope() -> None:
    conn = toolkit.connect(cloud="usgov", credential=RecordingCredential(),
                           fabric_url="https://fabric.example.test", progress=False)
    with pytest.raises(ValidationError) as info:
        conn.scope_for("fabric")
    assert info.value.parameter == "scopes"
    conn = toolkit.connect(cloud="usgov", credential=RecordingCredential(),
                           fabric_url="https://fabric.example.test",
                           scopes={"fabric": "https://fabric.example.test/.default"},
                           progress=False)
    assert conn.scope_for("fabric") == "https://fabric.example.test/.default"
    assert conn.url_for("arm") == "https://management.usgovcloudapi.net"


def test_the_usage_query_is_refused_in_china_before_any_request() -> None:
    with Sandbox(cloud="china") as sb:
        conn = toolkit.connect(sandbox=sb, progress=False)
        policy = sb.catalog().query("kind == 'authentication_strength_policy'").iloc[0]["name"]
        with sb.recording() as log:
            for call in (lambda: toolkit.authentication_strength_usage(policy, connection=conn),
                         lambda: toolkit.authentication_strength_audit(connection=conn)):
                with pytest.raises(ValidationError) as info:
                    call()
                assert info.value.parameter == "cloud" and "china" in str(info.value)
        assert log == []
        assert len(toolkit.authentication_strength_policies(connection=conn)) > 0
        conn.close()


def test_unknown_clouds_are_refused(monkeypatch) -> None:
    with pytest.raises(ValidationError) as info:
        toolkit.connect(cloud="moon", token="t" * 20)
    assert info.value.parameter == "cloud" and "public" in str(info.value)
    monkeypatch.setenv("TOOLKIT_CLOUD", "moon")
    with pytest.raises(ValidationError) as info:
        toolkit.connect(token="t" * 20)
    assert info.value.parameter == "TOOLKIT_CLOUD"
    with pytest.raises(ValueError):
        Sandbox(cloud="moon")


def test_urls_name_their_cloud_else_the_neutral_one() -> None:
    conn = toolkit.connect(arm_url="https://management.azure.com", token="t" * 20,
                           progress=False)
    assert conn.cloud is PUBLIC and conn.maps_url == "https://atlas.microsoft.com"
    conn = toolkit.connect("https://gateway.example.test", token="t" * 20, progress=False)
    assert conn.cloud is NEUTRAL and conn.namespace == "Vendor"


def test_low_level_overrides_win_over_the_cloud() -> None:
    conn = toolkit.connect(cloud="public", token="t" * 20, namespace="Contoso",
                           header_prefix="x-contoso-", progress=False)
    assert (conn.namespace, conn.header_prefix) == ("Contoso", "x-contoso-")
    assert conn.async_header == "Azure-AsyncOperation"  # not a namespace word


def test_a_sandbox_of_another_cloud_is_refused() -> None:
    with Sandbox() as sb:
        with pytest.raises(ValidationError) as info:
            toolkit.connect(sandbox=sb, cloud="public")
        assert info.value.parameter == "cloud"


def test_naming_a_real_cloud_never_starts_the_sandbox(monkeypatch, recwarn) -> None:
    import azure.identity

    made: list[dict[str, Any]] = []

    class Recorded(azure.identity.DefaultAzureCredential):
        def __init__(self, **kwargs: Any) -> None:
            made.append(kwargs)
            super().__init__(**kwargs)

    monkeypatch.setattr(azure.identity, "DefaultAzureCredential", Recorded)
    conn = toolkit.connect(cloud="AzureUSGovernment", progress=False)
    assert conn.sandbox is None and conn.cloud.name == "usgov"
    assert isinstance(conn.credential, Recorded)
    assert made == [{"authority": azure.identity.AzureAuthorityHosts.AZURE_GOVERNMENT}]
    monkeypatch.setenv("TOOLKIT_CLOUD", "public")
    conn = toolkit.connect(progress=False)
    assert conn.sandbox is None and conn.url_for("arm") == "https://management.azure.com"
    assert made[-1] == {"authority": azure.identity.AzureAuthorityHosts.AZURE_PUBLIC_CLOUD}
    assert not [w for w in recwarn if issubclass(w.category, toolkit.SandboxWarning)]


def test_a_real_cloud_without_azure_identity_says_what_to_configure(monkeypatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "azure.identity", None)  # import fails
    with pytest.raises(ValidationError) as info:
        toolkit.connect(cloud="public", progress=False)
    text = str(info.value)
    assert info.value.parameter == "credential"
    assert "cloudops-frames[identity]" in text and "credential=" in text and "token=" in text


def test_a_sandbox_in_a_real_clouds_words_is_started_only_when_asked() -> None:
    conn = toolkit.connect(cloud="public", sandbox=True, progress=False)
    try:
        assert conn.sandbox is not None and conn.sandbox.cloud is PUBLIC
        with pytest.warns(toolkit.TruncatedResultWarning, match="max_items=3"):
            df = toolkit.sql_operations(max_items=3, connection=conn)
        assert df["name"].str.startswith("Microsoft.Sql/").all()
        assert df.attrs["request_ids"]  # read from x-ms-request-id
        assert df.attrs["sandbox"] is True
    finally:
        conn.close()


@pytest.mark.parametrize("alias, name", [("AzureCloud", "public"), ("azurecloud", "public"),
                                         ("AzureUSGovernment", "usgov"),
                                         ("AZURECHINACLOUD", "china")])
def test_the_azure_clis_cloud_names_are_aliases(alias, name) -> None:
    assert get_cloud(alias) is CLOUDS[name]
    conn = toolkit.connect(cloud=alias, token="t" * 20, progress=False)
    assert conn.cloud is CLOUDS[name]


def test_real_clouds_carry_azure_identitys_authority_hosts() -> None:
    from azure.identity import AzureAuthorityHosts as Hosts

    assert {n: c.authority_host for n, c in CLOUDS.items()} == {
        "neutral": None, "public": Hosts.AZURE_PUBLIC_CLOUD, "usgov": Hosts.AZURE_GOVERNMENT,
        "china": Hosts.AZURE_CHINA}


def test_sandbox_accepts_the_real_audiences_only_in_a_real_cloud() -> None:
    import requests

    for cloud, ok in (("public", True), ("neutral", False)):
        with Sandbox(cloud=cloud) as sb:
            for family, path in (("arm", "/providers/{ns}.Sql/operations?api-version=2025-01-01"),
                                 ("graph", "/beta/policies/authenticationStrengthPolicies")):
                aud = PUBLIC.audiences[family][1]  # the host, with the trailing slash
                token = sb.authority.mint(aud)
                r = requests.get(sb.url + path.format(ns=sb.namespace),
                                 headers={"Authorization": f"Bearer {token}"}, timeout=10)
                assert (r.status_code == 200) is ok, (cloud, family, r.text[:200])


def test_every_cloud_names_every_family() -> None:
    for cloud in CLOUDS.values():
        assert set(cloud.hosts) == {"arm", "maps", "graph", "fabric"}
        for fam, host in cloud.hosts.items():
            assert (cloud.scope(fam) is None) == (host is None)
            if host and not (cloud.name == "usgov" and fam == "maps"):
                assert host.startswith("https://") and cloud.scope(fam) == f"{host}/.default"
    assert get_cloud(" Public ") is PUBLIC


# ------------------------------------------------ the vendors' own sources, cloud by cloud
def test_the_maps_resource_is_the_same_in_every_cloud() -> None:
    # the Azure Maps authentication docs give https://atlas.microsoft.com/ in Azure Government
    # too, only the REST host changing
    usgov = get_cloud("usgov")
    assert usgov.host("maps") == "https://atlas.azure.us"
    assert usgov.scope("maps") == PUBLIC.scope("maps") == "https://atlas.microsoft.com/.default"
    conn = toolkit.connect(cloud="usgov", token="t" * 20, progress=False)
    assert conn.url_for("maps") == "https://atlas.azure.us"
    assert conn.scope_for("maps") == "https://atlas.microsoft.com/.default"
    conn.close()


def test_the_vendors_maps_clients_ask_for_the_same_scope_whatever_their_endpoint() -> None:
    # azure-maps-route's credential_scopes default (the conformance extra installs it)
    route = pytest.importorskip("azure.maps.route._configuration")
    vendor = route.MapsRouteClientConfiguration(credential=RecordingCredential())
    assert vendor.credential_scopes == [get_cloud("usgov").scope("maps")]


def test_a_usgov_sandbox_accepts_tokens_for_the_maps_resource() -> None:
    with Sandbox(cloud="usgov") as sb:
        cred = RecordingCredential(sb)
        conn = toolkit.connect(base_url=sb.url, cloud="usgov", credential=cred,
                               maps_client_id=sb.authority.maps_client_id, progress=False)
        try:
            df = toolkit.autocomplete("Can", coordinates=(1.5218, 42.5075), connection=conn)
        finally:
            conn.close()
    assert len(df) and cred.asked == [("https://atlas.microsoft.com/.default",)]


@pytest.mark.parametrize("urls, name, scopes", [
    ({"maps_url": "https://us.atlas.microsoft.com"}, "public",
     {"maps": "https://atlas.microsoft.com/.default",
      "arm": "https://management.azure.com/.default"}),
    ({"maps_url": "https://eu.atlas.microsoft.com/"}, "public",
     {"maps": "https://atlas.microsoft.com/.default"}),
    ({"graph_url": "https://dod-graph.microsoft.us"}, "usgov",
     {"graph": "https://dod-graph.microsoft.us/.default",
      "arm": "https://management.usgovcloudapi.net/.default"}),
    ({"fabric_url": "https://0cfd9c663bf04e438257.z0c.w.api.fabric.microsoft.com"}, "public",
     {"fabric": "https://api.fabric.microsoft.com/.default"}),
    ({"arm_url": "https://management.chinacloudapi.cn"}, "china",
     {"graph": "https://microsoftgraph.chinacloudapi.cn/.default"}),
])
def test_the_cloud_is_recognised_from_any_of_its_real_hosts(urls, name, scopes) -> None:
    conn = toolkit.connect(credential=RecordingCredential(), progress=False, **urls)
    assert conn.cloud.name == name and conn.header_prefix == "x-ms-"
    assert {f: conn.scope_for(f) for f in scopes} == scopes
    [(key, given)] = urls.items()
    assert conn.url_for(key.removesuffix("_url")) == given.rstrip("/")  # the URL given is kept
    conn.close()


def test_dod_graph_takes_its_own_scope_when_the_cloud_is_named() -> None:
    conn = toolkit.connect(cloud="usgov", graph_url="https://dod-graph.microsoft.us",
                           token="t" * 20, progress=False)
    assert conn.scope_for("graph") == "https://dod-graph.microsoft.us/.default"
    assert conn.scope_for("arm") == "https://management.usgovcloudapi.net/.default"
    conn.close()


@pytest.mark.parametrize("urls", [
    {"arm_url": "https://westus.management.azure.com"},
    {"maps_url": "https://jp.atlas.microsoft.com"},
    {"graph_url": "https://graph.microsoft.us", "maps_url": "https://us.atlas.microsoft.com"},
    {"base_url": "https://gateway.usgovcloudapi.net"},
])
def test_an_unlisted_host_of_a_real_cloud_is_refused_naming_cloud(urls) -> None:
    with pytest.raises(ValidationError) as info:
        toolkit.connect(credential=RecordingCredential(), progress=False, **urls)
    assert info.value.parameter == "cloud" and "cloud=" in info.value.rule


def test_other_hosts_keep_the_neutral_words() -> None:
    conn = toolkit.connect(base_url="https://gateway.contoso.example", token="t" * 20,
                           progress=False)
    assert conn.cloud is NEUTRAL
    conn.close()


def _authority_of(host: str) -> Any:
    from azure.identity import ClientSecretCredential

    return ClientSecretCredential("00000000-0000-0000-0000-000000000001", "client", "secret",
                                  authority=host)


@pytest.mark.parametrize("name", ["usgov", "china"])
def test_a_credential_object_of_the_public_sign_in_host_is_refused_in_a_sovereign_cloud(
        name, monkeypatch) -> None:
    # a service principal built for the public cloud would sign in at login.microsoftonline.com
    from azure.identity import AzureAuthorityHosts, DefaultAzureCredential

    monkeypatch.delenv("AZURE_AUTHORITY_HOST", raising=False)
    for credential in (DefaultAzureCredential(), _authority_of(AzureAuthorityHosts.
                                                                 AZURE_PUBLIC_CLOUD)):
        with pytest.raises(ValidationError) as info:
            toolkit.connect(cloud=name, credential=credential, progress=False)
        assert info.value.parameter == "credential"
        assert "login.microsoftonline.com" in info.value.rule
        assert get_cloud(name).authority_host in info.value.rule
        assert "credential='default'" in info.value.rule


def test_a_credential_object_of_the_clouds_sign_in_host_is_taken() -> None:
    from azure.identity import AzureAuthorityHosts, ChainedTokenCredential

    for name, host in (("usgov", AzureAuthorityHosts.AZURE_GOVERNMENT),
                       ("china", AzureAuthorityHosts.AZURE_CHINA),
                       ("public", AzureAuthorityHosts.AZURE_PUBLIC_CLOUD)):
        cred = ChainedTokenCredential(_authority_of(host))
        conn = toolkit.connect(cloud=name, credential=cred, progress=False)
        assert conn.credential is cred
        conn.close()
    # a credential that names no sign-in host (a token source of one's own) is not judged
    conn = toolkit.connect(cloud="usgov", credential=RecordingCredential(), progress=False)
    conn.close()


def test_a_shortcut_word_gets_the_clouds_sign_in_host() -> None:
    from toolkit._core.credentials import authority_hosts

    for name in ("usgov", "china", "public"):
        conn = toolkit.connect(cloud=name, credential="default", progress=False)
        assert authority_hosts(conn.credential) == {get_cloud(name).authority_host}
        conn.close()


def test_the_module_imports_nothing_of_the_package_beyond_the_spec() -> None:
    from tests._spec.conftest import imports_beyond_spec
    from toolkit._spec import clouds

    assert imports_beyond_spec(clouds) == []
    assert clouds.__all__
