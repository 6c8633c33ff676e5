"""The tenant's resource-management lists, served from the world.

Management groups, subscriptions and the resource groups of a subscription, each paged as the
service pages it (GET on the next link: ``@nextLink`` for management groups, ``nextLink`` for the
others).

``GET /providers/Vendor.Management/managementGroups``, ``GET /subscriptions`` and
``GET /subscriptions/{s}/resourcegroups``; :data:`PAGE_SIZE` items a page (small, so that the
world's lists span several pages), the next page's link carrying a ``$skiptoken``.

``GET /providers/Vendor.Management/managementGroups/{groupId}`` answers one group (the tenant
root group's id is the tenant id) with ``details`` (its parent), and with ``$expand=children``
its children (groups, then subscriptions, each ``{id, type, name, displayName}``), nested all the
way down with ``$recurse=true``; ``$expand=path`` and ``$expand=ancestors`` add the groups above.
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
    SUBSCRIPTION_TYPE,
)
from toolkit.sandbox.arm.common import arm_reply, denied, find_subscription
from toolkit.sandbox.http import Reply, Request, Router, SandboxHTTPError

if TYPE_CHECKING:
    from toolkit.sandbox.server import Sandbox
    from toolkit.sandbox.world import ManagementGroup, World

__all__ = ["PAGE_SIZE", "page", "register"]

PAGE_SIZE = 2
MG_API_VERSIONS = MANAGEMENT_GROUP_API_VERSIONS


def page(request: Request, items: list[dict[str, Any]], next_key: str = NEXT_KEY) -> Reply:
    """Answer one page of ``items`` (``$skiptoken`` is the offset), linking the next one."""
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
    hidden = denied(request.sandbox)[1]  # the groups the caller may not read are not listed
    items = [{"id": _group_id(ns, mg.name),
              "type": f"{ns}.{MANAGEMENT_GROUP_TYPE}", "name": mg.name,
              "properties": {"tenantId": world.tenant_id, "displayName": mg.display_name}}
             for mg in world.management_groups if mg.name.lower() not in hidden]
    return page(request, items, MANAGEMENT_GROUP_NEXT_KEY)


_EXPANDS = ("children", "path", "ancestors")


def _group_id(ns: str, name: str) -> str:
    return f"/providers/{ns}.Management/managementGroups/{name}"


def _children(world: World, ns: str, mg: ManagementGroup, recurse: bool) -> list[dict[str, Any]]:
    """List the groups, then the subscriptions, directly below ``mg``, as the hierarchy answer does.

    With ``recurse``, theirs too.
    """
    out: list[dict[str, Any]] = []
    for child in world.management_groups:
        if child.parent != mg.name:
            continue
        node: dict[str, Any] = {"id": _group_id(ns, child.name),
                                "type": f"{ns}.{MANAGEMENT_GROUP_TYPE}", "name": child.name,
                                "displayName": child.display_name}
        below = _children(world, ns, child, recurse) if recurse else []
        if below:
            node["children"] = below
        out.append(node)
    for sub_name in mg.subscriptions:
        sub = next(s for s in world.subscriptions if s.name == sub_name)
        out.append({"id": f"/subscriptions/{sub.id}", "type": SUBSCRIPTION_TYPE,
                    "name": sub.id, "displayName": sub.name})
    return out


def _management_group(request: Request) -> Reply:
    world = request.sandbox.world
    ns = request.sandbox.namespace
    name = request.path_params["groupId"]
    mg = next((m for m in world.management_groups if m.name.lower() == name.lower()), None)
    if mg is None:
        raise SandboxHTTPError(404, "NotFound", f"The management group '{name[:100]}' was not "
                                                "found.")
    expand = (request.param("$expand") or "").strip().lower()
    if expand and expand not in _EXPANDS:
        raise SandboxHTTPError(400, "InvalidQueryParameterValue",
                               f"The value '{expand[:40]}' of $expand is not one of "
                               f"{', '.join(_EXPANDS)}.")
    recurse_raw = (request.param("$recurse") or "false").strip().lower()
    if recurse_raw not in ("true", "false"):
        raise SandboxHTTPError(400, "InvalidQueryParameterValue",
                               f"The value '{recurse_raw[:40]}' of $recurse is not a boolean.")
    recurse = recurse_raw == "true"
    if recurse and expand != "children":
        raise SandboxHTTPError(400, "InvalidQueryParameterValue",
                               "$recurse=true needs $expand=children.")
    above: list[ManagementGroup] = []
    parent = mg.parent
    while parent is not None:
        above.append(world.management_group(parent))
        parent = above[-1].parent
    details: dict[str, Any] = {
        "version": 1, "updatedTime": world.epoch.strftime("%Y-%m-%dT%H:%M:%S.%f0Z"),
        "updatedBy": world.tenant_id,
        "parent": {"id": _group_id(ns, above[0].name), "name": above[0].name,
                   "displayName": above[0].display_name} if above else None}
    if expand == "path":
        details["path"] = [{"name": g.name, "displayName": g.display_name}
                           for g in reversed(above)]
    if expand == "ancestors":
        details["managementGroupAncestors"] = [g.name for g in above]
    body = {"id": _group_id(ns, mg.name), "type": f"{ns}.{MANAGEMENT_GROUP_TYPE}",
            "name": mg.name,
            "properties": {"tenantId": world.tenant_id, "displayName": mg.display_name,
                           "details": details,
                           "children": _children(world, ns, mg, recurse)
                           if expand == "children" else None}}
    return arm_reply(request, body)


def _subscriptions(request: Request) -> Reply:
    world = request.sandbox.world
    items = [{"id": f"/subscriptions/{s.id}", "subscriptionId": s.id,
              "tenantId": world.tenant_id, "displayName": s.name, "state": "Enabled",
              "authorizationSource": "RoleBased", "managedByTenants": [],
              "subscriptionPolicies": {"locationPlacementId": "Public_2014-09-01",
                                       "quotaId": "EnterpriseAgreement_2014-09-01",
                                       "spendingLimit": "Off"}}
             for s in world.subscriptions]
    return page(request, items)


def _resource_groups(request: Request) -> Reply:
    sub = find_subscription(request)
    ns = request.sandbox.namespace
    items = [{"id": f"/subscriptions/{sub.id}/resourceGroups/{g.name}", "name": g.name,
              "type": f"{ns}.Resources/resourceGroups", "location": g.location,
              "tags": {"purpose": g.purpose},
              "properties": {"provisioningState": "Succeeded"}}
             for g in sub.resource_groups]
    return page(request, items)


def register(router: Router, sandbox: Sandbox) -> None:
    """Add the three list routes and the management group (hierarchy) route."""
    router.add("GET", "/providers/{ns}.Management/managementGroups", _management_groups,
               family="arm", api_versions=MG_API_VERSIONS, name="management_groups")
    router.add("GET", "/providers/{ns}.Management/managementGroups/{groupId}",
               _management_group, family="arm", api_versions=MG_API_VERSIONS,
               name="management_group")
    router.add("GET", "/subscriptions", _subscriptions, family="arm",
               api_versions=SUBSCRIPTION_API_VERSIONS, name="subscriptions")
    router.add("GET", "/subscriptions/{subscriptionId}/resourcegroups", _resource_groups,
               family="arm", api_versions=GROUP_API_VERSIONS, name="resource_groups")
