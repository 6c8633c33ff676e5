"""Following next links, for every collection, in one place.

Three styles reach the toolkit: ARM ``nextLink`` (GET; the management groups list names it
``@nextLink``), OData ``@odata.nextLink`` (policy states: POST to the link, which carries
``$skiptoken``) and maps ``nextLink``; the keys are the services' facts, in :mod:`toolkit._spec`.
All pages are read by default; ``max_items`` stops early and warns that the frame is truncated;
there is never a silent page cap.
"""

from __future__ import annotations

import logging
import queue
import re
import threading
import warnings
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import orjson
import pandas as pd

from toolkit._core.cancel import Cancellation, cancellable, check_cancelled, current
from toolkit._core.errors import ProtocolError, ToolkitError, TruncatedResultWarning
from toolkit._core.messages import Request, Response
from toolkit._core.pipeline import Pipeline
from toolkit._core.progress import ProgressBar, progress_bar
from toolkit._core.protocols import Reporting
from toolkit._core.provenance import provenance
from toolkit._core.ratelimits import quotas_left
from toolkit._core.transport import PAGES_IN_FLIGHT
from toolkit._spec.arm import MANAGEMENT_GROUP_NEXT_KEY, NEXT_KEY, ODATA_NEXT_KEY

logger = logging.getLogger(__name__)

__all__ = ["ARM", "EMPTY_PAGE_LIMIT", "MANAGEMENT_GROUPS", "MAPS", "ODATA", "Page", "PagingStyle",
           "collect_frame", "envelope_next_link", "iter_pages", "note_quotas"]


@dataclass(frozen=True)
class PagingStyle:
    """Where a collection's items and next link are, and how the next page is asked for."""

    items_key: str = "value"
    next_key: str = NEXT_KEY
    next_method: str = "GET"


ARM = PagingStyle()
#: The management groups list: ``@nextLink`` (GET).
MANAGEMENT_GROUPS = PagingStyle(next_key=MANAGEMENT_GROUP_NEXT_KEY)
ODATA = PagingStyle(next_key=ODATA_NEXT_KEY, next_method="POST")
MAPS = PagingStyle(items_key="features")


#: ``content -> (envelope, items)``, or ``None`` for a page to parse as JSON.
Decoder = Callable[[bytes], "tuple[dict[str, Any], list[Any]] | None"]


@dataclass
class Page:
    """One page: its items, the whole parsed body, and the response.

    ``count`` is the number of items the page came with; it stays after :meth:`release`.
    """

    items: list[Any]
    body: Mapping[str, Any]
    response: Response
    number: int
    count: int

    def release(self) -> None:
        """Drop the items once they are copied into a frame builder.

        A page of a thousand
        records is freed at once, while its objects are still in the processor's cache, instead
        of when the next page takes its place (measured: about 15% of the time a page of policy
        states takes to decode and add).
        """
        self.items.clear()


#: Consecutive pages without items (but with a next link) after which the pager stops with
#: ProtocolError: a service may send a few empty pages, never an endless run of them.
EMPTY_PAGE_LIMIT = 100
#: How much of a body's start is read for the envelope's next link (see :func:`envelope_next_link`).
ENVELOPE_HEAD_LIMIT = 64 * 1024

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_SCALAR = re.compile(rb"-?[0-9][0-9.eE+-]*|true|false|null")
_WS = re.compile(rb"[ \t\r\n]*")
UNKNOWN: Any = object()


def _skip(content: bytes, pos: int) -> int:
    """Return the position after any whitespace at ``pos``."""
    m = _WS.match(content, pos)
    return m.end() if m is not None else pos


