"""toolkit: DataFrames from resource-management, maps, identity and eventstream services.

Every operation is one function returning a pandas DataFrame (or a GeoDataFrame); with nothing
configured, the functions talk to an embedded sandbox on 127.0.0.1. Nothing is imported eagerly
beyond this module's names: the functions load their modules on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

def _quiet_masked_logger() -> None:
    # a handler that emits nothing (the library's NullHandler) and masks secrets in every record
    # of the toolkit's loggers before any other handler sees it
    from toolkit._core.secrets import install_log_redaction

    install_log_redaction(__name__)


_quiet_masked_logger()

# public name -> module that defines it
_EXPORTS = {
    "connect": "toolkit.connection",
    "get_connection": "toolkit.connection",
    "Connection": "toolkit.connection",
    "Settings": "toolkit.connection",
    "Secret": "toolkit._core.secrets",
    "Operation": "toolkit._core.polling",
    "resume_operation": "toolkit.operations",
    "cache_clear": "toolkit._core.cache",
    "to_parquet": "toolkit._core.exports",
    "read_parquet": "toolkit._core.exports",
    "ToolkitError": "toolkit._core.errors",
    "ValidationError": "toolkit._core.errors",
    "ApiError": "toolkit._core.errors",
    "AuthenticationError": "toolkit._core.errors",
    "RateLimitError": "toolkit._core.errors",
    "NotFoundError": "toolkit._core.errors",
    "ConflictError": "toolkit._core.errors",
    "ServiceError": "toolkit._core.errors",
    "TransportError": "toolkit._core.errors",
    "ProtocolError": "toolkit._core.errors",
    "OperationFailedError": "toolkit._core.errors",
    "OperationTimeoutError": "toolkit._core.errors",
    "OperationWaitError": "toolkit._core.errors",
    "UntrustedOriginError": "toolkit._core.errors",
    "ResponseLimitError": "toolkit._core.errors",
    "TruncatedResultWarning": "toolkit._core.errors",
    "backend_health": "toolkit.arm.network",
    "check_server_names": "toolkit.arm.sql",
    "sql_operations": "toolkit.arm.sql",
    "policy_states": "toolkit.arm.policy",
    "compliance_summary": "toolkit.arm.policy",
    "compliance_trend": "toolkit.arm.policy",
    "evaluated_expressions": "toolkit.arm.policy",
    "update_encryption_protector": "toolkit.arm.sql",
    "encryption_protector": "toolkit.arm.sql",
    "problem_classifications": "toolkit.arm.support",
    "support_services": "toolkit.arm.support",
    "classification_consents": "toolkit.arm.support",
    "cluster_monitoring_credentials": "toolkit.arm.clusters",
    "hosted_cluster_credentials": "toolkit.arm.clusters",
    "write_kubeconfig": "toolkit.arm.clusters",
    "authentication_strength_usage": "toolkit.graph.identity",
    "authentication_strength_policies": "toolkit.graph.identity",
    "authentication_strength_audit": "toolkit.graph.identity",
    "create_eventstream": "toolkit.fabric.eventstream",
    "create_eventstreams": "toolkit.fabric.eventstream",
    "ItemOperation": "toolkit._core.polling",
    "autocomplete": "toolkit.maps.search",
    "route_directions": "toolkit.maps.route",
    "snap_to_roads": "toolkit.maps.route",
    "traffic_incidents": "toolkit.maps.traffic",
    "air_quality": "toolkit.maps.weather",
    "air_quality_pollutants": "toolkit.maps.weather",
    "air_quality_forecast": "toolkit.maps.weather",
    "severe_weather_alerts": "toolkit.maps.weather",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover
    from toolkit._core.cache import cache_clear  # noqa: F401
    from toolkit._core.errors import (  # noqa: F401
        ApiError,
        AuthenticationError,
        ConflictError,
        NotFoundError,
        OperationFailedError,
        OperationTimeoutError,
        OperationWaitError,
        ProtocolError,
        RateLimitError,
        ResponseLimitError,
        ServiceError,
        ToolkitError,
        TransportError,
        TruncatedResultWarning,
        UntrustedOriginError,
        ValidationError,
    )
    from toolkit._core.exports import read_parquet, to_parquet  # noqa: F401
    from toolkit._core.polling import ItemOperation, Operation  # noqa: F401
    from toolkit._core.secrets import Secret  # noqa: F401
    from toolkit.arm.clusters import (  # noqa: F401
        cluster_monitoring_credentials,
        hosted_cluster_credentials,
        write_kubeconfig,
    )
    from toolkit.arm.network import backend_health  # noqa: F401
    from toolkit.arm.policy import (  # noqa: F401
        compliance_summary,
        compliance_trend,
        evaluated_expressions,
        policy_states,
    )
    from toolkit.arm.sql import (  # noqa: F401
        check_server_names,
        encryption_protector,
        sql_operations,
        update_encryption_protector,
    )
    from toolkit.arm.support import (  # noqa: F401
        classification_consents,
        problem_classifications,
        support_services,
    )
    from toolkit.connection import Connection, Settings, connect, get_connection  # noqa: F401
    from toolkit.fabric.eventstream import create_eventstream, create_eventstreams  # noqa: F401
    from toolkit.graph.identity import (  # noqa: F401
        authentication_strength_audit,
        authentication_strength_policies,
        authentication_strength_usage,
    )
    from toolkit.maps.route import route_directions, snap_to_roads  # noqa: F401
    from toolkit.maps.search import autocomplete  # noqa: F401
    from toolkit.maps.traffic import traffic_incidents  # noqa: F401
    from toolkit.maps.weather import (  # noqa: F401
        air_quality,
        air_quality_forecast,
        air_quality_pollutants,
        severe_weather_alerts,
    )
    from toolkit.operations import resume_operation  # noqa: F401


_SUBPACKAGES = ("arm", "connection", "explore", "fabric", "graph", "maps", "plot", "sandbox",
                "widgets")


def __getattr__(name: str) -> Any:
    if name in _SUBPACKAGES:
        return importlib.import_module(f"toolkit.{name}")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'toolkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS) | set(_SUBPACKAGES))
