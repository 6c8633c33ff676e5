"""Authentication strength policies and the conditional-access policies using them (spec 3 §4.1).

Serves ``GET /beta/policies/authenticationStrengthPolicies`` (the tenant's strength policies,
paged with ``@odata.nextLink``) and ``GET /beta/policies/authenticationStrengthPolicies/{id}/usage``
(``{"mfa": [...], "none": [...]}``), under ``/v1.0`` too. A conditional-access policy lands in
``mfa`` when its grant cannot be satisfied without the strength (operator ``AND``, or the strength
alone), in ``none`` when another control can satisfy it (operator ``OR``).

Callers need one of the policy-read permissions in their token (403 otherwise); an unknown
strength id is a 404; both in the identity error body (``innerError`` with date and request id).
The tenant is throttled at about one request a second (bursts tolerated) and, like the real
conditional-access resources, the 429 carries no ``Retry-After``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from toolkit._spec.graph import API_VERSIONS
from toolkit.sandbox.buckets import Buckets
from toolkit.sandbox.http import Handler, Reply, Request, Router, SandboxHTTPError, SandboxView

if TYPE_CHECKING:
    from toolkit.sandbox.server import Sandbox
    from toolkit.sandbox.world import World

__all__ = ["READ_PERMISSIONS", "Tenant", "build_world", "catalog_rows", "limits", "register"]

#: Permissions that allow reading strength policies and their usage (least privileged first).
READ_PERMISSIONS = ("Policy.Read.AuthenticationMethod", "Policy.Read.All",
                    "Policy.ReadWrite.AuthenticationMethod", "Policy.ReadWrite.ConditionalAccess")
VERSIONS = API_VERSIONS
PAGE_SIZE = 5
#: Sustained requests a second per tenant, and the burst tolerated.
RATE, BURST = 1.0, 60

_MFA_ONLY = ["windowsHelloForBusiness", "fido2", "x509CertificateMultiFactor",
             "deviceBasedPush"]
_PASSWORDLESS = [*_MFA_ONLY, "microsoftAuthenticatorPush"]
_ALL_MFA = [*_PASSWORDLESS, "temporaryAccessPassOneTime", "temporaryAccessPassMultiUse",
            "password,microsoftAuthenticatorPush", "password,softwareOath",
            "password,hardwareOath", "password,sms", "password,voice",
            "federatedMultiFactor", "federatedSingleFactor,microsoftAuthenticatorPush",
            "federatedSingleFactor,softwareOath", "federatedSingleFactor,hardwareOath",
            "federatedSingleFactor,sms", "federatedSingleFactor,voice"]

# (id or None for a generated one, name, description, type, combinations)
_STRENGTHS: tuple[tuple[str | None, str, str, str, list[str]], ...] = (
    ("00000000-0000-0000-0000-000000000002", "Multifactor authentication",
     "Combinations of methods that satisfy strong authentication, such as a password + SMS",
     "builtIn", _ALL_MFA),
    ("00000000-0000-0000-0000-000000000003", "Passwordless MFA",
     "Passwordless methods that satisfy strong authentication, such as Passwordless sign-in "
     "with the Authenticator", "builtIn", _PASSWORDLESS),
    ("00000000-0000-0000-0000-000000000004", "Phishing-resistant MFA",
     "Phishing-resistant, Passwordless methods for the strongest authentication, such as a "
     "FIDO2 security key", "builtIn", _MFA_ONLY),
    (None, "Contractors - Authenticator or FIDO2",
     "External contractors: app push or a security key", "custom",
     ["fido2", "microsoftAuthenticatorPush", "password,microsoftAuthenticatorPush"]),
    (None, "Break-glass - Temporary Access Pass",
     "Recovery accounts: one-time Temporary Access Pass only", "custom",
     ["temporaryAccessPassOneTime"]),
    (None, "Shop floor - hardware tokens", "Kiosk workers without phones", "custom",
     ["password,hardwareOath", "x509CertificateMultiFactor"]),
    (None, "Legacy VPN - SMS or voice", "Kept for the old VPN concentrator; unused since the "
     "migration", "custom", ["password,sms", "password,voice"]),
)

# conditional-access policies: (name, strength index, operator, other built-in controls)
_POLICIES: tuple[tuple[str, int, str, tuple[str, ...]], ...] = (
    ("Require MFA for all users", 0, "AND", ()),
    ("Require MFA for guests", 0, "AND", ()),
    ("Require MFA for Azure management", 0, "AND", ()),
    ("Require MFA or compliant device for Office", 0, "OR", ("compliantDevice",)),
    ("Require MFA and password change for risky users", 0, "AND", ("passwordChange",)),
    ("Require MFA for risky sign-ins", 0, "AND", ()),
    ("Require MFA from untrusted locations", 0, "AND", ()),
    ("MFA or hybrid-joined device for HR app", 0, "OR", ("domainJoinedDevice",)),
    ("Require MFA to register security info", 0, "AND", ()),
    ("Require MFA for device join", 0, "AND", ()),
    ("Passwordless for finance apps", 1, "AND", ()),
    ("Passwordless or compliant device for mail", 1, "OR", ("compliantDevice",)),
    ("Passwordless for developers", 1, "AND", ()),
    ("Passwordless pilot group", 1, "AND", ()),
    ("Passwordless or approved app on mobile", 1, "OR", ("approvedApplication",)),
    ("Phishing-resistant MFA for admins", 2, "AND", ()),
    ("Phishing-resistant MFA for privileged role activation", 2, "AND", ()),
    ("Phishing-resistant MFA for payroll", 2, "AND", ()),
    ("Phishing-resistant MFA for break-glass review", 2, "AND", ()),
    ("Phishing-resistant or compliant device for SAP", 2, "OR", ("compliantDevice",)),
    ("Phishing-resistant MFA for Tier 0 servers", 2, "AND", ()),
    ("Phishing-resistant MFA for security operations", 2, "AND", ()),
    ("Contractors: strong sign-in", 3, "AND", ()),
    ("Contractors: strong sign-in or compliant device", 3, "OR", ("compliantDevice",)),
    ("Contractors: partner portal", 3, "AND", ()),
    ("Contractors: code repositories", 3, "AND", ()),
    ("Break-glass accounts: TAP only", 4, "AND", ()),
    ("Break-glass accounts: TAP or compliant device", 4, "OR", ("compliantDevice",)),
    ("Shop floor kiosks: hardware token", 5, "AND", ()),
    ("Shop floor kiosks: token or compliant app", 5, "OR", ("compliantApplication",)),
    ("Shop floor supervisors", 5, "AND", ()),
    ("Warehouse scanners: token or domain-joined", 5, "OR", ("domainJoinedDevice",)),
    ("Require MFA for Graph PowerShell", 0, "AND", ()),
    ("Require MFA for external collaboration", 0, "OR", ("compliantApplication",)),
)

#: The names the documentation shows in ``controls`` for the non-strength grant controls.
_CONTROL_NAMES = {
    "compliantDevice": "RequireCompliantDevice",
    "domainJoinedDevice": "RequireDomainJoinedDevice",
    "approvedApplication": "RequireApprovedClientApp",
    "compliantApplication": "RequireAppProtectionPolicy",
    "passwordChange": "MfaAndChangePassword",
}


@dataclass
class Strength:
    """An authentication strength policy."""

    id: str
    display_name: str
    description: str
    policy_type: str
    combinations: list[str]
    created: str
    modified: str

    def body(self) -> dict[str, Any]:
        return {"id": self.id, "createdDateTime": self.created,
                "modifiedDateTime": self.modified, "displayName": self.display_name,
                "description": self.description, "policyType": self.policy_type,
                "requirementsSatisfied": "mfa", "allowedCombinations": self.combinations}


@dataclass
class CAPolicy:
    """A conditional-access policy granting access through a strength."""

    id: str
    display_name: str
    state: str
    strength_id: str
    operator: str
    controls: tuple[str, ...]
    created: str
    modified: str

    @property
    def requirement(self) -> str:
        """``mfa`` when the strength cannot be bypassed by another control."""
        return "none" if self.operator == "OR" and self.controls else "mfa"

    def body(self, strength: Strength) -> dict[str, Any]:
        names = [_CONTROL_NAMES[c] for c in self.controls]
        return {
            "id": self.id, "templateId": None, "displayName": self.display_name,
            "createdDateTime": self.created, "modifiedDateTime": self.modified,
            "state": self.state,
            "conditions": {"clientAppTypes": ["all"],
                           "applications": {"includeApplications": ["All"]},
                           "users": {"includeUsers": ["All"], "excludeGroups": []}},
            "grantControls": {
                "operator": self.operator,
                "builtInControls": list(self.controls),
                "customAuthenticationFactors": [],
                "termsOfUse": [],
                "authenticationStrength": {"id": strength.id,
                                           "displayName": strength.display_name,
                                           "policyType": strength.policy_type,
                                           "requirementsSatisfied": "mfa"},
                "controls": names,
            },
            "sessionControls": None,
        }


@dataclass
class Tenant:
    """The identity section of the world."""

    tenant_id: str
    strengths: list[Strength] = field(default_factory=list)
    policies: list[CAPolicy] = field(default_factory=list)

    def strength(self, strength_id: str) -> Strength | None:
        """Find the strength policy of that id (case-insensitive)."""
        low = strength_id.lower()
        return next((s for s in self.strengths if s.id.lower() == low), None)

    def users_of(self, strength_id: str) -> list[CAPolicy]:
        """List the conditional-access policies that use a strength policy."""
        low = strength_id.lower()
        return [p for p in self.policies if p.strength_id.lower() == low]


def _stamp(world: World, days_ago: float) -> str:
    when = world.epoch - timedelta(days=days_ago)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def build_world(world: World) -> Tenant:
    """Build the tenant's strength policies and conditional-access policies."""
    rng = world.rng("identity")
    tenant = Tenant(world.tenant_id)
    for sid, name, desc, kind, combos in _STRENGTHS:
        created = rng.uniform(200, 900)
        tenant.strengths.append(Strength(
            sid or str(uuid.UUID(int=rng.getrandbits(128), version=4)), name, desc, kind,
            list(combos), _stamp(world, created if kind == "custom" else 1200),
            _stamp(world, rng.uniform(5, min(created, 180)))))
    for name, index, operator, controls in _POLICIES:
        created = rng.uniform(30, 700)
        draw = rng.random()
        state = ("enabledForReportingButNotEnforced" if draw < 0.15 else
                 "disabled" if draw < 0.22 else "enabled")
        tenant.policies.append(CAPolicy(
            str(uuid.UUID(int=rng.getrandbits(128), version=4)), name, state,
            tenant.strengths[index].id, operator, controls, _stamp(world, created),
            _stamp(world, rng.uniform(1, created))))
    return tenant


