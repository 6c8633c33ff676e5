"""The sandbox's identity service: the tenant's strength and conditional-access policies built
from the seed, the strength list paged with next links, usage split by whether the strength can
be bypassed, the permission check, the tenant throttle and the identity error body."""

from __future__ import annotations

from typing import Any

import pytest
import requests

import toolkit
from toolkit.sandbox.graph import identity
from toolkit.sandbox.server import Sandbox
from toolkit.sandbox.world import World

MFA = "00000000-0000-0000-0000-000000000002"
LIST = "/beta/policies/authenticationStrengthPolicies"


@pytest.fixture(autouse=True)
def _fresh_tenant_quota(sandbox: Sandbox) -> None:
    identity.limits(sandbox).refill()


def _get(sb: Sandbox, path: str, *, roles: Any = None,
         headers: dict[str, str] | None = None) -> requests.Response:
    token = sb.token("graph") if roles is None else sb.token("graph", roles=roles)
    url = path if path.startswith("http") else sb.url + path
    return requests.get(url, headers={"Authorization": f"Bearer {token}", **(headers or {})},
                        timeout=10)


# ---------------------------------------------------------------------- the world
def test_same_seed_same_tenant_other_seed_other_custom_ids() -> None:
    a, b = identity.build_world(World(7)), identity.build_world(World(7))
    other = identity.build_world(World(8))
    assert a == b
    assert [s.id for s in a.strengths if s.policy_type == "builtIn"] == \
        [s.id for s in other.strengths if s.policy_type == "builtIn"]  # fixed by the service
    custom = {s.id for s in a.strengths if s.policy_type == "custom"}
    assert custom and custom.isdisjoint(s.id for s in other.strengths)
    assert [p.display_name for p in a.policies] == [p.display_name for p in other.policies]


def test_every_policy_uses_a_strength_of_the_tenant_and_dates_are_ordered() -> None:
    tenant = identity.build_world(World(7))
    ids = {s.id for s in tenant.strengths}
    assert len(ids) == len(tenant.strengths)
    assert all(p.strength_id in ids for p in tenant.policies)
    for thing in [*tenant.strengths, *tenant.policies]:
        assert thing.created <= thing.modified
    assert {p.state for p in tenant.policies} <= {"enabled", "disabled",
                                                  "enabledForReportingButNotEnforced"}
    assert tenant.strength(MFA.upper()) is tenant.strength(MFA)  # ids match in any case
    assert tenant.strength("11111111-2222-3333-4444-555555555555") is None


def test_requirement_is_mfa_unless_another_control_can_stand_in() -> None:
    tenant = identity.build_world(World(7))
    for p in tenant.policies:
        bypass = p.operator == "OR" and bool(p.controls)
        assert p.requirement == ("none" if bypass else "mfa"), p.display_name
    assert {p.requirement for p in tenant.policies} == {"mfa", "none"}


def test_catalog_rows_count_the_users_of_each_strength() -> None:
    tenant = identity.build_world(World(7))
    rows = identity.catalog_rows(tenant)
    assert [r["name"] for r in rows] == [s.id for s in tenant.strengths]
    assert {r["kind"] for r in rows} == {"authentication_strength_policy"}
    for row, s in zip(rows, tenant.strengths, strict=True):
        users = tenant.users_of(s.id)
        mfa = sum(p.requirement == "mfa" for p in users)
        assert f"{len(users)} conditional-access policies, {mfa} requiring MFA" in row["detail"]
    assert sum(len(tenant.users_of(s.id)) for s in tenant.strengths) == len(tenant.policies)


