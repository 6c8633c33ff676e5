"""Credential shortcut words: each builds its azure-identity class, given the cloud's authority."""

from __future__ import annotations

from typing import Any

import azure.identity
import pytest
from azure.identity import AzureAuthorityHosts as Hosts

import toolkit
from toolkit._core.errors import ValidationError


@pytest.fixture(autouse=True)
def _no_env(monkeypatch) -> None:
    for var in ("TOOLKIT_CLOUD", "TOOLKIT_CREDENTIAL", "TOOLKIT_TOKEN", "TOOLKIT_BASE_URL",
                "TOOLKIT_SANDBOX"):
        monkeypatch.delenv(var, raising=False)


@pytest.mark.parametrize("word, cls", [
    ("default", azure.identity.DefaultAzureCredential),
    ("cli", azure.identity.AzureCliCredential),
    ("managed_identity", azure.identity.ManagedIdentityCredential),
    ("interactive", azure.identity.InteractiveBrowserCredential),
    ("device_code", azure.identity.DeviceCodeCredential),
])
@pytest.mark.parametrize("cloud, authority", [("public", Hosts.AZURE_PUBLIC_CLOUD),
                                              ("usgov", Hosts.AZURE_GOVERNMENT),
                                              ("AzureChinaCloud", Hosts.AZURE_CHINA)])
def test_each_word_builds_its_class_for_the_clouds_authority(word, cls, cloud, authority,
                                                             monkeypatch) -> None:
    made: list[dict[str, Any]] = []

    class Recorded(cls):  # type: ignore[misc, valid-type]
        def __init__(self, **kwargs: Any) -> None:
            made.append(kwargs)
            super().__init__(**kwargs)

    monkeypatch.setattr(azure.identity, cls.__name__, Recorded)
    conn = toolkit.connect(cloud=cloud, credential=word, progress=False)
    assert isinstance(conn.credential, cls) and conn.sandbox is None
    takes_authority = word in ("default", "interactive", "device_code")
    assert made == [{"authority": authority} if takes_authority else {}]
    if word in ("interactive", "device_code"):  # where the object shows it (no network)
        assert conn.credential._authority == f"https://{authority}"


def test_the_environment_takes_the_same_words(monkeypatch) -> None:
    monkeypatch.setenv("TOOLKIT_CREDENTIAL", "Device-Code")
    monkeypatch.setenv("TOOLKIT_CLOUD", "usgov")
    conn = toolkit.connect(progress=False)
    assert isinstance(conn.credential, azure.identity.DeviceCodeCredential)
    assert conn.credential._authority == f"https://{Hosts.AZURE_GOVERNMENT}"
    monkeypatch.setenv("TOOLKIT_CREDENTIAL", "cli")
    assert isinstance(toolkit.connect(progress=False).credential,
                      azure.identity.AzureCliCredential)


@pytest.mark.parametrize("where", ["argument", "environment"])
def test_an_unknown_word_is_refused_naming_the_words(where, monkeypatch) -> None:
    with pytest.raises(ValidationError) as info:
        if where == "argument":
            toolkit.connect(credential="password", progress=False)
        else:
            monkeypatch.setenv("TOOLKIT_CREDENTIAL", "password")
            toolkit.connect(progress=False)
    assert info.value.parameter == ("credential" if where == "argument"
                                    else "TOOLKIT_CREDENTIAL")
    for word in ("'cli'", "'default'", "'managed_identity'", "'interactive'", "'device_code'"):
        assert word in str(info.value)


def test_a_word_without_azure_identity_says_what_to_install(monkeypatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "azure.identity", None)
    with pytest.raises(ValidationError, match=r"cloudops-frames\[identity\]") as info:
        toolkit.connect(credential="cli", progress=False)
    assert info.value.parameter == "credential"


def test_a_worker_builds_the_word_of_its_environment_for_the_cloud_of_its_url(monkeypatch) -> None:
    from toolkit.connection import environment_credential

    monkeypatch.setenv("TOOLKIT_CREDENTIAL", "device_code")
    cred = environment_credential("https://management.usgovcloudapi.net")
    assert isinstance(cred, azure.identity.DeviceCodeCredential)
    assert cred._authority == f"https://{Hosts.AZURE_GOVERNMENT}"
    # a gateway of no known cloud: azure-identity's default authority, the public cloud's
    cred = environment_credential("https://gateway.example.test")
    assert cred._authority == f"https://{Hosts.AZURE_PUBLIC_CLOUD}"
    monkeypatch.setenv("TOOLKIT_CREDENTIAL", "nope")
    with pytest.raises(ValidationError) as info:
        environment_credential("https://management.azure.com")
    assert info.value.parameter == "TOOLKIT_CREDENTIAL"
