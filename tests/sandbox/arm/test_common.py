"""What every resource-management service of the sandbox shares: the subscription and resource
group checks, the rate-limit header, and long-running operations (202, ``Location`` polled to the
end, the async-operation status, operations that end Failed)."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.sandbox.arm.conftest import arm_caller
from toolkit._spec.arm import RESOURCE_GROUP_MAX
from toolkit.sandbox.arm.common import READ_BUCKET, _resource_group_problem
from toolkit.sandbox.arm.network import backend_health_body
from toolkit.sandbox.server import Sandbox

GROUPS_API = "api-version=2021-04-01"
NETWORK_API = "api-version=2025-05-01"
SQL_API = "api-version=2025-01-01"
UNKNOWN_SUB = "00000000-0000-4000-8000-000000000000"


def _gateway(sandbox):
    return next(iter(sandbox.world.section("network").values()))


def _health_path(sandbox, gw, *, sub=None, rg=None) -> str:
    return (f"/subscriptions/{sub or gw.subscription_id}/resourceGroups/"
            f"{rg or gw.resource_group}/providers/{sandbox.namespace}.Network/"
            f"applicationGateways/{gw.name}/backendhealth?{NETWORK_API}")


def _protector_path(sandbox, server, *, rg=None) -> str:
    return (f"/subscriptions/{server.subscription_id}/resourceGroups/"
            f"{rg or server.resource_group}/providers/{sandbox.namespace}.Sql/servers/"
            f"{server.name}/encryptionProtector/current?{SQL_API}")


def _error(r) -> tuple[int, str, str]:
    err = r.json()["error"]
    return r.status_code, err["code"], err["message"]


# ------------------------------------------------------------------------------ resource groups
@pytest.mark.parametrize("name", ["a", "r" * RESOURCE_GROUP_MAX, "rg-web_weu.(1)", "Rg-Ünïcode",
                                  "(rg)"])
def test_resource_group_names_the_service_accepts(name) -> None:
    assert _resource_group_problem(name) is None


@pytest.mark.parametrize("name, problem", [
    ("", "has 0 characters"),
    ("r" * (RESOURCE_GROUP_MAX + 1), f"has {RESOURCE_GROUP_MAX + 1} characters"),
    ("rg.", "not ending in '.'"),
    ("rg name", "letters, digits"),
    ("rg/x", "letters, digits"),
    ("rg#1", "letters, digits"),
])
def test_resource_group_names_the_service_refuses_say_why(name, problem) -> None:
    said = _resource_group_problem(name)
    assert said is not None and problem in said


def test_a_bad_group_name_is_400_and_an_unknown_one_404(arm, sandbox) -> None:
    server = sandbox.world.section("sql").servers[0]
    status, code, message = _error(arm("GET", _protector_path(sandbox, server, rg="rg.")))
    assert (status, code) == (400, "InvalidResourceGroupName") and "'rg.'" in message
    long = "r" * (RESOURCE_GROUP_MAX + 1)
    status, code, message = _error(arm("GET", _protector_path(sandbox, server, rg=long)))
    assert (status, code) == (400, "InvalidResourceGroupName")
    assert f"has {RESOURCE_GROUP_MAX + 1} characters" in message
    # the longest valid name reaches the lookup
    status, code, message = _error(arm("GET", _protector_path(
        sandbox, server, rg="r" * RESOURCE_GROUP_MAX)))
    assert (status, code) == (404, "ResourceGroupNotFound")


def test_group_names_are_matched_without_regard_to_case(arm, sandbox) -> None:
    server = sandbox.world.section("sql").servers[0]
    r = arm("GET", _protector_path(sandbox, server, rg=server.resource_group.upper()))
    assert r.status_code == 200
    assert r.json()["id"] == arm("GET", _protector_path(sandbox, server)).json()["id"]


# ------------------------------------------------------------------------------ subscriptions
def test_a_malformed_subscription_is_400_and_an_unknown_one_404(arm, sandbox) -> None:
    status, code, message = _error(arm("GET", f"/subscriptions/not-a-guid/resourcegroups?"
                                              f"{GROUPS_API}"))
    assert (status, code) == (400, "InvalidSubscriptionId") and "'not-a-guid'" in message
    status, code, message = _error(arm("GET", f"/subscriptions/{UNKNOWN_SUB}/resourcegroups?"
                                              f"{GROUPS_API}"))
    assert (status, code) == (404, "SubscriptionNotFound") and UNKNOWN_SUB in message


def test_a_subscription_id_in_upper_case_names_the_same_subscription(arm, sandbox) -> None:
    sub = sandbox.world.subscriptions[0]
    lower = arm("GET", f"/subscriptions/{sub.id}/resourcegroups?{GROUPS_API}")
    upper = arm("GET", f"/subscriptions/{sub.id.upper()}/resourcegroups?{GROUPS_API}")
    assert lower.status_code == upper.status_code == 200
    assert [g["name"] for g in upper.json()["value"]] == [g["name"] for g in
                                                          lower.json()["value"]]


# ------------------------------------------------------------------------------ rate-limit header
def test_the_rate_limit_header_names_scope_and_kind(arm, sandbox) -> None:
    # without the limits enforced the caller's bucket is never drawn down: full, less the
    # request answered (with them, see the bucket tests below)
    prefix = sandbox.header_prefix
    server = sandbox.world.section("sql").servers[0]
    read = f"{prefix}ratelimit-remaining-subscription-reads"
    first = arm("GET", _protector_path(sandbox, server))
    second = arm("GET", _protector_path(sandbox, server))
    assert int(first.headers[read]) == int(second.headers[read]) == READ_BUCKET - 1
    tenant = arm("GET", "/subscriptions?api-version=2022-12-01")
    assert f"{prefix}ratelimit-remaining-tenant-reads" in tenant.headers
    assert read not in tenant.headers
    cluster = sandbox.world.section("clusters").hosted[0]
    write = arm("POST", f"/subscriptions/{cluster.subscription_id}/resourceGroups/"
                        f"{cluster.resource_group}/providers/{sandbox.words.hosted_cluster_provider}"
                        f"/{sandbox.words.hosted_cluster_type}/{cluster.name}/listCredentials?"
                        "api-version=2025-07-25")
    assert write.status_code == 200
    assert f"{prefix}ratelimit-remaining-subscription-writes" in write.headers
    assert read not in write.headers


# ------------------------------------------------------------------------------ operations
def test_an_operation_answers_202_until_its_last_poll_then_its_result(arm, sandbox) -> None:
    gw = _gateway(sandbox)
    started = arm("POST", _health_path(sandbox, gw))
    assert started.status_code == 202 and started.content == b""
    assert started.headers["Retry-After"] == str(sandbox.lro_retry_after)
    assert sandbox.words.async_header not in started.headers  # only Location, by default
    location = started.headers["Location"]
    assert urlsplit(location).path.startswith(
        f"/subscriptions/{gw.subscription_id}/providers/{sandbox.namespace}.Network/locations/"
        f"{gw.location}/operationResults/")
    assert NETWORK_API in location
    answers = []
    url = location
    for _ in range(sandbox.lro_polls):
        r = arm("GET", url)
        answers.append(r.status_code)
        if r.status_code == 202:
            assert r.headers["Retry-After"] == str(sandbox.lro_retry_after)
            url = r.headers["Location"]
    assert answers == [202] * (sandbox.lro_polls - 1) + [200]
    assert r.json() == backend_health_body(gw, sandbox.namespace, False)
    # the result stays: a later poll answers it again
    assert arm("GET", location).json() == r.json()


@pytest.mark.parametrize("asked, polls", [("1", 1), ("4", 4), ("0", 1), ("many", None)])
def test_a_request_may_ask_for_another_number_of_polls(arm, sandbox, asked, polls) -> None:
    gw = _gateway(sandbox)
    started = arm("POST", _health_path(sandbox, gw),
                  headers={f"{sandbox.header_prefix}sandbox-lro-polls": asked})
    want = sandbox.lro_polls if polls is None else polls
    statuses = [arm("GET", started.headers["Location"]).status_code for _ in range(want)]
    assert statuses == [202] * (want - 1) + [200]


def test_the_status_url_says_in_progress_then_succeeded(arm, sandbox) -> None:
    world = sandbox.world
    with Sandbox(seed=world.seed, lro_polls=3, lro_retry_after=0) as sb:
        call = arm_caller(sb)
        server = sb.world.section("sql").server(*_where(sb, "sql-sandbox-alice"))
        r = call("PUT", _protector_path(sb, server),
                 json={"properties": {"serverKeyType": "VendorKeyVault",
                                      "serverKeyName": "kv-retail-dev_tde-dev"}})
        assert r.status_code == 202
        status_url = r.headers[sb.words.async_header]
        assert "/operations/" in status_url
        bodies = [call("GET", status_url) for _ in range(4)]
    assert [b.status_code for b in bodies] == [200] * 4
    assert [b.json()["status"] for b in bodies] == ["InProgress", "InProgress", "Succeeded",
                                                    "Succeeded"]
    assert bodies[0].headers["Retry-After"] == "0"
    assert {b.json()["name"] for b in bodies} == {status_url.rsplit("/", 1)[1].split("?")[0]}


def _where(sandbox, name):
    server = next(s for s in sandbox.world.section("sql").servers if s.name == name)
    return server.subscription_id, server.resource_group, server.name


def test_a_failed_operation_ends_failed_at_every_url(arm, sandbox) -> None:
    gw = _gateway(sandbox)
    started = arm("POST", _health_path(sandbox, gw),
                  headers={f"{sandbox.header_prefix}sandbox-fault": "lro_fail"})
    assert started.status_code == 202
    status_url = started.headers[sandbox.words.async_header]  # named for a failing operation
    location = started.headers["Location"]
    progress = [arm("GET", status_url).json()["status"] for _ in range(sandbox.lro_polls - 1)]
    assert progress == ["InProgress"] * (sandbox.lro_polls - 1)
    for _ in range(2):  # and it stays Failed
        body = arm("GET", status_url).json()
        assert body["status"] == "Failed" and body["error"]["code"] == "OperationFailed"
        status, code, message = _error(arm("GET", location))
        assert (status, code) == (400, "OperationFailed") and "nothing was changed" in message


def test_a_failed_change_is_undone_and_frees_the_resource(sandbox) -> None:
    with Sandbox(seed=sandbox.world.seed, lro_polls=2, lro_retry_after=5) as sb:
        call = arm_caller(sb)
        sb.hold_clock(sb.now())
        server = sb.world.section("sql").server(*_where(sb, "sql-sandbox-bob"))
        path = _protector_path(sb, server)
        before = call("GET", path).json()
        body = {"properties": {"serverKeyType": "VendorKeyVault",
                               "serverKeyName": "kv-retail-dev_tde-dev"}}
        started = call("PUT", path, json=body,
                       headers={f"{sb.header_prefix}sandbox-fault": "lro_fail"})
        assert started.status_code == 202
        assert call("PUT", path, json=body).status_code == 409  # reserved while it runs
        status_url = started.headers[sb.words.async_header]
        states = [call("GET", status_url).json()["status"] for _ in range(2)]
        assert states == ["InProgress", "Failed"]
        assert call("GET", path).json() == before  # nothing changed
        again = call("PUT", path, json=body)  # the reservation is gone
        assert again.status_code == 202


def test_unknown_operations_and_another_subscriptions_are_not_found(arm, sandbox) -> None:
    gw = _gateway(sandbox)
    location = arm("POST", _health_path(sandbox, gw)).headers["Location"]
    gone = location.replace("/operationResults/", "/operationResults/x")
    assert _error(arm("GET", gone))[:2] == (404, "OperationNotFound")
    other = next(s for s in sandbox.world.subscriptions if s.id != gw.subscription_id)
    elsewhere = location.replace(gw.subscription_id, other.id)
    assert _error(arm("GET", elsewhere))[:2] == (404, "OperationNotFound")
    status_elsewhere = elsewhere.replace("/operationResults/", "/operations/")
    assert _error(arm("GET", status_elsewhere))[:2] == (404, "OperationNotFound")
    assert arm("GET", location).status_code == 202  # the real one is untouched


# ------------------------------------------------------------------------------ throttling
@pytest.fixture
def limited():
    with Sandbox(seed=7, arm_limits=True) as sb:
        yield sb


@pytest.mark.xdist_group("real-time")  # measures real time: see tests/conftest.py
def test_past_its_bucket_a_caller_gets_429_with_retry_after(limited) -> None:
    from toolkit.sandbox.arm.common import limits

    limits(limited)["reads"].configure(rate=0.5, burst=3)  # one read every 2 s
    call = arm_caller(limited)
    server = limited.world.section("sql").servers[0]
    read = f"{limited.header_prefix}ratelimit-remaining-subscription-reads"
    answers = [call("GET", _protector_path(limited, server)) for _ in range(4)]
    assert [r.status_code for r in answers] == [200, 200, 200, 429]
    assert [int(r.headers[read]) for r in answers[:3]] == [2, 1, 0]
    status, code, message = _error(answers[3])
    assert status == 429
    assert code == "SubscriptionRequestsThrottled" and "'read' requests" in message
    assert int(answers[3].headers["Retry-After"]) >= 1
    # another subscription is another bucket; the tenant's lists another still
    other = next(s for s in limited.world.subscriptions if s.id != server.subscription_id)
    assert call("GET", f"/subscriptions/{other.id}/resourcegroups?api-version=2022-09-01"
                ).status_code == 200
    assert call("GET", "/subscriptions?api-version=2022-12-01").status_code == 200


@pytest.mark.xdist_group("real-time")  # measures real time: see tests/conftest.py
def test_writes_have_a_bucket_of_their_own(limited) -> None:
    from toolkit.sandbox.arm.common import limits

    limits(limited)["reads"].configure(rate=0.5, burst=1)
    limits(limited)["writes"].configure(rate=0.5, burst=1)
    call = arm_caller(limited)
    sub = limited.world.subscriptions[0]
    groups = f"/subscriptions/{sub.id}/resourcegroups?api-version=2022-09-01"
    assert call("GET", groups).status_code == 200
    assert call("GET", groups).status_code == 429
    # a write is refused on its own bucket only: a delete of a missing thing answers 404 first
    # time (the write bucket had room), 429 the second
    path = f"/subscriptions/{sub.id}/resourceGroups/{sub.resource_groups[0].name}/providers/" \
           f"{limited.namespace}.Sql/servers/nope/encryptionProtector/current?{SQL_API}"
    first, second = call("PUT", path, json={}), call("PUT", path, json={})
    assert first.status_code != 429 and second.status_code == 429


def test_limits_are_off_unless_asked_for(arm, sandbox) -> None:
    server = sandbox.world.section("sql").servers[0]
    assert all(arm("GET", _protector_path(sandbox, server)).status_code == 200
               for _ in range(5))
    assert sandbox.arm_limits is False


# ------------------------------------------------------------------------- provider quotas
def _states_path(sb: Sandbox, sub_id: str) -> str:
    return (f"/subscriptions/{sub_id}/providers/{sb.namespace}.PolicyInsights/policyStates/"
            "latest/queryResults?api-version=2024-10-01&$top=1")


def test_policy_insights_answers_say_what_its_own_quota_has_left(arm, sandbox) -> None:
    # not enforced: a full bucket less this request, as the recorded answers' first count
    from toolkit._spec.arm import POLICY_INSIGHTS_BUCKET

    header = f"{sandbox.header_prefix}ratelimit-remaining-policy-insights-requests"
    answer = arm("POST", _states_path(sandbox, sandbox.world.subscriptions[0].id))
    assert answer.status_code == 200 and int(answer.headers[header]) == POLICY_INSIGHTS_BUCKET - 1
    server = sandbox.world.section("sql").servers[0]
    assert header not in arm("GET", _protector_path(sandbox, server)).headers


def test_past_the_providers_quota_a_caller_gets_429_while_the_managers_bucket_has_room(
        ) -> None:
    from toolkit.sandbox.arm.common import limits

    with Sandbox(seed=7, arm_limits=True, provider_limits=True) as sb:
        limits(sb)["policy-insights"].configure(rate=0.0, burst=2)
        call = arm_caller(sb)
        sub = sb.world.subscriptions[0]
        header = f"{sb.header_prefix}ratelimit-remaining-policy-insights-requests"
        writes = f"{sb.header_prefix}ratelimit-remaining-subscription-writes"
        answers = [call("POST", _states_path(sb, sub.id)) for _ in range(3)]
        assert [r.status_code for r in answers] == [200, 200, 429]
        assert [int(r.headers[header]) for r in answers] == [1, 0, 0]
        assert int(answers[1].headers[writes]) > 100  # the resource manager's room is left
        status, code, message = _error(answers[2])
        assert (status, code) == (429, "TooManyRequests") and "policy-insights" in message
        assert int(answers[2].headers["Retry-After"]) >= 1
        # another subscription is another bucket, and other providers are not held
        other = next(s for s in sb.world.subscriptions if s.id != sub.id)
        assert call("POST", _states_path(sb, other.id)).status_code == 200
        server = sb.world.section("sql").servers[0]
        assert call("GET", _protector_path(sb, server)).status_code == 200


# ------------------------------------------------------------------------------ a partial role
@pytest.fixture(scope="module")
def partial():
    """A sandbox whose caller has no role on ``retail-dev`` (named by its id, in upper case)."""
    with Sandbox(seed=7) as probe:
        dev = next(s for s in probe.world.subscriptions if s.name == "retail-dev")
    with Sandbox(seed=7, deny_subscriptions=[dev.id.upper()]) as sb:
        yield sb, arm_caller(sb), dev


def test_under_a_denied_subscription_every_request_is_403_naming_action_and_scope(
        partial) -> None:
    sb, arm, dev = partial
    ns = sb.namespace
    sub = f"/subscriptions/{dev.id}"
    server = next(s for s in sb.world.section("sql").servers if s.subscription_id == dev.id)
    gw = next(g for g in sb.world.section("network").values() if g.subscription_id == dev.id)
    protector = _protector_path(sb, server).split("?")[0]
    health = _health_path(sb, gw).split("?")[0]
    asked = [  # (method, path, the action and scope ARM names)
        ("GET", f"{sub}/resourcegroups?{GROUPS_API}",
         f"{ns}.Resources/subscriptions/resourceGroups/read", sub),
        ("GET", f"{sub}/providers/{ns}.Sql/servers?{SQL_API}", f"{ns}.Sql/servers/read", sub),
        ("PUT", f"{protector}?{SQL_API}", f"{ns}.Sql/servers/encryptionProtector/write",
         protector),
        ("POST", f"{health}?{NETWORK_API}",
         f"{ns}.Network/applicationGateways/backendhealth/action", health.rsplit("/", 1)[0]),
    ]
    for method, path, action, scope in asked:
        status, code, message = _error(arm(method, path, json={}))
        assert (status, code) == (403, "AuthorizationFailed"), path
        assert f"perform action '{action}' over scope '{scope}' or the scope is invalid" in \
            message, message


def test_the_groups_above_it_are_denied_and_unlisted_the_others_served(partial) -> None:
    sb, arm, dev = partial
    world = sb.world
    above = set(world.ancestors(dev.name))
    assert world.tenant_id in above and len(above) >= 2
    for name in above:
        r = arm("GET", f"/providers/{sb.namespace}.Management/managementGroups/{name}"
                       "?api-version=2023-04-01")
        assert _error(r)[:2] == (403, "AuthorizationFailed")
    listed, url = [], f"/providers/{sb.namespace}.Management/managementGroups" \
                      "?api-version=2023-04-01"
    while url:
        body = arm("GET", url).json()
        listed += [g["name"] for g in body["value"]]
        url = body.get("@nextLink")
    assert listed == [m.name for m in world.management_groups if m.name not in above]
    # the subscriptions list still names it (a role on anything there shows it), and the
    # other subscriptions answer
    ids, url = [], "/subscriptions?api-version=2022-12-01"
    while url:
        body = arm("GET", url).json()
        ids += [s["subscriptionId"] for s in body["value"]]
        url = body.get("nextLink")
    assert ids == [s.id for s in world.subscriptions]
    other = next(s for s in world.subscriptions if s.name != dev.name)
    assert arm("GET", f"/subscriptions/{other.id}/resourcegroups?{GROUPS_API}").status_code \
        == 200
