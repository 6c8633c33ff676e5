"""Time slices of a policy-states window: how :func:`~toolkit.arm.policy.policy_states` cuts one.

A long read over a fixed window is split into slices of about the same number of records, each
read as a chain of its own. The planner counts records with aggregate requests
(``aggregate($count as n)``) over cuts of the window, in a few rounds, and places the slices'
edges where the running count reaches each share. The reading itself is the policy read's.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import pandas as pd

from toolkit._core.errors import ProtocolError
from toolkit._core.messages import Request

if TYPE_CHECKING:
    from toolkit._core.pipeline import Pipeline

logger = logging.getLogger(__name__)

#: The operation the slices are planned for (its requests and errors name it).
OPERATION = "policy_states"

__all__ = [
    "COUNTED_SLICES",
    "OPERATION",
    "PAGE_RECORDS",
    "PARTITION_MIN_PAGES",
    "PARTITION_ROUNDS",
    "PART_MAX",
    "Bounds",
    "count_records",
    "cut_seconds",
    "odata_time",
    "plan_slices",
    "slice_filter",
    "time_order",
    "time_slices",
]

#: Records a page holds; a time slice is worth a chain of its own from this many pages on.
PAGE_RECORDS = 1000
PARTITION_MIN_PAGES = 5
#: Rounds of cutting time slices when looking for balanced ones (each round is one request per
#: cut, all at once; each cuts a heavy slice at least in half).
PARTITION_ROUNDS = 24
#: The most of a slice's share of the records a part may hold before it is cut again (parts of
#: about half a share join into slices within a few tenths of a share of each other).
PART_MAX = 0.6
#: The counts resolve the window to this many shares at most; slices beyond them are placed
#: inside the counted parts by time (more chains at once, without more count requests).
COUNTED_SLICES = 8
#: Time slices as ``(lo, hi)``: ``lo <= timestamp < hi``, ``None`` for an open end.
Bounds = list[tuple[pd.Timestamp | None, pd.Timestamp | None]]


def time_order(orderby: str | None) -> bool | None:
    """Tell the time order of a result, which slices read in turn must keep.

    The service's own order is newest first; an ``$orderby`` keeps a time order only when it
    starts with ``timestamp``.

    Parameters
    ----------
    orderby : str or None
        The checked ``$orderby`` (``None``: the service's order).

    Returns
    -------
    bool or None
        ``True`` newest first, ``False`` oldest first, ``None`` for an order slices cannot keep.
    """
    if orderby is None:
        return True
    first = orderby.split(",")[0].split()
    if not first or first[0].lower() != "timestamp":
        return None
    return not (len(first) > 1 and first[1].lower() == "asc")


def odata_time(ts: pd.Timestamp) -> str:
    """Write a time in whole seconds as an OData literal (``2026-11-20T09:00:00Z``).

    Parameters
    ----------
    ts : pandas.Timestamp
        A UTC time.

    Returns
    -------
    str
        The literal, for a ``$filter``.
    """
    return ts.strftime("%Y-%m-%dT%H:%M:%SZ")


def slice_filter(user: str | None, lo: pd.Timestamp | None, hi: pd.Timestamp | None) -> str:
    """Join the user's filter and a slice's bounds into one ``$filter``.

    Parameters
    ----------
    user : str or None
        The user's ``$filter``.
    lo, hi : pandas.Timestamp or None
        The slice ``lo <= timestamp < hi``; ``None`` for an open end.

    Returns
    -------
    str
        The filter of the slice.
    """
    terms = []
    if lo is not None:
        terms.append(f"timestamp ge {odata_time(lo)}")
    if hi is not None:
        terms.append(f"timestamp lt {odata_time(hi)}")
    clause = " and ".join(terms)
    return f"({user}) and ({clause})" if user else clause


def count_records(pipe: Pipeline, path: str, params: dict[str, Any], filter_: str | None,
                  lo: pd.Timestamp | None, hi: pd.Timestamp | None) -> int:
    """Count the records of the query in one slice, by one aggregate request.

    Parameters
    ----------
    pipe : Pipeline
        The resource manager's pipeline.
    path, params : str, dict
        The query's path and parameters.
    filter_ : str or None
        The user's ``$filter``.
    lo, hi : pandas.Timestamp or None
        The slice (``None`` for an open end; both ``None``: the whole query).

    Returns
    -------
    int
        The records in the slice.

    Raises
    ------
    ProtocolError
        When the service's count is not a number.
    """
    clause = slice_filter(filter_, lo, hi) if (lo is not None or hi is not None) else filter_
    query = {**params, "$filter": clause, "$apply": "aggregate($count as n)",
             "$select": None, "$orderby": None, "$expand": None}
    body = pipe.send(Request("POST", path, params=query, operation=OPERATION)).json_object()
    rows = body.get("value")
    value = rows[0].get("n") if isinstance(rows, list) and rows and isinstance(rows[0], dict) \
        else None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ProtocolError(f"{OPERATION}: the count of a time slice is not a number "
                            f"({value!r:.40})", url=path)
    return value


def cut_seconds(lo: pd.Timestamp, hi: pd.Timestamp, parts: int) -> list[pd.Timestamp]:
    """Cut ``[lo, hi)`` at whole seconds into up to ``parts`` parts of about the same length.

    Parameters
    ----------
    lo, hi : pandas.Timestamp
        The part to cut.
    parts : int
        How many parts at most (fewer when it is fewer seconds long).

    Returns
    -------
    list of pandas.Timestamp
        The cuts, in order; none when the part cannot be cut.
    """
    seconds = int((hi - lo) / pd.Timedelta(seconds=1))
    parts = min(parts, seconds)
    found = {(lo + (hi - lo) * j / parts).floor("s") for j in range(1, parts)}
    return sorted(c for c in found if lo < c < hi)


def time_slices(pipe: Pipeline, path: str, params: dict[str, Any], filter_: str | None,
                start: pd.Timestamp, end: pd.Timestamp, limit: int) -> Bounds:
    """Plan the slices of a window, counting its records with aggregate requests.

    Each slice holds about the same number of records and at least
    :data:`PARTITION_MIN_PAGES` pages (see :func:`plan_slices`).

    Parameters
    ----------
    pipe : Pipeline
        The resource manager's pipeline.
    path, params : str, dict
        The query's path and parameters.
    filter_ : str or None
        The user's ``$filter``.
    start, end : pandas.Timestamp
        The window.
    limit : int
        The most slices.

    Returns
    -------
    Bounds
        The slices, oldest first; one open slice when the result is small.
    """
    total = count_records(pipe, path, params, filter_, None, None)
    want = min(limit, total // (PARTITION_MIN_PAGES * PAGE_RECORDS))
    if want < 2:
        return [(None, None)]
    counted = min(want, COUNTED_SLICES)
    # the first round of counts is 2 * counted - 1 requests at once
    with ThreadPoolExecutor(max_workers=2 * counted, thread_name_prefix="toolkit-count") as pool:
        return plan_slices(
            lambda asked: list(pool.map(
                lambda a: count_records(pipe, path, params, filter_, a[0], a[1]), asked)),
            start, end, total, want, counted=counted)


def plan_slices(count_all: Callable[[list[tuple[pd.Timestamp, pd.Timestamp]]], list[int]],
                start: pd.Timestamp, end: pd.Timestamp, total: int, want: int,
                counted: int | None = None) -> Bounds:
    """Cut ``[start, end]`` into ``want`` slices holding about ``total / want`` records each.

    The counts resolve ``counted`` shares (``total / counted`` records each; default: ``want``):
    each round cuts every part of more than :data:`PART_MAX` of such a share into parts of about
    half of one (by time, in whole seconds) and counts them with one call of ``count_all`` (the
    records in ``[lo, cut)`` for each cut, asked all at once); the first round cuts the whole
    window into twice as many parts, so evenly spread records need one round. The ``want``
    slices then end where the running count reaches each share, placed inside a part by its
    length (as if its records were spread evenly over its seconds). A part of one second
    cannot be cut, so a burst of records that share one second stays in one slice.

    Parameters
    ----------
    count_all : callable
        Given ``(lo, cut)`` pairs, the records in each ``[lo, cut)``, asked all at once.
    start, end : pandas.Timestamp
        The window.
    total : int
        The records in the window.
    want : int
        How many slices.
    counted : int, optional
        How many shares the counts resolve (default: ``want``).

    Returns
    -------
    Bounds
        The slices, oldest first, the first and last open.
    """
    # parts as [lo, hi) in whole seconds, with their counts; the first and last are open
    lo0 = start.floor("s")
    hi0 = end.ceil("s") + pd.Timedelta(seconds=1)
    parts: list[list[Any]] = [[lo0, hi0, total]]
    counted = min(counted or want, want)
    unit = total / counted  # the share the counts resolve
    rounds = 0
    while rounds < PARTITION_ROUNDS and len(parts) < 4 * counted:
        cuts = {i: c for i, s in enumerate(parts) if s[2] > PART_MAX * unit
                for c in [cut_seconds(s[0], s[1], math.ceil(2 * s[2] / unit))] if c}
        if not cuts:
            break
        rounds += 1
        counts = iter(count_all([(parts[i][0], c) for i in cuts for c in cuts[i]]))
        out: list[list[Any]] = []
        for i, s in enumerate(parts):
            if i not in cuts:
                out.append(s)
                continue
            lo, before = s[0], 0
            for cut in cuts[i]:  # a count outside what the part allows is clamped into it
                upto = min(max(next(counts), before), s[2])
                out.append([lo, cut, upto - before])
                lo, before = cut, upto
            out.append([lo, s[1], s[2] - before])
        parts = [s for s in out if s[2] > 0]
    logger.debug("%s: %d parts counted in %d rounds", OPERATION, len(parts), rounds)
    # slice k ends where the running count reaches k shares, read inside its part as if the
    # part's records were spread evenly over its seconds
    share = total / want
    ends: list[pd.Timestamp] = []
    done = 0
    k = 1
    for lo, hi, n in parts:
        while k < want and done + n >= k * share:
            cut = (lo + (hi - lo) * ((k * share - done) / n)).floor("s")
            if lo < cut < hi and (not ends or cut > ends[-1]):
                ends.append(cut)
            elif not ends or lo > ends[-1]:
                ends.append(lo)  # a part that cannot be cut there: its start
            k += 1
        done += n
    if not ends:
        return [(None, None)]
    edges: list[pd.Timestamp | None] = [None, *ends, None]
    return list(itertools.pairwise(edges))
