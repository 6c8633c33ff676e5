"""Long-running operations, in one place.

ARM: an initial 200 carries the result; a 202 carries ``Location`` (and ``Retry-After``). The
toolkit waits the seconds the service asks (a default when it does not say), then polls:

* ``Location`` style: 202 while running, then the final answer (200/201 with the result, 204
  without); an empty final body for a PUT means "read the resource".
* ``<Namespace>-AsyncOperation`` style (used when that header is present): a 200 status body whose
  ``status`` is ``Succeeded``, ``Failed`` or ``Canceled`` when done; then the result is read from
  ``Location`` (POST) or the original resource URL (PUT/PATCH).

Item operations (eventstream creation, :class:`ItemOperation`): a 201 carries the item; a 202
carries ``Location`` (the operation state URL), the operation id and ``Retry-After``. The state
answers 200 with ``status`` ``NotStarted``/``Running`` (its ``Location`` followed exactly as given)
until ``Succeeded``, when ``Location`` points at the result, or ``Failed`` with the operation's
error.

An :class:`Operation` is the handle: ``result(timeout=)`` waits for the end and returns the
parsed result; a timeout raises :class:`~toolkit._core.errors.OperationTimeoutError` carrying the
handle, so the caller can resume.

Every wait between polls is bounded: at least ``min_poll_wait`` (a ``Retry-After: 0`` does not
make the toolkit spin), and a wait the service asks for beyond ``max_retry_wait`` is not sat out:
:class:`~toolkit._core.errors.OperationWaitError` carries the handle to resume later, as a
throttled request's ``RateLimitError`` does. A status body of the wrong shape is a
:class:`~toolkit._core.errors.ProtocolError`.
"""

from __future__ import annotations

import base64
import binascii
import logging
import math
import time
from collections.abc import Callable, Mapping
from typing import Any, Generic, Literal, TypeVar, overload

import orjson

from toolkit._core.config import Origin
from toolkit._core.errors import (
    ApiError,
    AuthenticationError,
    ErrorInfo,
    OperationFailedError,
    OperationTimeoutError,
    OperationWaitError,
    ProtocolError,
    RateLimitError,
    ServiceError,
    parse_error_body,
)
from toolkit._core.pipeline import Pipeline, Response
from toolkit._core.progress import progress_bar
from toolkit._core.registry import record, records

logger = logging.getLogger(__name__)

__all__ = ["ItemOperation", "Operation", "decode_token", "restore_operation", "resume_parser",
           "start_arm_operation", "start_item_operation"]

T = TypeVar("T")

_TERMINAL = {"succeeded", "failed", "canceled", "cancelled"}


def _retry_after(response: Response, default: float) -> float:
    """The ``Retry-After`` seconds of a poll answer; absent or unreadable gives ``default``,
    a negative one 0, an infinite one infinity (refused by the ceiling)."""
    value = response.headers.get("retry-after")
    if value is None:
        return default
    try:
        wait = float(value)
    except ValueError:
        return default
    if math.isnan(wait):
        return default
    return max(0.0, wait)


