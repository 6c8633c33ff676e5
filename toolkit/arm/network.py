"""Application gateway backend health (spec 1 §4.2): a long-running POST, one row per server."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, overload

import pandas as pd

from toolkit._core.continuation import answered_from
from toolkit._core.errors import ValidationError
from toolkit._core.frames import as_list, build_frame
from toolkit._core.messages import Response
from toolkit._core.polling import Operation
from toolkit._core.provenance import provenance
from toolkit._core.registry import OperationRecord, register
from toolkit._core.urls import segment
from toolkit._core.validate import (
    check_api_version,
    check_bool,
    check_name,
    check_resource_group,
    check_subscription_id,
    check_timeout,
)
from toolkit._spec.arm import NETWORK_API_VERSIONS
from toolkit.arm._schemas import BACKEND_HEALTH
from toolkit.connection import get_connection

if TYPE_CHECKING:
    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["backend_health", "backend_health_rows"]

API_VERSION = NETWORK_API_VERSIONS[0]
GATEWAY_NAME_RE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_.-]{0,78}[A-Za-z0-9_])?$")
GATEWAY_NAME_RULE = ("gateway names are 1 to 80 characters of letters, digits, '_', '.' and '-', "
                     "starting with a letter or digit and ending with a letter, digit or '_'")


def _name_of(ref: dict[str, Any]) -> str | None:
    name = ref.get("name")
    if name:
        return str(name)
    rid = ref.get("id")
    return rid.rstrip("/").rsplit("/", 1)[-1] if isinstance(rid, str) and rid else None


def _flat_ref(ref: Any, prefix: str) -> dict[str, Any]:
    ref = ref if isinstance(ref, dict) else {}
    props = ref.get("properties") if isinstance(ref.get("properties"), dict) else {}
    out = {f"{prefix}.id": ref.get("id"), f"{prefix}.name": _name_of(ref)}
    for key, value in props.items():
        out[f"{prefix}.{key}"] = value
    return out


def backend_health_rows(body: Any) -> list[dict[str, Any]]:
    """Flatten an ``ApplicationGatewayBackendHealth`` body to one dict per server."""
    rows: list[dict[str, Any]] = []
    pools = body.get("backendAddressPools") if isinstance(body, dict) else None
    for pool in as_list(pools):
        if not isinstance(pool, dict):
            continue
        pool_cols = _flat_ref(pool.get("backendAddressPool"), "backendAddressPool")
        for settings in as_list(pool.get("backendHttpSettingsCollection")):
            if not isinstance(settings, dict):
                continue
            settings_cols = _flat_ref(settings.get("backendHttpSettings"), "backendHttpSettings")
            for server in as_list(settings.get("servers")):
                if not isinstance(server, dict):
                    continue
                ipc = server.get("ipConfiguration")
                rows.append({**pool_cols, **settings_cols,
                             "address": server.get("address"), "health": server.get("health"),
                             "healthProbeLog": server.get("healthProbeLog"),
                             "ipConfiguration.id": ipc.get("id") if isinstance(ipc, dict)
                             else None})
    return rows


@overload
def backend_health(subscription_id: str, resource_group: str, gateway: str, *,
                   expand: str | None = ..., wait: Literal[True] = ...,
                   timeout: float | None = ..., api_version: str = ...,
                   connection: Connection | None = ...) -> pd.DataFrame: ...
@overload
def backend_health(subscription_id: str, resource_group: str, gateway: str, *,
                   expand: str | None = ..., wait: Literal[False],
                   timeout: float | None = ..., api_version: str = ...,
                   connection: Connection | None = ...) -> Operation[pd.DataFrame]: ...
@overload
def backend_health(subscription_id: str, resource_group: str, gateway: str, *,
                   expand: str | None = ..., wait: bool = ...,
                   timeout: float | None = ..., api_version: str = ...,
                   connection: Connection | None = ...
                   ) -> pd.DataFrame | Operation[pd.DataFrame]: ...
def backend_health(subscription_id: str, resource_group: str, gateway: str, *,
                   expand: str | None = None, wait: bool = True, timeout: float | None = None,
                   api_version: str = API_VERSION,
                   connection: Connection | None = None
                   ) -> pd.DataFrame | Operation[pd.DataFrame]:
    """Health of every backend server of an application gateway.

    The service answers 202 and gathers probe results; the toolkit polls ``Location`` (waiting
    the ``Retry-After`` seconds) until the final 200.

    Parameters
    ----------
    subscription_id : str
        Subscription (UUID).
    resource_group : str
        Resource group (1 to 90 characters).
    gateway : str
        Application gateway name.
    expand : str, optional
        ``$expand``: inline the referenced pools and HTTP settings (adds their port, protocol,
        timeout columns), e.g. ``"backendAddressPool,backendHttpSettings"``.
    wait : bool
        Wait for the result (default); ``False`` returns the :class:`~toolkit.Operation` handle,
        whose ``result()`` gives the frame.
    timeout : float, optional
        Seconds to wait at most; then OperationTimeoutError, whose ``operation`` resumes.
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row per backend server and HTTP settings: ``backendAddressPool.id``,
        ``backendAddressPool.name``, ``backendHttpSettings.id``, ``backendHttpSettings.name``,
        ``backendHttpSettings.port``, ``backendHttpSettings.protocol``,
        ``backendHttpSettings.requestTimeout``,
        ``backendHttpSettings.pickHostNameFromBackendAddress`` (the last four with ``expand``),
        ``address`` (string), ``health`` (ordered category Up < Partial < Draining < Down <
        Unknown), ``healthProbeLog`` (string), ``ipConfiguration.id`` (string).
    """
    check_subscription_id(subscription_id)
    check_resource_group(resource_group)
    check_name(gateway, "gateway", max_len=80, pattern=GATEWAY_NAME_RE, rule=GATEWAY_NAME_RULE)
    if expand is not None:
        check_name(expand, "expand", rule="must be a non-empty string or None")
        if not expand.strip():
            raise ValidationError("expand", expand, "must be a non-empty string or None")
    check_bool(wait, "wait")
    check_timeout(timeout)
    check_api_version(api_version)
    conn = get_connection(connection)
    pipe = conn.pipeline("arm")
    path = (f"/subscriptions/{segment(subscription_id, 'subscription_id')}/resourceGroups/"
            f"{segment(resource_group, 'resource_group')}/providers/"
            f"{conn.namespace}.Network/applicationGateways/{segment(gateway, 'gateway')}/"
            "backendhealth")

    op = Operation.start(pipe, "POST", path, name="backend_health",
                         parse=_parser(pipe.url(path), api_version),
                         params={"api-version": api_version, "$expand": expand})
    return op.result(timeout) if wait else op


def _parser(endpoint: str, api_version: str | None) -> Callable[[Response], pd.DataFrame]:
    def parse(response: Response) -> pd.DataFrame:
        rows = backend_health_rows(response.json_object())
        ids = [response.request_id] if response.request_id else []
        return build_frame(rows, BACKEND_HEALTH,
                           provenance("backend_health", api_version, endpoint, ids), flat=True)
    return parse


def _resume_parser(connection: Any, operation: Any) -> Callable[[Response], pd.DataFrame]:
    """Make the result parser of a backend-health operation resumed from its token.

    The frame's endpoint and api-version are those of the request that gave the result.
    """
    def parse(response: Response) -> pd.DataFrame:
        return _parser(*answered_from(response.url, operation.pipeline.base_url))(response)
    return parse


RECORD = register(OperationRecord("backend_health", schema=BACKEND_HEALTH, plot="backend_health",
                                  resume=_resume_parser))
