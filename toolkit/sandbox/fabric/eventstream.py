"""Workspaces, folders, sensitivity labels and eventstream creation (spec 3 §2.2-2.4, §4.2).

``POST /v1/workspaces/{workspaceId}/eventstreams`` creates the item at once (201) when there is no
definition; with a definition it answers 202 with ``Location`` (``/v1/operations/{id}``), the
operation id header and ``Retry-After``. The operation state (``GET /v1/operations/{id}``, also
served without ``/v1`` since the service's own ``Location`` values omit it) goes ``NotStarted`` ->
``Running`` -> ``Succeeded`` (or ``Failed`` when the ``eventstream.json`` part is not a JSON
object) over several polls, always HTTP 200; while running its ``Location`` is the state URL
again (without ``/v1``, as the service sends it) with ``Retry-After``, and on success the
``.../result`` URL, which gives the item.

Refusals use the flat error body (``errorCode``, ``message``, ``requestId``, ``isRetriable``,
``moreDetails``, ``relatedResource``): unknown workspace, a workspace on an unsupported capacity,
a caller without the scopes or the contributor role, a bad display name or description, an
unknown folder or label, a label that cannot be applied under ``ApplyOrFail``, a corrupted part,
and a display name already in use. Creation is throttled per caller (429 with ``Retry-After``).
"""

from __future__ import annotations

import base64
import binascii
import re
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from toolkit._spec.common import UUID_PATTERN
from toolkit._spec.fabric import (
    DESCRIPTION_MAX,
    DISPLAY_NAME_FORBIDDEN,
    DISPLAY_NAME_MAX,
    LABEL_STRATEGIES,
)
from toolkit.sandbox.buckets import Buckets
from toolkit.sandbox.http import Reply, Request, Router, SandboxHTTPError, SandboxView

if TYPE_CHECKING:
    from toolkit.sandbox.server import Sandbox
    from toolkit.sandbox.world import World

__all__ = ["Fabric", "Workspace", "build_world", "catalog_rows", "limits", "register"]

WRITE_SCOPES = ("Eventstream.ReadWrite.All", "Item.ReadWrite.All")
WRITE_ROLES = ("Contributor", "Member", "Admin")
#: Sustained creations a second per caller, and the burst tolerated.
RATE, BURST = 0.5, 30

# (name, capacity SKU, supported, caller's role, folders, default label, existing items)
_WORKSPACES: tuple[tuple[str, str, bool, str, tuple[str, ...], str | None,
                         tuple[tuple[str, str], ...]], ...] = (
    ("Sales Analytics", "F64", True, "Contributor", ("Ingestion", "Dashboards"), "General",
     (("Eventstream", "orders-stream"), ("Eventstream", "clickstream"),
      ("Lakehouse", "sales_lake"), ("KQLDatabase", "sales_kql"))),
    ("IoT Telemetry", "F8", True, "Admin", ("Raw", "Curated", "Alerts"), None,
     (("Eventstream", "sensor-hub"), ("Eventhouse", "telemetry_house"))),
    ("Data Science Trial", "FT1", True, "Member", (), None, (("Notebook", "explore"),)),
    ("Finance Reporting", "P1", True, "Viewer", ("Month end",), "Confidential",
     (("Report", "P&L"), ("SemanticModel", "P&L"))),
    ("Marketing (shared capacity)", "Pro", False, "Admin", (), None,
     (("Report", "Campaigns"),)),
    ("Personal: analyst", "PPU", False, "Admin", (), None, ()),
)

_UUID_RE = re.compile(UUID_PATTERN)

# (name, applicable by the service, priority)
_LABELS = (
    ("Public", True, 0),
    ("General", True, 1),
    ("Confidential", True, 2),
    ("Highly Confidential", False, 3),
)


@dataclass
class Item:
    """A workspace item."""

    id: str
    type: str
    display_name: str
    description: str
    workspace_id: str
    folder_id: str | None = None
    label_id: str | None = None

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "type": self.type,
                               "displayName": self.display_name,
                               "description": self.description,
                               "workspaceId": self.workspace_id}
        if self.folder_id:
            out["folderId"] = self.folder_id
        if self.label_id:
            out["sensitivityLabel"] = {"id": self.label_id}
        return out


@dataclass
class Workspace:
    """A workspace on a capacity."""

    id: str
    name: str
    capacity: str
    supported: bool
    role: str
    folders: dict[str, str]
    default_label: str | None
    items: list[Item] = field(default_factory=list)


@dataclass
class Fabric:
    """The eventstream section of the world: workspaces and the tenant's labels."""

    workspaces: dict[str, Workspace]
    labels: dict[str, tuple[str, bool]]

    def label_named(self, name: str | None) -> str | None:
        """Find the id of the label of that name."""
        return next((i for i, (n, _) in self.labels.items() if n == name), None)


