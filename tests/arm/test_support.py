"""support_services and problem_classifications (every page, localized, consents), over HTTP."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import toolkit
from tests.conftest import example
from tests.replay import Answer, replay_server
from toolkit._core.errors import TruncatedResultWarning, ValidationError
from toolkit.arm._schemas import PROBLEM_CLASSIFICATIONS, SUPPORT_SERVICES
from toolkit.sandbox.arm.support import LANGUAGES, PAGE_SIZE


@pytest.fixture(scope="module")
def support(sandbox):
    return sandbox.world.section("support")


def _largest(support):
    return max(support.services, key=lambda s: len(s.classifications))


def _partner(support):
    return next(s for s in support.services if s.display[0] == "Partner Analytics Workspace")


def test_example_parses_into_one_row_per_classification(waits) -> None:
    ex = example("06-support-problem-classifications", "ListProblemClassifications.json")
    body = ex["responses"]["200"]["body"]
    with replay_server() as rp:
        rp.add("GET", "/problemClassifications", Answer(200, body))
        conn = toolkit.connect(base_url=rp.url, token="example-token-0123456789", progress=False)
        df = toolkit.problem_classifications(ex["parameters"]["serviceName"], connection=conn)
        sent = rp.seen[0][1]
    assert "/providers/Vendor.Support/services/service_guid/problemClassifications" in sent
    assert "api-version=2026-06-01" in sent
    assert list(df.columns) == PROBLEM_CLASSIFICATIONS.names
    assert df["name"].tolist() == [v["name"] for v in body["value"]]
    assert df["id"].tolist() == [v["id"] for v in body["value"]]
    assert df["type"].eq("Vendor.Support/problemClassifications").all()
    assert df["displayName"].tolist() == [v["properties"]["displayName"] for v in body["value"]]
    assert df["secondaryConsentEnabled"].tolist() == [
        v["properties"]["secondaryConsentEnabled"] for v in body["value"]]
    assert df["service_name"].eq("service_guid").all()
    assert df["systemData.createdAt"].isna().all()
    for col in PROBLEM_CLASSIFICATIONS.columns:
        assert str(df[col.name].dtype) == str(col.dtype()), col.name
    consents = toolkit.classification_consents(df)
    assert len(consents) == 4 and consents["secondaryConsentEnabled.type"].eq(
        "PartnerConsent").all()
    assert consents["secondaryConsentEnabled.description"].str.startswith("For faster").all()


def test_services_are_discovered(conn, sandbox, support) -> None:
    with sandbox.recording() as log:
        df = toolkit.support_services(connection=conn)
    assert len(log) == 1 and list(df.columns) == SUPPORT_SERVICES.names
    assert len(df) == len(support.services) >= 30
    assert sorted(df["name"]) == sorted(s.name for s in support.services)
    assert all(i == f"/providers/Vendor.Support/services/{n}" for i, n in zip(
        df["id"], df["name"], strict=True))
    k8s = df[df["displayName"] == "Managed Kubernetes Service"].iloc[0]
    assert k8s["resourceTypes"] == ["VENDOR.CONTAINERSERVICE/MANAGEDCLUSTERS"]
    assert df["displayName"].tolist() == sorted(df["displayName"], key=str.lower)


def test_every_page_is_followed(conn, sandbox, support) -> None:
    service = _largest(support)
    assert len(service.classifications) > PAGE_SIZE
    with sandbox.recording() as log:
        df = toolkit.problem_classifications(service.name, connection=conn)
    assert len(log) == -(-len(service.classifications) // PAGE_SIZE)
    assert df["name"].tolist() == [c["name"] for c in service.classifications]
    assert df["displayName"].tolist() == [c["text"][0] for c in service.classifications]
    assert df["systemData.createdAt"].notna().all()
    assert str(df["systemData.createdAt"].dtype) == "datetime64[ns, UTC]"
    assert df["service_name"].eq(service.name).all()
    assert len(df.attrs["request_ids"]) == len(log)


@pytest.mark.parametrize("language, index", [("de-DE", 1), ("fr", 2), ("de", 1), ("ja-JP", 0),
                                             (None, 0)])
def test_display_names_are_localized_on_every_page(conn, support, language, index) -> None:
    service = _largest(support)
    df = toolkit.problem_classifications(service.name, language=language, connection=conn)
    assert df["displayName"].tolist() == [c["text"][index] for c in service.classifications]
    assert LANGUAGES[index] in ("en", "de", "fr")
    names = toolkit.support_services(language=language, connection=conn)
    assert set(names["displayName"]) == {s.display[index] for s in support.services}


def test_consents_explode_to_one_row_each(conn, support) -> None:
    service = _partner(support)
    df = toolkit.problem_classifications(service.name, language="de", connection=conn)
    needing = [c for c in service.classifications if c["consent"]]
    consents = toolkit.classification_consents(df)
    assert len(consents) == len(needing) > 0
    assert consents["name"].tolist() == [c["name"] for c in needing]
    assert consents["secondaryConsentEnabled.type"].eq("PartnerConsent").all()
    assert consents["secondaryConsentEnabled.description"].str.startswith("Erlauben").all()
    assert "secondaryConsentEnabled" not in consents.columns
    everything = toolkit.classification_consents(df, keep_empty=True)
    assert len(everything) == len(df)
    assert everything["secondaryConsentEnabled.type"].isna().sum() == len(df) - len(needing)
    plain = toolkit.problem_classifications(_largest(support).name, connection=conn)
    assert toolkit.classification_consents(plain).empty
    assert plain["secondaryConsentEnabled"].isna().all()


def test_classification_consents_keeps_two_consents_apart() -> None:
    df = pd.DataFrame({"name": ["a", "b"], "secondaryConsentEnabled": [
        [{"type": "PartnerConsent", "description": "x"},
         {"type": "MarketplacePartnerConsent", "description": "y"}], None]},
        index=[5, 5])
    out = toolkit.classification_consents(df)
    assert out["name"].tolist() == ["a", "a"]
    assert out["secondaryConsentEnabled.type"].tolist() == ["PartnerConsent",
                                                            "MarketplacePartnerConsent"]
    with pytest.raises(ValidationError) as info:
        toolkit.classification_consents(pd.DataFrame({"name": ["a"]}))
    assert info.value.parameter == "df"


def test_a_service_id_is_accepted_as_its_name(conn, support) -> None:
    service = support.services[0]
    by_id = toolkit.problem_classifications(f"/providers/Vendor.Support/services/{service.name}",
                                            connection=conn)
    assert by_id["name"].tolist() == [c["name"] for c in service.classifications]
    assert by_id["service_name"].eq(service.name).all()


def test_max_items_truncates_with_a_warning(conn, support) -> None:
    service = _largest(support)
    with pytest.warns(TruncatedResultWarning):
        df = toolkit.problem_classifications(service.name, max_items=PAGE_SIZE + 3,
                                             connection=conn)
    assert len(df) == PAGE_SIZE + 3 and df.attrs["truncated"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        df = toolkit.problem_classifications(service.name,
                                             max_items=len(service.classifications),
                                             connection=conn)
    assert not df.attrs["truncated"]


@pytest.mark.parametrize("kind", ["429", "503"])
def test_paging_under_faults_loses_and_duplicates_nothing(conn, sandbox, support, kind) -> None:
    service = _largest(support)
    # every rule fires for sure (rate 1): no draw from the sandbox's shared fault generator
    sandbox.inject(kind, path="problemClassifications", retry_after=1, count=1)
    sandbox.inject(kind, path="skiptoken=10", retry_after=1, count=2)
    df = toolkit.problem_classifications(service.name, language="fr", connection=conn)
    assert df["name"].tolist() == [c["name"] for c in service.classifications]
    assert conn.stats.retries >= 3


def test_unknown_service_is_not_found(conn) -> None:
    with pytest.raises(toolkit.NotFoundError) as info:
        toolkit.problem_classifications("00000000-0000-4000-8000-000000000000", connection=conn)
    assert info.value.code == "ResourceNotFound" and info.value.target == "serviceName"


@pytest.mark.parametrize("kwargs, param", [
    ({"service_name": ""}, "service_name"),
    ({"service_name": "a/b"}, "service_name"),
    ({"service_name": "has space"}, "service_name"),
    ({"service_name": None}, "service_name"),
    ({"service_name": 42}, "service_name"),
    ({"service_name": "ok", "language": "english!"}, "language"),
    ({"service_name": "ok", "language": ""}, "language"),
    ({"service_name": "ok", "language": 7}, "language"),
    ({"service_name": "ok", "max_items": -1}, "max_items"),
    ({"service_name": "ok", "api_version": ""}, "api_version"),
])
def test_bad_arguments_fail_before_any_request(conn, sandbox, kwargs, param) -> None:
    with sandbox.recording() as log:
        with pytest.raises(ValidationError) as info:
            toolkit.problem_classifications(connection=conn, **kwargs)
        if param in ("language", "max_items", "api_version"):
            kw = {k: v for k, v in kwargs.items() if k != "service_name"}
            with pytest.raises(ValidationError):
                toolkit.support_services(connection=conn, **kw)
    assert info.value.parameter == param and log == []
