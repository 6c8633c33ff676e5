"""Continuation tokens: written and read back whole, and every damaged or foreign token refused
as a ValidationError naming ``token`` (never echoing it)."""

from __future__ import annotations

import base64

import orjson
import pytest

from toolkit._core.continuation import answered_from, decode_token, encode_token, resume_parser
from toolkit._core.errors import ValidationError

ARM = {"method": "PUT", "resource_url": "https://arm.example/things/a",
       "async_url": "https://arm.example/ops/1", "location": None}
ITEM = {"method": "POST", "resource_url": "https://fabric.example/v1/workspaces/w/eventstreams",
        "url": "https://fabric.example/v1/operations/op-1", "operation_id": "op-1"}


STATUS = {"method": "POST", "resource_url": "https://maps.example/route/matrix:async",
          "url": "https://maps.example/route/operations/op-1"}


def _token(**state) -> str:
    return "tkop1." + base64.urlsafe_b64encode(orjson.dumps(state)).decode().rstrip("=")


def _arm(**changes) -> dict:
    return {"v": 2, "kind": "arm", "family": "arm", "name": "update_encryption_protector",
            "args": {}, **ARM, **changes}


def test_a_token_reads_back_what_was_written() -> None:
    token = encode_token(kind="arm", family="arm", name="backend_health",
                         args={"endpoint": "e", "api_version": "2024-01-01"}, state=ARM)
    assert token.startswith("tkop1.") and "=" not in token
    state = decode_token(token)
    assert state["name"] == "backend_health" and state["args"]["api_version"] == "2024-01-01"
    assert {k: state[k] for k in ARM} == ARM
    assert state["_urls"] == [ARM["resource_url"], ARM["async_url"]]
    item = decode_token(encode_token(kind="item", family="fabric", name="create_eventstream",
                                     args={}, state=ITEM))
    assert item["operation_id"] == "op-1" and item["_urls"] == [ITEM["resource_url"],
                                                                ITEM["url"]]
    status = decode_token(encode_token(kind="status", family="maps", name="route_matrix",
                                       args={}, state=STATUS))
    assert status["_urls"] == [STATUS["resource_url"], STATUS["url"]]


@pytest.mark.parametrize("token, says", [
    (None, "must be a string"),
    (42, "must be a string"),
    ("op.abc", "must be a string"),
    ("tkop1." + "A" * 17_000, "longer than"),
    ("tkop1.!!!", "does not decode"),
    ("tkop1." + base64.urlsafe_b64encode(b"not json").decode(), "does not decode"),
    (_token(**_arm(v=1)), "another version"),  # v1 named the result's server: not read
    (_token(**_arm(v=3)), "another version"),
    ("tkop1." + base64.urlsafe_b64encode(b"[1]").decode(), "another version"),
    (_token(**_arm(kind="other")), "kind must be one of"),
    (_token(**_arm(family="elsewhere")), "family must be one of"),
    (_token(**_arm(name="delete_everything")), "name must be one of"),
    (_token(**_arm(args=[1])), "arguments are missing"),
    (_token(**_arm(method=None)), "arguments are missing"),
    (_token(**_arm(location=7)), "location must be a URL"),
    (_token(**_arm(async_url=None)), "operation URL is missing"),
    (_token(v=2, kind="item", family="fabric", name="create_eventstream", args={},
            method="POST", resource_url="https://f.example/x", url=None),
     "operation URL is missing"),
    (_token(v=2, kind="item", family="fabric", name="create_eventstream", args={},
            **{**ITEM, "operation_id": "op-2"}), "not the operation its URL polls"),
    (_token(v=2, kind="status", family="maps", name="route_matrix", args={},
            **{**STATUS, "url": None}), "operation URL is missing"),
    (_token(v=2, kind="status", family="maps", name="route_matrix", args={},
            **{**STATUS, "url": ["https://maps.example/x"]}), "url must be a URL"),
    (_token(v=2, kind="item", family="fabric", name="create_eventstream", args={},
            **{**ITEM, "operation_id": {"id": "op-1"}}), "not the operation its URL polls"),
])
def test_a_damaged_or_foreign_token_is_refused(token, says) -> None:
    with pytest.raises(ValidationError, match=says) as info:
        decode_token(token)
    assert info.value.parameter == "token" and "tkop1" not in str(info.value.value)


def test_the_resume_parser_of_a_name_is_its_modules_own() -> None:
    from toolkit.arm import network

    assert resume_parser({"name": "backend_health"}) is network._resume_parser


def test_a_resumed_frame_names_the_request_that_answered() -> None:
    base = "https://arm.example"
    assert answered_from(f"{base}/subscriptions/s/x?api-version=2024-05-01&a=1",
                         base) == (f"{base}/subscriptions/s/x", "2024-05-01")
    assert answered_from(f"{base}/operations/7", base) == (f"{base}/operations/7", None)
    fabric = "http://127.0.0.1:9/fabric"
    for url, version in ((f"{fabric}/v1/operations/o/result", "v1"),
                         (f"{fabric}/operations/o/result", None),
                         ("http://127.0.0.1:9/v1/operations/o", None)):  # not under the base
        assert answered_from(url, fabric,
                             path_version=r"^v\d+(\.\d+)?$") == (url, version)
