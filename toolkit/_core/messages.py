"""What a pipeline sends and what it gives back: :class:`Request` and :class:`Response`.

A :class:`Request` is frozen: the one object :meth:`~toolkit._core.pipeline.Pipeline.send` takes,
read by every step of the send (the origin check, the rate limit, the attempts) and changed by
none. A :class:`Response` keeps its body unparsed until asked, parsed with orjson.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from toolkit._core.errors import ProtocolError

__all__ = ["Request", "Response"]


@dataclass(frozen=True)
class Request:
    """One request to a family's service, with how its answer is to be taken.

    Parameters
    ----------
    method : str
        HTTP method.
    path : str
        A path under the family's base URL, or an absolute URL (next links and operation URLs
        are followed exactly as the service gave them, when their origin is the family's own
        or a trusted host).
    params : mapping, optional
        Query parameters (``None`` values are left out).
    json : object, optional
        Body, serialized with orjson.
    headers : mapping, optional
        Headers added to the pipeline's own.
    operation : str, optional
        The public function's name, for messages, provenance and the cache's lifetime.
    idempotent : bool
        Whether the request may be sent again after a failure the service may have seen.
    expected : tuple of int
        Success statuses; anything else raises the matching ApiError.
    content_type : str
        The body's ``Content-Type``.
    check_json : bool
        Parse a success body at once (and ask again when it is not JSON). ``False`` leaves
        the parsing, and asking again, to the caller (a pager parsing in another thread).
    no_retry : frozenset of int
        Statuses the caller handles itself instead of the retries (a batch's 408, split in two
        rather than sent again).
    on_head : callable, optional
        ``head -> done``: called in the sending thread with the start of a success body
        (decoded, at most 64 kB) while the rest still streams, until it answers True; a pager
        reads the next link there and sends the next request before this body has arrived.
    """

    method: str
    path: str
    params: Mapping[str, Any] | None = None
    json: Any = None
    headers: Mapping[str, str] | None = None
    operation: str | None = None
    idempotent: bool = True
    expected: tuple[int, ...] = (200,)
    content_type: str = "application/json"
    check_json: bool = True
    no_retry: frozenset[int] = frozenset()
    on_head: Callable[[bytes], bool] | None = field(default=None, compare=False)

    @property
    def what(self) -> str:
        """Return the operation's name for messages, or the method when none is given.

        Returns
        -------
        str
            ``operation`` or ``method``.
        """
        return self.operation or self.method


@dataclass
class Response:
    """What a request gave back, body unparsed until asked.

    Parameters
    ----------
    status : int
        HTTP status.
    headers : mapping
        Response headers.
    content : bytes
        The body as read (decoded from its Content-Encoding).
    url, method : str
        The request's absolute URL and method.
    operation : str, optional
        The public function's name, for messages.
    header_prefix : str
        The family's header prefix (``x-vendor-`` or a real cloud's).
    forget : callable, optional
        Removes the answer from the response cache when it was stored there
        (see :meth:`refuse`).
    local_id : str, optional
        The id the toolkit gave an answer that carries none it can read, when the answer's
        provenance has to be remembered by its id (a sandbox's answer: see
        :meth:`~toolkit._core.pipeline.Pipeline.send`).
    """

    status: int
    headers: Mapping[str, str]
    content: bytes
    url: str
    method: str
    operation: str | None = None
    header_prefix: str = "x-vendor-"
    forget: Callable[[], None] | None = field(default=None, repr=False)
    _parsed: Any = field(default=None, repr=False)
    _has_parsed: bool = field(default=False, repr=False)
    local_id: str | None = field(default=None, repr=False)

    @property
    def request_id(self) -> str | None:
        """The service's request id header (``<header prefix>request-id``), if any.

        Else the id the toolkit gave the answer (``local_id``), if any.
        """
        h = self.headers
        return (h.get(f"{self.header_prefix}request-id") or h.get("request-id")
                or h.get("requestid") or self.local_id)

    def refuse(self, message: str) -> ProtocolError:
        """Return the error for an answer the operation cannot read, forgetting the answer.

        Only answers the operation could read stay in the response cache, so the next call asks
        the service again.

        Parameters
        ----------
        message : str
            What is wrong with the answer.

        Returns
        -------
        ProtocolError
            The error to raise, with the URL and status.
        """
        if self.forget is not None:
            self.forget()
        return ProtocolError(message, url=self.url, status=self.status)

    def json(self) -> Any:
        """Parse the body with orjson (once; later calls return the same object).

        Returns
        -------
        object
            The parsed body, or ``None`` for an empty body.

        Raises
        ------
        ProtocolError
            The body is not valid JSON.
        """
        if self._has_parsed:
            return self._parsed
        if not self.content:
            return None
        try:
            self._parsed = orjson.loads(self.content)
            self._has_parsed = True
            return self._parsed
        except orjson.JSONDecodeError as err:
            raise self.refuse(
                f"{self.operation or 'request'}: the service sent a body that is not valid JSON "
                f"(HTTP {self.status}, {len(self.content)} bytes: {err}). This is usually a "
                "broken connection or a proxy in the way; try again.") from err

    def json_object(self) -> dict[str, Any]:
        """Parse the body, which must be a JSON object.

        Returns
        -------
        dict
            The parsed object.

        Raises
        ------
        ProtocolError
            An empty body, an array, a string or a number, saying what came instead.
        """
        body = self.json()
        if isinstance(body, dict):
            return body
        got = "an empty body" if body is None else f"a JSON {type(body).__name__}"
        raise self.refuse(
            f"{self.operation or 'request'}: expected a JSON object, the service sent {got} "
            f"(HTTP {self.status}). Try again; if it persists, the endpoint is not the service "
            "it should be.")
