"""Read the options both policy-states actions share: the window, ``$top`` and ``$skiptoken``.

``$from``/``$to`` default to the day before the request. The service keeps :data:`WINDOW_DAYS`
days of evaluations: records older than that are gone, so a window that starts before it answers
the part inside it, and one that ends before it answers no records (200, an empty page), as a
purged store does. Records later than the sandbox clock are not there yet (so a sandbox whose
clock is set back answers as of that day). A ``$skiptoken`` carries the offset and the window of
the first page, so that the pages of one query agree while the clock moves on.
"""

from __future__ import annotations

import base64
import math
from datetime import datetime, timedelta

import orjson
import pandas as pd

from toolkit.sandbox.http import Request, SandboxHTTPError

#: How many days of evaluations the service keeps.
WINDOW_DAYS = 90


def parse_time(request: Request, name: str) -> datetime | None:
    """Read a date-time query parameter (``$from``, ``$to``) in UTC.

    Returns
    -------
    datetime or None
        The aware time, or ``None`` when the parameter is absent or empty.

    Raises
    ------
    SandboxHTTPError
        400 ``InvalidQueryParameterValue`` for a value that is not ISO 8601.
    """
    raw = request.param(name)
    if raw is None or raw == "":
        return None
    try:
        ts = pd.Timestamp(raw)
    except ValueError:
        raise SandboxHTTPError(400, "InvalidQueryParameterValue",
                               f"The value '{raw}' of query parameter '{name}' is not a valid "
                               "ISO 8601 date-time.") from None
    ts = ts.tz_localize("UTC") if ts.tz is None else ts.tz_convert("UTC")
    return ts.to_pydatetime()


def skiptoken(offset: int, start: datetime, end: datetime) -> str:
    """Write the ``$skiptoken`` of the page starting at ``offset`` of the window.

    Returns
    -------
    str
        The offset and the window, as unpadded URL-safe base64 of JSON.
    """
    raw = orjson.dumps({"o": offset, "f": start.isoformat(), "t": end.isoformat()})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def read_skiptoken(token: str) -> tuple[int, datetime, datetime]:
    """Read a ``$skiptoken`` back.

    Returns
    -------
    tuple of (int, datetime, datetime)
        The offset and the window's start and end.

    Raises
    ------
    SandboxHTTPError
        400 ``InvalidSkipToken``.
    """
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = orjson.loads(raw)
        return (int(data["o"]), datetime.fromisoformat(data["f"]),
                datetime.fromisoformat(data["t"]))
    except (ValueError, KeyError, TypeError, orjson.JSONDecodeError):
        raise SandboxHTTPError(400, "InvalidSkipToken",
                               f"The $skiptoken '{token[:40]}' is not valid.") from None


def held_window(request: Request, start: datetime, end: datetime) -> tuple[float, float]:
    """Cut ``[start, end]`` to the part the service still holds and that has happened.

    The ends are whole seconds (the records' times are): the same records, and the queries of one
    read made within a second share one cached table though the clock moves on.

    Returns
    -------
    tuple of (float, float)
        The first and last second, as POSIX timestamps.
    """
    now = request.sandbox.now()
    lo = max(start, now - timedelta(days=WINDOW_DAYS))
    hi = min(end, now)
    return float(math.ceil(lo.timestamp())), float(math.floor(hi.timestamp()))


def query_options(request: Request) -> tuple[datetime, datetime, int, int | None]:
    """Read the window, the page offset and ``$top`` of a request.

    The window is the ``$skiptoken``'s when there is one, else ``$from``/``$to`` (default: the
    day before the sandbox clock).

    Returns
    -------
    tuple of (datetime, datetime, int, int or None)
        Start, end, offset of the page, ``$top``.

    Raises
    ------
    SandboxHTTPError
        400 for an empty interval, a bad date-time, a ``$top`` below 0 or a bad token.
    """
    token = request.param("$skiptoken")
    if token:
        offset, start, end = read_skiptoken(token)
    else:
        offset = 0
        end = parse_time(request, "$to") or request.sandbox.now()
        start = parse_time(request, "$from") or end - timedelta(days=1)
    if start > end:
        raise SandboxHTTPError(400, "InvalidQueryParameterValue",
                               f"The interval is empty: $from ({start.isoformat()}) is after $to "
                               f"({end.isoformat()}).")
    top_raw = request.param("$top")
    top = None
    if top_raw not in (None, ""):
        try:
            top = int(top_raw)
        except ValueError:
            top = -1
        if top < 0:
            raise SandboxHTTPError(400, "InvalidQueryParameterValue",
                                   f"The value '{top_raw}' of query parameter '$top' must be an "
                                   "integer of at least 0.")
    return start, end, offset, top


def resource_word(request: Request, allowed: tuple[str, ...]) -> str:
    """Read the ``{latest|default}`` word of the path among ``allowed``.

    Returns
    -------
    str
        The word, lower-case.

    Raises
    ------
    SandboxHTTPError
        400 ``InvalidPolicyStatesResource``.
    """
    resource = request.path_params["policyStatesResource"]
    if resource.lower() not in allowed:
        raise SandboxHTTPError(400, "InvalidPolicyStatesResource",
                               f"The policy states resource '{resource}' is not supported here; "
                               f"use {' or '.join(repr(a) for a in allowed)}.")
    return resource.lower()
