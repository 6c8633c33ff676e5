"""SQL: server names, the provider's operations and the servers' encryption protector.

Server name availability (spec 1 §4.4), the provider's operations (§4.5) and the servers'
encryption protector (§2.5, §4.3).
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal, overload

import pandas as pd

from toolkit._core.concurrency import fan_out, settle
from toolkit._core.continuation import answered_from
from toolkit._core.errors import ValidationError
from toolkit._core.frames import FrameBuilder, build_frame
from toolkit._core.messages import Request, Response
from toolkit._core.paging import ARM, collect_frame, iter_pages
from toolkit._core.polling import Operation
from toolkit._core.provenance import provenance
from toolkit._core.registry import OperationRecord, register
from toolkit._core.urls import segment
from toolkit._core.validate import (
    check_api_version,
    check_bool,
    check_choice,
    check_int,
    check_resource_group,
    check_subscription_id,
    check_timeout,
    many_strings,
    server_name_problem,
)
from toolkit._spec.arm import SQL_API_VERSIONS, VAULT_KEY_NAME_PATTERN
from toolkit.arm._schemas import (
    ENCRYPTION_PROTECTOR,
    NAME_AVAILABILITY,
    SERVER_KEY_TYPES,
    SQL_OPERATIONS,
)
from toolkit.connection import get_connection

if TYPE_CHECKING:
    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["check_server_names", "encryption_protector", "sql_operations",
           "update_encryption_protector"]

API_VERSION = SQL_API_VERSIONS[0]


def sql_operations(*, max_items: int | None = None, api_version: str = API_VERSION,
                   connection: Connection | None = None) -> pd.DataFrame:
    """List the operations the database provider offers (every page).

    Parameters
    ----------
    max_items : int, optional
        Stop after this many operations (warns that the result is truncated).
    api_version : str
        The service version (spec 1 §9).
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row per operation: ``name`` (``<provider>/<resource path>/<verb>``),
        ``isDataAction`` (boolean), ``display.provider``, ``display.resource``,
        ``display.operation``, ``display.description`` (strings), ``origin`` (category
        ``user``/``system``/``user,system``), ``properties`` (object).
    """
    if max_items is not None:
        check_int(max_items, "max_items", minimum=0)
    check_api_version(api_version)
    conn = get_connection(connection)
    pipe = conn.pipeline("arm")
    pages = iter_pages(pipe, "GET", f"/providers/{conn.namespace}.Sql/operations", style=ARM,
                       params={"api-version": api_version}, operation="sql_operations")
    return collect_frame(pages, FrameBuilder(SQL_OPERATIONS), operation="sql_operations",
                         max_items=max_items, connection=conn, api_version=api_version)


def check_server_names(subscription_id: str, names: str | Any, *, send_invalid: bool = False,
                       api_version: str = API_VERSION,
                       connection: Connection | None = None) -> pd.DataFrame:
    """Check whether database server names are available.

    Names that break the rules of spec 1 §2.6 (1 to 63 characters, lower-case letters, digits
    and inner hyphens) are answered without a request, as the service would answer them, unless
    ``send_invalid`` is true. The others are checked concurrently, each distinct name once.

    Parameters
    ----------
    subscription_id : str
        Subscription (UUID) to check in.
    names : str or iterable of str
        One name or any number of names.
    send_invalid : bool
        Send invalid names to the service too.
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row per name asked, in input order: ``name`` (string), ``available`` (boolean),
        ``reason`` (category ``Invalid``/``AlreadyExists``), ``message`` (string; the rule broken
        when invalid), ``answered_by`` (category ``service``/``toolkit``), ``error`` (string;
        set when checking that name failed; the other rows are kept).

    Raises
    ------
    ValidationError
        Bad subscription id or names (before any request).
    ApiError
        When every check failed (e.g. unknown subscription), the first failure.
    """
    check_subscription_id(subscription_id)
    items, _ = many_strings(names, "names")
    check_bool(send_invalid, "send_invalid")
    check_api_version(api_version)
    conn = get_connection(connection)
    pipe = conn.pipeline("arm")
    path = (f"/subscriptions/{segment(subscription_id, 'subscription_id')}/providers/"
            f"{conn.namespace}.Sql/checkNameAvailability")

    answers: dict[str, dict[str, Any]] = {}
    to_send: list[str] = []
    for name in dict.fromkeys(items):
        problem = server_name_problem(name)
        if problem and not send_invalid:
            answers[name] = {"name": name, "available": False, "reason": "Invalid",
                             "message": problem[0].upper() + problem[1:] + ".",
                             "answered_by": "toolkit"}
        else:
            to_send.append(name)

    def check(name: str) -> Response:
        return pipe.send(Request("POST", path, params={"api-version": api_version},
                                 json={"name": name, "type": f"{conn.namespace}.Sql/servers"},
                                 operation="check_server_names"))

    # paced by the pipeline's bucket of the subscription's resource-manager reads
    outcomes = fan_out(check, to_send, connection=conn, desc="check_server_names")
    settle(outcomes)
    request_ids = []
    for o in outcomes:
        if o.ok:
            response = o.result()
            body = response.json()
            if response.request_id:
                request_ids.append(response.request_id)
            if not isinstance(body, dict):
                answers[o.item] = {"name": o.item, "answered_by": "service",
                                   "error": f"the service answered with a JSON "
                                            f"{type(body).__name__}, not an object"}
                continue
            answers[o.item] = {**body, "name": body.get("name", o.item), "answered_by": "service"}
        else:
            answers[o.item] = {"name": o.item, "answered_by": "service", "error": str(o.error)}
    endpoint = pipe.url(path) if to_send else None
    return build_frame([answers[n] for n in items], NAME_AVAILABILITY,
                       provenance("check_server_names", api_version, endpoint, request_ids))


# ------------------------------------------------------------------------ encryption protector

#: ``<vault>_<key>_<version>`` or ``<vault>_<key>``: vault names are 3 to 24 letters, digits and
#: hyphens starting with a letter; key names 1 to 127 letters, digits and hyphens; versions 32
#: hexadecimal digits.
VAULT_KEY_NAME_RE = re.compile(VAULT_KEY_NAME_PATTERN)
VAULT_KEY_NAME_RULE = (
    "a vault key name is '<vault>_<key>_<version>' (pinned) or '<vault>_<key>' "
    "(versionless): a vault name of 3 to 24 letters, digits and hyphens starting with a letter, "
    "a key name of letters, digits and hyphens, and a version of 32 hexadecimal digits"
)


def _check_server(server: Any) -> str:
    if not isinstance(server, str):
        raise ValidationError("server", server, "must be a string")
    problem = server_name_problem(server)
    if problem:
        raise ValidationError("server", server, problem)
    return server


def _protector_path(conn: Connection, subscription_id: str, resource_group: str,
                    server: str) -> str:
    return (f"/subscriptions/{segment(subscription_id, 'subscription_id')}/resourceGroups/"
            f"{segment(resource_group, 'resource_group')}/providers/"
            f"{conn.namespace}.Sql/servers/{segment(server, 'server')}/encryptionProtector/current")


def _protector_frame(response: Response, server: str, api_version: str | None,
                     url: str) -> pd.DataFrame:
    record = dict(response.json_object())
    record["server"] = server
    ids = [response.request_id] if response.request_id else []
    return build_frame([record], ENCRYPTION_PROTECTOR,
                       provenance("update_encryption_protector", api_version, url, ids))


@overload
def update_encryption_protector(
    subscription_id: str,
    resource_group: str,
    server: str,
    *,
    server_key_type: str,
    server_key_name: str | None = ...,
    auto_rotation_enabled: bool | None = ...,
    wait: Literal[True] = ...,
    timeout: float | None = ...,
    api_version: str = ...,
    connection: Connection | None = ...,
) -> pd.DataFrame: ...
@overload
def update_encryption_protector(
    subscription_id: str,
    resource_group: str,
    server: str,
    *,
    server_key_type: str,
    server_key_name: str | None = ...,
    auto_rotation_enabled: bool | None = ...,
    wait: Literal[False],
    timeout: float | None = ...,
    api_version: str = ...,
    connection: Connection | None = ...,
) -> Operation[pd.DataFrame]: ...
@overload
def update_encryption_protector(
    subscription_id: str,
    resource_group: str,
    server: str,
    *,
    server_key_type: str,
    server_key_name: str | None = ...,
    auto_rotation_enabled: bool | None = ...,
    wait: bool = ...,
    timeout: float | None = ...,
    api_version: str = ...,
    connection: Connection | None = ...,
) -> pd.DataFrame | Operation[pd.DataFrame]: ...
def update_encryption_protector(
    subscription_id: str,
    resource_group: str,
    server: str,
    *,
    server_key_type: str,
    server_key_name: str | None = None,
    auto_rotation_enabled: bool | None = None,
    wait: bool = True,
    timeout: float | None = None,
    api_version: str = API_VERSION,
    connection: Connection | None = None,
) -> pd.DataFrame | Operation[pd.DataFrame]:
    """Set the key that protects a database server's data encryption keys.

    A service-managed key is set at once (200). A key held in a key vault is a long-running
    change (202): the toolkit polls ``Location``, waiting the ``Retry-After`` seconds the service
    asks, then reads the protector.

    Parameters
    ----------
    subscription_id : str
        Subscription (UUID).
    resource_group : str
        Resource group (1 to 90 characters).
    server : str
        Server name (1 to 63 lower-case letters, digits and inner hyphens).
    server_key_type : {"ServiceManaged", "AzureKeyVault", "VendorKeyVault"}
        The kind of key; the two vault-key words are the same kind, sent in the connection's
        cloud's word (``AzureKeyVault`` in a real cloud, ``VendorKeyVault`` in the neutral one).
    server_key_name : str, optional
        For ``ServiceManaged``, the literal ``ServiceManaged`` (filled in when omitted, refused
        when different). For a vault key (required): ``<vault>_<key>_<version>`` to pin
        a key version, or ``<vault>_<key>`` for a versionless key (the response's ``keyVersion``
        then says which version is in use).
    auto_rotation_enabled : bool, optional
        Opt in to (or out of) key auto-rotation; omitted, the service's default applies.
    wait : bool
        Wait for the change to finish (default); ``False`` returns the
        :class:`~toolkit.Operation` handle, whose ``result()`` gives the frame.
    timeout : float, optional
        Seconds to wait at most; then OperationTimeoutError, whose ``operation`` resumes.
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row, the protector: ``id``, ``name``, ``type``, ``kind`` (lower-case key type),
        ``location``, ``autoRotationEnabled`` (boolean), ``keyVersion`` (set for a versionless
        key), ``serverKeyName``, ``serverKeyType`` (category ``ServiceManaged``/
        ``VendorKeyVault``/``AzureKeyVault``: the cloud's word), ``subregion``,
        ``thumbprint``, ``uri`` (strings),
        ``systemData.createdAt``, ``systemData.lastModifiedAt`` (UTC date-times),
        ``systemData.createdBy``, ``systemData.lastModifiedBy`` (strings),
        ``systemData.createdByType``, ``systemData.lastModifiedByType`` (categories), and the
        toolkit's ``server`` (the server name).

    Raises
    ------
    ValidationError
        A bad argument, before any request.
    NotFoundError
        Unknown server or resource group, or a key the vault does not have (``ServerKeyNotFound``).
    ConflictError
        Another protector change is running on the server (``EncryptionProtectorChangeInProgress``).
    ApiError
        Other refusals, e.g. 400 ``AkvKeyDisabled`` (``VendorKeyVaultKeyDisabled`` in the
        neutral cloud) for a disabled key version.
    """
    check_subscription_id(subscription_id)
    check_resource_group(resource_group)
    _check_server(server)
    key_type = check_choice(server_key_type, "server_key_type", SERVER_KEY_TYPES,
                            case_insensitive=True)
    if key_type == "ServiceManaged":
        if server_key_name is None:
            server_key_name = "ServiceManaged"
        elif server_key_name != "ServiceManaged":
            raise ValidationError("server_key_name", server_key_name,
                                  "for a ServiceManaged key the name is the literal "
                                  "'ServiceManaged' (or omit it)")
    else:
        if server_key_name is None:
            raise ValidationError("server_key_name", server_key_name,
                                  f"is required for a {key_type} key; " + VAULT_KEY_NAME_RULE)
        if not isinstance(server_key_name, str) or not VAULT_KEY_NAME_RE.fullmatch(server_key_name):
            raise ValidationError("server_key_name", server_key_name, VAULT_KEY_NAME_RULE)
    if auto_rotation_enabled is not None and not isinstance(auto_rotation_enabled, bool):
        raise ValidationError("auto_rotation_enabled", auto_rotation_enabled,
                              "must be True, False or None")
    if not isinstance(wait, bool):
        raise ValidationError("wait", wait, "must be True or False")
    check_timeout(timeout)
    check_api_version(api_version)
    conn = get_connection(connection)
    pipe = conn.pipeline("arm")
    if key_type != "ServiceManaged":
        key_type = conn.words.key_vault_type
    path = _protector_path(conn, subscription_id, resource_group, server)
    properties: dict[str, Any] = {"serverKeyType": key_type, "serverKeyName": server_key_name}
    if auto_rotation_enabled is not None:
        properties["autoRotationEnabled"] = auto_rotation_enabled
    logger.info("update_encryption_protector: %s -> %s %s", server, key_type, server_key_name)

    def parse(response: Response) -> pd.DataFrame:
        return _protector_frame(response, server, api_version, pipe.url(path))

    op = Operation.start(pipe, "PUT", path, name="update_encryption_protector", parse=parse,
                         params={"api-version": api_version}, json={"properties": properties})
    return op.result(timeout) if wait else op


def _resume_parser(connection: Any, operation: Any) -> Any:
    """Make the result parser of an encryption-protector change resumed from its token.

    The frame's ``server`` is the server the answer describes (its resource id, else the URL
    that gave it), its endpoint and api-version those of the request that gave the result.
    """
    def parse(response: Response) -> pd.DataFrame:
        endpoint, api_version = answered_from(response.url, operation.pipeline.base_url)
        body = response.json_object()
        found = _SERVER_IN.search(str(body.get("id") or "")) or _SERVER_IN.search(endpoint)
        if found is None:
            raise response.refuse("update_encryption_protector: the service's answer names "
                                  "no server (no servers/<name> in its id or address)")
        return _protector_frame(response, found.group(1), api_version, endpoint)
    return parse


#: The server a resource id or an address names (``.../servers/<name>/...``).
_SERVER_IN = re.compile(r"/servers/([^/?#]+)", re.IGNORECASE)


def encryption_protector(subscription_id: str, resource_group: str, server: str, *,
                         api_version: str = API_VERSION,
                         connection: Connection | None = None) -> pd.DataFrame:
    """Read a database server's encryption protector.

    It is the resource :func:`update_encryption_protector` changes.

    Parameters
    ----------
    subscription_id : str
        Subscription (UUID).
    resource_group : str
        Resource group (1 to 90 characters).
    server : str
        Server name.
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row with the columns of :func:`update_encryption_protector`.
    """
    check_subscription_id(subscription_id)
    check_resource_group(resource_group)
    _check_server(server)
    check_api_version(api_version)
    conn = get_connection(connection)
    pipe = conn.pipeline("arm")
    path = _protector_path(conn, subscription_id, resource_group, server)
    response = pipe.send(Request("GET", path, params={"api-version": api_version},
                                 operation="encryption_protector"))
    df = _protector_frame(response, server, api_version, pipe.url(path))
    df.attrs["operation"] = "encryption_protector"
    return df


NAMES_RECORD = register(OperationRecord("check_server_names", schema=NAME_AVAILABILITY,
                                        lifetime=60))
OPERATIONS_RECORD = register(OperationRecord("sql_operations", schema=SQL_OPERATIONS,
                                             lifetime=86_400))
PROTECTOR_RECORD = register(OperationRecord(
    "encryption_protector", schema=replace(ENCRYPTION_PROTECTOR, name="encryption_protector"),
    lifetime=300, plot="encryption_posture"))
UPDATE_RECORD = register(OperationRecord(
    "update_encryption_protector", schema=ENCRYPTION_PROTECTOR, plot="encryption_posture",
    resume=_resume_parser))
