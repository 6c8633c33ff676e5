"""One query read as several independent chains of pages at once, into one frame.

A service that answers one page per round trip makes a long result a long chain of round trips;
where the query can be split into parts that do not overlap (time slices, ranges of a key), each
part is a chain of its own and the chains run concurrently. Each chain fills a builder of its
own in its own thread (so the records never exist as dicts beyond a page), and the frames are
joined in the order of the parts: the frame is the one a single chain gives when the parts
follow the service's order.

What splits a query is the operation's business (it knows its filters and its order); this
module runs the chains, bounds them, stops them all when one fails or the caller is interrupted,
and joins the frames.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import Any

import pandas as pd

from toolkit._core.errors import ToolkitError
from toolkit._core.frames import category_dtype
from toolkit._core.paging import FrameSink, Page
from toolkit._core.progress import progress_bar
from toolkit._core.provenance import provenance
from toolkit._core.schemas import Col

logger = logging.getLogger(__name__)

__all__ = ["concat_frames", "read_chains"]


#: What pages are fed into (one per chain).
Builder = FrameSink


class _Stopped(Exception):
    """A chain stopped because another failed."""


def concat_frames(frames: Sequence[pd.DataFrame], columns: Sequence[Col]) -> pd.DataFrame:
    """Frames of the same columns, one after the other, with their declared dtypes kept:
    categories are joined by the rule of :func:`~toolkit._core.frames.category_dtype`."""
    if len(frames) == 1:
        return frames[0].reset_index(drop=True)
    parts = [f.copy(deep=False) for f in frames]
    for col in columns:
        if col.kind != "category" or col.name not in parts[0].columns:
            continue
        seen: dict[Any, None] = {}
        for f in parts:
            seen.update(dict.fromkeys(f[col.name].cat.categories))
        dtype = category_dtype(col, seen)
        for f in parts:
            f[col.name] = f[col.name].cat.set_categories(dtype.categories,
                                                         ordered=dtype.ordered)
    return pd.concat(parts, ignore_index=True)


def read_chains(
    chains: Sequence[Callable[[], Iterator[Page]]],
    new_builder: Callable[[], Builder],
    columns: Sequence[Col],
    *,
    operation: str,
    workers: int,
    connection: Any = None,
    api_version: str | None = None,
) -> pd.DataFrame:
    """Read every chain (at most ``workers`` at once) and join their frames in chain order.

    Parameters
    ----------
    chains : sequence of callable
        Each gives the pages of one part (e.g. ``iter_pages`` with the part's filter).
    new_builder : callable
        A fresh frame builder for one part.
    columns : sequence of Col
        The frame's columns (for joining categories).
    workers : int
        Chains running at once.

    Returns
    -------
    pandas.DataFrame
        The frames of the parts, one after the other, with ``attrs`` from
        :func:`~toolkit._core.provenance.provenance` (the request ids of every page, in part
        order).

    Raises
    ------
    ToolkitError
        The first failure of any chain, after its retries; the other chains are stopped first.
    """
    stop = threading.Event()
    bar = progress_bar(connection, desc=operation, unit="page")
    results: list[tuple[pd.DataFrame, list[str], str | None] | None] = [None] * len(chains)
    builders: list[Builder | None] = [None] * len(chains)

    def run(i: int) -> None:
        builder = builders[i] = new_builder()
        ids: list[str] = []
        endpoint = None
        pages = chains[i]()
        try:
            for page in pages:
                if stop.is_set():
                    raise _Stopped
                endpoint = endpoint or page.response.url
                if page.response.request_id:
                    ids.append(page.response.request_id)
                builder.add(page.items)
                page.release()
                bar.update(1)
        finally:
            close = getattr(pages, "close", None)
            if close is not None:
                close()
        results[i] = (builder.build(), ids, endpoint)

    pool = ThreadPoolExecutor(max_workers=max(1, min(workers, len(chains))),
                              thread_name_prefix="toolkit-chain")
    futures: list[Future[None]] = []
    try:
        futures = [pool.submit(run, i) for i in range(len(chains))]
        wait(futures, return_when=FIRST_EXCEPTION)
        failed = [err for f in futures if f.done()
                  for err in [f.exception()] if err is not None and not isinstance(err, _Stopped)]
        if failed:
            stop.set()
            for f in futures:
                f.cancel()
            pool.shutdown(wait=True, cancel_futures=True)
            raise _with_partial(failed[0], results, builders, columns, operation, api_version)
    except BaseException:
        stop.set()
        for f in futures:
            f.cancel()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        bar.close()
    done = [r for r in results if r is not None]  # every chain, once none failed
    frames = [r[0] for r in done]
    request_ids = [i for r in done for i in r[1]]
    endpoint = next((r[2] for r in done if r[2]), None)
    df = concat_frames(frames, columns)
    df.attrs.update(provenance(operation, api_version, endpoint, request_ids))
    return df


def _with_partial(err: BaseException, results: Sequence[Any], builders: Sequence[Any],
                  columns: Sequence[Col], operation: str, api_version: str | None
                  ) -> BaseException:
    """The failure, given every record the chains read before it (``err.partial``: the parts
    that finished and what the others had read, in part order), once every chain has stopped."""
    if not isinstance(err, ToolkitError):
        return err
    frames = []
    finished = 0
    for done, builder in zip(results, builders, strict=True):
        if done is not None:
            frames.append(done[0])
            finished += 1
        elif builder is not None and builder.rows:
            frames.append(builder.build())
    # a link of one part would resume that part only, never the query: leave none to follow
    err.next_link = None
    if frames:
        partial = concat_frames(frames, columns)
        partial.attrs.update(provenance(operation, api_version, None, []))
        err.keep_partial(
            partial, f"\n{len(partial)} records were read before the failure (err.partial): "
                     f"{finished} of the query's {len(results)} parts whole, the others cut "
                     "short. Read the query again for the whole result.")
    return err
