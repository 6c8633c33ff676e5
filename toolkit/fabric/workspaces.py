"""The workspaces the caller can see: ``GET /v1/workspaces``, every page.

Pages carry ``continuationToken`` and ``continuationUri`` (the next page's address, asked by
GET); a report finds the workspace ids that :func:`~toolkit.create_eventstream` takes here
instead of in its code.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from toolkit._core.errors import ValidationError
from toolkit._core.frames import FrameBuilder
from toolkit._core.paging import PagingStyle, collect_frame, iter_pages
from toolkit._core.registry import OperationRecord, register
from toolkit._core.schemas import Col, Schema
from toolkit._core.validate import check_int
from toolkit._spec.fabric import (
    API_VERSION_PATTERN,
    API_VERSIONS,
    WORKSPACE_ROLES,
    WORKSPACE_TYPES,
)
from toolkit.connection import get_connection

if TYPE_CHECKING:
    import pandas as pd

    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["fabric_workspaces"]

#: Fabric collections: items in ``value``, the next page at ``continuationUri`` (GET).
FABRIC = PagingStyle(items_key="value", next_key="continuationUri", next_method="GET")

WORKSPACES = Schema(
    "fabric_workspaces",
    (
        Col("id", "string"),
        Col("displayName", "string"),
        Col("description", "string"),
        Col("type", "category", categories=WORKSPACE_TYPES),
        Col("capacityId", "string"),
        Col("capacityRegion", "string"),
        Col("domainId", "string"),
        Col("tags", "list"),
    ),
)


def fabric_workspaces(*, roles: str | Sequence[str] | None = None,
                      max_items: int | None = None, api_version: str = API_VERSIONS[0],
                      connection: Connection | None = None) -> pd.DataFrame:
    """List the workspaces the caller has a role in (every page).

    Parameters
    ----------
    roles : str or sequence of str, optional
        Only workspaces where the caller has one of these roles (``Admin``, ``Member``,
        ``Contributor``, ``Viewer``).
    max_items : int, optional
        Stop after this many workspaces (warns that the result is truncated).
    api_version : str
        The interface version in the path (``v1``).
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row per workspace: ``id``, ``displayName``, ``description`` (strings), ``type``
        (category: ``Personal``, ``Workspace``, ``AdminWorkspace``), ``capacityId``,
        ``capacityRegion``, ``domainId`` (strings: empty for a workspace on no capacity),
        ``tags`` (list of ``{id, displayName}``).

    Raises
    ------
    ValidationError
        A role that is none of the four, or a bad ``api_version`` (before any request).
    """
    if not isinstance(api_version, str) or not re.fullmatch(API_VERSION_PATTERN, api_version):
        raise ValidationError("api_version", api_version, "the version path, such as 'v1'")
    if max_items is not None:
        check_int(max_items, "max_items", minimum=0)
    params: dict[str, str] = {}
    if roles is not None:
        asked = [roles] if isinstance(roles, str) else \
            list(roles) if isinstance(roles, Sequence | set | frozenset) else [roles]
        if not asked or not all(isinstance(r, str) and r in WORKSPACE_ROLES for r in asked):
            raise ValidationError("roles", roles,
                                  f"workspace roles are {', '.join(WORKSPACE_ROLES)}")
        params["roles"] = ",".join(dict.fromkeys(asked))
    conn = get_connection(connection)
    pages = iter_pages(conn.pipeline("fabric"), "GET", f"/{api_version}/workspaces",
                       style=FABRIC, params=params, operation="fabric_workspaces")
    return collect_frame(pages, FrameBuilder(WORKSPACES), operation="fabric_workspaces",
                         max_items=max_items, connection=conn, api_version=api_version)


RECORD = register(OperationRecord("fabric_workspaces", schema=WORKSPACES))