def catalog_rows(tenant: Tenant) -> list[dict[str, Any]]:
    """One catalog row per strength policy (its id in ``name``)."""
    rows = []
    for s in tenant.strengths:
        users = tenant.users_of(s.id)
        mfa = sum(p.requirement == "mfa" for p in users)
        rows.append({"kind": "authentication_strength_policy", "name": s.id,
                     "detail": f"{s.display_name} ({s.policy_type}): {len(users)} "
                               f"conditional-access policies, {mfa} requiring MFA"})
    return rows


def limits(sandbox: SandboxView) -> Buckets:
    """Return the tenant throttle of the identity routes (``configure``/``refill`` it in tests)."""
    with sandbox.state_lock:
        buckets = sandbox.state.get("graph_limits")
        if buckets is None:
            buckets = sandbox.state["graph_limits"] = Buckets(RATE, BURST)
        return buckets


def _guarded(handler: Handler) -> Handler:
    """Throttle per tenant (429 without Retry-After) and check the read permission."""
    def serve(request: Request) -> Reply:
        sandbox = request.sandbox
        tenant: Tenant = sandbox.world.section("identity")
        claims = request.claims
        if limits(sandbox).take(str(claims.get("tid") or tenant.tenant_id)) is not None:
            raise SandboxHTTPError(429, "TooManyRequests",
                                   "Too many requests to conditional access resources for this "
                                   "tenant. Please try again later.")
        roles = set(claims.get("roles") or ())
        if not roles & set(READ_PERMISSIONS):
            raise SandboxHTTPError(403, "AccessDenied",
                                   "Either the signed-in user does not have sufficient "
                                   "privileges, or you need to consent to one of the "
                                   "permissions on this API: " + ", ".join(READ_PERMISSIONS)
                                   + ".")
        return handler(request)
    return serve


