"""Facts of the eventstream service (spec 3, item creation).

The api-version, item naming limits, label strategies and the item and principal type enumerations.

Data only: the client (``toolkit.fabric``, its schemas included) and the sandbox
(``toolkit.sandbox.fabric``) read these; each side writes its own checks.
"""

from __future__ import annotations

__all__ = [
    "API_VERSIONS",
    "API_VERSION_PATTERN",
    "DESCRIPTION_MAX",
    "DISPLAY_NAME_FORBIDDEN",
    "DISPLAY_NAME_MAX",
    "ITEM_TYPES",
    "LABEL_STRATEGIES",
    "OPERATION_STATE_PATH",
    "PRINCIPAL_TYPES",
    "WORKSPACE_ROLES",
    "WORKSPACE_TYPES",
]

#: The interface versions (the client sends the first by default).
API_VERSIONS = ("v1",)
#: The shape of an interface version in the path.
API_VERSION_PATTERN = r"^v\d+(\.\d+)?$"
#: Where a long-running operation's state is read on the configured endpoint, from the
#: ``x-ms-operation-id`` of the answer that accepted it (its result at ``.../result``): the
#: "Get Operation State" and "Get Operation Result" operations of the Fabric REST API
#: (learn.microsoft.com/rest/api/fabric/core/long-running-operations), and the rule of
#: Microsoft's semantic-link-labs (microsoft/semantic-link-labs,
#: src/sempy_labs/_helper_functions.py, ``lro``). The real service's ``Location`` names a
#: cluster host (``wabi-<region>-redirect.analysis.windows.net``) instead: Microsoft's Go SDK
#: keeps that URL's path and puts back the host of the request that started the operation
#: (microsoft/fabric-sdk-go, internal/pollers/locasync/locasync.go, commit 539c683).
OPERATION_STATE_PATH = "/{version}/operations/{operation_id}"
#: Item display names: at most this many characters...
DISPLAY_NAME_MAX = 256
#: ...none of these, no control characters, and no leading or trailing space or ``.``.
DISPLAY_NAME_FORBIDDEN = frozenset('\\/:*?"<>|#%')
DESCRIPTION_MAX = 256
#: ``sensitivityLabelSettings.sensitivityLabelApplyStrategy``.
LABEL_STRATEGIES = ("ApplyOrFail", "Ignore")
ITEM_TYPES = (
    "Dashboard", "Report", "SemanticModel", "PaginatedReport", "Datamart", "Lakehouse",
    "Eventhouse", "Environment", "KQLDatabase", "KQLQueryset", "KQLDashboard", "DataPipeline",
    "Notebook", "SparkJobDefinition", "MLExperiment", "MLModel", "Warehouse", "Eventstream",
    "SQLEndpoint", "MirroredWarehouse", "MirroredDatabase", "Reflex", "GraphQLApi",
    "MountedDataFactory", "SQLDatabase", "CopyJob", "VariableLibrary", "Dataflow", "AirflowJob",
    "WarehouseSnapshot", "DigitalTwinBuilder", "DigitalTwinBuilderFlow",
    "MirroredVendorPartnerCatalog", "Map", "AnomalyDetector", "UserDataFunction", "GraphModel",
    "GraphQuerySet", "PartnerDatabase", "OperationsAgent", "NoSqlDatabase", "Ontology",
    "EventSchemaSet", "DataAgent", "MirroredCatalog", "AppBackend", "DataBuildToolJob",
)
PRINCIPAL_TYPES = ("User", "ServicePrincipal", "Group", "ServicePrincipalProfile", "EntireTenant")
#: ``Workspace.type``: a user's own workspace, a collaborative one, or an admin one.
WORKSPACE_TYPES = ("Personal", "Workspace", "AdminWorkspace")
#: Workspace roles (the ``roles`` filter of the workspaces list, comma-separated).
WORKSPACE_ROLES = ("Admin", "Member", "Contributor", "Viewer")