class Operation(Generic[T]):
    """A long-running operation on the service.

    Attributes
    ----------
    name : str
        The public function that started it.
    status : str
        ``InProgress`` until done, then ``Succeeded`` (or the failure raised by :meth:`result`).
    url : str
        The URL being polled (give it to support, or poll it yourself).
    polls : int
        How many status requests were made.
    waited : float
        Seconds waited between polls, as the service asked.
    """

    def __init__(
        self,
        pipeline: Pipeline,
        *,
        name: str,
        initial: Response,
        resource_url: str,
        method: str,
        parse: Callable[[Response], T],
        default_wait: float,
        resume: Mapping[str, Any] | None = None,
    ) -> None:
        self.pipeline = pipeline
        self.name = name
        self._parse = parse
        self._resume = dict(resume or {})
        self._method = method.upper()
        self._resource_url = resource_url
        self._default_wait = default_wait
        self.polls = 0
        self.waited = 0.0
        self._result: T | None = None
        self._final: Response | None = None
        self._error: OperationFailedError | None = None
        self.status = "InProgress"
        self.url = resource_url
        if initial.status != 202:
            self._final = initial
            self.status = "Succeeded"
            return
        async_header = pipeline.config.async_header
        self._async_url = initial.headers.get(async_header)
        self._location = initial.headers.get("location")
        self._next_wait = _retry_after(initial, default_wait)
        url = self._async_url or self._location
        if not url:
            raise ProtocolError(f"{name}: the service answered 202 without a Location header, "
                                "so the operation cannot be followed", url=initial.url,
                                status=initial.status)
        self.url = url

    def __repr__(self) -> str:
        return f"<Operation {self.name} {self.status} polls={self.polls} url={self.url}>"

    def done(self) -> bool:
        """Whether the operation has finished (polls once if it was not known to be); a failed
        operation raises its error."""
        if self._error is not None:
            raise self._error
        if self.status == "InProgress":
            self._poll()
        return self.status != "InProgress"

    def _poll(self) -> None:
        self.polls += 1
        if self._async_url:
            response = self.pipeline.send("GET", self._async_url, operation=self.name)
            body = response.json_object()
            status = body.get("status", "InProgress")
            if not isinstance(status, str):
                raise ProtocolError(f"{self.name}: the operation status is "
                                    f"{type(status).__name__}, not a string",
                                    url=self._async_url, status=response.status)
            self._next_wait = _retry_after(response, self._default_wait)
            if status.lower() not in _TERMINAL:
                return
            if status.lower() != "succeeded":
                self.status = status
                err = body.get("error")
                info = parse_error_body({"error": err} if isinstance(err, dict) else None)
                self._error = OperationFailedError(
                    200, ErrorInfo(code=info.code or status, message=info.message),
                    operation=self.name, url=self._async_url)
                raise self._error
            final_url = self._location if (self._method == "POST" and self._location) \
                else self._resource_url
            self._final = self.pipeline.send("GET", final_url, operation=self.name,
                                             expected=(200, 201, 204))
            self.status = "Succeeded"
            return
        # without the async header, the URL polled is the Location
        try:
            response = self.pipeline.send("GET", self.url, operation=self.name,
                                          expected=(200, 201, 202, 204))
        except (AuthenticationError, RateLimitError, ServiceError):
            raise
        except ApiError as err:
            # a Location poll that answers an error is the operation's failure
            self.status = "Failed"
            self._error = OperationFailedError(
                err.status, ErrorInfo(code=err.code, message=err.message,
                                      request_id=err.request_id),
                operation=self.name, url=self.url)
            raise self._error from None
        if response.status == 202:
            self.url = response.headers.get("location") or self.url
            self._location = self.url
            self._next_wait = _retry_after(response, self._default_wait)
            return
        if not response.content.strip() and self._method in ("PUT", "PATCH"):
            response = self.pipeline.send("GET", self._resource_url, operation=self.name)
        self._final = response
        self.status = "Succeeded"

    def result(self, timeout: float | None = None) -> T:
        """Wait for the operation to finish and return its result.

        Parameters
        ----------
        timeout : float, optional
            Seconds to wait at most (the waits the service asks for count); ``None`` waits as long
            as it takes.

        Raises
        ------
        OperationTimeoutError
            Still running after ``timeout``; ``err.operation.result()`` resumes.
        OperationFailedError
            The operation ended Failed or Canceled.
        """
        if self._error is not None:
            raise self._error
        if self._final is not None:
            return self._parsed()
        bar = progress_bar(self.pipeline.config, desc=f"{self.name}: polling", unit="poll")
        try:
            self._wait(timeout, bar)
        finally:
            bar.close()
        return self._parsed()

    def _wait(self, timeout: float | None, bar: Any) -> None:
        spent = 0.0
        settings = self.pipeline.config.settings
        # the toolkit's own default wait is the user's choice; a longer one the service asks
        # for is not sat out
        ceiling = max(settings.max_retry_wait, self._default_wait)
        while self.status == "InProgress":
            asked = self._next_wait
            if asked > ceiling:
                # resuming later polls at once: the caller has sat out the wait by then
                self._next_wait = 0.0
                raise OperationWaitError(self.name, self.url, asked, ceiling, self)
            wait = max(asked, settings.min_poll_wait)
            if timeout is not None and spent + wait > timeout:
                raise OperationTimeoutError(self.name, self.url, timeout, self)
            if wait > 0:
                logger.debug("%s: waiting %.1f s before poll %d", self.name, wait, self.polls + 1)
                self.pipeline.config.sleep(wait)
            self.waited += wait
            started = time.monotonic()
            self._poll()
            bar.update()
            spent += wait + (time.monotonic() - started)

    def _parsed(self) -> T:
        if self._result is None:
            assert self._final is not None
            self._result = self._parse(self._final)
        return self._result

    # ---------------------------------------------------------------- surviving a restart
    _KIND = "arm"

    def _state(self) -> dict[str, Any]:
        return {"method": self._method, "resource_url": self._resource_url,
                "async_url": self._async_url, "location": self._location}

    @property
    def continuation_token(self) -> str | None:
        """A string from which :func:`resume_operation` finishes this operation in another
        process (after a kernel restart). It holds the operation's URLs and the arguments
        needed to read its result, never a credential; ``None`` when the service finished the
        operation with its first answer (there is nothing left to follow)."""
        if self._final is not None and self.polls == 0:
            return None
        state = {"v": _TOKEN_VERSION, "kind": self._KIND, "family": self.pipeline.family,
                 "name": self.name, "args": self._resume, **self._state()}
        return _TOKEN_PREFIX + base64.urlsafe_b64encode(orjson.dumps(state)).decode().rstrip("=")

    @classmethod
    def _restore(cls, pipeline: Pipeline, state: Mapping[str, Any]) -> Operation[Any]:
        op = cls.__new__(cls)
        op.pipeline = pipeline
        op.name = state["name"]
        op._resume = dict(state["args"])
        op._default_wait = pipeline.config.settings.poll_interval
        op.polls = 0
        op.waited = 0.0
        op._result = None
        op._final = None
        op._error = None
        op.status = "InProgress"
        op._next_wait = 0.0
        op._restore_state(state)
        return op

    def _restore_state(self, state: Mapping[str, Any]) -> None:
        self._method = state["method"]
        self._resource_url = state["resource_url"]
        self._async_url = state["async_url"]
        self._location = state["location"]
        self.url = self._async_url or self._location or self._resource_url


