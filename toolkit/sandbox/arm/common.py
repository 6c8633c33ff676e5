"""Share what every resource-management service of the sandbox does alike.

Subscription and resource group checks, the ARM headers, the throttling of every route (a
middleware registered with the sandbox), and long-running operations (202 + ``Location`` polled
to the end).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolkit._spec.arm import (
    POLICY_INSIGHTS_BUCKET,
    POLICY_INSIGHTS_REFILL_PER_SECOND,
    PROVIDER_QUOTAS,
    READ_BUCKET,
    READ_REFILL_PER_SECOND,
    RESOURCE_GROUP_MAX,
    RESOURCE_GROUP_PATTERN,
    WRITE_BUCKET,
    WRITE_REFILL_PER_SECOND,
)
from toolkit.sandbox.buckets import Buckets
from toolkit.sandbox.http import Reply, Request, Router, SandboxHTTPError, SandboxView

if TYPE_CHECKING:
    from toolkit.sandbox.server import Sandbox
    from toolkit.sandbox.world import ResourceGroup, Subscription

__all__ = ["arm_reply", "denied", "find_group", "find_subscription", "limits", "provider_quota",
           "refuse_denied", "register", "start_operation", "throttle"]

_RESOURCE_GROUP_RE = re.compile(RESOURCE_GROUP_PATTERN)
_RESOURCE_GROUP_RULE = (f"resource group names are 1 to {RESOURCE_GROUP_MAX} characters of "
                        "letters, digits, '_', '-', '.', '(' and ')', not ending in '.'")


def _resource_group_problem(name: str) -> str | None:
    """Why the service refuses a resource group name, or ``None``."""
    if not 1 <= len(name) <= RESOURCE_GROUP_MAX:
        return f"has {len(name)} characters; " + _RESOURCE_GROUP_RULE
    if not _RESOURCE_GROUP_RE.fullmatch(name) or name.endswith("."):
        return _RESOURCE_GROUP_RULE
    return None


def find_subscription(request: Request, *, must_be_uuid: bool = True) -> Subscription:
    """Find the subscription named in the path.

    Returns
    -------
    Subscription
        The world's subscription.

    Raises
    ------
    SandboxHTTPError
        400 ``InvalidSubscriptionId`` (when ``must_be_uuid``), 404 ``SubscriptionNotFound``.
    """
    sub_id = request.path_params.get("subscriptionId", "")
    if must_be_uuid:
        try:
            uuid.UUID(sub_id)
        except ValueError:
            raise SandboxHTTPError(400, "InvalidSubscriptionId",
                                   f"The provided subscription identifier '{sub_id}' is "
                                   "malformed or invalid.") from None
    sub = request.sandbox.world.subscription(sub_id)
    if sub is None:
        raise SandboxHTTPError(404, "SubscriptionNotFound",
                               f"The subscription '{sub_id}' could not be found.")
    return sub


def find_group(request: Request) -> tuple[Subscription, ResourceGroup]:
    """Find the subscription and resource group named in the path.

    Returns
    -------
    tuple of (Subscription, ResourceGroup)
        The world's subscription and group.

    Raises
    ------
    SandboxHTTPError
        The subscription's 400/404, 400 ``InvalidResourceGroupName`` for a name the service
        refuses, 404 ``ResourceGroupNotFound``.
    """
    sub = find_subscription(request)
    rg = request.path_params.get("resourceGroupName", "")
    problem = _resource_group_problem(rg)
    if problem:
        raise SandboxHTTPError(400, "InvalidResourceGroupName",
                               f"Resource group name '{rg}' is invalid: {problem}.")
    group = sub.group(rg)
    if group is None:
        raise SandboxHTTPError(404, "ResourceGroupNotFound",
                               f"Resource group '{rg}' could not be found.")
    return sub, group


def limits(sandbox: SandboxView) -> dict[str, Buckets]:
    """Give the resource manager's buckets of reads and of writes, and the providers' quotas.

    One bucket per caller and subscription (or tenant), at the documented sizes
    (``configure``/``refill`` them in tests); each provider quota of
    :data:`~toolkit._spec.arm.PROVIDER_QUOTAS` the same, at the sizes the sandbox chose for it
    (the provider publishes none: :data:`~toolkit._spec.arm.POLICY_INSIGHTS_BUCKET`).

    Returns
    -------
    dict
        ``reads``, ``writes`` and each quota's name to its
        :class:`~toolkit.sandbox.buckets.Buckets`.
    """
    with sandbox.state_lock:
        found: dict[str, Buckets] | None = sandbox.state.get("arm_limits")
        if found is None:
            found = sandbox.state["arm_limits"] = {
                "reads": Buckets(READ_REFILL_PER_SECOND, READ_BUCKET),
                "writes": Buckets(WRITE_REFILL_PER_SECOND, WRITE_BUCKET),
                **{name: Buckets(POLICY_INSIGHTS_REFILL_PER_SECOND, POLICY_INSIGHTS_BUCKET)
                   for name in PROVIDER_QUOTAS}}
        return found


def provider_quota(request: Request) -> str | None:
    """Tell which provider quota a request draws on (its path is under that provider), if any."""
    path = request.path.lower()
    for name, word in PROVIDER_QUOTAS.items():
        if f"/providers/{request.sandbox.namespace}.{word}/".lower() in path:
            return name
    return None


def _bucket_of(request: Request) -> tuple[str, str, str]:
    """Tell the bucket a request is counted in.

    Returns
    -------
    tuple of (str, str, str)
        ``reads`` or ``writes``, ``subscription`` or ``tenant``, and the bucket's key: the caller
        (the token's object id or application) and the subscription it names.
    """
    kind = "reads" if request.method in request.sandbox.arm_read_methods else "writes"
    parts = request.path.strip("/").split("/")
    sub = parts[1].lower() if len(parts) > 1 and parts[0].lower() == "subscriptions" else None
    caller = str(request.claims.get("oid") or request.claims.get("appid") or "anonymous")
    return kind, "subscription" if sub else "tenant", f"{caller}/{sub or 'tenant'}"


def throttle(request: Request) -> None:
    """Refuse a request its caller's bucket has no room for, as the resource manager does.

    The resource manager's middleware (registered by :func:`register`): it counts only when the
    sandbox enforces the limits (``Sandbox(arm_limits=True)``), and a provider's own quota
    first, when it enforces those (``Sandbox(provider_limits=True)``).

    Raises
    ------
    SandboxHTTPError
        429 ``SubscriptionRequestsThrottled``/``TenantRequestsThrottled`` with ``Retry-After``;
        for a provider quota 429 ``TooManyRequests`` with ``Retry-After`` and the quota's count
        at 0 (the shape of the provider's refusal is not published: this one is the sandbox's).
    """
    quota = provider_quota(request)
    if quota is not None and request.sandbox.provider_limits:
        _, scope, key = _bucket_of(request)
        wait = limits(request.sandbox)[quota].take(key)
        if wait is not None:
            raise SandboxHTTPError(
                429, "TooManyRequests", f"Number of '{quota}' requests for {scope} actor "
                                        f"'{key.split('/')[0]}' exceeded. Please try again "
                                        f"after '{wait}' seconds.",
                headers={"Retry-After": str(wait),
                         _quota_header(request, quota): "0"})
    if not request.sandbox.arm_limits:
        return
    kind, scope, key = _bucket_of(request)
    wait = limits(request.sandbox)[kind].take(key)
    if wait is not None:
        code = "SubscriptionRequestsThrottled" if scope == "subscription" else \
            "TenantRequestsThrottled"
        raise SandboxHTTPError(
            429, code, f"Number of '{kind[:-1]}' requests for {scope} actor "
                       f"'{key.split('/')[0]}' exceeded. Please try again after '{wait}' seconds "
                       "after additional tokens are available.",
            headers={"Retry-After": str(wait)})


def denied(sandbox: SandboxView) -> tuple[frozenset[str], frozenset[str]]:
    """Tell what the caller may not read: subscription ids and management group names.

    The subscriptions the sandbox denies (``Sandbox(deny_subscriptions=...)``, by name or id),
    and every management group above one of them: a role on a group would be inherited by the
    subscriptions below it, so a caller refused one subscription holds none on its groups (the
    tenant root group included).

    Returns
    -------
    tuple of (frozenset of str, frozenset of str)
        Lower-case subscription ids and management group names.
    """
    asked = getattr(sandbox, "deny_subscriptions", ())
    if not asked:
        return frozenset(), frozenset()
    with sandbox.state_lock:
        found: tuple[frozenset[str], frozenset[str]] | None = sandbox.state.get("arm_denied")
        if found is None:
            world = sandbox.world
            wanted = {a.lower() for a in asked}
            subs = [s for s in world.subscriptions
                    if s.id.lower() in wanted or s.name.lower() in wanted]
            groups = {g.lower() for s in subs for g in world.ancestors(s.name)}
            found = sandbox.state["arm_denied"] = (frozenset(s.id.lower() for s in subs),
                                                   frozenset(groups))
        return found


_SCOPE_RE = re.compile(r"^/(?:subscriptions/(?P<sub>[^/]+)|providers/[^/]+\.Management/"
                       r"managementGroups/(?P<group>[^/]+))", re.IGNORECASE)
_VERBS = {"GET": "read", "HEAD": "read", "PUT": "write", "PATCH": "write", "DELETE": "delete"}


def _action_and_scope(request: Request) -> tuple[str, str]:
    """Name the action a request performs and the scope it performs it over, as ARM does.

    ``Vendor.Sql/servers/encryptionProtector/write`` over the protector's id; a list names its
    type's ``read`` over the scope it lists; a POST to a resource names its action
    (``.../backendhealth/action``).
    """
    path = request.path.rstrip("/")
    head, sep, rest = path.rpartition("/providers/")
    segments = rest.split("/") if sep else []
    if len(segments) < 2:  # a path without a provider: the subscription's own lists
        kinds = "subscriptions" + ("/resourceGroups" if "/resourcegroups" in path.lower()
                                   else "")
        return f"{request.sandbox.namespace}.Resources/{kinds}/" \
               f"{_VERBS.get(request.method, 'action')}", _scope_of(path)
    provider, parts = segments[0], segments[1:]
    kinds = "/".join(parts[0::2])
    if len(parts) % 2:  # the path ends with a type: a list, or an action on a resource
        verb = _VERBS.get(request.method, "action") if len(parts) == 1 else \
            ("read" if request.method in ("GET", "HEAD") else "action")
        scope = head if len(parts) == 1 else path.rsplit("/", 1)[0]
    else:
        verb, scope = _VERBS.get(request.method, "action"), path
    return f"{provider}/{kinds}/{verb}", scope or _scope_of(path)


def _scope_of(path: str) -> str:
    m = _SCOPE_RE.match(path)
    return m.group(0) if m else path


def refuse_denied(request: Request) -> None:
    """Refuse a request under a scope the caller may not read, as the resource manager does.

    A resource-manager middleware (registered by :func:`register`): 403 ``AuthorizationFailed``
    naming the caller, the action and the scope, for any path under a denied subscription or
    management group (see :func:`denied`). The subscriptions list is not refused: a caller
    with any role on a subscription (a billing or cost reader) sees it listed.

    Raises
    ------
    SandboxHTTPError
        403 ``AuthorizationFailed``.
    """
    subs, groups = denied(request.sandbox)
    if not subs and not groups:
        return
    m = _SCOPE_RE.match(request.path)
    if m is None:
        return
    sub, group = m.group("sub"), m.group("group")
    if not ((sub and sub.lower() in subs) or (group and group.lower() in groups)):
        return
    action, scope = _action_and_scope(request)
    caller = str(request.claims.get("oid") or "00000000-0000-0000-0000-000000000000")
    raise SandboxHTTPError(
        403, "AuthorizationFailed",
        f"The client '{caller}' with object id '{caller}' does not have authorization to "
        f"perform action '{action}' over scope '{scope}' or the scope is invalid. If access "
        "was recently granted, please refresh your credentials.")


def arm_reply(request: Request, body: Any, status: int = 200) -> Reply:
    """Make a success reply with ARM's rate-limit header for the request's bucket.

    The header says what the caller's bucket (reads or writes, see :func:`_bucket_of`) holds after
    this request with the limits enforced, else what a bucket never drawn down holds (full, less
    this request).

    Returns
    -------
    Reply
        ``status`` with ``body`` and the header.
    """
    prefix = request.sandbox.header_prefix
    kind, scope, key = _bucket_of(request)  # a subscription's, or the tenant's above them
    if request.sandbox.arm_limits:
        remaining = limits(request.sandbox)[kind].left(key)
    else:
        remaining = (WRITE_BUCKET if kind == "writes" else READ_BUCKET) - 1
    headers = {f"{prefix}ratelimit-remaining-{scope}-{kind}": str(remaining)}
    quota = provider_quota(request)
    if quota is not None:
        left = limits(request.sandbox)[quota].left(key) if request.sandbox.provider_limits \
            else POLICY_INSIGHTS_BUCKET - 1
        headers[_quota_header(request, quota)] = str(left)
    return Reply(status, body, headers)


def _quota_header(request: Request, quota: str) -> str:
    """Name the header of what a provider quota has left, as the recorded answers name it."""
    return f"{request.sandbox.header_prefix}ratelimit-remaining-{quota}-requests"


def start_operation(request: Request, provider: str, location: str,
                    finish: Callable[[], Reply], *, polls: int | None = None,
                    abandon: Callable[[], None] | None = None,
                    async_status: bool = False) -> Reply:
    """Start a long-running operation: answer 202 with ``Location`` and ``Retry-After``.

    The Location URL answers 202 (no body) for ``polls - 1`` polls, then whatever ``finish()``
    returns.

    ``polls`` defaults to the sandbox's ``lro_polls``; a request may ask for another number with
    the ``x-vendor-sandbox-lro-polls`` header (which the toolkit never sends on its own).

    ``async_status`` (and always for an operation that will fail) also names the cloud's
    async-operation status URL (``Azure-AsyncOperation`` / ``Vendor-AsyncOperation``, which
    clients prefer), whose status body ends ``Succeeded`` or ``Failed``.

    A request carrying the ``lro_fail`` fault starts an operation that ends Failed at every URL
    a client may poll: the status body ends ``Failed`` with an error, and the Location URL
    answers 400 with the same error (never 200 with a result); ``abandon()`` undoes what the
    operation had reserved.

    Returns
    -------
    Reply
        The 202 answer.
    """
    sandbox = request.sandbox
    asked = request.headers.get(f"{sandbox.header_prefix}sandbox-lro-polls")
    if polls is None and asked and asked.isdigit():
        polls = max(1, int(asked))
    op_id = sandbox.new_id()
    with sandbox.state_lock:
        sandbox.state.setdefault("arm_operations", {})[op_id] = {
            "remaining": sandbox.lro_polls if polls is None else polls,
            "finish": finish,
            "abandon": abandon,
            "fail": request.fail_operation,
            "subscription": request.path_params.get("subscriptionId", ""),
            "result": None,
        }
    version = request.param("api-version")
    sub = request.path_params.get("subscriptionId", "")
    location_url = (f"{request.base_url}/subscriptions/{sub}/providers/{provider}/locations/"
                    f"{location}/operationResults/{op_id}?api-version={version}")
    headers = {"Location": location_url, "Retry-After": str(sandbox.lro_retry_after)}
    if request.fail_operation or async_status:
        headers[sandbox.words.async_header] = location_url.replace(
            "/operationResults/", "/operations/")
    return Reply(202, None, headers)


def _operation(request: Request) -> dict[str, Any]:
    """Find the operation named in the path (call with the state lock held), else 404."""
    op_id = request.path_params["operationId"]
    op = request.sandbox.state.get("arm_operations", {}).get(op_id)
    if op is None or op["subscription"].lower() != request.path_params["subscriptionId"].lower():
        raise SandboxHTTPError(404, "OperationNotFound",
                               f"The operation '{op_id}' could not be found.")
    return op


#: The error of an operation the sandbox ends Failed.
_FAILED = {"code": "OperationFailed",
           "message": "The operation failed on the service; nothing was changed. Try again."}


def _abandon(op: dict[str, Any]) -> None:
    """Undo what a failed operation reserved, once (call with the state lock held)."""
    if op["abandon"] is not None and not op.get("abandoned"):
        op["abandon"]()
        op["abandoned"] = True


def _poll(request: Request) -> Reply:
    sandbox = request.sandbox
    with sandbox.state_lock:
        op = _operation(request)
        if op["remaining"] > 1:
            op["remaining"] -= 1
            return Reply(202, None, {"Location": f"{request.base_url}{request.target}",
                                     "Retry-After": str(sandbox.lro_retry_after)})
        if op["fail"]:
            _abandon(op)
            raise SandboxHTTPError(400, _FAILED["code"], _FAILED["message"])
        if op["result"] is None:
            op["result"] = op["finish"]()
        result: Reply = op["result"]
    return Reply(result.status, result.body, dict(result.headers))


def _status(request: Request) -> Reply:
    """Answer the async-operation status of an operation: 200 with ``status``."""
    sandbox = request.sandbox
    op_id = request.path_params["operationId"]
    with sandbox.state_lock:
        op = _operation(request)
        if op["remaining"] > 1:
            op["remaining"] -= 1
            return Reply(200, {"name": op_id, "status": "InProgress"},
                         {"Retry-After": str(sandbox.lro_retry_after)})
        if op["fail"]:
            _abandon(op)
            return Reply(200, {"name": op_id, "status": "Failed", "error": dict(_FAILED)})
        if op["result"] is None:
            op["result"] = op["finish"]()
    return Reply(200, {"name": op_id, "status": "Succeeded"})


def register(router: Router, sandbox: Sandbox) -> None:
    """Add the operation routes every provider shares, and the throttling middleware.

    The operation-results and operation-status routes, and the resource manager's throttling of
    every one of its routes (:func:`throttle`, a middleware of the sandbox).
    """
    sandbox.add_middleware("arm", refuse_denied)
    sandbox.add_middleware("arm", throttle)
    router.add("GET", "/subscriptions/{subscriptionId}/providers/{provider}/locations/{location}/"
               "operationResults/{operationId}", _poll, family="arm", api_versions=None,
               name="arm_operation_result")
    router.add("GET", "/subscriptions/{subscriptionId}/providers/{provider}/locations/{location}/"
               "operations/{operationId}", _status, family="arm", api_versions=None,
               name="arm_operation_status")
