"""One query read as several independent chains of pages at once, into one frame.

A service that answers one page per round trip makes a long result a long chain of round trips;
where the query can be split into parts that do not overlap (time slices, ranges of a key), each
part is a chain of its own and the chains run concurrently. Each chain fills a builder of its
own in its own thread (so the records never exist as dicts beyond a page); the builders are then
joined in the order of the parts and one frame is built: the frame a single chain gives when the
parts follow the service's order.

What splits a query is the operation's business (it knows its filters and its order); this
module runs the chains, bounds them, stops them all when one fails or the caller is interrupted,
and joins what they read.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import Any, Protocol

import pandas as pd

from toolkit._core.cancel import Cancellation, cancellable, current
from toolkit._core.errors import ToolkitError
from toolkit._core.paging import FrameSink, Page, note_quotas
from toolkit._core.progress import progress_bar
from toolkit._core.protocols import Reporting
from toolkit._core.provenance import provenance

logger = logging.getLogger(__name__)

__all__ = ["read_chains"]


class Builder(FrameSink, Protocol):
    """What the pages of one chain are fed into.

    A frame sink that can take in the rows of another of its kind, for example
    :class:`~toolkit._core.columns.InterningBuilder`.
    """

    def absorb(self, other: Any) -> None:
        """Append every row of ``other`` after this builder's own."""


class _Stopped(Exception):
    """A chain stopped because another failed."""


def read_chains(
    chains: Sequence[Callable[[], Iterator[Page]]],
    new_builder: Callable[[], Builder],
    *,
    operation: str,
    workers: int,
    connection: Reporting | None = None,
    api_version: str | None = None,
) -> pd.DataFrame:
    """Read every chain (at most ``workers`` at once) and join their frames in chain order.

    Parameters
    ----------
    chains : sequence of callable
        Each gives the pages of one part (e.g. ``iter_pages`` with the part's filter).
    new_builder : callable
        A fresh frame builder for one part.
    workers : int
        Chains running at once.

    Returns
    -------
    pandas.DataFrame
        The records of the parts, one part after the other, with ``attrs`` from
        :func:`~toolkit._core.provenance.provenance` (the request ids of every page, in part
        order).

    Raises
    ------
    ToolkitError
        The first failure of any chain, after its retries; the other chains are stopped first.
    """
    # the chains run under the caller's cancellation; stopping them cancels their requests
    stop = Cancellation(current())
    bar = progress_bar(connection, desc=operation, unit="page")
    results: list[tuple[list[str], str | None] | None] = [None] * len(chains)
    builders: list[Builder | None] = [None] * len(chains)
    seen: list[list[str]] = [[] for _ in chains]  # request ids of every page read, per chain
    left: dict[str, int] = {}  # the fewest requests each provider quota had left
    noting = threading.Lock()

    def run(i: int) -> None:
        with cancellable(stop):
            read(i)

    def read(i: int) -> None:
        builder = builders[i] = new_builder()
        ids = seen[i]
        endpoint = None
        pages = chains[i]()
        try:
            for page in pages:
                if stop.is_set():
                    raise _Stopped
                endpoint = endpoint or page.response.url
                if page.response.request_id:
                    ids.append(page.response.request_id)
                with noting:
                    note_quotas(page.response, left, bar)
                builder.add(page.items)
                page.release()
                bar.update(1)
        finally:
            close = getattr(pages, "close", None)
            if close is not None:
                close()
        results[i] = (ids, endpoint)

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
            raise _with_partial(failed[0], results, builders, operation, api_version,
                                [i for ids in seen for i in ids])
    except BaseException:
        stop.set()
        for f in futures:
            f.cancel()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        bar.close()
    done = [r for r in results if r is not None]  # every chain, once none failed
    request_ids = [i for r in done for i in r[0]]
    endpoint = next((r[1] for r in done if r[1]), None)
    whole = _joined(builders) or new_builder()
    df = whole.build(provenance(operation, api_version, endpoint, request_ids))
    if left:
        df.attrs["quota_left"] = left
    return df


def _joined(builders: Sequence[Builder | None]) -> Builder | None:
    """Return the first builder, having absorbed the others' rows in order (``None``: no rows)."""
    kept = [b for b in builders if b is not None and b.rows]
    if not kept:
        return None
    for other in kept[1:]:
        kept[0].absorb(other)
    return kept[0]


def _with_partial(err: BaseException, results: Sequence[Any], builders: Sequence[Any],
                  operation: str, api_version: str | None,
                  request_ids: Sequence[str]) -> BaseException:
    """Give the failure every record the chains read before it, once every chain has stopped.

    ``err.partial``: the parts that finished and what the others had read, in part order.
    """
    if not isinstance(err, ToolkitError):
        return err
    finished = sum(done is not None for done in results)
    # a link of one part would resume that part only, never the query: leave none to follow
    err.next_link = None
    whole = _joined(builders)
    if whole is not None:
        partial = whole.build(provenance(operation, api_version, None, request_ids))
        err.keep_partial(
            partial, f"\n{len(partial)} records were read before the failure (err.partial): "
                     f"{finished} of the query's {len(results)} parts whole, the others cut "
                     "short. Read the query again for the whole result.")
    return err
