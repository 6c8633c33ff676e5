"""The parsing of the services' error bodies into the toolkit's exceptions.

Five error body shapes reach the toolkit:

* ARM ``CloudError`` / ``ErrorResponse``: ``{"error": {"code", "message", "target", "details",
  "additionalInfo"}}``;
* policy insights ``QueryFailure``: ``{"error": {"code", "message"}}``;
* maps: ``{"error": {"code", "message", "target", "details", "innererror"}}`` with the code
  mirrored in the ``x-vendor-error-code`` header;
* identity: ``{"error": {"code", "message", "innerError": {"date", "request-id",
  "client-request-id"}}}``;
* eventstream (flat): ``{"requestId", "errorCode", "message", "moreDetails", "relatedResource",
  "isRetriable"}``.

:func:`error_from_response` turns any of them into the right :class:`ApiError` subclass.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import Any

import orjson

from toolkit._core.errors import (
    ApiError,
    AuthenticationError,
    ConflictError,
    ErrorInfo,
    NotFoundError,
    RateLimitError,
    ServiceError,
)

logger = logging.getLogger(__name__)

__all__ = ["error_from_response", "parse_error_body"]



def _str_or_none(value: Any) -> str | None:
    if value is None:
        return None
    return str(value)


def parse_error_body(body: Any, headers: Mapping[str, str] | None = None,
                     header_prefix: str = "x-vendor-") -> ErrorInfo:
    """Reduce any of the five error body shapes (and the headers beside it) to an ErrorInfo.

    Parameters
    ----------
    body : bytes, str, dict or None
        The response body; unreadable bodies give an ErrorInfo with only what the headers say.
    headers : mapping, optional
        Response headers (case-insensitive mapping); supplies the request id and the maps
        ``x-vendor-error-code``.
    header_prefix : str
        The vendor header prefix.
    """
    if isinstance(body, bytes | bytearray | memoryview | str):
        raw = bytes(body, "utf-8") if isinstance(body, str) else bytes(body)
        try:
            body = orjson.loads(raw) if raw.strip() else None
        except orjson.JSONDecodeError:
            text = raw.decode("utf-8", "replace").strip()
            body = {"error": {"message": text[:300]}} if text else None
    info = ErrorInfo()
    if headers is not None:
        headers = _ci(headers)
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict):
            info.code = _str_or_none(err.get("code"))
            info.message = _str_or_none(err.get("message"))
            info.target = _str_or_none(err.get("target"))
            details = err.get("details")
            if isinstance(details, list):
                info.details = [d for d in details if isinstance(d, dict)]
            inner = err.get("innerError") or err.get("innererror")
            if isinstance(inner, dict):
                info.extra["innerError"] = inner
                info.request_id = _str_or_none(inner.get("request-id") or inner.get("requestId"))
            if isinstance(err.get("additionalInfo"), list):
                info.extra["additionalInfo"] = err["additionalInfo"]
        elif isinstance(err, str):
            info.message = err
        elif "errorCode" in body or "requestId" in body:
            info.code = _str_or_none(body.get("errorCode"))
            info.message = _str_or_none(body.get("message"))
            info.request_id = _str_or_none(body.get("requestId"))
            more = body.get("moreDetails")
            if isinstance(more, list):
                info.details = [d for d in more if isinstance(d, dict)]
            if isinstance(body.get("isRetriable"), bool):
                info.retriable = body["isRetriable"]
            related = body.get("relatedResource")
            if isinstance(related, dict):
                info.target = _str_or_none(related.get("resourceId"))
                info.extra["relatedResource"] = related
        elif "code" in body or "message" in body:
            info.code = _str_or_none(body.get("code"))
            info.message = _str_or_none(body.get("message"))
    if headers is not None:
        if info.code is None:
            info.code = headers.get(f"{header_prefix}error-code")
        if info.request_id is None:
            info.request_id = (
                headers.get(f"{header_prefix}request-id")
                or headers.get("request-id")
                or headers.get("requestid")
            )
    return info


def _ci(headers: Mapping[str, str]) -> Mapping[str, str]:
    """Headers with case-insensitive lookup."""
    from requests.structures import CaseInsensitiveDict

    return headers if isinstance(headers, CaseInsensitiveDict) else CaseInsensitiveDict(headers)


def _retry_after(headers: Mapping[str, str]) -> float | None:
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        wait = float(value)
    except ValueError:
        return None
    return max(0.0, wait) if math.isfinite(wait) else None


def error_from_response(
    status: int,
    body: Any,
    headers: Mapping[str, str],
    *,
    operation: str | None = None,
    url: str | None = None,
    header_prefix: str = "x-vendor-",
    hint: str | None = None,
) -> ApiError:
    """Build the ApiError subclass that fits an error response.

    ``hint`` replaces the class's advice.
    """
    headers = _ci(headers)
    info = parse_error_body(body, headers, header_prefix)
    kw: dict[str, Any] = {"operation": operation, "url": url,
                          "retry_after": _retry_after(headers)}
    cls: type[ApiError]
    if status in (401, 403):
        cls = AuthenticationError
    elif status == 404:
        cls = NotFoundError
    elif status == 409:
        cls = ConflictError
    elif status == 429:
        cls = RateLimitError
    elif status >= 500 or status == 408:
        cls = ServiceError
    else:
        cls = ApiError
        if status == 400:
            kw["hint"] = "The service refused the request as sent; the message says which part."
    if hint is not None:
        kw["hint"] = hint
    return cls(status, info, **kw)