@overload
def start_arm_operation(
    pipeline: Pipeline,
    method: str,
    path: str,
    *,
    name: str,
    parse: Callable[[Response], T],
    params: dict[str, Any] | None = ...,
    json: Any = ...,
    wait: Literal[True] = ...,
    timeout: float | None = ...,
    idempotent: bool = ...,
    resume: Mapping[str, Any] | None = ...,
) -> T: ...
@overload
def start_arm_operation(
    pipeline: Pipeline,
    method: str,
    path: str,
    *,
    name: str,
    parse: Callable[[Response], T],
    params: dict[str, Any] | None = ...,
    json: Any = ...,
    wait: Literal[False],
    timeout: float | None = ...,
    idempotent: bool = ...,
    resume: Mapping[str, Any] | None = ...,
) -> Operation[T]: ...
@overload
def start_arm_operation(
    pipeline: Pipeline,
    method: str,
    path: str,
    *,
    name: str,
    parse: Callable[[Response], T],
    params: dict[str, Any] | None = ...,
    json: Any = ...,
    wait: bool,
    timeout: float | None = ...,
    idempotent: bool = ...,
    resume: Mapping[str, Any] | None = ...,
) -> T | Operation[T]: ...
def start_arm_operation(
    pipeline: Pipeline,
    method: str,
    path: str,
    *,
    name: str,
    parse: Callable[[Response], T],
    params: dict[str, Any] | None = None,
    json: Any = None,
    wait: bool = True,
    timeout: float | None = None,
    idempotent: bool = True,
    resume: Mapping[str, Any] | None = None,
) -> T | Operation[T]:
    """Start an ARM operation that may answer 200 (done) or 202 (accepted, poll).

    Returns the parsed result when ``wait`` is true (after polling if needed), else the
    :class:`Operation` handle (already finished when the service answered 200 at once).
    ``resume`` holds the JSON-able arguments the function's ``_resume_parser`` needs to read the
    result in another process (see :func:`resume_operation`).
    """
    initial = pipeline.send(method, path, params=params, json=json, operation=name,
                            expected=(200, 201, 202), idempotent=idempotent)
    if initial.status == 202:
        logger.info("%s: accepted (202), polling", name)
    op = Operation(pipeline, name=name, initial=initial, resource_url=pipeline.url(path, params),
                   method=method, parse=parse,
                   default_wait=pipeline.config.settings.poll_interval, resume=resume)
    return op.result(timeout) if wait else op


