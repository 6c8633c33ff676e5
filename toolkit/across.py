"""One read across many subscriptions: the frames joined, the refusals said in a sentence.

A report reads the same thing in every subscription of its scope (the SQL servers, the
gateways, a compliance summary). A real tenant answers part of it: a principal with a role on
only some subscriptions is refused the others (403 ``AuthorizationFailed``), a subscription may
be throttled or gone. :func:`across_subscriptions` runs the read once per subscription, keeps
every frame it got, and turns each refusal into part of one sentence ("1 of 3 subscriptions
could not be read: retail-dev (AuthorizationFailed).") instead of an exception, so that the
report goes on with what it could read.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

import pandas as pd

from toolkit._core.errors import ApiError, ToolkitError, ValidationError
from toolkit._core.registry import find

if TYPE_CHECKING:
    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["SubscriptionReads", "across_subscriptions"]


class SubscriptionReads(NamedTuple):
    """What :func:`across_subscriptions` read: ``frame, refused = across_subscriptions(...)``."""

    #: The frames of every subscription read, one after the other.
    frame: pd.DataFrame
    #: One sentence naming the subscriptions that could not be read and why; empty when none.
    refused: str


def _asked(subscriptions: Any) -> list[str] | None:
    """Check the ``subscriptions`` argument: ``None``, one id or name, or several."""
    if subscriptions is None:
        return None
    if isinstance(subscriptions, str):
        subscriptions = [subscriptions]
    elif isinstance(subscriptions, pd.DataFrame) and "subscriptionId" in subscriptions:
        subscriptions = subscriptions["subscriptionId"].tolist()
    elif not isinstance(subscriptions, Iterable) or isinstance(subscriptions, bytes | dict):
        raise ValidationError("subscriptions", subscriptions,
                              "a subscription id or name, or a list of them")
    asked = list(subscriptions)
    if not asked or not all(isinstance(s, str) and s.strip() for s in asked):
        raise ValidationError("subscriptions", subscriptions,
                              "a subscription id or name, or a non-empty list of them")
    return asked


def _scope(asked: list[str] | None, connection: Connection | None
           ) -> tuple[list[tuple[str, str]], list[dict[str, Any]], bool]:
    """Find the subscriptions to read: (id, display name) pairs.

    Also the names asked for that no listed subscription has, and whether the sandbox
    answered the list.
    """
    from toolkit.arm.resources import subscriptions as list_subscriptions

    listed = list_subscriptions(connection=connection)
    sandbox = bool(listed.attrs.get("sandbox"))
    pairs = list(zip(listed["subscriptionId"].astype(str), listed["displayName"].astype(str),
                     strict=True))
    if asked is None:
        return pairs, [], sandbox
    by_key: dict[str, tuple[str, str]] = {}
    for sid, name in pairs:
        by_key.setdefault(sid.lower(), (sid, name))
        by_key.setdefault(name.lower(), (sid, name))
    chosen: list[tuple[str, str]] = []
    unknown: list[dict[str, Any]] = []
    for key in asked:
        found = by_key.get(key.strip().lower())
        if found is None:
            unknown.append({"subscriptionId": None, "displayName": key, "status": None,
                            "code": "SubscriptionNotFound",
                            "message": "not among the subscriptions the credential can list"})
        elif found not in chosen:
            chosen.append(found)
    return chosen, unknown, sandbox


def _why(err: ToolkitError) -> dict[str, Any]:
    if isinstance(err, ApiError):
        return {"status": err.status, "code": err.code or type(err).__name__,
                "message": err.message}
    return {"status": None, "code": type(err).__name__, "message": str(err)}


def _empty(read: Callable[..., Any]) -> pd.DataFrame:
    """Make an empty frame with the columns of ``read``'s frame (a toolkit operation's)."""
    from toolkit._core.frames import empty_frame

    rec = find(getattr(read, "__name__", None))
    return empty_frame(rec.schema) if rec is not None and rec.schema is not None \
        else pd.DataFrame()


def across_subscriptions(read: Callable[..., pd.DataFrame], subscriptions: Any = None, *,
                         connection: Connection | None = None,
                         **arguments: Any) -> SubscriptionReads:
    """Run a per-subscription read in every subscription of a scope; name those refused.

    ``read(subscription_id, **arguments)`` is called once per subscription (with
    ``connection=`` when one is given): a toolkit function such as :func:`~toolkit.sql_servers`
    or :func:`~toolkit.policy_summary`, or a function of your own. An answer that refuses a
    subscription (403 on a subscription the credential has no role on, 404, throttling, a
    connection that failed) does not stop the others: it is named in ``refused``. A bad
    argument is still raised (:class:`~toolkit.ValidationError`), since it would fail everywhere.

    Parameters
    ----------
    read : callable
        Takes a subscription id first and returns a DataFrame.
    subscriptions : str, list of str or DataFrame, optional
        Subscription ids or display names (case does not matter), or a frame with a
        ``subscriptionId`` column. Default: every subscription the credential can list
        (:func:`~toolkit.subscriptions`). A name no listed subscription has is refused too.
    connection : Connection, optional
        Defaults to the default connection.
    **arguments
        Passed to ``read`` (``resource_group=``, ``start=``...).

    Returns
    -------
    SubscriptionReads
        A named pair. ``frame``: the frames read, in the order of the subscriptions, with
        ``subscription_id`` (when the read's frame has none) and ``subscription`` (the
        display name) added (strings); an empty frame with the read's columns when nothing was
        read. ``frame.attrs`` holds the first frame's provenance, every request id, the
        subscriptions read (``subscriptions``) and those refused (``refused``: one dict each,
        with ``subscriptionId``, ``displayName``, ``status``, ``code``, ``message``).
        ``refused``: one sentence, such as ``"1 of 3 subscriptions could not be read:
        retail-dev (AuthorizationFailed)."``, or ``""`` when every subscription was read.

    Raises
    ------
    ValidationError
        ``read`` is not callable or ``subscriptions`` is not ids or names (before any
        request), or ``read`` refused its arguments.
    ToolkitError
        The subscriptions could not be listed at all.

    Examples
    --------
    >>> servers, refused = toolkit.across_subscriptions(toolkit.sql_servers)  # doctest: +SKIP
    >>> if refused:
    ...     print(refused)
    """
    if not callable(read):
        raise ValidationError("read", read, "a function taking a subscription id")
    asked = _asked(subscriptions)
    scope, failures, sandbox = _scope(asked, connection)
    if connection is not None:
        arguments = {**arguments, "connection": connection}
    frames: list[pd.DataFrame] = []
    read_ids: list[str] = []
    for sid, name in scope:
        try:
            df = read(sid, **arguments)
        except ValidationError:
            raise
        except ToolkitError as err:
            logger.info("across_subscriptions: %s (%s) refused: %s", name, sid, err)
            failures.append({"subscriptionId": sid, "displayName": name, **_why(err)})
            continue
        if not isinstance(df, pd.DataFrame):
            raise ValidationError("read", read, "a function returning a DataFrame")
        df = df.copy()
        if "subscription_id" not in df.columns:
            df["subscription_id"] = pd.array([sid] * len(df), dtype="string")
        df["subscription"] = pd.array([name] * len(df), dtype="string")
        frames.append(df)
        read_ids.append(sid)
    attrs: dict[str, Any] = {str(k): v for k, v in frames[0].attrs.items()} if frames else {}
    if frames:
        # empty frames add no rows (and would make pandas guess the dtypes of the others)
        frame = pd.concat([f for f in frames if len(f)] or frames[:1], ignore_index=True)
        attrs["request_ids"] = [i for f in frames for i in f.attrs.get("request_ids") or []]
        attrs["sandbox"] = any(bool(f.attrs.get("sandbox")) for f in frames)
    else:
        frame = _empty(read)
        frame["subscription_id"] = pd.array([], dtype="string")
        frame["subscription"] = pd.array([], dtype="string")
        rec = find(getattr(read, "__name__", None))
        attrs = {"operation": rec.name if rec is not None else None, "request_ids": [],
                 "sandbox": sandbox}
    attrs["subscriptions"] = read_ids
    attrs["refused"] = failures
    frame.attrs.clear()
    frame.attrs.update(attrs)
    sentence = ""
    if failures:
        names = ", ".join(f"{f['displayName']} ({f['code']})" for f in failures)
        total = len(scope) + sum(1 for f in failures if f["subscriptionId"] is None)
        sentence = (f"{len(failures)} of {total} subscription{'s' if total != 1 else ''} "
                    f"could not be read: {names}.")
    return SubscriptionReads(frame, sentence)
