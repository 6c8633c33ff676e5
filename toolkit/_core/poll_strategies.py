"""Polling strategies: how a long-running operation is followed, one status request at a time.

A service that accepts an operation (HTTP 202) says where to follow it; each way of saying so is
a small strategy, chosen from the first answer as azure-core's ``LROBasePolling`` chooses its
own, and driven by the one waiter of :mod:`toolkit._core.polling`:

* :class:`AsyncHeaderPolling` (resource manager, when ``<Namespace>-AsyncOperation`` is present):
  a 200 status body whose ``status`` is ``Succeeded``, ``Failed`` or ``Canceled`` when done; then
  the result is read from ``Location`` (POST) or the original resource URL (PUT/PATCH).
* :class:`LocationPolling` (resource manager): 202 while running, then the final answer (200/201
  with the result, 204 without); an empty final body for a PUT or PATCH means "read the
  resource"; an error answer is the operation's failure.
* :class:`OperationLocationPolling` (the maps route operations: the asynchronous route
  matrix): the status at ``Operation-Location`` answers 200 with ``status`` ``NotStarted`` or
  ``Running`` until ``Completed``, when its ``result.resultUrl`` names the result (else the
  status URL's ``/result``), or ``Failed`` with the operation's error.
* :class:`ItemStatusPolling` (item operations: eventstream creation): the operation state at
  ``Location`` answers 200 with ``status`` ``NotStarted``/``Running`` (its ``Location`` followed)
  until ``Succeeded``, when ``Location`` points at the result, or ``Failed`` with the operation's
  error. The real service names a cluster host in ``Location``
  (``wabi-<region>-redirect.analysis.windows.net``): a URL on a host the family does not trust
  is asked at the family's own endpoint, path and query kept
  (:func:`~toolkit._core.urls.at_own_origin`), and a 202 without ``Location`` is followed at
  :data:`~toolkit._spec.fabric.OPERATION_STATE_PATH` from its operation id; the credential never
  leaves the configured endpoint.

A strategy sends one request per :meth:`PollingStrategy.poll`, records the wait the service asks
for before the next (:attr:`PollingStrategy.next_wait`) and returns a :class:`Poll`; it neither
waits nor counts (the waiter does both). Its :meth:`PollingStrategy.state` is what a continuation
token keeps of it, and :func:`restore_strategy` reads that back.
"""

from __future__ import annotations

import logging
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self
from urllib.parse import urlsplit

from toolkit._core.error_bodies import parse_error_body
from toolkit._core.errors import (
    ApiError,
    AuthenticationError,
    ErrorInfo,
    OperationFailedError,
    ProtocolError,
    RateLimitError,
    ServiceError,
)
from toolkit._core.messages import Request, Response
from toolkit._core.pipeline import Pipeline
from toolkit._core.urls import at_own_origin, segment
from toolkit._spec.fabric import OPERATION_STATE_PATH

logger = logging.getLogger(__name__)

__all__ = ["AsyncHeaderPolling", "ItemStatusPolling", "LocationPolling",
           "OperationLocationPolling", "Poll", "PollingStrategy", "restore_strategy",
           "retry_after"]

_TERMINAL = {"succeeded", "failed", "canceled", "cancelled"}
#: Item states that mean "still going" (``Undefined`` included; unknown ones count too).
_ITEM_RUNNING = frozenset({"undefined", "notstarted", "running"})
_ITEM_FAILED = frozenset({"failed", "canceled", "cancelled"})
#: States of an operation followed at ``Operation-Location`` that mean it is done (the maps
#: route operations say ``Completed``; azure-core's ``OperationResourcePolling`` ``Succeeded``).
_STATUS_DONE = frozenset({"completed", "succeeded"})


def retry_after(response: Response, default: float) -> float:
    """Read the ``Retry-After`` seconds of an answer.

    Parameters
    ----------
    response : Response
        The answer that started or polled the operation.
    default : float
        The wait when the header is absent or unreadable.

    Returns
    -------
    float
        The seconds asked for: ``default`` when absent, unreadable or NaN, 0 for a negative
        value, infinity for an infinite one (which the waiter's ceiling refuses).
    """
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


@dataclass(frozen=True)
class Poll:
    """What one status request said.

    Attributes
    ----------
    status : str
        ``InProgress`` while running, ``Succeeded``, or the failure's status word.
    final : Response or None
        The answer to parse the result from, once succeeded.
    failure : OperationFailedError or None
        The operation's own error, once it failed or was cancelled.
    """

    status: str = "InProgress"
    final: Response | None = None
    failure: OperationFailedError | None = None


