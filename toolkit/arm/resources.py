"""The tenant's standard resource-management lists: management groups, subscriptions, resource
groups. They find the scopes to ask about, the same way against a real tenant as against the
sandbox (every page read, typed frames)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import pandas as pd

from toolkit._core.frames import FrameBuilder
from toolkit._core.paging import (
    ARM,
    MANAGEMENT_GROUPS as MG_PAGES,
    PagingStyle,
    collect_frame,
    iter_pages,
)
from toolkit._core.schemas import MANAGEMENT_GROUPS, RESOURCE_GROUPS, SUBSCRIPTIONS, Schema
from toolkit._core.validate import check_api_version, check_int, check_subscription_id
from toolkit._spec.arm import (
    GROUP_API_VERSIONS,
    MANAGEMENT_GROUP_API_VERSIONS,
    SUBSCRIPTION_API_VERSIONS,
)
from toolkit.connection import get_connection

if TYPE_CHECKING:
    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["management_groups", "resource_groups", "subscriptions"]

MG_API_VERSION = MANAGEMENT_GROUP_API_VERSIONS[0]
SUBSCRIPTION_API_VERSION = SUBSCRIPTION_API_VERSIONS[0]
GROUP_API_VERSION = GROUP_API_VERSIONS[0]


def _list(path: str, schema: Schema, operation: str, max_items: int | None, api_version: str,
          connection: Connection | None, style: PagingStyle = ARM) -> pd.DataFrame:
    if max_items is not None:
        check_int(max_items, "max_items", minimum=0)
    check_api_version(api_version)
    conn = get_connection(connection)
    pipe = conn.pipeline("arm")
    pages = iter_pages(pipe, "GET", path.format(ns=conn.namespace), style=style,
                       params={"api-version": api_version}, operation=operation)
    return collect_frame(pages, FrameBuilder(schema), operation=operation, max_items=max_items,
                         connection=conn, api_version=api_version)


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
    return _list("/providers/{ns}.Management/managementGroups", MANAGEMENT_GROUPS,
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
    return _list("/subscriptions", SUBSCRIPTIONS, "subscriptions", max_items, api_version,
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
    df = _list(f"/subscriptions/{subscription_id}/resourcegroups", RESOURCE_GROUPS,
               "resource_groups", max_items, api_version, connection)
    df["subscription_id"] = pd.array([subscription_id] * len(df), dtype="string")
    return df