def envelope_next_link(content: bytes, style: PagingStyle) -> Any:
    """Read the next link of a page from the envelope's head, without parsing the page.

    The top-level members before the items (``style.items_key``) are read in order; a next link
    among them is the envelope's own (never a value inside a record, which all come after). Gives
    the link, ``None`` when the head says there is no next page, or :data:`UNKNOWN` when the head
    does not say (the link comes after the items, a member that is not a plain value precedes it,
    or the head is not JSON): the caller then waits for the parsed page.
    """
    pos = _skip(content, 0)
    if content[pos:pos + 1] != b"{":
        return UNKNOWN
    pos += 1
    items = style.items_key.encode()
    wanted = style.next_key.encode()
    limit = min(len(content), ENVELOPE_HEAD_LIMIT)
    while pos < limit:
        pos = _skip(content, pos)
        key = _STRING.match(content, pos)
        if key is None:
            return UNKNOWN
        pos = _skip(content, key.end())
        if content[pos:pos + 1] != b":":
            return UNKNOWN
        pos = _skip(content, pos + 1)
        name = key.group()[1:-1]
        if b"\\" in name:
            return UNKNOWN
        if name == items:
            return UNKNOWN
        value = _STRING.match(content, pos) or _SCALAR.match(content, pos)
        if value is None:
            return UNKNOWN
        if name == wanted:
            try:
                link = orjson.loads(value.group())
            except orjson.JSONDecodeError:
                return UNKNOWN
            if link is None or link == "":
                return None
            return link if isinstance(link, str) else UNKNOWN
        pos = _skip(content, value.end())
        if content[pos:pos + 1] != b",":
            return UNKNOWN
        pos += 1
    return UNKNOWN


class _Chain:
    """Check each page of a chain.

    The checks every chain makes: the body's shape, the next link's type, a link seen before (a
    service loop), and a run of empty pages.
    """

    def __init__(self, style: PagingStyle, operation: str | None,
                 decode: Decoder | None = None) -> None:
        self.style = style
        self.operation = operation
        self.decode = decode
        self.seen: set[str] = set()
        self.empty = 0
        self.number = 0

    def page(self, response: Response) -> tuple[Page, str | None]:
        """Return the page of a response and its next link (checked)."""
        style, operation = self.style, self.operation
        typed = self.decode(response.content) if self.decode is not None else None
        if typed is not None:
            body, items = typed
        else:
            body = response.json()
            items = None
        if not isinstance(body, dict):
            raise response.refuse(f"{operation}: expected a JSON object with "
                                  f"{style.items_key!r}, got {type(body).__name__}")
        if typed is None:
            items = body.get(style.items_key)
        if items is None:
            items = []
        if not isinstance(items, list):
            raise response.refuse(f"{operation}: {style.items_key!r} is not a list")
        next_link = body.get(style.next_key)
        if next_link == "":
            next_link = None
        if next_link is not None and not isinstance(next_link, str):
            raise response.refuse(f"{operation}: the next link {style.next_key!r} is "
                                  f"{type(next_link).__name__}, not a URL string; the remaining "
                                  "pages cannot be read")
        page = Page(items, body, response, self.number, len(items))
        self.number += 1
        return page, next_link

    def follow(self, next_link: str, page: Page) -> None:
        """Check that ``next_link`` (given by ``page``) may be followed."""
        if next_link in self.seen:
            raise ProtocolError(f"{self.operation}: the service sent the same next link twice; "
                                "stopping instead of looping", url=page.response.url)
        self.seen.add(next_link)
        self.empty = self.empty + 1 if not page.count else 0
        if self.empty >= EMPTY_PAGE_LIMIT:
            raise ProtocolError(f"{self.operation}: {self.empty} pages in a row held no items "
                                "but named a next page; stopping instead of following them "
                                "without end", url=page.response.url)



class FrameSink(Protocol):
    """Take the pages a read feeds in.

    It is a :class:`~toolkit._core.frames.FrameBuilder` or
    :class:`~toolkit._core.columns.InterningBuilder`.
    """

    @property
    def rows(self) -> int: ...

    def add(self, records: list[Any]) -> None:
        """Copy the records' values into columns (the list may be cleared once this returns)."""

    def build(self, attrs: Mapping[str, Any] | None = None) -> pd.DataFrame: ...


