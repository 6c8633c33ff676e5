"""Cluster credentials (spec 1 §2.10, §4.8, §4.9).

A managed cluster's monitoring-user kubeconfigs and a hosted cluster's kubeadmin credentials.

Credential values are held in :class:`~toolkit.Secret` cells: repr, HTML, ``to_csv``, ``to_json``,
logs and error messages show a mask; ``.reveal()`` is the only way to the value, and
:func:`write_kubeconfig` writes a kubeconfig to a file only its owner can read.
"""

from __future__ import annotations

import base64
import binascii
import logging
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from toolkit._core.errors import ProtocolError, ValidationError
from toolkit._core.frames import as_dict, as_list, build_frame
from toolkit._core.messages import Request
from toolkit._core.provenance import provenance
from toolkit._core.registry import OperationRecord, register
from toolkit._core.secrets import Secret, open_private
from toolkit._core.urls import segment
from toolkit._core.validate import (
    check_api_version,
    check_name,
    check_resource_group,
    check_subscription_id,
)
from toolkit._spec.arm import (
    CLUSTER_NAME_PATTERN,
    HOSTED_CLUSTER_API_VERSIONS,
    MANAGED_CLUSTER_API_VERSIONS,
)
from toolkit.arm._schemas import HOSTED_CREDENTIALS, MONITORING_CREDENTIALS
from toolkit.connection import get_connection

if TYPE_CHECKING:
    from toolkit.connection import Connection

logger = logging.getLogger(__name__)

__all__ = ["cluster_monitoring_credentials", "hosted_cluster_credentials", "kubeconfig_summary",
           "write_kubeconfig"]

MANAGED_API_VERSION = MANAGED_CLUSTER_API_VERSIONS[0]
HOSTED_API_VERSION = HOSTED_CLUSTER_API_VERSIONS[0]
CLUSTER_NAME_RE = re.compile(CLUSTER_NAME_PATTERN)
CLUSTER_NAME_RULE = ("managed cluster names are 1 to 63 characters: letters, digits, '-' and "
                     "'_', starting and ending with a letter or digit")
SERVER_FQDN_RE = re.compile(r"^[A-Za-z][A-Za-z0-9-]{0,31}$")
HOSTED_NAME_RE = re.compile(r"^[^/?#\s]{1,200}$")


