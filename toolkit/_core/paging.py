"""Following next links, for every collection, in one place.

Three styles reach the toolkit: ARM ``nextLink`` (GET), OData ``@odata.nextLink`` (policy
states: POST to the link, which carries ``$skiptoken``) and maps ``nextLink``. All pages are read by
default; ``max_items`` stops early and warns that the frame is truncated; there is never a silent
page cap.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from toolkit._core.errors import ProtocolError, ToolkitError, TruncatedResultWarning
from toolkit._core.frames import FrameBuilder
from toolkit._core.pipeline import Pipeline, Response
from toolkit._core.progress import progress_bar
from toolkit._core.provenance import provenance

logger = logging.getLogger(__name__)

__all__ = ["Page", "PagingStyle", "collect_frame", "iter_pages"]


@dataclass(frozen=True)
class PagingStyle:
    """Where a collection's items and next link are, and how the next page is asked for."""

    items_key: str = "value"
    next_key: str = "nextLink"
    next_method: str = "GET"


ARM = PagingStyle()
ODATA = PagingStyle(next_key="@odata.nextLink", next_method="POST")
MAPS = PagingStyle(items_key="features", next_key="nextLink")


@dataclass
class Page:
    """One page: its items, the whole parsed body, and the response."""

    items: list[Any]
    body: Mapping[str, Any]
    response: Response
    number: int


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
) -> Iterator[Page]:
    """Yield every page of a collection, following next links until there are none.

    ``headers`` (e.g. ``Accept-Language``) go with every page's request. A repeated next link
    (a service loop) raises ProtocolError instead of looping forever.
    """
    response = pipeline.send(method, path, params=params, json=json, operation=operation,
                             headers=headers)
    seen: set[str] = set()
    number = 0
    while True:
        body = response.json()
        if not isinstance(body, dict):
            raise ProtocolError(f"{operation}: expected a JSON object with {style.items_key!r}, "
                                f"got {type(body).__name__}", url=response.url)
        items = body.get(style.items_key)
        if items is None:
            items = []
        if not isinstance(items, list):
            raise ProtocolError(f"{operation}: {style.items_key!r} is not a list", url=response.url)
        yield Page(items, body, response, number)
        next_link = body.get(style.next_key)
        if next_link is None or next_link == "":
            return
        if not isinstance(next_link, str):
            raise ProtocolError(f"{operation}: the next link {style.next_key!r} is "
                                f"{type(next_link).__name__}, not a URL string; the remaining "
                                "pages cannot be read", url=response.url)
        if next_link in seen:
            raise ProtocolError(f"{operation}: the service sent the same next link twice; "
                                "stopping instead of looping", url=response.url)
        seen.add(next_link)
        number += 1
        try:
            response = pipeline.send(style.next_method, next_link, operation=operation,
                                     headers=headers)
        except ToolkitError as err:
            err.next_link = next_link
            raise


def _resumable(pages: Iterator[Page], builder: FrameBuilder, operation: str,
               api_version: str | None, request_ids: list[str]) -> Iterator[Page]:
    """The pages, with any failure given the rows read so far and the link to resume from."""
    try:
        yield from pages
    except ToolkitError as err:
        if builder.rows:
            err.partial = builder.build(
                provenance(operation, api_version, None, request_ids))
            link = err.next_link
            note = (f"\n{builder.rows} records were read before the failure (err.partial)"
                    + (f"; the remaining pages start at err.next_link ({link})" if link else "")
                    + ".")
            err.args = (f"{err.args[0] if err.args else err}{note}", *err.args[1:])
        raise


def collect_frame(
    pages: Iterator[Page],
    builder: FrameBuilder,
    *,
    operation: str,
    max_items: int | None = None,
    transform: Callable[[list[Any]], list[Any]] | None = None,
    connection: Any = None,
    api_version: str | None = None,
) -> pd.DataFrame:
    """Feed pages into a frame builder, stopping at ``max_items`` with a warning.

    Parameters
    ----------
    pages : iterator of Page
        From :func:`iter_pages`.
    builder : FrameBuilder
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
    bar = progress_bar(connection, desc=operation, unit="page")
    try:
        yield_pages = _resumable(pages, builder, operation, api_version, request_ids)
        for page in yield_pages:
            endpoint = endpoint or page.response.url
            if page.response.request_id:
                request_ids.append(page.response.request_id)
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
    return df
