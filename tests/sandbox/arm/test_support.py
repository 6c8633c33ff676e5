"""The sandbox's support catalogue: the world's services and problem classifications, and the two
routes over HTTP (localized by ``Accept-Language``, paged, the consents, the refusals)."""

from __future__ import annotations

import uuid

import pytest

from tests.sandbox.arm.conftest import arm_caller
from toolkit.sandbox.arm.support import (
    _CONSENTS,
    _GENERAL,
    LANGUAGES,
    PAGE_SIZE,
    build_world,
)
from toolkit.sandbox.server import Sandbox
from toolkit.sandbox.world import World

API = "api-version=2026-06-01"


@pytest.fixture(scope="module")
def support(sandbox):
    return sandbox.world.section("support")


def _largest(support):
    return max(support.services, key=lambda s: len(s.classifications))


def _partner(support):
    return next(s for s in support.services if s.display[0] == "Partner Analytics Workspace")


def _services_path(sandbox) -> str:
    return f"/providers/{sandbox.namespace}.Support/services?{API}"


def _classifications_path(sandbox, name: str) -> str:
    return f"/providers/{sandbox.namespace}.Support/services/{name}/problemClassifications?{API}"


def _read(arm, url: str, headers=None) -> list[dict]:
    pages = []
    while url:
        r = arm("GET", url, headers=headers)
        assert r.status_code == 200, r.text[:300]
        pages.append(r.json())
        url = pages[-1].get("nextLink")
    return pages


# ------------------------------------------------------------------------------ the world
def test_the_catalogue_is_the_same_for_the_same_seed() -> None:
    one, two = build_world(World(7)), build_world(World(7))
    assert one == two
    other = build_world(World(8))
    assert [s.display for s in other.services] == [s.display for s in one.services]
    assert {s.name for s in other.services}.isdisjoint({s.name for s in one.services})


def test_the_catalogue_is_realistic(support) -> None:
    total = sum(len(s.classifications) for s in support.services)
    needing = sum(1 for s in support.services for c in s.classifications if c["consent"])
    assert len(support.services) >= 30 and total >= 300
    assert 0 < needing < total / 4


def test_names_are_unique_version_4_guids(support) -> None:
    names = [s.name for s in support.services] + [
        c["name"] for s in support.services for c in s.classifications]
    assert len(set(names)) == len(names)
    assert all(uuid.UUID(n).version == 4 and str(uuid.UUID(n)) == n for n in names)


def test_services_and_their_classifications_are_in_english_order(support) -> None:
    displays = [s.display[0].lower() for s in support.services]
    assert displays == sorted(displays)
    for s in support.services:
        texts = [c["text"][0] for c in s.classifications]
        assert texts == sorted(texts)
        assert _GENERAL in [c["text"] for c in s.classifications]
        assert all(len(c["text"]) == len(LANGUAGES) for c in s.classifications)
        assert all(c["createdAt"] <= c["lastModifiedAt"] for c in s.classifications)


def test_only_partner_services_ask_for_consent(support) -> None:
    for s in support.services:
        consents = {c["consent"] for c in s.classifications} - {None}
        assert consents <= set(_CONSENTS)
        assert len(consents) <= 1
        if consents:  # every area problem of such a service needs it; the general one may not
            assert all(c["consent"] for c in s.classifications if c["text"] != _GENERAL)
    assert any(c["consent"] for c in _partner(support).classifications)


def test_resource_types_are_upper_case_under_a_provider(sandbox, support) -> None:
    words = sandbox.words
    hosted = f"{words.hosted_cluster_provider}/{words.hosted_cluster_type}".upper()
    for s in support.services:
        for t in s.resource_types:
            assert t == t.upper()
            assert t.startswith(f"{sandbox.namespace.upper()}.") or t == hosted
    assert any(hosted in s.resource_types for s in support.services)


def test_service_lookup_ignores_case(support) -> None:
    s = support.services[3]
    assert support.service(s.name.upper()) is s and support.service(str(uuid.uuid4())) is None