def _uuid(rng: Any) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def build_world(world: World) -> Fabric:
    """Workspaces, folders, existing items and sensitivity labels."""
    rng = world.rng("fabric")
    labels = {_uuid(rng): (name, ok) for name, ok, _ in _LABELS}
    fabric = Fabric({}, labels)
    for name, sku, supported, role, folders, label, items in _WORKSPACES:
        ws = Workspace(_uuid(rng), name, sku, supported, role,
                       {_uuid(rng): f for f in folders}, fabric.label_named(label))
        for kind, item_name in items:
            ws.items.append(Item(_uuid(rng), kind, item_name, "", ws.id,
                                 label_id=ws.default_label))
        fabric.workspaces[ws.id.lower()] = ws
    return fabric


def catalog_rows(fabric: Fabric) -> list[dict[str, Any]]:
    """Workspaces, folders and sensitivity labels (their ids in ``name``)."""
    rows = []
    for ws in fabric.workspaces.values():
        state = "supported" if ws.supported else "not supported for eventstreams"
        rows.append({"kind": "fabric_workspace", "name": ws.id,
                     "detail": f"{ws.name}: capacity {ws.capacity} ({state}), your role "
                               f"{ws.role}, {len(ws.items)} items"})
        for fid, fname in ws.folders.items():
            rows.append({"kind": "fabric_folder", "name": fid,
                         "detail": f"folder {fname!r} in {ws.name}"})
    for lid, (lname, ok) in fabric.labels.items():
        rows.append({"kind": "sensitivity_label", "name": lid,
                     "detail": lname + ("" if ok else " (cannot be applied by the service)")})
    return rows


def limits(sandbox: SandboxView) -> Buckets:
    """Return the per-caller creation throttle (``configure``/``refill`` it in tests)."""
    with sandbox.state_lock:
        buckets = sandbox.state.get("fabric_limits")
        if buckets is None:
            buckets = sandbox.state["fabric_limits"] = Buckets(RATE, BURST)
        return buckets


def _invalid(message: str, parameter: str) -> SandboxHTTPError:
    return SandboxHTTPError(400, "InvalidInput", "The request has an invalid input",
                            moreDetails=[{"errorCode": "InvalidParameter", "message": message,
                                          "relatedResource": {"resourceId": parameter,
                                                              "resourceType": "Parameter"}}])


def _stamp(request: Request) -> str:
    now = request.sandbox.now()
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def _decode_parts(definition: Any) -> dict[str, bytes]:
    if not isinstance(definition, dict) or not isinstance(definition.get("parts"), list) \
            or not definition["parts"]:
        raise _invalid("The definition must have a non-empty 'parts' array.", "definition")
    out: dict[str, bytes] = {}
    for part in definition["parts"]:
        if not isinstance(part, dict) or not isinstance(part.get("path"), str) \
                or not isinstance(part.get("payload"), str):
            raise _invalid("Each definition part needs 'path' and 'payload'.", "definition")
        if part.get("payloadType", "InlineBase64") != "InlineBase64":
            raise _invalid(f"Unsupported payloadType '{part.get('payloadType')}'.",
                           "payloadType")
        if part["path"] in out:
            raise SandboxHTTPError(400, "CorruptedPayload",
                                   f"The definition has the part '{part['path']}' twice.")
        try:
            out[part["path"]] = base64.b64decode(part["payload"], validate=True)
        except (binascii.Error, ValueError):
            raise SandboxHTTPError(400, "CorruptedPayload",
                                   f"The provided payload is corrupted: part '{part['path']}' "
                                   "is not valid base64.") from None
    return out


def _definition_problem(parts: dict[str, bytes]) -> str | None:
    raw = parts.get("eventstream.json")
    if raw is None:
        return None
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as err:
        return f"The definition part 'eventstream.json' is not valid JSON: {err}."
    if not isinstance(value, dict):
        return "The definition part 'eventstream.json' must be a JSON object."
    return None


def _display_name_problem(name: Any) -> str | None:
    """Say why the service refuses an item display name, or ``None``.

    The reason completes "The display name ...".
    """
    rule = (f"must be 1 to {DISPLAY_NAME_MAX} characters, must not start or end with a space or "
            "a '.', and must contain no control characters and none of "
            + " ".join(sorted(DISPLAY_NAME_FORBIDDEN)))
    if not isinstance(name, str):
        return "must be a string"
    if not name.strip() or len(name) > DISPLAY_NAME_MAX:
        return rule
    if name[0] in " ." or name[-1] in " .":
        return "starts or ends with a space or '.'"
    bad = sorted({c for c in name if c in DISPLAY_NAME_FORBIDDEN or ord(c) < 32 or ord(c) == 127})
    if bad:
        return f"contains the character(s) {''.join(bad)!r}, which item names may not hold"
    return None

