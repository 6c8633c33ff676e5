"""The tenant's resource-management lists: management groups, subscriptions and the resource
groups of a subscription, served from the world, each paged as the service pages it (GET on the
next link: ``@nextLink`` for management groups, ``nextLink`` for the others).

``GET /providers/Vendor.Management/managementGroups``, ``GET /subscriptions`` and
``GET /subscriptions/{s}/resourcegroups``; :data:`PAGE_SIZE` items a page (small, so that the
world's lists span several pages), the next page's link carrying a ``$skiptoken``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from toolkit._spec.arm import (
    GROUP_API_VERSIONS,
    MANAGEMENT_GROUP_API_VERSIONS,
    MANAGEMENT_GROUP_NEXT_KEY,
    MANAGEMENT_GROUP_TYPE,
    NEXT_KEY,
    SUBSCRIPTION_API_VERSIONS,
)
from toolkit.sandbox.arm.common import arm_reply, find_subscription
from toolkit.sandbox.http import Reply, Request, Router, SandboxHTTPError

if TYPE_CHECKING:
    from toolkit.sandbox.server import Sandbox

__all__ = ["PAGE_SIZE", "register"]

PAGE_SIZE = 2
MG_API_VERSIONS = MANAGEMENT_GROUP_API_VERSIONS


def _page(request: Request, items: list[dict[str, Any]], next_key: str = NEXT_KEY) -> Reply:
    raw = request.param("$skiptoken") or "0"
    if not raw.isdigit():
        raise SandboxHTTPError(400, "InvalidSkipToken",
                               f"The $skiptoken '{raw[:40]}' is not valid.")
    offset = int(raw)
    stop = offset + PAGE_SIZE
    body: dict[str, Any] = {"value": items[offset:stop]}
    if stop < len(items):
        params = [(k, v) for k, v in request.query if k.lower() != "$skiptoken"]
        params.append(("$skiptoken", str(stop)))
        body[next_key] = (f"{request.base_url}{request.path}?"
                            f"{urlencode(params, quote_via=quote, safe='$')}")
    return arm_reply(request, body)


def _management_groups(request: Request) -> Reply:
    world = request.sandbox.world
    ns = request.sandbox.namespace
    items = [{"id": f"/providers/{ns}.Management/managementGroups/{mg.name}",
              "type": f"{ns}.{MANAGEMENT_GROUP_TYPE}", "name": mg.name,
              "properties": {"tenantId": world.tenant_id, "displayName": mg.display_name}}
             for mg in world.management_groups]
    return _page(request, items, MANAGEMENT_GROUP_NEXT_KEY)


def _subscriptions(request: Request) -> Reply:
    world = request.sandbox.world
    items = [{"id": f"/subscriptions/{s.id}", "subscriptionId": s.id,
              "tenantId": world.tenant_id, "displayName": s.name, "state": "Enabled",
              "authorizationSource": "RoleBased", "managedByTenants": [],
              "subscriptionPolicies": {"locationPlacementId": "Public_2014-09-01",
                                       "quotaId": "EnterpriseAgreement_2014-09-01",
                                       "spendingLimit": "Off"}}
             for s in world.subscriptions]
    return _page(request, items)


def _resource_groups(request: Request) -> Reply:
    sub = find_subscription(request)
    ns = request.sandbox.namespace
    items = [{"id": f"/subscriptions/{sub.id}/resourceGroups/{g.name}", "name": g.name,
              "type": f"{ns}.Resources/resourceGroups", "location": g.location,
              "tags": {"purpose": g.purpose},
              "properties": {"provisioningState": "Succeeded"}}
             for g in sub.resource_groups]
    return _page(request, items)


def register(router: Router, sandbox: Sandbox) -> None:
    """Add the three list routes."""
    router.add("GET", "/providers/{ns}.Management/managementGroups", _management_groups,
               family="arm", api_versions=MG_API_VERSIONS, name="management_groups")
    router.add("GET", "/subscriptions", _subscriptions, family="arm",
               api_versions=SUBSCRIPTION_API_VERSIONS, name="subscriptions")
    router.add("GET", "/subscriptions/{subscriptionId}/resourcegroups", _resource_groups,
               family="arm", api_versions=GROUP_API_VERSIONS, name="resource_groups")