# ------------------------------------------------------------------------------ over HTTP
@pytest.mark.parametrize("header, language", [
    (None, "en"), ("de-DE", "de"), ("fr-CA;q=0.8", "fr"), ("ja-JP, de;q=0.5", "de"),
    ("ja, ko", "en"), ("EN-gb", "en"), ("", "en"),
])
def test_services_are_localized_and_sorted_in_that_language(arm, sandbox, support, header,
                                                            language) -> None:
    r = arm("GET", _services_path(sandbox),
            headers={"Accept-Language": header} if header is not None else None)
    assert r.status_code == 200 and r.headers["Content-Language"] == language
    index = LANGUAGES.index(language)
    names = [v["properties"]["displayName"] for v in r.json()["value"]]
    assert names == sorted((s.display[index] for s in support.services), key=str.lower)
    by_name = {s.name: s for s in support.services}
    for v in r.json()["value"]:
        s = by_name[v["name"]]
        assert v["id"] == f"/providers/{sandbox.namespace}.Support/services/{s.name}"
        assert v["type"] == f"{sandbox.namespace}.Support/services"
        assert v["properties"]["resourceTypes"] == s.resource_types


def test_classifications_are_every_page_in_order(arm, sandbox, support) -> None:
    service = _largest(support)
    assert len(service.classifications) > PAGE_SIZE
    pages = _read(arm, _classifications_path(sandbox, service.name))
    assert len(pages) == -(-len(service.classifications) // PAGE_SIZE)
    assert all(len(p["value"]) == PAGE_SIZE for p in pages[:-1])
    items = [v for p in pages for v in p["value"]]
    assert [v["name"] for v in items] == [c["name"] for c in service.classifications]
    base = f"/providers/{sandbox.namespace}.Support/services/{service.name}/problemClassifications"
    for v, c in zip(items, service.classifications, strict=True):
        assert v["id"] == f"{base}/{c['name']}"
        assert v["properties"]["displayName"] == c["text"][0]
        assert v["systemData"]["createdAt"] <= v["systemData"]["lastModifiedAt"]


def test_every_page_speaks_the_asked_language(arm, sandbox, support) -> None:
    service = _largest(support)
    pages = _read(arm, _classifications_path(sandbox, service.name),
                  headers={"Accept-Language": "fr"})
    assert [v["properties"]["displayName"] for p in pages for v in p["value"]] == \
        [c["text"][2] for c in service.classifications]


def test_consents_are_described_in_the_language_and_the_clouds_word(arm, sandbox,
                                                                    support) -> None:
    service = _partner(support)
    pages = _read(arm, _classifications_path(sandbox, service.name),
                  headers={"Accept-Language": "de"})
    items = {v["name"]: v for p in pages for v in p["value"]}
    for c in service.classifications:
        props = items[c["name"]]["properties"]
        if c["consent"] is None:
            assert "secondaryConsentEnabled" not in props
            continue
        [consent] = props["secondaryConsentEnabled"]
        assert consent["type"] == c["consent"]
        assert consent["description"] == _CONSENTS[c["consent"]][1].replace(
            "Vendor", sandbox.namespace)


def test_a_service_name_in_upper_case_is_the_same_service(arm, sandbox, support) -> None:
    service = support.services[0]
    upper = arm("GET", _classifications_path(sandbox, service.name.upper())).json()
    assert [v["name"] for v in upper["value"]] == \
        [c["name"] for c in service.classifications[:PAGE_SIZE]]


def test_an_unknown_service_is_404_naming_where_to_look(arm, sandbox) -> None:
    r = arm("GET", _classifications_path(sandbox, str(uuid.UUID(int=1))))
    err = r.json()["error"]
    assert r.status_code == 404 and err["code"] == "ResourceNotFound"
    assert err["target"] == "serviceName" and "Support/services" in err["message"]


@pytest.mark.parametrize("token, status", [("x", 400), ("-1", 400), ("past", 400),
                                           ("end", 200)])
def test_classification_skip_tokens(arm, sandbox, support, token, status) -> None:
    service = _largest(support)
    n = len(service.classifications)
    token = {"past": str(n + 1), "end": str(n)}.get(token, token)
    r = arm("GET", _classifications_path(sandbox, service.name) + f"&$skiptoken={token}")
    assert r.status_code == status
    if status == 400:
        assert r.json()["error"]["code"] == "InvalidSkipToken"
    else:
        assert r.json() == {"value": []}


def test_in_a_real_clouds_words_the_consents_name_its_company() -> None:
    with Sandbox(seed=7, cloud="public") as sb:
        service = _partner(sb.world.section("support"))
        pages = _read(arm_caller(sb), _classifications_path(sb, service.name))
        text = repr(pages)
        assert f"allow {sb.namespace} and Partner" in text and "Vendor" not in text
