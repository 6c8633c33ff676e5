"""The policy insights routes of the sandbox over its policy world (spec 1 §2.8, §4.6).

``POST {scope}/providers/Vendor.PolicyInsights/policyStates/{latest|default}/queryResults``
(:mod:`~toolkit.sandbox.arm.policy.query`) and ``.../policyStates/latest/summarize``
(:mod:`~toolkit.sandbox.arm.policy.summarize`) at every scope the service answers for
(:mod:`~toolkit.sandbox.arm.policy.scopes`): a management group, a subscription, a resource
group, a resource, a policy assignment at subscription or resource-group level, a policy
definition and a policy set definition (both at subscription level). The window and paging
options are :mod:`~toolkit.sandbox.arm.policy.options`'s, the evaluation and its cache
:mod:`~toolkit.sandbox.arm.policy.results`'s, the records' JSON
:mod:`~toolkit.sandbox.arm.policy.records`'s.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from toolkit._spec.arm import POLICY_API_VERSIONS
from toolkit.sandbox.arm.policy.options import WINDOW_DAYS
from toolkit.sandbox.arm.policy.query import PAGE_SIZE, serve_query
from toolkit.sandbox.arm.policy.scopes import (
    assignment_scope,
    definition_scope,
    group_scope,
    management_group_scope,
    resource_scope,
    subscription_scope,
)
from toolkit.sandbox.arm.policy.summarize import summarize
from toolkit.sandbox.http import Reply, Request, Route, Router

if TYPE_CHECKING:
    from toolkit.sandbox.server import Sandbox

__all__ = ["API_VERSIONS", "PAGE_SIZE", "WINDOW_DAYS", "register"]

API_VERSIONS = POLICY_API_VERSIONS
_INSIGHTS = "/providers/{ns}.PolicyInsights/policyStates/{policyStatesResource}"
_AUTH = "/providers/{ns}.Authorization"
#: (scope pattern, how a request names its scope, route name suffix)
_SCOPES: tuple[tuple[str, Any, str], ...] = (
    ("/providers/{ns}.Management/managementGroups/{managementGroupId}", management_group_scope,
     "management_group"),
    ("/subscriptions/{subscriptionId}", subscription_scope, "subscription"),
    ("/subscriptions/{subscriptionId}/resourceGroups/{resourceGroupName}", group_scope, ""),
    (f"/subscriptions/{{subscriptionId}}{_AUTH}/policyAssignments/{{policyAssignmentName}}",
     assignment_scope("subscription"), "subscription_assignment"),
    (f"/subscriptions/{{subscriptionId}}/resourceGroups/{{resourceGroupName}}{_AUTH}/"
     "policyAssignments/{policyAssignmentName}", assignment_scope("resourceGroup"),
     "resource_group_assignment"),
    (f"/subscriptions/{{subscriptionId}}{_AUTH}/policyDefinitions/{{definitionName}}",
     definition_scope("policyDefinitionName", "policyDefinitions",
                       "PolicyDefinitionNotFound"), "definition"),
    (f"/subscriptions/{{subscriptionId}}{_AUTH}/policySetDefinitions/{{definitionName}}",
     definition_scope("policySetDefinitionName", "policySetDefinitions",
                       "PolicySetDefinitionNotFound"), "set_definition"),
)


_RESOURCE_SCOPE = (r"/subscriptions/(?P<subscriptionId>[^/]*)/resourceGroups/"
                   r"(?P<resourceGroupName>[^/]*)/providers/(?P<resourceProvider>[^/]+)/"
                   r"(?P<resourcePath>[^?#]+?)")


def _handler(resolve: Any, serve: Any) -> Any:
    def handle(request: Request) -> Reply:
        return serve(request, resolve(request))

    return handle


def register(router: Router, sandbox: Sandbox) -> None:
    """Add the policy states query and summarize routes at every scope."""
    for action, serve in (("queryResults", serve_query), ("summarize", summarize)):
        for pattern, resolve, suffix in _SCOPES:
            name = "policy_states" if action == "queryResults" else "policy_summary"
            router.add("POST", f"{pattern}{_INSIGHTS}/{action}", _handler(resolve, serve),
                       family="arm", api_versions=API_VERSIONS,
                       name=f"{name}_{suffix}" if suffix else name)
        # a resource id has any number of segments: a pattern of its own, tried last
        route = Route("POST", "/subscriptions/{subscriptionId}/resourceGroups/"
                      "{resourceGroupName}/providers/{resourceProvider}/{resourcePath}"
                      f"{_INSIGHTS.replace('{ns}', router.namespace)}/{action}",
                      _handler(resource_scope, serve), "arm", API_VERSIONS,
                      f"{'policy_states' if action == 'queryResults' else 'policy_summary'}"
                      "_resource")
        ns = re.escape(router.namespace)
        route.regex = re.compile(
            f"^{_RESOURCE_SCOPE}/providers/{ns}\\.PolicyInsights/policyStates/"
            f"(?P<policyStatesResource>[^/]*)/{action}$", re.IGNORECASE)
        router.routes.append(route)