def _workspace(request: Request) -> Workspace:
    ws_id = request.path_params["workspaceId"]
    if not _UUID_RE.fullmatch(ws_id):
        raise _invalid(f"The value '{ws_id}' is not a valid workspace id (a UUID).",
                       "workspaceId")
    fabric: Fabric = request.sandbox.world.section("fabric")
    ws = fabric.workspaces.get(ws_id.lower())
    if ws is None:
        raise SandboxHTTPError(404, "WorkspaceNotFound", "The requested workspace was not found.",
                               relatedResource={"resourceId": ws_id,
                                                "resourceType": "Workspace"})
    return ws


def _create(request: Request) -> Reply:
    sandbox = request.sandbox
    claims = request.claims
    caller = str(claims.get("oid") or claims.get("sub") or "anonymous")
    wait = limits(sandbox).take(caller)
    if wait is not None:
        until = sandbox.now().strftime("%m/%d/%Y %I:%M:%S %p")
        raise SandboxHTTPError(429, "RequestBlocked",
                               f"Request is blocked by the upstream service until: {until} "
                               "(UTC)", headers={"Retry-After": str(wait)}, isRetriable=True)
    roles = set(claims.get("roles") or ())
    if not roles & set(WRITE_SCOPES):
        raise SandboxHTTPError(403, "InsufficientScopes",
                               "The caller does not have sufficient scopes to perform this "
                               "operation; it needs " + " or ".join(WRITE_SCOPES) + ".")
    ws = _workspace(request)
    if ws.role not in WRITE_ROLES or "Contributor" not in roles:
        raise SandboxHTTPError(403, "InsufficientWorkspaceRole",
                               "The caller does not have sufficient workspace role to perform "
                               f"this operation (has {ws.role}, needs Contributor).",
                               relatedResource={"resourceId": ws.id,
                                                "resourceType": "Workspace"})
    if not ws.supported:
        raise SandboxHTTPError(400, "FeatureNotAvailable",
                               f"Eventstream items need a workspace on a supported capacity; "
                               f"workspace '{ws.name}' is on {ws.capacity}.",
                               relatedResource={"resourceId": ws.id,
                                                "resourceType": "Workspace"})
    body = request.json()
    if not isinstance(body, dict):
        raise _invalid("The request body must be a JSON object.", "createEventstreamRequest")
    name = body.get("displayName")
    if name is None:
        raise _invalid("The displayName field is required.", "displayName")
    problem = _display_name_problem(name)
    if problem:
        raise SandboxHTTPError(400, "InvalidDisplayName", f"The display name {problem}.",
                               relatedResource={"resourceId": str(name),
                                                "resourceType": "DisplayName"})
    description = body.get("description")
    if description is not None and (not isinstance(description, str)
                                    or len(description) > DESCRIPTION_MAX):
        raise _invalid(f"The description must be a string of at most {DESCRIPTION_MAX} "
                       "characters.", "description")
    folder_id = body.get("folderId")
    if folder_id is not None and (not isinstance(folder_id, str) or folder_id.lower() not in
                                  {f.lower() for f in ws.folders}):
        raise SandboxHTTPError(404, "FolderNotFound", "The requested folder was not found.",
                               relatedResource={"resourceId": str(folder_id),
                                                "resourceType": "Folder"})
    fabric: Fabric = sandbox.world.section("fabric")
    label_id = ws.default_label
    settings = body.get("sensitivityLabelSettings")
    if settings is not None:
        wanted = settings.get("labelId") if isinstance(settings, dict) else None
        strategy = (settings.get("sensitivityLabelApplyStrategy") or "ApplyOrFail") \
            if isinstance(settings, dict) else None
        if strategy not in LABEL_STRATEGIES:
            raise _invalid("sensitivityLabelApplyStrategy must be "
                           f"{' or '.join(LABEL_STRATEGIES)}.",
                           "sensitivityLabelApplyStrategy")
        label = fabric.labels.get(str(wanted).lower())
        if label is None:
            raise SandboxHTTPError(400, "InvalidSensitivityLabel",
                                   "The sensitivity label was not found.",
                                   relatedResource={"resourceId": str(wanted),
                                                    "resourceType": "SensitivityLabel"})
        if label[1]:
            label_id = str(wanted).lower()
        elif strategy == "ApplyOrFail":
            raise SandboxHTTPError(400, "SensitivityLabelNotApplicable",
                                   f"The sensitivity label '{label[0]}' cannot be applied by "
                                   "the service (it needs user-defined protection).",
                                   relatedResource={"resourceId": str(wanted),
                                                    "resourceType": "SensitivityLabel"})
    parts = _decode_parts(body["definition"]) if body.get("definition") is not None else None
    with sandbox.state_lock:
        taken = {i.display_name.lower() for i in ws.items if i.type == "Eventstream"}
        pending = sandbox.state.setdefault("fabric_pending_names", set())
        if name.lower() in taken or (ws.id, name.lower()) in pending:
            raise SandboxHTTPError(409, "ItemDisplayNameAlreadyInUse",
                                   f"Requested '{name}' is already in use",
                                   relatedResource={"resourceId": ws.id,
                                                    "resourceType": "Workspace"})
        item = Item(sandbox.new_id(), "Eventstream", name, description or "", ws.id,
                    folder_id=folder_id, label_id=label_id)
        if parts is None:
            ws.items.append(item)
            return Reply(201, item.body())
        op_id = sandbox.new_id()
        pending.add((ws.id, name.lower()))
        problem, code = _definition_problem(parts), "InvalidDefinition"
        if problem is None and request.fail_operation:
            problem, code = "The item could not be provisioned; try again.", "OperationFailed"
        sandbox.state.setdefault("fabric_operations", {})[op_id] = {
            "workspace": ws, "item": item, "problem": problem, "code": code,
            "polls": 0, "total": max(3, sandbox.lro_polls), "status": "NotStarted",
            "created": _stamp(request), "updated": _stamp(request), "error": None,
        }
    prefix = sandbox.header_prefix
    return Reply(202, None, {"Location": f"{request.base_url}/v1/operations/{op_id}",
                             f"{prefix}operation-id": op_id,
                             "Retry-After": str(sandbox.lro_retry_after)})


