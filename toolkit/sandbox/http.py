"""The sandbox's request and reply types, routing, and each family's error bodies."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import parse_qsl, unquote, urlsplit

import orjson

if TYPE_CHECKING:
    from toolkit._spec.clouds import Cloud, Vocabulary
    from toolkit.sandbox.network import NetworkModel
    from toolkit.sandbox.world import World

__all__ = ["Reply", "Request", "Route", "Router", "SandboxHTTPError", "SandboxView", "error_reply",
           "family_of", "not_found_code"]


class SandboxView(Protocol):
    """What a handler sees of the sandbox serving its request (a :class:`Sandbox`).

    The handlers read the world, the clock, the words of the sandbox's cloud and its settings,
    and keep the state of long-running operations and rate limits under ``state_lock``.
    """

    @property
    def world(self) -> World:
        """The deterministic world."""

    @property
    def seed(self) -> int:
        """The seed of the world."""

    @property
    def epoch(self) -> datetime:
        """The instant the clock started from."""

    @property
    def cloud(self) -> Cloud:
        """The cloud whose vocabulary the sandbox speaks."""

    @property
    def words(self) -> Vocabulary:
        """That vocabulary, with the namespace and header prefix set."""

    @property
    def namespace(self) -> str:
        """The provider namespace word (``Vendor``)."""

    @property
    def header_prefix(self) -> str:
        """The custom header prefix (``x-vendor-``)."""

    @property
    def state(self) -> dict[str, Any]:
        """State kept across requests (operations, rate limits)."""

    @property
    def state_lock(self) -> AbstractContextManager[Any]:
        """The lock of ``state``."""

    @property
    def lro_polls(self) -> int:
        """Status polls a long-running operation takes."""

    @property
    def lro_retry_after(self) -> int:
        """``Retry-After`` seconds of 202 answers."""

    @property
    def arm_limits(self) -> bool:
        """Whether the resource manager's throttling is enforced."""

    @property
    def provider_limits(self) -> bool:
        """Whether the resource providers' own quotas (policy insights) are enforced."""

    @property
    def arm_read_methods(self) -> frozenset[str]:
        """The methods the resource manager counts as reads."""

    @property
    def network(self) -> NetworkModel | None:
        """The network model, if any."""

    def now(self) -> datetime:
        """Tell the sandbox clock."""

    def new_id(self) -> str:
        """Make a fresh identifier."""


class _Headers(dict):
    """Case-insensitive header lookup."""

    def __init__(self, items: Mapping[str, str] | None = None) -> None:
        super().__init__()
        for k, v in (items or {}).items():
            self[k] = v

    def __setitem__(self, key: str, value: str) -> None:
        super().__setitem__(key.lower(), value)

    def __getitem__(self, key: str) -> str:
        return super().__getitem__(key.lower())

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key.lower(), default)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and super().__contains__(key.lower())


