"""The tenant's standard resource-management lists.

Management groups, subscriptions, resource groups, and the management-group hierarchy. They find the
scopes to ask about, the same way against a real tenant as against the sandbox (every page read,
typed frames).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pandas as pd

from toolkit._core.errors import ProtocolError, ToolkitError
from toolkit._core.frames import FrameBuilder, build_frame
from toolkit._core.messages import Request
from toolkit._core.paging import (
    ARM,
    MANAGEMENT_GROUPS as MG_PAGES,
    PagingStyle,
    collect_frame,
    iter_pages,
)
from toolkit._core.provenance import provenance
from toolkit._core.registry import OperationRecord, register
from toolkit._core.schemas import Schema
from toolkit._core.validate import check_api_version, check_int, check_name, check_subscription_id
from toolkit._spec.arm import (
    GROUP_API_VERSIONS,
    HIERARCHY_MAX_DEPTH,
    MANAGEMENT_GROUP_API_VERSIONS,
    MANAGEMENT_GROUP_NAME_PATTERN,
    SUBSCRIPTION_API_VERSIONS,
)
from toolkit.arm._schemas import (
    MANAGEMENT_GROUP_TREE,
    MANAGEMENT_GROUPS,
    RESOURCE_GROUPS,
    SUBSCRIPTIONS,
)
from toolkit.connection import get_connection

if TYPE_CHECKING:
    from toolkit._core.pipeline import Pipeline
    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["management_group_tree", "management_groups", "resource_groups", "subscriptions"]

MG_API_VERSION = MANAGEMENT_GROUP_API_VERSIONS[0]
SUBSCRIPTION_API_VERSION = SUBSCRIPTION_API_VERSIONS[0]
GROUP_API_VERSION = GROUP_API_VERSIONS[0]
#: The deepest row of a hierarchy: the groups the service allows below the root, then their
#: subscriptions.
TREE_MAX_DEPTH = HIERARCHY_MAX_DEPTH + 1
#: The most rows a hierarchy answer may give (the service allows 10,000 management groups in a
#: directory; the rest is room for subscriptions). More is a service fault, not a tenant.
TREE_MAX_ROWS = 200_000
_GROUP_NAME = re.compile(MANAGEMENT_GROUP_NAME_PATTERN)
_TREE_OPERATION = "management_group_tree"


def arm_list(path: str, schema: Schema, operation: str, max_items: int | None,
             api_version: str, connection: Connection | None, style: PagingStyle = ARM,
             transform: Callable[[list[Any]], list[Any]] | None = None) -> pd.DataFrame:
    """Read every page of a resource-management list into the schema's frame.

    ``path`` may name ``{ns}`` (the connection's provider namespace word); ``transform`` sees
    each page's items before the frame does.
    """
    if max_items is not None:
        check_int(max_items, "max_items", minimum=0)
    check_api_version(api_version)
    conn = get_connection(connection)
    pipe = conn.pipeline("arm")
    pages = iter_pages(pipe, "GET", path.format(ns=conn.namespace), style=style,
                       params={"api-version": api_version}, operation=operation)
    return collect_frame(pages, FrameBuilder(schema), operation=operation, max_items=max_items,
                         connection=conn, api_version=api_version, transform=transform)


def management_groups(*, max_items: int | None = None, api_version: str = MG_API_VERSION,
                      connection: Connection | None = None) -> pd.DataFrame:
    """List the management groups the caller can see (every page, followed by ``@nextLink``).

    Parameters
    ----------
    max_items : int, optional
        Stop after this many groups (warns that the result is truncated).
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row per management group: ``id`` (the scope string policy functions take), ``name``
        (the tenant root group's name is the tenant id), ``type``, ``displayName``, ``tenantId``
        (strings).
    """
    return arm_list("/providers/{ns}.Management/managementGroups", MANAGEMENT_GROUPS,
                 "management_groups", max_items, api_version, connection, MG_PAGES)


def subscriptions(*, max_items: int | None = None, api_version: str = SUBSCRIPTION_API_VERSION,
                  connection: Connection | None = None) -> pd.DataFrame:
    """List the subscriptions the caller can see (every page).

    Parameters
    ----------
    max_items : int, optional
        Stop after this many subscriptions (warns that the result is truncated).
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row per subscription: ``id`` (``/subscriptions/<uuid>``), ``subscriptionId``,
        ``displayName``, ``state`` (category), ``tenantId``, ``authorizationSource``,
        ``subscriptionPolicies.quotaId`` (strings), ``subscriptionPolicies.spendingLimit``
        (category).
    """
    return arm_list("/subscriptions", SUBSCRIPTIONS, "subscriptions", max_items, api_version,
                 connection)


def resource_groups(subscription_id: str, *, max_items: int | None = None,
                    api_version: str = GROUP_API_VERSION,
                    connection: Connection | None = None) -> pd.DataFrame:
    """List the resource groups of a subscription (every page).

    Parameters
    ----------
    subscription_id : str
        Subscription (UUID).
    max_items : int, optional
        Stop after this many groups (warns that the result is truncated).
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row per resource group: ``id``, ``name``, ``type`` (strings), ``location``
        (category), ``tags`` (dict), ``provisioningState``, ``managedBy`` and
        ``subscription_id`` (the subscription asked about) (strings).
    """
    check_subscription_id(subscription_id)
    df = arm_list(f"/subscriptions/{subscription_id}/resourcegroups", RESOURCE_GROUPS,
               "resource_groups", max_items, api_version, connection)
    df["subscription_id"] = pd.array([subscription_id] * len(df), dtype="string")
    return df


def _tree_rows(body: dict[str, Any], url: str) -> list[dict[str, Any]]:
    """Flatten the hierarchy answer's nodes into rows, depth first in the service's order.

    Walked with a stack, not recursion, and bounded: deeper than :data:`TREE_MAX_DEPTH` or more than
    :data:`TREE_MAX_ROWS` rows is a ProtocolError.
    """

    def fail(problem: str) -> ProtocolError:
        return ProtocolError(f"{_TREE_OPERATION}: {problem}", url=url)

    props = body.get("properties")
    if not isinstance(props, dict):
        raise fail("the group has no 'properties' object")
    details = props.get("details")
    parent = details.get("parent") if isinstance(details, dict) else None
    root = {"id": body.get("id"), "name": body.get("name"), "type": body.get("type"),
            "displayName": props.get("displayName"),
            "parent_id": parent.get("id") if isinstance(parent, dict) else None}
    rows: list[dict[str, Any]] = []
    stack: list[tuple[dict[str, Any], Any, int, str | None, str]] = [
        (root, props.get("children"), 0, root["parent_id"], "")]
    while stack:
        node, children, depth, parent_id, above = stack.pop()
        name, node_id = node.get("name"), node.get("id")
        # the path names a node by its name, else by its id's last segment
        step = name if isinstance(name, str) and name else (
            node_id.rstrip("/").rsplit("/", 1)[-1] if isinstance(node_id, str) else "")
        if not step:
            raise fail(f"a node at depth {depth} has neither a name nor an id")
        path = f"{above}/{step}" if above else step
        rows.append({"id": node_id, "name": name, "type": node.get("type"),
                     "displayName": node.get("displayName"), "parent_id": parent_id,
                     "depth": depth, "path": path})
        if len(rows) > TREE_MAX_ROWS:
            raise fail(f"more than {TREE_MAX_ROWS} groups and subscriptions; stopping")
        if children is None:
            continue
        if not isinstance(children, list):
            raise fail(f"the children of '{step[:100]}' are not a list")
        if children and depth + 1 > TREE_MAX_DEPTH:
            raise fail(f"the hierarchy is deeper than {TREE_MAX_DEPTH} levels below the group "
                       f"asked (the service allows {HIERARCHY_MAX_DEPTH} levels of groups); "
                       "stopping")
        for child in reversed(children):
            if not isinstance(child, dict):
                raise fail(f"a child of '{step[:100]}' is not an object")
            stack.append((child, child.get("children"), depth + 1, node_id, path))
    return rows


def _tenant_root(pipe: Pipeline, ns: str, api_version: str) -> str:
    """Find the tenant root group's id: the tenant id, which every group of the list carries."""
    response = pipe.send(Request("GET", f"/providers/{ns}.Management/managementGroups",
                                 params={"api-version": api_version}, operation=_TREE_OPERATION))
    values = response.json_object().get("value")
    for item in values if isinstance(values, list) else []:
        props = item.get("properties") if isinstance(item, dict) else None
        tenant = props.get("tenantId") if isinstance(props, dict) else None
        if isinstance(tenant, str) and _GROUP_NAME.fullmatch(tenant):
            return tenant
    raise ToolkitError(f"{_TREE_OPERATION}: the caller sees no management group, so the tenant "
                       "root group is not known; give group_id")


def management_group_tree(group_id: str | None = None, *, api_version: str = MG_API_VERSION,
                          connection: Connection | None = None) -> pd.DataFrame:
    """List the management-group hierarchy below a group: its groups and subscriptions, a row each.

    One request (``GET .../managementGroups/{group_id}?$expand=children&$recurse=true``) gives
    the whole tree; roll compliance up it by joining ``policy_summary`` or ``policy_states``
    frames on the subscription ids (``name`` of the subscription rows) and grouping by the
    groups on ``path``.

    Parameters
    ----------
    group_id : str, optional
        The management group's id (``name``; up to 90 letters, digits, ``-``, ``_``, ``(``,
        ``)`` and ``.``, not ending in ``.``). Default: the tenant root group, whose id is the
        tenant id (found from the management groups list, one more request).
    api_version : str
        The service api_version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row per group or subscription, depth first in the service's order (the group asked
        first): ``id`` (the scope string policy functions take), ``name`` (a group's id, or the
        subscription id), ``type`` (the service's own word: the management-group resource type,
        e.g. ``Microsoft.Management/managementGroups``, or ``/subscriptions``), ``displayName``,
        ``parent_id`` (the ``id`` of the group above; for the group asked, its parent's, null for
        the tenant root) (strings), ``depth`` (``Int64``: 0 for the group asked) and ``path``
        (string: the ``name`` values from the group asked down to the row, ``/``-joined, e.g.
        ``<tenant id>/retail/<subscription id>``).

    Raises
    ------
    ValidationError
        A ``group_id`` or ``api_version`` that cannot be one (before any request).
    NotFoundError
        No such group (or none the caller may read).
    ProtocolError
        An answer that is not a hierarchy, or deeper or larger than the service allows.
    """
    if group_id is not None:
        check_name(group_id, "group_id", max_len=90, pattern=_GROUP_NAME,
                   rule="must be a management group id: 1 to 90 letters, digits, '-', '_', "
                        "'(', ')' or '.', not ending in '.'")
    check_api_version(api_version)
    conn = get_connection(connection)
    pipe = conn.pipeline("arm")
    ns = conn.namespace
    root = group_id if group_id is not None else _tenant_root(pipe, ns, api_version)
    response = pipe.send(Request("GET", f"/providers/{ns}.Management/managementGroups/{root}",
                                 params={"api-version": api_version, "$expand": "children",
                                         "$recurse": "true"}, operation=_TREE_OPERATION))
    rows = _tree_rows(response.json_object(), response.url)
    attrs = provenance(_TREE_OPERATION, api_version, response.url,
                       [response.request_id] if response.request_id else [])
    logger.debug("%s: %d rows below %s", _TREE_OPERATION, len(rows), root)
    return build_frame(rows, MANAGEMENT_GROUP_TREE, attrs, flat=True)


GROUPS_RECORD = register(OperationRecord("management_groups", schema=MANAGEMENT_GROUPS))
TREE_RECORD = register(OperationRecord(_TREE_OPERATION, schema=MANAGEMENT_GROUP_TREE))
SUBSCRIPTIONS_RECORD = register(OperationRecord("subscriptions", schema=SUBSCRIPTIONS))
RESOURCE_GROUPS_RECORD = register(OperationRecord("resource_groups", schema=RESOURCE_GROUPS))