# --------------------------------------------------------------------------------------------
# item operations (eventstream creation): 202 + Location -> operation state -> result

#: Operation states that mean "still going" (``Undefined`` included; unknown ones count too).
_ITEM_RUNNING = frozenset({"undefined", "notstarted", "running"})
_ITEM_FAILED = frozenset({"failed", "canceled", "cancelled"})


class ItemOperation(Operation[T]):
    """A long-running item operation (eventstream creation).

    The creation answers 201 with the item (done at once) or 202 with ``Location`` (the operation
    state URL), an operation id header and ``Retry-After``. Each poll reads the state (HTTP 200
    with ``status`` ``NotStarted``, ``Running``, ``Succeeded``, ``Failed``...); a ``Location``
    header is followed exactly as given. On ``Succeeded`` the result is read from ``Location``
    (the ``.../result`` URL); on ``Failed`` the operation's own error is raised as
    :class:`~toolkit._core.errors.OperationFailedError`.

    Attributes
    ----------
    operation_id : str or None
        The service's operation id (``x-vendor-operation-id``).
    state : str
        The last state the service reported (``NotStarted``, ``Running``, ``Succeeded``...).
    percent_complete : int or None
        The last ``percentComplete``.
    history : list of dict
        One entry per poll: ``status``, ``percentComplete``, ``retry_after``.
    """

    def __init__(
        self,
        pipeline: Pipeline,
        *,
        name: str,
        initial: Response,
        parse: Callable[[Response], T],
        default_wait: float,
        resume: Mapping[str, Any] | None = None,
    ) -> None:
        self.pipeline = pipeline
        self.name = name
        self._parse = parse
        self._resume = dict(resume or {})
        self._default_wait = default_wait
        self._method = initial.method.upper()
        self._resource_url = initial.url
        self.polls = 0
        self.waited = 0.0
        self._result: T | None = None
        self._final: Response | None = None
        self._error: OperationFailedError | None = None
        self.history: list[dict[str, Any]] = []
        self.percent_complete: Any = None
        self.result_url: str | None = None
        self.operation_id = initial.headers.get(f"{pipeline.header_prefix}operation-id")
        self.url = initial.url
        if initial.status != 202:
            self._final = initial
            self.status = self.state = "Succeeded"
            return
        location = initial.headers.get("location")
        if not location:
            raise ProtocolError(f"{name}: the service answered 202 without a Location header, "
                                "so the operation cannot be followed", url=initial.url,
                                status=initial.status)
        self.url = location
        self.status = "InProgress"
        self.state = "NotStarted"
        self._next_wait = _retry_after(initial, default_wait)

    def __repr__(self) -> str:
        return (f"<ItemOperation {self.name} {self.state} polls={self.polls} "
                f"url={self.url}>")

    _KIND = "item"

    def _state(self) -> dict[str, Any]:
        return {"method": self._method, "resource_url": self._resource_url, "url": self.url,
                "operation_id": self.operation_id}

    def _restore_state(self, state: Mapping[str, Any]) -> None:
        self._method = state["method"]
        self._resource_url = state["resource_url"]
        self.url = state["url"]
        self.operation_id = state["operation_id"]
        self.state = "Running"
        self.history = []
        self.percent_complete = None
        self.result_url = None

    def _poll(self) -> None:
        self.polls += 1
        response = self.pipeline.send("GET", self.url, operation=self.name)
        body = response.json()
        if not isinstance(body, dict):
            raise ProtocolError(f"{self.name}: the operation state is not a JSON object",
                                url=self.url, status=response.status)
        state = str(body.get("status") or "Undefined")
        self.state = state
        self.percent_complete = body.get("percentComplete")
        location = response.headers.get("location")
        retry_after = response.headers.get("retry-after")
        self.history.append({"status": state, "percentComplete": self.percent_complete,
                             "retry_after": retry_after})
        low = state.lower()
        if low == "succeeded":
            self.result_url = location or self.url.rstrip("/") + "/result"
            self._final = self.pipeline.send("GET", self.result_url, operation=self.name)
            self.status = "Succeeded"
            return
        if low in _ITEM_FAILED:
            self.status = state
            error = body.get("error")
            info = parse_error_body(error if isinstance(error, dict) else None)
            info.code = info.code or state
            info.message = info.message or f"the operation ended {state}"
            self._error = OperationFailedError(200, info, operation=self.name, url=self.url)
            raise self._error
        if low not in _ITEM_RUNNING:
            logger.info("%s: operation state %r not known to the toolkit; still polling",
                        self.name, state)
        if location:
            self.url = location
        self._next_wait = _retry_after(response, self._default_wait)