class PollingStrategy(ABC):
    """One way of following an accepted operation.

    Parameters
    ----------
    method : str
        The method of the request that started the operation (upper case).
    resource_url : str
        The URL of that request.
    url : str
        The URL polled.
    default_wait : float
        The wait between polls when the service names none.

    Attributes
    ----------
    url : str
        The URL polled next.
    next_wait : float
        Seconds the service asked to wait before the next poll.
    """

    #: The kind a continuation token records (``arm``, ``status`` or ``item``).
    kind: ClassVar[str]

    def __init__(self, *, method: str, resource_url: str, url: str,
                 default_wait: float) -> None:
        self.method = method
        self.resource_url = resource_url
        self.url = url
        self.default_wait = default_wait
        self.next_wait = 0.0

    @classmethod
    @abstractmethod
    def can_poll(cls, initial: Response, pipeline: Pipeline) -> bool:
        """Tell whether a 202 answer names what this strategy follows."""

    @classmethod
    @abstractmethod
    def from_initial(cls, initial: Response, pipeline: Pipeline,
                     default_wait: float) -> PollingStrategy:
        """Make the strategy that follows the operation a 202 answer accepted."""

    @classmethod
    def _following(cls, initial: Response, url: str, default_wait: float,
                   **extra: Any) -> Self:
        """Poll ``url`` for the operation ``initial`` accepted, after the wait it asked for."""
        strategy = cls(method=initial.method.upper(), resource_url=initial.url, url=url,
                       default_wait=default_wait, **extra)
        strategy.next_wait = retry_after(initial, default_wait)
        return strategy

    @abstractmethod
    def poll(self, pipeline: Pipeline, name: str) -> Poll:
        """Send one status request and say what it showed."""

    @abstractmethod
    def state(self) -> dict[str, Any]:
        """Give the JSON-able state a continuation token keeps."""


