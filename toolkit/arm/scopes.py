"""ARM scope strings for policy insights.

Which scopes the service answers for, how to read the scope a user copies from the portal (in either
vocabulary: the real provider word or the connection's), and the query options each scope accepts.

The scopes of ``policyStates`` and ``summarize``: a management group, a subscription, a resource
group, a single resource, a policy assignment at subscription or resource-group level, a policy
definition and a policy set definition (both at subscription level). ``$expand`` is answered only
at resource scope.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from toolkit._core.errors import ValidationError
from toolkit._core.odata import split_top_level
from toolkit._core.urls import segment
from toolkit._core.validate import (
    check_choice,
    check_resource_group,
    check_subscription_id,
    many_strings,
    resource_group_problem,
)

__all__ = ["EXPAND_VALUES", "SCOPE_KINDS", "Scope", "check_expand", "parse_scope",
           "resolve_scope"]

#: Kinds of scope, as :attr:`Scope.kind` names them.
SCOPE_KINDS = ("managementGroup", "subscription", "resourceGroup", "resource",
               "policyAssignment", "policyDefinition", "policySetDefinition")
EXPAND_VALUES = ("components", "PolicyEvaluationDetails")

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_SEG = r"[^/?#\s]{1,260}"
_NS = r"(?P<ns>[A-Za-z][A-Za-z0-9]{0,63})"
_SUB = rf"/subscriptions/(?P<sub>{_UUID})"
_RG = rf"{_SUB}/resourceGroups/(?P<rg>{_SEG})"
_PATTERNS = (
    ("managementGroup", rf"/providers/{_NS}\.Management/managementGroups/(?P<name>{_SEG})"),
    ("subscription", _SUB),
    ("policyAssignment", rf"{_SUB}/providers/{_NS}\.Authorization/policyAssignments/"
                         rf"(?P<name>{_SEG})"),
    ("policyDefinition", rf"{_SUB}/providers/{_NS}\.Authorization/policyDefinitions/"
                         rf"(?P<name>{_SEG})"),
    ("policySetDefinition", rf"{_SUB}/providers/{_NS}\.Authorization/policySetDefinitions/"
                            rf"(?P<name>{_SEG})"),
    ("resourceGroup", _RG),
    ("policyAssignment", rf"{_RG}/providers/{_NS}\.Authorization/policyAssignments/"
                         rf"(?P<name>{_SEG})"),
    ("resource", rf"{_RG}/providers/{_NS}\.(?P<provider>[A-Za-z][A-Za-z0-9.]{{0,63}})/"
                 rf"(?P<rest>{_SEG}/{_SEG}(?:/{_SEG}/{_SEG})*)"),
)
_COMPILED = tuple((kind, re.compile(f"^{rx}$", re.IGNORECASE)) for kind, rx in _PATTERNS)
_RULE = ("must be an ARM scope: /providers/<ns>.Management/managementGroups/<name>, "
         "/subscriptions/<uuid>[/resourceGroups/<name>], a resource id, a policy assignment id "
         "(subscription or resource-group level), or a policy (set) definition at subscription "
         "level (/subscriptions/<uuid>/providers/<ns>.Authorization/policyDefinitions/<name>)")


@dataclass(frozen=True)
class Scope:
    """A scope the policy insights service answers for.

    ``template`` is the scope path with ``{ns}`` where the provider word goes, so the same scope
    is sent in the connection's vocabulary whichever one it was written in.
    """

    kind: str
    template: str
    subscription_id: str | None = None
    resource_group: str | None = None

    def path(self, namespace: str) -> str:
        """Write the scope path in the vocabulary of ``namespace``."""
        return self.template.replace("{ns}", namespace)


def parse_scope(value: Any, parameter: str = "scope") -> Scope:
    """Read an ARM scope string (either vocabulary); ValidationError naming the rule otherwise.

    Parameters
    ----------
    value : str
        The scope, e.g. ``/providers/Microsoft.Management/managementGroups/retail``.
    parameter : str
        The parameter named in errors.

    Returns
    -------
    Scope
    """
    if not isinstance(value, str) or not value.strip():
        raise ValidationError(parameter, value, _RULE)
    text = value.strip().rstrip("/")
    for kind, rx in _COMPILED:
        m = rx.match(text)
        if m is None:
            continue
        groups = m.groupdict()
        if groups.get("rg") is not None:
            problem = resource_group_problem(groups["rg"])
            if problem:
                raise ValidationError(parameter, value, f"names a resource group that {problem}")
        template = text
        if groups.get("ns") is not None:  # the provider word, whichever vocabulary
            start, end = m.span("ns")
            template = text[:start] + "{ns}" + text[end:]
        # each name is sent as one path segment, percent-encoded
        template = "/".join(p if not p or "{ns}" in p else segment(p, parameter)
                            for p in template.split("/"))
        return Scope(kind, template, groups.get("sub"), groups.get("rg"))
    raise ValidationError(parameter, value, _RULE)


def resolve_scope(subscription_id: Any, resource_group: Any, scope: Any) -> Scope:
    """Resolve the scope of a policy call: ``scope=``, else the subscription (and resource group).

    Raises
    ------
    ValidationError
        Neither or both given, or a malformed one.
    """
    if scope is not None:
        if subscription_id is not None or resource_group is not None:
            raise ValidationError("scope", scope, "is given instead of subscription_id and "
                                                  "resource_group, not with them")
        return parse_scope(scope)
    if subscription_id is None:
        raise ValidationError("subscription_id", None, "is needed (or scope=)")
    check_subscription_id(subscription_id)
    if resource_group is None:
        return Scope("subscription", f"/subscriptions/{subscription_id}", subscription_id)
    check_resource_group(resource_group)
    return Scope("resourceGroup", f"/subscriptions/{subscription_id}/resourceGroups/"
                                  f"{segment(resource_group, 'resource_group')}",
                 subscription_id, resource_group)



_ITEM = re.compile(r"^(?P<name>\w+)\s*(?:\((?P<inner>.*)\))?$", re.DOTALL)
_EXPAND_RULE = (f"must be one of {', '.join(EXPAND_VALUES)} (or "
                "components($filter=...;$apply=...)), or a list of them")


def check_expand(value: Any, scope: Scope) -> str | None:
    """``$expand`` as sent, checked: known items, and a resource scope.

    Returns
    -------
    str or None
        The items joined with ``,`` (``None`` when not given).
    """
    if value is None:
        return None
    items, _ = many_strings(value, "expand")
    out = []
    for item in items:
        if not item.strip():
            raise ValidationError("expand", item, _EXPAND_RULE)
        try:
            parts = split_top_level(item, ",")
        except ValueError:
            raise ValidationError("expand", item, _EXPAND_RULE) from None
        for part in parts:
            m = _ITEM.match(part)
            if m is None:
                raise ValidationError("expand", part, _EXPAND_RULE)
            name = check_choice(m["name"], "expand", EXPAND_VALUES, case_insensitive=True)
            inner = m["inner"]
            if inner is not None:
                if name != "components":
                    raise ValidationError("expand", part, "only components takes options "
                                                          "(components($filter=...;$apply=...))")
                try:
                    options = [o for o in split_top_level(inner, ";") if o]
                except ValueError:
                    raise ValidationError("expand", part, _EXPAND_RULE) from None
                for option in options:
                    key, eq, expr = option.partition("=")
                    if key.strip().lower() not in ("$filter", "$apply") or not eq or \
                            not expr.strip():
                        raise ValidationError("expand", part, "components(...) takes "
                                                              "$filter=<expr> and $apply=<expr>, "
                                                              "separated by ';'")
                out.append(f"{name}({';'.join(options)})" if options else name)
            else:
                out.append(name)
    if scope.kind != "resource":
        raise ValidationError("expand", value, f"is answered only at resource scope (pass a "
                                               f"resource id as scope=); this scope is a "
                                               f"{scope.kind}")
    return ",".join(dict.fromkeys(out))