@overload
def start_item_operation(
    pipeline: Pipeline,
    method: str,
    path: str,
    *,
    name: str,
    parse: Callable[[Response], T],
    params: dict[str, Any] | None = ...,
    json: Any = ...,
    wait: Literal[True] = ...,
    timeout: float | None = ...,
    idempotent: bool = ...,
    resume: Mapping[str, Any] | None = ...,
) -> T: ...
@overload
def start_item_operation(
    pipeline: Pipeline,
    method: str,
    path: str,
    *,
    name: str,
    parse: Callable[[Response], T],
    params: dict[str, Any] | None = ...,
    json: Any = ...,
    wait: Literal[False],
    timeout: float | None = ...,
    idempotent: bool = ...,
    resume: Mapping[str, Any] | None = ...,
) -> ItemOperation[T]: ...
@overload
def start_item_operation(
    pipeline: Pipeline,
    method: str,
    path: str,
    *,
    name: str,
    parse: Callable[[Response], T],
    params: dict[str, Any] | None = ...,
    json: Any = ...,
    wait: bool,
    timeout: float | None = ...,
    idempotent: bool = ...,
    resume: Mapping[str, Any] | None = ...,
) -> T | ItemOperation[T]: ...
def start_item_operation(
    pipeline: Pipeline,
    method: str,
    path: str,
    *,
    name: str,
    parse: Callable[[Response], T],
    params: dict[str, Any] | None = None,
    json: Any = None,
    wait: bool = True,
    timeout: float | None = None,
    idempotent: bool = False,
    resume: Mapping[str, Any] | None = None,
) -> T | ItemOperation[T]:
    """Start an item operation that answers 201 (done) or 202 (accepted, poll its state).

    The request is not idempotent by default (a creation): it is retried only on 429.
    Returns the parsed result when ``wait`` is true, else the :class:`ItemOperation` handle
    (already finished when the service answered 201).
    """
    initial = pipeline.send(method, path, params=params, json=json, operation=name,
                            expected=(200, 201, 202), idempotent=idempotent)
    if initial.status == 202:
        logger.info("%s: accepted (202), polling the operation state", name)
    op = ItemOperation(pipeline, name=name, initial=initial, parse=parse,
                       default_wait=pipeline.config.settings.poll_interval, resume=resume)
    return op.result(timeout) if wait else op


