"""Tokens, credentials and their refusal, over real HTTP."""

from __future__ import annotations

import pytest

import toolkit
from toolkit._core.errors import (
    AuthenticationError,
)


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
