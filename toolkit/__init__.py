"""toolkit: DataFrames from resource-management, maps, identity and eventstream services.

Every operation is one function returning a pandas DataFrame (or a GeoDataFrame); with nothing
configured, the functions talk to an embedded sandbox on 127.0.0.1. Nothing is imported eagerly
beyond this module's names: the functions load their modules on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolkit._core.lazy import attach
from toolkit._version import __version__ as __version__


def _quiet_masked_logger() -> None:
    # a handler that emits nothing (the library's NullHandler) and masks secrets in every record
    # of the toolkit's loggers before any other handler sees it
    from toolkit._core.secrets import install_log_redaction

    install_log_redaction(__name__)


_quiet_masked_logger()


def _import_operations() -> None:
    # every module that defines a public function, so that each declares its operation's record
    import importlib

    from toolkit._core.lazy import exports_of

    for module in sorted(set(exports_of(__file__).values())):
        importlib.import_module(module)


def _helper(kind: str, name: str) -> Any:
    # a plot or explore helper by its public name (the packages load their modules lazily)
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{kind}"), name)


def _install_operations() -> None:
    # the core finds records and helpers through these, never through a module path of its own
    from toolkit._core.registry import install

    install(_import_operations, _helper)


_install_operations()

# The public names, listed once: type checkers read these imports; at run time
# toolkit._core.lazy reads the same lines and loads a module when one of its names is first used.
if TYPE_CHECKING:  # pragma: no cover
    from toolkit._core.cache import cache_clear as cache_clear
    from toolkit._core.errors import (
        ApiError as ApiError,
        AuthenticationError as AuthenticationError,
        ConflictError as ConflictError,
        EmptySnapshotWarning as EmptySnapshotWarning,
        IncompleteResultError as IncompleteResultError,
        NotFoundError as NotFoundError,
        OperationFailedError as OperationFailedError,
        OperationTimeoutError as OperationTimeoutError,
        OperationWaitError as OperationWaitError,
        PlaceNotFoundError as PlaceNotFoundError,
        ProtocolError as ProtocolError,
        RateLimitError as RateLimitError,
        ReconciliationWarning as ReconciliationWarning,
        ResponseLimitError as ResponseLimitError,
        RetryWaitWarning as RetryWaitWarning,
        RevealedSecretsWarning as RevealedSecretsWarning,
        SandboxWarning as SandboxWarning,
        ServiceError as ServiceError,
        ToolkitError as ToolkitError,
        TransportError as TransportError,
        TruncatedResultWarning as TruncatedResultWarning,
        UntrustedOriginError as UntrustedOriginError,
        ValidationError as ValidationError,
    )
    from toolkit._core.exports import read_parquet as read_parquet, to_parquet as to_parquet
    from toolkit._core.geo import (
        BBoxLike as BBoxLike,
        LocationLike as LocationLike,
        LocationsLike as LocationsLike,
        PointLike as PointLike,
        PointsLike as PointsLike,
    )
    from toolkit._core.polling import ItemOperation as ItemOperation, Operation as Operation
    from toolkit._core.secrets import Secret as Secret
    from toolkit.across import (
        SubscriptionReads as SubscriptionReads,
        across_subscriptions as across_subscriptions,
    )
    from toolkit.arm.changes import policy_changes as policy_changes
    from toolkit.arm.clusters import (
        cluster_monitoring_credentials as cluster_monitoring_credentials,
        hosted_cluster_credentials as hosted_cluster_credentials,
        write_kubeconfig as write_kubeconfig,
    )
    from toolkit.arm.compliance import (
        compliance_summary as compliance_summary,
        compliance_trend as compliance_trend,
        evaluated_expressions as evaluated_expressions,
    )
    from toolkit.arm.graphpolicy import (
        resource_graph_policy_states as resource_graph_policy_states,
    )
    from toolkit.arm.history import (
        read_policy_history as read_policy_history,
        snapshot_policy_states as snapshot_policy_states,
    )
    from toolkit.arm.inventory import (
        application_gateways as application_gateways,
        managed_clusters as managed_clusters,
        openshift_clusters as openshift_clusters,
        sql_servers as sql_servers,
    )
    from toolkit.arm.network import backend_health as backend_health
    from toolkit.arm.policy import policy_states as policy_states
    from toolkit.arm.resourcegraph import resource_graph as resource_graph
    from toolkit.arm.resources import (
        management_group_tree as management_group_tree,
        management_groups as management_groups,
        resource_groups as resource_groups,
        subscriptions as subscriptions,
    )
    from toolkit.arm.sql import (
        check_server_names as check_server_names,
        encryption_protector as encryption_protector,
        sql_operations as sql_operations,
        update_encryption_protector as update_encryption_protector,
    )
    from toolkit.arm.summary import policy_summary as policy_summary
    from toolkit.arm.support import (
        classification_consents as classification_consents,
        problem_classifications as problem_classifications,
        support_services as support_services,
    )
    from toolkit.clock import service_now as service_now
    from toolkit.connection import (
        Connection as Connection,
        Settings as Settings,
        connect as connect,
        get_connection as get_connection,
    )
    from toolkit.fabric.eventstream import (
        create_eventstream as create_eventstream,
        create_eventstreams as create_eventstreams,
    )
    from toolkit.fabric.workspaces import fabric_workspaces as fabric_workspaces
    from toolkit.graph.identity import (
        authentication_strength_audit as authentication_strength_audit,
        authentication_strength_policies as authentication_strength_policies,
        authentication_strength_usage as authentication_strength_usage,
    )
    from toolkit.maps.matrix import route_matrix as route_matrix
    from toolkit.maps.reach import route_range as route_range
    from toolkit.maps.reverse import reverse_geocode as reverse_geocode
    from toolkit.maps.route import (
        route_directions as route_directions,
        snap_to_roads as snap_to_roads,
    )
    from toolkit.maps.search import (
        autocomplete as autocomplete,
        geocode as geocode,
    )
    from toolkit.maps.traffic import traffic_incidents as traffic_incidents
    from toolkit.maps.weather import (
        air_quality as air_quality,
        air_quality_forecast as air_quality_forecast,
        air_quality_hourly_forecast as air_quality_hourly_forecast,
        air_quality_pollutants as air_quality_pollutants,
        severe_weather_alerts as severe_weather_alerts,
    )
    from toolkit.operations import resume_operation as resume_operation


__getattr__, __dir__ = attach(__name__, __file__, submodules=(
    "arm", "connection", "explore", "fabric", "graph", "maps", "plot", "sandbox", "widgets"))