# --------------------------------------------------------------------------------------------
# resuming an operation from its continuation token (in a new process)

_TOKEN_PREFIX = "tkop1."
_TOKEN_VERSION = 1
_TOKEN_MAX = 16_384


def _resumable() -> tuple[str, ...]:
    # the operations whose record makes a result parser from a token's arguments (a token may be
    # resumed in a new kernel, before the operation's module is imported: records() imports it)
    return tuple(name for name, rec in records().items() if rec.resume is not None)


def _bad_token(rule: str) -> Exception:
    from toolkit._core.errors import ValidationError

    return ValidationError("token", "<continuation token>", rule)


def decode_token(token: Any) -> dict[str, Any]:
    """The state a continuation token holds; ValidationError when it is not one or damaged."""
    if not isinstance(token, str) or not token.startswith(_TOKEN_PREFIX):
        raise _bad_token(f"must be a string from Operation.continuation_token "
                         f"(starting {_TOKEN_PREFIX!r})")
    if len(token) > _TOKEN_MAX:
        raise _bad_token(f"is longer than {_TOKEN_MAX} characters")
    body = token[len(_TOKEN_PREFIX):]
    try:
        state = orjson.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except (binascii.Error, ValueError, orjson.JSONDecodeError) as err:
        raise _bad_token("is damaged: it does not decode") from err
    if not isinstance(state, dict) or state.get("v") != _TOKEN_VERSION:
        raise _bad_token("was made by another version of the toolkit")
    shape = {"kind": ("arm", "item"), "family": ("arm", "maps", "graph", "fabric"),
             "name": _resumable()}
    for key, allowed in shape.items():
        if state.get(key) not in allowed:
            raise _bad_token(f"is damaged: {key} must be one of {', '.join(allowed)}")
    if not isinstance(state.get("args"), dict) or not isinstance(state.get("method"), str):
        raise _bad_token("is damaged: its arguments are missing")
    url_keys = ("resource_url", "async_url", "location") if state["kind"] == "arm" \
        else ("resource_url", "url")
    for key in url_keys:
        value = state.get(key)
        if value is not None and not isinstance(value, str):
            raise _bad_token(f"is damaged: {key} must be a URL")
    if state["kind"] == "item" and not isinstance(state.get("url"), str):
        raise _bad_token("is damaged: the operation URL is missing")
    if state["kind"] == "arm" and not (state.get("async_url") or state.get("location")):
        raise _bad_token("is damaged: the operation URL is missing")
    state["_urls"] = [state[k] for k in url_keys if state.get(k)]
    return state


def restore_operation(pipeline: Pipeline, state: Mapping[str, Any],
                      parse: Callable[[Operation[Any]], Callable[[Response], Any]]
                      ) -> Operation[Any]:
    """The operation a decoded token describes, on ``pipeline``; ``parse(op)`` gives its result
    parser. Every URL of the token must be one the family trusts (ValidationError otherwise,
    before any request)."""
    for url in state["_urls"]:
        origin = Origin.of(url)
        if origin is None or not pipeline.config.trusts(origin):
            raise _bad_token(f"names an address outside the {state['family']} service of this "
                             f"connection ({pipeline.config.origin}); resume it with a "
                             "connection to the service that started it")
    cls: type[Operation[Any]] = ItemOperation if state["kind"] == "item" else Operation
    op = cls._restore(pipeline, state)
    try:
        op._parse = parse(op)
    except TypeError as err:
        raise _bad_token("is damaged: its arguments do not fit the operation") from err
    logger.info("%s: resumed from a continuation token, polling %s", op.name, op.url)
    return op


def resume_parser(state: Mapping[str, Any]) -> Callable[..., Any]:
    """The factory ``(connection, operation, **args) -> parse`` of a decoded token's
    operation."""
    factory = record(state["name"]).resume
    if factory is None:
        raise _bad_token(f"is damaged: {state['name']} cannot be resumed")
    return factory