def iter_pages(
    pipeline: Pipeline,
    method: str,
    path: str,
    *,
    style: PagingStyle = ARM,
    params: Mapping[str, Any] | None = None,
    json: Any = None,
    operation: str | None = None,
    headers: Mapping[str, str] | None = None,
    prefetch: bool = False,
    first: Response | None = None,
    decode: Decoder | None = None,
) -> Generator[Page, None, None]:
    """Yield every page of a collection, following next links until there are none.

    ``headers`` (e.g. ``Accept-Language``) go with every page's request. A repeated next link
    (a service loop) or :data:`EMPTY_PAGE_LIMIT` empty pages in a row raise ProtocolError
    instead of looping forever. A failing next page raises with ``err.next_link`` set.

    With ``prefetch``, pages are fetched in background threads and the next page is asked for
    as soon as its link is known: while the current body still streams when the envelope names
    the next link before the items (read from the envelope's head only: see
    :func:`envelope_next_link`), else once the page has arrived; pages are parsed here
    meanwhile. Close the iterator (or exhaust it) to stop the fetching.

    ``first`` is the answer to the first request when the caller has already sent it.
    ``decode`` turns a page's bytes into ``(envelope, items)`` (typed records, e.g.
    :func:`~toolkit._core.columns.page_decoder`), or ``None`` for a page it cannot type, which
    is then parsed as JSON; the page's ``body`` then holds the envelope's next link only.
    """
    if prefetch:
        yield from _prefetched(pipeline, method, path, style=style, params=params, json=json,
                               operation=operation, headers=headers, first=first,
                               decode=decode)
        return
    # with a decoder the page is parsed once, by it (the pipeline does not parse it first)
    parsed_here = decode is not None
    response = first if first is not None else pipeline.send(Request(
        method, path, params=params, json=json, operation=operation, headers=headers,
        check_json=not parsed_here))
    chain = _Chain(style, operation, decode)
    while True:
        page, next_link = _read_page(chain, response, pipeline, headers)
        yield page
        if next_link is None:
            return
        chain.follow(next_link, page)
        try:
            response = pipeline.send(Request(style.next_method, next_link, operation=operation,
                                             headers=headers, check_json=not parsed_here))
        except ToolkitError as err:
            err.next_link = next_link
            raise


def _read_page(chain: _Chain, response: Response, pipeline: Pipeline,
               headers: Mapping[str, str] | None) -> tuple[Page, str | None]:
    """Read the page of a response.

    A body cut short or garbled in transit (not JSON at all) is
    asked for again, as often as the ``max_retries`` setting allows.
    """
    asked = 0
    while True:
        try:
            return chain.page(response)
        except ProtocolError:
            if not (response.content and _unreadable(response)) \
                    or asked >= pipeline.config.settings.max_retries:
                raise
        asked += 1
        logger.warning("%s: unreadable page; asking again (%d)", chain.operation, asked)
        pipeline.stats.add(retries=1)
        response = pipeline.send(Request(response.method, response.url, operation=chain.operation,
                                         headers=headers, check_json=False))


class _Slot:
    """Hold one page of a chain, in the order the pages were asked for.

    It is filled by the thread that
    fetches it, waited on by the consumer.
    """

    __slots__ = ("_done", "value")

    def __init__(self) -> None:
        self._done = threading.Event()
        self.value: tuple[str, Any, Any] = ("stopped", None, None)

    def fill(self, value: tuple[str, Any, Any]) -> None:
        self.value = value
        self._done.set()

    def wait(self, stop: threading.Event) -> tuple[str, Any, Any]:
        while not self._done.wait(0.1):
            if stop.is_set():
                return ("stopped", None, None)
        return self.value


