"""The five error body shapes, each parsed into the right exception fields."""

from __future__ import annotations

import pytest

from toolkit._core.error_bodies import error_from_response, parse_error_body
from toolkit._core.errors import (
    ApiError,
    AuthenticationError,
    ConflictError,
    NotFoundError,
    RateLimitError,
    ServiceError,
)

ARM_CLOUD_ERROR = {
    "error": {
        "code": "ResourceNotFound",
        "message": "The Resource 'Vendor.Network/applicationGateways/agw' was not found.",
        "target": "applicationGatewayName",
        "details": [{"code": "Inner", "message": "inner detail"}],
        "additionalInfo": [{"type": "PolicyViolation", "info": {"policy": "p1"}}],
    }
}
QUERY_FAILURE = {"error": {"code": "InvalidFilterQueryParameter",
                           "message": "Invalid $filter: unknown column 'Foo'."}}
MAPS_ERROR = {"error": {"code": "BadRequest", "message": "The provided bbox is too large.",
                        "target": "bbox", "details": [], "innererror": {"code": "BboxTooLarge"}}}
IDENTITY_ERROR = {"error": {"code": "Authorization_RequestDenied",
                            "message": "Insufficient privileges to complete the operation.",
                            "innerError": {"date": "2026-11-20T09:00:00",
                                           "request-id": "0f1e2d3c-aaaa-bbbb-cccc-111122223333",
                                           "client-request-id": "c1"}}}
FABRIC_ERROR = {"requestId": "9b0e4a7c-1111-2222-3333-444455556666",
                "errorCode": "ItemDisplayNameAlreadyInUse",
                "message": "Requested display name is already in use",
                "isRetriable": False,
                "moreDetails": [{"errorCode": "Conflict", "message": "name taken"}],
                "relatedResource": {"resourceId": "ws-1", "resourceType": "Workspace"}}


def test_arm_cloud_error_fields() -> None:
    info = parse_error_body(ARM_CLOUD_ERROR, {"x-vendor-request-id": "rid-1"})
    assert info.code == "ResourceNotFound"
    assert info.target == "applicationGatewayName"
    assert info.details == [{"code": "Inner", "message": "inner detail"}]
    assert info.request_id == "rid-1"
    assert info.extra["additionalInfo"][0]["type"] == "PolicyViolation"


def test_query_failure_becomes_api_error_with_message() -> None:
    err = error_from_response(400, QUERY_FAILURE, {}, operation="policy_states")
    assert type(err) is ApiError
    assert err.code == "InvalidFilterQueryParameter"
    assert "unknown column 'Foo'" in str(err)
    assert str(err).startswith("policy_states: HTTP 400")


def test_maps_error_code_and_header() -> None:
    info = parse_error_body(MAPS_ERROR, {"x-vendor-error-code": "BadRequest"})
    assert (info.code, info.target) == ("BadRequest", "bbox")
    assert info.extra["innerError"] == {"code": "BboxTooLarge"}
    # a body without a code takes the header's
    info = parse_error_body({"error": {"message": "m"}}, {"x-vendor-error-code": "Throttled"})
    assert info.code == "Throttled"


def test_identity_error_request_id_from_inner_error() -> None:
    err = error_from_response(403, IDENTITY_ERROR, {})
    assert isinstance(err, AuthenticationError)
    assert err.request_id == "0f1e2d3c-aaaa-bbbb-cccc-111122223333"
    assert err.extra["innerError"]["date"] == "2026-11-20T09:00:00"
    assert "What to do" in str(err)


def test_flat_eventstream_error() -> None:
    err = error_from_response(409, FABRIC_ERROR, {})
    assert isinstance(err, ConflictError)
    assert err.code == "ItemDisplayNameAlreadyInUse"
    assert err.request_id == "9b0e4a7c-1111-2222-3333-444455556666"
    assert err.retriable is False
    assert err.target == "ws-1"
    assert err.details[0]["errorCode"] == "Conflict"


@pytest.mark.parametrize("status, cls", [(401, AuthenticationError), (403, AuthenticationError),
                                         (404, NotFoundError), (409, ConflictError),
                                         (429, RateLimitError), (500, ServiceError),
                                         (503, ServiceError), (400, ApiError)])
def test_status_maps_to_class(status: int, cls: type) -> None:
    err = error_from_response(status, b"", {"Retry-After": "7"})
    assert type(err) is cls
    assert err.status == status
    assert err.retry_after == 7.0


def test_unreadable_body_keeps_text() -> None:
    err = error_from_response(502, b"<html>Bad gateway</html>", {})
    assert err.message == "<html>Bad gateway</html>"


def test_rate_limit_hint_names_the_wait() -> None:
    err = error_from_response(429, ARM_CLOUD_ERROR, {"Retry-After": "120"})
    assert isinstance(err, RateLimitError)
    assert "wait 120 s" in str(err)


def test_the_azure_core_fields_never_show_a_secret() -> None:
    from toolkit._core.secrets import MASK, Secret

    secret = Secret("s3cr3t-value-123", "token")
    body = {"error": {"code": "Bad", "message": f"token {secret.reveal()}"}}
    err = error_from_response(400, body, {})
    assert secret.reveal() not in f"{err} {err.message} {err.error} {err.exc_msg}"
    assert MASK in str(err.error)
