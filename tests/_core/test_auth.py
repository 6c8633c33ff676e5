"""Tokens, credentials and their refusal, over real HTTP."""

from __future__ import annotations

import pytest

import toolkit
from toolkit._core.errors import (
    AuthenticationError,
    ValidationError,
)
from toolkit._core.secrets import Secret


def test_401_raises_authentication_error_without_the_token(sandbox, waits) -> None:
    expired = sandbox.token("arm", expires_in=-60)
    conn = toolkit.connect(base_url=sandbox.url, token=expired, progress=False)
    conn.sleep = waits
    with pytest.raises(AuthenticationError) as info:
        toolkit.sql_operations(connection=conn)
    assert info.value.status == 401
    assert info.value.code == "ExpiredAuthenticationToken"
    assert expired not in str(info.value) and expired not in repr(info.value)
    assert "credential" in str(info.value)
    assert expired not in repr(conn)


def test_wrong_audience_token_is_refused(sandbox) -> None:
    graph_token = sandbox.token("graph")
    conn = toolkit.connect(base_url=sandbox.url, token=graph_token, progress=False)
    with pytest.raises(AuthenticationError) as info:
        toolkit.sql_operations(connection=conn)
    assert info.value.code == "InvalidAuthenticationTokenAudience"


def test_token_expiring_is_refreshed_from_the_credential(sandbox) -> None:
    credential = sandbox.credential(expires_in=1)
    conn = toolkit.connect(base_url=sandbox.url, credential=credential, progress=False)
    toolkit.sql_operations(connection=conn)
    toolkit.sql_operations(connection=conn)
    # tokens that expire within azure-core's refresh window are fetched again for each request
    assert credential.issued >= 2


# ---------------------------------------------------------------- maps, as the service wants it
@pytest.mark.parametrize("pasted", ["sv=2024&sig=abc", "jwt-sas sv=2024&sig=abc",
                                    "JWT-SAS   sv=2024&sig=abc", "  jwt-sas sv=2024&sig=abc  "])
def test_a_sas_token_is_sent_with_its_scheme_once(pasted: str) -> None:
    # the docs and the portal show "jwt-sas <token>"; a value pasted so was sent doubled
    from toolkit._core.auth import sas_token_text

    assert sas_token_text(Secret(pasted, "maps SAS token")) == "sv=2024&sig=abc"


def test_a_sas_token_that_is_only_the_word_is_kept_for_the_service_to_refuse() -> None:
    from toolkit._core.auth import sas_token_text

    assert sas_token_text(Secret("jwt-sas", "maps SAS token")) == "jwt-sas"


def test_a_maps_bearer_token_without_the_account_id_is_refused_before_any_request(
        sandbox) -> None:
    conn = toolkit.connect(base_url=sandbox.url, token=sandbox.token("maps"), progress=False)
    with sandbox.recording() as log, pytest.raises(ValidationError) as info:
        toolkit.traffic_incidents((1.50, 42.49, 1.56, 42.53), connection=conn)
    assert info.value.parameter == "maps_client_id" and "x-vendor-client-id" in info.value.rule
    assert log == []
    conn.close()
    # with it, the same token is taken
    conn = toolkit.connect(base_url=sandbox.url, token=sandbox.token("maps"), progress=False,
                           maps_client_id=sandbox.authority.maps_client_id)
    df = toolkit.traffic_incidents((1.50, 42.49, 1.56, 42.53), connection=conn)
    assert df.attrs["operation"] == "traffic_incidents"
    conn.close()


def test_a_sas_token_pasted_with_its_scheme_is_taken_by_the_service(sandbox) -> None:
    conn = toolkit.connect(base_url=sandbox.url, progress=False,
                           maps_sas_token="jwt-sas " + sandbox.authority.sas_token())
    with sandbox.recording() as log:
        df = toolkit.traffic_incidents((1.50, 42.49, 1.56, 42.53), connection=conn)
    assert df.attrs["operation"] == "traffic_incidents"
    assert [r.status for r in log] == [200]
    conn.close()
