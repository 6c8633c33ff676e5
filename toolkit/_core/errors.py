"""Exception hierarchy of the toolkit: errors, warnings and what they carry.

The services' error bodies are parsed by :mod:`toolkit._core.error_bodies`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from azure.core.exceptions import (
    ClientAuthenticationError,
    HttpResponseError,
    ODataV4Format,
    ResourceExistsError,
    ResourceNotFoundError,
)

from toolkit._core.secrets import redact, redact_value

logger = logging.getLogger(__name__)

__all__ = [
    "ApiError",
    "AuthenticationError",
    "ConflictError",
    "EmptySnapshotWarning",
    "ErrorInfo",
    "IncompleteResultError",
    "NotFoundError",
    "OperationFailedError",
    "OperationTimeoutError",
    "OperationWaitError",
    "PlaceNotFoundError",
    "ProtocolError",
    "RateLimitError",
    "ReconciliationWarning",
    "ResponseLimitError",
    "RetryWaitWarning",
    "RevealedSecretsWarning",
    "SandboxWarning",
    "ServiceError",
    "ToolkitError",
    "ToolkitWarning",
    "TransportError",
    "TruncatedResultWarning",
    "UntrustedOriginError",
    "ValidationError",
    "warn_user",
]


class ToolkitError(Exception):
    """Base class of every error the toolkit raises.

    Its text never shows a live secret: the arguments are redacted when the error is made, and
    again whenever it is shown (a token registered later is masked too).

    Attributes
    ----------
    partial : pandas.DataFrame or None
        When a collection failed part-way: the records read before the failure.
    next_link : str or None
        When a next page failed: where the remaining pages start.
    accepted : Operation or None
        When following a long-running operation the service had accepted failed: its handle
        (``err.accepted.result()`` resumes it). Nothing was sent again.
    continuation_token : str or None
        The same operation as a string, for ``toolkit.resume_operation`` in another process.
    """

    partial: Any = None
    next_link: str | None = None
    accepted: Any = None
    continuation_token: str | None = None

    def __init__(self, *args: Any) -> None:
        super().__init__(*(redact(a) if isinstance(a, str) else a for a in args))

    def __str__(self) -> str:
        return redact(super().__str__())

    def keep_partial(self, frame: Any, note: str) -> None:
        """Attach the records read before the failure (:attr:`partial`).

        ``note``, which says so, is added to the message.
        """
        self.partial = frame
        self.args = (f"{self.args[0] if self.args else ''}{note}", *self.args[1:])

    def keep_operation(self, operation: Any, note: str) -> None:
        """Attach the long-running operation this failure interrupted (:attr:`accepted`).

        The service accepted the operation, which goes on there: :attr:`accepted` resumes it
        (``err.accepted.result()``) and :attr:`continuation_token` in another process
        (``toolkit.resume_operation``). ``note``, which says so, is added to the message.
        """
        self.accepted = operation
        self.continuation_token = operation.continuation_token
        self.args = (f"{self.args[0] if self.args else ''}{note}", *self.args[1:])


class ToolkitWarning(UserWarning):
    """Base class of the toolkit's warnings (their text never shows a live secret)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*(redact(a) if isinstance(a, str) else a for a in args))

    def __str__(self) -> str:
        return redact(super().__str__())


class TruncatedResultWarning(ToolkitWarning):
    """A collection was cut short by ``max_items``: the frame does not hold every record."""


class IncompleteResultError(ToolkitError):
    """The service answered part of a result and gave no way to read the rest.

    A Resource Graph query whose result has more rows than a page but that the service cannot
    page (it projects no ``id``), or whose result the service truncated. The message says what
    to change; :attr:`partial` holds the rows that did come.
    """


class ReconciliationWarning(ToolkitWarning):
    """Two services' counts of the same thing at the same scope differ.

    The frame's ``attrs["reconciliation"]`` holds both counts.
    """


