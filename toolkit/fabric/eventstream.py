"""Eventstream creation (spec 3 §2.2-2.4, §4.2): one item, or many from a table.

``POST /v1/workspaces/{workspaceId}/eventstreams`` answers 201 with the item (created at once) or
202 (provisioning): ``Location`` points at the operation state, polled (honouring
``Retry-After``) until ``Succeeded``, when ``Location`` points at the result; ``Failed`` raises
the operation's error. Creation is not idempotent, so it is retried only on 429.
"""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, overload

import orjson
import pandas as pd

from toolkit._core.concurrency import FAMILY_RATES, fan_out
from toolkit._core.continuation import answered_from
from toolkit._core.errors import (
    ApiError,
    ConflictError,
    OperationFailedError,
    OperationTimeoutError,
    ToolkitError,
    ValidationError,
)
from toolkit._core.frames import build_frame
from toolkit._core.messages import Response
from toolkit._core.polling import ItemOperation
from toolkit._core.provenance import provenance
from toolkit._core.registry import OperationRecord, register
from toolkit._core.schemas import Col, Schema
from toolkit._core.urls import segment
from toolkit._core.validate import check_choice, check_timeout, check_uuid
from toolkit._spec.fabric import (
    API_VERSION_PATTERN,
    API_VERSIONS,
    DESCRIPTION_MAX,
    DISPLAY_NAME_FORBIDDEN,
    DISPLAY_NAME_MAX,
    ITEM_TYPES,
    LABEL_STRATEGIES,
    PRINCIPAL_TYPES,
)
from toolkit.connection import get_connection

if TYPE_CHECKING:
    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = [
    "create_eventstream",
    "create_eventstreams",
    "display_name_problem",
    "encode_definition",
    "eventstream_request",
]

API_VERSION = API_VERSIONS[0]
DISPLAY_NAME_RULE = (
    "item display names are 1 to 256 characters, do not start or end with a space or a '.', and "
    "contain no control characters and none of \\ / : * ? \" < > | # %"
)
_VERSION_RE = re.compile(API_VERSION_PATTERN)

EVENTSTREAM = Schema(
    "create_eventstream",
    (
        Col("id", "string"),
        Col("displayName", "string"),
        Col("description", "string"),
        Col("type", "category", categories=ITEM_TYPES),
        Col("workspaceId", "string"),
        Col("folderId", "string"),
        Col("sensitivityLabel.id", "string"),
        Col("tags", "object"),
        Col("defaultIdentity.id", "string"),
        Col("defaultIdentity.displayName", "string"),
        Col("defaultIdentity.type", "category", categories=PRINCIPAL_TYPES),
        Col("operation_id", "string"),
    ),
)

EVENTSTREAMS = Schema(
    "create_eventstreams",
    (
        Col("input_index", "Int64"),
        *EVENTSTREAM.columns,
        Col("status", "category", categories=("Succeeded", "Running", "Failed", "Invalid")),
        Col("error_code", "string"),
        Col("error", "string"),
        Col("continuation_token", "string"),
    ),
)


def display_name_problem(name: Any) -> str | None:
    """Why a display name breaks the item naming rules, or ``None`` when it is valid."""
    if not isinstance(name, str):
        return "must be a string; " + DISPLAY_NAME_RULE
    if not name.strip():
        return "is empty; " + DISPLAY_NAME_RULE
    if len(name) > DISPLAY_NAME_MAX:
        return f"has {len(name)} characters, more than {DISPLAY_NAME_MAX}; " + DISPLAY_NAME_RULE
    if name[0] in " ." or name[-1] in " .":
        return "starts or ends with a space or '.'; " + DISPLAY_NAME_RULE
    bad = sorted({c for c in name if c in DISPLAY_NAME_FORBIDDEN or ord(c) < 32 or ord(c) == 127})
    if bad:
        return f"contains {''.join(bad)!r}; " + DISPLAY_NAME_RULE
    return None