def _operation(request: Request) -> tuple[str, dict[str, Any]]:
    op_id = request.path_params["operationId"]
    op = request.sandbox.state.get("fabric_operations", {}).get(op_id.lower())
    if op is None:
        raise SandboxHTTPError(404, "OperationNotFound",
                               f"The operation '{op_id}' was not found.",
                               relatedResource={"resourceId": op_id,
                                                "resourceType": "Operation"})
    return op_id.lower(), op


def _state(request: Request) -> Reply:
    sandbox = request.sandbox
    prefix = sandbox.header_prefix
    with sandbox.state_lock:
        op_id, op = _operation(request)
        if op["status"] not in ("Succeeded", "Failed"):
            op["polls"] += 1
            op["updated"] = _stamp(request)
            if op["polls"] >= op["total"]:
                ws, item = op["workspace"], op["item"]
                sandbox.state["fabric_pending_names"].discard((ws.id, item.display_name.lower()))
                if op["problem"]:
                    op["status"] = "Failed"
                    op["error"] = {"errorCode": op["code"], "message": op["problem"],
                                   "requestId": request.request_id, "isRetriable": False,
                                   "relatedResource": {"resourceId": "eventstream.json",
                                                       "resourceType": "DefinitionPart"}}
                else:
                    ws.items.append(item)
                    op["status"] = "Succeeded"
            else:
                op["status"] = "NotStarted" if op["polls"] == 1 else "Running"
        status = op["status"]
        percent = {"NotStarted": 0, "Succeeded": 100}.get(
            status, min(95, int(100 * op["polls"] / op["total"])))
        body: dict[str, Any] = {"status": status, "createdTimeUtc": op["created"],
                                "lastUpdatedTimeUtc": op["updated"],
                                "percentComplete": percent}
        if op["error"] is not None:
            body["error"] = op["error"]
    headers = {f"{prefix}operation-id": op_id}
    if status == "Succeeded":
        headers["Location"] = f"{request.base_url}/operations/{op_id}/result"
    elif status != "Failed":
        headers["Location"] = f"{request.base_url}/operations/{op_id}"
        headers["Retry-After"] = str(sandbox.lro_retry_after)
    return Reply(200, body, headers)


def _result(request: Request) -> Reply:
    with request.sandbox.state_lock:
        _, op = _operation(request)
        if op["status"] != "Succeeded":
            raise SandboxHTTPError(400, "OperationNotSucceeded",
                                   f"The operation has not succeeded (status {op['status']}); "
                                   "its result is not available.")
        return Reply(200, op["item"].body())


def register(router: Router, sandbox: Sandbox) -> None:
    """Add the creation route and the operation routes (with and without ``/v1``)."""
    router.add("POST", "/v1/workspaces/{workspaceId}/eventstreams", _create, family="fabric",
               api_versions=None, name="create_eventstream")
    for prefix in ("/v1", ""):
        router.add("GET", prefix + "/operations/{operationId}", _state, family="fabric",
                   api_versions=None, name="fabric_operation_state")
        router.add("GET", prefix + "/operations/{operationId}/result", _result,
                   family="fabric", api_versions=None, name="fabric_operation_result")