class EmptySnapshotWarning(ToolkitWarning):
    """A snapshot found no records for its day and scope (the partition written is empty)."""


class PlaceNotFoundError(ToolkitError, LookupError):
    """A place name the service's geocoding could not place.

    No match, or only a Low-confidence one. A batch keeps it as that location's row (``error.code``
    ``PlaceNotFoundError``); it is raised when no location could be asked about.

    Attributes
    ----------
    parameter : str
        The parameter the name was given in.
    name : str
        The name asked.
    """

    def __init__(self, parameter: str, name: str, reason: str) -> None:
        self.parameter = parameter
        self.name = name
        super().__init__(f"{parameter}={name!r}: {reason}")


class SandboxWarning(ToolkitWarning):
    """The functions answer from the embedded sandbox: invented data, not a real cloud's.

    Shown when ``connect()`` (or the first function called without a connection) starts the
    sandbox because nothing is configured.
    """


class RevealedSecretsWarning(ToolkitWarning):
    """An export was written with secret values in clear (``reveal=True``)."""


class RetryWaitWarning(ToolkitWarning):
    """A service asked to wait longer than ``max_retry_wait`` before asking again.

    The toolkit did not wait (the request failed with ``retry_after``, or a batch kept the item as
    an error row).
    """


#: Packages a warning is never attributed to: the toolkit and what it calls through (in a
#: worker thread of a fan-out no user frame exists; the warning then names no file).
_LIBRARY = frozenset({"toolkit", "azure", "requests", "urllib3", "concurrent", "threading"})


def warn_user(message: str, category: type[Warning]) -> None:
    """Warn (``warnings.warn``) at the first caller outside the toolkit.

    Attributed past the libraries the toolkit calls through too, so a notebook shows it once, at the
    user's own line.
    """
    import sys
    import warnings

    level, frame = 2, sys._getframe(1)  # stacklevel 2 is warn_user's caller
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] in _LIBRARY:
        level += 1
        frame = frame.f_back  # type: ignore[assignment]
    warnings.warn(message, category, stacklevel=level)


class ValidationError(ToolkitError, ValueError):
    """Bad input, found before any request was sent.

    Attributes
    ----------
    parameter : str
        The parameter at fault, as the function names it.
    value : object
        The value that broke the rule (never a secret).
    rule : str
        The rule, in the spec's words.
    """

    def __init__(self, parameter: str, value: Any, rule: str) -> None:
        self.parameter = parameter
        self.value = value
        self.rule = rule
        shown = repr(value)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        super().__init__(f"{parameter}={shown}: {rule}")


class TransportError(ToolkitError, ConnectionError):
    """The service could not be reached, or the connection broke, after every retry."""


class ProtocolError(ToolkitError):
    """The service answered with something the toolkit cannot read.

    A malformed or truncated body, a body of the wrong shape, a missing header.
    """

    def __init__(self, message: str, *, url: str | None = None, status: int | None = None) -> None:
        self.url = url
        self.status = status
        super().__init__(message)


class UntrustedOriginError(ProtocolError):
    """A link or operation URL the service sent names another origin: nothing was sent there.

    Another origin (scheme, host, port) than the family's endpoint and its trusted hosts.

    Attributes
    ----------
    host : str
        The host that was refused.
    """

    def __init__(self, message: str, *, host: str, url: str | None = None) -> None:
        self.host = host
        super().__init__(message, url=url)


class ResponseLimitError(ProtocolError):
    """A response broke one of the toolkit's caps; it is not asked for again.

    A body larger than ``max_body_bytes`` (after decompression), or an answer slower than
    ``request_deadline``.

    Attributes
    ----------
    limit : str
        The setting that was exceeded.
    """

    def __init__(self, message: str, *, limit: str, url: str | None = None,
                 status: int | None = None) -> None:
        self.limit = limit
        super().__init__(message, url=url, status=status)


def _reason(status: int) -> str | None:
    """Give the HTTP reason phrase of a status (``Not Found``)."""
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return None


