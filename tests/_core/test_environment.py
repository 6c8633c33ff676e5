"""What connect() is asked, completed from the TOOLKIT_* environment and checked before
anything starts or is sent."""

from __future__ import annotations

from typing import Any

import pytest

from toolkit._core.environment import (
    Asked,
    check_proxies,
    cloud_named,
    cloud_of,
    settings_from_env,
    settings_of,
)
from toolkit._core.errors import ValidationError

NOTHING: dict[str, Any] = dict(
    base_url=None, urls={"arm": None, "maps": None, "graph": None, "fabric": None},
    credential=None, token=None, maps_key=None, maps_sas_token=None, maps_client_id=None,
    cloud=None, namespace=None, header_prefix=None, verify=True, sandbox=None, proxies=None)


def test_the_environment_fills_in_what_the_keywords_leave_out() -> None:
    env = {"TOOLKIT_MAPS_URL": "https://maps.example", "TOOLKIT_TOKEN": "t0k",
           "TOOLKIT_NAMESPACE": "Contoso", "TOOLKIT_VERIFY": "false", "TOOLKIT_SANDBOX": "yes",
           "TOOLKIT_CLOUD": "AzureCloud"}
    asked = Asked.of(env, **{**NOTHING, "urls": {**NOTHING["urls"],
                                                 "arm": "https://arm.example"}})
    assert asked.urls == {"arm": "https://arm.example", "maps": "https://maps.example",
                          "graph": None, "fabric": None}
    assert asked.token == "t0k" and asked.namespace == "Contoso"
    assert asked.verify is False and asked.sandbox is True
    assert asked.cloud is not None and asked.cloud.name == "public"
    assert asked.configured
    assert not Asked.of({}, **NOTHING).configured


def test_a_keyword_wins_over_its_variable() -> None:
    asked = Asked.of({"TOOLKIT_TOKEN": "from-env", "TOOLKIT_BASE_URL": "https://env.example"},
                     **{**NOTHING, "token": "given", "base_url": "https://given.example"})
    assert asked.token == "given" and asked.base_url == "https://given.example"


def test_a_credential_word_waits_for_the_cloud() -> None:
    asked = Asked.of({}, **{**NOTHING, "credential": "CLI"})
    assert asked.credential is None and asked.word == ("cli", "credential")
    from_env = Asked.of({"TOOLKIT_CREDENTIAL": "default"}, **NOTHING)
    assert from_env.word == ("default", "TOOLKIT_CREDENTIAL")
    with pytest.raises(ValidationError) as err:
        Asked.of({"TOOLKIT_CREDENTIAL": "password"}, **NOTHING)
    assert err.value.parameter == "TOOLKIT_CREDENTIAL"


@pytest.mark.parametrize(("env", "keywords", "parameter"), [
    ({"TOOLKIT_ARM_URL": "http://arm.example"}, {}, "arm_url"),
    ({}, {"base_url": "http://gateway.example"}, "base_url"),
    ({"TOOLKIT_CLOUD": "mars"}, {}, "TOOLKIT_CLOUD"),
    ({}, {"cloud": "mars"}, "cloud"),
    ({}, {"proxies": {"https": "ftp://proxy"}}, "proxies"),
])
def test_what_cannot_be_used_is_refused_naming_where_it_came_from(
        env: dict[str, str], keywords: dict[str, Any], parameter: str) -> None:
    with pytest.raises(ValidationError) as err:
        Asked.of(env, **{**NOTHING, **keywords})
    assert err.value.parameter == parameter


def test_a_sandbox_given_keeps_its_own_cloud() -> None:
    class Given:
        cloud = cloud_named("usgov", "cloud")

    with pytest.raises(ValidationError, match="usgov cloud's vocabulary"):
        Asked.of({}, **{**NOTHING, "cloud": "public", "sandbox": Given()})
    # a sandbox given is not asked which cloud the environment names
    assert Asked.of({"TOOLKIT_CLOUD": "china"}, **{**NOTHING, "sandbox": Given()}).cloud is None


def test_settings_come_from_keywords_over_variables() -> None:
    env = {"TOOLKIT_MAX_RETRIES": "2", "TOOLKIT_TRUSTED_HOSTS": " a.example, ,b.example",
           "TOOLKIT_PROGRESS": "0"}
    assert settings_from_env(env) == {"max_retries": 2, "progress": False,
                                      "trusted_hosts": ("a.example", "b.example")}
    settings = settings_of({"max_retries": 7}, env)
    assert settings.max_retries == 7 and settings.progress is False
    with pytest.raises(ValidationError) as err:
        settings_of({}, {"TOOLKIT_TIMEOUT": "soon"})
    assert err.value.parameter == "TOOLKIT_TIMEOUT"
    with pytest.raises(ValidationError, match="not a connect\\(\\) setting") as err:
        settings_of({"retries": 3}, {})
    assert err.value.parameter == "retries"


def test_proxies_are_a_dict_of_proxy_urls_and_clouds_are_known_by_their_hosts() -> None:
    assert check_proxies(None) is None
    assert check_proxies({"https": "http://proxy:8080"}) == {"https": "http://proxy:8080"}
    for bad in (["http://proxy"], {"https": "proxy:8080"}, {"https": 8080}):
        with pytest.raises(ValidationError):
            check_proxies(bad)
    assert cloud_of({"arm": "https://management.usgovcloudapi.net/"}).name == "usgov"
    assert cloud_of({"base": "http://127.0.0.1:8080"}).name == "neutral"
