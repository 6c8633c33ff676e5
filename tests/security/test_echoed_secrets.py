"""No secret reaches the user, even from a server that echoes it back.

A hostile service answers errors whose body repeats the request's ``Authorization`` and
``subscription-key`` headers, and a ``Retry-After`` holding the token. Neither the static token,
the maps key, nor a token a credential object handed out may then appear in an exception's text,
its repr or traceback, a warning, a frame (a fan-out's ``error`` column) or its CSV export, or any
log record of any toolkit, azure or urllib3 logger at any level.
"""

from __future__ import annotations

import logging
import time
import traceback
import warnings
from typing import Any

import pytest
from azure.core.credentials import AccessToken

import toolkit
from tests.security.conftest import MAPS_KEY, TOKEN, connect_to
from tests.security.hostile import Answer, Hostile, Seen, json_answer

SUB = "00000000-0000-0000-0000-000000000001"
ISSUED = "eyJ-ISSUED-by-credential-SECRET-91c2"


def _echo(seen: Seen, server: Hostile) -> Answer:
    """An error body that repeats the credentials the request carried."""
    auth = seen.headers.get("Authorization", "")
    key = seen.headers.get("subscription-key", "")
    return json_answer({"error": {"code": "BadRequest",
                                  "message": f"Bad header Authorization: {auth} key={key}",
                                  "target": auth,
                                  "details": [{"code": "Echo", "message": auth}],
                                  "innerError": {"request-id": "r", "header": auth}}},
                       400, **{"x-vendor-error-code": "BadRequest"})


def _shown(err: BaseException) -> str:
    """Everything an analyst may see of an error."""
    return "\n".join([str(err), repr(err), "".join(traceback.format_exception(err)),
                      repr(getattr(err, "message", "")), repr(getattr(err, "details", "")),
                      repr(getattr(err, "target", "")), repr(getattr(err, "extra", ""))])


def _all_logs(caplog: pytest.LogCaptureFixture) -> str:
    out = []
    for r in caplog.records:
        out.append(r.getMessage())
        if r.exc_text:
            out.append(r.exc_text)
    return "\n".join(out)


def _assert_clean(text: str, *secrets: str) -> None:
    for secret in secrets or (TOKEN, MAPS_KEY, ISSUED):
        assert secret not in text


class _Credential:
    """A credential object, as azure-identity's are: its tokens are unknown to the user."""

    def get_token(self, *scopes: str, **kw: Any) -> AccessToken:
        return AccessToken(ISSUED, int(time.time()) + 3600)


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)
    for name in ("toolkit", "azure", "urllib3"):
        caplog.set_level(logging.DEBUG, logger=name)
    return caplog


def test_an_echoed_bearer_token_is_masked_everywhere(logs: pytest.LogCaptureFixture) -> None:
    with Hostile(_echo) as service:
        conn = connect_to(service)
        with pytest.raises(toolkit.ApiError) as err:
            toolkit.sql_operations(connection=conn)
    assert service.seen[0].headers["Authorization"] == f"Bearer {TOKEN}"  # it was sent
    assert "Bad header Authorization" in str(err.value)  # the message is kept, masked
    _assert_clean(_shown(err.value))
    _assert_clean(_all_logs(logs))


def test_a_token_from_a_credential_object_is_masked(logs: pytest.LogCaptureFixture) -> None:
    with Hostile(_echo) as service:
        conn = toolkit.connect(base_url=service.url, credential=_Credential(), progress=False)
        with pytest.raises(toolkit.ApiError) as err:
            toolkit.sql_operations(connection=conn)
    assert service.seen[0].headers["Authorization"] == f"Bearer {ISSUED}"
    _assert_clean(_shown(err.value))
    _assert_clean(_all_logs(logs))


def test_an_echoed_maps_key_is_masked(logs: pytest.LogCaptureFixture) -> None:
    with Hostile(_echo) as service:
        conn = connect_to(service)
        with pytest.raises(toolkit.ApiError) as err:
            toolkit.traffic_incidents((1.50, 42.50, 1.55, 42.55), connection=conn)
    assert service.seen[0].headers["subscription-key"] == MAPS_KEY
    _assert_clean(_shown(err.value))
    _assert_clean(_all_logs(logs))


def test_a_fan_out_error_column_and_its_csv_hold_no_secret(
        logs: pytest.LogCaptureFixture) -> None:
    def script(seen: Seen, server: Hostile) -> Answer:
        if b"sql-good" in seen.body:
            return json_answer({"name": "sql-good", "nameAvailable": True})
        return _echo(seen, server)

    with Hostile(script) as service:
        conn = connect_to(service)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            df = toolkit.check_server_names(SUB, ["sql-good", "sql-echo-1", "sql-echo-2"],
                                            connection=conn)
    errors = df["error"].dropna().tolist()
    assert len(errors) == 2 and all("Bad header Authorization" in e for e in errors)
    _assert_clean(df.to_csv())
    _assert_clean(df.to_json())
    _assert_clean("\n".join(str(w.message) for w in caught))
    _assert_clean(_all_logs(logs))


def test_a_retry_after_holding_the_token_is_masked_in_child_logger_records(
        logs: pytest.LogCaptureFixture) -> None:
    calls = []

    def script(seen: Seen, server: Hostile) -> Answer:
        calls.append(seen)
        if len(calls) == 1:
            return json_answer({"error": {"code": "Throttled"}}, 429,
                               **{"Retry-After": seen.headers.get("Authorization", "")})
        return json_answer({"value": []})

    with Hostile(script) as service:
        conn = connect_to(service)
        toolkit.sql_operations(connection=conn)
    assert len(calls) == 2
    text = _all_logs(logs)
    assert "Retry-After" in text  # the child logger's record was written, masked
    _assert_clean(text)


def test_a_record_of_any_child_logger_is_masked(logs: pytest.LogCaptureFixture) -> None:
    toolkit.Secret(TOKEN, "token")  # registered while it lives
    secret = toolkit.Secret(TOKEN, "token")
    for name in ("toolkit.deep.child.module", "azure.identity._internal.x", "urllib3.util"):
        logging.getLogger(name).debug("value %s", TOKEN)
    assert secret and len(logs.records) >= 3
    _assert_clean(_all_logs(logs), TOKEN)