@dataclass
class ErrorInfo:
    """The fields every error body shape is reduced to."""

    code: str | None = None
    message: str | None = None
    target: str | None = None
    details: list[dict[str, Any]] = field(default_factory=list)
    request_id: str | None = None
    retriable: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _restore(cls: type[ApiError], args: tuple[Any, ...], state: dict[str, Any]) -> ApiError:
    """Rebuild a pickled ApiError without calling its constructor."""
    err = cls.__new__(cls)
    err.args = args
    err.__dict__.update(state)
    return err


class ApiError(ToolkitError, HttpResponseError):
    """The service answered with an error status.

    Also an azure-core ``HttpResponseError`` (and each subclass the matching azure-core class:
    ``ResourceNotFoundError``, ``ClientAuthenticationError``, ``ResourceExistsError``), so code
    written for the vendors' SDKs catches it; ``status_code``, ``reason`` and ``error`` (an
    ``ODataV4Format`` with ``code``, ``message``, ``target``, ``details``) are set as azure-core
    sets them, ``response`` is ``None`` (the answer is not kept).

    Attributes
    ----------
    status : int
        HTTP status code (also ``status_code``).
    code : str or None
        The service's error code (``ResourceNotFound``, ``QueryFailure``...).
    message : str or None
        The service's message (azure-core's ``message`` is the whole text; here it is the
        service's own, ``str(err)`` gives the whole text).
    target, details, request_id, retry_after, retriable, operation
        As the error body and headers give them; ``operation`` is the toolkit's function name.
    """

    hint: str = ""

    def __init__(
        self,
        status: int,
        info: ErrorInfo | None = None,
        *,
        operation: str | None = None,
        url: str | None = None,
        retry_after: float | None = None,
        hint: str | None = None,
    ) -> None:
        info = info or ErrorInfo()
        self.status = status
        self.code = redact(info.code) if info.code else info.code
        self.message = redact(info.message) if info.message else info.message  # type: ignore[assignment]
        self.target = redact(info.target) if info.target else info.target
        self.details = redact_value(info.details)
        self.request_id = info.request_id
        self.retriable = info.retriable
        self.extra = redact_value(info.extra)
        self.operation = operation
        self.url = url
        self.retry_after = retry_after
        if hint is not None:
            self.hint = hint
        message = self.message
        super().__init__(self._text())  # azure-core sets message, status_code, error... here
        self.message = message
        self.status_code = status
        self.reason = _reason(status)
        self.error = ODataV4Format({"error": {
            "code": self.code, "message": self.message, "target": self.target,
            "details": [d for d in self.details if isinstance(d, dict)]}}) \
            if self.code or self.message else None
        # what azure-core took from the exception being handled, if any: not the error's own
        self.exc_type = type(self)
        self.exc_value = self.exc_traceback = None
        self.exc_msg = str(self)

    def __reduce__(self) -> Any:
        # the handle of an interrupted operation holds a live pipeline: its token travels instead
        state = {k: v for k, v in self.__dict__.items()
                 if k not in ("response", "__traceback__", "accepted")}
        return (_restore, (type(self), self.args, state))

    def _lead(self) -> str:
        """Say what happened, before the service's code and message."""
        return f"HTTP {self.status}" + (f" {self.code}" if self.code else "")

    def _where(self) -> str:
        """Where to look further (URLs, ids), after the message."""
        return f" [request id {self.request_id}]" if self.request_id else ""

    def _text(self) -> str:
        head = f"{self.operation}: " if self.operation else ""
        text = head + self._lead()
        if self.message:
            text += f": {self.message}"
        if self.target:
            text += f" (target: {self.target})"
        text += self._where()
        if self.hint:
            text += f"\nWhat to do: {self.hint}"
        return text


class ServiceError(ApiError):
    """A server-side failure (5xx) that retries did not overcome."""

    hint = "The service failed; the request was retried. Try again later."