@dataclass
class Request:
    """An incoming request, parsed."""

    method: str
    target: str
    headers: _Headers
    body: bytes
    base_url: str
    sandbox: SandboxView
    params: dict[str, str] = field(default_factory=dict)
    path_params: dict[str, str] = field(default_factory=dict)
    family: str = "arm"
    request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    #: set by the ``lro_fail`` fault: the operation this request starts must end Failed
    fail_operation: bool = False
    #: the verified token's claims (empty for public routes and key-authenticated ones)
    claims: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Split the target into the path and the query parameters."""
        parts = urlsplit(self.target)
        self.path = parts.path
        self.query = parse_qsl(parts.query, keep_blank_values=True)
        self.params = {}
        for k, v in self.query:
            self.params.setdefault(k, v)

    def param(self, name: str, default: str | None = None) -> str | None:
        """Read a query parameter, matched case-insensitively as the services do.

        Returns
        -------
        str or None
            The first value given, else ``default``.
        """
        if name in self.params:
            return self.params[name]
        low = name.lower()
        for k, v in self.params.items():
            if k.lower() == low:
                return v
        return default

    def json(self) -> Any:
        """Parse the body as JSON.

        Returns
        -------
        Any
            The value, or ``None`` for an empty body.

        Raises
        ------
        SandboxHTTPError
            400 ``InvalidRequestContent`` for a body that is not JSON (in the family's shape).
        """
        if not self.body:
            return None
        try:
            return orjson.loads(self.body)
        except orjson.JSONDecodeError as err:
            raise SandboxHTTPError(400, "InvalidRequestContent",
                                   f"The request content was invalid and could not be "
                                   f"deserialized: {err}.") from err

    @property
    def language(self) -> str | None:
        """The first language of ``Accept-Language``."""
        value = self.headers.get("accept-language")
        if not value:
            return None
        return value.split(",")[0].split(";")[0].strip() or None


@dataclass
class Reply:
    """What the sandbox answers."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    content_type: str = "application/json; charset=utf-8"

    def payload(self) -> bytes:
        """Write the reply's body.

        Returns
        -------
        bytes
            ``raw`` when set, else ``body`` as JSON (nothing for ``None``).
        """
        if self.raw is not None:
            return self.raw
        if self.body is None:
            return b""
        return orjson.dumps(self.body)


class SandboxHTTPError(Exception):
    """Raised by handlers: becomes an error reply in the family's body shape."""

    def __init__(self, status: int, code: str, message: str, *,
                 headers: Mapping[str, str] | None = None, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = dict(headers or {})
        self.extra = extra


def error_reply(request: Request, status: int, code: str, message: str, *,
                headers: Mapping[str, str] | None = None, **extra: Any) -> Reply:
    """Make an error reply in the body shape of the request's family.

    ARM (and policy insights): ``{"error": {"code", "message", "target", "details"}}``;
    maps: the same plus ``x-vendor-error-code``; graph: ``innerError`` with date and request id;
    fabric: the flat ``{"requestId", "errorCode", "message", "isRetriable"}``.

    Returns
    -------
    Reply
        The error, with ``headers``.
    """
    prefix = request.sandbox.header_prefix
    out_headers = dict(headers or {})
    family = request.family
    if family == "fabric":
        body: dict[str, Any] = {"requestId": request.request_id, "errorCode": code,
                                "message": message}
        body["isRetriable"] = bool(extra.pop("isRetriable", status in (429, 500, 503)))
        for key in ("moreDetails", "relatedResource"):
            if key in extra:
                body[key] = extra.pop(key)
        return Reply(status, body, out_headers)
    error: dict[str, Any] = {"code": code, "message": message}
    if family == "graph":
        error["innerError"] = {
            "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S"),
            "request-id": request.request_id,
            "client-request-id": request.headers.get("client-request-id")
            or request.headers.get(f"{prefix}client-request-id") or request.request_id,
        }
    elif family == "maps":
        error.setdefault("target", extra.pop("target", None))
        error["details"] = extra.pop("details", [])
        out_headers[f"{prefix}error-code"] = code
    else:
        if "target" in extra:
            error["target"] = extra.pop("target")
        if "details" in extra:
            error["details"] = extra.pop("details")
    error.update(extra)
    return Reply(status, {"error": error}, out_headers)


Handler = Callable[[Request], Reply]


@dataclass
class Route:
    """A path pattern with named ``{parameters}``, served by a handler."""

    method: str
    pattern: str
    handler: Handler
    family: str
    api_versions: tuple[str, ...] | None
    name: str
    regex: re.Pattern[str] = field(init=False)

    def __post_init__(self) -> None:
        """Compile the pattern: each ``{name}`` matches one path segment."""
        rx = re.escape(self.pattern)
        rx = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]*)", rx)
        self.regex = re.compile(f"^{rx}$", re.IGNORECASE)


class Router:
    """Routes by method and path; the namespace word ``{ns}`` is filled in per sandbox."""

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self.routes: list[Route] = []

    def add(self, method: str, pattern: str, handler: Handler, *, family: str,
            api_versions: tuple[str, ...] | None, name: str) -> None:
        """Register a route. ``pattern`` may contain ``{ns}`` for the provider namespace."""
        pattern = pattern.replace("{ns}", self.namespace)
        self.routes.append(Route(method.upper(), pattern, handler, family, api_versions, name))

    def match(self, method: str, path: str) -> tuple[Route | None, dict[str, str], bool]:
        """Find the route of a request.

        Returns
        -------
        tuple of (Route or None, dict, bool)
            The route, its path parameters, and whether the path exists under another method.
        """
        path_exists = False
        for route in self.routes:
            m = route.regex.match(path)
            if m:
                if route.method == method.upper():
                    return route, {k: unquote(v) for k, v in m.groupdict().items()}, True
                path_exists = True
        return None, {}, path_exists


def family_of(path: str) -> str:
    """Tell the family a path belongs to, for errors about paths no route knows.

    Returns
    -------
    str
        ``arm``, ``graph``, ``fabric`` or ``maps``.
    """
    p = path.lower()
    if p.startswith(("/subscriptions", "/providers")):
        return "arm"
    if p.startswith(("/beta/", "/v1.0/")):
        return "graph"
    if p.startswith(("/v1/workspaces", "/v1/operations", "/operations")):
        return "fabric"
    return "maps"


def not_found_code(family: str) -> str:
    """Name the error code a family answers a path no route knows with.

    Parameters
    ----------
    family : str
        ``arm``, ``maps``, ``graph`` or ``fabric``.

    Returns
    -------
    str
        ``InvalidResourceType``, ``EntityNotFound``, ``ResourceNotFound`` or ``NotFound``.
    """
    return {"arm": "InvalidResourceType", "fabric": "EntityNotFound",
            "graph": "ResourceNotFound"}.get(family, "NotFound")