class _Fetcher:
    """Fetch the pages of one chain in background threads, one thread a page.

    Page k+1 is asked for as soon as its link is known: from the envelope's head while page k's
    body still streams (when the envelope names the link before the items, see
    :func:`envelope_next_link`), otherwise once page k has arrived. Pages are handed over in
    order through slots; at most ``depth`` slots wait for the consumer, so at most
    ``depth + 1`` pages are held or in flight. :meth:`close` (or ``parent``, the cancellation
    of the read, once set) stops the fetching.
    """

    def __init__(self, pipeline: Pipeline, method: str, url: str, *, style: PagingStyle,
                 params: Mapping[str, Any] | None, json: Any, operation: str | None,
                 headers: Mapping[str, str] | None, depth: int = PAGES_IN_FLIGHT - 1,
                 first: Response | None = None, parent: threading.Event | None = None) -> None:
        self._pipeline = pipeline
        self._style = style
        self._operation = operation
        self._headers = headers
        self._slots: queue.Queue[_Slot] = queue.Queue(maxsize=depth)
        # the fetching threads run under the read's cancellation (by default the caller's),
        # and stop with the fetcher
        self._stop = Cancellation(parent if parent is not None else current())
        self._lock = threading.Lock()
        self._seen: set[str] = set()
        self._threads: list[threading.Thread] = []
        self._start(method, url, params, json, first, wait=True)

    def _claim(self, link: str) -> bool:
        """Tell whether ``link`` is new to this chain.

        A link seen before is a service loop: the
        consumer raises it from the parsed page).
        """
        with self._lock:
            if link in self._seen:
                return False
            self._seen.add(link)
            return True

    def _start(self, method: str, url: str, params: Mapping[str, Any] | None, json: Any,
               first: Response | None = None, *, wait: bool) -> bool:
        """Ask for a page in a thread of its own, its slot queued after the pages before it.

        Without ``wait``, only when a slot is free right now.
        """
        slot = _Slot()
        if wait:
            while True:
                if self._stop.is_set():
                    return False
                try:
                    self._slots.put(slot, timeout=0.1)
                    break
                except queue.Full:
                    continue
        else:
            try:
                self._slots.put_nowait(slot)
            except queue.Full:
                return False
        thread = threading.Thread(target=self._fetch_cancellable,
                                  args=(slot, method, url, params, json, first),
                                  name="toolkit-pages", daemon=True)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
        thread.start()
        return True

    def _fetch_cancellable(self, *args: Any) -> None:
        with cancellable(self._stop):
            self._fetch(*args)

    def _fetch(self, slot: _Slot, method: str, url: str, params: Mapping[str, Any] | None,
               json: Any, first: Response | None) -> None:
        style = self._style
        early: list[str] = []  # the next link, once asked for while this body streamed

        def on_head(head: bytes) -> bool:
            ahead = envelope_next_link(head, style)
            if ahead is UNKNOWN:
                return False
            if isinstance(ahead, str) and not self._stop.is_set() and self._claim(ahead):
                if self._start(style.next_method, ahead, None, None, wait=False):
                    early.append(ahead)
                else:
                    with self._lock:  # asked for once this page is in, below
                        self._seen.discard(ahead)
            return True

        try:
            response = first
            if response is None:
                response = self._pipeline.send(Request(method, url, params=params, json=json,
                                                       operation=self._operation,
                                                       headers=self._headers, check_json=False,
                                                       on_head=on_head))
        except BaseException as err:  # handed to the consumer, with the link that failed
            slot.fill(("error", err, url))
            return
        if early:
            slot.fill(("page", response, early[0]))
            return
        ahead = envelope_next_link(response.content, style)
        if isinstance(ahead, str) and not self._claim(ahead):
            ahead = UNKNOWN  # the consumer raises the loop error from the parsed page
        slot.fill(("page", response, ahead))
        if isinstance(ahead, str):
            self._start(style.next_method, ahead, None, None, wait=True)

    def get(self) -> tuple[str, Any, Any]:
        while True:
            try:
                return self._slots.get(timeout=0.1).wait(self._stop)
            except queue.Empty:
                if self._stop.is_set():
                    return ("stopped", None, None)

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(timeout=10)


def _prefetched(pipeline: Pipeline, method: str, path: str, *, style: PagingStyle,
                params: Mapping[str, Any] | None, json: Any, operation: str | None,
                headers: Mapping[str, str] | None, first: Response | None,
                decode: Decoder | None) -> Iterator[Page]:
    """:func:`iter_pages` with the pages fetched in background threads (:class:`_Fetcher`)."""
    # every fetcher of this read stops with it, one still being made when it ends included
    read = Cancellation(current())
    fetcher: _Fetcher | None = None
    chain = _Chain(style, operation, decode)
    try:
        fetcher = _Fetcher(pipeline, method, path, style=style, params=params, json=json,
                           operation=operation, headers=headers, first=first, parent=read)
        while True:
            kind, response, ahead = fetcher.get()
            if kind == "stopped":  # closed under us (only this generator closes it)
                check_cancelled()  # or the caller's work was cancelled: not a short result
                return
            if kind == "error":
                if chain.number and isinstance(response, ToolkitError):
                    response.next_link = ahead
                raise response
            page, next_link = _read_page(chain, response, pipeline, headers)
            if page.response is not response:  # asked for again: go on from the parsed page
                ahead = UNKNOWN
            yield page
            if next_link is None:
                return
            chain.follow(next_link, page)
            if next_link != ahead:  # the head did not say (or said otherwise): go on from here
                fetcher.close()
                fetcher = _Fetcher(pipeline, style.next_method, next_link, style=style,
                                   params=None, json=None, operation=operation, headers=headers,
                                   parent=read)
    finally:
        read.set()
        if fetcher is not None:
            fetcher.close()


