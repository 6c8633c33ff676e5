"""The policy insights routes: queryResults and summarize at every scope, named per scope, and the
resource scope (any number of segments) tried last."""

from __future__ import annotations

from toolkit.sandbox.arm.policy.handlers import API_VERSIONS, register
from toolkit.sandbox.http import Router

SUFFIXES = ("management_group", "subscription", "", "subscription_assignment",
            "resource_group_assignment", "definition", "set_definition", "resource")


def _routes() -> Router:
    router = Router("Vendor")
    register(router, None)  # type: ignore[arg-type]  # the routes need no sandbox
    return router


def test_both_actions_are_served_at_every_scope() -> None:
    names = [route.name for route in _routes().routes]
    for action in ("policy_states", "policy_summary"):
        assert [n for n in names if n.startswith(action)] == [
            f"{action}_{s}" if s else action for s in SUFFIXES]
    routes = _routes().routes
    assert {r.method for r in routes} == {"POST"} and {r.family for r in routes} == {"arm"}
    assert all(r.api_versions == API_VERSIONS for r in routes)


def test_a_resource_id_of_any_depth_reaches_the_resource_route() -> None:
    router = _routes()
    path = ("/subscriptions/s/resourceGroups/rg/providers/Vendor.Web/sites/a/slots/b/providers/"
            "Vendor.PolicyInsights/policyStates/latest/queryResults")
    route, params, _ = router.match("POST", path)
    assert route is not None and route.name == "policy_states_resource"
    assert params["resourcePath"] == "sites/a/slots/b"
    assert params["policyStatesResource"] == "latest"
    group = ("/subscriptions/s/resourceGroups/rg/providers/Vendor.PolicyInsights/policyStates/"
             "default/summarize")
    route, params, _ = router.match("POST", group)
    assert route is not None and route.name == "policy_summary"
