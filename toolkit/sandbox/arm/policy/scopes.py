"""Resolve the scope a policy-states request names: the records and policies it covers.

The service answers at a management group, a subscription, a resource group, a resource, a
policy assignment (subscription or resource-group level), a policy definition and a policy set
definition (both at subscription level); each scope is the union of the resource groups below it,
an assignment or a definition narrowing it to its policies, a resource to its own records. An
unknown scope answers 404 with its own code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import numpy as np

from toolkit.sandbox.arm.common import find_group, find_subscription
from toolkit.sandbox.arm.policy.world import (
    PolicyWorld,
)
from toolkit.sandbox.http import Request, SandboxHTTPError


@dataclass
class Scope:
    """What a scope covers: the groups below it, and the policies and resource it narrows to."""

    path: str  # the scope as it appears in the request path
    groups: list[tuple[str, str]]
    policies: np.ndarray | None = None  # policy indices, None: all
    resource: int | None = None
    kind: str = "resourceGroup"

    @property
    def key(self) -> str:
        """Name the scope in the caches of results (its path and resource)."""
        return f"{self.path.lower()}|{self.resource}"


def policy_world(request: Request) -> PolicyWorld:
    """Give the policy section of the request's sandbox world.

    Returns
    -------
    PolicyWorld
        The policies, resources and records the answers come from.
    """
    return request.sandbox.world.section("policy")


def subscription_groups(request: Request, sub_id: str) -> list[tuple[str, str]]:
    """List the resource groups of a subscription.

    Returns
    -------
    list of (str, str)
        ``(subscription id, group name)`` pairs; none for an unknown subscription.
    """
    sub = request.sandbox.world.subscription(sub_id)
    return [(sub.id, g.name) for g in sub.resource_groups] if sub else []


def policies_where(pw: PolicyWorld, test: Any) -> np.ndarray:
    """Select the policies ``test`` accepts.

    Returns
    -------
    numpy.ndarray
        Their indices (int32).
    """
    return np.array([p.index for p in pw.policies if test(p)], dtype=np.int32)


def management_group_scope(request: Request) -> Scope:
    """Resolve a management group: every resource group of the subscriptions below it.

    Raises
    ------
    SandboxHTTPError
        404 ``ManagementGroupNotFound``.
    """
    world = request.sandbox.world
    name = request.path_params["managementGroupId"]
    try:
        mg = world.management_group(name)
    except KeyError:
        raise SandboxHTTPError(404, "ManagementGroupNotFound",
                               f"The management group '{name}' could not be found.") from None
    groups = [(s.id, g.name) for s in world.subscriptions if mg.name in world.ancestors(s.name)
              for g in s.resource_groups]
    return Scope(f"/providers/{request.sandbox.namespace}.Management/managementGroups/"
                  f"{mg.name}", groups, kind="managementGroup")


def subscription_scope(request: Request) -> Scope:
    """Resolve a subscription: every resource group in it."""
    sub = find_subscription(request)
    return Scope(f"/subscriptions/{sub.id}", subscription_groups(request, sub.id),
                  kind="subscription")


def group_scope(request: Request) -> Scope:
    """Resolve a resource group."""
    sub, group = find_group(request)
    return Scope(f"/subscriptions/{sub.id}/resourceGroups/{group.name}", [(sub.id, group.name)])


def resource_scope(request: Request) -> Scope:
    """Resolve a resource id: its group's records of that resource only.

    Raises
    ------
    SandboxHTTPError
        404 ``ResourceNotFound`` (or the subscription's or group's own code).
    """
    sub, group = find_group(request)
    pw = policy_world(request)
    tail = unquote(request.path_params["resourcePath"])
    rid = (f"/subscriptions/{sub.id}/resourceGroups/{group.name}/providers/"
           f"{request.path_params['resourceProvider']}/{tail}")
    found = resource_by_id(pw).get(rid.lower())
    if found is None:
        raise SandboxHTTPError(404, "ResourceNotFound",
                               f"The resource '{rid}' could not be found.")
    return Scope(rid, [(sub.id, group.name)], resource=found, kind="resource")


def resource_by_id(pw: PolicyWorld) -> dict[str, int]:
    """Index the world's resources by lower-case resource id (built once per world).

    Returns
    -------
    dict
        Resource id to resource index.
    """
    index = getattr(pw, "_by_id", None)
    if index is None:
        index = {r.fields["resourceId"].lower(): r.index for r in pw.resources}
        pw._by_id = index  # type: ignore[attr-defined]
    return index


def assignment_scope(kind: str) -> Any:
    """Make the resolver of an assignment scope at ``kind`` level (``subscription`` or not).

    Returns
    -------
    callable
        Request to :class:`Scope`: the assignment's policies in the groups below its scope;
        404 ``PolicyAssignmentNotFound`` for an assignment not made at that scope.
    """
    def resolve(request: Request) -> Scope:
        if kind == "subscription":
            sub = find_subscription(request)
            scope, groups = f"/subscriptions/{sub.id}", subscription_groups(request, sub.id)
        else:
            sub, group = find_group(request)
            scope, groups = f"/subscriptions/{sub.id}/resourceGroups/{group.name}", \
                [(sub.id, group.name)]
        name = request.path_params["policyAssignmentName"]
        pw = policy_world(request)
        chosen = policies_where(pw, lambda p: p.assignment.name.lower() == name.lower() and
                                 p.fields["policyAssignmentScope"].lower() == scope.lower())
        if not len(chosen):
            raise SandboxHTTPError(404, "PolicyAssignmentNotFound",
                                   f"The policy assignment '{name}' is not found at scope "
                                   f"'{scope}'.")
        path = f"{scope}/providers/{request.sandbox.namespace}.Authorization/policyAssignments/" \
               f"{pw.policies[chosen[0]].assignment.name}"
        return Scope(path, groups, chosen, kind="policyAssignment")

    return resolve


def definition_scope(field_name: str, segment: str, code: str) -> Any:
    """Make the resolver of a policy (set) definition scope at subscription level.

    Parameters
    ----------
    field_name : str
        The record field naming the definition (``policyDefinitionName`` or
        ``policySetDefinitionName``).
    segment : str
        The path segment (``policyDefinitions`` or ``policySetDefinitions``).
    code : str
        The error code of an unknown definition.

    Returns
    -------
    callable
        Request to :class:`Scope`: the definition's policies in the subscription.
    """
    def resolve(request: Request) -> Scope:
        sub = find_subscription(request)
        name = request.path_params["definitionName"]
        pw = policy_world(request)
        chosen = policies_where(pw, lambda p: (p.fields[field_name] or "").lower() ==
                                 name.lower())
        if not len(chosen):
            raise SandboxHTTPError(404, code, f"The {segment[:-1]} '{name}' could not be found.")
        path = (f"/subscriptions/{sub.id}/providers/{request.sandbox.namespace}.Authorization/"
                f"{segment}/{pw.policies[chosen[0]].fields[field_name]}")
        return Scope(path, subscription_groups(request, sub.id), chosen, kind=segment[:-1])

    return resolve
