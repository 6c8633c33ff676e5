"""URLs of a family: segments, query strings and the origin rule, on their own."""

from __future__ import annotations

import pytest

from toolkit._core.config import FamilyConfig, Settings
from toolkit._core.errors import UntrustedOriginError, ValidationError
from toolkit._core.urls import build_url, check_origin, segment, short


def test_a_segment_can_neither_add_segments_nor_climb() -> None:
    assert segment("a/b?c#d%e", "name") == "a%2Fb%3Fc%23d%25e"
    assert segment("rg-web_1.(x)", "name") == "rg-web_1.(x)"
    for bad in (".", ".."):
        with pytest.raises(ValidationError) as info:
            segment(bad, "name")
        assert info.value.parameter == "name"


def test_build_url_keeps_odata_names_readable_and_drops_none() -> None:
    url = build_url("https://h/", "/x", {"$top": 5, "$filter": "a eq 'b'", "skip": None})
    assert url == "https://h/x?$top=5&$filter=a%20eq%20%27b%27"
    assert build_url("https://h", "https://h/next?page=2", {"k": "v"}) == \
        "https://h/next?page=2&k=v"
    assert short("https://h/x/y?secret=1") == "/x/y"


def test_the_origin_rule_names_the_host_and_why() -> None:
    config = FamilyConfig("arm", "https://management.example",
                          settings=Settings(trusted_hosts=("trusted.example",)))
    check_origin(config, "https://management.example/x", None)
    check_origin(config, "https://trusted.example/x", None)
    with pytest.raises(UntrustedOriginError, match=r"probe: .*elsewhere\.example.*trusted_hosts"):
        check_origin(config, "https://elsewhere.example/x", "probe")
    with pytest.raises(UntrustedOriginError, match="plain http is allowed only to loopback"):
        check_origin(config, "http://management.example/x", None)
    local = FamilyConfig("arm", "https://127.0.0.1:8443")
    with pytest.raises(UntrustedOriginError, match=r"127\.0\.0\.1 over http instead of https"):
        check_origin(local, "http://127.0.0.1:8443/x", None)
    with pytest.raises(UntrustedOriginError, match="not an http"):
        check_origin(config, "ftp://management.example/x", None)


def test_a_url_on_another_host_is_asked_at_the_familys_own_origin() -> None:
    from toolkit._core.config import FamilyConfig, Settings
    from toolkit._core.urls import at_own_origin

    config = FamilyConfig(family="fabric", base_url="https://api.fabric.microsoft.com",
                          settings=Settings(trusted_hosts=("private.example",)))
    foreign = ("https://wabi-us-central-b-primary-redirect.analysis.windows.net"
               "/v1/operations/9c29300a?x=1#frag")
    assert at_own_origin(config, foreign) == \
        "https://api.fabric.microsoft.com/v1/operations/9c29300a?x=1"
    # the family's own and trusted origins are kept; an unreadable one is left to be refused
    for kept in ("https://api.fabric.microsoft.com/v1/operations/1",
                 "https://private.example/v1/operations/1", "https://a@b.example/v1/x",
                 "ftp://x/y"):
        assert at_own_origin(config, kept) == kept
    assert at_own_origin(config, "http://evil.example/v1/operations/1") == \
        "https://api.fabric.microsoft.com/v1/operations/1"
