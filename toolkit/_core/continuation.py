"""Continuation tokens: a long-running operation written down as a string, and read back.

A token is ``tkop1.`` followed by the URL-safe base64 (unpadded) of a JSON object: the token
version, the polling kind (``arm``, ``status`` or ``item``), the service family, the
operation's name, the JSON-able arguments its result parser needs (none, for the toolkit's
operations), and the URLs its polling strategy follows. It never holds a credential. Tokens are
not signed: what one names is checked instead, field by field here and, before any request, each
URL against the origins the connection trusts (see
:func:`toolkit._core.polling.restore_operation`).

A token says what to poll, never what the result is: the frame of a resumed operation takes its
names and provenance from the answers the service gives (:func:`answered_from`: the endpoint and
api-version of the request that gave the result; a server's name from the resource the answer
describes), and the operation id a token names must be the one its operation URL polls. An
edited token can make the toolkit poll another operation of a trusted service, never write a
frame that says one thing while another was polled.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson

from toolkit._core.errors import ValidationError
from toolkit._core.registry import record, records

__all__ = ["answered_from", "decode_token", "encode_token", "resume_parser", "token_error"]

_TOKEN_PREFIX = "tkop1."
#: 2: the toolkit's operations keep no arguments of their results in the token (1 kept the
#: server, endpoint and api-version a resumed frame then named, whatever was polled)
_TOKEN_VERSION = 2
_TOKEN_MAX = 16_384


def _resumable() -> tuple[str, ...]:
    # the operations whose record makes a result parser from a token's arguments (a token may be
    # resumed in a new kernel, before the operation's module is imported: records() imports it)
    return tuple(name for name, rec in records().items() if rec.resume is not None)


def token_error(rule: str) -> ValidationError:
    """Make the error for a token that breaks ``rule``.

    Parameters
    ----------
    rule : str
        What is wrong with the token, read after "token ...".

    Returns
    -------
    ValidationError
        Naming the parameter ``token`` and hiding the token's text.
    """
    return ValidationError("token", "<continuation token>", rule)


def encode_token(*, kind: str, family: str, name: str, args: Mapping[str, Any],
                 state: Mapping[str, Any]) -> str:
    """Write an operation's state as a continuation token.

    Parameters
    ----------
    kind : {"arm", "status", "item"}
        The polling kind, which says how the state is read back.
    family : str
        The service family whose pipeline polls the operation.
    name : str
        The public function that started the operation.
    args : Mapping
        The JSON-able arguments of the function's resume parser.
    state : Mapping
        The polling strategy's state: the method, the URLs it follows.

    Returns
    -------
    str
        The token, ``tkop1.`` and URL-safe base64 without padding.
    """
    body = {"v": _TOKEN_VERSION, "kind": kind, "family": family, "name": name,
            "args": dict(args), **state}
    return _TOKEN_PREFIX + base64.urlsafe_b64encode(orjson.dumps(body)).decode().rstrip("=")


def decode_token(token: Any) -> dict[str, Any]:
    """Read the state a continuation token holds.

    Parameters
    ----------
    token : str
        A string from ``Operation.continuation_token``.

    Returns
    -------
    dict
        The state: ``v``, ``kind``, ``family``, ``name``, ``args``, ``method``, the strategy's
        URLs (``resource_url``, ``async_url``, ``location`` for ``arm``; ``resource_url``,
        ``url`` for ``status``, and ``operation_id`` for ``item``), and ``_urls``, the URLs
        present.

    Raises
    ------
    ValidationError
        The value is not a token, is too long, is damaged or was made by another version.
    """
    if not isinstance(token, str) or not token.startswith(_TOKEN_PREFIX):
        raise token_error(f"must be a string from Operation.continuation_token "
                          f"(starting {_TOKEN_PREFIX!r})")
    if len(token) > _TOKEN_MAX:
        raise token_error(f"is longer than {_TOKEN_MAX} characters")
    body = token[len(_TOKEN_PREFIX):]
    try:
        state = orjson.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except (binascii.Error, ValueError, orjson.JSONDecodeError) as err:
        raise token_error("is damaged: it does not decode") from err
    if not isinstance(state, dict) or state.get("v") != _TOKEN_VERSION:
        raise token_error("was made by another version of the toolkit")
    shape = {"kind": ("arm", "status", "item"), "family": ("arm", "maps", "graph", "fabric"),
             "name": _resumable()}
    for key, allowed in shape.items():
        if state.get(key) not in allowed:
            raise token_error(f"is damaged: {key} must be one of {', '.join(allowed)}")
    if not isinstance(state.get("args"), dict) or not isinstance(state.get("method"), str):
        raise token_error("is damaged: its arguments are missing")
    url_keys = ("resource_url", "async_url", "location") if state["kind"] == "arm" \
        else ("resource_url", "url")
    for key in url_keys:
        value = state.get(key)
        if value is not None and not isinstance(value, str):
            raise token_error(f"is damaged: {key} must be a URL")
    if state["kind"] != "arm" and not isinstance(state.get("url"), str):
        raise token_error("is damaged: the operation URL is missing")
    if state["kind"] == "arm" and not (state.get("async_url") or state.get("location")):
        raise token_error("is damaged: the operation URL is missing")
    if state["kind"] == "item":
        op_id = state.get("operation_id")
        if op_id is not None and (not isinstance(op_id, str) or op_id not in
                                  urlsplit(state["url"]).path.split("/")):
            raise token_error("is damaged: its operation id is not the operation its URL polls")
    state["_urls"] = [state[k] for k in url_keys if state.get(k)]
    return state


def answered_from(url: str, base_url: str, *,
                  path_version: str | None = None) -> tuple[str, str | None]:
    """Name a request a resumed operation sent: its endpoint and api-version.

    A resumed operation's frame takes its ``endpoint`` and ``api_version`` from the request
    whose answer gave the result (``response.url``), never from the token.

    Parameters
    ----------
    url : str
        The request's URL.
    base_url : str
        The family's base URL.
    path_version : str, optional
        A pattern of the api-versions a family names in its paths (``v1``), for a service that
        versions its paths rather than its query.

    Returns
    -------
    tuple
        The endpoint (scheme, host and path of the request's URL) and the api-version: its
        ``api-version`` query parameter, else (with ``path_version``) the first segment of its
        path under ``base_url`` when that segment fits the pattern, else ``None``.
    """
    parts = urlsplit(url)
    endpoint = f"{parts.scheme}://{parts.netloc}{parts.path}"
    versions = parse_qs(parts.query).get("api-version")
    if versions:
        return endpoint, versions[-1]
    if path_version is not None:
        base = urlsplit(base_url).path.rstrip("/")
        if parts.path.startswith(base + "/"):
            first = parts.path[len(base) + 1:].split("/", 1)[0]
            if re.fullmatch(path_version, first):
                return endpoint, first
    return endpoint, None


def resume_parser(state: Mapping[str, Any]) -> Callable[..., Any]:
    """Look up the result-parser factory of a decoded token's operation.

    Parameters
    ----------
    state : Mapping
        A state from :func:`decode_token`.

    Returns
    -------
    callable
        ``factory(connection, operation, **args) -> parse``.
    """
    factory = record(state["name"]).resume
    if factory is None:
        raise token_error(f"is damaged: {state['name']} cannot be resumed")
    return factory