class AsyncHeaderPolling(PollingStrategy):
    """Follow the async-operation header's status URL, then read the result.

    Parameters
    ----------
    location : str or None
        The first answer's ``Location`` (where a POST's result is read).
    **kwargs
        As for :class:`PollingStrategy`; ``url`` is the status URL.
    """

    kind = "arm"

    def __init__(self, *, location: str | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.location = location

    @classmethod
    def can_poll(cls, initial: Response, pipeline: Pipeline) -> bool:
        """Tell whether the answer carries the family's async-operation header."""
        return bool(initial.headers.get(pipeline.config.async_header))

    @classmethod
    def from_initial(cls, initial: Response, pipeline: Pipeline,
                     default_wait: float) -> AsyncHeaderPolling:
        """Follow the status URL of the answer's async-operation header."""
        return cls._following(initial, initial.headers[pipeline.config.async_header],
                              default_wait, location=initial.headers.get("location"))

    def poll(self, pipeline: Pipeline, name: str) -> Poll:
        """Read the status; once succeeded, read the result."""
        response = pipeline.send(Request("GET", self.url, operation=name))
        body = response.json_object()
        status = body.get("status", "InProgress")
        if not isinstance(status, str):
            raise ProtocolError(f"{name}: the operation status is {type(status).__name__}, "
                                "not a string", url=self.url, status=response.status)
        self.next_wait = retry_after(response, self.default_wait)
        if status.lower() not in _TERMINAL:
            return Poll()
        if status.lower() != "succeeded":
            err = body.get("error")
            info = parse_error_body({"error": err} if isinstance(err, dict) else None)
            return Poll(status, failure=OperationFailedError(
                200, ErrorInfo(code=info.code or status, message=info.message),
                operation=name, url=self.url))
        final_url = self.location if (self.method == "POST" and self.location) \
            else self.resource_url
        final = pipeline.send(Request("GET", final_url, operation=name, expected=(200, 201, 204)))
        return Poll("Succeeded", final=final)

    def state(self) -> dict[str, Any]:
        """Give the method, the resource, status and ``Location`` URLs."""
        return {"method": self.method, "resource_url": self.resource_url,
                "async_url": self.url, "location": self.location}


class LocationPolling(PollingStrategy):
    """Follow ``Location`` until it stops answering 202."""

    kind = "arm"

    @classmethod
    def can_poll(cls, initial: Response, pipeline: Pipeline) -> bool:
        """Tell whether the answer carries ``Location``."""
        return bool(initial.headers.get("location"))

    @classmethod
    def from_initial(cls, initial: Response, pipeline: Pipeline,
                     default_wait: float) -> LocationPolling:
        """Follow the answer's ``Location``."""
        return cls._following(initial, initial.headers["location"], default_wait)

    def poll(self, pipeline: Pipeline, name: str) -> Poll:
        """Poll ``Location``: 202 goes on, an error answer is the operation's failure."""
        try:
            response = pipeline.send(Request("GET", self.url, operation=name,
                                             expected=(200, 201, 202, 204)))
        except (AuthenticationError, RateLimitError, ServiceError):
            raise
        except ApiError as err:
            return Poll("Failed", failure=OperationFailedError(
                err.status, ErrorInfo(code=err.code, message=err.message,
                                      request_id=err.request_id),
                operation=name, url=self.url))
        if response.status == 202:
            self.url = response.headers.get("location") or self.url
            self.next_wait = retry_after(response, self.default_wait)
            return Poll()
        if not response.content.strip() and self.method in ("PUT", "PATCH"):
            response = pipeline.send(Request("GET", self.resource_url, operation=name))
        return Poll("Succeeded", final=response)

    def state(self) -> dict[str, Any]:
        """Give the method, the resource URL and the ``Location`` polled."""
        return {"method": self.method, "resource_url": self.resource_url,
                "async_url": None, "location": self.url}


class OperationLocationPolling(PollingStrategy):
    """Follow the status at ``Operation-Location``, then read the result it names.

    Parameters
    ----------
    **kwargs
        As for :class:`PollingStrategy`; ``url`` is the status URL.

    Attributes
    ----------
    status : str
        The last status the service reported (``NotStarted`` before the first poll).
    result_url : str or None
        Where the result was read, once done.
    """

    kind = "status"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.status = "NotStarted"
        self.result_url: str | None = None

    @classmethod
    def can_poll(cls, initial: Response, pipeline: Pipeline) -> bool:
        """Tell whether the answer carries ``Operation-Location``."""
        return bool(initial.headers.get("operation-location"))

    @classmethod
    def from_initial(cls, initial: Response, pipeline: Pipeline,
                     default_wait: float) -> OperationLocationPolling:
        """Follow the status URL of the answer's ``Operation-Location``."""
        return cls._following(initial, initial.headers["operation-location"], default_wait)

    def poll(self, pipeline: Pipeline, name: str) -> Poll:
        """Read the status; once done, read the result (where the status names it)."""
        response = pipeline.send(Request("GET", self.url, operation=name))
        body = response.json_object()
        status = body.get("status")
        if not isinstance(status, str) or not status:
            raise ProtocolError(f"{name}: the operation's status answer has no status (a "
                                f"{type(status).__name__} instead of a word)", url=self.url,
                                status=response.status)
        self.status = status
        self.next_wait = retry_after(response, self.default_wait)
        low = status.lower()
        if low in _STATUS_DONE:
            named = body.get("result")
            link = named.get("resultUrl") if isinstance(named, dict) else None
            parts = urlsplit(self.url)
            self.result_url = link if isinstance(link, str) and link else \
                parts._replace(path=parts.path.rstrip("/") + "/result").geturl()
            final = pipeline.send(Request("GET", self.result_url, operation=name))
            return Poll("Succeeded", final=final)
        if low in _ITEM_FAILED:
            error = body.get("error")
            info = parse_error_body({"error": error} if isinstance(error, dict) else None)
            info.code = info.code or status
            info.message = info.message or f"the operation ended {status}"
            return Poll(status, failure=OperationFailedError(200, info, operation=name,
                                                             url=self.url))
        if low not in ("notstarted", "running"):
            logger.info("%s: operation status %r not known to the toolkit; still polling",
                        name, status)
        return Poll()

    def state(self) -> dict[str, Any]:
        """Give the method, the resource URL and the status URL."""
        return {"method": self.method, "resource_url": self.resource_url, "url": self.url}


class ItemStatusPolling(PollingStrategy):
    """Follow an item operation's state, then read its result.

    Parameters
    ----------
    state_word : str
        The state known so far (``NotStarted`` at the start, ``Running`` when resumed).
    **kwargs
        As for :class:`PollingStrategy`; ``url`` is the operation state URL.

    Attributes
    ----------
    status : str
        The last state the service reported.
    percent_complete : int, float or None
        The last ``percentComplete`` (``None`` until the service reports a number).
    history : list of dict
        One entry per poll: ``status``, ``percentComplete``, ``retry_after``.
    result_url : str or None
        Where the result was read, once succeeded.
    """

    kind = "item"

    def __init__(self, *, state_word: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.status = state_word
        self.percent_complete: int | float | None = None
        self.history: list[dict[str, Any]] = []
        self.result_url: str | None = None

    @classmethod
    def can_poll(cls, initial: Response, pipeline: Pipeline) -> bool:
        """Tell whether the answer names the operation: ``Location`` or the operation id."""
        return bool(initial.headers.get("location") or _operation_id(initial, pipeline))

    @classmethod
    def from_initial(cls, initial: Response, pipeline: Pipeline,
                     default_wait: float) -> ItemStatusPolling:
        """Follow the operation state at the answer's ``Location`` (or its operation id)."""
        location = initial.headers.get("location")
        if location:
            url = _followed(pipeline, location, initial.operation)
        else:
            version = urlsplit(initial.url).path.strip("/").split("/")[0]
            op_id = _operation_id(initial, pipeline) or ""
            url = pipeline.url(OPERATION_STATE_PATH.format(
                version=segment(version, "api_version"),
                operation_id=segment(op_id, "operation id")))
        return cls._following(initial, url, default_wait, state_word="NotStarted")

    def poll(self, pipeline: Pipeline, name: str) -> Poll:
        """Read the operation state; once succeeded, read the result."""
        response = pipeline.send(Request("GET", self.url, operation=name))
        body = response.json()
        if not isinstance(body, dict):
            raise ProtocolError(f"{name}: the operation state is not a JSON object",
                                url=self.url, status=response.status)
        state = str(body.get("status") or "Undefined")
        self.status = state
        percent = body.get("percentComplete")
        self.percent_complete = percent if isinstance(percent, int | float) \
            and not isinstance(percent, bool) else None
        location = response.headers.get("location")
        if location:
            location = _followed(pipeline, location, name)
        self.history.append({"status": state, "percentComplete": self.percent_complete,
                             "retry_after": response.headers.get("retry-after")})
        low = state.lower()
        if low == "succeeded":
            self.result_url = location or self.url.rstrip("/") + "/result"
            final = pipeline.send(Request("GET", self.result_url, operation=name))
            return Poll("Succeeded", final=final)
        if low in _ITEM_FAILED:
            error = body.get("error")
            info = parse_error_body(error if isinstance(error, dict) else None)
            info.code = info.code or state
            info.message = info.message or f"the operation ended {state}"
            return Poll(state, failure=OperationFailedError(200, info, operation=name,
                                                            url=self.url))
        if low not in _ITEM_RUNNING:
            logger.info("%s: operation state %r not known to the toolkit; still polling",
                        name, state)
        if location:
            self.url = location
        self.next_wait = retry_after(response, self.default_wait)
        return Poll()

    def state(self) -> dict[str, Any]:
        """Give the method, the resource URL and the operation state URL."""
        return {"method": self.method, "resource_url": self.resource_url, "url": self.url}


def _operation_id(response: Response, pipeline: Pipeline) -> str | None:
    """Read the answer's operation id (``x-ms-operation-id`` in the cloud's words)."""
    return response.headers.get(f"{pipeline.header_prefix}operation-id") or None


def _followed(pipeline: Pipeline, url: str, name: str | None) -> str:
    """Give the URL an item operation is followed at: on the family's endpoint."""
    here = at_own_origin(pipeline.config, url)
    if here != url:
        logger.info("%s: the service named %s for the operation; following it at %s, as "
                    "Microsoft's Fabric clients do", name or "operation",
                    urlsplit(url).hostname, pipeline.config.origin)
    return here


def restore_strategy(state: Mapping[str, Any], default_wait: float) -> PollingStrategy:
    """Rebuild the strategy a decoded continuation token describes.

    Parameters
    ----------
    state : Mapping
        A state from :func:`toolkit._core.continuation.decode_token`.
    default_wait : float
        The wait between polls when the service names none.

    Returns
    -------
    PollingStrategy
        Ready to poll at once (``next_wait`` 0: the caller has waited by then).
    """
    common = {"method": state["method"], "resource_url": state["resource_url"],
              "default_wait": default_wait}
    if state["kind"] == "item":
        return ItemStatusPolling(url=state["url"], state_word="Running", **common)
    if state["kind"] == "status":
        return OperationLocationPolling(url=state["url"], **common)
    if state["async_url"]:
        return AsyncHeaderPolling(url=state["async_url"], location=state["location"], **common)
    return LocationPolling(url=state["location"] or state["resource_url"], **common)