def _unreadable(response: Response) -> bool:
    try:
        orjson.loads(response.content)
    except orjson.JSONDecodeError:
        return True
    return False


def _resumable(pages: Iterator[Page], builder: FrameSink, operation: str,
               api_version: str | None, request_ids: list[str]) -> Iterator[Page]:
    """Yield the pages, giving any failure the rows read so far and the link to resume from."""
    try:
        yield from pages
    except ToolkitError as err:
        if builder.rows:
            link = err.next_link
            err.keep_partial(
                builder.build(provenance(operation, api_version, None, request_ids)),
                f"\n{builder.rows} records were read before the failure (err.partial)"
                + (f"; the remaining pages start at err.next_link ({link})" if link else "")
                + ".")
        raise


def collect_frame(
    pages: Iterator[Page],
    builder: FrameSink,
    *,
    operation: str,
    max_items: int | None = None,
    transform: Callable[[list[Any]], list[Any]] | None = None,
    connection: Reporting | None = None,
    api_version: str | None = None,
) -> pd.DataFrame:
    """Feed pages into a frame builder, stopping at ``max_items`` with a warning.

    Parameters
    ----------
    pages : iterator of Page
        From :func:`iter_pages`.
    builder : FrameBuilder or InterningBuilder
        Receives the items (after ``transform``).
    max_items : int, optional
        Keep at most this many rows; when more exist, warn with TruncatedResultWarning and set
        ``df.attrs["truncated"] = True``.

    Raises
    ------
    ToolkitError
        When a page fails after its retries, the error carries what was read: ``err.partial``
        (the frame of the records before the failure) and, when a next page failed,
        ``err.next_link`` (where the remaining pages start), both named in its message.
    """
    request_ids: list[str] = []
    truncated = False
    endpoint = None
    left: dict[str, int] = {}
    bar = progress_bar(connection, desc=operation, unit="page")
    try:
        yield_pages = _resumable(pages, builder, operation, api_version, request_ids)
        for page in yield_pages:
            endpoint = endpoint or page.response.url
            if page.response.request_id:
                request_ids.append(page.response.request_id)
            note_quotas(page.response, left, bar)
            items = transform(page.items) if transform else page.items
            if max_items is not None and builder.rows + len(items) >= max_items:
                more = (builder.rows + len(items) > max_items
                        or bool(page.body.get("nextLink") or page.body.get("@odata.nextLink")))
                builder.add(items[: max_items - builder.rows])
                if more:
                    truncated = True
                    close = getattr(pages, "close", None)
                    if close is not None:
                        close()
                    break
                continue
            builder.add(items)
            del items
            page.release()
            bar.update(1)
    finally:
        bar.close()
    if truncated:
        warnings.warn(
            f"{operation}: result truncated at max_items={max_items}; more records exist. "
            "Pass a larger max_items (or None) to read them all.",
            TruncatedResultWarning, stacklevel=3)
    df = builder.build(provenance(operation, api_version, endpoint, request_ids))
    df.attrs["truncated"] = truncated
    if left:
        df.attrs["quota_left"] = left
    return df


def note_quotas(response: Response, left: dict[str, int], bar: ProgressBar | None = None) -> None:
    """Keep the fewest requests each provider quota had left in a read, and show it.

    Parameters
    ----------
    response : Response
        A page's answer (its provider counts, :func:`~toolkit._core.ratelimits.quotas_left`).
    left : dict
        Quota name -> the fewest requests left seen so far in the read; updated.
    bar : ProgressBar, optional
        The read's bar, which shows them.
    """
    headers = getattr(response, "headers", None)  # (a page made by hand may have none)
    counts = quotas_left(headers, response.header_prefix) if headers is not None else {}
    if not counts:
        return
    for name, count in counts.items():
        left[name] = min(count, left.get(name, count))
    if bar is not None:
        bar.note(", ".join(f"{name} quota: {count} left" for name, count in sorted(left.items())))