def _decode(value: Any) -> str | bytes | None:
    """Decode the kubeconfig a Base64 ``value`` carries (text when it is UTF-8)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        logger.debug("a kubeconfig value is not Base64; kept as sent")
        return value
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


#: Bounds on a kubeconfig read for its summary: real ones are a few kilobytes of plain mappings.
KUBECONFIG_MAX_BYTES = 1 << 20
KUBECONFIG_MAX_NODES = 100_000
KUBECONFIG_MAX_DEPTH = 64


def _load_kubeconfig(text: str | bytes) -> Any:
    """Load YAML with the safe loader, refusing what a kubeconfig never needs.

    Refused is what a hostile one uses to exhaust memory: anchors and aliases, more than
    ``KUBECONFIG_MAX_NODES`` nodes, nesting deeper than ``KUBECONFIG_MAX_DEPTH``, more than
    ``KUBECONFIG_MAX_BYTES``.
    """
    import yaml
    from yaml.events import AliasEvent

    if len(text) > KUBECONFIG_MAX_BYTES:
        raise ProtocolError(f"cluster_monitoring_credentials: a kubeconfig of {len(text)} "
                            f"bytes, more than {KUBECONFIG_MAX_BYTES}; not read")

    class Loader(yaml.SafeLoader):
        def __init__(self, stream: Any) -> None:
            super().__init__(stream)
            self.nodes = 0
            self.depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(AliasEvent):
                raise ProtocolError("cluster_monitoring_credentials: the kubeconfig uses YAML "
                                    "aliases, which a kubeconfig never needs; not read")
            self.nodes += 1
            if self.nodes > KUBECONFIG_MAX_NODES:
                raise ProtocolError("cluster_monitoring_credentials: the kubeconfig has more "
                                    f"than {KUBECONFIG_MAX_NODES} YAML nodes; not read")
            if self.depth >= KUBECONFIG_MAX_DEPTH:
                raise ProtocolError("cluster_monitoring_credentials: the kubeconfig nests "
                                    f"deeper than {KUBECONFIG_MAX_DEPTH} levels; not read")
            self.depth += 1
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    loader = Loader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def kubeconfig_summary(text: str | bytes | None) -> dict[str, Any]:
    """Summarize what a kubeconfig says that is not secret.

    Cluster name, server URL, context, user name and how the user authenticates (``token``,
    ``client-certificate``, ``exec``, ``basic``, ``auth-provider``). Fields it does not have are
    ``None``.
    """
    out: dict[str, Any] = {"cluster_name": None, "server_url": None, "context": None,
                           "user_name": None, "auth_kind": None}
    if text is None:
        return out
    import yaml

    try:
        config = _load_kubeconfig(text)
    except (yaml.YAMLError, RecursionError):
        logger.debug("a kubeconfig is not YAML; its summary is empty")
        return out
    if not isinstance(config, dict):
        return out

    def named(key: str, name: Any) -> dict[str, Any]:
        entries = [e for e in config.get(key) or [] if isinstance(e, dict)]
        match = next((e for e in entries if e.get("name") == name), None)
        return match or (entries[0] if entries else {})

    context_name = config.get("current-context")
    context_entry = named("contexts", context_name)
    context = as_dict(context_entry.get("context"))
    cluster_entry = named("clusters", context.get("cluster"))
    cluster = as_dict(cluster_entry.get("cluster"))
    user_entry = named("users", context.get("user"))
    user = as_dict(user_entry.get("user"))
    if "exec" in user:
        auth = "exec"
    elif "auth-provider" in user:
        auth = "auth-provider"
    elif "client-certificate-data" in user or "client-certificate" in user:
        auth = "client-certificate"
    elif "token" in user or "tokenFile" in user:
        auth = "token"
    elif "username" in user:
        auth = "basic"
    else:
        auth = None
    out.update({"cluster_name": cluster_entry.get("name"), "server_url": cluster.get("server"),
                "context": context_entry.get("name") or context_name,
                "user_name": user_entry.get("name"), "auth_kind": auth})
    return {k: (str(v) if v is not None else None) for k, v in out.items()}


def cluster_monitoring_credentials(subscription_id: str, resource_group: str, cluster: str, *,
                                   server_fqdn: str | None = None,
                                   api_version: str = MANAGED_API_VERSION,
                                   connection: Connection | None = None) -> pd.DataFrame:
    """Read the monitoring user's kubeconfigs of a managed cluster, masked.

    Parameters
    ----------
    subscription_id : str
        Subscription (UUID).
    resource_group : str
        Resource group (1 to 90 characters).
    cluster : str
        Managed cluster name (1 to 63 letters, digits, '-' and '_', starting and ending with a
        letter or digit).
    server_fqdn : str, optional
        Which API server address the kubeconfig points at (``"public"`` or ``"private"``); by
        default the cluster's own (a private cluster's private FQDN).
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row per kubeconfig: ``name`` (string), ``value`` (the kubeconfig as a masked
        :class:`~toolkit.Secret`, decoded from Base64; ``.reveal()`` gives the YAML text), and,
        read from the kubeconfig, ``cluster_name``, ``server_url``, ``context``, ``user_name``
        (strings) and ``auth_kind`` (category ``token``/``client-certificate``/``exec``/
        ``basic``/``auth-provider``), none of them secret.
    """
    check_subscription_id(subscription_id)
    check_resource_group(resource_group)
    check_name(cluster, "cluster", max_len=63, pattern=CLUSTER_NAME_RE, rule=CLUSTER_NAME_RULE)
    if server_fqdn is not None:
        check_name(server_fqdn, "server_fqdn", max_len=32, pattern=SERVER_FQDN_RE,
                   rule="must be a server FQDN type such as 'public' or 'private'")
    check_api_version(api_version)
    conn = get_connection(connection)
    pipe = conn.pipeline("arm")
    path = (f"/subscriptions/{segment(subscription_id, 'subscription_id')}/resourceGroups/"
            f"{segment(resource_group, 'resource_group')}/providers/"
            f"{conn.namespace}.ContainerService/managedClusters/{segment(cluster, 'cluster')}/"
            "listClusterMonitoringUserCredential")
    response = pipe.send(Request("POST", path, params={"api-version": api_version,
                                                       "server-fqdn": server_fqdn},
                                 operation="cluster_monitoring_credentials"))
    body = response.json_object()
    rows = []
    for entry in as_list(body.get("kubeconfigs") if isinstance(body, dict) else None):
        if not isinstance(entry, dict):
            continue
        text = _decode(entry.get("value"))
        rows.append({"name": entry.get("name"),
                     "value": text or None,
                     **kubeconfig_summary(text)})
    ids = [response.request_id] if response.request_id else []
    df = build_frame(rows, MONITORING_CREDENTIALS,
                     provenance("cluster_monitoring_credentials", api_version, pipe.url(path),
                                ids), flat=True)
    logger.info("cluster_monitoring_credentials: %d kubeconfig(s) for %s", len(df), cluster)
    return df


def hosted_cluster_credentials(subscription_id: str, resource_group: str, cluster: str, *,
                               api_version: str = HOSTED_API_VERSION,
                               connection: Connection | None = None) -> pd.DataFrame:
    """Read the kubeadmin credentials of a hosted cluster, the password masked.

    Parameters
    ----------
    subscription_id : str
        Subscription (UUID).
    resource_group : str
        Resource group (1 to 90 characters).
    cluster : str
        Hosted cluster name.
    api_version : str
        The service version.
    connection : Connection, optional
        Defaults to the default connection.

    Returns
    -------
    pandas.DataFrame
        One row: ``kubeadminUsername`` (string) and ``kubeadminPassword`` (a masked
        :class:`~toolkit.Secret`; ``.reveal()`` gives it).
    """
    check_subscription_id(subscription_id)
    check_resource_group(resource_group)
    check_name(cluster, "cluster", max_len=200, pattern=HOSTED_NAME_RE,
               rule="must be a cluster name: a non-empty string without '/', '?', '#' or spaces")
    check_api_version(api_version)
    conn = get_connection(connection)
    pipe = conn.pipeline("arm")
    words = conn.words
    path = (f"/subscriptions/{segment(subscription_id, 'subscription_id')}/resourceGroups/"
            f"{segment(resource_group, 'resource_group')}/providers/"
            f"{words.hosted_cluster_provider}/{words.hosted_cluster_type}/"
            f"{segment(cluster, 'cluster')}/listCredentials")
    response = pipe.send(Request("POST", path, params={"api-version": api_version},
                                 operation="hosted_cluster_credentials"))
    record = response.json_object()
    ids = [response.request_id] if response.request_id else []
    return build_frame([record], HOSTED_CREDENTIALS,
                       provenance("hosted_cluster_credentials", api_version, pipe.url(path), ids))


def _kubeconfig_of(row_or_frame: Any) -> Any:
    if isinstance(row_or_frame, Secret):
        return row_or_frame.reveal()
    if isinstance(row_or_frame, pd.DataFrame):
        if "value" not in row_or_frame.columns or len(row_or_frame) != 1:
            raise ValidationError(
                "row_or_frame", f"DataFrame with {len(row_or_frame)} rows",
                "must be one kubeconfig: a frame of cluster_monitoring_credentials() with one "
                "row, one of its rows (df.iloc[i]) or a value Secret")
        value = row_or_frame["value"].iloc[0]
    elif isinstance(row_or_frame, pd.Series) and "value" in row_or_frame.index:
        value = row_or_frame["value"]
    else:
        raise ValidationError("row_or_frame", type(row_or_frame).__name__,
                              "must be a row or a one-row frame of "
                              "cluster_monitoring_credentials(), or a value Secret")
    if not isinstance(value, Secret):
        raise ValidationError("row_or_frame", "value column without a Secret",
                              "the row has no kubeconfig value")
    return value.reveal()


def write_kubeconfig(row_or_frame: Any, path: str | os.PathLike[str], *,
                     overwrite: bool = False) -> Path:
    """Write a kubeconfig to a file only its owner can read and write (mode 0600).

    Parameters
    ----------
    row_or_frame : pandas.Series, pandas.DataFrame or Secret
        A row of :func:`cluster_monitoring_credentials`, its frame when it has one row, or the
        ``value`` Secret itself.
    path : str or path-like
        Where to write (the directory must exist).
    overwrite : bool
        Replace an existing file (it is refused otherwise).

    Returns
    -------
    pathlib.Path
        The file written.

    Raises
    ------
    FileExistsError
        ``path`` exists and ``overwrite`` is false.
    ValidationError
        ``row_or_frame`` is not one kubeconfig, ``path`` is not a path or ``overwrite`` not a
        flag.
    """
    content = _kubeconfig_of(row_or_frame)
    if not isinstance(path, str | os.PathLike) or not os.fspath(path):
        raise ValidationError("path", path, "must be a file path (str or path-like)")
    if not isinstance(overwrite, bool):
        raise ValidationError("overwrite", overwrite, "must be True or False")
    data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
    target = Path(path)
    try:
        handle = open_private(target, overwrite=overwrite)
    except FileExistsError:
        raise FileExistsError(f"{target} exists; pass overwrite=True to replace it") from None
    with handle:
        handle.write(data)
    logger.info("kubeconfig written to %s (mode 0600)", target)
    return target


# credentials are never cached
MONITORING_RECORD = register(OperationRecord("cluster_monitoring_credentials",
                                             schema=MONITORING_CREDENTIALS))
HOSTED_RECORD = register(OperationRecord("hosted_cluster_credentials",
                                         schema=HOSTED_CREDENTIALS))
