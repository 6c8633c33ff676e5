"""The resources a report needs, listed: SQL servers, application gateways and clusters.

Each function is its provider's own list operation, of a subscription
(``GET /subscriptions/{s}/providers/{provider}/{type}``) or of one of its resource groups
(``.../resourceGroups/{g}/providers/...``), every page read (``nextLink``), so that a report
finds the names to ask about in the tenant the credential sees rather than in its code. Each
row also says where the resource lives (``subscription_id``, ``resource_group``, read from its
id), which is what the per-resource functions take.
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

from toolkit._core.registry import OperationRecord, register
from toolkit._core.schemas import Schema
from toolkit._core.urls import segment
from toolkit._core.validate import check_resource_group, check_subscription_id
from toolkit._spec.arm import (
    HOSTED_CLUSTER_API_VERSIONS,
    MANAGED_CLUSTER_API_VERSIONS,
    NETWORK_API_VERSIONS,
    SQL_API_VERSIONS,
)
from toolkit.arm._schemas import (
    APPLICATION_GATEWAYS,
    MANAGED_CLUSTERS,
    OPENSHIFT_CLUSTERS,
    SQL_SERVERS,
)
from toolkit.arm.resources import arm_list
from toolkit.connection import get_connection

if TYPE_CHECKING:
    import pandas as pd

    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["application_gateways", "managed_clusters", "openshift_clusters", "sql_servers"]

#: ``/subscriptions/{s}/resourceGroups/{g}/...`` in a resource id (the providers spell the
#: segment in either case: ``resourcegroups`` in the managed clusters' own examples).
_WHERE = re.compile(r"^/subscriptions/([^/]+)/resourcegroups/([^/]+)/", re.IGNORECASE)


def _where(items: list[Any]) -> list[Any]:
    """Add ``subscription_id`` and ``resource_group`` to each item, read from its ``id``."""
    out = []
    for item in items:
        if isinstance(item, dict):
            found = _WHERE.match(item.get("id") or "") if isinstance(item.get("id"), str) \
                else None
            item = {**item, "subscription_id": found.group(1) if found else None,
                    "resource_group": found.group(2) if found else None}
        out.append(item)
    return out


def _inventory(subscription_id: str, resource_group: str | None, provider: str,
               schema: Schema, max_items: int | None, api_version: str,
               connection: Connection | None) -> pd.DataFrame:
    """List one resource type of a subscription, or of one of its resource groups."""
    check_subscription_id(subscription_id)
    scope = f"/subscriptions/{subscription_id}"
    if resource_group is not None:
        check_resource_group(resource_group)
        scope += f"/resourceGroups/{segment(resource_group, 'resource_group')}"
    return arm_list(f"{scope}/providers/{provider}", schema, schema.name, max_items,
                    api_version, connection, transform=_where)


def sql_servers(subscription_id: str, resource_group: str | None = None, *,
                max_items: int | None = None, api_version: str = SQL_API_VERSIONS[0],
                connection: Connection | None = None) -> pd.DataFrame:
    """List the SQL servers of a subscription, or of one of its resource groups (every page).

    Parameters
    ----------
    subscription_id : str
        Subscription (UUID).
    resource_group : str, optional
        Only this resource group's servers.
    max_items : int, optional
        Stop after this many servers (warns that the result is truncated).
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row per server: ``id``, ``name``, ``type`` (strings), ``location`` (category),
        ``tags`` (dict), ``kind``, ``fullyQualifiedDomainName``, ``version``, ``state``,
        ``administratorLogin`` (strings), ``publicNetworkAccess`` (category),
        ``minimalTlsVersion``, ``subscription_id``, ``resource_group`` (strings: where the
        server lives, from its id). An empty frame for a subscription without servers.

    Raises
    ------
    AuthenticationError
        The caller may not read the subscription (403 ``AuthorizationFailed``).
    """
    return _inventory(subscription_id, resource_group,
                      "{ns}.Sql/servers", SQL_SERVERS, max_items, api_version, connection)


def application_gateways(subscription_id: str, resource_group: str | None = None, *,
                         max_items: int | None = None,
                         api_version: str = NETWORK_API_VERSIONS[0],
                         connection: Connection | None = None) -> pd.DataFrame:
    """List the application gateways of a subscription, or of one of its resource groups.

    Every page is read.

    Parameters
    ----------
    subscription_id : str
        Subscription (UUID).
    resource_group : str, optional
        Only this resource group's gateways.
    max_items : int, optional
        Stop after this many gateways (warns that the result is truncated).
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row per gateway: ``id``, ``name``, ``type`` (strings), ``location`` (category),
        ``tags`` (dict), ``provisioningState``, ``operationalState`` (categories),
        ``sku.name``, ``sku.tier`` (strings), ``sku.capacity`` (``Int64``),
        ``backendAddressPools`` (list of the pools as the service sends them),
        ``subscription_id``, ``resource_group`` (strings, from the id).
    """
    return _inventory(subscription_id, resource_group, "{ns}.Network/applicationGateways",
                      APPLICATION_GATEWAYS, max_items, api_version, connection)


def managed_clusters(subscription_id: str, resource_group: str | None = None, *,
                     max_items: int | None = None,
                     api_version: str = MANAGED_CLUSTER_API_VERSIONS[0],
                     connection: Connection | None = None) -> pd.DataFrame:
    """List the managed Kubernetes clusters of a subscription, or of one of its resource groups.

    Every page is read.

    Parameters
    ----------
    subscription_id : str
        Subscription (UUID).
    resource_group : str, optional
        Only this resource group's clusters.
    max_items : int, optional
        Stop after this many clusters (warns that the result is truncated).
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row per cluster: ``id``, ``name``, ``type`` (strings), ``location`` (category),
        ``tags`` (dict), ``provisioningState``, ``powerState.code`` (categories),
        ``kubernetesVersion``, ``currentKubernetesVersion``, ``dnsPrefix``, ``fqdn``,
        ``privateFQDN`` (strings), ``apiServerAccessProfile.enablePrivateCluster`` (boolean),
        ``nodeResourceGroup`` (string), ``agentPoolProfiles`` (list), ``subscription_id``,
        ``resource_group`` (strings, from the id).
    """
    return _inventory(subscription_id, resource_group, "{ns}.ContainerService/managedClusters",
                      MANAGED_CLUSTERS, max_items, api_version, connection)


def openshift_clusters(subscription_id: str, resource_group: str | None = None, *,
                       max_items: int | None = None,
                       api_version: str = HOSTED_CLUSTER_API_VERSIONS[0],
                       connection: Connection | None = None) -> pd.DataFrame:
    """List the hosted OpenShift clusters of a subscription, or of one of its resource groups.

    Every page is read; the provider is the cloud's (``Microsoft.RedHatOpenShift/
    openShiftClusters`` in the real clouds).

    Parameters
    ----------
    subscription_id : str
        Subscription (UUID).
    resource_group : str, optional
        Only this resource group's clusters.
    max_items : int, optional
        Stop after this many clusters (warns that the result is truncated).
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row per cluster: ``id``, ``name``, ``type`` (strings), ``location`` (category),
        ``tags`` (dict), ``provisioningState`` (category), ``clusterProfile.version``,
        ``clusterProfile.domain``, ``consoleProfile.url`` (strings),
        ``apiserverProfile.visibility`` (category), ``apiserverProfile.url`` (string), the
        ``systemData.*`` columns, ``subscription_id``, ``resource_group`` (strings, from the id).
    """
    words = get_connection(connection).words
    return _inventory(subscription_id, resource_group,
                      f"{words.hosted_cluster_provider}/{words.hosted_cluster_type}",
                      OPENSHIFT_CLUSTERS, max_items, api_version, connection)


SQL_SERVERS_RECORD = register(OperationRecord("sql_servers", schema=SQL_SERVERS))
GATEWAYS_RECORD = register(OperationRecord("application_gateways", schema=APPLICATION_GATEWAYS))
MANAGED_RECORD = register(OperationRecord("managed_clusters", schema=MANAGED_CLUSTERS))
OPENSHIFT_RECORD = register(OperationRecord("openshift_clusters", schema=OPENSHIFT_CLUSTERS))
