"""The services' clock: what "now" and "today" mean for a report.

A report is about the service's day, not the machine's: every answer carries the service's
clock in its ``Date`` header (a real service's, or a sandbox's own, which may be pinned to
another day). Each family's pipeline keeps the latest date it was told;
:func:`service_now` reads it, asking one light request first when the family has not answered
yet.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import pandas as pd

from toolkit._core.errors import ApiError, ToolkitError, ValidationError
from toolkit._core.messages import Request
from toolkit._spec.arm import SUBSCRIPTION_API_VERSIONS
from toolkit._spec.fabric import API_VERSIONS as FABRIC_VERSIONS
from toolkit.connection import get_connection

if TYPE_CHECKING:
    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["service_now"]

#: A request each family answers cheaply for any signed-in caller (its first page), to learn
#: the service's clock from; maps and identity have none that costs nothing.
_LIGHT = {
    "arm": ("/subscriptions", {"api-version": SUBSCRIPTION_API_VERSIONS[0]}),
    "fabric": (f"/{FABRIC_VERSIONS[0]}/workspaces", {}),
}
_FAMILIES = ("arm", "maps", "graph", "fabric")


def service_now(family: str = "arm", *, connection: Connection | None = None) -> pd.Timestamp:
    """Tell the time by a service's clock (the ``Date`` header of its answers).

    The latest answer of the family on this connection tells it (plus the time since); before
    any, the resource manager is asked for the first page of subscriptions and eventstreams for
    the first page of workspaces (an answer refused, 403 say, still carries the date). For maps
    and identity, call one of their functions first.

    Parameters
    ----------
    family : {"arm", "maps", "graph", "fabric"}
        Whose clock.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.Timestamp
        The instant, UTC, to the second.

    Raises
    ------
    ValidationError
        An unknown family (before any request).
    ToolkitError
        Maps or identity have not answered on this connection yet.
    """
    if family not in _FAMILIES:
        raise ValidationError("family", family, f"one of {', '.join(_FAMILIES)}")
    pipe = get_connection(connection).pipeline(family)
    told = pipe.service_time()
    if told is None and family in _LIGHT:
        path, params = _LIGHT[family]
        try:
            pipe.send(Request("GET", path, params=params, operation="service_now"))
        except ApiError as err:  # its answer carried the date all the same
            logger.debug("service_now: %s answered %s", family, err.status)
        told = pipe.service_time()
    if told is None:
        raise ToolkitError(f"service_now: no answer of the {family} family on this connection "
                           "told its clock yet; call one of its functions first")
    return pd.Timestamp(told).floor("s")