# ---------------------------------------------------------------------- the list
@pytest.mark.parametrize("version", ["beta", "v1.0"])
def test_the_list_pages_through_every_strength_once(sandbox: Sandbox, version: str) -> None:
    tenant = sandbox.world.section("identity")
    url, seen, pages = f"/{version}/policies/authenticationStrengthPolicies", [], 0
    while url:
        r = _get(sandbox, url)
        assert r.status_code == 200
        body = r.json()
        assert len(body["value"]) <= identity.PAGE_SIZE
        assert body["@odata.context"].endswith(
            f"/{version}/$metadata#policies/authenticationStrengthPolicies")
        seen += [s["id"] for s in body["value"]]
        url, pages = body.get("@odata.nextLink"), pages + 1
        assert url is None or url.startswith(f"{sandbox.url}/{version}/")
    assert seen == [s.id for s in tenant.strengths]
    assert pages == -(-len(tenant.strengths) // identity.PAGE_SIZE)


def test_top_sets_the_page_size_and_a_bad_skip_token_is_refused(sandbox: Sandbox) -> None:
    r = _get(sandbox, LIST + "?$top=2")
    assert len(r.json()["value"]) == 2 and r.json()["@odata.nextLink"].endswith("$skiptoken=2")
    big = _get(sandbox, LIST + f"?$top={identity.PAGE_SIZE + 10}")
    assert len(big.json()["value"]) == identity.PAGE_SIZE  # no more than a page
    bad = _get(sandbox, LIST + "?$skiptoken=abc")
    assert bad.status_code == 400
    err = bad.json()["error"]
    assert err["code"] == "BadRequest" and "abc" in err["message"]
    assert err["innerError"]["request-id"] == bad.headers["x-vendor-request-id"]
    past = _get(sandbox, LIST + "?$skiptoken=999")
    assert past.status_code == 200 and past.json()["value"] == []
    assert "@odata.nextLink" not in past.json()


# ---------------------------------------------------------------------- usage
@pytest.mark.parametrize("version", ["beta", "v1.0"])
def test_usage_splits_the_users_of_a_strength(sandbox: Sandbox, version: str) -> None:
    tenant = sandbox.world.section("identity")
    for strength in tenant.strengths:
        r = _get(sandbox, f"/{version}/policies/authenticationStrengthPolicies/"
                          f"{strength.id}/usage")
        assert r.status_code == 200
        body = r.json()
        users = tenant.users_of(strength.id)
        assert len(body["mfa"]) + len(body["none"]) == len(users)
        for requirement in ("mfa", "none"):
            for policy in body[requirement]:
                grant = policy["grantControls"]
                assert grant["authenticationStrength"]["id"] == strength.id
                bypass = grant["operator"] == "OR" and bool(grant["builtInControls"])
                assert requirement == ("none" if bypass else "mfa")
                assert len(grant["controls"]) == len(grant["builtInControls"])


@pytest.mark.parametrize("cloud", ["neutral", "public"])
def test_usage_is_served_with_and_without_parentheses(cloud: str) -> None:
    with Sandbox(cloud=cloud) as sb:
        policy = sb.catalog().query("kind == 'authentication_strength_policy'")["name"].iloc[0]
        base = f"/beta/policies/authenticationStrengthPolicies/{policy}/usage"
        plain, call = (_get(sb, base + s) for s in ("", "()"))
        assert plain.status_code == call.status_code == 200
        assert plain.json() == call.json()
        assert plain.json()["@odata.context"].endswith(
            f"{sb.words.graph_namespace}.authenticationStrengthUsage")


def test_unknown_strength_is_a_404_in_the_identity_body(sandbox: Sandbox) -> None:
    unknown = "11111111-2222-3333-4444-555555555555"
    r = _get(sandbox, f"{LIST}/{unknown}/usage",
             headers={"client-request-id": "my-own-id"})
    assert r.status_code == 404
    err = r.json()["error"]
    assert err["code"] == "NotFound" and unknown in err["message"]
    inner = err["innerError"]
    assert inner["request-id"] == r.headers["x-vendor-request-id"]
    assert inner["client-request-id"] == "my-own-id"
    assert inner["date"][:4].isdigit() and inner["date"][4] == "-"


@pytest.mark.parametrize("roles, status", [
    (["Reader"], 403),
    ([], 403),
    (["Policy.ReadWrite.ConditionalAccess"], 200),
])
def test_a_read_permission_is_needed(sandbox: Sandbox, roles: list, status: int) -> None:
    for path in (LIST, f"{LIST}/{MFA}/usage"):
        r = _get(sandbox, path, roles=roles)
        assert r.status_code == status, path
        if status == 403:
            err = r.json()["error"]
            assert err["code"] == "AccessDenied"
            assert all(p in err["message"] for p in identity.READ_PERMISSIONS)


def test_least_privileged_permission_is_enough(sandbox: Sandbox) -> None:
    conn = toolkit.connect(sandbox=sandbox, progress=False, credential=sandbox.credential(
        roles=["Policy.Read.AuthenticationMethod"]))
    try:
        df = toolkit.authentication_strength_usage(MFA, connection=conn)
    finally:
        conn.close()
    assert len(df) > 0


def test_the_tenant_throttle_answers_429_without_retry_after(sandbox: Sandbox) -> None:
    quota = identity.limits(sandbox)
    quota.configure(rate=0.0001, burst=2)
    try:
        codes = [_get(sandbox, f"{LIST}/{MFA}/usage") for _ in range(3)]
    finally:
        quota.configure(rate=identity.RATE, burst=identity.BURST)
    assert [r.status_code for r in codes] == [200, 200, 429]
    assert "Retry-After" not in codes[-1].headers
    assert codes[-1].json()["error"]["code"] == "TooManyRequests"
    assert _get(sandbox, LIST).status_code == 200  # the new limits refilled the tenant


def test_the_throttle_is_counted_before_the_permission(sandbox: Sandbox) -> None:
    """A caller without the permission still spends the tenant's requests (the throttle is in
    front of the service)."""
    quota = identity.limits(sandbox)
    quota.configure(rate=0.0001, burst=1)
    try:
        first = _get(sandbox, LIST, roles=["Reader"])
        second = _get(sandbox, LIST)
    finally:
        quota.configure(rate=identity.RATE, burst=identity.BURST)
    assert (first.status_code, second.status_code) == (403, 429)
