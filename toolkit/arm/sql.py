"""SQL: server name availability (spec 1 §4.4) and the provider's operations (§4.5)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import pandas as pd

from toolkit._core.concurrency import FAMILY_RATES, fan_out
from toolkit._core.frames import FrameBuilder, build_frame
from toolkit._core.paging import ARM, collect_frame, iter_pages
from toolkit._core.provenance import provenance
from toolkit._core.schemas import NAME_AVAILABILITY, SQL_OPERATIONS
from toolkit._core.validate import (
    check_api_version,
    check_int,
    check_subscription_id,
    many_strings,
    server_name_problem,
)
from toolkit.connection import get_connection

if TYPE_CHECKING:
    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["check_server_names", "sql_operations"]

API_VERSION = "2025-01-01"


def sql_operations(*, max_items: int | None = None, api_version: str = API_VERSION,
                   connection: Connection | None = None) -> pd.DataFrame:
    """List the operations the database provider offers (every page).

    Parameters
    ----------
    max_items : int, optional
        Stop after this many operations (warns that the result is truncated).
    api_version : str
        The service version (spec 1 §9).
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row per operation: ``name`` (``<provider>/<resource path>/<verb>``),
        ``isDataAction`` (boolean), ``display.provider``, ``display.resource``,
        ``display.operation``, ``display.description`` (strings), ``origin`` (category
        ``user``/``system``/``user,system``), ``properties`` (object).
    """
    if max_items is not None:
        check_int(max_items, "max_items", minimum=0)
    check_api_version(api_version)
    conn = get_connection(connection)
    pipe = conn.pipeline("arm")
    pages = iter_pages(pipe, "GET", f"/providers/{conn.namespace}.Sql/operations", style=ARM,
                       params={"api-version": api_version}, operation="sql_operations")
    return collect_frame(pages, FrameBuilder(SQL_OPERATIONS), operation="sql_operations",
                         max_items=max_items, connection=conn, api_version=api_version)


def check_server_names(subscription_id: str, names: str | Any, *, send_invalid: bool = False,
                       api_version: str = API_VERSION,
                       connection: Connection | None = None) -> pd.DataFrame:
    """Check whether database server names are available.

    Names that break the rules of spec 1 §2.6 (1 to 63 characters, lower-case letters, digits
    and inner hyphens) are answered without a request, as the service would answer them, unless
    ``send_invalid`` is true. The others are checked concurrently, each distinct name once.

    Parameters
    ----------
    subscription_id : str
        Subscription (UUID) to check in.
    names : str or iterable of str
        One name or any number of names.
    send_invalid : bool
        Send invalid names to the service too.
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row per name asked, in input order: ``name`` (string), ``available`` (boolean),
        ``reason`` (category ``Invalid``/``AlreadyExists``), ``message`` (string; the rule broken
        when invalid), ``answered_by`` (category ``service``/``toolkit``), ``error`` (string;
        set when checking that name failed; the other rows are kept).

    Raises
    ------
    ValidationError
        Bad subscription id or names (before any request).
    ApiError
        When every check failed (e.g. unknown subscription), the first failure.
    """
    check_subscription_id(subscription_id)
    items, _ = many_strings(names, "names")
    check_api_version(api_version)
    conn = get_connection(connection)
    pipe = conn.pipeline("arm")
    path = f"/subscriptions/{subscription_id}/providers/{conn.namespace}.Sql/checkNameAvailability"

    answers: dict[str, dict[str, Any]] = {}
    to_send: list[str] = []
    for name in dict.fromkeys(items):
        problem = server_name_problem(name)
        if problem and not send_invalid:
            answers[name] = {"name": name, "available": False, "reason": "Invalid",
                             "message": problem[0].upper() + problem[1:] + ".",
                             "answered_by": "toolkit"}
        else:
            to_send.append(name)

    def check(name: str) -> Any:
        return pipe.send("POST", path, params={"api-version": api_version},
                         json={"name": name, "type": f"{conn.namespace}.Sql/servers"},
                         operation="check_server_names")

    outcomes = fan_out(check, to_send, connection=conn, desc="check_server_names",
                       rate=FAMILY_RATES["arm"])
    failures = [o for o in outcomes if not o.ok]
    if outcomes and len(failures) == len(outcomes):
        raise failures[0].error  # type: ignore[misc]
    request_ids = []
    for o in outcomes:
        if o.ok:
            body = o.value.json() or {}
            if o.value.request_id:
                request_ids.append(o.value.request_id)
            answers[o.item] = {**body, "name": body.get("name", o.item), "answered_by": "service"}
        else:
            answers[o.item] = {"name": o.item, "answered_by": "service", "error": str(o.error)}
    endpoint = pipe.url(path) if to_send else None
    return build_frame([answers[n] for n in items], NAME_AVAILABILITY,
                       provenance("check_server_names", api_version, endpoint, request_ids))
