"""The workspaces list, served from the world: ``GET /v1/workspaces``.

The workspaces the caller has a role in (all of the world's; ``roles=`` filters on the caller's
role), a few a page: a page that is not the last carries ``continuationToken`` and
``continuationUri`` (the same query with the token), as the service pages. A bad role or token
is the flat error body's 400.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from toolkit._spec.fabric import WORKSPACE_ROLES
from toolkit.sandbox.http import Reply, SandboxHTTPError

if TYPE_CHECKING:
    from toolkit.sandbox.fabric.eventstream import Fabric, Workspace
    from toolkit.sandbox.http import Request, Router
    from toolkit.sandbox.server import Sandbox

__all__ = ["PAGE_SIZE", "register"]

PAGE_SIZE = 3
#: Capacity SKUs that are no dedicated capacity (the workspace then names none).
_SHARED = ("Pro",)


def _capacity_id(ws: Workspace) -> str:
    digest = hashlib.sha256(f"capacity:{ws.capacity}".encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-4{digest[13:16]}-a{digest[17:20]}-{digest[20:32]}"


def _body(ws: Workspace) -> dict[str, Any]:
    personal = ws.name.startswith("Personal")
    out: dict[str, Any] = {"id": ws.id, "displayName": "My workspace" if personal else ws.name,
                           "description": "" if personal else f"The {ws.name} team's workspace",
                           "type": "Personal" if personal else "Workspace"}
    if ws.capacity not in _SHARED:
        out["capacityId"] = _capacity_id(ws)
        out["capacityRegion"] = "West Europe"
    return out


def _list(request: Request) -> Reply:
    fabric: Fabric = request.sandbox.world.section("fabric")
    raw = request.param("roles")
    spaces = list(fabric.workspaces.values())
    if raw is not None:
        roles = [r.strip() for r in raw.split(",") if r.strip()]
        if not roles or any(r not in WORKSPACE_ROLES for r in roles):
            raise SandboxHTTPError(400, "InvalidParameter",
                                   f"The value '{raw[:60]}' of roles is not valid; roles are "
                                   f"{', '.join(WORKSPACE_ROLES)}.")
        spaces = [ws for ws in spaces if ws.role in roles]
    token = request.param("continuationToken") or "0"
    if not token.isdigit():
        raise SandboxHTTPError(400, "InvalidContinuationToken",
                               "The continuation token is not valid.")
    start = int(token)
    stop = start + PAGE_SIZE
    body: dict[str, Any] = {"value": [_body(ws) for ws in spaces[start:stop]]}
    if stop < len(spaces):
        query = [(k, v) for k, v in request.query if k != "continuationToken"]
        query.append(("continuationToken", str(stop)))
        body["continuationToken"] = str(stop)
        body["continuationUri"] = (f"{request.base_url}{request.path}?"
                                   f"{urlencode(query, quote_via=quote)}")
    return Reply(200, body)


def register(router: Router, sandbox: Sandbox) -> None:
    """Add the workspaces list."""
    router.add("GET", "/v1/workspaces", _list, family="fabric", api_versions=None,
               name="fabric_workspaces")
