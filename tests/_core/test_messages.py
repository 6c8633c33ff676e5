"""The request a pipeline sends and the response it gives back, on their own."""

from __future__ import annotations

import dataclasses

import pytest

from toolkit._core.errors import ProtocolError
from toolkit._core.messages import Request, Response


def test_a_request_is_frozen_and_says_what_it_is_for() -> None:
    request = Request("GET", "/x", params={"api-version": "1"}, operation="probe")
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.method = "POST"  # type: ignore[misc]
    assert request.what == "probe"
    assert Request("DELETE", "/x").what == "DELETE"
    # the defaults: one success status, idempotent, parsed at once, nothing held back
    assert (request.expected, request.idempotent, request.check_json, request.no_retry) == \
        ((200,), True, True, frozenset())
    # a watcher of the body's start does not make two requests differ
    assert Request("GET", "/x", on_head=lambda head: True) == Request("GET", "/x")


def _response(content: bytes, forgotten: list[int] | None = None) -> Response:
    return Response(200, {"x-cloud-request-id": "rid-1"}, content, "http://h/x", "GET",
                    "probe", "x-cloud-",
                    forget=(lambda: forgotten.append(1)) if forgotten is not None else None)


def test_a_response_parses_its_body_once() -> None:
    response = _response(b'{"a": 1}')
    assert response.json() is response.json()
    assert response.json_object() == {"a": 1}
    assert response.request_id == "rid-1"
    assert _response(b"").json() is None


def test_a_body_the_operation_cannot_read_is_forgotten_and_refused() -> None:
    forgotten: list[int] = []
    with pytest.raises(ProtocolError, match="not valid JSON"):
        _response(b"{broken", forgotten).json()
    assert forgotten == [1]
    with pytest.raises(ProtocolError, match=r"expected a JSON object.*a JSON list"):
        _response(b"[1, 2]", forgotten).json_object()
    with pytest.raises(ProtocolError, match="an empty body"):
        _response(b"", forgotten).json_object()
    assert forgotten == [1, 1, 1]
