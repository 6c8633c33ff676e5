"""Continuation tokens: a long-running operation written down as a string, and read back.

A token is ``tkop1.`` followed by the URL-safe base64 (unpadded) of a JSON object: the token
version, the polling kind (``arm`` or ``item``), the service family, the operation's name, the
JSON-able arguments its result parser needs, and the URLs its polling strategy follows. It never
holds a credential. Tokens are not signed: what one names is checked instead, field by field here
and, before any request, each URL against the origins the connection trusts (see
:func:`toolkit._core.polling.restore_operation`).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from toolkit._core.errors import ValidationError
from toolkit._core.registry import record, records

__all__ = ["decode_token", "encode_token", "resume_parser", "token_error"]

_TOKEN_PREFIX = "tkop1."
_TOKEN_VERSION = 1
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
    kind : {"arm", "item"}
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
        ``url``, ``operation_id`` for ``item``), and ``_urls``, the URLs present.

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
    shape = {"kind": ("arm", "item"), "family": ("arm", "maps", "graph", "fabric"),
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
    if state["kind"] == "item" and not isinstance(state.get("url"), str):
        raise token_error("is damaged: the operation URL is missing")
    if state["kind"] == "arm" and not (state.get("async_url") or state.get("location")):
        raise token_error("is damaged: the operation URL is missing")
    state["_urls"] = [state[k] for k in url_keys if state.get(k)]
    return state


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