def _payload(path: str, content: Any, parameter: str) -> str:
    if isinstance(content, bytes | bytearray | memoryview):
        raw = bytes(content)
    elif isinstance(content, str):
        raw = content.encode("utf-8")
    else:
        try:
            raw = orjson.dumps(content, option=orjson.OPT_INDENT_2)
        except TypeError as err:
            raise ValidationError(f"{parameter}[{path!r}]", type(content).__name__,
                                  "part content must be bytes, str or a JSON-able object") \
                from err
    return base64.b64encode(raw).decode("ascii")


def encode_definition(definition: Any, parameter: str = "definition") -> dict[str, Any]:
    """Encode an ``EventstreamDefinition`` with InlineBase64 parts.

    Parameters
    ----------
    definition : mapping
        Part path -> content (bytes, str, or an object serialised as JSON), e.g.
        ``{"eventstream.json": {...}, "eventstreamProperties.json": {...}}``; or an already
        built definition ``{"parts": [{"path", "payload", "payloadType"}], "format"?}``, passed
        on after its parts are checked.
    """
    if not isinstance(definition, Mapping) or not definition:
        raise ValidationError(parameter, definition if not isinstance(definition, Mapping)
                              else {}, "must be a non-empty dict of part path to content")
    if isinstance(definition.get("parts"), list) and set(definition) <= {"parts", "format"}:
        parts = definition["parts"]
        if not parts:
            raise ValidationError(f"{parameter}['parts']", parts, "must hold at least one part")
        for i, part in enumerate(parts):
            if not isinstance(part, Mapping) or not isinstance(part.get("path"), str) \
                    or not part.get("path") or not isinstance(part.get("payload"), str):
                raise ValidationError(f"{parameter}['parts'][{i}]", part,
                                      "each part needs a non-empty 'path' and a 'payload' string")
            if part.get("payloadType", "InlineBase64") != "InlineBase64":
                raise ValidationError(f"{parameter}['parts'][{i}]['payloadType']",
                                      part.get("payloadType"), "must be InlineBase64")
            try:
                base64.b64decode(part["payload"], validate=True)
            except ValueError as err:
                raise ValidationError(f"{parameter}['parts'][{i}]['payload']",
                                      part["payload"][:40], "must be base64") from err
        out: dict[str, Any] = {"parts": [{"path": p["path"], "payload": p["payload"],
                                          "payloadType": "InlineBase64"} for p in parts]}
        if definition.get("format") is not None:
            out["format"] = definition["format"]
        return out
    parts = []
    for path, content in definition.items():
        if not isinstance(path, str) or not path.strip() or path.startswith("/"):
            raise ValidationError(f"{parameter} key", path,
                                  "part paths are non-empty relative paths such as "
                                  "'eventstream.json'")
        parts.append({"path": path, "payload": _payload(path, content, parameter),
                      "payloadType": "InlineBase64"})
    return {"parts": parts}


