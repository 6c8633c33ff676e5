"""Long-running operations: one way to start them, one waiter, one handle.

:meth:`Operation.start` sends the request that starts an operation. A first answer of 200 or 201
carries the result (the operation is done at once); a 202 names where to follow it, and the
handle's polling strategy (:mod:`toolkit._core.poll_strategies`) is the first of its kind that can
follow that answer: the async-operation header, ``Operation-Location`` or ``Location`` for
:class:`Operation` (resource manager, the maps route operations), the operation state for
:class:`ItemOperation` (eventstream creation). A 202 naming
nothing to follow is a :class:`~toolkit._core.errors.ProtocolError`.

The handle waits: ``result(timeout=)`` polls to the end and returns the parsed result;
``wait(timeout=)`` does the same without reading it. Every wait between polls is bounded: at
least ``min_poll_wait`` (a ``Retry-After: 0`` does not make the toolkit spin), and a wait the
service asks for beyond ``max_retry_wait`` is not sat out:
:class:`~toolkit._core.errors.OperationWaitError` carries the handle to resume later, as a
throttled request's ``RateLimitError`` does. A timeout raises
:class:`~toolkit._core.errors.OperationTimeoutError` carrying the handle, so the caller can
resume; its ``continuation_token`` (:mod:`toolkit._core.continuation`) resumes it in another
process, through :func:`restore_operation`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Generic, Self, TypeVar

from toolkit._core.config import Origin
from toolkit._core.continuation import encode_token, token_error
from toolkit._core.errors import (
    OperationFailedError,
    OperationTimeoutError,
    OperationWaitError,
    ProtocolError,
    ToolkitError,
)
from toolkit._core.messages import Request, Response
from toolkit._core.pipeline import Pipeline
from toolkit._core.poll_strategies import (
    AsyncHeaderPolling,
    ItemStatusPolling,
    LocationPolling,
    OperationLocationPolling,
    PollingStrategy,
    restore_strategy,
)
from toolkit._core.progress import ProgressBar, progress_bar

logger = logging.getLogger(__name__)

__all__ = ["ItemOperation", "Operation", "restore_operation"]

T = TypeVar("T")


class Operation(Generic[T]):
    """A long-running operation on the service, and the waiter that follows it.

    Made by :meth:`start` (or by :func:`restore_operation` from a continuation token), never by
    hand.

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

    #: The strategies that can follow an accepted operation, the first that can poll chosen.
    strategies: ClassVar[tuple[type[PollingStrategy], ...]] = (
        AsyncHeaderPolling, OperationLocationPolling, LocationPolling)
    #: Said of an accepted operation the toolkit cannot follow to its end.
    accepted_note: ClassVar[str] = (" The operation goes on on the service; the toolkit did not "
                                    "send the request again.")

    def __init__(self, pipeline: Pipeline, *, name: str, parse: Callable[[Response], T],
                 strategy: PollingStrategy | None, final: Response | None, url: str,
                 resume: Mapping[str, Any] | None = None) -> None:
        self.pipeline = pipeline
        self.name = name
        self._parse = parse
        self._resume = dict(resume or {})
        self._strategy = strategy
        self._default_wait = pipeline.config.settings.poll_interval
        self._done_url = url
        self.polls = 0
        self.waited = 0.0
        self._result: T | None = None
        self._final = final
        self._error: OperationFailedError | None = None
        self.status = "Succeeded" if final is not None else "InProgress"

    @classmethod
    def start(cls, pipeline: Pipeline, method: str, path: str, *, name: str,
              parse: Callable[[Response], T], params: dict[str, Any] | None = None,
              json: Any = None, content_type: str = "application/json",
              idempotent: bool = True, resume: Mapping[str, Any] | None = None) -> Self:
        """Send the request that starts a long-running operation.

        Parameters
        ----------
        pipeline : Pipeline
            The family's pipeline.
        method : str
            The request's HTTP method.
        path : str
            A path under the family's base URL.
        name : str
            The public function starting it (for errors, logs and the token).
        parse : callable
            Makes the result from the answer that carries it.
        params : dict, optional
            Query parameters.
        json : object, optional
            The JSON body.
        content_type : str
            The body's ``Content-Type`` (``application/geo+json`` for a GeoJSON body).
        idempotent : bool
            Whether the request may be repeated on a transport error or a 5xx (a creation is
            not: it is retried only on 429).
        resume : Mapping, optional
            The JSON-able arguments the function's resume parser needs to read the result in
            another process (see :func:`toolkit.resume_operation`).

        Returns
        -------
        Operation
            The handle (of this class), finished already when the service answered 200 or 201.

        Raises
        ------
        ProtocolError
            A 202 naming nothing this class's strategies can follow.
        """
        initial = pipeline.send(Request(method, path, params=params, json=json, operation=name,
                                        expected=(200, 201, 202), idempotent=idempotent,
                                        content_type=content_type))
        if initial.status != 202:
            return cls(pipeline, name=name, parse=parse, strategy=None, final=initial,
                       url=initial.url, resume=resume)._started(initial)
        kind = next((s for s in cls.strategies if s.can_poll(initial, pipeline)), None)
        if kind is None:
            raise ProtocolError(f"{name}: the service accepted the operation (HTTP 202) without "
                                "naming where to follow it (no Location header), so the "
                                f"toolkit cannot follow it.{cls.accepted_note}",
                                url=initial.url, status=initial.status)
        logger.info("%s: accepted (202), polling", name)
        strategy = kind.from_initial(initial, pipeline, pipeline.config.settings.poll_interval)
        return cls(pipeline, name=name, parse=parse, strategy=strategy, final=None,
                   url=initial.url, resume=resume)._started(initial)

    def _started(self, initial: Response) -> Self:
        """Keep what a subclass reads of the first answer (nothing here)."""
        return self

    @property
    def url(self) -> str:
        """The URL being polled (the request's own when the operation finished at once)."""
        return self._strategy.url if self._strategy is not None else self._done_url

    def __repr__(self) -> str:
        return f"<Operation {self.name} {self.status} polls={self.polls} url={self.url}>"

    def done(self) -> bool:
        """Tell whether the operation has finished, polling once if it was not known to be.

        Returns
        -------
        bool
            ``True`` once it succeeded.

        Raises
        ------
        OperationFailedError
            The operation ended Failed or Canceled.
        """
        if self._error is not None:
            raise self._error
        if self.status == "InProgress":
            self._poll()
        return self.status != "InProgress"

    def result(self, timeout: float | None = None) -> T:
        """Wait for the operation to finish and return its result.

        Parameters
        ----------
        timeout : float, optional
            Seconds to wait at most (the waits the service asks for count); ``None`` waits as long
            as it takes.

        Returns
        -------
        object
            The result, parsed once (the function's frame).

        Raises
        ------
        OperationTimeoutError
            Still running after ``timeout``; ``err.operation.result()`` resumes.
        OperationWaitError
            The service asked for a wait longer than ``max_retry_wait``; resuming polls at once.
        OperationFailedError
            The operation ended Failed or Canceled.
        """
        self.wait(timeout)
        if self._result is None:
            assert self._final is not None
            self._result = self._parse(self._final)
        return self._result

    def wait(self, timeout: float | None = None) -> None:
        """Wait for the operation to finish, without reading its result.

        Parameters
        ----------
        timeout : float, optional
            Seconds to wait at most; ``None`` waits as long as it takes.

        Raises
        ------
        OperationTimeoutError
            Still running after ``timeout``; ``err.operation.wait()`` resumes.
        OperationWaitError
            The service asked for a wait longer than ``max_retry_wait``.
        OperationFailedError
            The operation ended Failed or Canceled.
        """
        if self._error is not None:
            raise self._error
        if self._final is not None:
            return
        bar = progress_bar(self.pipeline.config, desc=f"{self.name}: polling", unit="poll")
        try:
            self._wait(timeout, bar)
        finally:
            bar.close()

    def _wait(self, timeout: float | None, bar: ProgressBar) -> None:
        strategy = self._strategy
        assert strategy is not None
        spent = 0.0
        settings = self.pipeline.config.settings
        # the toolkit's own default wait is the user's choice; a longer one the service asks
        # for is not sat out
        ceiling = max(settings.max_retry_wait, self._default_wait)
        while self.status == "InProgress":
            asked = strategy.next_wait
            if asked > ceiling:
                # resuming later polls at once: the caller has sat out the wait by then
                strategy.next_wait = 0.0
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

    def _poll(self) -> None:
        assert self._strategy is not None
        self.polls += 1
        try:
            outcome = self._strategy.poll(self.pipeline, self.name)
        except ToolkitError as err:
            # the operation was accepted and goes on: the failure carries what resumes it, and
            # nothing invites sending the request that started it again
            if err.accepted is None:
                err.keep_operation(self, (
                    f"\n{self.name}: the service accepted the operation, which goes on there; "
                    f"following it failed at poll {self.polls}.{self.accepted_note} Resume it "
                    "with err.accepted.result(), or toolkit.resume_operation("
                    "err.continuation_token) from a connection that trusts its address."))
            raise
        if outcome.failure is not None:
            self.status = outcome.status
            self._error = outcome.failure
            raise outcome.failure from None
        if outcome.final is not None:
            self._final = outcome.final
            self.status = "Succeeded"

    # ---------------------------------------------------------------- surviving a restart

    def _token_state(self) -> dict[str, Any]:
        assert self._strategy is not None
        return self._strategy.state()

    @property
    def continuation_token(self) -> str | None:
        """A string from which :func:`toolkit.resume_operation` finishes this operation.

        It holds the operation's URLs and the arguments needed to read its result, never a
        credential, and works in another process (after a kernel restart). ``None`` when the
        service finished the operation with its first answer (there is nothing left to follow).
        """
        if self._strategy is None:
            return None
        return encode_token(kind=self._strategy.kind, family=self.pipeline.family,
                            name=self.name, args=self._resume, state=self._token_state())

    def _restored(self, state: Mapping[str, Any]) -> Self:
        """Keep what a subclass reads of a token's state (nothing here)."""
        return self


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
    """

    strategies = (ItemStatusPolling,)
    accepted_note = (" The service accepted the creation: the item exists or is being made. "
                     "Do not create it again (a second creation fails with "
                     "ItemDisplayNameAlreadyInUse, or makes a second item).")
    operation_id: str | None = None

    def _started(self, initial: Response) -> Self:
        self.operation_id = initial.headers.get(f"{self.pipeline.header_prefix}operation-id")
        return self

    def _restored(self, state: Mapping[str, Any]) -> Self:
        self.operation_id = state["operation_id"]
        return self

    def _token_state(self) -> dict[str, Any]:
        return {**super()._token_state(), "operation_id": self.operation_id}

    def _item(self) -> ItemStatusPolling | None:
        return self._strategy if isinstance(self._strategy, ItemStatusPolling) else None

    @property
    def state(self) -> str:
        """The last state the service reported (``NotStarted``, ``Running``, ``Succeeded``...)."""
        item = self._item()
        return item.status if item is not None else "Succeeded"

    @property
    def percent_complete(self) -> int | float | None:
        """The last ``percentComplete`` (``None`` before the first poll or when none was given)."""
        item = self._item()
        return item.percent_complete if item is not None else None

    @property
    def history(self) -> list[dict[str, Any]]:
        """One entry per poll: ``status``, ``percentComplete``, ``retry_after``."""
        item = self._item()
        return item.history if item is not None else []

    @property
    def result_url(self) -> str | None:
        """The URL the result was read from, once succeeded after polling."""
        item = self._item()
        return item.result_url if item is not None else None

    def __repr__(self) -> str:
        return f"<ItemOperation {self.name} {self.state} polls={self.polls} url={self.url}>"


def restore_operation(pipeline: Pipeline, state: Mapping[str, Any],
                      parse: Callable[[Operation[Any]], Callable[[Response], Any]]
                      ) -> Operation[Any]:
    """Rebuild the operation a decoded continuation token describes.

    Parameters
    ----------
    pipeline : Pipeline
        The pipeline of the token's family, on the connection that resumes it.
    state : Mapping
        A state from :func:`toolkit._core.continuation.decode_token`.
    parse : callable
        ``parse(operation)`` gives the operation's result parser.

    Returns
    -------
    Operation
        An :class:`ItemOperation` for an item token, else an :class:`Operation`; it polls at
        once when waited on.

    Raises
    ------
    ValidationError
        A URL of the token names an origin the family does not trust (before any request), or
        the token's arguments do not fit the operation.
    """
    for url in state["_urls"]:
        origin = Origin.of(url)
        if origin is None or not pipeline.config.trusts(origin):
            raise token_error(f"names an address outside the {state['family']} service of this "
                              f"connection ({pipeline.config.origin}); resume it with a "
                              "connection to the service that started it")
    cls: type[Operation[Any]] = ItemOperation if state["kind"] == "item" else Operation
    strategy = restore_strategy(state, pipeline.config.settings.poll_interval)
    # the parser is the factory's, given the operation (set before the operation is returned)
    op = cls(pipeline, name=state["name"], parse=lambda response: None, strategy=strategy,
             final=None, url=strategy.url, resume=state["args"])._restored(state)
    try:
        op._parse = parse(op)
    except TypeError as err:
        raise token_error("is damaged: its arguments do not fit the operation") from err
    logger.info("%s: resumed from a continuation token, polling %s", op.name, op.url)
    return op