class AuthenticationError(ApiError, ClientAuthenticationError):
    """401 or 403: the credential is refused.

    It is missing, wrong, expired, for another audience, or lacks a permission.
    """

    hint = (
        "Check the credential given to toolkit.connect() (credential=, token= or the maps key): "
        "it must be valid, unexpired, issued for this service, and allowed to perform the action."
    )


class NotFoundError(ApiError, ResourceNotFoundError):
    """404: the resource (subscription, resource group, gateway...) does not exist."""

    hint = ("Check the identifiers (subscription, resource group, name); when connected to the "
            "sandbox, toolkit.sandbox.catalog() lists what it holds.")


class ConflictError(ApiError, ResourceExistsError):
    """409: the resource's state does not allow the request (e.g. a change in progress)."""

    hint = "Wait for the running change to finish, then try again."


class RateLimitError(ApiError):
    """429 that the toolkit did not wait out.

    The service asked for a longer wait than the cap (``max_retry_wait``), or throttling outlasted
    every retry. ``retry_after`` says how long to wait.
    """

    def __init__(self, status: int = 429, info: ErrorInfo | None = None, **kw: Any) -> None:
        retry_after = kw.get("retry_after")
        if "hint" not in kw or kw["hint"] is None:
            if retry_after is not None:
                kw["hint"] = (
                    f"The service is throttling; wait {retry_after:g} s before calling again, "
                    "or raise max_retry_wait in toolkit.connect() to let the toolkit wait."
                )
            else:
                kw["hint"] = "The service is throttling; wait a while before calling again."
        super().__init__(status, info, **kw)


class OperationFailedError(ApiError):
    """A long-running operation ended Failed or Canceled.

    Code and message are the operation's (``status`` is the HTTP status of the poll that reported
    it).
    """

    hint = "The operation itself failed on the service; read the code and message above."

    def _lead(self) -> str:
        return "the long-running operation failed" + (f": {self.code}" if self.code else "")

    def _where(self) -> str:
        return (f" [operation {self.url}]" if self.url else "") + super()._where()


class OperationTimeoutError(ToolkitError, TimeoutError):
    """A long-running operation was still running when the caller's ``timeout`` passed.

    Attributes
    ----------
    operation_url : str
        The URL to poll; ``operation.result()`` goes on waiting from where this stopped.
    operation : object
        The :class:`toolkit.Operation` handle to resume with.
    """

    def __init__(self, name: str, operation_url: str, timeout: float, operation: Any,
                 message: str | None = None) -> None:
        self.operation_url = operation_url
        self.operation = operation
        self.accepted = operation
        self.continuation_token = getattr(operation, "continuation_token", None)
        self.timeout = timeout
        super().__init__(message or (
            f"{name}: still running after {timeout:g} s. It goes on on the service; resume with "
            f"err.operation.result() (or poll {operation_url})."
        ))


class OperationWaitError(OperationTimeoutError):
    """A long-running operation's service asked to wait longer before the next poll than allowed.

    Longer than the toolkit sits out (``max_retry_wait``). The operation goes on;
    ``err.operation.result()`` resumes (after ``retry_after`` seconds, it polls at once).

    Attributes
    ----------
    retry_after : float
        The wait the service asked for, in seconds.
    """

    def __init__(self, name: str, operation_url: str, retry_after: float, max_wait: float,
                 operation: Any) -> None:
        self.retry_after = retry_after
        shown = f"{retry_after:g}" if retry_after < 1e9 else f"{retry_after:.3g}"
        super().__init__(
            name, operation_url, max_wait, operation,
            f"{name}: the service asked to wait {shown} s before the next poll, more than "
            f"max_retry_wait={max_wait:g} s; not waiting. The operation goes on on the "
            f"service; resume later with err.operation.result() (or poll {operation_url}), or "
            "raise max_retry_wait in toolkit.connect() to let the toolkit wait.")