def _label_settings(value: Any, parameter: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ValidationError(parameter, value,
                              "must be a dict {'labelId': <uuid>, "
                              "'sensitivityLabelApplyStrategy': 'ApplyOrFail' | 'Ignore'}")
    unknown = set(value) - {"labelId", "sensitivityLabelApplyStrategy"}
    if unknown:
        raise ValidationError(parameter, sorted(map(str, unknown)),
                              "only labelId and sensitivityLabelApplyStrategy are allowed")
    if "labelId" not in value:
        raise ValidationError(f"{parameter}['labelId']", None, "labelId is required (a UUID)")
    out = {"labelId": check_uuid(value["labelId"], f"{parameter}['labelId']")}
    strategy = value.get("sensitivityLabelApplyStrategy")
    if strategy is not None:
        out["sensitivityLabelApplyStrategy"] = check_choice(
            strategy, f"{parameter}['sensitivityLabelApplyStrategy']", LABEL_STRATEGIES)
    return out


def eventstream_request(display_name: Any, *, description: Any = None, definition: Any = None,
                        folder_id: Any = None,
                        sensitivity_label_settings: Any = None) -> dict[str, Any]:
    """Build the ``CreateEventstreamRequest`` body, every client-side rule checked.

    Raises
    ------
    ValidationError
        Naming the parameter and the rule broken.
    """
    problem = display_name_problem(display_name)
    if problem:
        raise ValidationError("display_name", display_name, problem)
    body: dict[str, Any] = {"displayName": display_name}
    if description is not None:
        if not isinstance(description, str):
            raise ValidationError("description", description, "must be a string")
        if len(description) > DESCRIPTION_MAX:
            raise ValidationError("description", description,
                                  f"at most {DESCRIPTION_MAX} characters (it has "
                                  f"{len(description)})")
        body["description"] = description
    if folder_id is not None:
        body["folderId"] = check_uuid(folder_id, "folder_id")
    if definition is not None:
        body["definition"] = encode_definition(definition)
    if sensitivity_label_settings is not None:
        body["sensitivityLabelSettings"] = _label_settings(sensitivity_label_settings,
                                                           "sensitivity_label_settings")
    return body


def _check_api_version(value: Any) -> str:
    if not isinstance(value, str) or not _VERSION_RE.fullmatch(value):
        raise ValidationError("api_version", value, "the version path, such as 'v1'")
    return value


def _item_record(response: Response, operation_id: str | None) -> dict[str, Any]:
    record = dict(response.json_object())
    record["operation_id"] = operation_id
    return record


def _start(conn: Connection, workspace_id: str, body: dict[str, Any], api_version: str
           ) -> ItemOperation[pd.DataFrame]:
    pipe = conn.pipeline("fabric")
    path = f"/{api_version}/workspaces/{segment(workspace_id, 'workspace_id')}/eventstreams"
    handle: list[ItemOperation[pd.DataFrame]] = []

    parse = _parser(handle, pipe.url(path), api_version)
    try:
        op = ItemOperation.start(pipe, "POST", path, name="create_eventstream", parse=parse,
                                 json=body, idempotent=False)
    except ConflictError as err:
        if err.code == "ItemDisplayNameAlreadyInUse":
            err.hint = ("An item of this name exists in the workspace (names are unique per "
                        "workspace, whatever the case); choose another display name. If it is "
                        "the item of an earlier creation that was accepted but not followed to "
                        "its end, finish that one instead: toolkit.resume_operation("
                        "err.continuation_token) with the earlier error's token.")
            err.args = (err._text(),)
        raise
    handle.append(op)
    return op


def _parser(handle: list[Any], endpoint: str,
            api_version: str | None) -> Callable[[Response], pd.DataFrame]:
    def parse(response: Response) -> pd.DataFrame:
        op_id = handle[0].operation_id if handle else None
        ids = [response.request_id] if response.request_id else []
        return build_frame([_item_record(response, op_id)], EVENTSTREAM,
                           provenance("create_eventstream", api_version, endpoint, ids))
    return parse


def _resume_parser(connection: Any, operation: Any) -> Callable[[Response], pd.DataFrame]:
    """Make the result parser of an eventstream creation resumed from its token.

    The frame's endpoint and api-version are those of the request that gave the result (the
    version its path names, if any).
    """
    def parse(response: Response) -> pd.DataFrame:
        endpoint, api_version = answered_from(response.url, operation.pipeline.base_url,
                                              path_version=API_VERSION_PATTERN)
        return _parser([operation], endpoint, api_version)(response)
    return parse


@overload
def create_eventstream(workspace_id: str, display_name: str, *, description: str | None = ...,
                       definition: Mapping[str, Any] | None = ..., folder_id: str | None = ...,
                       sensitivity_label_settings: Mapping[str, Any] | None = ...,
                       wait: Literal[True] = ..., timeout: float | None = ...,
                       api_version: str = ...,
                       connection: Connection | None = ...) -> pd.DataFrame: ...
@overload
def create_eventstream(workspace_id: str, display_name: str, *, description: str | None = ...,
                       definition: Mapping[str, Any] | None = ..., folder_id: str | None = ...,
                       sensitivity_label_settings: Mapping[str, Any] | None = ...,
                       wait: Literal[False], timeout: float | None = ...,
                       api_version: str = ...,
                       connection: Connection | None = ...) -> ItemOperation[pd.DataFrame]: ...
@overload
def create_eventstream(workspace_id: str, display_name: str, *, description: str | None = ...,
                       definition: Mapping[str, Any] | None = ..., folder_id: str | None = ...,
                       sensitivity_label_settings: Mapping[str, Any] | None = ...,
                       wait: bool = ..., timeout: float | None = ...,
                       api_version: str = ...,
                       connection: Connection | None = ...
                       ) -> pd.DataFrame | ItemOperation[pd.DataFrame]: ...
def create_eventstream(workspace_id: str, display_name: str, *, description: str | None = None,
                       definition: Mapping[str, Any] | None = None, folder_id: str | None = None,
                       sensitivity_label_settings: Mapping[str, Any] | None = None,
                       wait: bool = True, timeout: float | None = None,
                       api_version: str = API_VERSION,
                       connection: Connection | None = None
                       ) -> pd.DataFrame | ItemOperation[pd.DataFrame]:
    r"""Create an eventstream in a workspace.

    Without a definition the service may create the item at once (201); otherwise it
    provisions it (202) and the toolkit follows the operation to its end, at the configured
    Fabric endpoint even when the service names one of its cluster hosts
    (``wabi-<region>-redirect.analysis.windows.net``), as Microsoft's Fabric clients do. The
    creation is never sent twice: when following an accepted creation fails, the error carries
    ``accepted`` and ``continuation_token``, which finish it (``toolkit.resume_operation``).

    Parameters
    ----------
    workspace_id : str
        The workspace (UUID); it must be on a supported capacity.
    display_name : str
        1 to 256 characters, no leading or trailing space or '.', no control characters and none
        of ``\ / : * ? " < > | # %``; unique in the workspace.
    description : str, optional
        At most 256 characters.
    definition : dict, optional
        Part path -> content (bytes, str or a JSON-able object), sent as InlineBase64 parts,
        e.g. ``{"eventstream.json": {...}, "eventstreamProperties.json": {...}}``.
    folder_id : str, optional
        Folder (UUID) to create the item in; the workspace root when omitted.
    sensitivity_label_settings : dict, optional
        ``{"labelId": <uuid>, "sensitivityLabelApplyStrategy": "ApplyOrFail" | "Ignore"}``.
    wait : bool
        Wait for a long-running creation (default); ``False`` returns the
        :class:`~toolkit.ItemOperation` handle (``result()``, ``done()``,
        ``state``, ``history``).
    timeout : float, optional
        Seconds to wait at most; then OperationTimeoutError, whose ``operation`` resumes and
        whose ``operation_url`` is the state URL.
    api_version : str
        The version path (``v1``).
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row: ``id``, ``displayName``, ``description`` (strings), ``type`` (category of the
        ItemType values, ``Eventstream``), ``workspaceId``, ``folderId``,
        ``sensitivityLabel.id`` (strings), ``tags`` (object: list of ``{id, displayName}``),
        ``defaultIdentity.id``, ``defaultIdentity.displayName`` (strings),
        ``defaultIdentity.type`` (category of the PrincipalType values), ``operation_id``
        (string; the long-running operation's id when there was one).

    Raises
    ------
    ValidationError
        Any client-side rule broken (before any request).
    ConflictError
        ``ItemDisplayNameAlreadyInUse``.
    ApiError
        Other refusals, with the service's ``errorCode`` as ``code``, ``requestId`` as
        ``request_id`` and ``isRetriable`` as ``retriable`` (an unsupported capacity, an unknown
        folder or label...).
    OperationFailedError
        The provisioning ended Failed (code and message are the operation's).
    RateLimitError
        Throttled longer than ``max_retry_wait``.
    ToolkitError
        Any failure while following an accepted creation (a transport error, a refused
        address...) carries ``accepted`` (the handle) and ``continuation_token``: the item
        exists or is being made; do not create it again.
    """
    check_uuid(workspace_id, "workspace_id")
    body = eventstream_request(display_name, description=description, definition=definition,
                               folder_id=folder_id,
                               sensitivity_label_settings=sensitivity_label_settings)
    if not isinstance(wait, bool):
        raise ValidationError("wait", wait, "must be True or False")
    check_timeout(timeout)
    _check_api_version(api_version)
    conn = get_connection(connection)
    op = _start(conn, workspace_id, body, api_version)
    return op.result(timeout) if wait else op


_FIELDS = {
    "workspace_id": ("workspace_id", "workspaceId"),
    "display_name": ("display_name", "displayName"),
    "description": ("description",),
    "definition": ("definition",),
    "folder_id": ("folder_id", "folderId"),
    "sensitivity_label_settings": ("sensitivity_label_settings", "sensitivityLabelSettings"),
}


def _requests_of(items: Any) -> list[dict[str, Any]]:
    if isinstance(items, pd.DataFrame):
        records = items.to_dict("records")
    elif isinstance(items, Mapping | str | bytes) or items is None:
        raise ValidationError("items", type(items).__name__,
                              "must be a DataFrame or a list of dicts with workspace_id and "
                              "display_name")
    else:
        try:
            records = list(items)
        except TypeError:
            raise ValidationError("items", type(items).__name__,
                                  "must be a DataFrame or a list of dicts") from None
    if not records:
        raise ValidationError("items", items if not isinstance(items, pd.DataFrame) else "[]",
                              "must hold at least one eventstream to create")
    out = []
    for i, rec in enumerate(records):
        if not isinstance(rec, Mapping):
            raise ValidationError(f"items[{i}]", rec, "each item must be a dict")
        unknown = set(rec) - {k for names in _FIELDS.values() for k in names}
        if unknown:
            raise ValidationError(f"items[{i}]", sorted(map(str, unknown)),
                                  "unknown fields; use " + ", ".join(_FIELDS))
        row: dict[str, Any] = {}
        for name, keys in _FIELDS.items():
            value = next((rec[k] for k in keys if k in rec), None)
            if value is not None and not isinstance(value, Mapping | str) and \
                    pd.api.types.is_scalar(value) and pd.isna(value):
                value = None
            row[name] = value
        out.append(row)
    return out


def create_eventstreams(items: pd.DataFrame | Iterable[Mapping[str, Any]], *,
                        timeout: float | None = None, api_version: str = API_VERSION,
                        connection: Connection | None = None) -> pd.DataFrame:
    """Create many eventstreams; one row per requested item, errors as rows.

    Items are created concurrently within the family's rate; long-running ones are followed to
    their end. An item that breaks a client-side rule is not sent (status ``Invalid``); a refusal
    or a failed provisioning gives status ``Failed`` with the service's code; the others are
    kept whatever happens to one.

    Parameters
    ----------
    items : DataFrame or iterable of dict
        One row per eventstream: ``workspace_id`` and ``display_name`` (required; the service
        names ``workspaceId``/``displayName`` are accepted too), and optionally
        ``description``, ``definition``, ``folder_id``, ``sensitivity_label_settings`` as for
        :func:`create_eventstream`.
    timeout : float, optional
        Seconds to wait for each long-running creation; items still provisioning then get
        status ``Running`` with their ``operation_id`` and ``continuation_token``.
    api_version : str
        The version path (``v1``).
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row per item, in input order: ``input_index`` (Int64), the columns of
        :func:`create_eventstream` (``displayName`` and ``workspaceId`` as requested when the
        creation failed), ``status`` (category ``Succeeded``/``Running``/``Failed``/
        ``Invalid``), ``error_code`` (string: the service's ``errorCode``, ``ValidationError``,
        or for ``Running`` rows ``OperationTimeout`` or ``OperationNotFollowed``), ``error``
        (string), ``continuation_token`` (string: for a ``Running`` row, the accepted creation
        that :func:`toolkit.resume_operation` finishes; never create such an item again).
    """
    requests = _requests_of(items)
    check_timeout(timeout)
    _check_api_version(api_version)
    conn = get_connection(connection)

    rows: list[dict[str, Any]] = [{} for _ in requests]
    to_send: list[tuple[int, str, dict[str, Any]]] = []
    for i, req in enumerate(requests):
        base = {"input_index": i, "displayName": req["display_name"],
                "workspaceId": req["workspace_id"], "description": req["description"]}
        try:
            check_uuid(req["workspace_id"], "workspace_id")
            body = eventstream_request(req["display_name"], description=req["description"],
                                       definition=req["definition"], folder_id=req["folder_id"],
                                       sensitivity_label_settings=req[
                                           "sensitivity_label_settings"])
        except ValidationError as err:
            rows[i] = {**base, "status": "Invalid", "error_code": "ValidationError",
                       "error": str(err)}
            continue
        rows[i] = base
        to_send.append((i, req["workspace_id"], body))

    def create(job: tuple[int, str, dict[str, Any]]) -> pd.DataFrame:
        _, workspace_id, body = job
        return _start(conn, workspace_id, body, api_version).result(timeout)

    outcomes = fan_out(create, to_send, connection=conn, desc="create_eventstreams",
                       rate=FAMILY_RATES["fabric"])
    request_ids: list[str] = []
    for outcome in outcomes:
        i = outcome.item[0]
        if outcome.ok:
            frame = outcome.value
            assert frame is not None
            request_ids.extend(frame.attrs.get("request_ids", []))
            record = {str(k): _plain(v) for k, v in frame.iloc[0].items()}
            rows[i] = {**rows[i], **record, "status": "Succeeded"}
            continue
        failure = outcome.error
        if isinstance(failure, OperationTimeoutError):
            op = failure.operation
            rows[i].update(status="Running", operation_id=getattr(op, "operation_id", None),
                           error_code="OperationTimeout",
                           error=f"still provisioning after {failure.timeout:g} s (operation "
                                 f"{failure.operation_url}); resume with "
                                 "toolkit.resume_operation(continuation_token)",
                           continuation_token=failure.continuation_token)
        elif isinstance(failure, ToolkitError) and failure.accepted is not None:
            # accepted by the service, then lost sight of: the item exists or is being made
            rows[i].update(status="Running",
                           operation_id=getattr(failure.accepted, "operation_id", None),
                           error_code="OperationNotFollowed",
                           error=f"accepted, then following it failed ({type(failure).__name__}"
                                 "); do not create it again: resume with "
                                 "toolkit.resume_operation(continuation_token)",
                           continuation_token=failure.continuation_token)
        elif isinstance(failure, ApiError | OperationFailedError):
            rows[i].update(status="Failed", error_code=failure.code,
                           error=str(failure).split("\nWhat to do:")[0].removeprefix(
                               "create_eventstream: "))
        else:
            rows[i].update(status="Failed", error_code=type(failure).__name__,
                           error=str(failure))
    pipe = conn.pipeline("fabric")
    return build_frame(rows, EVENTSTREAMS,
                       provenance("create_eventstreams", api_version,
                                  pipe.url(f"/{api_version}/workspaces") if to_send else None,
                                  request_ids), flat=True)


def _plain(value: Any) -> Any:
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and value != value:
        return None
    return value


CREATE_RECORD = register(OperationRecord("create_eventstream", schema=EVENTSTREAM,
                                         resume=_resume_parser))
CREATE_MANY_RECORD = register(OperationRecord("create_eventstreams", schema=EVENTSTREAMS))