def _version(request: Request) -> str:
    return request.path.strip("/").split("/", 1)[0]


def _list(request: Request) -> Reply:
    tenant: Tenant = request.sandbox.world.section("identity")
    version = _version(request)
    token = request.param("$skiptoken") or "0"
    if not token.isdigit():
        raise SandboxHTTPError(400, "BadRequest", f"Invalid $skiptoken '{token}'.")
    start = int(token)
    top = request.param("$top")
    size = int(top) if top and top.isdigit() and 0 < int(top) <= PAGE_SIZE else PAGE_SIZE
    page = tenant.strengths[start:start + size]
    base = request.base_url
    body: dict[str, Any] = {
        "@odata.context": f"{base}/{version}/$metadata#policies/authenticationStrengthPolicies",
        "value": [s.body() for s in page],
    }
    if start + size < len(tenant.strengths):
        body["@odata.nextLink"] = (f"{base}/{version}/policies/authenticationStrengthPolicies"
                                   f"?$skiptoken={start + size}")
    return Reply(200, body)


def _usage(request: Request) -> Reply:
    tenant: Tenant = request.sandbox.world.section("identity")
    sid = request.path_params["authenticationStrengthPolicyId"]
    strength = tenant.strength(sid)
    if strength is None:
        raise SandboxHTTPError(404, "NotFound",
                               f"The authentication strength policy with id '{sid}' was not "
                               "found.")
    body: dict[str, Any] = {
        "@odata.context": f"{request.base_url}/{_version(request)}/$metadata#"
                          f"{request.sandbox.words.graph_namespace}.authenticationStrengthUsage",
        "mfa": [], "none": [],
    }
    for policy in tenant.users_of(strength.id):
        body[policy.requirement].append(policy.body(strength))
    return Reply(200, body)


def register(router: Router, sandbox: Sandbox) -> None:
    """Add the strength policy routes (beta and v1.0)."""
    for version in VERSIONS:
        router.add("GET", f"/{version}/policies/authenticationStrengthPolicies",
                   _guarded(_list), family="graph", api_versions=None,
                   name="authentication_strength_policies")
        # a function may be called with or without its parentheses (the vendor's client
        # sends ``usage()``)
        for call in ("usage", "usage()"):
            router.add("GET", f"/{version}/policies/authenticationStrengthPolicies/"
                       "{authenticationStrengthPolicyId}/" + call, _guarded(_usage),
                       family="graph", api_versions=None, name="authentication_strength_usage")
